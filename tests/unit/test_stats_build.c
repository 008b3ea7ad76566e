/* Unit tests for src/stats/{build,answer,prom}.c over fixture cgroup trees
 * in mkdtemp: discovery and attribution, workloads (pod, sandbox,
 * container), sums with an unreadable container, status codes, epochs
 * across recreation, tombstones, runc pending ids, v1 layout, Prometheus
 * text (and `promtool check metrics` when promtool is installed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stats/stats.h"

#define POD "0a1b2c3d-1111-2222-3333-444455556666"
#define POD2 "99999999-1111-2222-3333-444455556666"
#define CA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define CB "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define CC "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define SB "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define N1 "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
#define N2 "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"

static char root[128];

static void put(const char *dir, const char *file, const char *text)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mkdirs(const char *path)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

/* A v2 container directory with the given figures. */
static void v2ctr(const char *rel, uint64_t usage, uint64_t inactive, uint64_t peak, uint64_t cpu)
{
	char d[1024], t[512];
	snprintf(d, sizeof(d), "%s/v2%s", root, rel);
	mkdirs(d);
	snprintf(t, sizeof(t), "%llu\n", (unsigned long long)usage);
	put(d, "memory.current", t);
	snprintf(t, sizeof(t), "anon %llu\nfile %llu\ninactive_file %llu\n",
		 (unsigned long long)(usage / 2), (unsigned long long)(usage / 2),
		 (unsigned long long)inactive);
	put(d, "memory.stat", t);
	snprintf(t, sizeof(t), "%llu\n", (unsigned long long)peak);
	put(d, "memory.peak", t);
	snprintf(t, sizeof(t), "usage_usec %llu\nuser_usec %llu\nsystem_usec %llu\n",
		 (unsigned long long)cpu, (unsigned long long)(cpu * 2 / 3),
		 (unsigned long long)(cpu / 3));
	put(d, "cpu.stat", t);
	put(d, "memory.max", "max\n");
	put(d, "memory.events", "low 0\nhigh 0\nmax 0\noom 1\noom_kill 2\n");
	put(d, "cpu.pressure", "some avg10=1.50 avg60=0.00 avg300=0.00 total=2500000\n"
			       "full avg10=0.00 avg60=0.00 avg300=0.00 total=1000000\n");
	put(d, "pids.current", "3\n");
	put(d, "io.stat", "8:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n");
}

static struct sl_stats_mounts mounts;
static char runc_root[300];

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/sl-stats-test.XXXXXX");
	assert_non_null(mkdtemp(root));
	memset(&mounts, 0, sizeof(mounts));
	snprintf(mounts.v2, sizeof(mounts.v2), "%s/v2", root);
	mounts.use_v2 = 1;
	mkdirs(mounts.v2);
	snprintf(runc_root, sizeof(runc_root), "%s/runc", root);
	mkdirs(runc_root);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static struct sl_stats_snap *build(const struct sl_stats_snap *prev, int64_t now)
{
	struct sl_stats_build_opts o = {
		.mounts = &mounts,
		.runc_root = runc_root,
		.gone_grace_ns = 10 * 1000000000ll,
		.now_ns = now,
	};
	struct sl_stats_snap *s = sl_stats_build(&o, prev);
	assert_non_null(s);
	return s;
}

static json_t *answer(const struct sl_stats_snap *s, const char *id, unsigned want_status)
{
	struct sl_stats_reply r;
	assert_int_equal(sl_stats_answer(s, id, &r), 0);
	if (r.status != want_status)
		fprintf(stderr, "id %s: status %u body %s\n", id, r.status, r.body);
	assert_int_equal(r.status, want_status);
	json_t *j = json_loadb(r.body, r.len, 0, NULL);
	assert_non_null(j);
	free(r.body);
	return j;
}

static long long num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_integer(v)) {
		fprintf(stderr, "%s is not an integer\n", k);
		fail();
	}
	return json_integer_value(v);
}

static const char *reason(json_t *j)
{
	return json_string_value(json_object_get(json_object_get(j, "error"), "reason"));
}

static const char *code(json_t *j)
{
	return json_string_value(json_object_get(json_object_get(j, "error"), "code"));
}

#define PODDIR "/kubepods/burstable/pod" POD

/* A pod of two readable containers and one that cannot be read. */
static void test_pod_sum(void **state)
{
	(void)state;
	v2ctr(PODDIR "/" CA, 100000, 30000, 150000, 5000);
	v2ctr(PODDIR "/" CB, 200000, 50000, 250000, 7000);
	char d[1024];
	snprintf(d, sizeof(d), "%s/v2" PODDIR "/" CC, root);
	mkdirs(d); /* no files: unreadable */
	struct sl_stats_snap *s = build(NULL, 0);
	assert_int_equal(s->nctr, 3);

	json_t *j = answer(s, POD, 200);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "pod");
	assert_string_equal(json_string_value(json_object_get(j, "source")), "cgroup");
	assert_non_null(json_string_value(json_object_get(j, "observed_at")));
	assert_int_equal(num(j, "containers_total"), 3);
	assert_int_equal(num(j, "containers_read"), 2);
	assert_int_equal(num(j, "memory_current_bytes"), 300000);
	assert_int_equal(num(j, "memory_working_set_bytes"), 300000 - 80000);
	assert_int_equal(num(j, "memory_peak_bytes"), 400000);
	assert_true(json_is_true(json_object_get(j, "memory_peak_is_upper_bound")));
	assert_int_equal(num(j, "cpu_usage_usec"), 12000);
	assert_int_equal(num(j, "cpu_user_usec"), 5000 * 2 / 3 + 7000 * 2 / 3);
	assert_int_equal(num(j, "cpu_system_usec"), 5000 / 3 + 7000 / 3);
	assert_int_equal(num(j, "memory_oom_kill_events"), 4);
	assert_int_equal(num(j, "pids_current"), 6);
	assert_int_equal(num(j, "io_write_bytes"), 16384);
	json_t *ep = json_object_get(j, "epoch");
	assert_int_equal(strlen(json_string_value(json_object_get(ep, "id"))), 16);
	assert_non_null(json_string_value(json_object_get(ep, "start")));
	assert_int_equal(json_array_size(json_object_get(j, "containers")), 3);
	/* the note on the summed peak */
	const char *notes = json_dumps(json_object_get(j, "notes"), 0);
	assert_non_null(strstr(notes, "upper bound"));
	free((void *)notes);
	json_decref(j);

	/* one container: exact figures, no upper-bound flag, PSI */
	j = answer(s, CA, 200);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "container");
	assert_int_equal(num(j, "memory_peak_bytes"), 150000);
	assert_true(json_is_false(json_object_get(j, "memory_peak_is_upper_bound")));
	json_t *c0 = json_array_get(json_object_get(j, "containers"), 0);
	json_t *some = json_object_get(json_object_get(json_object_get(c0, "pressure"), "cpu"), "some");
	assert_int_equal(num(some, "total_usec"), 2500000);
	assert_string_equal(json_string_value(json_object_get(c0, "memory_limit_bytes")), "max");
	json_decref(j);

	/* the unreadable container alone: exists, no numbers */
	j = answer(s, CC, 503);
	assert_string_equal(code(j), "FAILED_PRECONDITION");
	assert_string_equal(reason(j), "unreadable");
	json_decref(j);

	/* a unique prefix (the CLI's 12-hex short id): that workload, under
	 * its full id */
	j = answer(s, "aaaaaaaaaaaa", 200);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "container");
	assert_int_equal(num(j, "memory_peak_bytes"), 150000);
	json_decref(j);
	j = answer(s, "0a1b2c3d", 200); /* the pod's uid */
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "pod");
	json_decref(j);
	j = answer(s, "cccc", 503); /* the shortest prefix taken */
	assert_string_equal(reason(j), "unreadable");
	json_decref(j);
	j = answer(s, "ccc", 404); /* shorter: not a prefix lookup */
	json_decref(j);
	j = answer(s, "aaaab", 404); /* no workload starts with it */
	json_decref(j);
	sl_stats_snap_free(s);

	/* a prefix of two workloads: 400 ambiguous_id naming both */
	v2ctr(PODDIR "/aaaaaaaaaaaa1111111111111111111111111111111111111111111111111111", 1, 1, 1, 1);
	s = build(NULL, 0);
	j = answer(s, "aaaaaaaaaaaa", 400);
	assert_string_equal(reason(j), "ambiguous_id");
	json_decref(j);
	j = answer(s, "aaaaaaaaaaaaa", 200); /* one more character: unique */
	json_decref(j);
	sl_stats_snap_free(s);
}

static void test_status_codes(void **state)
{
	(void)state;
	char d[1024];
	snprintf(d, sizeof(d), "%s/v2/kubepods/besteffort/pod" POD2, root);
	mkdirs(d); /* a pod cgroup without containers yet */
	snprintf(d, sizeof(d), "%s/runc-pending-1", runc_root);
	mkdirs(d);
	put(d, "state.json", "{}");
	v2ctr(PODDIR "/" CA, 1000, 0, 1000, 10);
	struct sl_stats_snap *s = build(NULL, 0);
	json_t *j;

	const char *bad[] = {"", "../etc", "a b", "-x", ".x", "x/y", "é",
			     "0123456789012345678901234567890123456789012345678901234567890123456789012345678901"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		j = answer(s, bad[i], 400);
		assert_string_equal(code(j), "INVALID_ARGUMENT");
		json_decref(j);
	}
	j = answer(s, "no-such-thing", 404);
	assert_string_equal(code(j), "NOT_FOUND");
	json_decref(j);
	j = answer(s, POD2, 409);
	assert_string_equal(code(j), "FAILED_PRECONDITION");
	assert_string_equal(reason(j), "no_cgroup");
	json_decref(j);
	j = answer(s, "runc-pending-1", 409);
	assert_string_equal(reason(j), "no_cgroup");
	json_decref(j);
	j = answer(NULL, CA, 503);
	assert_string_equal(reason(j), "collector_not_ready");
	json_decref(j);
	j = answer(NULL, "a b", 400);
	json_decref(j);

	/* removal: tearing down within the grace period, then not found */
	snprintf(d, sizeof(d), "%s/v2" PODDIR, root);
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
	struct sl_stats_snap *s2 = build(s, s->observed_ns + 1000000000ll);
	j = answer(s2, CA, 503);
	assert_string_equal(reason(j), "tearing_down");
	json_decref(j);
	j = answer(s2, POD, 503);
	assert_string_equal(reason(j), "tearing_down");
	json_decref(j);
	struct sl_stats_snap *s3 = build(s2, s->observed_ns + 5000000000ll);
	j = answer(s3, CA, 503); /* still within 10 s */
	json_decref(j);
	struct sl_stats_snap *s4 = build(s3, s->observed_ns + 12000000000ll);
	j = answer(s4, CA, 404);
	json_decref(j);
	j = answer(s4, POD, 404);
	json_decref(j);

	/* the list names every workload and state */
	json_t *l = sl_stats_list_json(s2);
	char *txt = json_dumps(l, 0);
	assert_non_null(strstr(txt, "tearing_down"));
	assert_non_null(strstr(txt, "runc-pending-1"));
	assert_non_null(strstr(txt, POD2));
	free(txt);
	json_decref(l);
	sl_stats_snap_free(s);
	sl_stats_snap_free(s2);
	sl_stats_snap_free(s3);
	sl_stats_snap_free(s4);
}

/* Recreate a container cgroup at the same path with a new inode: a new
 * epoch, and the figures are the new cgroup's. */
static void test_epochs(void **state)
{
	(void)state;
	v2ctr(PODDIR "/" CA, 1000, 0, 1000, 900000);
	struct sl_stats_snap *s1 = build(NULL, 0);
	json_t *j1 = answer(s1, CA, 200);
	const char *e1 = json_string_value(json_object_get(json_object_get(j1, "epoch"), "id"));
	json_t *p1 = answer(s1, POD, 200);
	const char *pe1 = json_string_value(json_object_get(json_object_get(p1, "epoch"), "id"));

	/* unchanged: same epoch, same start */
	struct sl_stats_snap *s2 = build(s1, s1->observed_ns + 1000000000ll);
	json_t *j2 = answer(s2, CA, 200);
	assert_true(json_equal(json_object_get(j1, "epoch"), json_object_get(j2, "epoch")));
	json_decref(j2);

	/* recreate: new directory first (so the inode differs), then swap */
	char d[1024], old[1100], cmd[2400];
	snprintf(d, sizeof(d), "%s/v2" PODDIR "/" CA, root);
	snprintf(old, sizeof(old), "%s.old", d);
	assert_int_equal(rename(d, old), 0);
	v2ctr(PODDIR "/" CA, 2000, 0, 2000, 10);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", old);
	assert_int_equal(system(cmd), 0);
	struct sl_stats_snap *s3 = build(s2, s1->observed_ns + 2000000000ll);
	json_t *j3 = answer(s3, CA, 200);
	const char *e3 = json_string_value(json_object_get(json_object_get(j3, "epoch"), "id"));
	assert_string_not_equal(e1, e3);
	assert_int_equal(num(j3, "cpu_usage_usec"), 10); /* restarted with the epoch */
	json_t *p3 = answer(s3, POD, 200);
	assert_string_not_equal(pe1, json_string_value(json_object_get(json_object_get(p3, "epoch"), "id")));

	/* a pod gaining a container: new pod epoch starting at that pass */
	v2ctr(PODDIR "/" CB, 1000, 0, 1000, 10);
	int64_t t4 = s1->observed_ns + 3000000000ll;
	struct sl_stats_snap *s4 = build(s3, t4);
	json_t *p4 = answer(s4, POD, 200);
	assert_string_not_equal(json_string_value(json_object_get(json_object_get(p3, "epoch"), "id")),
				json_string_value(json_object_get(json_object_get(p4, "epoch"), "id")));
	const struct sl_stats_wl *w = sl_stats_snap_find(s4, POD);
	assert_non_null(w);
	assert_int_equal(w->kind, SL_WL_POD);
	assert_true(w->epoch_start_ns == t4);
	json_decref(j1);
	json_decref(p1);
	json_decref(j3);
	json_decref(p3);
	json_decref(p4);
	sl_stats_snap_free(s1);
	sl_stats_snap_free(s2);
	sl_stats_snap_free(s3);
	sl_stats_snap_free(s4);
}

/* Containers nested under a sandbox container cgroup: the sandbox sums
 * them; the pod counts the sandbox once (no double counting). */
static void test_sandbox(void **state)
{
	(void)state;
	v2ctr(PODDIR "/kata_" SB, 5000, 0, 5000, 100);
	v2ctr(PODDIR "/kata_" SB "/" N1, 1000, 0, 1500, 30);
	v2ctr(PODDIR "/kata_" SB "/" N2, 2000, 0, 2500, 40);
	struct sl_stats_snap *s = build(NULL, 0);
	json_t *j = answer(s, SB, 200);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "sandbox");
	assert_int_equal(num(j, "containers_total"), 2);
	assert_int_equal(num(j, "memory_current_bytes"), 3000);
	assert_int_equal(num(j, "memory_peak_bytes"), 4000);
	json_decref(j);
	j = answer(s, POD, 200);
	assert_int_equal(num(j, "containers_total"), 1);
	assert_int_equal(num(j, "memory_current_bytes"), 5000);
	json_decref(j);
	j = answer(s, N1, 200);
	json_t *c0 = json_array_get(json_object_get(j, "containers"), 0);
	assert_string_equal(json_string_value(json_object_get(c0, "sandbox_id")), SB);
	json_decref(j);
	sl_stats_snap_free(s);

	/* a kata sandbox with nothing nested: a sandbox of one */
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/v2" PODDIR "/kata_" SB "/'*/", root);
	assert_int_equal(system(cmd), 0);
	s = build(NULL, 0);
	j = answer(s, SB, 200);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "sandbox");
	assert_int_equal(num(j, "containers_total"), 1);
	assert_int_equal(num(j, "memory_current_bytes"), 5000);
	json_decref(j);
	sl_stats_snap_free(s);
}

static void promtool_ok(const struct sl_stats_prom *pr);

/* A kata sandbox with its overhead cgroup (kata-containers
 * docs/design/host-cgroups.md, sandbox_cgroup_only off: /kata_overhead/<id>
 * outside the pod): the overhead is a member of the sandbox (its host
 * cost), never a container workload or a container_* series; re-creating
 * it starts a new sandbox epoch (STATS-4, source cgroup). */
static void test_sandbox_overhead(void **state)
{
	(void)state;
	v2ctr(PODDIR "/kata_" SB, 5000, 0, 5000, 100);
	v2ctr("/kata_overhead/" SB, 700, 0, 900, 11);
	struct sl_stats_snap *s = build(NULL, 0);
	json_t *j = answer(s, SB, 200);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "sandbox");
	assert_string_equal(json_string_value(json_object_get(j, "source")), "cgroup");
	assert_int_equal(num(j, "containers_total"), 2);
	assert_int_equal(num(j, "memory_current_bytes"), 5700);
	assert_int_equal(num(j, "cpu_usage_usec"), 111);
	json_t *cs = json_object_get(j, "containers"), *x;
	size_t i, nover = 0;
	json_array_foreach(cs, i, x)
		if (!strcmp(json_string_value(json_object_get(x, "role")), "overhead")) {
			nover++;
			assert_string_equal(json_string_value(json_object_get(x, "cgroup_path")), "/kata_overhead/" SB);
		}
	assert_int_equal(nover, 1);
	char ep1[64];
	snprintf(ep1, sizeof(ep1), "%s", json_string_value(json_object_get(json_object_get(j, "epoch"), "id")));
	json_decref(j);
	/* not a container: no container workload of that cgroup, no container series */
	for (size_t k = 0; k < s->nwl; k++)
		if (s->wl[k].kind == SL_WL_CONTAINER)
			for (uint32_t m = 0; m < s->wl[k].n; m++)
				assert_false(s->ctr[s->members[s->wl[k].first + m]].overhead);
	assert_int_equal(sl_stats_render_prom(s, 0), 0);
	assert_null(strstr(s->prom->text, "{id=\"/kata_overhead/"));
	assert_non_null(strstr(s->prom->text, "sandlens_sandbox_overhead_memory_usage_bytes{sandbox_id=\"" SB
					      "\",id=\"/kata_overhead/" SB "\"} 700"));
	promtool_ok(s->prom);

	/* the overhead cgroup re-created (new inode: the old one is kept
	 * aside until the new one exists): a new sandbox epoch */
	char cmd[1200], d[600], old[600];
	snprintf(d, sizeof(d), "%s/v2/kata_overhead/" SB, root);
	snprintf(old, sizeof(old), "%s/v2/old-overhead", root);
	assert_int_equal(rename(d, old), 0);
	v2ctr("/kata_overhead/" SB, 10, 0, 10, 1);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", old);
	assert_int_equal(system(cmd), 0);
	struct sl_stats_snap *s2 = build(s, 0);
	j = answer(s2, SB, 200);
	assert_string_not_equal(json_string_value(json_object_get(json_object_get(j, "epoch"), "id")), ep1);
	assert_int_equal(num(j, "cpu_usage_usec"), 101);
	json_decref(j);
	sl_stats_snap_free(s2);
	sl_stats_snap_free(s);
}

/* v1 layout: separate controller hierarchies, v1 reader, total_inactive_file. */
static void test_v1(void **state)
{
	(void)state;
	const char *h[] = {"memory", "cpu", "cpuacct", "pids", "unified"};
	char d[1024];
	for (size_t i = 0; i < 5; i++) {
		snprintf(d, sizeof(d), "%s/%s" PODDIR "/" CA, root, h[i]);
		mkdirs(d);
	}
	snprintf(mounts.memory, sizeof(mounts.memory), "%s/memory", root);
	snprintf(mounts.cpu, sizeof(mounts.cpu), "%s/cpu", root);
	snprintf(mounts.cpuacct, sizeof(mounts.cpuacct), "%s/cpuacct", root);
	snprintf(mounts.pids, sizeof(mounts.pids), "%s/pids", root);
	snprintf(mounts.v2, sizeof(mounts.v2), "%s/unified", root);
	mounts.use_v2 = 0;
	snprintf(d, sizeof(d), "%s/memory" PODDIR "/" CA, root);
	put(d, "memory.usage_in_bytes", "1048576\n");
	put(d, "memory.stat", "cache 0\nrss 0\ntotal_cache 400000\ntotal_rss 600000\ntotal_inactive_file 48576\n");
	put(d, "memory.max_usage_in_bytes", "2097152\n");
	snprintf(d, sizeof(d), "%s/cpuacct" PODDIR "/" CA, root);
	put(d, "cpuacct.usage", "2500000000\n");
	put(d, "cpuacct.stat", "user 150\nsystem 50\n");
	snprintf(d, sizeof(d), "%s/unified" PODDIR "/" CA, root);
	put(d, "memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=77\n"
				  "full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n");
	struct sl_stats_snap *s = build(NULL, 0);
	assert_int_equal(s->cg_version, 1);
	json_t *j = answer(s, POD, 200);
	assert_int_equal(num(j, "memory_current_bytes"), 1048576);
	assert_int_equal(num(j, "memory_working_set_bytes"), 1000000);
	assert_int_equal(num(j, "memory_peak_bytes"), 2097152);
	assert_int_equal(num(j, "cpu_usage_usec"), 2500000);
	assert_int_equal(num(j, "cpu_user_usec"), 1500000);
	assert_int_equal(num(j, "memory_rss_bytes"), 600000);
	json_t *c0 = json_array_get(json_object_get(j, "containers"), 0);
	json_t *mp = json_object_get(json_object_get(c0, "pressure"), "memory");
	assert_int_equal(num(json_object_get(mp, "full"), "total_usec"), 7);
	assert_int_equal(num(c0, "cgroup_version"), 1);
	json_decref(j);
	sl_stats_snap_free(s);
	memset(&mounts, 0, sizeof(mounts));
	snprintf(mounts.v2, sizeof(mounts.v2), "%s/v2", root);
	mounts.use_v2 = 1;
}

static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return 1;
	return 0;
}

/* `promtool check metrics` accepts the text, when promtool is installed. */
static void promtool_ok(const struct sl_stats_prom *pr)
{
	if (access("/usr/bin/promtool", X_OK) != 0)
		return;
	char path[400], cmd[600];
	snprintf(path, sizeof(path), "%s/metrics.txt", root);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fwrite(pr->text, 1, pr->len, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s'", path);
	assert_int_equal(system(cmd), 0);
}

static void test_prom(void **state)
{
	(void)state;
	v2ctr(PODDIR "/" CA, 100000, 30000, 150000, 1500000);
	v2ctr(PODDIR "/" CB, 200000, 50000, 250000, 7);
	/* limits (container_spec_*): A has a quota, weight, memory.min and a
	 * swap limit; B has "max" everywhere and no memory.min */
	char sd[1024];
	snprintf(sd, sizeof(sd), "%s/v2%s/%s", root, PODDIR, CA);
	put(sd, "cpu.max", "30000 100000\n");
	put(sd, "cpu.weight", "39\n");
	put(sd, "memory.min", "8388608\n");
	put(sd, "memory.swap.max", "16777216\n");
	snprintf(sd, sizeof(sd), "%s/v2%s/%s", root, PODDIR, CB);
	put(sd, "cpu.max", "max 100000\n");
	put(sd, "memory.swap.max", "max\n");
	struct sl_stats_snap *s = build(NULL, 0);
	assert_int_equal(sl_stats_render_prom(s, 1), 0);
	char *t = strndup(s->prom->text, s->prom->len);
	/* compressed once per pass: the gzip part stands for exactly this text */
	assert_non_null(s->prom->gz.z);
	assert_int_equal(s->prom->gz.len, s->prom->len);
	assert_int_equal(s->prom->gz.crc, (uint32_t)crc32(crc32(0, Z_NULL, 0), (const Bytef *)t,
							  (uInt)s->prom->len));
	/* cAdvisor's labels: id = the cgroup path, name = the container id
	 * (no Kubernetes names in this fixture: none written) */
	const char *lab = "{id=\"" PODDIR "/" CA "\",name=\"" CA "\"}";
	char line[600];
	snprintf(line, sizeof(line), "container_cpu_usage_seconds_total%s 1.500000", lab);
	assert_true(has_line(t, line));
	snprintf(line, sizeof(line), "container_memory_working_set_bytes%s 70000", lab);
	assert_true(has_line(t, line));
	snprintf(line, sizeof(line), "container_memory_max_usage_bytes%s 150000", lab);
	assert_true(has_line(t, line));
	snprintf(line, sizeof(line), "container_oom_events_total%s 2", lab);
	assert_true(has_line(t, line));
	snprintf(line, sizeof(line), "container_spec_cpu_quota%s 30000", lab);
	assert_true(has_line(t, line));
	snprintf(line, sizeof(line), "container_spec_cpu_period%s 100000", lab);
	assert_true(has_line(t, line));
	snprintf(line, sizeof(line), "container_spec_cpu_shares%s 998", lab);
	assert_true(has_line(t, line));
	snprintf(line, sizeof(line), "container_spec_memory_reservation_limit_bytes%s 8388608", lab);
	assert_true(has_line(t, line));
	snprintf(line, sizeof(line), "container_spec_memory_swap_limit_bytes%s 16777216", lab);
	assert_true(has_line(t, line));
	snprintf(line, sizeof(line), "container_spec_memory_limit_bytes%s 0", lab);
	assert_true(has_line(t, line));
	{
		const char *lb = "{id=\"" PODDIR "/" CB "\",name=\"" CB "\"}";
		/* no quota: no sample (cAdvisor); period known; unlimited swap 0;
		 * no cpu.weight / memory.min: unknown, no sample (never 0) */
		snprintf(line, sizeof(line), "container_spec_cpu_quota%s", lb);
		assert_null(strstr(t, line));
		snprintf(line, sizeof(line), "container_spec_cpu_period%s 100000", lb);
		assert_true(has_line(t, line));
		snprintf(line, sizeof(line), "container_spec_memory_swap_limit_bytes%s 0", lb);
		assert_true(has_line(t, line));
		snprintf(line, sizeof(line), "container_spec_cpu_shares%s", lb);
		assert_null(strstr(t, line));
		snprintf(line, sizeof(line), "container_spec_memory_reservation_limit_bytes%s", lb);
		assert_null(strstr(t, line));
	}
	assert_true(has_line(t, "sandlens_workload_memory_peak_upper_bound_bytes{kind=\"pod\",workload=\"" POD "\"} 400000"));
	assert_true(has_line(t, "sandlens_workload_containers{kind=\"pod\",workload=\"" POD "\",state=\"read\"} 2"));
	assert_true(has_line(t, "# TYPE container_cpu_usage_seconds_total counter"));
	assert_non_null(strstr(t, "sandlens_container_info{id=\"" PODDIR "/" CA "\",container_id=\"" CA "\",pod_uid=\"" POD "\",runtime=\"\""));
	/* machine figures, the root series (id="/"), last seen */
	assert_non_null(strstr(t, "\nmachine_cpu_cores "));
	assert_non_null(strstr(t, "\nmachine_memory_bytes "));
	assert_non_null(strstr(t, "\ncontainer_last_seen{id=\"" PODDIR "/" CA "\",name=\"" CA "\"} "));
	/* swap is unknown here (no memory.swap.current): no sample */
	assert_null(strstr(t, "container_memory_swap{"));
	/* each family's TYPE appears once */
	const char *p = strstr(t, "# TYPE container_memory_rss gauge");
	assert_non_null(p);
	assert_null(strstr(p + 1, "# TYPE container_memory_rss gauge"));
	free(t);

	promtool_ok(s->prom);
	sl_stats_snap_free(s);
}

/* Label values are escaped; a cgroup path is outside input (a container can
 * name its own cgroups, with any byte but '/' and NUL): invalid UTF-8 is
 * written as U+FFFD, or Prometheus would refuse the whole scrape. */
static void test_prom_escape(void **state)
{
	(void)state;
	struct sl_stats_snap s;
	struct sl_stats_ctr c[2];
	memset(&s, 0, sizeof(s));
	memset(c, 0, sizeof(c));
	snprintf(c[0].id, sizeof(c[0].id), "x");
	snprintf(c[0].path, sizeof(c[0].path), "/we\"ird\\path");
	snprintf(c[0].names.ns, sizeof(c[0].names.ns), "prod");
	snprintf(c[0].names.pod, sizeof(c[0].names.pod), "web-0");
	snprintf(c[0].names.container, sizeof(c[0].names.container), "app");
	snprintf(c[0].names.image, sizeof(c[0].names.image), "nginx:1.25");
	snprintf(c[1].id, sizeof(c[1].id), "y\"");
	snprintf(c[1].path, sizeof(c[1].path), "/evil\xff\xfe\n} 1\nfake 2/\xe2\x82");
	for (int i = 0; i < 2; i++) {
		c[i].st.pids.known = SL_PIDS_CURRENT;
		c[i].st.pids.current = 4;
	}
	s.ctr = c;
	s.nctr = 2;
	assert_int_equal(sl_stats_render_prom(&s, 0), 0);
	assert_non_null(strstr(s.prom->text, "container_threads{id=\"/we\\\"ird\\\\path\",name=\"x\",image=\"nginx:1.25\","
					     "namespace=\"prod\",pod=\"web-0\",container=\"app\"} 4\n"));
	assert_non_null(strstr(s.prom->text, "container_id=\"x\",pod_uid=\"\",runtime=\"\",namespace=\"prod\",pod=\"web-0\","
					     "container=\"app\",image=\"nginx:1.25\","));
	assert_non_null(strstr(s.prom->text, "container_threads{id=\"/evil\xef\xbf\xbd\xef\xbf\xbd\\n} 1\\nfake 2/"
					     "\xef\xbf\xbd\xef\xbf\xbd\",name=\"y\\\"\"} 4\n"));
	assert_non_null(strstr(s.prom->text, ",container_id=\"y\\\"\","));
	promtool_ok(s.prom);
	sl_stats_prom_put(s.prom);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pod_sum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_codes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_epochs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sandbox, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sandbox_overhead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prom, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prom_escape, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
