/* Kubernetes names without the API server (ATTR-5): a container's
 * namespace, pod name, container name and image, read from what its
 * runtime recorded on the node (docs/ATTRIBUTION.md "Kubernetes names").
 *
 * Sources, first found wins:
 *   1. the OCI bundle's config.json "annotations", as containerd's CRI
 *      plugin writes them (io.kubernetes.cri.sandbox-namespace,
 *      -sandbox-name, -container-name, -image-name, -sandbox-uid,
 *      -container-type; containerd internal/cri/annotations) or CRI-O
 *      (io.kubernetes.pod.namespace, io.kubernetes.pod.name,
 *      io.kubernetes.container.name, io.kubernetes.pod.uid,
 *      io.kubernetes.cri-o.ImageName / .Image, io.kubernetes.cri-o.
 *      ContainerType; cri-o pkg/annotations). The bundle is found through
 *      runc's state (its "bundle=" label, runc_state.h), containerd's task
 *      directory <containerd>/<namespace>/<id>/config.json, or CRI-O's
 *      <crio>/<id>/userdata/config.json;
 *   2. docker's <docker>/<id>/config.v2.json: Config.Labels (the same
 *      io.kubernetes.* labels, io.kubernetes.docker.type) and Config.Image;
 *   3. given a pod uid and nothing above: the kubelet's log layout,
 *      <log_pods>/<ns>_<pod>_<uid>/ for namespace and pod, and the link
 *      <log_containers>/<pod>_<ns>_<container>-<id>.log for the container.
 *
 * Every file is opened non-blocking, regular files only (a FIFO, device or
 * symlink is refused), at most SL_K8S_FILE_MAX bytes, and parsed with
 * jansson (duplicate keys refused). A value that is not what Kubernetes
 * can be (namespace and container: 1..63, pod: 1..253 bytes of
 * [A-Za-z0-9._-], the DNS-1123 alphabet plus what CRI clients pass through;
 * image: 1..511 printable non-space ASCII, else left out alone; uid: hex and '-'), two sources
 * in one file that disagree, or a pod uid that is not the cgroup path's,
 * make the file's names unknown: a hostile bundle gives no names, never a
 * wrong one. A sandbox (pause) container has no container name and no
 * image (its pod's names only). Pure functions of the files: any thread.
 */
#ifndef SANDLENS_CGROUP_K8S_NAMES_H
#define SANDLENS_CGROUP_K8S_NAMES_H

#include <stddef.h>

#include "cgroup/attr.h"

/* Largest config.json / config.v2.json read (bytes); a bigger file gives
 * no names. Real ones are 10-60 KiB. */
#define SL_K8S_FILE_MAX (1u << 20)
/* At most this many directory entries are read per scan (containerd
 * namespaces, the kubelet's log directories). */
#define SL_K8S_SCAN_MAX 16384

/* What one source says. */
struct sl_k8s_meta {
	struct sl_k8s_names names;
	char pod_uid[SL_POD_UID_LEN]; /* as written ("" none) */
	int is_sandbox;               /* enum sl_tristate: the source's container type */
};

/* Parse an annotations map (a JSON object given as text, len bytes, need
 * not be NUL-terminated) into *out (zeroed first, is_sandbox SL_UNKNOWN).
 * Returns 1 when it names anything, 0 when it names nothing, -EINVAL when
 * the text is not a JSON object or a value is invalid or contradicted
 * (*out is then all empty). */
int sl_k8s_parse_annotations(const char *buf, size_t len, struct sl_k8s_meta *out);

/* Same from a whole OCI runtime config.json (its "annotations" object). */
int sl_k8s_parse_oci_config(const char *buf, size_t len, struct sl_k8s_meta *out);

/* Same from docker's config.v2.json (Config.Labels, Config.Image). */
int sl_k8s_parse_docker_config(const char *buf, size_t len, struct sl_k8s_meta *out);

/* A kubelet pod log directory name "<ns>_<pod>_<uid>": 1 and ns, pod,
 * pod_uid set when well formed, else 0. */
int sl_k8s_parse_pod_log_dir(const char *name, struct sl_k8s_meta *out);

/* A kubelet container log link name "<pod>_<ns>_<container>-<id>.log" for
 * container id: 1 and ns, pod, container set when it is that container's
 * and well formed, else 0. */
int sl_k8s_parse_container_log_name(const char *name, const char *id, struct sl_k8s_meta *out);

/* Where the runtimes keep their state ("" = do not look). */
struct sl_k8s_roots {
	char containerd[256];     /* /run/containerd/io.containerd.runtime.v2.task */
	char crio[256];           /* /run/containers/storage/overlay-containers */
	char docker[256];         /* /var/lib/docker/containers */
	char log_pods[256];       /* /var/log/pods */
	char log_containers[256]; /* /var/log/containers */
	/* prefix of the bundle paths runc's state.json records (host paths),
	 * "" = none: attribution.host_root, when the host's /run and /var are
	 * mounted under it (a DaemonSet) */
	char host_root[256];
};

/* The default roots above. */
void sl_k8s_roots_default(struct sl_k8s_roots *r);

/* The default roots under host_root (NULL, "" or "/" = none; a trailing
 * '/' is dropped), host_root recorded for the bundle paths. Returns 0, or
 * -ENAMETOOLONG when a prefixed root does not fit (*r = the defaults then
 * left empty: nothing is looked up rather than the wrong files). */
int sl_k8s_roots_prefixed(struct sl_k8s_roots *r, const char *host_root);

/* dst = host_root + path (host_root as above). Returns 0 or -ENAMETOOLONG. */
int sl_host_path(char *dst, size_t n, const char *host_root, const char *path);

struct sl_runc_snap;

/* The names of container container_id (pod_uid: the cgroup path's, "" or
 * NULL when none) from the sources above, in *out (zeroed first). runc:
 * a snapshot of the runc index for bundle paths (may be NULL). Returns 1
 * when a name was found, 0 when none (absent, unreadable or hostile
 * files). An id that is not 1..79 bytes of [A-Za-z0-9_.-] (not starting
 * with '.') is not looked up. */
int sl_k8s_names_lookup(const struct sl_k8s_roots *r, const struct sl_runc_snap *runc, const char *container_id,
			const char *pod_uid, struct sl_k8s_names *out);

/* Read a file others control as the lookup does (non-blocking open, no
 * symlink as last component, regular file, <= max bytes) and parse it with
 * parse. Returns what parse returned, or -errno when it could not be
 * read. For tests. */
int sl_k8s_parse_file(const char *path, size_t max, int (*parse)(const char *, size_t, struct sl_k8s_meta *),
		      struct sl_k8s_meta *out);

#endif
