/* sl_agent_ringbuf_fill (src/agent/agent.c) against a real BPF ring buffer:
 * a socket-filter program run with BPF_PROG_TEST_RUN writes 16-byte records
 * (8-byte header + 8 bytes, kernel/bpf/ringbuf.c BPF_RINGBUF_HDR_SZ) with
 * bpf_ringbuf_output, and the fill is exactly written / size after each
 * run, read through position pages mapped once; a descriptor reused for
 * another map reads that map; a descriptor that is not a map is -1.
 * Needs CAP_BPF (root), else skipped. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"

#define RB_SIZE 16384

/* *(u64 *)(fp - 8) = 0; bpf_ringbuf_output(map, fp - 8, 8, BPF_RB_NO_WAKEUP); return 0 */
static int writer_load(int map_fd)
{
	struct bpf_insn insns[] = {
		{.code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0},
		{.code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1, .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd},
		{.code = 0, .imm = 0},
		{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -8},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 8},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4, .imm = BPF_RB_NO_WAKEUP},
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ringbuf_output},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "sl_rb_fill", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), NULL);
}

static void run(int prog, int times)
{
	unsigned char pkt[64] = {0};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt), .repeat = (__u32)times);
	assert_int_equal(bpf_prog_test_run_opts(prog, &o), 0);
}

static void fill(void **state)
{
	(void)state;
	int rb = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "sl_rb_fill", 0, 0, RB_SIZE, NULL);
	if (rb < 0) {
		if (geteuid() != 0 || errno == EPERM)
			skip();
		fail_msg("bpf_map_create: %s", strerror(errno));
	}
	int prog = writer_load(rb);
	assert_true(prog >= 0);
	assert_true(sl_agent_ringbuf_fill(rb) == 0.0);
	run(prog, 1);
	assert_true(sl_agent_ringbuf_fill(rb) == 16.0 / RB_SIZE);
	run(prog, 63);
	assert_true(sl_agent_ringbuf_fill(rb) == 64.0 * 16 / RB_SIZE);
	close(prog);

	/* the same descriptor number, another (empty, larger) ring buffer */
	int other = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "sl_rb_fill2", 0, 0, 2 * RB_SIZE, NULL);
	assert_true(other >= 0);
	assert_int_equal(dup2(other, rb), rb);
	close(other);
	assert_true(sl_agent_ringbuf_fill(rb) == 0.0);
	prog = writer_load(rb);
	assert_true(prog >= 0);
	run(prog, 4);
	assert_true(sl_agent_ringbuf_fill(rb) == 4.0 * 16 / (2 * RB_SIZE));
	close(prog);
	close(rb);

	/* not a map */
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_true(sl_agent_ringbuf_fill(p[0]) < 0);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fill),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
