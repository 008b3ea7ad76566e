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

enum sl_prof_kind {
	SL_PROF_ON_CPU = 0,  /* values: samples/count, cpu/nanoseconds */
	SL_PROF_OFF_CPU = 1, /* values: samples/count (switch-outs), off_cpu/nanoseconds */
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
	uint64_t count;                    /* samples (on-CPU) or switch-outs (off-CPU) */
	uint64_t value_ns;                 /* on-CPU: count * period_ns; off-CPU: total time off CPU */
	int off_cpu_state;                 /* enum sl_off_cpu_state */
	uint32_t flags;                    /* SL_RAW_* */
	char container_id[SL_PROF_ID_LEN]; /* "" for host / unknown */
};

/* A raw profile. Built with sl_raw_profile_new() + sl_raw_profile_add(),
 * which copy everything they are given; read the fields directly. */
struct sl_raw_profile {
	int kind;             /* enum sl_prof_kind */
	uint64_t start_ns;    /* wall clock (CLOCK_REALTIME), ns since the Unix epoch */
	uint64_t duration_ns; /* how long the sampler ran */
	uint64_t period_ns;   /* on-CPU sampling period (1e9 / hz); 0 for off-CPU */
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
	int off_cpu_state;   /* enum sl_off_cpu_state */
	uint32_t nframes;
	uint32_t *frames;    /* owned by the profile */
	uint64_t count;
	uint64_t value_ns;
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
	SL_VALUE_DEFAULT = 0, /* on-CPU: count; off-CPU: microseconds */
	SL_VALUE_COUNT = 1,
	SL_VALUE_NS = 2,
	SL_VALUE_US = 3,
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

/* pprof: gzip'd profile.proto. sample_type = [samples/count,
 * cpu/nanoseconds] (on-CPU) or [samples/count, off_cpu/nanoseconds]
 * (off-CPU); period_type cpu/nanoseconds with period = period_ns (on-CPU).
 * Functions, locations and mappings are deduplicated; labels: pid, tid,
 * comm, container_id, off_cpu_state. kaddrs_visible 0: kernel locations
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
	const char *title;  /* default "On-CPU profile" / "Off-CPU profile" */
	int value;          /* enum sl_prof_value, default SL_VALUE_DEFAULT */
	int width;          /* px, default 1200 */
	int top_n;          /* rows of the hottest-symbols table, default 20 */
	double min_width_px;/* frames narrower than this are not drawn, default 0.1 */
};
/* SVG flame graph (root at the bottom), same stacks as the folded writer,
 * with <title> hover text per frame (name, value, percent) and a table of
 * the hottest symbols by self and total value. opts may be NULL. */
int sl_profile_write_svg(const struct sl_profile *p, const struct sl_flame_opts *opts, FILE *out);

/* JSON document: {"kind","start_ns","duration_ns","period_ns","unit",
 * "total_count","total_ns","top":[{function,module,self,total}...],
 * "tree":{name,value,children:[...]}} (docs/PROFILING.md). */
int sl_profile_write_json(const struct sl_profile *p, FILE *out);

#endif
