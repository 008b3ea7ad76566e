/* The profile kinds table (prof_kinds.h). Sample type names follow pprof's
 * conventions where one exists: Go's heap profile (alloc_objects/count,
 * alloc_space/bytes, inuse_objects/count, inuse_space/bytes) and mutex
 * profile (contentions/count, delay/nanoseconds), as
 * github.com/google/pprof and runtime/pprof write them. */
#include "profile/prof_kinds.h"
#include "sandlens/task_abi.h"

#include <string.h>

static const char *offcpu_state(uint32_t st)
{
	return st == SL_OFFCPU_RUNQUEUE ? "runqueue" : st == SL_OFFCPU_BLOCKED ? "blocked" : "off-cpu";
}

static const char *memv_state(uint32_t st)
{
	return st == SL_MEMV_MMAP_ANON ? "mmap" : st == SL_MEMV_MMAP_FILE ? "mmap_file" : st == SL_MEMV_BRK ? "brk" : "other";
}

static const char *pf_state(uint32_t st)
{
	return st == SL_PF_WRITE ? "write" : st == SL_PF_EXEC ? "instr_fetch" : "read";
}

/* enum of include/linux/mm_types_task.h (MM_FILEPAGES ... MM_SHMEMPAGES) */
static const char *rss_state(uint32_t st)
{
	static const char *const n[] = {"file_pages", "anon_pages", "swap_entries", "shmem_pages"};
	return st < 4 ? n[st] : "other";
}

/* FUTEX_* commands (include/uapi/linux/futex.h) */
static const char *futex_state(uint32_t st)
{
	switch (st) {
	case 0: return "wait";
	case 6: return "lock_pi";
	case 9: return "wait_bitset";
	case 11: return "wait_requeue_pi";
	case 13: return "lock_pi2";
	default: return "other";
	}
}

static const struct sl_prof_kind_info kinds[SL_PROF_NKINDS] = {
	[SL_PROF_ON_CPU] = {
		.kind = SL_PROF_ON_CPU, .name = "on_cpu", .title = "On-CPU profile", .ntypes = 2,
		.types = {{"samples", "count", SL_PF_COUNT}, {"cpu", "nanoseconds", SL_PF_VALUE}},
		.default_type = 1, .period_type = 1, .value_default = SL_VALUE_COUNT,
		.count_text = "sample count", .value_text = "CPU time",
	},
	[SL_PROF_OFF_CPU] = {
		.kind = SL_PROF_OFF_CPU, .name = "off_cpu", .title = "Off-CPU profile", .ntypes = 2,
		.types = {{"samples", "count", SL_PF_COUNT}, {"off_cpu", "nanoseconds", SL_PF_VALUE}},
		.default_type = 1, .period_type = 1, .value_default = SL_VALUE_US,
		.count_text = "switch-outs", .value_text = "time off CPU",
		.state_label = "off_cpu_state", .state_frame = 1, .state_name = offcpu_state,
	},
	[SL_PROF_MEM_VIRTUAL] = {
		.kind = SL_PROF_MEM_VIRTUAL, .name = "mem_virtual", .title = "Virtual memory allocations (mmap, brk)",
		.ntypes = 4,
		.types = {{"alloc_objects", "count", SL_PF_COUNT}, {"alloc_space", "bytes", SL_PF_VALUE},
			  {"inuse_objects", "count", SL_PF_EXTRA0}, {"inuse_space", "bytes", SL_PF_EXTRA1}},
		.default_type = 1, .period_type = 1, .value_default = SL_VALUE_BYTES,
		.count_text = "allocations", .value_text = "bytes mapped",
		.state_label = "alloc", .state_frame = 1, .state_name = memv_state,
	},
	[SL_PROF_PAGE_FAULTS] = {
		.kind = SL_PROF_PAGE_FAULTS, .name = "page_faults", .title = "User page faults (physical allocations)",
		.ntypes = 3,
		.types = {{"samples", "count", SL_PF_COUNT}, {"page_faults", "count", SL_PF_EXTRA0},
			  {"page_fault_bytes", "bytes", SL_PF_VALUE}},
		.default_type = 2, .period_type = 1, .value_default = SL_VALUE_BYTES,
		.count_text = "samples", .value_text = "bytes faulted in (estimated)",
		.state_label = "access", .state_frame = 0, .state_name = pf_state,
	},
	[SL_PROF_RESIDENT] = {
		.kind = SL_PROF_RESIDENT, .name = "resident", .title = "Resident memory growth (rss_stat)",
		.ntypes = 3,
		.types = {{"samples", "count", SL_PF_COUNT}, {"resident_growth", "bytes", SL_PF_VALUE},
			  {"resident_release", "bytes", SL_PF_EXTRA0}},
		.default_type = 1, .period_type = 1, .value_default = SL_VALUE_BYTES,
		.count_text = "counter moves", .value_text = "resident bytes grown",
		.state_label = "rss_member", .state_frame = 1, .state_name = rss_state,
	},
	[SL_PROF_LOCK_KERNEL] = {
		.kind = SL_PROF_LOCK_KERNEL, .name = "lock_kernel", .title = "Kernel lock contention",
		.ntypes = 2,
		.types = {{"contentions", "count", SL_PF_COUNT}, {"delay", "nanoseconds", SL_PF_VALUE}},
		.default_type = 1, .period_type = 0, .value_default = SL_VALUE_US,
		.count_text = "contentions", .value_text = "time waiting for kernel locks",
		.state_label = "lock_type", .state_frame = 1, .state_name = sl_prof_lock_type,
	},
	[SL_PROF_FUTEX] = {
		.kind = SL_PROF_FUTEX, .name = "futex", .title = "User-space lock waits (futex)",
		.ntypes = 2,
		.types = {{"contentions", "count", SL_PF_COUNT}, {"delay", "nanoseconds", SL_PF_VALUE}},
		.default_type = 1, .period_type = 0, .value_default = SL_VALUE_US,
		.count_text = "waits", .value_text = "time waiting in futex()",
		.state_label = "futex_op", .state_frame = 0, .state_name = futex_state,
	},
};

const struct sl_prof_kind_info *sl_prof_kind_info(int kind)
{
	if (kind < 0 || kind >= SL_PROF_NKINDS)
		kind = SL_PROF_ON_CPU;
	return &kinds[kind];
}

int sl_prof_kind_parse(const char *name)
{
	for (int i = 0; name && i < SL_PROF_NKINDS; i++)
		if (!strcmp(kinds[i].name, name))
			return i;
	return -1;
}

size_t sl_prof_kind_count(void) { return SL_PROF_NKINDS; }

uint64_t sl_prof_field_of(const struct sl_sample *s, int field)
{
	switch (field) {
	case SL_PF_VALUE: return s->value_ns;
	case SL_PF_EXTRA0: return s->extra[0];
	case SL_PF_EXTRA1: return s->extra[1];
	default: return s->count;
	}
}

const char *sl_prof_state_name(int kind, uint32_t state)
{
	const struct sl_prof_kind_info *k = sl_prof_kind_info(kind);
	return k->state_name ? k->state_name(state) : NULL;
}

/* Every state name of the table with its frame form. */
#define F(x) {x, "[" x "]"}
static const char *const state_frames[][2] = {
	F("off-cpu"), F("blocked"), F("runqueue"), F("mmap"), F("mmap_file"), F("brk"), F("read"),
	F("write"), F("instr_fetch"), F("file_pages"), F("anon_pages"), F("swap_entries"), F("shmem_pages"),
	F("semaphore"), F("spinlock"), F("rwlock:R"), F("rwlock:W"), F("rwsem:R"), F("rwsem:W"),
	F("rt-mutex"), F("rwlock-rt:R"), F("rwlock-rt:W"), F("pcpu-sem:R"), F("pcpu-sem:W"), F("mutex"),
	F("mutex-spin"), F("wait"), F("lock_pi"), F("wait_bitset"), F("wait_requeue_pi"), F("lock_pi2"),
};
#undef F

const char *sl_prof_state_frame(int kind, uint32_t state)
{
	const char *n = sl_prof_state_name(kind, state);
	if (!n)
		return NULL;
	for (size_t i = 0; i < sizeof(state_frames) / sizeof(state_frames[0]); i++)
		if (!strcmp(state_frames[i][0], n))
			return state_frames[i][1];
	return "[other]";
}

const char *sl_prof_width_text(int kind, int mode)
{
	const struct sl_prof_kind_info *k = sl_prof_kind_info(kind);
	return mode == SL_VALUE_COUNT ? k->count_text : k->value_text;
}

const char *sl_prof_lock_type(uint32_t f)
{
	/* the names of tools/perf/builtin-lock.c (lock_type_table), except
	 * that a mutex waited for by optimistic spinning is "mutex-spin" */
	static const struct {
		uint32_t flags;
		const char *name;
	} t[] = {
		{0, "semaphore"},
		{SL_LCB_F_SPIN, "spinlock"},
		{SL_LCB_F_SPIN | SL_LCB_F_READ, "rwlock:R"},
		{SL_LCB_F_SPIN | SL_LCB_F_WRITE, "rwlock:W"},
		{SL_LCB_F_READ, "rwsem:R"},
		{SL_LCB_F_WRITE, "rwsem:W"},
		{SL_LCB_F_RT, "rt-mutex"},
		{SL_LCB_F_RT | SL_LCB_F_READ, "rwlock-rt:R"},
		{SL_LCB_F_RT | SL_LCB_F_WRITE, "rwlock-rt:W"},
		{SL_LCB_F_PERCPU | SL_LCB_F_READ, "pcpu-sem:R"},
		{SL_LCB_F_PERCPU | SL_LCB_F_WRITE, "pcpu-sem:W"},
		{SL_LCB_F_MUTEX, "mutex"},
		{SL_LCB_F_MUTEX | SL_LCB_F_SPIN, "mutex-spin"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].flags == f)
			return t[i].name;
	return "other";
}

uint64_t sl_prof_pf_faults(uint64_t samples, uint64_t period)
{
	if (period && samples > UINT64_MAX / period)
		return UINT64_MAX;
	return samples * period;
}

uint64_t sl_prof_pf_bytes(uint64_t samples, uint64_t period, uint64_t page_size)
{
	uint64_t f = sl_prof_pf_faults(samples, period);
	if (page_size && f > UINT64_MAX / page_size)
		return UINT64_MAX;
	return f * page_size;
}
