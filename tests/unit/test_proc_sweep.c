/* The token-bucket table sweep (src/modules/proc_sweep.c) against a real
 * BPF hash map: idle buckets are removed in one walk (not a restart per
 * delete, finding 5 of issue 8), what they held is reported once, and the
 * buckets left are counted once each. Needs CAP_BPF (skips otherwise). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include "modules/proc_sweep.h"

#define SEC 1000000000ULL
#define NOW (100 * SEC)
#define IDLE (10 * SEC)

static int map_create(unsigned max)
{
	return bpf_map_create(BPF_MAP_TYPE_HASH, "sl_sweep_test", sizeof(struct sl_exec_key),
			      sizeof(struct sl_exec_bucket), max, NULL);
}

struct expired {
	uint64_t n, pending, rb;
};

static void on_expired(const void *key, const struct sl_exec_bucket *b, void *ctx)
{
	struct expired *x = ctx;
	(void)key;
	x->n++;
	x->pending += b->pending;
	x->rb += b->pending_rb;
}

/* live buckets (used 1 s ago, pending 1) and idle ones (60 s ago, pending 3
 * of which 2 lost to the ring buffer), interleaved in insertion order. */
static int fill(int fd, unsigned live, unsigned idle)
{
	for (unsigned i = 0; i < live + idle; i++) {
		struct sl_exec_key k = {.ppid = i + 1};
		int is_idle = i % 2 ? i / 2 < idle : i / 2 >= live;
		struct sl_exec_bucket b = {.last_ns = is_idle ? NOW - 60 * SEC : NOW - SEC,
					   .pending = is_idle ? 3 : 1,
					   .pending_rb = is_idle ? 2 : 0};
		snprintf(k.comm, sizeof(k.comm), "c%u", i % 7);
		if (bpf_map_update_elem(fd, &k, &b, BPF_NOEXIST))
			return -1;
	}
	return 0;
}

static unsigned count(int fd)
{
	struct sl_exec_key k, n, *p = NULL;
	unsigned c = 0;
	while (bpf_map_get_next_key(fd, p, &n) == 0) {
		k = n;
		p = &k;
		c++;
	}
	return c;
}

static void sweep_is_linear_and_exact(void **state)
{
	(void)state;
	const unsigned live = 3000, idle = 3000;
	int fd = map_create(8192);
	void *buf = NULL;
	size_t cap = 0;
	struct sl_sweep_result r;
	struct expired x = {0};

	assert_true(fd >= 0);
	assert_int_equal(fill(fd, live, idle), 0);
	assert_int_equal(sl_bucket_sweep(fd, sizeof(struct sl_exec_key), NOW, IDLE, on_expired, &x, &buf, &cap, &r),
			 0);
	print_message("sweep of %u buckets (%u idle): %llu bpf calls\n", live + idle, idle,
		      (unsigned long long)r.syscalls);
	assert_int_equal(r.removed, idle);
	assert_int_equal(x.n, idle);
	assert_int_equal(x.pending, 3ull * idle);
	assert_int_equal(x.rb, 2ull * idle);
	assert_int_equal(r.buckets, live);
	assert_int_equal(r.pending, live);
	assert_int_equal(count(fd), live);
	/* linear: a bounded number of calls per bucket (the old restart-after-
	 * delete walk made ~live * idle / 2 of them here) */
	assert_true(r.syscalls <= 4ull * (live + idle) + 16);
	/* a second sweep finds nothing idle */
	assert_int_equal(sl_bucket_sweep(fd, sizeof(struct sl_exec_key), NOW, IDLE, on_expired, &x, &buf, &cap, &r),
			 0);
	assert_int_equal(r.removed, 0);
	assert_int_equal(r.buckets, live);
	free(buf);
	close(fd);
}

/* The walk reads the table in batches (BPF_MAP_LOOKUP_BATCH): a table of
 * 3,000 live buckets costs tens of bpf() calls, not 2 per bucket (the
 * sweep runs every tick); the figures are those of the per-element walk. */
static void walk_is_batched(void **state)
{
	(void)state;
	const unsigned live = 3000;
	int fd = map_create(8192);
	void *buf = NULL;
	size_t cap = 0;
	struct sl_sweep_result r;
	struct sl_exec_key keys[4];
	struct sl_exec_bucket vals[4];
	uint32_t count = 4, token;

	assert_true(fd >= 0);
	assert_int_equal(fill(fd, live, 0), 0);
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	if (bpf_map_lookup_batch(fd, NULL, &token, keys, vals, &count, &o) && errno != ENOENT) {
		close(fd);
		skip(); /* kernel without batch ops on hash maps (< 5.6) */
	}
	assert_int_equal(sl_bucket_sweep(fd, sizeof(struct sl_exec_key), NOW, IDLE, NULL, NULL, &buf, &cap, &r), 0);
	print_message("walk of %u live buckets: %llu bpf calls\n", live, (unsigned long long)r.syscalls);
	assert_int_equal(r.buckets, live);
	assert_int_equal(r.pending, live);
	assert_int_equal(r.removed, 0);
	assert_true(r.syscalls <= 64);
	free(buf);
	close(fd);
}

static void empty_table(void **state)
{
	(void)state;
	int fd = map_create(64);
	void *buf = NULL;
	size_t cap = 0;
	struct sl_sweep_result r;
	assert_true(fd >= 0);
	assert_int_equal(sl_bucket_sweep(fd, sizeof(struct sl_exec_key), NOW, IDLE, NULL, NULL, &buf, &cap, &r), 0);
	assert_int_equal(r.buckets, 0);
	assert_int_equal(r.removed, 0);
	free(buf);
	close(fd);
}

int main(void)
{
	int fd = map_create(64);
	if (fd < 0) {
		printf("SKIP: cannot create a BPF hash map (%s): needs root/CAP_BPF\n", strerror(errno));
		return 77;
	}
	close(fd);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sweep_is_linear_and_exact),
		cmocka_unit_test(walk_is_batched),
		cmocka_unit_test(empty_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
