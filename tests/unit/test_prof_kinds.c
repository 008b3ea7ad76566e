/* Profile kinds (src/profile/prof_kinds.c): the table itself, the pprof
 * sample types of every kind (written, gunzipped, decoded with
 * protobuf-c), the folded/JSON defaults and state frames, the page-fault
 * scaling math, lock type names, and the task types that produce them
 * (names, fault_period parsing). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile/prof_kinds.h"
#include "profile/profile.pb-c.h"
#include "profile_fixture.h"
#include "sandlens/task_abi.h"
#include "task/task.h"

static Perftools__Profiles__Profile *pprof_of(const struct sl_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(sl_profile_write_pprof(p, 0, f), 0);
	fclose(f);
	z_stream z;
	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	size_t n = cap - z.avail_out;
	inflateEnd(&z);
	free(buf);
	Perftools__Profiles__Profile *pr = perftools__profiles__profile__unpack(NULL, n, out);
	free(out);
	assert_non_null(pr);
	return pr;
}

static const char *S(const Perftools__Profiles__Profile *pr, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < pr->n_string_table);
	return pr->string_table[i];
}

static const char *label(const Perftools__Profiles__Profile *pr, const Perftools__Profiles__Sample *s,
			 const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(S(pr, s->label[i]->key), key))
			return S(pr, s->label[i]->str);
	return NULL;
}

/* A profile of kind with two samples: main;work (state st1) and
 * main;work;hot_fn (state st2), with distinct numbers in every field. */
static struct sl_profile *two(int kind, uint64_t period, int st1, int st2)
{
	struct sl_profile *p = sl_prof_new(kind, 1700000000000000000ull, 4000000000ull, period);
	uint32_t m = fx_frame(p, "main", "/bin/app", 0x1000, 0);
	uint32_t w = fx_frame(p, "work", "/bin/app", 0x2000, 0);
	uint32_t h = fx_frame(p, "hot_fn", "/bin/app", 0x3000, 0);
	uint32_t a[] = {m, w}, b[] = {m, w, h};
	struct sl_sample s = {.pid = 7, .tid = 7, .off_cpu_state = st1, .count = 3, .value_ns = 12288,
			      .extra = {2, 8192}};
	strcpy(s.comm, "app");
	assert_int_equal(sl_prof_add_sample(p, &s, a, 2), 0);
	s.off_cpu_state = st2;
	s.count = 5;
	s.value_ns = 40960;
	s.extra[0] = 0;
	s.extra[1] = 0;
	assert_int_equal(sl_prof_add_sample(p, &s, b, 3), 0);
	return p;
}

static void test_table(void **st)
{
	(void)st;
	assert_int_equal(sl_prof_kind_count(), SL_PROF_NKINDS);
	for (int k = 0; k < SL_PROF_NKINDS; k++) {
		const struct sl_prof_kind_info *ki = sl_prof_kind_info(k);
		assert_int_equal(ki->kind, k);
		assert_non_null(ki->name);
		assert_non_null(ki->title);
		assert_non_null(ki->count_text);
		assert_non_null(ki->value_text);
		assert_int_equal(sl_prof_kind_parse(ki->name), k);
		assert_true(ki->ntypes >= 2 && ki->ntypes <= SL_PROF_MAX_TYPES);
		assert_true(ki->default_type >= 0 && (size_t)ki->default_type < ki->ntypes);
		assert_true(ki->period_type >= 0 && (size_t)ki->period_type < ki->ntypes);
		assert_int_equal(ki->types[0].field, SL_PF_COUNT); /* first type is always the count */
		for (size_t i = 0; i < ki->ntypes; i++) {
			const char *u = ki->types[i].unit;
			assert_true(!strcmp(u, "count") || !strcmp(u, "nanoseconds") || !strcmp(u, "bytes"));
			for (size_t j = 0; j < i; j++)
				assert_string_not_equal(ki->types[i].type, ki->types[j].type);
		}
		/* the default value of the text outputs has the default type's unit */
		const char *du = ki->types[ki->default_type].unit;
		if (!strcmp(du, "bytes"))
			assert_int_equal(ki->value_default, SL_VALUE_BYTES);
		else if (!strcmp(du, "nanoseconds"))
			assert_true(ki->value_default == SL_VALUE_US || ki->value_default == SL_VALUE_COUNT);
		if (ki->state_frame)
			assert_non_null(ki->state_name);
		for (uint32_t s = 0; ki->state_name && s < 64; s++) {
			const char *n = sl_prof_state_name(k, s);
			assert_non_null(n);
			const char *f = sl_prof_state_frame(k, s);
			assert_non_null(f);
			/* every name the table can give has its frame form */
			char want[64];
			snprintf(want, sizeof(want), "[%s]", n);
			assert_string_equal(f, want);
		}
	}
	assert_int_equal(sl_prof_kind_parse("nope"), -1);
	assert_int_equal(sl_prof_kind_parse(NULL), -1);
	assert_string_equal(sl_prof_kind_info(99)->name, "on_cpu");
	assert_null(sl_prof_state_name(SL_PROF_ON_CPU, 0));
	/* Go's heap and mutex profile names, which pprof knows */
	const struct sl_prof_kind_info *mv = sl_prof_kind_info(SL_PROF_MEM_VIRTUAL);
	assert_string_equal(mv->types[1].type, "alloc_space");
	assert_string_equal(mv->types[3].type, "inuse_space");
	const struct sl_prof_kind_info *fx = sl_prof_kind_info(SL_PROF_FUTEX);
	assert_string_equal(fx->types[0].type, "contentions");
	assert_string_equal(fx->types[1].type, "delay");
	assert_string_equal(fx->types[1].unit, "nanoseconds");
}

static void test_task_types(void **st)
{
	(void)st;
	for (int t = 0; t < SL_TASK_NTYPES; t++) {
		assert_non_null(sl_task_type_name(t));
		assert_int_equal(sl_task_type_parse(sl_task_type_name(t)), t);
		int k = sl_task_prof_kind(t);
		if (t == SL_TASK_SYSCALL_ERRORS)
			assert_int_equal(k, -1);
		else
			assert_true(k >= 0 && k < SL_PROF_NKINDS);
	}
	assert_int_equal(sl_task_prof_kind(SL_TASK_PROFILE_FUTEX), SL_PROF_FUTEX);
	assert_int_equal(sl_task_prof_kind(SL_TASK_PROFILE_PAGE_FAULTS), SL_PROF_PAGE_FAULTS);
	assert_int_equal(sl_task_prof_kind(-1), -1);

	struct sl_task_limits lim = {.max_duration_ns = 60000000000ull, .default_duration_ns = 10000000000ull,
				     .default_hz = 99, .max_hz = 1000};
	struct sl_task_spec s;
	char err[256];
	json_t *b = json_loads("{\"type\":\"profile_page_faults\",\"target\":{\"pid\":1}}", 0, NULL);
	assert_int_equal(sl_task_spec_parse(b, &lim, &s, err, sizeof(err)), 0);
	assert_int_equal(s.fault_period, SL_TASK_FAULT_PERIOD_DEFAULT);
	json_decref(b);
	b = json_loads("{\"type\":\"profile_page_faults\",\"target\":{\"pid\":1},\"fault_period\":1}", 0, NULL);
	assert_int_equal(sl_task_spec_parse(b, &lim, &s, err, sizeof(err)), 0);
	assert_int_equal(s.fault_period, 1);
	json_decref(b);
	static const char *const bad[] = {
		"{\"type\":\"profile_page_faults\",\"target\":{\"pid\":1},\"fault_period\":0}",
		"{\"type\":\"profile_page_faults\",\"target\":{\"pid\":1},\"fault_period\":1000001}",
		"{\"type\":\"profile_page_faults\",\"target\":{\"pid\":1},\"fault_period\":\"8\"}",
		"{\"type\":\"profile_futex\",\"target\":{\"pid\":1},\"fault_period\":8}",
		"{\"type\":\"profile_lock_kernel\",\"target\":{\"pid\":1},\"hz\":8}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = json_loads(bad[i], 0, NULL);
		assert_non_null(b);
		assert_int_equal(sl_task_spec_parse(b, &lim, &s, err, sizeof(err)), -EINVAL);
		assert_true(strstr(err, "fault_period") || strstr(err, "hz"));
		json_decref(b);
	}
	b = json_loads("{\"type\":\"profile_resident\",\"target\":{\"pid\":1}}", 0, NULL);
	assert_int_equal(sl_task_spec_parse(b, &lim, &s, err, sizeof(err)), 0);
	assert_int_equal(s.type, SL_TASK_PROFILE_RESIDENT);
	assert_int_equal(s.fault_period, 0);
	json_decref(b);
}

static void test_scaling(void **st)
{
	(void)st;
	assert_int_equal(sl_prof_pf_faults(10, 16), 160);
	assert_int_equal(sl_prof_pf_bytes(10, 16, 4096), 655360);
	assert_int_equal(sl_prof_pf_bytes(1, 1, 65536), 65536); /* 64 KiB pages (arm64) */
	assert_int_equal(sl_prof_pf_faults(0, 16), 0);
	assert_int_equal(sl_prof_pf_faults(UINT64_MAX / 2, 16), UINT64_MAX);
	assert_int_equal(sl_prof_pf_bytes(UINT64_MAX / 4096 / 16 + 1, 16, 4096), UINT64_MAX);
	assert_int_equal(sl_prof_pf_bytes(UINT64_MAX / 4096 / 16, 16, 4096) % 4096, 0);
}

static void test_lock_types(void **st)
{
	(void)st;
	assert_string_equal(sl_prof_lock_type(SL_LCB_F_MUTEX), "mutex");
	assert_string_equal(sl_prof_lock_type(SL_LCB_F_MUTEX | SL_LCB_F_SPIN), "mutex-spin");
	assert_string_equal(sl_prof_lock_type(SL_LCB_F_SPIN), "spinlock");
	assert_string_equal(sl_prof_lock_type(SL_LCB_F_WRITE), "rwsem:W");
	assert_string_equal(sl_prof_lock_type(SL_LCB_F_READ), "rwsem:R");
	assert_string_equal(sl_prof_lock_type(SL_LCB_F_SPIN | SL_LCB_F_WRITE), "rwlock:W");
	assert_string_equal(sl_prof_lock_type(SL_LCB_F_PERCPU | SL_LCB_F_READ), "pcpu-sem:R");
	assert_string_equal(sl_prof_lock_type(0), "semaphore");
	assert_string_equal(sl_prof_lock_type(1u << 9), "other");
	assert_string_equal(sl_prof_state_frame(SL_PROF_LOCK_KERNEL, 1u << 9), "[other]");
}

/* pprof of every kind: sample types, default, period, values in table
 * order, the state label. */
static void test_pprof_per_kind(void **st)
{
	(void)st;
	for (int k = 0; k < SL_PROF_NKINDS; k++) {
		const struct sl_prof_kind_info *ki = sl_prof_kind_info(k);
		int st1 = k == SL_PROF_LOCK_KERNEL ? (int)SL_LCB_F_WRITE : k == SL_PROF_FUTEX ? 0 : 1;
		struct sl_profile *p = two(k, k == SL_PROF_PAGE_FAULTS ? 16 : 1, st1, 2);
		Perftools__Profiles__Profile *pr = pprof_of(p);
		assert_int_equal(pr->n_sample_type, ki->ntypes);
		for (size_t i = 0; i < ki->ntypes; i++) {
			assert_string_equal(S(pr, pr->sample_type[i]->type), ki->types[i].type);
			assert_string_equal(S(pr, pr->sample_type[i]->unit), ki->types[i].unit);
		}
		assert_string_equal(S(pr, pr->default_sample_type), ki->types[ki->default_type].type);
		assert_non_null(pr->period_type);
		assert_string_equal(S(pr, pr->period_type->type), ki->types[ki->period_type].type);
		assert_int_equal(pr->period, k == SL_PROF_PAGE_FAULTS ? 16 : 1);
		assert_int_equal(pr->duration_nanos, 4000000000ll);
		assert_int_equal(pr->n_sample, 2);
		for (size_t si = 0; si < 2; si++) {
			const Perftools__Profiles__Sample *s = pr->sample[si];
			assert_int_equal(s->n_value, ki->ntypes);
			for (size_t i = 0; i < ki->ntypes; i++)
				assert_int_equal(s->value[i], (int64_t)sl_prof_field_of(&p->samples[si], ki->types[i].field));
			const char *l = ki->state_label ? label(pr, s, ki->state_label) : NULL;
			if (ki->state_label)
				assert_string_equal(l, sl_prof_state_name(k, (uint32_t)p->samples[si].off_cpu_state));
		}
		perftools__profiles__profile__free_unpacked(pr, NULL);
		sl_profile_free(p);
	}
	/* the numbers behind the generic check, spelled out for two kinds */
	struct sl_profile *p = two(SL_PROF_MEM_VIRTUAL, 1, SL_MEMV_MMAP_ANON, SL_MEMV_BRK);
	Perftools__Profiles__Profile *pr = pprof_of(p);
	assert_int_equal(pr->sample[0]->value[0], 3);     /* alloc_objects */
	assert_int_equal(pr->sample[0]->value[1], 12288); /* alloc_space */
	assert_int_equal(pr->sample[0]->value[2], 2);     /* inuse_objects */
	assert_int_equal(pr->sample[0]->value[3], 8192);  /* inuse_space */
	assert_string_equal(label(pr, pr->sample[0], "alloc"), "mmap");
	assert_string_equal(label(pr, pr->sample[1], "alloc"), "brk");
	perftools__profiles__profile__free_unpacked(pr, NULL);
	sl_profile_free(p);
	p = two(SL_PROF_LOCK_KERNEL, 1, SL_LCB_F_WRITE, SL_LCB_F_MUTEX);
	pr = pprof_of(p);
	assert_int_equal(pr->sample[1]->value[0], 5);     /* contentions */
	assert_int_equal(pr->sample[1]->value[1], 40960); /* delay ns */
	assert_string_equal(label(pr, pr->sample[0], "lock_type"), "rwsem:W");
	assert_string_equal(label(pr, pr->sample[1], "lock_type"), "mutex");
	perftools__profiles__profile__free_unpacked(pr, NULL);
	sl_profile_free(p);
}

static char *render(const struct sl_profile *p, int fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(sl_profile_write(p, fmt, 0, f), 0);
	fclose(f);
	return buf;
}

/* folded, SVG and JSON: the default value and unit of the kind, state frames */
static void test_text_outputs(void **st)
{
	(void)st;
	struct sl_profile *p = two(SL_PROF_MEM_VIRTUAL, 1, SL_MEMV_MMAP_ANON, SL_MEMV_MMAP_FILE);
	char *fo = render(p, SL_FMT_FOLDED);
	assert_non_null(strstr(fo, "app;[mmap];main;work 12288\n"));
	assert_non_null(strstr(fo, "app;[mmap_file];main;work;hot_fn 40960\n"));
	free(fo);
	char *js = render(p, SL_FMT_JSON);
	json_t *o = json_loads(js, 0, NULL);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "mem_virtual");
	assert_string_equal(json_string_value(json_object_get(o, "unit")), "bytes");
	assert_int_equal(json_integer_value(json_object_get(o, "total")), 12288 + 40960);
	json_decref(o);
	free(js);
	char *svg = render(p, SL_FMT_SVG);
	assert_non_null(strstr(svg, "Virtual memory allocations"));
	assert_non_null(strstr(svg, "bytes mapped"));
	free(svg);
	sl_profile_free(p);

	/* lock kinds: microseconds; kernel locks have a lock-type frame, futex none */
	p = two(SL_PROF_LOCK_KERNEL, 1, SL_LCB_F_WRITE, SL_LCB_F_SPIN);
	fo = render(p, SL_FMT_FOLDED);
	assert_non_null(strstr(fo, "app;[rwsem:W];main;work 12\n"));
	assert_non_null(strstr(fo, "app;[spinlock];main;work;hot_fn 40\n"));
	free(fo);
	sl_profile_free(p);
	p = two(SL_PROF_FUTEX, 1, 0, 0);
	fo = render(p, SL_FMT_FOLDED);
	assert_non_null(strstr(fo, "app;main;work 12\n"));
	free(fo);
	sl_profile_free(p);

	/* page faults: bytes, the access is a label only */
	p = two(SL_PROF_PAGE_FAULTS, 16, SL_PF_WRITE, SL_PF_READ);
	fo = render(p, SL_FMT_FOLDED);
	assert_non_null(strstr(fo, "app;main;work;hot_fn 40960\n"));
	assert_null(strstr(fo, "[write]"));
	free(fo);
	sl_profile_free(p);

	/* on/off-CPU unchanged: count and microseconds, [blocked] frame */
	p = fx_profile(SL_PROF_OFF_CPU);
	fo = render(p, SL_FMT_FOLDED);
	assert_non_null(strstr(fo, "app;[blocked];main;work;hot_fn 360000\n"));
	free(fo);
	sl_profile_free(p);
	p = fx_profile(SL_PROF_ON_CPU);
	fo = render(p, SL_FMT_FOLDED);
	assert_non_null(strstr(fo, "app;main;work;hot_fn 36\n"));
	free(fo);
	sl_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_task_types),
		cmocka_unit_test(test_scaling),
		cmocka_unit_test(test_lock_types),
		cmocka_unit_test(test_pprof_per_kind),
		cmocka_unit_test(test_text_outputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
