/* Helpers of src/agent/module.c. sl_percpu_array_each: every element of a real
 * BPF_MAP_TYPE_PERCPU_ARRAY, in index order, with each CPU's value, read in
 * batches whose size does not divide the array; a value size that is not a
 * multiple of 8 (the kernel rounds each CPU's value up); a callback's
 * non-zero return stops the walk. Needs CAP_BPF (root), else skipped. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/module.h"

#define N 1000

struct val12 { /* 12 bytes: 16 a CPU in the kernel's layout */
	uint32_t a, b, c;
};

struct seen {
	int ncpus;
	uint32_t n, next, stop_at;
	int bad;
};

static int check(void *ctx, uint32_t idx, const void *vals)
{
	struct seen *s = ctx;
	const unsigned char *v = vals;
	if (idx != s->next)
		s->bad++;
	s->next = idx + 1;
	for (int c = 0; c < s->ncpus; c++) {
		struct val12 x;
		memcpy(&x, v + (size_t)c * 16, sizeof(x));
		if (idx % 7 == 0) {
			if (x.a != idx || x.b != (uint32_t)c || x.c != 0xabcd)
				s->bad++;
		} else if (x.a || x.b || x.c) {
			s->bad++;
		}
	}
	s->n++;
	return s->stop_at && s->n == s->stop_at ? 42 : 0;
}

static void test_percpu_each(void **state)
{
	(void)state;
	int ncpus = libbpf_num_possible_cpus();
	assert_true(ncpus > 0);
	int fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "sl_each_test", 4, sizeof(struct val12), N, NULL);
	if (fd < 0) {
		if (geteuid() != 0 || errno == EPERM) {
			skip();
			return;
		}
		fail_msg("bpf_map_create: %s", strerror(errno));
	}
	unsigned char *buf = calloc((size_t)ncpus, 16);
	assert_non_null(buf);
	for (uint32_t i = 0; i < N; i += 7) {
		for (int c = 0; c < ncpus; c++) {
			struct val12 x = { i, (uint32_t)c, 0xabcd };
			memcpy(buf + (size_t)c * 16, &x, sizeof(x));
		}
		assert_int_equal(bpf_map_update_elem(fd, &i, buf, BPF_ANY), 0);
	}
	const uint32_t chunks[] = { 1, 64, 128, 333, N, 5000 };
	for (size_t k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		struct seen s = { .ncpus = ncpus };
		assert_int_equal(sl_percpu_array_each(fd, N, sizeof(struct val12), ncpus, chunks[k], check, &s), 0);
		assert_int_equal(s.bad, 0);
		assert_int_equal(s.n, N);
	}
	/* fewer elements asked than the array has: only those */
	struct seen s = { .ncpus = ncpus };
	assert_int_equal(sl_percpu_array_each(fd, 130, sizeof(struct val12), ncpus, 64, check, &s), 0);
	assert_int_equal(s.n, 130);
	assert_int_equal(s.bad, 0);
	/* the callback stops it */
	struct seen st = { .ncpus = ncpus, .stop_at = 70 };
	assert_int_equal(sl_percpu_array_each(fd, N, sizeof(struct val12), ncpus, 64, check, &st), 42);
	assert_int_equal(st.n, 70);
	/* bad arguments */
	assert_int_equal(sl_percpu_array_each(fd, N, sizeof(struct val12), 0, 64, check, &st), -EINVAL);
	assert_int_equal(sl_percpu_array_each(fd, N, sizeof(struct val12), ncpus, 0, check, &st), -EINVAL);
	/* not a map */
	assert_true(sl_percpu_array_each(-1, N, sizeof(struct val12), ncpus, 64, check, &st) < 0);
	free(buf);
	close(fd);
}

/* sl_percpu_sums: each element's sum over CPUs, equal to sl_percpu_sum's */
static void test_percpu_sums(void **state)
{
	(void)state;
	int ncpus = libbpf_num_possible_cpus();
	assert_true(ncpus > 0);
	int fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "sl_sums_test", 4, 8, 19, NULL);
	if (fd < 0) {
		if (geteuid() != 0 || errno == EPERM) {
			skip();
			return;
		}
		fail_msg("bpf_map_create: %s", strerror(errno));
	}
	uint64_t *v = calloc((size_t)ncpus, 8), out[19], none[3] = {7, 7, 7};
	assert_non_null(v);
	for (uint32_t i = 0; i < 19; i++) {
		for (int c = 0; c < ncpus; c++)
			v[c] = 1000ull * i + (uint64_t)c + 1;
		assert_int_equal(bpf_map_update_elem(fd, &i, v, BPF_ANY), 0);
	}
	assert_int_equal(sl_percpu_sums(fd, 19, ncpus, out), 0);
	for (uint32_t i = 0; i < 19; i++) {
		uint64_t want = 1000ull * i * (uint64_t)ncpus + (uint64_t)ncpus * (uint64_t)(ncpus + 1) / 2;
		assert_int_equal(out[i], want);
		assert_int_equal(out[i], sl_percpu_sum(fd, i, ncpus));
	}
	/* not a map: an error, the sums zeroed */
	assert_true(sl_percpu_sums(-1, 3, ncpus, none) < 0);
	assert_int_equal(none[0] | none[1] | none[2], 0);
	free(v);
	close(fd);
}

/* sl_module_hook_note: the reason of the last hook of that name recorded,
 * shown by /healthz (the sched module's auto fallback says why) */
static void test_hook_note(void **state)
{
	(void)state;
	static const struct sl_module_ops ops = {.name = "t"};
	struct sl_module m;
	memset(&m, 0, sizeof(m));
	m.ops = &ops;
	sl_module_hook(&m, "tp_btf/a", SL_HOOK_ATTACHED, NULL);
	sl_module_hook(&m, "tp_btf/b", SL_HOOK_ATTACHED, NULL);
	assert_int_equal(sl_module_hook_note(&m, "tp_btf/a", "fallback: why"), 0);
	assert_string_equal(m.hooks[0].reason, "fallback: why");
	assert_int_equal(m.hooks[0].state, SL_HOOK_ATTACHED);
	assert_string_equal(m.hooks[1].reason, "");
	assert_int_equal(sl_module_hook_note(&m, "tp_btf/none", "x"), -ENOENT);
	char lng[400];
	memset(lng, 'x', sizeof(lng) - 1);
	lng[sizeof(lng) - 1] = 0;
	assert_int_equal(sl_module_hook_note(&m, "tp_btf/b", lng), 0);
	assert_int_equal(strlen(m.hooks[1].reason), sizeof(m.hooks[1].reason) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percpu_each),
		cmocka_unit_test(test_percpu_sums),
		cmocka_unit_test(test_hook_note),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
