/* Kubernetes names from runtime state (src/cgroup/k8s_names.c): the shared
 * oci_annotations cases, CRI-O and docker files, the kubelet log layout,
 * the lookup through runc's bundle, containerd's and CRI-O's directories,
 * and hostile files (huge, FIFO, symlink to /dev/zero, invalid JSON,
 * control characters, contradictions): no names, no hang. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "cgroup/k8s_names.h"
#include "cgroup/runc_state.h"
#include "shared_cases.h"

static char tmp[64];
static char shared[512];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mkdirs(const char *fmt, ...)
{
	char p[1024], q[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	for (char *s = p + 1; *s; s++) {
		if (*s == '/') {
			snprintf(q, (size_t)(s - p) + 1, "%s", p);
			mkdir(q, 0700);
		}
	}
	mkdir(p, 0700);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void expect_str(json_t *exp, const char *key, const char *got, const char *id)
{
	json_t *v = json_object_get(exp, key);
	const char *want = json_is_string(v) ? json_string_value(v) : "";
	if (strcmp(want, got))
		fail_msg("%s: %s: got '%s', want '%s'", id, key, got, want);
}

/* Every shared oci_annotations case (.in, or .in.container / .in.sandbox). */
static void t_shared_cases(void **state)
{
	(void)state;
	DIR *d = opendir(shared);
	assert_non_null(d);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 10 || strcmp(de->d_name + l - 9, ".expected"))
			continue;
		char id[256], p[1024];
		snprintf(id, sizeof(id), "%.*s", (int)(l - 9), de->d_name);
		snprintf(p, sizeof(p), "%s/%s", shared, de->d_name);
		json_error_t je;
		json_t *exp = json_load_file(p, 0, &je);
		assert_non_null(exp);
		snprintf(p, sizeof(p), "%s/%s.in", shared, id);
		if (access(p, R_OK) != 0)
			snprintf(p, sizeof(p), "%s/%s.in.container", shared, id);
		size_t len;
		char *buf = slurp(p, &len);
		struct sl_k8s_meta m;
		int r = sl_k8s_parse_annotations(buf, len, &m);
		assert_true(r >= 0);
		expect_str(exp, "namespace", m.names.ns, id);
		expect_str(exp, "pod", m.names.pod, id);
		expect_str(exp, "container", m.names.container, id);
		expect_str(exp, "image", m.names.image, id);
		expect_str(exp, "pod_uid", m.pod_uid, id);
		json_t *sb = json_object_get(exp, "is_sandbox");
		int want = json_is_true(sb) ? SL_YES : json_is_false(sb) ? SL_NO : SL_UNKNOWN;
		if (m.is_sandbox != want)
			fail_msg("%s: is_sandbox %d, want %d", id, m.is_sandbox, want);
		free(buf);
		json_decref(exp);
		n++;
	}
	closedir(d);
	assert_true(n >= 2);
}

#define CRIO_MAP                                                                                            \
	"{\"io.kubernetes.pod.namespace\":\"kube-system\",\"io.kubernetes.pod.name\":\"coredns-5d78c9869d-x2x\"," \
	"\"io.kubernetes.container.name\":\"coredns\",\"io.kubernetes.pod.uid\":"                                \
	"\"0e3f2c7a-1b2c-4d5e-8f90-a1b2c3d4e5f6\",\"io.kubernetes.cri-o.ContainerType\":\"container\","           \
	"\"io.kubernetes.cri-o.ImageName\":\"registry.k8s.io/coredns/coredns:v1.10.1\","                         \
	"\"io.kubernetes.cri-o.Image\":\"sha256:ead0a4a53df89fd173874b46093b6e62d8c72967bbf606d672c9e8c9b601a4fc\"}"

static void t_crio_and_docker(void **state)
{
	(void)state;
	struct sl_k8s_meta m;
	assert_int_equal(sl_k8s_parse_annotations(CRIO_MAP, strlen(CRIO_MAP), &m), 1);
	assert_string_equal(m.names.ns, "kube-system");
	assert_string_equal(m.names.pod, "coredns-5d78c9869d-x2x");
	assert_string_equal(m.names.container, "coredns");
	assert_string_equal(m.names.image, "registry.k8s.io/coredns/coredns:v1.10.1");
	assert_int_equal(m.is_sandbox, SL_NO);

	const char *oci = "{\"ociVersion\":\"1.0.2\",\"annotations\":" CRIO_MAP "}";
	assert_int_equal(sl_k8s_parse_oci_config(oci, strlen(oci), &m), 1);
	assert_string_equal(m.names.container, "coredns");
	/* no annotations: names nothing, not an error */
	assert_int_equal(sl_k8s_parse_oci_config("{\"ociVersion\":\"1\"}", 18, &m), 0);

	const char *dk = "{\"Name\":\"/k8s_web_web-0_prod_11111111-2222-3333-4444-555555555555_0\","
			 "\"Config\":{\"Image\":\"nginx:1.25\",\"Labels\":{\"io.kubernetes.pod.namespace\":\"prod\","
			 "\"io.kubernetes.pod.name\":\"web-0\",\"io.kubernetes.container.name\":\"web\","
			 "\"io.kubernetes.pod.uid\":\"11111111-2222-3333-4444-555555555555\","
			 "\"io.kubernetes.docker.type\":\"container\"}}}";
	assert_int_equal(sl_k8s_parse_docker_config(dk, strlen(dk), &m), 1);
	assert_string_equal(m.names.ns, "prod");
	assert_string_equal(m.names.pod, "web-0");
	assert_string_equal(m.names.container, "web");
	assert_string_equal(m.names.image, "nginx:1.25");
	/* dockershim's sandbox: container "POD" is no name, no image */
	const char *ds = "{\"Config\":{\"Image\":\"registry.k8s.io/pause:3.9\",\"Labels\":{"
			 "\"io.kubernetes.pod.namespace\":\"prod\",\"io.kubernetes.pod.name\":\"web-0\","
			 "\"io.kubernetes.container.name\":\"POD\",\"io.kubernetes.docker.type\":\"podsandbox\"}}}";
	assert_int_equal(sl_k8s_parse_docker_config(ds, strlen(ds), &m), 1);
	assert_string_equal(m.names.container, "");
	assert_string_equal(m.names.image, "");
	assert_int_equal(m.is_sandbox, SL_YES);
	/* a plain docker container: no labels, no names */
	const char *plain = "{\"Config\":{\"Image\":\"x\",\"Labels\":null}}";
	assert_int_equal(sl_k8s_parse_docker_config(plain, strlen(plain), &m), 0);
}

/* Bad values make the whole map unknown. */
static void t_hostile_values(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"{\"io.kubernetes.pod.namespace\":\"de\\u0001v\",\"io.kubernetes.pod.name\":\"p\"}",
		"{\"io.kubernetes.pod.namespace\":\"dev\",\"io.kubernetes.pod.name\":\"p\\nq\"}",
		"{\"io.kubernetes.pod.namespace\":\"dev\",\"io.kubernetes.container.name\":\"a\\u0000b\"}",
		"{\"io.kubernetes.pod.namespace\":\"de v\"}",
		"{\"io.kubernetes.pod.namespace\":\"d\u00e9v\"}",
		"{\"io.kubernetes.pod.name\":\"a\\\"b\"}",
		"{\"io.kubernetes.pod.namespace\":\"dev\",\"io.kubernetes.cri-o.ImageName\":\"im\\u001bage\"}",
		"{\"io.kubernetes.pod.namespace\":7}",
		"{\"io.kubernetes.cri.sandbox-namespace\":\"a\",\"io.kubernetes.pod.namespace\":\"b\"}",
		"{\"io.kubernetes.pod.namespace\":\"a\",\"io.kubernetes.pod.namespace\":\"b\"}",
		"{\"io.kubernetes.pod.uid\":\"not-a-uid!\"}",
		"[\"io.kubernetes.pod.namespace\"]",
		"{\"io.kubernetes.pod.namespace\":\"dev\"",
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sl_k8s_meta m;
		int r = sl_k8s_parse_annotations(bad[i], strlen(bad[i]), &m);
		if (r != -EINVAL)
			fail_msg("case %zu: %d, want -EINVAL", i, r);
		assert_string_equal(m.names.ns, "");
		assert_string_equal(m.names.pod, "");
		assert_string_equal(m.names.container, "");
	}
	/* agreeing duplicates across runtimes are fine */
	const char *ok = "{\"io.kubernetes.cri.sandbox-namespace\":\"a\",\"io.kubernetes.pod.namespace\":\"a\"}";
	struct sl_k8s_meta m;
	assert_int_equal(sl_k8s_parse_annotations(ok, strlen(ok), &m), 1);
	/* a legal long reference: 225-char repository @sha256:<64 hex> (297
	 * bytes) is kept with the other names */
	char img[700], txt[1400];
	memset(img, 'r', 225);
	memcpy(img, "registry.example.com/", 21);
	snprintf(img + 225, sizeof(img) - 225, "@sha256:%064d", 7);
	assert_int_equal(strlen(img), 297);
	snprintf(txt, sizeof(txt),
		 "{\"io.kubernetes.pod.namespace\":\"dev\",\"io.kubernetes.pod.name\":\"p\","
		 "\"io.kubernetes.container.name\":\"c\",\"io.kubernetes.cri-o.ImageName\":\"%s\"}",
		 img);
	assert_int_equal(sl_k8s_parse_annotations(txt, strlen(txt), &m), 1);
	assert_string_equal(m.names.image, img);
	assert_string_equal(m.names.ns, "dev");
	/* optional fields out of bounds or unknown: only that field is left
	 * out (image over 511 bytes, with a space; container-type "Container") */
	memset(img, 'x', 600);
	img[600] = 0;
	const char *opt[] = {img, "a b", NULL};
	for (int i = 0; opt[i]; i++) {
		snprintf(txt, sizeof(txt),
			 "{\"io.kubernetes.pod.namespace\":\"dev\",\"io.kubernetes.pod.name\":\"p\","
			 "\"io.kubernetes.container.name\":\"c\",\"io.kubernetes.cri.image-name\":\"%s\"}",
			 opt[i]);
		assert_int_equal(sl_k8s_parse_annotations(txt, strlen(txt), &m), 1);
		assert_string_equal(m.names.image, "");
		assert_string_equal(m.names.ns, "dev");
		assert_string_equal(m.names.pod, "p");
		assert_string_equal(m.names.container, "c");
	}
	const char *ty = "{\"io.kubernetes.pod.namespace\":\"dev\",\"io.kubernetes.pod.name\":\"p\","
			 "\"io.kubernetes.container.name\":\"c\",\"io.kubernetes.cri.container-type\":\"Container\"}";
	assert_int_equal(sl_k8s_parse_annotations(ty, strlen(ty), &m), 1);
	assert_int_equal(m.is_sandbox, SL_UNKNOWN);
	assert_string_equal(m.names.container, "c");
	/* a control character in a type still drops everything */
	const char *tyc = "{\"io.kubernetes.pod.namespace\":\"dev\",\"io.kubernetes.cri.container-type\":\"x\\u0007\"}";
	assert_int_equal(sl_k8s_parse_annotations(tyc, strlen(tyc), &m), -EINVAL);
	assert_string_equal(m.names.ns, "");
}

static void t_log_names(void **state)
{
	(void)state;
	struct sl_k8s_meta m;
	assert_int_equal(sl_k8s_parse_pod_log_dir("default_web-7d4b9_04688d49-005b-46ec-a200-18ed04a954fb", &m), 1);
	assert_string_equal(m.names.ns, "default");
	assert_string_equal(m.names.pod, "web-7d4b9");
	assert_string_equal(m.pod_uid, "04688d49-005b-46ec-a200-18ed04a954fb");
	assert_int_equal(sl_k8s_parse_pod_log_dir("a_b", &m), 0);
	assert_int_equal(sl_k8s_parse_pod_log_dir("a_b_c_d", &m), 0);
	assert_int_equal(sl_k8s_parse_pod_log_dir("a_b_0123zz", &m), 0);
	const char *id = "3f1c9e2a4b5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7";
	char n[256];
	snprintf(n, sizeof(n), "web-7d4b9_default_nginx-%s.log", id);
	assert_int_equal(sl_k8s_parse_container_log_name(n, id, &m), 1);
	assert_string_equal(m.names.container, "nginx");
	assert_string_equal(m.names.ns, "default");
	assert_int_equal(sl_k8s_parse_container_log_name(n, "3f1c", &m), 0);
}

static struct sl_k8s_roots roots_in(const char *base)
{
	struct sl_k8s_roots r;
	memset(&r, 0, sizeof(r));
	snprintf(r.containerd, sizeof(r.containerd), "%s/containerd", base);
	snprintf(r.crio, sizeof(r.crio), "%s/crio", base);
	snprintf(r.docker, sizeof(r.docker), "%s/docker", base);
	snprintf(r.log_pods, sizeof(r.log_pods), "%s/pods", base);
	snprintf(r.log_containers, sizeof(r.log_containers), "%s/containers", base);
	return r;
}

#define CD_ANN(ns, pod, ctr, uid)                                                                          \
	"{\"annotations\":{\"io.kubernetes.cri.sandbox-namespace\":\"" ns "\",\"io.kubernetes.cri.sandbox-name\":\"" pod \
	"\",\"io.kubernetes.cri.container-name\":\"" ctr "\",\"io.kubernetes.cri.image-name\":\"docker.io/library/busybox:1.36\"," \
	"\"io.kubernetes.cri.sandbox-uid\":\"" uid "\",\"io.kubernetes.cri.container-type\":\"container\"}}"

#define UID "9c64c5bf-298f-46c4-ad63-e2270a2ff44c"

static void t_lookup_sources(void **state)
{
	(void)state;
	char base[128], p[1024];
	snprintf(base, sizeof(base), "%s/src", tmp);
	struct sl_k8s_roots r = roots_in(base);
	struct sl_k8s_names nm;

	/* containerd task directory */
	mkdirs("%s/k8s.io/c1", r.containerd);
	snprintf(p, sizeof(p), "%s/k8s.io/c1/config.json", r.containerd);
	write_file(p, CD_ANN("team-a", "api-0", "server", UID));
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "c1", UID, &nm), 1);
	assert_string_equal(nm.ns, "team-a");
	assert_string_equal(nm.pod, "api-0");
	assert_string_equal(nm.container, "server");
	assert_string_equal(nm.image, "docker.io/library/busybox:1.36");
	/* the cgroup's pod uid is another pod: not this file's names */
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "c1", "11111111-2222-3333-4444-555555555555", &nm), 0);
	assert_string_equal(nm.ns, "");

	/* a file under a pod's cgroup that leaves out the pod uid names
	 * nothing (impersonation: kube-system/kube-apiserver-node1) */
	mkdirs("%s/k8s.io/c9", r.containerd);
	snprintf(p, sizeof(p), "%s/k8s.io/c9/config.json", r.containerd);
	write_file(p, "{\"annotations\":{\"io.kubernetes.cri.sandbox-namespace\":\"kube-system\","
		      "\"io.kubernetes.cri.sandbox-name\":\"kube-apiserver-node1\","
		      "\"io.kubernetes.cri.container-name\":\"kube-apiserver\"}}");
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "c9", UID, &nm), 0);
	assert_string_equal(nm.ns, "");
	assert_string_equal(nm.pod, "");
	/* without a pod uid on the cgroup path there is nothing to check */
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "c9", "", &nm), 1);
	assert_string_equal(nm.ns, "kube-system");

	/* CRI-O userdata */
	mkdirs("%s/c2/userdata", r.crio);
	snprintf(p, sizeof(p), "%s/c2/userdata/config.json", r.crio);
	write_file(p, "{\"annotations\":" CRIO_MAP "}");
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "c2", "", &nm), 1);
	assert_string_equal(nm.container, "coredns");

	/* runc's bundle label */
	mkdirs("%s/bundles/b3", base);
	snprintf(p, sizeof(p), "%s/bundles/b3/config.json", base);
	write_file(p, CD_ANN("team-b", "job-x", "worker", UID));
	char rroot[256], st[1024];
	snprintf(rroot, sizeof(rroot), "%s/runc", base);
	mkdirs("%s/c3", rroot);
	snprintf(st, sizeof(st),
		 "{\"id\":\"c3\",\"cgroup_paths\":{\"\":\"/sys/fs/cgroup/x/c3\"},\"config\":{\"labels\":[\"bundle=%s/bundles/b3\"]}}",
		 base);
	snprintf(p, sizeof(p), "%s/c3/state.json", rroot);
	write_file(p, st);
	struct sl_runc_index *ix = sl_runc_index_new(rroot);
	struct sl_runc_snap *s = sl_runc_index_get(ix);
	assert_int_equal(sl_k8s_names_lookup(&r, s, "c3", UID, &nm), 1);
	assert_string_equal(nm.ns, "team-b");
	assert_string_equal(nm.container, "worker");
	sl_runc_snap_put(s);
	sl_runc_index_free(ix);

	/* kubelet logs, given the pod uid */
	const char *id = "3f1c9e2a4b5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7";
	mkdirs("%s/team-c_db-0_" UID "/postgres", r.log_pods);
	mkdirs("%s", r.log_containers);
	snprintf(p, sizeof(p), "%s/db-0_team-c_postgres-%s.log", r.log_containers, id);
	write_file(p, "");
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, id, UID, &nm), 1);
	assert_string_equal(nm.ns, "team-c");
	assert_string_equal(nm.pod, "db-0");
	assert_string_equal(nm.container, "postgres");
	assert_string_equal(nm.image, "");
	/* another container of that pod: pod names, no container name */
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "ab12ab12ab12ab12", UID, &nm), 1);
	assert_string_equal(nm.container, "");
	/* nothing anywhere */
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "nothing-here", "", &nm), 0);
	/* ids that are not path components are not looked up */
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "../crio/c2", "", &nm), 0);
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "", "", &nm), 0);
}

/* attribution.host_root: the host's /run and /var under a prefix (a
 * DaemonSet's /host). Every default root is prefixed, and the bundle path
 * runc's state.json records (a host path) is read under the prefix too. */
static void t_host_root(void **state)
{
	(void)state;
	char hr[256], p[1024];
	struct sl_k8s_roots r;
	struct sl_k8s_names nm;

	snprintf(hr, sizeof(hr), "%s/host/", tmp); /* trailing '/' dropped */
	assert_int_equal(sl_k8s_roots_prefixed(&r, hr), 0);
	snprintf(p, sizeof(p), "%s/host/run/containerd/io.containerd.runtime.v2.task", tmp);
	assert_string_equal(r.containerd, p);
	snprintf(p, sizeof(p), "%s/host/var/log/pods", tmp);
	assert_string_equal(r.log_pods, p);
	snprintf(p, sizeof(p), "%s/host", tmp);
	assert_string_equal(r.host_root, p);

	/* containerd, CRI-O, docker, logs: each found only under the prefix */
	mkdirs("%s/k8s.io/h1", r.containerd);
	snprintf(p, sizeof(p), "%s/k8s.io/h1/config.json", r.containerd);
	write_file(p, CD_ANN("hr-a", "api-0", "server", UID));
	mkdirs("%s/h2/userdata", r.crio);
	snprintf(p, sizeof(p), "%s/h2/userdata/config.json", r.crio);
	write_file(p, "{\"annotations\":" CRIO_MAP "}");
	mkdirs("%s/h4", r.docker);
	snprintf(p, sizeof(p), "%s/h4/config.v2.json", r.docker);
	write_file(p, "{\"Config\":{\"Image\":\"nginx:1.25\",\"Labels\":{\"io.kubernetes.pod.namespace\":\"hr-d\","
		      "\"io.kubernetes.pod.name\":\"web-0\",\"io.kubernetes.container.name\":\"web\"}}}");
	mkdirs("%s/hr-l_db-0_" UID "/pg", r.log_pods);
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "h1", UID, &nm), 1);
	assert_string_equal(nm.ns, "hr-a");
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "h2", "", &nm), 1);
	assert_string_equal(nm.container, "coredns");
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "h4", "", &nm), 1);
	assert_string_equal(nm.ns, "hr-d");
	assert_int_equal(sl_k8s_names_lookup(&r, NULL, "h5", UID, &nm), 1);
	assert_string_equal(nm.ns, "hr-l");
	/* without the prefix the same state is not found */
	struct sl_k8s_roots plain;
	assert_int_equal(sl_k8s_roots_prefixed(&plain, ""), 0);
	struct sl_k8s_roots def;
	sl_k8s_roots_default(&def);
	assert_memory_equal(&plain, &def, sizeof(def));
	assert_int_equal(sl_k8s_roots_prefixed(&plain, "/"), 0);
	assert_string_equal(plain.containerd, def.containerd);

	/* runc: the root under the prefix (sl_host_path), the bundle label a
	 * host path: /run/containerd/... read as <prefix>/run/containerd/... */
	char rroot[256], st[1024];
	assert_int_equal(sl_host_path(rroot, sizeof(rroot), hr, "/run/runc"), 0);
	snprintf(p, sizeof(p), "%s/host/run/runc", tmp);
	assert_string_equal(rroot, p);
	mkdirs("%s/h3", rroot);
	mkdirs("%s/host/run/containerd/bundles/h3", tmp);
	snprintf(p, sizeof(p), "%s/host/run/containerd/bundles/h3/config.json", tmp);
	write_file(p, CD_ANN("hr-b", "job-x", "worker", UID));
	snprintf(st, sizeof(st),
		 "{\"id\":\"h3\",\"cgroup_paths\":{\"\":\"/sys/fs/cgroup/x/h3\"},"
		 "\"config\":{\"labels\":[\"bundle=/run/containerd/bundles/h3\"]}}");
	snprintf(p, sizeof(p), "%s/h3/state.json", rroot);
	write_file(p, st);
	struct sl_runc_index *ix = sl_runc_index_new(rroot);
	struct sl_runc_snap *s = sl_runc_index_get(ix);
	assert_int_equal(sl_k8s_names_lookup(&r, s, "h3", UID, &nm), 1);
	assert_string_equal(nm.ns, "hr-b");
	assert_string_equal(nm.container, "worker");
	sl_runc_snap_put(s);
	sl_runc_index_free(ix);

	/* too long: nothing is looked up rather than a cut path */
	char big[300];
	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(sl_k8s_roots_prefixed(&r, big), -ENAMETOOLONG);
	assert_string_equal(r.containerd, "");
	assert_int_equal(sl_host_path(rroot, sizeof(rroot), big, "/run/runc"), -ENAMETOOLONG);
	assert_string_equal(rroot, "");
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "test_k8s_names: a hostile file made the lookup hang\n";
	if (write(2, m, sizeof(m) - 1) < 0)
		_exit(3);
	_exit(2);
}

/* A container's bundle config.json that is huge, a FIFO, a symlink to
 * /dev/zero, invalid JSON or has control characters: no names, no hang,
 * and the other sources are not used for it. */
static void t_hostile_files(void **state)
{
	(void)state;
	char base[128], p[1024], t[1024];
	snprintf(base, sizeof(base), "%s/bad", tmp);
	struct sl_k8s_roots r = roots_in(base);
	struct sl_k8s_names nm;
	struct sl_k8s_meta m;
	/* the kubelet logs would name the pod: a hostile bundle must still give nothing */
	mkdirs("%s/team-c_db-0_" UID, r.log_pods);
	signal(SIGALRM, on_alarm);
	alarm(10);
	static const char *const names[] = {"huge", "fifo", "zero", "badjson", "ctrl", "dir"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		mkdirs("%s/k8s.io/%s", r.containerd, names[i]);
		snprintf(p, sizeof(p), "%s/k8s.io/%s/config.json", r.containerd, names[i]);
		switch (i) {
		case 0: {
			int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			assert_true(fd >= 0);
			assert_int_equal(ftruncate(fd, 64 << 20), 0);
			close(fd);
			break;
		}
		case 1:
			assert_int_equal(mkfifo(p, 0600), 0);
			break;
		case 2:
			assert_int_equal(symlink("/dev/zero", p), 0);
			break;
		case 3:
			write_file(p, "{\"annotations\":{\"io.kubernetes.pod.namespace\":\"dev\",");
			break;
		case 4:
			write_file(p, "{\"annotations\":{\"io.kubernetes.pod.namespace\":\"dev\\u0007\","
				      "\"io.kubernetes.pod.name\":\"p\\u001b[31m\"}}");
			break;
		default:
			mkdirs("%s", p);
			break;
		}
		if (i < 5)
			assert_true(sl_k8s_parse_file(p, SL_K8S_FILE_MAX, sl_k8s_parse_oci_config, &m) < 0);
		snprintf(t, sizeof(t), "%s", names[i]);
		assert_int_equal(sl_k8s_names_lookup(&r, NULL, t, UID, &nm), 0);
		assert_string_equal(nm.ns, "");
		assert_string_equal(nm.pod, "");
	}
	/* a huge file read as a whole with a small bound also fails */
	snprintf(p, sizeof(p), "%s/k8s.io/huge/config.json", r.containerd);
	assert_int_equal(sl_k8s_parse_file(p, 4096, sl_k8s_parse_oci_config, &m), -EFBIG);
	alarm(0);
}

int main(void)
{
	if (sl_shared_cases_dir("test_k8s_names", "oci_annotations", shared, sizeof(shared)))
		return sl_shared_cases_fail("test_k8s_names");
	snprintf(tmp, sizeof(tmp), "/tmp/sl-k8s-XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	const struct CMUnitTest t[] = {
		cmocka_unit_test(t_shared_cases), cmocka_unit_test(t_crio_and_docker), cmocka_unit_test(t_hostile_values),
		cmocka_unit_test(t_log_names),    cmocka_unit_test(t_lookup_sources),  cmocka_unit_test(t_host_root),  cmocka_unit_test(t_hostile_files),
	};
	int rc = cmocka_run_group_tests(t, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
