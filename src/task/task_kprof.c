/* Memory and lock profile tasks: their BPF objects (task_kprof.h). */
#include "task/task_kprof.h"
#include "common/json.h"
#include "profile/sampler_util.h"
#include "task/task.h"
#include "task/task_bpf.h"
#include "profile/profile.h"
#include "profile/prof_kinds.h"
#include "sandlens/task_abi.h"
#include "memprof.skel.h"
#include "lockprof.skel.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STACK_DEPTH SL_STACK_DEPTH
#define MAX_LINKS 8

struct sl_kprof {
	int type;
	uint32_t fault_period;
	uint64_t page_size;
	struct memprof_bpf *mem;
	struct lockprof_bpf *lock;
	int nlinks;
	struct bpf_link *links[MAX_LINKS];
	int counts_fd, stacks_fd, stats_fd;
};

int sl_kprof_is_type(int type)
{
	return type >= SL_TASK_PROFILE_MEM_VIRTUAL && type <= SL_TASK_PROFILE_FUTEX;
}

/* A hook of a type: a syscall tracepoint (tracefs) or a raw tracepoint
 * attached with tp_btf (kernel BTF). */
struct hook {
	const char *cat, *name;
	int btf;          /* tp_btf: btf_trace_<name> must exist */
	const char *need; /* what provides it */
};

static const struct hook mem_virtual_hooks[] = {
	{"syscalls", "sys_enter_mmap", 0, "CONFIG_FTRACE_SYSCALLS"},
	{"syscalls", "sys_exit_mmap", 0, "CONFIG_FTRACE_SYSCALLS"},
	{"syscalls", "sys_enter_munmap", 0, "CONFIG_FTRACE_SYSCALLS"},
	{"syscalls", "sys_exit_munmap", 0, "CONFIG_FTRACE_SYSCALLS"},
	{"syscalls", "sys_enter_brk", 0, "CONFIG_FTRACE_SYSCALLS"},
	{"syscalls", "sys_exit_brk", 0, "CONFIG_FTRACE_SYSCALLS"},
	{NULL, NULL, 0, NULL}};
static const struct hook pf_hooks[] = {
	{"exceptions", "page_fault_user", 1, "x86 (arch/x86/include/asm/trace/exceptions.h) and kernel BTF"},
	{NULL, NULL, 0, NULL}};
static const struct hook rss_hooks[] = {
	{"kmem", "rss_stat", 1, "Linux 6.2+ (rss_stat(mm, member) over a percpu_counter) and kernel BTF"},
	{NULL, NULL, 0, NULL}};
static const struct hook lock_hooks[] = {
	{"lock", "contention_begin", 1, "Linux 5.19+ (include/trace/events/lock.h) and kernel BTF"},
	{"lock", "contention_end", 1, "Linux 5.19+ (include/trace/events/lock.h) and kernel BTF"},
	{NULL, NULL, 0, NULL}};
static const struct hook futex_hooks[] = {
	{"syscalls", "sys_enter_futex", 0, "CONFIG_FTRACE_SYSCALLS"},
	{"syscalls", "sys_exit_futex", 0, "CONFIG_FTRACE_SYSCALLS"},
	{NULL, NULL, 0, NULL}};

static const struct hook *hooks_of(int type)
{
	switch (type) {
	case SL_TASK_PROFILE_MEM_VIRTUAL: return mem_virtual_hooks;
	case SL_TASK_PROFILE_PAGE_FAULTS: return pf_hooks;
	case SL_TASK_PROFILE_RESIDENT: return rss_hooks;
	case SL_TASK_PROFILE_LOCK_KERNEL: return lock_hooks;
	case SL_TASK_PROFILE_FUTEX: return futex_hooks;
	default: return NULL;
	}
}

static int tracefs_has(const char *cat, const char *name)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char p[256];
	for (size_t i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/events/%s/%s", roots[i], cat, name);
		if (faccessat(AT_FDCWD, p, F_OK, AT_EACCESS) == 0)
			return 1;
	}
	return 0;
}

int sl_kprof_check(int type, char *why, size_t len)
{
	const struct hook *h = hooks_of(type);
	struct btf *vm = NULL;
	int rc = 0;

	if (!h) {
		snprintf(why, len, "not a memory or lock profile type");
		return -EINVAL;
	}
	for (; h->cat && !rc; h++) {
		if (h->btf) {
			char tn[128];
			if (!vm && !(vm = btf__load_vmlinux_btf())) {
				snprintf(why, len, "tracepoint %s:%s: no kernel BTF (/sys/kernel/btf/vmlinux) for tp_btf",
					 h->cat, h->name);
				rc = -ENOENT;
				break;
			}
			snprintf(tn, sizeof(tn), "btf_trace_%s", h->name);
			if (btf__find_by_name_kind(vm, tn, BTF_KIND_TYPEDEF) < 0) {
				snprintf(why, len, "tracepoint %s:%s not in this kernel (needs %s)", h->cat, h->name,
					 h->need);
				rc = -ENOENT;
			}
		} else if (!tracefs_has(h->cat, h->name)) {
			snprintf(why, len, "tracepoint %s:%s not found in tracefs (needs %s; tracefs mounted?)", h->cat,
				 h->name, h->need);
			rc = -ENOENT;
		}
	}
	btf__free(vm);
	return rc;
}

const char *sl_kprof_details(int type)
{
	switch (type) {
	case SL_TASK_PROFILE_MEM_VIRTUAL:
		return "mmap/munmap/brk syscall tracepoints: bytes of address space mapped per user stack, netted by munmap";
	case SL_TASK_PROFILE_PAGE_FAULTS:
		return "exceptions:page_fault_user, every fault_period-th fault per CPU: faults and bytes per user stack";
	case SL_TASK_PROFILE_RESIDENT:
		return "kmem:rss_stat: resident growth (file, anon, shmem pages) per user stack of the task that grew it";
	case SL_TASK_PROFILE_LOCK_KERNEL:
		return "lock:contention_begin/end: kernel lock wait time per kernel+user stack and lock type";
	case SL_TASK_PROFILE_FUTEX:
		return "futex(2) FUTEX_WAIT*/LOCK_PI* waits: wait time per user stack (user-space lock contention)";
	default:
		return "";
	}
}

static int attach(struct sl_kprof *k, struct bpf_program *p, const char *what, char *err, size_t errlen)
{
	struct bpf_link *l;
	if (k->nlinks == MAX_LINKS) {
		snprintf(err, errlen, "attach %s: too many links", what);
		return -E2BIG;
	}
	l = bpf_program__attach(p);
	if (!l) {
		int e = errno;
		snprintf(err, errlen, "attach %s: %s", what, strerror(e));
		return -e;
	}
	k->links[k->nlinks++] = l;
	return 0;
}

static void set_sizes(struct bpf_map *stacks, struct bpf_map *counts, const struct sl_task_bpf_opts *o)
{
	if (o->stack_entries)
		bpf_map__set_max_entries(stacks, o->stack_entries);
	if (o->count_entries)
		bpf_map__set_max_entries(counts, o->count_entries);
}

static int open_mem(struct sl_kprof *k, const struct sl_task_bpf_opts *o, int att, char *err, size_t errlen)
{
	struct memprof_bpf *m = memprof_bpf__open();
	int rc, t = o->type;
	if (!m) {
		rc = -errno;
		snprintf(err, errlen, "open memprof BPF object: %s", strerror(-rc));
		return rc;
	}
	k->mem = m;
	m->rodata->filter_kind = (uint32_t)o->filter_kind;
	m->rodata->sl_v1_subsys_id = o->v1_subsys_id;
	m->rodata->page_size = k->page_size;
	m->rodata->pf_period = k->fault_period;
	int virt = t == SL_TASK_PROFILE_MEM_VIRTUAL, pf = t == SL_TASK_PROFILE_PAGE_FAULTS,
	    rss = t == SL_TASK_PROFILE_RESIDENT;
	bpf_program__set_autoload(m->progs.mmap_enter, virt);
	bpf_program__set_autoload(m->progs.mmap_exit, virt);
	bpf_program__set_autoload(m->progs.munmap_enter, virt);
	bpf_program__set_autoload(m->progs.munmap_exit, virt);
	bpf_program__set_autoload(m->progs.brk_enter, virt);
	bpf_program__set_autoload(m->progs.brk_exit, virt);
	bpf_program__set_autoload(m->progs.pf_user, pf);
	bpf_program__set_autoload(m->progs.rss_stat, rss);
	/* maps of the other types: smallest size (they exist in the object) */
	if (!virt) {
		bpf_map__set_max_entries(m->maps.kv_pending, 1);
		bpf_map__set_max_entries(m->maps.kv_live, 1);
	}
	if (!rss)
		bpf_map__set_max_entries(m->maps.rss_last, 1);
	set_sizes(m->maps.kprof_stacks, m->maps.kprof_counts, o);
	rc = memprof_bpf__load(m);
	if (rc) {
		snprintf(err, errlen, "load memprof BPF object (%s): %s", sl_task_type_name(t), strerror(-rc));
		return rc;
	}
	k->counts_fd = bpf_map__fd(m->maps.kprof_counts);
	k->stacks_fd = bpf_map__fd(m->maps.kprof_stacks);
	k->stats_fd = bpf_map__fd(m->maps.kprof_stats);
	if (!att)
		return 0;
	/* exits before enters: an enter is never left without its exit */
	if (virt) {
		if ((rc = attach(k, m->progs.mmap_exit, "tp/syscalls/sys_exit_mmap", err, errlen)) ||
		    (rc = attach(k, m->progs.munmap_exit, "tp/syscalls/sys_exit_munmap", err, errlen)) ||
		    (rc = attach(k, m->progs.brk_exit, "tp/syscalls/sys_exit_brk", err, errlen)) ||
		    (rc = attach(k, m->progs.mmap_enter, "tp/syscalls/sys_enter_mmap", err, errlen)) ||
		    (rc = attach(k, m->progs.munmap_enter, "tp/syscalls/sys_enter_munmap", err, errlen)) ||
		    (rc = attach(k, m->progs.brk_enter, "tp/syscalls/sys_enter_brk", err, errlen)))
			return rc;
		return 0;
	}
	if (pf)
		return attach(k, m->progs.pf_user, "tp_btf/page_fault_user", err, errlen);
	return attach(k, m->progs.rss_stat, "tp_btf/rss_stat", err, errlen);
}

static int open_lock(struct sl_kprof *k, const struct sl_task_bpf_opts *o, int att, char *err, size_t errlen)
{
	struct lockprof_bpf *l = lockprof_bpf__open();
	int rc, kern = o->type == SL_TASK_PROFILE_LOCK_KERNEL;
	if (!l) {
		rc = -errno;
		snprintf(err, errlen, "open lockprof BPF object: %s", strerror(-rc));
		return rc;
	}
	k->lock = l;
	l->rodata->filter_kind = (uint32_t)o->filter_kind;
	l->rodata->sl_v1_subsys_id = o->v1_subsys_id;
	bpf_program__set_autoload(l->progs.lock_begin, kern);
	bpf_program__set_autoload(l->progs.lock_end, kern);
	bpf_program__set_autoload(l->progs.futex_enter, !kern);
	bpf_program__set_autoload(l->progs.futex_exit, !kern);
	set_sizes(l->maps.kprof_stacks, l->maps.kprof_counts, o);
	rc = lockprof_bpf__load(l);
	if (rc) {
		snprintf(err, errlen, "load lockprof BPF object (%s): %s", sl_task_type_name(o->type), strerror(-rc));
		return rc;
	}
	k->counts_fd = bpf_map__fd(l->maps.kprof_counts);
	k->stacks_fd = bpf_map__fd(l->maps.kprof_stacks);
	k->stats_fd = bpf_map__fd(l->maps.kprof_stats);
	if (!att)
		return 0;
	if (kern) {
		if ((rc = attach(k, l->progs.lock_end, "tp_btf/contention_end", err, errlen)))
			return rc;
		return attach(k, l->progs.lock_begin, "tp_btf/contention_begin", err, errlen);
	}
	if ((rc = attach(k, l->progs.futex_exit, "tp/syscalls/sys_exit_futex", err, errlen)))
		return rc;
	return attach(k, l->progs.futex_enter, "tp/syscalls/sys_enter_futex", err, errlen);
}

struct sl_kprof *sl_kprof_open(const struct sl_task_bpf_opts *o, int att, char *err, size_t errlen)
{
	struct sl_kprof *k;
	int rc;

	if (!sl_kprof_is_type(o->type)) {
		snprintf(err, errlen, "unknown task type %d", o->type);
		return NULL;
	}
	if (sl_kprof_check(o->type, err, errlen))
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	k->type = o->type;
	k->counts_fd = k->stacks_fd = k->stats_fd = -1;
	long ps = sysconf(_SC_PAGESIZE);
	k->page_size = ps > 0 ? (uint64_t)ps : 4096;
	k->fault_period = o->fault_period ? o->fault_period : SL_TASK_FAULT_PERIOD_DEFAULT;
	if (o->type == SL_TASK_PROFILE_LOCK_KERNEL || o->type == SL_TASK_PROFILE_FUTEX)
		rc = open_lock(k, o, att, err, errlen);
	else
		rc = open_mem(k, o, att, err, errlen);
	if (rc) {
		sl_kprof_destroy(k);
		return NULL;
	}
	return k;
}

void sl_kprof_fds(const struct sl_kprof *k, int *pids, int *cg2, int *cg1, int *stats)
{
	if (k->mem) {
		*pids = bpf_map__fd(k->mem->maps.filter_pids);
		*cg2 = bpf_map__fd(k->mem->maps.filter_cg2);
		*cg1 = bpf_map__fd(k->mem->maps.filter_cg1);
	} else {
		*pids = bpf_map__fd(k->lock->maps.filter_pids);
		*cg2 = bpf_map__fd(k->lock->maps.filter_cg2);
		*cg1 = bpf_map__fd(k->lock->maps.filter_cg1);
	}
	*stats = k->stats_fd;
}

const char *sl_kprof_event(const struct sl_kprof *k)
{
	switch (k->type) {
	case SL_TASK_PROFILE_MEM_VIRTUAL: return "mmap,munmap,brk";
	case SL_TASK_PROFILE_PAGE_FAULTS: return "page_fault_user";
	case SL_TASK_PROFILE_RESIDENT: return "rss_stat";
	case SL_TASK_PROFILE_LOCK_KERNEL: return "contention_begin,contention_end";
	default: return "futex";
	}
}

struct sl_raw_profile *sl_kprof_read(struct sl_kprof *k, uint64_t start_wall_ns, uint64_t duration_ns,
				     const char *(*container_of)(void *, uint32_t, uint64_t, uint64_t), void *ctx,
				     json_t **dropped)
{
	int kind = sl_task_prof_kind(k->type), pf = k->type == SL_TASK_PROFILE_PAGE_FAULTS;
	uint64_t period = pf ? k->fault_period : 1;
	struct sl_raw_profile *rp = sl_raw_profile_new(kind, start_wall_ns, duration_ns, period);
	uint64_t uips[STACK_DEPTH], kips[STACK_DEPTH], lost_user = 0, lost_kernel = 0;
	struct sl_prof_key key, next, *prev = NULL;
	struct sl_kprof_val v;

	if (!rp)
		return NULL;
	while (bpf_map_get_next_key(k->counts_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(k->counts_fd, &key, &v))
			continue;
		struct sl_raw_stack s = {0};
		s.pid = key.tgid;
		_Static_assert(sizeof(s.comm) == sizeof(v.comm), "comm sizes");
		memcpy(s.comm, v.comm, sizeof(s.comm) - 1);
		s.n_user = sl_bpf_stack_read(k->stacks_fd, key.user_stack_id, uips);
		s.user_ips = uips;
		s.n_kernel = sl_bpf_stack_read(k->stacks_fd, key.kernel_stack_id, kips);
		s.kernel_ips = kips;
		if (key.user_stack_id < 0 && key.user_stack_id != -EFAULT) {
			s.flags |= SL_RAW_USER_LOST;
			lost_user += v.count;
		}
		if (key.kernel_stack_id < 0 && key.kernel_stack_id != -EFAULT) {
			s.flags |= SL_RAW_KERNEL_LOST;
			lost_kernel += v.count;
		}
		s.count = v.count;
		s.off_cpu_state = (int)key.state;
		if (pf) { /* sampled: every fault_period-th fault per CPU */
			s.extra[0] = sl_prof_pf_faults(v.count, k->fault_period);
			s.value_ns = sl_prof_pf_bytes(v.count, k->fault_period, k->page_size);
		} else {
			s.value_ns = v.value;
			s.extra[0] = v.extra0;
			s.extra[1] = v.extra1;
		}
		if (container_of)
			snprintf(s.container_id, sizeof(s.container_id), "%s",
				 container_of(ctx, key.tgid, v.cgroup_id, v.cgroup_v1_id));
		if (sl_raw_profile_add(rp, &s)) {
			sl_raw_profile_free(rp);
			return NULL;
		}
	}
	if (dropped) {
		json_t *d = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "counts_full",
				      (json_int_t)sl_bpf_percpu_sum(k->stats_fd, SL_KST_COUNTS_FULL), "user_stack_lost",
				      (json_int_t)sl_bpf_percpu_sum(k->stats_fd, SL_KST_USTACK_LOST), "kernel_stack_lost",
				      (json_int_t)sl_bpf_percpu_sum(k->stats_fd, SL_KST_KSTACK_LOST), "user_stack_lost_in_result",
				      (json_int_t)lost_user, "kernel_stack_lost_in_result", (json_int_t)lost_kernel,
				      "pending_full", (json_int_t)sl_bpf_percpu_sum(k->stats_fd, SL_KST_PENDING_FULL));
		switch (k->type) {
		case SL_TASK_PROFILE_MEM_VIRTUAL:
			json_object_set_new(d, "munmap_unmatched", json_integer((json_int_t)sl_bpf_percpu_sum(k->stats_fd, SL_KST_FREE_UNMATCHED)));
			json_object_set_new(d, "munmap_unmatched_bytes",
					    json_integer((json_int_t)sl_bpf_percpu_sum(k->stats_fd, SL_KST_FREE_BYTES_UNMATCHED)));
			json_object_set_new(d, "live_table_full", json_integer((json_int_t)sl_bpf_percpu_sum(k->stats_fd, SL_KST_LIVE_FULL)));
			json_object_set_new(d, "brk_shrink_bytes", json_integer((json_int_t)sl_bpf_percpu_sum(k->stats_fd, SL_KST_BRK_SHRINK_BYTES)));
			break;
		case SL_TASK_PROFILE_RESIDENT:
			json_object_set_new(d, "not_current", json_integer((json_int_t)sl_bpf_percpu_sum(k->stats_fd, SL_KST_NOT_CURRENT)));
			json_object_set_new(d, "baselines", json_integer((json_int_t)sl_bpf_percpu_sum(k->stats_fd, SL_KST_FIRST_SEEN)));
			break;
		case SL_TASK_PROFILE_LOCK_KERNEL:
			json_object_set_new(d, "nested_begins", json_integer((json_int_t)sl_bpf_percpu_sum(k->stats_fd, SL_KST_NESTED)));
			break;
		default:
			break;
		}
		*dropped = d;
	}
	return rp;
}

void sl_kprof_summarize(const struct sl_profile *p, json_t *summary)
{
	const struct sl_prof_kind_info *ki = sl_prof_kind_info(p->kind);
	uint64_t total = 0, e0 = 0, e1 = 0;
	json_t *top = json_object();
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sl_sample *s = &p->samples[i];
		total += s->value_ns;
		e0 += s->extra[0];
		e1 += s->extra[1];
		for (uint32_t j = s->nframes; j-- > 0;) { /* the user leaf */
			const struct sl_frame *fr = &p->frames[s->frames[j]];
			if (fr->flags & (SL_FRAME_KERNEL | SL_FRAME_PSEUDO))
				continue;
			char *key = sl_utf8_dup(fr->name); /* keys must be UTF-8 */
			if (key) {
				json_t *v = json_object_get(top, key);
				json_object_set_new(top, key, json_integer(json_integer_value(v) + (json_int_t)s->value_ns));
				free(key);
			}
			break;
		}
	}
	json_t *arr = json_array();
	for (int n = 0; n < 10; n++) {
		const char *best = NULL, *key;
		json_int_t bv = -1;
		json_t *v;
		json_object_foreach(top, key, v) {
			if (json_integer_value(v) > bv) {
				bv = json_integer_value(v);
				best = key;
			}
		}
		if (!best)
			break;
		json_array_append_new(arr, json_pack("{s:s, s:I}", "function", best, "value", bv));
		json_object_del(top, best);
	}
	json_decref(top);
	json_object_set_new(summary, "unit", json_string(ki->types[ki->default_type].unit));
	json_object_set_new(summary, "value_type", json_string(ki->types[ki->default_type].type));
	json_object_set_new(summary, "total_value", json_integer((json_int_t)total));
	json_object_set_new(summary, "top_user_leaves_by_value", arr);
	switch (p->kind) {
	case SL_PROF_MEM_VIRTUAL:
		json_object_set_new(summary, "inuse_objects", json_integer((json_int_t)e0));
		json_object_set_new(summary, "inuse_bytes", json_integer((json_int_t)e1));
		break;
	case SL_PROF_PAGE_FAULTS:
		json_object_set_new(summary, "fault_period", json_integer((json_int_t)p->period_ns));
		json_object_set_new(summary, "page_faults", json_integer((json_int_t)e0));
		break;
	case SL_PROF_RESIDENT:
		json_object_set_new(summary, "release_bytes", json_integer((json_int_t)e0));
		break;
	default:
		break;
	}
}

void sl_kprof_detach(struct sl_kprof *k)
{
	if (!k)
		return;
	for (int i = 0; i < k->nlinks; i++)
		bpf_link__destroy(k->links[i]);
	k->nlinks = 0;
}

void sl_kprof_destroy(struct sl_kprof *k)
{
	if (!k)
		return;
	sl_kprof_detach(k);
	memprof_bpf__destroy(k->mem);
	lockprof_bpf__destroy(k->lock);
	free(k);
}
