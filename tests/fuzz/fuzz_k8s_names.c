/* libFuzzer: the Kubernetes names parsers of src/cgroup/k8s_names.c over
 * files a container or runtime controls: the input as an annotations map,
 * as a whole OCI config.json (containerd / CRI-O bundle), as docker's
 * config.v2.json, and, NUL-terminated and split at 0x1e, as a kubelet pod
 * log directory name and a container log link name with the id it must
 * end in. Every parser must leave *out consistent (NUL-terminated names). */
#include "fuzz_util.h"

#include "cgroup/k8s_names.h"

static void check(const struct sl_k8s_meta *m)
{
	volatile size_t n = strlen(m->names.ns) + strlen(m->names.pod) + strlen(m->names.container) +
			    strlen(m->names.image) + strlen(m->pod_uid);
	(void)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_k8s_meta m;

	sl_k8s_parse_annotations((const char *)data, size, &m);
	check(&m);
	sl_k8s_parse_oci_config((const char *)data, size, &m);
	check(&m);
	sl_k8s_parse_docker_config((const char *)data, size, &m);
	check(&m);

	char *s = sl_fuzz_cstr(data, size);
	if (!s)
		return 0;
	const char *part[2];
	sl_fuzz_split(s, SL_FUZZ_SEP, part, 2);
	sl_k8s_parse_pod_log_dir(part[0], &m);
	check(&m);
	if (part[1]) {
		sl_k8s_parse_container_log_name(part[0], part[1], &m);
		check(&m);
	}
	free(s);
	return 0;
}
