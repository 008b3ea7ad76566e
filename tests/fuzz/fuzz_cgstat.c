/* libFuzzer: cgroup statistics files (src/cgroup/cgstat*.c): memory.stat,
 * memory.* single values, cpu.stat, cpuacct.*, io.stat, blkio.throttle.*,
 * pressure files, pids.*. The whole input goes to every single-file parser;
 * split at 0x1e it also fills the multi-file parsers (v2 and v1 memory,
 * v1 cpu, v1 blkio, pids) part by part. Seeds: memory, cpu, psi cases. */
#include "fuzz_util.h"

#include "cgroup/cgstat.h"

static const char *const keys[] = {"anon", "file", "inactive_file", "usage_usec",
				   "nr_throttled", "total_rss", "oom_kill"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *whole = sl_fuzz_cstr(data, size);
	char *s = sl_fuzz_cstr(data, size);
	if (!whole || !s) {
		free(whole);
		free(s);
		return 0;
	}
	uint64_t u, vals[7], found;
	const char *p = whole;
	sl_cgparse_dec(&p, &u);
	sl_cgparse_u64(whole, &u);
	sl_cgparse_kv(whole, keys, 7, vals, &found);
	struct sl_cgstat_psi psi;
	sl_cgparse_psi(whole, &psi);
	struct sl_cgstat_cpu cpu;
	sl_cgstat_cpu_v2_text(whole, &cpu);
	static struct sl_cgstat_io io; /* 1.3 KiB: off the stack */
	sl_cgstat_io_v2_text(whole, &io);

	const char *f[6];
	sl_fuzz_split(s, SL_FUZZ_SEP, f, 6);
	struct sl_cgmem_v2_text m2 = {f[0], f[1], f[2], f[3], f[4], f[5]};
	struct sl_cgstat_mem mem;
	sl_cgstat_mem_v2_text(&m2, &mem);
	struct sl_cgmem_v1_text m1 = {f[0], f[1], f[2], f[3], f[4]};
	sl_cgstat_mem_v1_text(&m1, &mem);
	struct sl_cgcpu_v1_text c1 = {f[0], f[1], f[2]};
	sl_cgstat_cpu_v1_text(&c1, 100, &cpu);
	sl_cgstat_cpu_v1_text(&c1, 1, &cpu);
	sl_cgstat_io_v1_text(f[0], f[1], &io);
	struct sl_cgstat_pids pids;
	sl_cgstat_pids_text(f[0], f[1], &pids);
	free(whole);
	free(s);
	return 0;
}
