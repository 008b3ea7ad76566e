/* Identity labels of /metrics (attr_labels.h). */
#include "cgroup/attr_labels.h"

static size_t names(const struct sl_k8s_names *k, struct sl_prom_label *out, size_t n)
{
	if (k->ns[0])
		out[n++] = (struct sl_prom_label){"namespace", k->ns};
	if (k->pod[0])
		out[n++] = (struct sl_prom_label){"pod", k->pod};
	if (k->container[0])
		out[n++] = (struct sl_prom_label){"container", k->container};
	return n;
}

size_t sl_attr_labels(const struct sl_attr *a, struct sl_prom_label *out)
{
	size_t n = 0;
	out[n++] = (struct sl_prom_label){"container_id", a->container_id};
	out[n++] = (struct sl_prom_label){"pod_uid", a->pod_uid};
	out[n++] = (struct sl_prom_label){"runtime", a->runtime};
	return names(&a->names, out, n);
}

size_t sl_attr_cadvisor_labels(const char *cgroup_path, const struct sl_attr *a, struct sl_prom_label *out)
{
	size_t n = 0;
	out[n++] = (struct sl_prom_label){"id", cgroup_path};
	if (!a)
		return n;
	if (a->container_id[0])
		out[n++] = (struct sl_prom_label){"name", a->container_id};
	if (a->names.image[0])
		out[n++] = (struct sl_prom_label){"image", a->names.image};
	return names(&a->names, out, n);
}
