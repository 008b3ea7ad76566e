/* Continuous profiling's pure parts (issue 12 item 1): the pprof reader
 * (write -> read -> equal, every kind of frame), sl_profile_merge (counts
 * add, equal frames and samples are one), the per-function delta, the
 * pprof diff, and the window store (selection, container prefixes,
 * retention by age and by bytes) on a temporary SQLite file. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "profile_fixture.h"
#include "profile/profile_merge.h"
#include "store/prof_store.h"
#include "agent/config.h"
#include "cprof/cprof.h"

static char tdir[64];

/* The fixture plus one frame of every kind the symbolizer makes. */
static struct sl_profile *all_kinds(int kind)
{
	struct sl_profile *p = fx_profile(kind);
	struct sl_frame fr[] = {
		{.name = "app2+0x1234", .module = "/usr/bin/app2", .module_offset = 0x1234, .address = 0x1234,
		 .flags = SL_FRAME_NOSYM},
		{.name = "[anon]", .module = "[anon]", .module_offset = 0x10, .address = 0x10, .flags = SL_FRAME_NOSYM},
		{.name = "__vdso_clock_gettime", .function = "__vdso_clock_gettime", .module = "[vdso]",
		 .module_offset = 0x900, .address = 0x900},
		{.name = "jitted", .function = "jitted", .module = "[jit]", .address = 0x7f0000001000ull,
		 .flags = SL_FRAME_JIT},
		{.name = "[unknown]", .address = 0xdead, .flags = SL_FRAME_UNKNOWN},
		{.name = "[kernel]", .module = "[kernel.kallsyms]", .module_offset = 0xffffffff81002000ull,
		 .address = 0xffffffff81002000ull, .flags = SL_FRAME_KERNEL | SL_FRAME_UNKNOWN},
		{.name = "ext4_read", .function = "ext4_read", .module = "[ext4]",
		 .module_offset = 0xffffffffc0001000ull, .address = 0xffffffffc0001000ull, .flags = SL_FRAME_KERNEL},
		{.name = "[lost user stack]", .flags = SL_FRAME_PSEUDO | SL_FRAME_UNKNOWN},
		{.name = "[lost kernel stack]", .flags = SL_FRAME_PSEUDO | SL_FRAME_UNKNOWN | SL_FRAME_KERNEL},
	};
	uint32_t ix[sizeof(fr) / sizeof(fr[0])];
	for (size_t i = 0; i < sizeof(fr) / sizeof(fr[0]); i++)
		ix[i] = (uint32_t)sl_prof_frame(p, &fr[i]);
	fx_add(p, 300, "mixed", "beef", kind == SL_PROF_OFF_CPU ? SL_OFFCPU_RUNQUEUE : 0, ix, 9, 7);
	struct sl_sample s = {.pid = 301, .count = 2, .value_ns = 20000000,
			      .off_cpu_state = kind == SL_PROF_OFF_CPU ? SL_OFFCPU_BLOCKED : 0};
	snprintf(s.comm, sizeof(s.comm), "notid");
	sl_prof_add_sample(p, &s, ix, 2); /* tid 0: no tid label */
	return p;
}

static void *to_pprof(const struct sl_profile *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	assert_non_null(f);
	assert_int_equal(sl_profile_write_pprof(p, 1, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static int streq(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

/* The sample of q equal to s of p (frames by content), or NULL. */
static const struct sl_sample *find_sample(const struct sl_profile *p, const struct sl_sample *s,
					   const struct sl_profile *q)
{
	for (size_t i = 0; i < q->nsamples; i++) {
		const struct sl_sample *t = &q->samples[i];
		if (t->pid != s->pid || t->tid != s->tid || strcmp(t->comm, s->comm) ||
		    strcmp(t->container_id, s->container_id) || t->off_cpu_state != s->off_cpu_state ||
		    t->nframes != s->nframes)
			continue;
		int same = 1;
		for (uint32_t k = 0; k < s->nframes && same; k++) {
			const struct sl_frame *a = &p->frames[s->frames[k]], *b = &q->frames[t->frames[k]];
			same = streq(a->name, b->name) && streq(a->function, b->function) && streq(a->module, b->module) &&
			       streq(a->build_id, b->build_id) && a->flags == b->flags &&
			       a->module_offset == b->module_offset &&
			       (!(a->flags & (SL_FRAME_UNKNOWN | SL_FRAME_JIT)) || (a->flags & SL_FRAME_KERNEL) ||
				a->address == b->address);
		}
		if (same)
			return t;
	}
	return NULL;
}

static void check_equal(const struct sl_profile *p, const struct sl_profile *q)
{
	assert_int_equal(p->kind, q->kind);
	assert_int_equal(p->start_ns, q->start_ns);
	assert_int_equal(p->duration_ns, q->duration_ns);
	assert_int_equal(p->period_ns, q->period_ns);
	assert_int_equal(p->nsamples, q->nsamples);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sl_sample *t = find_sample(p, &p->samples[i], q);
		if (!t)
			fail_msg("sample %zu (pid %u, comm %s) not read back equal", i, p->samples[i].pid,
				 p->samples[i].comm);
		assert_int_equal(t->count, p->samples[i].count);
		assert_int_equal(t->value_ns, p->samples[i].value_ns);
	}
}

static void test_roundtrip(void **state)
{
	(void)state;
	for (int kind = SL_PROF_ON_CPU; kind <= SL_PROF_OFF_CPU; kind++) {
		struct sl_profile *p = all_kinds(kind);
		size_t len;
		void *b = to_pprof(p, &len);
		int err = 1;
		struct sl_profile *q = sl_profile_read_pprof(b, len, &err);
		assert_non_null(q);
		assert_int_equal(err, 0);
		check_equal(p, q);
		check_equal(q, p);
		/* and again: read -> write -> read is stable */
		size_t len2;
		void *b2 = to_pprof(q, &len2);
		struct sl_profile *r = sl_profile_read_pprof(b2, len2, &err);
		assert_non_null(r);
		check_equal(q, r);
		sl_profile_free(r);
		free(b2);
		free(b);
		sl_profile_free(q);
		sl_profile_free(p);
	}
}

static void test_read_garbage(void **state)
{
	(void)state;
	int err = 0;
	unsigned char junk[64];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 37 + 11);
	assert_null(sl_profile_read_pprof(junk, sizeof(junk), &err));
	assert_int_equal(err, -EINVAL);
	struct sl_profile *p = fx_profile(SL_PROF_ON_CPU);
	size_t len;
	unsigned char *b = to_pprof(p, &len);
	for (size_t cut = 1; cut < len; cut += len / 7 + 1) { /* truncated gzip */
		struct sl_profile *q = sl_profile_read_pprof(b, cut, &err);
		assert_null(q);
		assert_int_equal(err, -EINVAL);
	}
	b[len / 2] ^= 0xff; /* corrupt deflate data: rejected, never a crash */
	struct sl_profile *q = sl_profile_read_pprof(b, len, &err);
	sl_profile_free(q);
	free(b);
	sl_profile_free(p);
}

static void test_merge(void **state)
{
	(void)state;
	struct sl_profile *a = fx_profile(SL_PROF_ON_CPU), *b = fx_profile(SL_PROF_ON_CPU);
	b->start_ns = a->start_ns + 5000000000ull; /* the next window */
	const struct sl_profile *v[] = {a, NULL, b};
	int err = 1;
	struct sl_profile *m = sl_profile_merge(v, 3, &err);
	assert_non_null(m);
	assert_int_equal(err, 0);
	assert_int_equal(m->nsamples, a->nsamples); /* same stacks: one sample each */
	assert_int_equal(m->nframes, a->nframes);   /* same frames: deduplicated */
	assert_int_equal(sl_profile_total_count(m), 2 * sl_profile_total_count(a));
	assert_int_equal(sl_profile_total_ns(m), 2 * sl_profile_total_ns(a));
	assert_int_equal(m->start_ns, a->start_ns);
	assert_int_equal(m->duration_ns, 10000000000ull);
	for (size_t i = 0; i < a->nsamples; i++) {
		const struct sl_sample *t = find_sample(a, &a->samples[i], m);
		assert_non_null(t);
		assert_int_equal(t->count, 2 * a->samples[i].count);
	}
	/* a profile with other frames: the union, old counts kept */
	struct sl_profile *c = all_kinds(SL_PROF_ON_CPU);
	const struct sl_profile *w[] = {m, c};
	struct sl_profile *m2 = sl_profile_merge(w, 2, &err);
	assert_non_null(m2);
	assert_int_equal(m2->nframes, c->nframes);
	assert_int_equal(sl_profile_total_count(m2), sl_profile_total_count(m) + sl_profile_total_count(c));
	/* kinds do not mix */
	struct sl_profile *off = fx_profile(SL_PROF_OFF_CPU);
	const struct sl_profile *x[] = {a, off};
	assert_null(sl_profile_merge(x, 2, &err));
	assert_int_equal(err, -EINVAL);
	assert_null(sl_profile_merge(x, 0, &err));
	assert_int_equal(err, -EINVAL);
	sl_profile_free(off);
	sl_profile_free(m2);
	sl_profile_free(c);
	sl_profile_free(m);
	sl_profile_free(a);
	sl_profile_free(b);
}

/* A profile of n samples of main;fn in container cid. */
static struct sl_profile *one_fn(const char *fn, uint64_t n)
{
	struct sl_profile *p = sl_prof_new(SL_PROF_ON_CPU, 1700000000000000000ull, 1000000000ull, 10000000ull);
	uint32_t fr[] = {fx_frame(p, "main", "/bin/app", 0x1000, 0), fx_frame(p, fn, "/bin/app", 0x2000 + strlen(fn), 0)};
	fx_add(p, 1, "app", "c1", 0, fr, 2, n);
	return p;
}

static void test_delta(void **state)
{
	(void)state;
	struct sl_profile *base = one_fn("phase_a", 100), *cur = one_fn("phase_b", 40);
	json_t *j = sl_profile_delta_json(base, cur, 10);
	assert_non_null(j);
	json_t *f;
	size_t i;
	int seen = 0;
	json_array_foreach(json_object_get(j, "functions"), i, f) {
		const char *name = json_string_value(json_object_get(f, "function"));
		double d = json_number_value(json_object_get(f, "delta_self_pct"));
		if (!strcmp(name, "phase_a")) {
			assert_true(d < -99.9);
			assert_int_equal(json_integer_value(json_object_get(f, "delta_self")), -100);
			seen |= 1;
		} else if (!strcmp(name, "phase_b")) {
			assert_true(d > 99.9);
			assert_int_equal(json_integer_value(json_object_get(f, "new_self")), 40);
			seen |= 2;
		} else if (!strcmp(name, "main")) {
			assert_int_equal(json_integer_value(json_object_get(f, "delta_total")), -60);
			seen |= 4;
		}
	}
	assert_int_equal(seen, 7);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "base"), "total")), 100);
	json_decref(j);
	/* the pprof diff: base negated */
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	assert_int_equal(sl_profile_write_pprof_diff(base, cur, 0, out), 0);
	fclose(out);
	int err;
	struct sl_profile *d = sl_profile_read_pprof(buf, len, &err);
	assert_non_null(d);
	int64_t sum = 0;
	for (size_t k = 0; k < d->nsamples; k++)
		sum += (int64_t)d->samples[k].count;
	assert_int_equal(sum, 40 - 100);
	sl_profile_free(d);
	free(buf);
	sl_profile_free(base);
	sl_profile_free(cur);
}

static void put(struct sl_pstore *s, int64_t start, const char *cid, const char *pod, size_t len)
{
	struct sl_pstore_window w = {.start_ns = start, .end_ns = start + 10, .samples = 3};
	snprintf(w.kind, sizeof(w.kind), "on_cpu");
	snprintf(w.container_id, sizeof(w.container_id), "%s", cid);
	snprintf(w.pod_uid, sizeof(w.pod_uid), "%s", pod);
	snprintf(w.runtime, sizeof(w.runtime), "%s", cid[0] ? "runc" : "host");
	w.body = malloc(len);
	for (size_t i = 0; i < len; i++) /* incompressible enough for SQLite pages */
		((unsigned char *)w.body)[i] = (unsigned char)(rand() & 0xff);
	w.len = len;
	assert_int_equal(sl_pstore_put(s, &w, 1), 0);
	free(w.body);
}

static size_t count(struct sl_pstore *s, int scope, const char *id, int64_t since, int64_t until)
{
	struct sl_pstore_sel sel = {.scope = scope, .id = id, .kind = "on_cpu", .since_ns = since, .until_ns = until};
	struct sl_pstore_window *w;
	size_t n;
	assert_int_equal(sl_pstore_query(s, &sel, 1, 0, &w, &n), 0);
	for (size_t i = 1; i < n; i++)
		assert_true(w[i - 1].start_ns <= w[i].start_ns);
	sl_pstore_windows_free(w, n);
	return n;
}

static void test_store(void **state)
{
	(void)state;
	char path[128], err[256], out[80];
	snprintf(path, sizeof(path), "%s/p.db", tdir);
	struct sl_pstore *s = sl_pstore_open(path, err, sizeof(err));
	assert_non_null(s);
	put(s, 100, "aaaa1111", "pod-1", 100);
	put(s, 110, "aaaa1111", "pod-1", 100);
	put(s, 110, "aaaa2222", "pod-1", 100);
	put(s, 120, "", "", 100);
	assert_int_equal(count(s, SL_PSTORE_CONTAINER, "aaaa1111", 0, 0), 2);
	assert_int_equal(count(s, SL_PSTORE_CONTAINER, "aaaa1111", 105, 0), 2);  /* [100,110) overlaps */
	assert_int_equal(count(s, SL_PSTORE_CONTAINER, "aaaa1111", 110, 0), 1);  /* ends at 110: out */
	assert_int_equal(count(s, SL_PSTORE_CONTAINER, "aaaa1111", 0, 110), 1);  /* starts at 110: out */
	assert_int_equal(count(s, SL_PSTORE_POD, "pod-1", 0, 0), 3);
	assert_int_equal(count(s, SL_PSTORE_HOST, NULL, 0, 0), 4);
	assert_int_equal(sl_pstore_resolve_container(s, "aaaa1", out, sizeof(out)), 0);
	assert_string_equal(out, "aaaa1111");
	assert_int_equal(sl_pstore_resolve_container(s, "aaaa", out, sizeof(out)), -EINVAL);
	assert_int_equal(sl_pstore_resolve_container(s, "bbbb", out, sizeof(out)), -ENOENT);
	assert_int_equal(sl_pstore_resolve_container(s, "aaa", out, sizeof(out)), -ENOENT); /* < 4: exact */
	/* age: windows that ended before now - max_age go */
	uint64_t da, db;
	assert_int_equal(sl_pstore_retain(s, 125, 10, 0, &da, &db), 0); /* ends before 115: the two at 100 */
	assert_int_equal(da, 1);
	assert_int_equal(db, 0);
	assert_int_equal(count(s, SL_PSTORE_HOST, NULL, 0, 0), 3);
	/* bytes: 64 windows of 48 KiB = 3 MiB, cap 1 MiB */
	for (int i = 0; i < 64; i++)
		put(s, 1000 + i, "cccc3333", "", 48 << 10);
	uint64_t used, file, nw;
	assert_int_equal(sl_pstore_size(s, &used, &file, &nw), 0);
	assert_true(used > (3u << 20));
	assert_int_equal(sl_pstore_retain(s, 2000, 0, 1u << 20, &da, &db), 0);
	assert_int_equal(da, 0);
	assert_true(db > 40);
	assert_int_equal(sl_pstore_size(s, &used, &file, &nw), 0);
	assert_true(used <= (1u << 20));
	/* the newest windows stay, the oldest went first */
	struct sl_pstore_sel sel = {.scope = SL_PSTORE_HOST};
	struct sl_pstore_window *w;
	size_t n;
	assert_int_equal(sl_pstore_query(s, &sel, 0, 0, &w, &n), 0);
	assert_true(n > 0 && n < 20);
	assert_int_equal(w[n - 1].start_ns, 1063);
	assert_int_equal(w[n - 1].len, 48 << 10);
	sl_pstore_windows_free(w, n);
	sl_pstore_close(s);
	/* reopened: same windows; a symlink at the path is refused */
	s = sl_pstore_open(path, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(count(s, SL_PSTORE_HOST, NULL, 0, 0), n);
	sl_pstore_close(s);
	char link[160];
	snprintf(link, sizeof(link), "%s/link.db", tdir);
	assert_int_equal(symlink(path, link), 0);
	assert_null(sl_pstore_open(link, err, sizeof(err)));
	unlink(link);
}

/* profiling.continuous.*: defaults, and bad values refused naming the key
 * (the agent exits 2 on them). */
static void test_config(void **state)
{
	(void)state;
	static struct sl_config c;
	char err[256];
	sl_config_defaults(&c);
	assert_int_equal(c.cprof.enabled, 1);
	assert_int_equal(c.cprof.hz, 19);
	assert_int_equal(c.cprof.window_s, 10);
	assert_int_equal(c.cprof.max_age_s, 86400);
	assert_int_equal(c.cprof.max_bytes, 256u << 20);
	const char *ok = "profiling:\n  continuous:\n    hz: 99\n    window: 2s\n    max_bytes: 8MiB\n    max_age: 2h\n";
	assert_int_equal(sl_config_load_buf(&c, "t.yaml", ok, strlen(ok), err, sizeof(err)), 0);
	assert_int_equal(c.cprof.hz, 99);
	assert_int_equal(c.cprof.window_s, 2);
	assert_int_equal(c.cprof.max_age_s, 7200);
	static const struct {
		const char *yaml, *key;
	} bad[] = {
		{"profiling:\n  continuous:\n    hz: 0\n", "profiling.continuous.hz"},
		{"profiling:\n  continuous:\n    hz: 5000\n", "profiling.continuous.hz"},
		{"profiling:\n  continuous:\n    window: 0s\n", "profiling.continuous.window"},
		{"profiling:\n  continuous:\n    max_bytes: 1000\n", "profiling.continuous.max_bytes"},
		{"profiling:\n  continuous:\n    max_bytes: lots\n", "profiling.continuous.max_bytes"},
		{"profiling:\n  continuous:\n    enabled: maybe\n", "profiling.continuous.enabled"},
		{"profiling:\n  continuous:\n    rate: 19\n", "profiling.continuous.rate"},
		{"profiling:\n  continuous:\n    stack_entries: 1\n", "profiling.continuous.stack_entries"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sl_config_defaults(&c);
		err[0] = 0;
		assert_int_equal(sl_config_load_buf(&c, "t.yaml", bad[i].yaml, strlen(bad[i].yaml), err, sizeof(err)), -1);
		if (!strstr(err, bad[i].key))
			fail_msg("'%s': error '%s' does not name %s", bad[i].yaml, err, bad[i].key);
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(tdir, sizeof(tdir), "/tmp/sl-cprof-XXXXXX");
	return mkdtemp(tdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The 404 text of a query without windows names what was asked (break-it
 * item 12a: `pod=x` without since/until said "no stored profile window in
 * that time range"). */
static void test_none_msg(void **state)
{
	(void)state;
	char m[400];
	sl_cprof_none_msg(SL_CPROF_POD, "x", 0, 0, m, sizeof(m));
	assert_null(strstr(m, "that time range"));
	assert_non_null(strstr(m, "pod 'x'"));
	assert_non_null(strstr(m, "at any time (no since/until given)"));
	assert_non_null(strstr(m, "exact uid"));
	sl_cprof_none_msg(SL_CPROF_CONTAINER, "abcd", 1700000000000000000LL, 1700000060000000000LL, m, sizeof(m));
	assert_non_null(strstr(m, "container 'abcd' overlapping [2023-11-14T22:13:20.000000000Z, 2023-11-14T22:14:20.000000000Z)"));
	sl_cprof_none_msg(SL_CPROF_HOST, NULL, 1700000000000000000LL, 0, m, sizeof(m));
	assert_non_null(strstr(m, "the host since 2023-11-14T22:13:20.000000000Z"));
	sl_cprof_none_msg(SL_CPROF_HOST, NULL, 0, 1700000000000000000LL, m, 20);
	assert_int_equal(strlen(m), 19);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip), cmocka_unit_test(test_read_garbage), cmocka_unit_test(test_merge),
		cmocka_unit_test(test_delta),     cmocka_unit_test(test_store),      cmocka_unit_test(test_config), cmocka_unit_test(test_none_msg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
