/* Profiles: the data model shared by the samplers (PROF-1, PROF-2/SCHED-4),
 * the symbolizer (PROF-3) and the writers (PROF-4). docs/PROFILING.md.
 *
 * Flow:
 *   sampler (BPF stack ids + counts)  ->  struct sl_raw_profile
 *       (addresses only, leaf first, as bpf_get_stackid() stores them;
 *        include/uapi/linux/bpf.h, kernel/bpf/stackmap.c)
 *   sl_symbolize()                    ->  struct sl_profile
 *       (deduplicated frames, stacks root first, names resolved)
 *   sl_profile_write_*()              ->  pprof | folded | SVG | JSON
 *
 * Units: every time is in nanoseconds (uint64_t); counts are plain numbers
 * of samples (on-CPU) or of switch-outs (off-CPU).
 *
 * Threading: a raw profile and a profile are plain data owned by one thread
 * at a time. A symbolizer is internally locked: one may be shared by every
 * task thread (that is the point of its per-build-id cache).
 */
#ifndef SANDLENS_PROFILE_H
#define SANDLENS_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/prof_format.h"

#define SL_PROF_COMM_LEN 16        /* TASK_COMM_LEN, include/linux/sched.h */
#define SL_PROF_ID_LEN 80          /* = SL_CONTAINER_ID_LEN (src/cgroup/attr.h) */
#define SL_PROF_MAX_DEPTH 127      /* PERF_MAX_STACK_DEPTH, include/uapi/linux/perf_event.h */

/* What a profile measures. The sample types, units and state names of each
 * kind are in ONE table: src/profile/prof_kinds.c (prof_kinds.h). */
enum sl_prof_kind {
	SL_PROF_ON_CPU = 0,      /* values: samples/count, cpu/nanoseconds */
	SL_PROF_OFF_CPU = 1,     /* values: samples/count (switch-outs), off_cpu/nanoseconds */
	SL_PROF_MEM_VIRTUAL = 2, /* mmap/brk: alloc_objects, alloc_space (bytes), inuse_objects, inuse_space */
	SL_PROF_PAGE_FAULTS = 3, /* user page faults (sampled): samples, page_faults, page_fault_bytes */
	SL_PROF_RESIDENT = 4,    /* kmem:rss_stat: samples (flushes), resident_growth, resident_release (bytes) */
	SL_PROF_LOCK_KERNEL = 5, /* lock:contention_*: contentions/count, delay/nanoseconds */
	SL_PROF_FUTEX = 6,       /* futex waits: contentions/count, delay/nanoseconds */
	SL_PROF_NKINDS
};

/* Why a task was off CPU (SCHED-4), decided at sched_switch from prev's
 * state (kernel/sched/core.c __schedule(): prev->__state != TASK_RUNNING
 * means it blocked; TASK_RUNNING means it was preempted and waits on the
 * runqueue). */
enum sl_off_cpu_state {
	SL_OFFCPU_NONE = 0,     /* on-CPU samples */
	SL_OFFCPU_BLOCKED = 1,  /* sleeping: I/O, locks, futex, nanosleep, pipe */
	SL_OFFCPU_RUNQUEUE = 2, /* runnable, waiting for a CPU */
};

/* sl_raw_stack.flags */
#define SL_RAW_USER_LOST 0x1u   /* bpf_get_stackid(user) failed (e.g. -EFAULT): user part unknown */
#define SL_RAW_KERNEL_LOST 0x2u /* bpf_get_stackid(kernel) failed: kernel part unknown */

#define SL_BUILD_ID_MAX 20 /* BPF_BUILD_ID_SIZE, include/uapi/linux/bpf.h (SHA-1 build-ids) */

/* A user frame as (build-id, file offset) instead of an address: what a
 * BPF_F_STACK_BUILD_ID stack map holds (struct bpf_stack_build_id,
 * status BPF_STACK_BUILD_ID_VALID). It names an instruction of one ELF
 * file, whatever process ran it, so it symbolizes after the process has
 * exited (docs/PROFILING.md "Frames of exited processes"). */
struct sl_raw_bid {
	uint8_t len;                 /* build-id bytes; 0: no build-id, the frame is user_ips[i] */
	uint8_t id[SL_BUILD_ID_MAX];
	uint64_t offset;             /* file offset of the instruction in that ELF file */
};

/* One aggregated stack from a sampler. The ip arrays are leaf first (ips[0]
 * is where the task was), exactly as the BPF stack map holds them; at most
 * SL_PROF_MAX_DEPTH each. Zero ips terminate early (as in the stack map). */
struct sl_raw_stack {
	uint32_t pid;                      /* thread-group id (tgid), host pid namespace */
	uint32_t tid;                      /* thread id; 0 when the sampler aggregates by tgid */
	char comm[SL_PROF_COMM_LEN];       /* task comm, NUL terminated */
	const uint64_t *user_ips;          /* n_user entries; may be NULL when n_user == 0 */
	uint32_t n_user;
	/* Optional (NULL: every user frame is an address in user_ips, as
	 * before). n_user entries, leaf first like user_ips: frame i is
	 * user_bid[i] when user_bid[i].len > 0 (user_ips[i] is then ignored
	 * and may be 0), else the address user_ips[i] (status
	 * BPF_STACK_BUILD_ID_IP frames: anonymous/JIT memory, vDSO, a file
	 * whose build-id page was not resident). */
	const struct sl_raw_bid *user_bid;
	const uint64_t *kernel_ips;        /* n_kernel entries; may be NULL when n_kernel == 0 */
	uint32_t n_kernel;
	uint64_t count;                    /* samples (on-CPU) or switch-outs (off-CPU); other kinds: prof_kinds.c */
	uint64_t value_ns;                 /* on-CPU: count * period_ns; off-CPU: total time off CPU;
					    * memory kinds: bytes; lock kinds: ns waited */
	uint64_t extra[2];                 /* kind-specific numbers (prof_kinds.c), 0 for on/off-CPU */
	int off_cpu_state;                 /* enum sl_off_cpu_state; other kinds: the kind's state
					    * (sl_prof_state_name) */
	uint32_t flags;                    /* SL_RAW_* */
	char container_id[SL_PROF_ID_LEN]; /* "" for host / unknown */
};

/* A raw profile. Built with sl_raw_profile_new() + sl_raw_profile_add(),
 * which copy everything they are given; read the fields directly. */
struct sl_raw_profile {
	int kind;             /* enum sl_prof_kind */
	uint64_t start_ns;    /* wall clock (CLOCK_REALTIME), ns since the Unix epoch */
	uint64_t duration_ns; /* how long the sampler ran */
	uint64_t period_ns;   /* on-CPU sampling period (1e9 / hz); 0 for off-CPU; other kinds: the
			       * period in the unit of the kind's period type (page faults: N) */
	size_t n_stacks;
	struct sl_raw_stack *stacks; /* owned; ip arrays owned too */
	size_t cap_;                 /* internal */
};

/* New empty raw profile. Returns NULL on ENOMEM. */
struct sl_raw_profile *sl_raw_profile_new(int kind, uint64_t start_ns, uint64_t duration_ns,
					  uint64_t period_ns);
/* Append a copy of *s (ips copied, depth clipped to SL_PROF_MAX_DEPTH,
 * comm and container_id NUL-terminated). Returns 0 or -ENOMEM. */
int sl_raw_profile_add(struct sl_raw_profile *rp, const struct sl_raw_stack *s);
/* Free rp and everything it owns. NULL is fine. */
void sl_raw_profile_free(struct sl_raw_profile *rp);

/* ---- Symbolized profile ---- */

/* sl_frame.flags */
#define SL_FRAME_KERNEL 0x01u   /* kernel text (kallsyms) */
#define SL_FRAME_UNKNOWN 0x02u  /* no mapping / process gone uncached / kptr_restrict: name is a placeholder */
#define SL_FRAME_NOSYM 0x04u    /* mapping known, no symbol: name is "module+0xoffset" */
#define SL_FRAME_JIT 0x08u      /* from /tmp/perf-<pid>.map */
#define SL_FRAME_PSEUDO 0x10u   /* synthetic frame added by a writer or by sl_symbolize (comm, state) */

/* One distinct frame. Frames are deduplicated across the whole profile:
 * same module (by build-id, else path) + same file offset = same frame,
 * even in different processes. Strings live in the profile. */
struct sl_frame {
	const char *name;     /* display name, never NULL: "func", "module+0x1a2b", "[unknown]", "[kernel]" */
	const char *function; /* symbol name, NULL when unresolved */
	const char *module;   /* mapping path / "[kernel]" / "[vdso]" / "[anon]" / "[jit]", NULL when unknown */
	const char *build_id; /* lowercase hex GNU build-id of the module, NULL when none */
	uint64_t address;     /* a runtime address of this frame (first one seen) */
	uint64_t module_offset; /* user: file offset in the module; kernel: the address itself */
	uint64_t sym_offset;  /* address - symbol start; 0 when function == NULL */
	uint64_t sym_addr;    /* symbol start in the module's ELF address space (kernel: kallsyms address) */
	uint32_t flags;       /* SL_FRAME_* */
};

/* One stack of a profile: indices into sl_profile.frames, ROOT FIRST
 * (frames[0] is the outermost caller, frames[n-1] the leaf). The kernel
 * part, when there is one, comes after the user part (the kernel runs on
 * behalf of the user code that entered it). */
struct sl_sample {
	uint32_t pid;
	uint32_t tid;
	char comm[SL_PROF_COMM_LEN];
	char container_id[SL_PROF_ID_LEN];
	int off_cpu_state;   /* enum sl_off_cpu_state; other kinds: the kind's state (prof_kinds.h) */
	uint32_t nframes;
	uint32_t *frames;    /* owned by the profile */
	uint64_t count;
	uint64_t value_ns;   /* the kind's value: ns (time kinds) or bytes (memory kinds) */
	uint64_t extra[2];   /* kind-specific (prof_kinds.c) */
};

struct sl_profile {
	int kind;             /* enum sl_prof_kind */
	uint64_t start_ns;    /* as in the raw profile */
	uint64_t duration_ns;
	uint64_t period_ns;
	size_t nsamples;
	struct sl_sample *samples;
	size_t nframes;
	struct sl_frame *frames;
	void *priv_;          /* internal: string pool, dedup index */
};

/* Free p and everything it owns. NULL is fine. */
void sl_profile_free(struct sl_profile *p);
/* Sum of count over all samples. */
uint64_t sl_profile_total_count(const struct sl_profile *p);
/* Sum of value_ns over all samples. */
uint64_t sl_profile_total_ns(const struct sl_profile *p);

/* ---- Symbolizer ---- */

struct sl_sym_config {
	const char *proc_root;     /* default "/proc"; tests point it at a fake tree */
	const char *kallsyms_path; /* default "/proc/kallsyms"; "" disables kernel symbols */
	const char *debug_root;    /* default "/usr/lib/debug" (build-id and debuglink lookups) */
	size_t max_pids;           /* process snapshots kept, default 1024; the oldest is evicted */
	size_t max_modules;        /* ELF modules (per build-id/path) kept, default 512 */
	/* heap the kept modules may hold (their symbol tables and names), bytes,
	 * default 16 MiB: least recently used modules that no snapshot uses
	 * are evicted past either cap (a compiler's symbol table is MBs) */
	size_t max_module_bytes;
	int no_debuginfo;          /* 1: do not look for separate debug files (nor debuginfod) */
	/* debuginfod (libdebuginfod), off unless debuginfod_urls is set: the
	 * debuginfo, else the executable, of a build-id found nowhere else.
	 * Sets DEBUGINFOD_URLS / DEBUGINFOD_CACHE_PATH in the environment at
	 * sl_symbolizer_new (libdebuginfod reads them there). */
	const char *debuginfod_urls;   /* space-separated server URLs; NULL/"" = off */
	const char *debuginfod_cache;  /* cache directory; NULL/"" = libdebuginfod's default */
	unsigned debuginfod_timeout_s; /* whole download of one file, default 10 s */
};

struct sl_symbolizer;

/* Create a symbolizer. cfg may be NULL (all defaults). /proc/kallsyms is
 * read lazily, on the first kernel frame. Returns NULL on ENOMEM. */
struct sl_symbolizer *sl_symbolizer_new(const struct sl_sym_config *cfg);
/* Free everything. NULL is fine. */
void sl_symbolizer_free(struct sl_symbolizer *s);

/* Snapshot /proc/<pid>/maps now and open/index the executable ELF files
 * (through /proc/<pid>/map_files or /proc/<pid>/root so container, deleted
 * and memfd files work) and the JIT map /tmp/perf-<nspid>.map (inside the
 * process's root), so that stacks of pid can be symbolized after it exits.
 * Call it when a sampler first sees a pid. Calling again refreshes the
 * snapshot (after dlopen / exec). Files are opened non-blocking, regular
 * files only, size-bounded, inside the process's root (docs/PROFILING.md
 * "Files from other users"); no lock another task needs is held while they
 * are read. Returns 0, -ESRCH when the process is
 * gone, -EACCES/-EPERM when its maps cannot be read, -ENOMEM. */
int sl_symbolizer_cache_pid(struct sl_symbolizer *s, int pid);
/* Index the ELF file at path (as the process sees it: opened inside
 * /proc/<pid>/root with sl_sym_open rules, symlinks followed inside that
 * root) by its build-id, so that build-id frames (struct sl_raw_bid) of it
 * symbolize after every process that ran it is gone. pids: processes whose
 * root to try in turn (e.g. the exec'ing process, then its parent). The
 * module stays until evicted (max_modules, least recently used first).
 * Returns 0, -EINVAL (not an ELF file), -ENOMEM, or the open error of the
 * last pid (-ENOENT, -ESRCH...). */
int sl_symbolizer_index_file(struct sl_symbolizer *s, const int *pids, size_t npids, const char *path);
/* Drop the snapshot of pid (its ELF modules stay in the per-build-id cache). */
void sl_symbolizer_forget_pid(struct sl_symbolizer *s, int pid);

/* Symbolize rp. Pids without a snapshot are snapshotted now when still
 * alive; otherwise their address frames are "[unknown]" (SL_FRAME_UNKNOWN).
 * Build-id frames (sl_raw_stack.user_bid) need no process: the build-id
 * index (modules of every snapshot and sl_symbolizer_index_file), else
 * <debug_root>/.build-id/, else debuginfod when configured; a build-id
 * found nowhere gives "[build-id:<16 hex>]+0xOFF" (SL_FRAME_NOSYM).
 * User frames above a process/thread start function (_start,
 * __libc_start_main, __libc_start_call_main, start_thread, clone3, ...:
 * docs/PROFILING.md) are dropped: a frame-pointer walk there reads garbage.
 * Kernel frames come from kallsyms; when kallsyms addresses are hidden
 * (kptr_restrict: all zero) every kernel frame is "[kernel]" with
 * SL_FRAME_UNKNOWN|SL_FRAME_KERNEL. Never fails because of a bad ELF file:
 * such frames become "module+0xoffset". Returns NULL only on ENOMEM. */
struct sl_profile *sl_symbolize(struct sl_symbolizer *s, const struct sl_raw_profile *rp);

struct sl_sym_stats {
	uint64_t pids_cached;    /* snapshots currently held */
	uint64_t modules_cached; /* ELF modules currently held */
	uint64_t modules_bytes;  /* their heap (symbols and names), bytes */
	uint64_t elf_errors;     /* ELF files that could not be opened/parsed */
	uint64_t frames_resolved;   /* frames (ips) with a symbol name, cumulative */
	uint64_t frames_unresolved; /* frames shown as module+0xoff / [unknown], cumulative */
	int kallsyms_state;      /* 0 not loaded, 1 loaded with addresses, -1 hidden (kptr_restrict), -2 unreadable */
};
/* Copy the counters. */
void sl_symbolizer_stats(struct sl_symbolizer *s, struct sl_sym_stats *out);

/* ---- Writers ---- */

/* enum sl_prof_format, sl_prof_format_from_name/_from_path/_mime:
 * src/common/prof_format.h (shared with the CLI). */

/* Which number the folded writer and the flame graph use. */
enum sl_prof_value {
	SL_VALUE_DEFAULT = 0, /* per kind (prof_kinds.c): on-CPU count; off-CPU, locks microseconds; memory bytes */
	SL_VALUE_COUNT = 1,
	SL_VALUE_NS = 2,
	SL_VALUE_US = 3,
	SL_VALUE_BYTES = 4,   /* the value field, in bytes (memory kinds) */
};

/* Kernel addresses (KASLR) in results. Only the pprof format carries raw
 * addresses (Location.address, Mapping ranges); the others carry names. A
 * result is rendered with kaddrs_visible = 0 (kernel addresses zeroed)
 * unless the caller it goes to could read them from /proc/kallsyms itself
 * (sl_kaddrs_visible). */

/* Whether kernel addresses may be shown to a caller, under the current
 * kernel.kptr_restrict, read now from <sysctl_dir>/kptr_restrict (NULL:
 * "/proc/sys/kernel"; tests give a fake directory), as the kernel decides
 * for /proc/kallsyms (kallsyms_show_value): 0 visible to a caller with
 * CAP_SYSLOG, and to every caller when kernel.perf_event_paranoid
 * (<sysctl_dir>/perf_event_paranoid) is <= 1; 1 visible to a caller with
 * CAP_SYSLOG only; 2 (or any other value, or an unreadable file) never.
 * caller_cap_syslog: the caller has CAP_SYSLOG (root). Returns 1 or 0. */
int sl_kaddrs_visible(const char *sysctl_dir, int caller_cap_syslog);

/* Write p in format fmt (defaults for every option) to out; kaddrs_visible
 * as for sl_profile_write_pprof. Returns 0, or -EINVAL (bad fmt), -EIO
 * (write error), -ENOMEM. */
int sl_profile_write(const struct sl_profile *p, int fmt, int kaddrs_visible, FILE *out);

/* pprof: gzip'd profile.proto. sample_type, default_sample_type,
 * period_type (period = period_ns) and the state label come from the kind's
 * entry of the kinds table (prof_kinds.h): e.g. [samples/count,
 * cpu/nanoseconds] (on-CPU), [samples/count, off_cpu/nanoseconds]
 * (off-CPU), [alloc_objects/count, alloc_space/bytes, inuse_objects/count,
 * inuse_space/bytes] (mem_virtual), [contentions/count, delay/nanoseconds]
 * (lock kinds). Functions, locations and mappings are deduplicated;
 * labels: pid, tid, comm, container_id, the kind's state label. kaddrs_visible 0: kernel locations
 * get address 0 (and the kernel mapping [0, 1)), so no kernel address is in
 * the output; 1: the kernel addresses (sl_kaddrs_visible decides).
 * Returns 0 / -EIO / -ENOMEM. */
int sl_profile_write_pprof(const struct sl_profile *p, int kaddrs_visible, FILE *out);

/* Folded stacks: one line per distinct stack, root first, frames joined by
 * ';', a space, the value (enum sl_prof_value). The root frame is the comm;
 * for off-CPU a second frame "[blocked]" or "[runqueue]" follows it.
 * Identical stacks from different pids/tids are merged. Lines are sorted.
 * With SL_VALUE_COUNT the values sum to sl_profile_total_count(). */
int sl_profile_write_folded(const struct sl_profile *p, int value, FILE *out);

struct sl_flame_opts {
	const char *title;  /* default: the kind's title (prof_kinds.h) */
	int value;          /* enum sl_prof_value, default SL_VALUE_DEFAULT */
	int width;          /* px, default 1200 */
	int top_n;          /* rows of the hottest-symbols table, default 20 */
	double min_width_px;/* frames narrower than this are not drawn, default 0.1 */
	/* Title metadata (SVG subtitle line, HTML header); NULL / 0 = unknown,
	 * not shown. Plain text: the writers escape it. */
	const char *container; /* container id (or a list) the profile is of */
	const char *pod;       /* pod (uid or namespace/name) */
	const char *host;      /* node host name */
	uint64_t start_ns;     /* time range, CLOCK_REALTIME ns since the epoch; */
	uint64_t end_ns;       /* 0 = the profile's start_ns / start_ns + duration_ns */
	const char *sample_type; /* e.g. "cpu samples"; default from the kind and value */
	int diff_raw;          /* diffs: 1 = folded base column unscaled (see sl_profile_write_diff) */
};
/* SVG flame graph (root at the bottom), same stacks as the folded writer,
 * with <title> hover text per frame (name, value, percent) and a table of
 * the hottest symbols by self and total value. opts may be NULL. */
int sl_profile_write_svg(const struct sl_profile *p, const struct sl_flame_opts *opts, FILE *out);

/* Self-contained interactive HTML flame graph (docs/PROFILING.md "HTML"):
 * the merged call tree and the hottest symbols embedded as JSON in a
 * non-executed <script type="application/json"> block (every '<', '>', '&',
 * U+2028/U+2029 and non-ASCII character \u-escaped, invalid UTF-8 bytes
 * as '?'), one inline script and one inline style whose SHA-256 hashes the
 * page's <meta> Content-Security-Policy allows (sl_flame_html_csp()); no
 * network access, no innerHTML of data. Search with highlight and matched
 * percentage, click to zoom, hover details, the hot-symbol table, a title
 * with opts' metadata. opts may be NULL. 0 / -EIO / -ENOMEM. */
int sl_profile_write_html(const struct sl_profile *p, const struct sl_flame_opts *opts, FILE *out);

/* The Content-Security-Policy the HTML flame graph needs (its own inline
 * script and style by hash, nothing else: default-src 'none'), for the
 * HTTP header of an answer that carries it. Static string. */
const char *sl_flame_html_csp(void);

/* sl_profile_write with writer options (NULL = defaults): opts go to the
 * SVG and HTML writers, opts->value to folded too. */
int sl_profile_write_opts(const struct sl_profile *p, int fmt, int kaddrs_visible,
			  const struct sl_flame_opts *opts, FILE *out);

/* Differential flame graph of cur against base (Brendan Gregg's
 * differential flame graphs, difffolded.pl + flamegraph.pl). Both profiles
 * are merged into one call tree by path (comm, [state], frame names);
 * widths are cur's values; a node's delta is cur - base * (C / B), C and B
 * the two totals (base normalized to cur's total, as difffolded.pl -n), so
 * a frame that kept its share is neutral. Colour: red = grew, blue =
 * shrank, intensity |delta| / max |delta| over all frames. Frames only in
 * base have width 0 (not drawn; they are in the hot table of html).
 *  SL_FMT_HTML: the HTML page of sl_profile_write_html in diff mode (hover:
 *               base, base normalized, cur, delta; hot table by |delta|);
 *  SL_FMT_SVG:  the SVG flame graph with diff colours and hover text;
 *  SL_FMT_FOLDED: "stack BASE CUR" lines (difffolded.pl's output, the
 *               input of flamegraph.pl), one per stack of either profile,
 *               sorted; BASE scaled to cur's total and rounded unless
 *               opts->diff_raw.
 * The value (opts->value) is resolved per profile; base and cur must be of
 * the same kind. Returns 0, -EINVAL (another fmt, kinds differ, NULL
 * profile), -EIO, -ENOMEM. */
int sl_profile_write_diff(const struct sl_profile *base, const struct sl_profile *cur, int fmt,
			  const struct sl_flame_opts *opts, FILE *out);

/* JSON document: {"kind","start_ns","duration_ns","period_ns","unit",
 * "total_count","total_ns","top":[{function,module,self,total}...],
 * "tree":{name,value,children:[...]}} (docs/PROFILING.md). */
int sl_profile_write_json(const struct sl_profile *p, FILE *out);

#endif
