/* Per-cgroup statistics readers (STATS-1): the pure parsing layer.
 *
 * Two levels:
 *   1. Text functions (sl_cgparse_*, sl_cgstat_*_text): pure functions over
 *      NUL-terminated kernel file contents. A NULL text means "the file is
 *      absent or unreadable" and leaves the figures it feeds unknown. They
 *      never allocate, never fail hard and return how many malformed lines
 *      they ignored (>= 0). Unit tests feed ../shared/cases files to them.
 *   2. Directory readers (sl_cgstat_read_v2, sl_cgstat_read_v1): read the
 *      files of one cgroup directory (v2) or of a set of v1 controller
 *      directories (v1, hybrid) and call the text functions.
 *
 * Every figure has a known bit; a figure whose bit is clear is 0 and must
 * be reported as unknown/absent, never as 0. Semantics, units and the
 * kernel file + key of every figure: docs/STATS.md. Kernel references:
 * Documentation/admin-guide/cgroup-v2.rst, Documentation/accounting/psi.rst,
 * Documentation/admin-guide/cgroup-v1/{memory,cpuacct,blkio-controller}.rst.
 *
 * Not here (next layer, issue 4): epochs (a recreated cgroup restarts every
 * cumulative counter; detect it by the directory's inode / cgroup id, not
 * by values going down), summing containers into workloads (a summed peak
 * is an upper bound on the peak of the sum), snapshot publication.
 *
 * Thread safety: no global state; every function may run on any thread.
 */
#ifndef SANDLENS_CGROUP_CGSTAT_H
#define SANDLENS_CGROUP_CGSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Value of a limit that the kernel reports as "max" (v2) or as the
 * page-rounded LONG_MAX (v1, >= SL_CGSTAT_V1_UNLIMITED_MIN). */
#define SL_CGSTAT_UNLIMITED UINT64_MAX
/* v1 prints "no limit" as PAGE_COUNTER_MAX * PAGE_SIZE = LONG_MAX rounded
 * down to the page size (9223372036854771712 with 4 KiB pages); any value
 * at or above LONG_MAX rounded down to 64 KiB is taken as unlimited. */
#define SL_CGSTAT_V1_UNLIMITED_MIN 0x7FFFFFFFFFFF0000ULL

/* ---------------------------------------------------------------- cpu */

/* Known bits of struct sl_cgstat_cpu. */
enum {
	SL_CPU_USAGE = 1u << 0,
	SL_CPU_USER = 1u << 1,
	SL_CPU_SYSTEM = 1u << 2,
	SL_CPU_NR_PERIODS = 1u << 3,
	SL_CPU_NR_THROTTLED = 1u << 4,
	SL_CPU_THROTTLED = 1u << 5,
};

/* CPU time of a cgroup and its descendants, cumulative since the cgroup
 * was created. All times in microseconds.
 *   usage_usec      v2 cpu.stat usage_usec; v1 cpuacct.usage (ns) / 1000.
 *                   Reported as read: never user+system (they are rounded
 *                   independently and need not add up).
 *   user/system     v2 cpu.stat user_usec/system_usec; v1 cpuacct.stat
 *                   user/system in USER_HZ ticks * 1e6 / clk_tck.
 *   nr_periods      cpu.stat nr_periods (CFS bandwidth periods elapsed).
 *   nr_throttled    cpu.stat nr_throttled (periods in which it was throttled).
 *   throttled_usec  v2 cpu.stat throttled_usec; v1 cpu.stat throttled_time
 *                   (ns) / 1000. */
struct sl_cgstat_cpu {
	uint32_t known; /* SL_CPU_* */
	uint64_t usage_usec, user_usec, system_usec;
	uint64_t nr_periods, nr_throttled, throttled_usec;
};

/* ------------------------------------------------------------- memory */

/* Known bits of struct sl_cgstat_mem. */
enum {
	SL_MEM_USAGE = 1u << 0,
	SL_MEM_WORKING_SET = 1u << 1,
	SL_MEM_INACTIVE_FILE = 1u << 2,
	SL_MEM_PEAK = 1u << 3,
	SL_MEM_LIMIT = 1u << 4,
	SL_MEM_CACHE = 1u << 5,
	SL_MEM_RSS = 1u << 6,
	SL_MEM_SWAP = 1u << 7,
	SL_MEM_OOM = 1u << 8,
	SL_MEM_OOM_KILL = 1u << 9,
};

/* Explanatory flags of struct sl_cgstat_mem (set alongside known bits). */
enum {
	/* v2 root cgroup: no memory.current; usage = memory.stat anon + file. */
	SL_MEMF_USAGE_FROM_STAT = 1u << 0,
	/* inactive_file (v2) / total_inactive_file (v1) absent: working set
	 * = usage (an upper bound). */
	SL_MEMF_WS_NO_INACTIVE = 1u << 1,
	/* inactive file pages exceeded usage: working set floored at 0. */
	SL_MEMF_WS_FLOORED = 1u << 2,
	/* no high-water mark: the kernel has none (no memory.peak before 5.19,
	 * none at the v2 root) or the file was unreadable/malformed.
	 * peak_bytes = 0 and SL_MEM_PEAK clear. */
	SL_MEMF_NO_PEAK = 1u << 3,
};

/* Memory of a cgroup and its descendants, bytes.
 *   usage_bytes        v2 memory.current; v1 memory.usage_in_bytes.
 *   working_set_bytes  usage - inactive_file (v2) / total_inactive_file (v1),
 *                      floored at 0; = usage when the key is absent.
 *   inactive_file_bytes the subtrahend above, as read.
 *   peak_bytes         v2 memory.peak; v1 memory.max_usage_in_bytes. A
 *                      high-water mark since creation (v1: since the last
 *                      write to the file); never a current value.
 *   limit_bytes        v2 memory.max; v1 memory.limit_in_bytes;
 *                      SL_CGSTAT_UNLIMITED when there is no limit.
 *   cache_bytes        v2 memory.stat file; v1 total_cache.
 *   rss_bytes          v2 memory.stat anon; v1 total_rss.
 *   swap_bytes         v2 memory.swap.current; v1 memory.stat total_swap.
 *   oom_events         v2 memory.events oom (times the limit was hit and
 *                      reclaim failed); v1: unknown (no such counter).
 *   oom_kill_events    v2 memory.events oom_kill; v1 memory.oom_control
 *                      oom_kill (kernels >= 4.13). */
struct sl_cgstat_mem {
	uint32_t known; /* SL_MEM_* */
	uint32_t flags; /* SL_MEMF_* */
	uint64_t usage_bytes, working_set_bytes, inactive_file_bytes, peak_bytes, limit_bytes;
	uint64_t cache_bytes, rss_bytes, swap_bytes;
	uint64_t oom_events, oom_kill_events;
};

/* --------------------------------------------------------------- PSI */

/* One line of a pressure file: share of wall time (percent, 0..100) in
 * which some/all non-idle tasks were stalled, averaged over 10/60/300 s,
 * and the cumulative stall time in microseconds (64-bit). */
struct sl_psi_line {
	double avg10, avg60, avg300;
	uint64_t total_usec;
};

/* A pressure file ({cpu,memory,io}.pressure, /proc/pressure/ *). A line the
 * kernel does not print is absent (has_* false), not zero: cpu "full" is
 * absent before 5.13, /proc/pressure/irq has only "full". */
struct sl_cgstat_psi {
	bool has_some, has_full;
	struct sl_psi_line some, full;
};

enum sl_psi_res { SL_PSI_CPU = 0, SL_PSI_MEMORY, SL_PSI_IO, SL_PSI_NRES };

/* ---------------------------------------------------------------- I/O */

/* Known bits of struct sl_cgstat_io. */
enum {
	SL_IO_BYTES = 1u << 0, /* rbytes/wbytes (device rows and totals) */
	SL_IO_OPS = 1u << 1,   /* rios/wios */
};

#define SL_CGSTAT_IO_MAXDEV 32

/* Per-device I/O of a cgroup and its descendants, cumulative. */
struct sl_cgstat_iodev {
	uint32_t major, minor;
	uint64_t rbytes, wbytes; /* bytes read / written */
	uint64_t rios, wios;     /* read / write operations */
};

/* v2 io.stat rbytes/wbytes/rios/wios per MAJ:MIN; v1 blkio.throttle
 * io_service_bytes / io_serviced Read and Write rows. Devices beyond
 * SL_CGSTAT_IO_MAXDEV are counted in ndev_dropped but still summed into
 * the totals. An empty file (no I/O yet) is known with ndev = 0. */
struct sl_cgstat_io {
	uint32_t known; /* SL_IO_* */
	uint32_t ndev, ndev_dropped;
	struct sl_cgstat_iodev dev[SL_CGSTAT_IO_MAXDEV];
	uint64_t rbytes, wbytes, rios, wios; /* sums over every device */
};

/* --------------------------------------------------------------- pids */

enum {
	SL_PIDS_CURRENT = 1u << 0,
	SL_PIDS_MAX = 1u << 1,
};

/* pids.current (tasks, i.e. threads, in the cgroup and descendants) and
 * pids.max (SL_CGSTAT_UNLIMITED for "max"). Same files on v1 and v2. */
struct sl_cgstat_pids {
	uint32_t known; /* SL_PIDS_* */
	uint64_t current, max;
};

/* --------------------------------------------------------------- spec */

/* Known bits of struct sl_cgstat_spec. */
enum {
	SL_SPEC_CPU_QUOTA = 1u << 0,
	SL_SPEC_CPU_PERIOD = 1u << 1,
	SL_SPEC_CPU_SHARES = 1u << 2,
	SL_SPEC_MEM_RESERVATION = 1u << 3,
	SL_SPEC_MEM_SWAP_LIMIT = 1u << 4,
};

/* The limits a container was given (cAdvisor's ContainerSpec, read the way
 * cAdvisor's container/common/helpers.go getSpecInternal reads them).
 *   cpu_quota_usec   v2 cpu.max first field; v1 cpu.cfs_quota_us.
 *                    SL_CGSTAT_UNLIMITED for "max" / -1 (no quota).
 *   cpu_period_usec  v2 cpu.max second field; v1 cpu.cfs_period_us.
 *   cpu_shares       v1 cpu.shares; v2 cpu.weight converted to shares as
 *                    cAdvisor does (sl_cgstat_weight_to_shares).
 *   mem_reservation_bytes  v2 memory.min (cAdvisor reads memory.min, not
 *                    memory.low); v1 memory.soft_limit_in_bytes.
 *   mem_swap_limit_bytes   v2 memory.swap.max (swap alone); v1
 *                    memory.memsw.limit_in_bytes (memory + swap), as read.
 * Byte limits: SL_CGSTAT_UNLIMITED for "max" and the v1 huge values (>=
 * SL_CGSTAT_V1_UNLIMITED_MIN). The memory limit itself is mem.limit_bytes. */
struct sl_cgstat_spec {
	uint32_t known; /* SL_SPEC_* */
	uint64_t cpu_quota_usec, cpu_period_usec, cpu_shares;
	uint64_t mem_reservation_bytes, mem_swap_limit_bytes;
};

/* ---------------------------------------------------------- aggregate */

struct sl_cgstat {
	int version;         /* 2 or 1: which reader filled it */
	uint32_t files_read; /* files opened and read successfully */
	uint32_t malformed;  /* malformed lines ignored, over every file */
	struct sl_cgstat_cpu cpu;
	struct sl_cgstat_mem mem;
	struct sl_cgstat_psi psi[SL_PSI_NRES]; /* indexed by enum sl_psi_res */
	struct sl_cgstat_io io;
	struct sl_cgstat_pids pids;
	struct sl_cgstat_spec spec;
};

/* ------------------------------------------------- generic text parsers */

/* Read an unsigned decimal at *pp (no sign, no leading space), advance *pp
 * past it. Returns false (with *pp untouched) when there is no digit or the
 * value exceeds UINT64_MAX. */
bool sl_cgparse_dec(const char **pp, uint64_t *out);

/* Parse a single-value file ("123\n", or "max\n" for limits). Leading and
 * trailing whitespace is allowed. Returns 0 with *out set, 1 for "max"
 * (*out = SL_CGSTAT_UNLIMITED), -EINVAL for anything else (NULL text,
 * empty, junk, negative, > UINT64_MAX); *out is untouched on error. */
int sl_cgparse_u64(const char *text, uint64_t *out);

/* Parse a flat-keyed file: lines "<key> <u64>" (memory.stat, cpu.stat,
 * memory.events, cpuacct.stat, memory.oom_control). For each line whose key
 * equals keys[i] (n <= 64), stores the value in vals[i] and sets bit i of
 * *found (a repeated key: the last line wins). Lines of any key are checked
 * for shape; blank lines are skipped. Returns the number of malformed lines
 * (not "<key> <u64>"), which are ignored. text NULL: returns 0, finds nothing. */
int sl_cgparse_kv(const char *text, const char *const *keys, size_t n, uint64_t *vals,
		  uint64_t *found);

/* Parse a PSI file ("some avg10=.. avg60=.. avg300=.. total=..", same for
 * "full"; Documentation/accounting/psi.rst). Fills *out (zeroed first);
 * lines other than some/full, or missing a field, are malformed. Averages
 * are parsed without the C locale's help (decimal point always '.').
 * Returns the number of malformed lines. text NULL: all absent, returns 0. */
int sl_cgparse_psi(const char *text, struct sl_cgstat_psi *out);

/* --------------------------------------------------- per-controller text */

/* v2 cpu.stat. Also accepts the v1 cpu.stat spelling (throttled_time, ns)
 * so the same text parser serves both. Zeroes *out first. Returns the
 * number of malformed lines. */
int sl_cgstat_cpu_v2_text(const char *cpu_stat, struct sl_cgstat_cpu *out);

/* v1 files of the cpu and cpuacct controllers (NULL = absent). */
struct sl_cgcpu_v1_text {
	const char *cpuacct_usage; /* ns, single value */
	const char *cpuacct_stat;  /* "user <ticks>\nsystem <ticks>" */
	const char *cpu_stat;      /* nr_periods, nr_throttled, throttled_time (ns) */
};

/* v1 cpu. clk_tck: USER_HZ (sysconf(_SC_CLK_TCK), 100 on every mainstream
 * arch); <= 0 leaves user/system unknown. Conversion is exact integer
 * arithmetic (no overflow below 1.8e13 s of CPU). Zeroes *out first.
 * Returns the number of malformed lines. */
int sl_cgstat_cpu_v1_text(const struct sl_cgcpu_v1_text *in, long clk_tck,
			  struct sl_cgstat_cpu *out);

/* v2 memory files (NULL = absent). */
struct sl_cgmem_v2_text {
	const char *current;      /* memory.current */
	const char *stat;         /* memory.stat */
	const char *peak;         /* memory.peak (>= 5.19, not at the root) */
	const char *max;          /* memory.max */
	const char *swap_current; /* memory.swap.current */
	const char *events;       /* memory.events */
};

/* v2 memory. Without memory.current (the root cgroup) usage = memory.stat
 * anon + file (flag SL_MEMF_USAGE_FROM_STAT; the rule of runc/opencontainers
 * cgroups and the Kubernetes docs). Zeroes *out first. Returns the number
 * of malformed lines (a malformed single-value file counts as one). */
int sl_cgstat_mem_v2_text(const struct sl_cgmem_v2_text *in, struct sl_cgstat_mem *out);

/* v1 memory controller files (NULL = absent). */
struct sl_cgmem_v1_text {
	const char *usage_in_bytes;     /* memory.usage_in_bytes */
	const char *stat;               /* memory.stat (total_* keys) */
	const char *max_usage_in_bytes; /* memory.max_usage_in_bytes */
	const char *limit_in_bytes;     /* memory.limit_in_bytes */
	const char *oom_control;        /* memory.oom_control */
};

/* v1 memory (hierarchical total_* keys of memory.stat). Zeroes *out first.
 * Returns the number of malformed lines. */
int sl_cgstat_mem_v1_text(const struct sl_cgmem_v1_text *in, struct sl_cgstat_mem *out);

/* v2 io.stat: "MAJ:MIN key=value ..."; rbytes/wbytes/rios/wios are used,
 * other keys (dbytes, dios, cost.*) ignored. A line without a valid MAJ:MIN
 * is malformed. NULL text: unknown. Zeroes *out first. Returns the number
 * of malformed lines. */
int sl_cgstat_io_v2_text(const char *io_stat, struct sl_cgstat_io *out);

/* v1 blkio.throttle.io_service_bytes[_recursive] (bytes) and
 * blkio.throttle.io_serviced[_recursive] (ops): "MAJ:MIN <Op> <u64>" rows;
 * Read and Write are used, Sync/Async/Discard/Total rows and the trailing
 * "Total N" line ignored. Either may be NULL (its half stays unknown).
 * Zeroes *out first. Returns the number of malformed lines. */
int sl_cgstat_io_v1_text(const char *service_bytes, const char *serviced,
			 struct sl_cgstat_io *out);

/* pids.current and pids.max (NULL = absent). Zeroes *out first. Returns
 * the number of malformed files (0..2). */
int sl_cgstat_pids_text(const char *current, const char *max, struct sl_cgstat_pids *out);

/* v2 cpu.max: "<quota|max> <period>". Returns 0 with *quota (SL_CGSTAT_
 * UNLIMITED for "max") and *period set, -EINVAL for anything else (NULL,
 * one field, junk, period 0); outputs untouched on error. */
int sl_cgparse_cpu_max(const char *text, uint64_t *quota, uint64_t *period);

/* v1 cpu.cfs_quota_us: "-1" (no quota: 1 with *out = SL_CGSTAT_UNLIMITED) or
 * a decimal (0 with *out set); -EINVAL otherwise. */
int sl_cgparse_cfs_quota(const char *text, uint64_t *out);

/* cgroup v2 cpu.weight [1, 10000] to v1 cpu.shares [2, 262144], cAdvisor's
 * convertCPUWeightToCPULimit: 2 + ((weight - 1) * 262142) / 9999. Returns
 * false for a weight outside [1, 10000]. */
bool sl_cgstat_weight_to_shares(uint64_t weight, uint64_t *shares);

/* v2 spec files (NULL = absent). */
struct sl_cgspec_v2_text {
	const char *cpu_max;    /* cpu.max */
	const char *cpu_weight; /* cpu.weight */
	const char *memory_min; /* memory.min */
	const char *swap_max;   /* memory.swap.max */
};

/* v2 spec. Zeroes *out first. Returns the number of malformed files. */
int sl_cgstat_spec_v2_text(const struct sl_cgspec_v2_text *in, struct sl_cgstat_spec *out);

/* v1 spec files (NULL = absent). */
struct sl_cgspec_v1_text {
	const char *cfs_quota_us;  /* cpu.cfs_quota_us */
	const char *cfs_period_us; /* cpu.cfs_period_us */
	const char *shares;        /* cpu.shares */
	const char *soft_limit;    /* memory.soft_limit_in_bytes */
	const char *memsw_limit;   /* memory.memsw.limit_in_bytes */
};

/* v1 spec; the v1 "unlimited" huge values become SL_CGSTAT_UNLIMITED.
 * Zeroes *out first. Returns the number of malformed files. */
int sl_cgstat_spec_v1_text(const struct sl_cgspec_v1_text *in, struct sl_cgstat_spec *out);

/* ---------------------------------------------------- directory readers */

/* Read one cgroup v2 directory (e.g. /sys/fs/cgroup/kubepods.slice/...):
 * cpu.stat, memory.{current,stat,peak,max,swap.current,events},
 * {cpu,memory,io}.pressure, io.stat, pids.{current,max}, and the spec files
 * cpu.{max,weight}, memory.{min,swap.max}. A file that is
 * missing or unreadable leaves its figures unknown. Zeroes *out, sets
 * version = 2. Files are opened O_NONBLOCK | O_NOFOLLOW and read only when
 * they are regular files (a FIFO or link in a delegated or fixture tree
 * leaves its figures unknown). Returns 0 if the directory could be opened (even if no file
 * was readable: check files_read / known bits), -ENOENT if the directory
 * does not exist (cgroup not created yet or removed), other -errno from
 * open(2), -EINVAL for a NULL/empty path. */
int sl_cgstat_read_v2(const char *dir, struct sl_cgstat *out);

/* The directories of one cgroup in each v1 hierarchy (NULL or "" = that
 * controller is not mounted / not wanted). cpu and cpuacct are usually the
 * same directory (cpu,cpuacct co-mounted). unified: on hybrid hosts the
 * cgroup's v2 directory, used only for the PSI files. */
struct sl_cgstat_v1_dirs {
	const char *memory, *cpu, *cpuacct, *blkio, *pids, *unified;
};

/* Read a v1 (or hybrid) cgroup: cpuacct.{usage,stat}, cpu.stat,
 * memory.{usage_in_bytes,stat,max_usage_in_bytes,limit_in_bytes,oom_control},
 * blkio.throttle.io_service_bytes_recursive / io_serviced_recursive (each
 * falling back to the non-recursive file on kernels without it),
 * pids.{current,max}, the spec files cpu.{cfs_quota_us,cfs_period_us,shares},
 * memory.{soft_limit_in_bytes,memsw.limit_in_bytes}, and
 * {cpu,memory,io}.pressure from `unified`.
 * clk_tck <= 0 means sysconf(_SC_CLK_TCK). Zeroes *out, sets version = 1.
 * Returns 0 if at least one given directory could be opened, -ENOENT if
 * none exists, -EINVAL when dirs is NULL or names no directory. */
int sl_cgstat_read_v1(const struct sl_cgstat_v1_dirs *dirs, long clk_tck, struct sl_cgstat *out);

/* The same readers through a descriptor cache (cgfd.h; NULL = the plain
 * readers above): directories and files stay open across calls and are
 * re-read with pread at offset 0. ino / ino_memory / ino_unified: the
 * directory's st_ino as the caller's walk saw it (0 = unknown): a kept
 * directory opened on another inode (a cgroup re-created under the same
 * name) is dropped and the path opened again. When a kept descriptor shows
 * its cgroup is gone (ENODEV/ENOENT, or nothing readable), the entry is
 * dropped and the whole read done once more on fresh opens, so figures
 * never come from a removed cgroup. Same figures, files_read and returns
 * as the plain readers. */
struct sl_cgfd_cache;
int sl_cgstat_read_v2_cached(struct sl_cgfd_cache *cache, const char *dir, uint64_t ino,
			     struct sl_cgstat *out);
int sl_cgstat_read_v1_cached(struct sl_cgfd_cache *cache, const struct sl_cgstat_v1_dirs *dirs,
			     uint64_t ino_memory, uint64_t ino_unified, long clk_tck,
			     struct sl_cgstat *out);

#endif
