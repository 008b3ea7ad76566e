/* Kubernetes names from the runtimes' state on the node (k8s_names.h). */
#include "cgroup/k8s_names.h"

#include "cgroup/runc_state.h"
#include "profile/symbolize_proc.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------- validation */

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
	       c == '.';
}

/* A name as the runtimes accept it: 1..max bytes of [A-Za-z0-9._-].
 * Kubernetes itself allows only DNS-1123 labels (namespace, container)
 * and subdomains (pod), but CRI clients such as crictl pass other names
 * through (shared case o01: container "test_container"), so the check is
 * the wider set: what is refused is what could not be a name at all
 * (control characters, spaces, quotes, non-ASCII). */
static int name_ok(const char *s, size_t n, size_t max)
{
	if (n == 0 || n > max || s[0] == '.' || s[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return 0;
	return 1;
}

static int dns_label(const char *s, size_t n) { return name_ok(s, n, 63); }
static int dns_subdomain(const char *s, size_t n) { return name_ok(s, n, 253); }

/* A control character (C0 or DEL): what no runtime writes in a name; the
 * file is hostile. */
static int has_control(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f)
			return 1;
	return 0;
}

/* An image reference: 1..511 bytes of printable ASCII without space. */
static int image_ok(const char *s, size_t n)
{
	if (n == 0 || n >= SL_K8S_IMAGE_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

/* A pod uid: 1..36 bytes of hex digits and '-' (UUID, or 32 hex for a
 * static pod's hash). */
static int uid_ok(const char *s, size_t n)
{
	if (n == 0 || n >= SL_POD_UID_LEN || n > 36)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '-'))
			return 0;
	}
	return 1;
}

/* Same uid, ignoring case and dashes (cgroup paths write it with '_' that
 * the path rules turn back into '-'). */
static int uid_same(const char *a, const char *b)
{
	for (;;) {
		while (*a == '-')
			a++;
		while (*b == '-')
			b++;
		char x = *a, y = *b;
		if (x >= 'A' && x <= 'F')
			x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'F')
			y = (char)(y - 'A' + 'a');
		if (x != y)
			return 0;
		if (!x)
			return 1;
		a++;
		b++;
	}
}

static void meta_clear(struct sl_k8s_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->is_sandbox = SL_UNKNOWN;
}

/* ------------------------------------------------------- key tables */

enum fld { F_NS, F_POD, F_CTR, F_IMAGE, F_UID, F_TYPE, F_N };

struct key {
	const char *name;
	int fld;
};

/* containerd internal/cri/annotations/annotations.go; cri-o
 * pkg/annotations/internal.go and the kubelet's labels
 * (pkg/kubelet/types/labels.go), which CRI-O copies into the annotations
 * and docker (dockershim, cri-dockerd) into the container labels. Order
 * within a field: the first key present is used; any other present key of
 * the same field must agree. */
static const struct key keys[] = {
	{"io.kubernetes.cri.sandbox-namespace", F_NS},
	{"io.kubernetes.pod.namespace", F_NS},
	{"io.kubernetes.cri.sandbox-name", F_POD},
	{"io.kubernetes.pod.name", F_POD},
	{"io.kubernetes.cri.container-name", F_CTR},
	{"io.kubernetes.container.name", F_CTR},
	{"io.kubernetes.cri.image-name", F_IMAGE},
	{"io.kubernetes.cri-o.ImageName", F_IMAGE},
	{"io.kubernetes.cri.sandbox-uid", F_UID},
	{"io.kubernetes.pod.uid", F_UID},
	{"io.kubernetes.cri.container-type", F_TYPE},
	{"io.kubernetes.cri-o.ContainerType", F_TYPE},
	{"io.kubernetes.docker.type", F_TYPE},
};
/* CRI-O's user-requested image: used only when no ImageName is given. */
#define CRIO_IMAGE_FALLBACK "io.kubernetes.cri-o.Image"

static int type_sandbox(const char *v)
{
	if (!strcmp(v, "sandbox") || !strcmp(v, "podsandbox"))
		return SL_YES;
	if (!strcmp(v, "container"))
		return SL_NO;
	return -2; /* unknown value: hostile */
}

/* Copy a validated value into its field. 0; 1 when an optional field
 * (image, container type) is out of bounds or unknown: that field is left
 * out, the others kept; -EINVAL for a bad identity field (namespace, pod,
 * container, uid) or a control character anywhere: all names dropped. */
static int set_field(struct sl_k8s_meta *m, int f, const char *v, size_t n)
{
	switch (f) {
	case F_NS:
		if (!dns_label(v, n))
			return -EINVAL;
		memcpy(m->names.ns, v, n + 1);
		return 0;
	case F_POD:
		if (!dns_subdomain(v, n))
			return -EINVAL;
		memcpy(m->names.pod, v, n + 1);
		return 0;
	case F_CTR:
		/* dockershim names a sandbox's container "POD": not a name */
		if (!dns_label(v, n) && strcmp(v, "POD"))
			return -EINVAL;
		if (strcmp(v, "POD"))
			memcpy(m->names.container, v, n + 1);
		return 0;
	case F_IMAGE:
		if (has_control(v, n))
			return -EINVAL;
		if (!image_ok(v, n))
			return 1;
		memcpy(m->names.image, v, n + 1);
		return 0;
	case F_UID:
		if (!uid_ok(v, n))
			return -EINVAL;
		memcpy(m->pod_uid, v, n + 1);
		return 0;
	default: {
		int t = type_sandbox(v);
		if (t == -2)
			return has_control(v, n) ? -EINVAL : 1; /* unknown: not said */
		m->is_sandbox = t;
		return 0;
	}
	}
}

/* The keys of map (a JSON object of strings) into *out. */
static int from_map(json_t *map, struct sl_k8s_meta *out)
{
	const char *first[F_N] = {0};
	meta_clear(out);
	if (!json_is_object(map))
		return -EINVAL;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		json_t *jv = json_object_get(map, keys[k].name);
		if (!jv)
			continue;
		const char *v = json_string_value(jv);
		if (!v)
			goto bad;
		size_t n = json_string_length(jv);
		if (strlen(v) != n) /* an embedded NUL */
			goto bad;
		int f = keys[k].fld;
		if (first[f]) {
			if (strcmp(first[f], v))
				goto bad; /* two sources disagree */
			continue;
		}
		if (set_field(out, f, v, n) < 0)
			goto bad;
		first[f] = v;
	}
	if (!first[F_IMAGE]) {
		json_t *jv = json_object_get(map, CRIO_IMAGE_FALLBACK);
		if (jv) {
			const char *v = json_string_value(jv);
			if (!v || strlen(v) != json_string_length(jv) || set_field(out, F_IMAGE, v, strlen(v)) < 0)
				goto bad;
		}
	}
	if (out->is_sandbox == SL_YES) {
		/* the pause container: its pod's names, no container or image
		 * (containerd 2's podsandbox.image-name is the pause image) */
		out->names.container[0] = 0;
		out->names.image[0] = 0;
	}
	return out->names.ns[0] || out->names.pod[0] || out->names.container[0] || out->names.image[0] ||
	       out->pod_uid[0];
bad:
	meta_clear(out);
	return -EINVAL;
}

static json_t *load(const char *buf, size_t len)
{
	json_error_t e;
	if (!buf)
		return NULL;
	return json_loadb(buf, len, JSON_REJECT_DUPLICATES, &e);
}

int sl_k8s_parse_annotations(const char *buf, size_t len, struct sl_k8s_meta *out)
{
	json_t *j = load(buf, len);
	int r = from_map(j, out);
	json_decref(j);
	return r;
}

int sl_k8s_parse_oci_config(const char *buf, size_t len, struct sl_k8s_meta *out)
{
	json_t *j = load(buf, len);
	json_t *a = json_is_object(j) ? json_object_get(j, "annotations") : NULL;
	int r;
	if (json_is_object(j) && !a) {
		meta_clear(out); /* a config without annotations: names nothing */
		r = 0;
	} else {
		r = from_map(a, out);
	}
	json_decref(j);
	return r;
}

int sl_k8s_parse_docker_config(const char *buf, size_t len, struct sl_k8s_meta *out)
{
	json_t *j = load(buf, len);
	json_t *cfg = json_is_object(j) ? json_object_get(j, "Config") : NULL;
	json_t *labels = json_is_object(cfg) ? json_object_get(cfg, "Labels") : NULL;
	int r;
	meta_clear(out);
	if (!json_is_object(j) || (cfg && !json_is_object(cfg))) {
		r = -EINVAL;
	} else if (!labels || json_is_null(labels)) {
		r = 0; /* not a Kubernetes container: no names */
	} else if ((r = from_map(labels, out)) > 0 && out->is_sandbox != SL_YES) {
		/* docker keeps the image in Config.Image (cAdvisor's image label) */
		json_t *im = json_object_get(cfg, "Image");
		const char *v = json_string_value(im);
		if (im && (!v || strlen(v) != json_string_length(im) || set_field(out, F_IMAGE, v, strlen(v)) < 0)) {
			meta_clear(out);
			r = -EINVAL;
		}
	}
	json_decref(j);
	return r;
}

/* ------------------------------------------------------- kubelet logs */

/* Split name at '_' into exactly three non-empty parts (a, b, c); c may
 * end at end (exclusive). */
static int split3(const char *name, size_t n, const char **p, size_t *pl)
{
	size_t part = 0, start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || name[i] == '_') {
			if (part == 3)
				return 0;
			p[part] = name + start;
			pl[part] = i - start;
			part++;
			start = i + 1;
		}
	}
	return part == 3;
}

int sl_k8s_parse_pod_log_dir(const char *name, struct sl_k8s_meta *out)
{
	const char *p[3];
	size_t pl[3];
	meta_clear(out);
	if (!name || !split3(name, strlen(name), p, pl) || !dns_label(p[0], pl[0]) || !dns_subdomain(p[1], pl[1]) ||
	    !uid_ok(p[2], pl[2]))
		return 0;
	memcpy(out->names.ns, p[0], pl[0]);
	memcpy(out->names.pod, p[1], pl[1]);
	memcpy(out->pod_uid, p[2], pl[2]);
	return 1;
}

int sl_k8s_parse_container_log_name(const char *name, const char *id, struct sl_k8s_meta *out)
{
	const char *p[3];
	size_t pl[3];
	char suffix[SL_CONTAINER_ID_LEN + 8];
	meta_clear(out);
	if (!name || !id || !id[0])
		return 0;
	int sn = snprintf(suffix, sizeof(suffix), "-%s.log", id);
	size_t n = strlen(name);
	if (sn < 0 || (size_t)sn >= sizeof(suffix) || n <= (size_t)sn || strcmp(name + n - (size_t)sn, suffix))
		return 0;
	if (!split3(name, n - (size_t)sn, p, pl) || !dns_subdomain(p[0], pl[0]) || !dns_label(p[1], pl[1]) ||
	    !dns_label(p[2], pl[2]))
		return 0;
	memcpy(out->names.pod, p[0], pl[0]);
	memcpy(out->names.ns, p[1], pl[1]);
	memcpy(out->names.container, p[2], pl[2]);
	return 1;
}

/* ------------------------------------------------------- files */

int sl_k8s_parse_file(const char *path, size_t max, int (*parse)(const char *, size_t, struct sl_k8s_meta *),
		      struct sl_k8s_meta *out)
{
	char *buf = NULL;
	size_t len = 0;
	meta_clear(out);
	int fd = sl_sym_open(NULL, path, SL_SYM_NOFOLLOW, max, NULL);
	if (fd < 0)
		return fd;
	int rc = sl_read_fd_bounded(fd, max, &buf, &len);
	close(fd);
	if (rc)
		return rc;
	rc = parse(buf, len, out);
	free(buf);
	return rc;
}

void sl_k8s_roots_default(struct sl_k8s_roots *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->containerd, sizeof(r->containerd), "/run/containerd/io.containerd.runtime.v2.task");
	snprintf(r->crio, sizeof(r->crio), "/run/containers/storage/overlay-containers");
	snprintf(r->docker, sizeof(r->docker), "/var/lib/docker/containers");
	snprintf(r->log_pods, sizeof(r->log_pods), "/var/log/pods");
	snprintf(r->log_containers, sizeof(r->log_containers), "/var/log/containers");
}

/* host_root without a trailing '/' ("/" and "" -> ""), its length. */
static size_t prefix_len(const char *host_root)
{
	size_t n = host_root ? strlen(host_root) : 0;
	while (n > 0 && host_root[n - 1] == '/')
		n--;
	return n;
}

int sl_host_path(char *dst, size_t n, const char *host_root, const char *path)
{
	size_t pl = prefix_len(host_root);
	int w = snprintf(dst, n, "%.*s%s", (int)pl, pl ? host_root : "", path);
	if (w < 0 || (size_t)w >= n) {
		if (n)
			dst[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}

int sl_k8s_roots_prefixed(struct sl_k8s_roots *r, const char *host_root)
{
	struct sl_k8s_roots d;
	sl_k8s_roots_default(&d);
	memset(r, 0, sizeof(*r));
	size_t pl = prefix_len(host_root);
	if (pl >= sizeof(r->host_root))
		return -ENAMETOOLONG;
	memcpy(r->host_root, host_root, pl);
	if (sl_host_path(r->containerd, sizeof(r->containerd), host_root, d.containerd) ||
	    sl_host_path(r->crio, sizeof(r->crio), host_root, d.crio) ||
	    sl_host_path(r->docker, sizeof(r->docker), host_root, d.docker) ||
	    sl_host_path(r->log_pods, sizeof(r->log_pods), host_root, d.log_pods) ||
	    sl_host_path(r->log_containers, sizeof(r->log_containers), host_root, d.log_containers)) {
		memset(r, 0, sizeof(*r));
		return -ENAMETOOLONG;
	}
	return 0;
}

static int id_ok(const char *id)
{
	size_t n = id ? strlen(id) : 0;
	if (n == 0 || n >= SL_CONTAINER_ID_LEN || id[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

/* One candidate file: 1 names found (in *m), 0 file absent or naming
 * nothing, -1 present but bad (stop: do not take names from elsewhere for
 * a container whose own state is hostile). */
static int try_file(const char *path, int (*parse)(const char *, size_t, struct sl_k8s_meta *),
		    const char *pod_uid, struct sl_k8s_meta *m)
{
	int r = sl_k8s_parse_file(path, SL_K8S_FILE_MAX, parse, m);
	if (r == -ENOENT || r == -ENOTDIR || r == 0)
		return 0;
	if (r < 0)
		return -1;
	if (pod_uid && pod_uid[0] && m->pod_uid[0] && !uid_same(pod_uid, m->pod_uid)) {
		meta_clear(m); /* the file is not this cgroup's pod */
		return -1;
	}
	if (pod_uid && pod_uid[0] && !m->pod_uid[0]) {
		/* under a pod's cgroup a file must name that pod's uid: a
		 * container controls its bundle, and one that leaves the uid
		 * out could claim any namespace/pod (kube-system/kube-apiserver)
		 * (the kubelet's logs, keyed by the cgroup's uid, may still
		 * name it) */
		meta_clear(m);
		return 0;
	}
	return 1;
}

/* containerd: <root>/<namespace>/<id>/config.json for every namespace. */
static int try_containerd(const struct sl_k8s_roots *r, const char *id, const char *pod_uid, struct sl_k8s_meta *m)
{
	char path[1024];
	int res = 0;
	if (!r->containerd[0])
		return 0;
	DIR *d = opendir(r->containerd);
	if (!d)
		return 0;
	struct dirent *de;
	for (int i = 0; res == 0 && i < SL_K8S_SCAN_MAX && (de = readdir(d)); i++) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s/%s/config.json", r->containerd, de->d_name, id) >=
		    (int)sizeof(path))
			continue;
		res = try_file(path, sl_k8s_parse_oci_config, pod_uid, m);
	}
	closedir(d);
	return res;
}

/* The kubelet's log layout, given the pod uid. */
static int try_logs(const struct sl_k8s_roots *r, const char *id, const char *pod_uid, struct sl_k8s_meta *m)
{
	struct sl_k8s_meta pm, cm;
	int found = 0;
	DIR *d;
	struct dirent *de;
	meta_clear(m);
	if (!pod_uid || !pod_uid[0] || !r->log_pods[0] || !(d = opendir(r->log_pods)))
		return 0;
	for (int i = 0; i < SL_K8S_SCAN_MAX && (de = readdir(d)); i++) {
		if (sl_k8s_parse_pod_log_dir(de->d_name, &pm) && uid_same(pm.pod_uid, pod_uid)) {
			if (found && (strcmp(m->names.ns, pm.names.ns) || strcmp(m->names.pod, pm.names.pod))) {
				found = -1; /* two pods with one uid: no answer */
				break;
			}
			*m = pm;
			found = 1;
		}
	}
	closedir(d);
	if (found != 1) {
		meta_clear(m);
		return 0;
	}
	if (r->log_containers[0] && (d = opendir(r->log_containers))) {
		for (int i = 0; i < SL_K8S_SCAN_MAX && (de = readdir(d)); i++) {
			if (sl_k8s_parse_container_log_name(de->d_name, id, &cm) &&
			    !strcmp(cm.names.ns, m->names.ns) && !strcmp(cm.names.pod, m->names.pod)) {
				memcpy(m->names.container, cm.names.container, sizeof(m->names.container));
				break;
			}
		}
		closedir(d);
	}
	return 1;
}

int sl_k8s_names_lookup(const struct sl_k8s_roots *r, const struct sl_runc_snap *runc, const char *container_id,
			const char *pod_uid, struct sl_k8s_names *out)
{
	struct sl_k8s_meta m;
	char path[1024], bundle[600];
	int res = 0;
	memset(out, 0, sizeof(*out));
	if (!r || !id_ok(container_id))
		return 0;
	meta_clear(&m);
	if (runc && sl_runc_snap_bundle(runc, container_id, bundle, sizeof(bundle)) &&
	    (bundle[0] == '/' || !r->host_root[0]) &&
	    snprintf(path, sizeof(path), "%s%s/config.json", r->host_root, bundle) < (int)sizeof(path))
		res = try_file(path, sl_k8s_parse_oci_config, pod_uid, &m);
	if (res == 0)
		res = try_containerd(r, container_id, pod_uid, &m);
	if (res == 0 && r->crio[0] &&
	    snprintf(path, sizeof(path), "%s/%s/userdata/config.json", r->crio, container_id) < (int)sizeof(path))
		res = try_file(path, sl_k8s_parse_oci_config, pod_uid, &m);
	if (res == 0 && r->docker[0] &&
	    snprintf(path, sizeof(path), "%s/%s/config.v2.json", r->docker, container_id) < (int)sizeof(path))
		res = try_file(path, sl_k8s_parse_docker_config, pod_uid, &m);
	if (res == 0)
		res = try_logs(r, container_id, pod_uid, &m);
	if (res != 1)
		return 0;
	*out = m.names;
	return out->ns[0] || out->pod[0] || out->container[0] || out->image[0];
}
