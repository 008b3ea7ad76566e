/* Unit tests for the guest-agent source's pure parts (src/stats/guest_conv.c,
 * guest_ttrpc.c): the conversion of one container's StatsContainer answer
 * as a table (the cases of the micro-VM guest-agent statistics design,
 * ../shared/seeds/001: v2 guest, v1 total_inactive_file, both keys, cache at
 * and above usage, missing memory.stat, no peak, sub-µs truncation, memory
 * without cpu and the converse, nil and empty stats), the summing rule with
 * saturation, and ttrpc framing incl. malformed frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stats/guest.h"
#include "stats/kata_ttrpc.pb-c.h"

#define MiB (1024ull * 1024)

/* One table row: what the agent sent (NO = field absent) and what the
 * conversion must give. */
#define NO UINT64_MAX
struct row {
	const char *name;
	int nil;             /* cgroup_stats NULL */
	int empty;           /* CgroupStats with no sub-message */
	uint64_t cpu_ns, user_ns, sys_ns; /* NO: no cpu_stats */
	uint64_t usage, max_usage;        /* NO: no memory_stats */
	uint64_t inactive, total_inactive; /* NO: key absent */
	uint64_t pids;                    /* NO: no pids_stats */
	/* expected */
	uint32_t known, flags;
	uint64_t e_cpu, e_user, e_sys, e_usage, e_ws, e_peak, e_pids;
};

#define CPU_K (SL_GS_CPU_USAGE | SL_GS_CPU_USER | SL_GS_CPU_SYSTEM)
#define MEM_K (SL_GS_MEM_USAGE | SL_GS_MEM_WS | SL_GS_MEM_CACHE)

static const struct row rows[] = {
	{"v2 guest", 0, 0, 1500000999, 1000000000, 500000999, 100 * MiB, 150 * MiB, 30 * MiB, NO, 7,
	 CPU_K | MEM_K | SL_GS_MEM_PEAK | SL_GS_PIDS, 0, 1500000, 1000000, 500000, 100 * MiB, 70 * MiB,
	 150 * MiB, 7},
	{"v1 total_inactive_file", 0, 0, 2000, 1000, 1000, 100 * MiB, 120 * MiB, NO, 40 * MiB, NO,
	 CPU_K | MEM_K | SL_GS_MEM_PEAK, SL_GSF_WS_V1, 2, 1, 1, 100 * MiB, 60 * MiB, 120 * MiB, 0},
	{"both keys present: the hierarchical v1 key wins", 0, 0, 0, 0, 0, 100 * MiB, 100 * MiB, 10 * MiB,
	 40 * MiB, NO, CPU_K | MEM_K | SL_GS_MEM_PEAK, SL_GSF_WS_V1, 0, 0, 0, 100 * MiB, 60 * MiB, 100 * MiB, 0},
	{"reclaimable cache at usage", 0, 0, NO, 0, 0, 50 * MiB, 60 * MiB, 50 * MiB, NO, NO,
	 MEM_K | SL_GS_MEM_PEAK, 0, 0, 0, 0, 50 * MiB, 0, 60 * MiB, 0},
	{"reclaimable cache above usage", 0, 0, NO, 0, 0, 50 * MiB, 60 * MiB, 80 * MiB, NO, NO,
	 MEM_K | SL_GS_MEM_PEAK, SL_GSF_WS_FLOORED, 0, 0, 0, 50 * MiB, 0, 60 * MiB, 0},
	{"missing memory.stat", 0, 0, NO, 0, 0, 50 * MiB, 60 * MiB, NO, NO, NO, MEM_K | SL_GS_MEM_PEAK,
	 SL_GSF_WS_NO_INACTIVE, 0, 0, 0, 50 * MiB, 50 * MiB, 60 * MiB, 0},
	{"no peak (max_usage 0)", 0, 0, NO, 0, 0, 50 * MiB, 0, 10 * MiB, NO, NO, MEM_K, 0, 0, 0, 0, 50 * MiB,
	 40 * MiB, 0, 0},
	{"sub-microsecond truncation", 0, 0, 999, 1999, 1000, NO, 0, NO, NO, NO, CPU_K, 0, 0, 1, 1, 0, 0, 0, 0},
	{"memory without cpu", 0, 0, NO, 0, 0, 8 * MiB, 9 * MiB, 1 * MiB, NO, NO, MEM_K | SL_GS_MEM_PEAK, 0, 0,
	 0, 0, 8 * MiB, 7 * MiB, 9 * MiB, 0},
	{"cpu without memory", 0, 0, 5000000, 3000000, 2000000, NO, 0, NO, NO, NO, CPU_K, 0, 5000, 3000, 2000,
	 0, 0, 0, 0},
	{"nil stats", 1, 0, NO, 0, 0, NO, 0, NO, NO, NO, 0, SL_GSF_NIL, 0, 0, 0, 0, 0, 0, 0},
	{"empty stats", 0, 1, NO, 0, 0, NO, 0, NO, NO, NO, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"zero usage, zero cache", 0, 0, 0, 0, 0, 0, 0, 0, NO, 0, CPU_K | MEM_K | SL_GS_PIDS, 0, 0, 0, 0, 0, 0,
	 0, 0},
	{"cpu near 2^64 ns", 0, 0, UINT64_MAX - 1, 0, 0, NO, 0, NO, NO, NO, CPU_K, 0, (UINT64_MAX - 1) / 1000,
	 0, 0, 0, 0, 0, 0},
	{"pids only", 0, 0, NO, 0, 0, NO, 0, NO, NO, 3, SL_GS_PIDS, 0, 0, 0, 0, 0, 0, 0, 3},
};

static void convert_row(const struct row *r, struct sl_guest_sample *out)
{
	Grpc__CgroupStats cs = GRPC__CGROUP_STATS__INIT;
	Grpc__CpuStats cpu = GRPC__CPU_STATS__INIT;
	Grpc__CpuUsage cu = GRPC__CPU_USAGE__INIT;
	Grpc__MemoryStats mem = GRPC__MEMORY_STATS__INIT;
	Grpc__MemoryData md = GRPC__MEMORY_DATA__INIT;
	Grpc__PidsStats ps = GRPC__PIDS_STATS__INIT;
	Grpc__MemoryStats__StatsEntry e[2] = {GRPC__MEMORY_STATS__STATS_ENTRY__INIT,
					      GRPC__MEMORY_STATS__STATS_ENTRY__INIT};
	Grpc__MemoryStats__StatsEntry *ep[2];
	if (r->nil) {
		sl_guest_from_cgroup_stats(NULL, out);
		return;
	}
	if (!r->empty && r->cpu_ns != NO) {
		cu.total_usage = r->cpu_ns;
		cu.usage_in_usermode = r->user_ns;
		cu.usage_in_kernelmode = r->sys_ns;
		cpu.cpu_usage = &cu;
		cs.cpu_stats = &cpu;
	}
	if (!r->empty && r->usage != NO) {
		md.usage = r->usage;
		md.max_usage = r->max_usage;
		mem.usage = &md;
		if (r->inactive != NO) {
			e[mem.n_stats].key = "inactive_file";
			e[mem.n_stats].value = r->inactive;
			ep[mem.n_stats] = &e[mem.n_stats];
			mem.n_stats++;
		}
		if (r->total_inactive != NO) {
			e[mem.n_stats].key = "total_inactive_file";
			e[mem.n_stats].value = r->total_inactive;
			ep[mem.n_stats] = &e[mem.n_stats];
			mem.n_stats++;
		}
		mem.stats = ep;
		cs.memory_stats = &mem;
	}
	if (!r->empty && r->pids != NO) {
		ps.current = r->pids;
		cs.pids_stats = &ps;
	}
	/* through the wire format, as the client gets it */
	size_t n = grpc__cgroup_stats__get_packed_size(&cs);
	uint8_t *b = malloc(n ? n : 1);
	assert_non_null(b);
	grpc__cgroup_stats__pack(&cs, b);
	Grpc__CgroupStats *u = grpc__cgroup_stats__unpack(NULL, n, b);
	assert_non_null(u);
	sl_guest_from_cgroup_stats(u, out);
	grpc__cgroup_stats__free_unpacked(u, NULL);
	free(b);
}

static void test_conversion_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct sl_guest_sample s;
		convert_row(r, &s);
		print_message("case %s\n", r->name);
		assert_int_equal(s.known, r->known);
		assert_int_equal(s.flags, r->flags);
		assert_int_equal(s.cpu_usage_usec, r->e_cpu);
		assert_int_equal(s.cpu_user_usec, r->e_user);
		assert_int_equal(s.cpu_system_usec, r->e_sys);
		assert_int_equal(s.mem_usage_bytes, r->e_usage);
		assert_int_equal(s.mem_working_set_bytes, r->e_ws);
		assert_int_equal(s.mem_peak_bytes, r->e_peak);
		assert_int_equal(s.pids_current, r->e_pids);
	}
}

static void test_throttling_and_swap(void **state)
{
	(void)state;
	Grpc__CgroupStats cs = GRPC__CGROUP_STATS__INIT;
	Grpc__CpuStats cpu = GRPC__CPU_STATS__INIT;
	Grpc__ThrottlingData td = GRPC__THROTTLING_DATA__INIT;
	Grpc__MemoryStats mem = GRPC__MEMORY_STATS__INIT;
	Grpc__MemoryData sw = GRPC__MEMORY_DATA__INIT;
	td.periods = 10;
	td.throttled_periods = 4;
	td.throttled_time = 123456789; /* ns */
	cpu.throttling_data = &td;
	cs.cpu_stats = &cpu;
	sw.usage = 4096;
	mem.swap_usage = &sw;
	mem.cache = 777;
	cs.memory_stats = &mem;
	struct sl_guest_sample s;
	sl_guest_from_cgroup_stats(&cs, &s);
	assert_int_equal(s.known, SL_GS_CPU_THROTTLE | SL_GS_MEM_SWAP | SL_GS_MEM_CACHE);
	assert_int_equal(s.cpu_periods, 10);
	assert_int_equal(s.cpu_throttled_periods, 4);
	assert_int_equal(s.cpu_throttled_usec, 123456);
	assert_int_equal(s.mem_swap_bytes, 4096);
	assert_int_equal(s.mem_cache_bytes, 777);
	/* usage unknown: no working set either */
	assert_int_equal(s.known & (SL_GS_MEM_USAGE | SL_GS_MEM_WS), 0);
}

static void test_sum(void **state)
{
	(void)state;
	struct sl_guest_sample t, a, b, nil;
	memset(&t, 0, sizeof(t));
	convert_row(&rows[0], &a); /* v2 guest */
	convert_row(&rows[9], &b); /* cpu without memory */
	convert_row(&rows[10], &nil);
	sl_guest_sample_add(&t, &a);
	sl_guest_sample_add(&t, &b);
	sl_guest_sample_add(&t, &nil); /* contributes zero */
	assert_int_equal(t.cpu_usage_usec, 1500000 + 5000);
	assert_int_equal(t.mem_usage_bytes, 100 * MiB);
	assert_int_equal(t.mem_working_set_bytes, 70 * MiB);
	assert_int_equal(t.mem_peak_bytes, 150 * MiB); /* sum of peaks: an upper bound */
	/* known in either: the container that did not report memory adds 0 */
	assert_true(t.known & SL_GS_MEM_USAGE);
	assert_true(t.known & SL_GS_CPU_USAGE);
	assert_true(t.flags & SL_GSF_NIL);

	/* saturation */
	struct sl_guest_sample big;
	memset(&big, 0, sizeof(big));
	big.known = SL_GS_CPU_USAGE | SL_GS_MEM_PEAK;
	big.cpu_usage_usec = UINT64_MAX - 5;
	big.mem_peak_bytes = UINT64_MAX;
	sl_guest_sample_add(&t, &big);
	assert_true(t.cpu_usage_usec == UINT64_MAX);
	assert_true(t.mem_peak_bytes == UINT64_MAX);
	sl_guest_sample_add(&t, &big);
	assert_true(t.cpu_usage_usec == UINT64_MAX);
	/* an empty sum is all unknown */
	struct sl_guest_sample z;
	memset(&z, 0, sizeof(z));
	sl_guest_sample_add(&z, &nil);
	assert_int_equal(z.known, 0);
}

/* ------------------------------------------------------------ ttrpc */

static void test_hdr_roundtrip(void **state)
{
	(void)state;
	uint8_t b[SL_TTRPC_HDR_LEN];
	struct sl_ttrpc_hdr h = {.length = 0x01020304, .stream_id = 0x0a0b0c0d, .type = 2, .flags = 4}, d;
	sl_ttrpc_hdr_encode(&h, b);
	static const uint8_t want[] = {1, 2, 3, 4, 0x0a, 0x0b, 0x0c, 0x0d, 2, 4};
	assert_memory_equal(b, want, sizeof(want)); /* big endian, channel.go */
	assert_int_equal(sl_ttrpc_hdr_decode(b, 0x7fffffff, &d), 0);
	assert_int_equal(d.length, h.length);
	assert_int_equal(d.stream_id, h.stream_id);
	assert_int_equal(d.type, 2);
	assert_int_equal(d.flags, 4);
	/* length above the 4 MiB ttrpc maximum */
	h.length = SL_TTRPC_MAX_MSG + 1;
	sl_ttrpc_hdr_encode(&h, b);
	assert_int_equal(sl_ttrpc_hdr_decode(b, 0, &d), -EMSGSIZE);
	h.length = SL_TTRPC_MAX_MSG;
	sl_ttrpc_hdr_encode(&h, b);
	assert_int_equal(sl_ttrpc_hdr_decode(b, 0, &d), 0);
	h.length = UINT32_MAX;
	sl_ttrpc_hdr_encode(&h, b);
	assert_int_equal(sl_ttrpc_hdr_decode(b, 0, &d), -EMSGSIZE);
}

static void test_request_frame(void **state)
{
	(void)state;
	uint8_t *f;
	size_t len;
	const uint8_t pl[] = {0x0a, 0x03, 'a', 'b', 'c'}; /* StatsContainerRequest{container_id="abc"} */
	assert_int_equal(sl_ttrpc_request_frame(7, "grpc.AgentService", "StatsContainer", pl, sizeof(pl),
						1000000000, &f, &len), 0);
	struct sl_ttrpc_hdr h;
	assert_int_equal(sl_ttrpc_hdr_decode(f, 0, &h), 0);
	assert_int_equal(h.type, SL_TTRPC_REQUEST);
	assert_int_equal(h.stream_id, 7);
	assert_int_equal(h.length, len - SL_TTRPC_HDR_LEN);
	Ttrpc__Request *rq = ttrpc__request__unpack(NULL, h.length, f + SL_TTRPC_HDR_LEN);
	assert_non_null(rq);
	assert_string_equal(rq->service, "grpc.AgentService");
	assert_string_equal(rq->method, "StatsContainer");
	assert_int_equal(rq->timeout_nano, 1000000000);
	assert_int_equal(rq->payload.len, sizeof(pl));
	assert_memory_equal(rq->payload.data, pl, sizeof(pl));
	Grpc__StatsContainerRequest *sr = grpc__stats_container_request__unpack(NULL, rq->payload.len,
										 rq->payload.data);
	assert_non_null(sr);
	assert_string_equal(sr->container_id, "abc");
	grpc__stats_container_request__free_unpacked(sr, NULL);
	ttrpc__request__free_unpacked(rq, NULL);
	free(f);
}

static void test_response_parse(void **state)
{
	(void)state;
	/* Response{status{code 5, message "nf"}, payload "xy"} packed by hand:
	 * 0a 06 (08 05 12 02 'n' 'f') 12 02 'x' 'y' */
	const uint8_t ok[] = {0x0a, 0x06, 0x08, 0x05, 0x12, 0x02, 'n', 'f', 0x12, 0x02, 'x', 'y'};
	int code;
	char msg[16];
	uint8_t *p;
	size_t pl;
	assert_int_equal(sl_ttrpc_response_parse(ok, sizeof(ok), &code, msg, sizeof(msg), &p, &pl), 0);
	assert_int_equal(code, 5);
	assert_string_equal(msg, "nf");
	assert_int_equal(pl, 2);
	assert_memory_equal(p, "xy", 2);
	free(p);
	/* empty body: status OK, no payload (an answer without stats) */
	assert_int_equal(sl_ttrpc_response_parse(ok, 0, &code, NULL, 0, &p, &pl), 0);
	assert_int_equal(code, 0);
	assert_null(p);
	/* truncated: the payload's length runs past the end */
	assert_int_equal(sl_ttrpc_response_parse(ok, sizeof(ok) - 1, &code, NULL, 0, &p, &pl), -EPROTO);
	assert_null(p);
	/* garbage: a varint that never ends */
	const uint8_t bad[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	assert_int_equal(sl_ttrpc_response_parse(bad, sizeof(bad), &code, NULL, 0, &p, &pl), -EPROTO);
	/* wrong wire type for field 2 (varint instead of bytes) */
	const uint8_t wt[] = {0x10, 0x01};
	assert_int_equal(sl_ttrpc_response_parse(wt, sizeof(wt), &code, NULL, 0, &p, &pl), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conversion_table),
		cmocka_unit_test(test_throttling_and_swap),
		cmocka_unit_test(test_sum),
		cmocka_unit_test(test_hdr_roundtrip),
		cmocka_unit_test(test_request_frame),
		cmocka_unit_test(test_response_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
