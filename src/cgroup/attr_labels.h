/* The one identity label scheme of /metrics (docs/STATS.md "Labels"):
 * every family that is about a container takes its identity labels from
 * here, so no module or family spells them itself.
 *
 *   sandlens_* families:  container_id, pod_uid, runtime (always written:
 *                         "" ids and runtime "host" for the host series),
 *                         then namespace, pod, container when known.
 *   container_* families: as the kubelet's cAdvisor endpoint: id (the
 *                         cgroup path), name (the container id: what
 *                         cAdvisor's containerd handler gives), image,
 *                         namespace, pod, container, each when known.
 *
 * A name that is not known is left out rather than written as "":
 * Prometheus treats an empty label and a missing one alike, and the text
 * stays smaller. Values point into the caller's struct: keep it alive
 * while the labels are used.
 */
#ifndef SANDLENS_CGROUP_ATTR_LABELS_H
#define SANDLENS_CGROUP_ATTR_LABELS_H

#include <stddef.h>

#include "cgroup/attr.h"
#include "common/prom.h"

/* Room a caller needs for the labels of one call (without terminator). */
#define SL_ATTR_LABELS_MAX 6

/* sandlens_* identity labels of a into out[0..n) (not terminated; the
 * caller appends its own labels and the {NULL, NULL} end). Returns n. */
size_t sl_attr_labels(const struct sl_attr *a, struct sl_prom_label *out);

/* cAdvisor's container_* labels of the container whose cgroup path (as
 * cAdvisor's id: relative to the hierarchy root, "/..." or "/" for the
 * root) is cgroup_path and attribution is a (NULL for the root: id only).
 * Returns n (not terminated). */
size_t sl_attr_cadvisor_labels(const char *cgroup_path, const struct sl_attr *a, struct sl_prom_label *out);

#endif
