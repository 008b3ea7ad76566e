/* Sandbox identity (ATTR-3, issue 17 item 1): which micro-VM or gVisor
 * sandboxes run on this host, told from the cgroup layout and the processes
 * in it, and the map sandbox id <-> pod <-> VMM pid <-> vCPU threads.
 *
 * Two layers:
 *   - sl_sbx_identify(): a pure function over (cgroup path list, process
 *     list). Unit-tested with fixture trees and process lists of every
 *     runtime (tests/unit/test_sandbox.c, each fixture citing its source).
 *   - sl_sbx_scan(): the live reader that builds those lists from the
 *     cgroup mounts (the one walker, cgwalk.h) and /proc, then calls it.
 *
 * Published layouts recognised (docs/ATTRIBUTION.md "Sandboxes"):
 *   Kata Containers (kata-containers docs/design/host-cgroups.md; runtime
 *   src/runtime/virtcontainers "kata_" prefix, runtime-rs
 *   resource/src/cgroups): the sandbox cgroup is the pod's cgroupsPath
 *   with its last element prefixed "kata_" (`/kubepods/.../pod<uid>/kata_<id>`);
 *   with sandbox_cgroup_only off the VMM's non-vCPU threads and the shim go
 *   to `/kata_overhead/<id>` (the overhead cgroup). VMM processes:
 *   qemu (`qemu-system-<arch>`, `qemu-kvm`; `-name sandbox-<id>`),
 *   cloud-hypervisor (`--api-socket .../vc/vm/<id>/clh-api.sock`),
 *   firecracker (`--id <id>`). vCPU thread names (comm): qemu
 *   "CPU <n>/KVM" (accel/kvm/kvm-accel-ops.c), cloud-hypervisor "vcpu<n>"
 *   (vmm/src/cpu.rs), firecracker "fc_vcpu <n>" (src/vmm/src/vstate/vcpu).
 *   Shim: `containerd-shim-kata-v2 ... -id <sandbox id>` (comm is cut to
 *   "containerd-shim", so argv[0] is what tells it apart from runc's shim).
 *   gVisor (runsc/sandbox/sandbox.go, runsc/container/container.go): the
 *   sentry runs with argv[0] "runsc-sandbox" (`... boot ... <sandbox id>`,
 *   comm "exe": runsc re-executes /proc/self/exe), gofers with argv[0]
 *   "runsc-gofer", both in the pod sandbox container's cgroup (shared case
 *   cg18), shim `containerd-shim-runsc-v1 ... -id <id>`.
 *   Firecracker jailer (firecracker docs/jailer.md): chroot
 *   `<chroot_base>/firecracker/<id>/root` (default base /srv/jailer), cgroup
 *   `<parent_cgroup>/<id>` with parent_cgroup defaulting to the exec file
 *   name ("firecracker"), the jailer exec()s firecracker `--id <id>`.
 *
 * Processes are named by (pid, start_time): a pid seen again with another
 * start time is another process (pid reuse), never the old sandbox's.
 */
#ifndef SANDLENS_CGROUP_SANDBOX_H
#define SANDLENS_CGROUP_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup/attr.h"

#define SL_SBX_COMM_LEN 16     /* TASK_COMM_LEN */
#define SL_SBX_CMDLINE_LEN 2048 /* bytes of /proc/<pid>/cmdline kept */
#define SL_SBX_PATH_LEN 512
#define SL_SBX_MAX_VCPUS 256
#define SL_SBX_MAX_AUX 16      /* shims and gofers kept per sandbox */
#define SL_SBX_UID_UNKNOWN 0xffffffffu

enum sl_sbx_runtime { SL_SBX_RT_NONE = 0, SL_SBX_KATA, SL_SBX_GVISOR, SL_SBX_FIRECRACKER };
enum sl_sbx_vmm { SL_SBX_VMM_NONE = 0, SL_SBX_QEMU, SL_SBX_CLH, SL_SBX_FC };

/* "kata" | "gvisor" | "firecracker" | "" */
const char *sl_sbx_runtime_name(int rt);
/* "qemu" | "cloud-hypervisor" | "firecracker" | "" */
const char *sl_sbx_vmm_name(int vmm);

struct sl_sbx_thread {
	int32_t tid;
	char comm[SL_SBX_COMM_LEN];
};

/* One process as read from /proc/<pid> (or a fixture). Threads are only
 * needed for processes sl_sbx_proc_candidate() accepts. */
struct sl_sbx_proc {
	int32_t pid, ppid;
	uint64_t start_time; /* /proc/<pid>/stat field 22: clock ticks after boot */
	char comm[SL_SBX_COMM_LEN];
	/* argv as /proc/<pid>/cmdline gives it: NUL-separated, cmdline_len
	 * bytes (cut at SL_SBX_CMDLINE_LEN) */
	char cmdline[SL_SBX_CMDLINE_LEN];
	size_t cmdline_len;
	/* cgroup path of the process ("/..." relative to the hierarchy root;
	 * sl_sbx_cgroup_pick() chooses it from /proc/<pid>/cgroup) */
	char cgroup[SL_SBX_PATH_LEN];
	/* real uid (/proc/<pid>/status "Uid:" first field; SL_SBX_UID_UNKNOWN
	 * when unread). A VMM, sentry, shim or gofer that is not root counts
	 * only inside a sandbox or container cgroup (which root makes): any
	 * local user can start a process named "firecracker --id <id>". */
	uint32_t uid;
	/* 1 when the process is in the host's PID namespace and the initial
	 * user namespace (its /proc/<pid>/ns/pid and ns/user links name the
	 * same namespaces as those of /proc/1), 0 when not or when either link
	 * is unreadable (fail closed). uid 0 counts as root only with host_ns:
	 * root inside a runc container (its own PID namespace) or in a user
	 * namespace is a tenant, not the host's root. */
	int host_ns;
	size_t nthreads;
	const struct sl_sbx_thread *threads;
};

struct sl_sbx_vcpu {
	int32_t tid;
	int32_t index; /* the n of the thread name */
	char comm[SL_SBX_COMM_LEN];
	/* Runqueue accounting of the thread (sandbox_rq.h; filled by
	 * sl_sbx_rq_read, all 0 / unknown after sl_sbx_scan alone). */
	struct sl_sbx_rq {
		int known;             /* the figures below are valid */
		uint64_t oncpu_ns;     /* schedstat field 1: time on CPU */
		uint64_t run_delay_ns; /* field 2: time waiting on a runqueue */
		uint64_t timeslices;   /* field 3: pcount, times run on a CPU */
		/* over the last interval (sl_sbx_rq_track); iv_known 0 = unknown */
		int iv_known;
		uint64_t iv_ns; /* the interval's length (monotonic) */
		uint64_t iv_run_delay_ns, iv_timeslices;
	} rq;
};

/* One sandbox. Fields "" / 0 when unknown. */
struct sl_sbx {
	char id[SL_CONTAINER_ID_LEN];
	int runtime;  /* enum sl_sbx_runtime */
	int vmm_kind; /* enum sl_sbx_vmm (gVisor: none) */
	char pod_uid[SL_POD_UID_LEN];
	char cgroup[SL_SBX_PATH_LEN];          /* the sandbox cgroup (kata_<id>, the runsc pod sandbox cgroup, firecracker/<id>) */
	char overhead_cgroup[SL_SBX_PATH_LEN]; /* kata_overhead/<id>: host cost of the sandbox, not a container */
	/* the VMM (kata, firecracker) or the gVisor sentry (runsc-sandbox) */
	int32_t vmm_pid;
	uint64_t vmm_start_time;
	char vmm_comm[SL_SBX_COMM_LEN];
	size_t nvcpus; /* sorted by index */
	struct sl_sbx_vcpu vcpu[SL_SBX_MAX_VCPUS];
	size_t nshims;
	int32_t shim_pid[SL_SBX_MAX_AUX];
	size_t ngofers;
	int32_t gofer_pid[SL_SBX_MAX_AUX];
	/* Kata: the VM's runtime directory (/run/vc/vm/<id>: the
	 * cloud-hypervisor/qemu sockets, where the agent's hybrid-vsock socket
	 * is for CLH); firecracker jailer: the chroot (<base>/firecracker/<id>/root,
	 * kata's own jail is /run/vc/firecracker/<id>/root) */
	char vm_dir[SL_SBX_PATH_LEN];
};

struct sl_sbx_list {
	size_t n;
	struct sl_sbx *sbx; /* sorted by id; malloc'd, sl_sbx_list_free */
};

void sl_sbx_list_free(struct sl_sbx_list *l);
/* The sandbox named id (exact) in l, or NULL. */
const struct sl_sbx *sl_sbx_find(const struct sl_sbx_list *l, const char *id);

/* The VMM kind a process is (argv[0] basename, else comm), or
 * SL_SBX_VMM_NONE: qemu-system-<arch> / qemu-kvm, cloud-hypervisor,
 * firecracker. comm alone is cut at 15 bytes ("qemu-system-x86",
 * "cloud-hyperviso"). */
int sl_sbx_vmm_of(const char *comm, const char *argv0);

/* The vCPU index of a thread named comm in a VMM of kind vmm, or -1 when
 * the name is not a vCPU thread's: qemu "CPU <n>/KVM", cloud-hypervisor
 * "vcpu<n>", firecracker "fc_vcpu <n>" (n decimal, 0..65535). */
int sl_sbx_vcpu_index(int vmm, const char *comm);

/* 1 when the process needs its cmdline and threads read to be classified
 * (comm of a VMM, shim, runsc process or jailer): the live scan reads
 * cmdline and task/ only for these. */
int sl_sbx_proc_candidate(const char *comm);

/* The cgroup path of a /proc/<pid>/cgroup text to classify a process by:
 * the v2 line ("0::") unless it is "/" or a v1 line names a sandbox
 * (hybrid hosts where only v1 holds the runtime's cgroup), else the first
 * non-root line, else "/". A trailing " (deleted)" is dropped. Writes at
 * most len bytes to out; returns 0 or -EINVAL. */
int sl_sbx_cgroup_pick(const char *text, char *out, size_t len);

/* Identify the sandboxes from the cgroup paths (relative to a hierarchy
 * root, "/..."; both hierarchies of a hybrid host may be given, duplicates
 * are merged) and the processes. Rules in the header comment and in
 * docs/ATTRIBUTION.md "Sandboxes". A sandbox is listed when its sandbox
 * or overhead cgroup exists or its VMM/sentry runs; a shim or gofer alone
 * makes none. Returns 0 (out filled, sorted by id), -ENOMEM or -EINVAL. */
int sl_sbx_identify(const char *const *cgroups, size_t ncgroups, const struct sl_sbx_proc *procs,
		    size_t nprocs, struct sl_sbx_list *out);

/* Where the live scan reads. NULL members take the defaults. */
struct sl_sbx_scan_opts {
	const struct sl_cg_mounts *mounts; /* v2 and the v1 memory hierarchy are walked */
	const char *proc_root;             /* NULL = "/proc" */
};

/* Live scan: walk the cgroup hierarchies (keeping only paths with a
 * sandbox segment), read /proc (stat and cgroup of every process; cmdline,
 * status, the ns/pid and ns/user links (host_ns: compared with those of
 * proc_root/1, else proc_root/self) and task/<tid>/comm of candidates),
 * identify. A process that exits
 * during the read is skipped. Files are opened relative to the
 * /proc/<pid> directory with O_NOFOLLOW. Returns 0, -ENOMEM, or -errno
 * when proc_root cannot be opened. */
int sl_sbx_scan(const struct sl_sbx_scan_opts *o, struct sl_sbx_list *out);

/* Read at most len-1 bytes of dirfd/name, opened
 * O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC (/proc files: never follow a link, never
 * block), NUL-terminated. Returns the bytes read or -errno. */
ssize_t sl_sbx_read_at(int dirfd, const char *name, char *buf, size_t len);

/* starttime (field 22, clock ticks after boot) of the /proc/<pid>
 * directory open at pd. Returns 0 or -errno (-ESRCH: the process is gone;
 * a /proc/<pid> fd never names a later process of the same pid). */
int sl_sbx_start_time_at(int pd, uint64_t *start_time);

/* 1 when /proc/<pid> (under proc_root, NULL = /proc) is still the process
 * that started at start_time (clock ticks after boot), 0 when it is gone or
 * the pid now names another process. */
int sl_sbx_proc_alive(const char *proc_root, int32_t pid, uint64_t start_time);

/* Read /proc/<pid>/stat fields comm (2), ppid (4), starttime (22), under
 * proc_root (NULL = /proc). Returns 0 or -errno (-ESRCH: gone). */
int sl_sbx_read_stat(const char *proc_root, int32_t pid, char comm[SL_SBX_COMM_LEN],
		     int32_t *ppid, uint64_t *start_time);

/* JSON of one sandbox (sandbox_json.c; docs/API.md "Sandboxes"):
 * {id, runtime, vmm, pod_uid, cgroup, overhead_cgroup, vmm_pid,
 * vmm_start_time, vmm_comm, vcpus:[{tid, index, comm}], shim_pids,
 * gofer_pids, vm_dir, stats}; unknown strings and pids are null. New
 * reference or NULL (out of memory). */
struct json_t;
struct json_t *sl_sbx_json(const struct sl_sbx *s);
/* {"sandboxes":[...]} of every sandbox in l. */
struct json_t *sl_sbx_list_json(const struct sl_sbx_list *l);

#endif
