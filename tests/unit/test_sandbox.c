/* Sandbox identity (src/cgroup/sandbox.h): fixture cgroup trees and
 * process lists of each runtime, built from the published layouts cited
 * at each fixture (ids made up). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup/sandbox.h"

#define SBX "ac5be1ec5262ac9cbad8e0cb6fdda98f53128946eb63545ec246ee6a565b8b29"
#define SBX2 "0f3c9a4be1a44e9f0c2d1b7e6a5f4e3d2c1b0a9f8e7d6c5b4a39281706f5e4d3"
#define POD "6f03e56e-efa1-4f0f-9b8f-492cf1824c83"

/* A process from a space-separated argv (no argument of a fixture holds a
 * space; "" for none). */
static struct sl_sbx_proc mkproc(int32_t pid, int32_t ppid, uint64_t start, const char *comm,
				 const char *argv, const char *cgroup, const struct sl_sbx_thread *thr,
				 size_t nthr)
{
	struct sl_sbx_proc p;
	memset(&p, 0, sizeof(p));
	p.pid = pid;
	p.ppid = ppid;
	p.start_time = start;
	snprintf(p.comm, sizeof(p.comm), "%s", comm);
	size_t n = strlen(argv);
	assert_true(n + 1 < sizeof(p.cmdline));
	memcpy(p.cmdline, argv, n + 1);
	for (size_t i = 0; i < n; i++)
		if (p.cmdline[i] == ' ')
			p.cmdline[i] = 0;
	p.cmdline_len = n ? n + 1 : 0;
	snprintf(p.cgroup, sizeof(p.cgroup), "%s", cgroup);
	p.host_ns = 1; /* the host's PID and user namespaces unless a case says otherwise */
	p.threads = thr;
	p.nthreads = nthr;
	return p;
}

static void names(void **state)
{
	(void)state;
	/* qemu accel/kvm/kvm-accel-ops.c: snprintf(.., "CPU %d/KVM", cpu->cpu_index) */
	assert_int_equal(sl_sbx_vcpu_index(SL_SBX_QEMU, "CPU 0/KVM"), 0);
	assert_int_equal(sl_sbx_vcpu_index(SL_SBX_QEMU, "CPU 12/KVM"), 12);
	assert_int_equal(sl_sbx_vcpu_index(SL_SBX_QEMU, "CPU /KVM"), -1);
	assert_int_equal(sl_sbx_vcpu_index(SL_SBX_QEMU, "CPU 1/TCG"), -1);
	assert_int_equal(sl_sbx_vcpu_index(SL_SBX_QEMU, "vcpu0"), -1);
	/* cloud-hypervisor vmm/src/cpu.rs: thread::Builder::new().name(format!("vcpu{vcpu_id}")) */
	assert_int_equal(sl_sbx_vcpu_index(SL_SBX_CLH, "vcpu3"), 3);
	assert_int_equal(sl_sbx_vcpu_index(SL_SBX_CLH, "vcpu"), -1);
	assert_int_equal(sl_sbx_vcpu_index(SL_SBX_CLH, "vcpu3x"), -1);
	/* firecracker src/vmm/src/vstate/vcpu: .name(format!("fc_vcpu {}", index)) */
	assert_int_equal(sl_sbx_vcpu_index(SL_SBX_FC, "fc_vcpu 1"), 1);
	assert_int_equal(sl_sbx_vcpu_index(SL_SBX_FC, "fc_vcpu"), -1);
	assert_int_equal(sl_sbx_vcpu_index(SL_SBX_FC, "fc_api"), -1);
	assert_int_equal(sl_sbx_vcpu_index(SL_SBX_VMM_NONE, "vcpu0"), -1);

	assert_int_equal(sl_sbx_vmm_of("qemu-system-x86", NULL), SL_SBX_QEMU);
	assert_int_equal(sl_sbx_vmm_of("qemu-kvm", "/usr/libexec/qemu-kvm"), SL_SBX_QEMU);
	assert_int_equal(sl_sbx_vmm_of("cloud-hyperviso", "/opt/kata/bin/cloud-hypervisor"), SL_SBX_CLH);
	assert_int_equal(sl_sbx_vmm_of("firecracker", "firecracker"), SL_SBX_FC);
	/* argv[0] says otherwise: comm does not overrule it */
	assert_int_equal(sl_sbx_vmm_of("firecracker", "/usr/bin/python3"), SL_SBX_VMM_NONE);
	assert_int_equal(sl_sbx_vmm_of("bash", ""), SL_SBX_VMM_NONE);

	assert_true(sl_sbx_proc_candidate("containerd-shim"));
	assert_true(sl_sbx_proc_candidate("exe"));
	assert_false(sl_sbx_proc_candidate("bash"));
	assert_string_equal(sl_sbx_runtime_name(SL_SBX_GVISOR), "gvisor");
	assert_string_equal(sl_sbx_vmm_name(SL_SBX_CLH), "cloud-hypervisor");
}

static void cgroup_pick(void **state)
{
	(void)state;
	char out[SL_SBX_PATH_LEN];
	/* hybrid host: v2 at the root, the runtime's cgroup only in v1 (p18) */
	assert_int_equal(sl_sbx_cgroup_pick("11:memory:/kata_overhead/" SBX "\n4:devices:/\n0::/\n", out,
					    sizeof(out)), 0);
	assert_string_equal(out, "/kata_overhead/" SBX);
	/* pure v2 */
	assert_int_equal(sl_sbx_cgroup_pick("0::/kubepods/besteffort/pod" POD "/kata_" SBX "\n", out, sizeof(out)), 0);
	assert_string_equal(out, "/kubepods/besteffort/pod" POD "/kata_" SBX);
	/* v2 names nothing sandbox-like but is not the root: it wins over a plain v1 line */
	assert_int_equal(sl_sbx_cgroup_pick("5:memory:/user.slice\n0::/system.slice/containerd.service\n", out, sizeof(out)), 0);
	assert_string_equal(out, "/system.slice/containerd.service");
	/* deleted suffix dropped */
	assert_int_equal(sl_sbx_cgroup_pick("0::/firecracker/abc-1 (deleted)\n", out, sizeof(out)), 0);
	assert_string_equal(out, "/firecracker/abc-1");
	assert_int_equal(sl_sbx_cgroup_pick("0::/\n", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(sl_sbx_cgroup_pick(NULL, out, sizeof(out)), -EINVAL);
}

/* Kata + QEMU, sandbox_cgroup_only=true: kata-containers
 * docs/design/host-cgroups.md ("Kata creates the kata_<sandbox id> cgroup
 * under the pod cgroup and moves the shim and VMM into it"); the qemu
 * command line (`-name sandbox-<id> ... -qmp unix:/run/vc/vm/<id>/qmp.sock`)
 * as `ps` shows it on an OpenShift kata node (andreaskaris/blog
 * docs/openshift/kata.md); thread names from qemu kvm-accel-ops.c. */
static void kata_qemu(void **state)
{
	(void)state;
	const char *cg = "/kubepods/besteffort/pod" POD "/kata_" SBX;
	const char *cgs[] = {"/kubepods", "/kubepods/besteffort", "/kubepods/besteffort/pod" POD, cg};
	struct sl_sbx_thread qt[] = {{28450, "qemu-kvm"}, {28451, "qemu-kvm"}, {28460, "CPU 1/KVM"},
				     {28459, "CPU 0/KVM"}, {28461, "kvm-nx-lpage-re"}, {28470, "vhost-28450"}};
	struct sl_sbx_proc ps[] = {
		mkproc(28400, 1, 1000, "containerd-shim",
		       "/usr/bin/containerd-shim-kata-v2 -namespace k8s.io -address /run/containerd/containerd.sock "
		       "-publish-binary /usr/bin/containerd -id " SBX, cg, NULL, 0),
		mkproc(28450, 1, 1010, "qemu-kvm",
		       "/usr/libexec/qemu-kvm -name sandbox-" SBX " -uuid 6f03e56e -machine q35,accel=kvm "
		       "-qmp unix:/run/vc/vm/" SBX "/qmp.sock,server,nowait", cg, qt, 6),
		mkproc(500, 1, 10, "bash", "bash", "/user.slice", NULL, 0),
	};
	struct sl_sbx_list l;
	assert_int_equal(sl_sbx_identify(cgs, 4, ps, 3, &l), 0);
	assert_int_equal(l.n, 1);
	const struct sl_sbx *s = sl_sbx_find(&l, SBX);
	assert_non_null(s);
	assert_int_equal(s->runtime, SL_SBX_KATA);
	assert_int_equal(s->vmm_kind, SL_SBX_QEMU);
	assert_string_equal(s->pod_uid, POD);
	assert_string_equal(s->cgroup, cg);
	assert_string_equal(s->overhead_cgroup, "");
	assert_int_equal(s->vmm_pid, 28450);
	assert_int_equal(s->vmm_start_time, 1010);
	assert_int_equal(s->nvcpus, 2);
	assert_int_equal(s->vcpu[0].tid, 28459);
	assert_int_equal(s->vcpu[0].index, 0);
	assert_int_equal(s->vcpu[1].tid, 28460);
	assert_string_equal(s->vcpu[1].comm, "CPU 1/KVM");
	assert_int_equal(s->nshims, 1);
	assert_int_equal(s->shim_pid[0], 28400);
	assert_string_equal(s->vm_dir, "/run/vc/vm/" SBX);
	sl_sbx_list_free(&l);
}

/* Kata + cloud-hypervisor, sandbox_cgroup_only=false (host-cgroups.md
 * "SandboxCgroupOnly disabled": the shim and the VMM's non-vCPU threads
 * in /kata_overhead/<id> outside the pod, the pod's kata_<id> for the
 * vCPUs; runtime-rs resource/src/cgroups gen_overhead_path "kata_overhead");
 * CLH started with --api-socket /run/vc/vm/<id>/clh-api.sock (kata
 * virtcontainers clh.go), thread names from cloud-hypervisor cpu.rs. On a
 * hybrid host the VMM's own cgroup shows in the v1 line only (p18). */
static void kata_clh_overhead(void **state)
{
	(void)state;
	const char *sbx_cg = "/kubepods/burstable/pod" POD "/kata_" SBX;
	const char *ov = "/kata_overhead/" SBX;
	const char *cgs[] = {"/kata_overhead", ov, sbx_cg, ov /* v1 and v2 both list it */};
	struct sl_sbx_thread ct[] = {{700, "cloud-hyperviso"}, {701, "vcpu0"}, {702, "vcpu1"},
				     {703, "http-server"}, {704, "_disk0_q0"}};
	struct sl_sbx_proc ps[] = {
		mkproc(690, 1, 50, "containerd-shim",
		       "/opt/kata/bin/containerd-shim-kata-v2 -namespace k8s.io -id " SBX, ov, NULL, 0),
		mkproc(700, 690, 60, "cloud-hyperviso",
		       "/opt/kata/bin/cloud-hypervisor --api-socket /run/vc/vm/" SBX "/clh-api.sock", ov, ct, 5),
		/* runc's shim of another pod: comm alike, argv[0] not */
		mkproc(800, 1, 70, "containerd-shim", "/usr/bin/containerd-shim-runc-v2 -namespace k8s.io -id " SBX2,
		       "/system.slice/containerd.service", NULL, 0),
	};
	struct sl_sbx_list l;
	assert_int_equal(sl_sbx_identify(cgs, 4, ps, 3, &l), 0);
	assert_int_equal(l.n, 1);
	const struct sl_sbx *s = &l.sbx[0];
	assert_string_equal(s->id, SBX);
	assert_int_equal(s->runtime, SL_SBX_KATA);
	assert_int_equal(s->vmm_kind, SL_SBX_CLH);
	assert_string_equal(s->overhead_cgroup, ov);
	assert_string_equal(s->cgroup, sbx_cg);
	assert_string_equal(s->pod_uid, POD);
	assert_int_equal(s->vmm_pid, 700);
	assert_int_equal(s->nvcpus, 2);
	assert_int_equal(s->vcpu[1].tid, 702);
	assert_int_equal(s->vcpu[1].index, 1);
	assert_int_equal(s->nshims, 1);
	assert_int_equal(s->shim_pid[0], 690);
	sl_sbx_list_free(&l);

	/* the VMM only named on its command line (cgroup says nothing): still kata by its socket path */
	struct sl_sbx_proc ps2[] = {
		mkproc(700, 1, 60, "cloud-hyperviso",
		       "/opt/kata/bin/cloud-hypervisor --api-socket=/run/vc/vm/" SBX "/clh-api.sock", "/system.slice/x.service", ct, 5),
	};
	assert_int_equal(sl_sbx_identify(NULL, 0, ps2, 1, &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.sbx[0].runtime, SL_SBX_KATA);
	assert_int_equal(l.sbx[0].nvcpus, 2);
	sl_sbx_list_free(&l);
}

/* Kata + firecracker: kata runs firecracker under its jailer with the
 * chroot /run/vc/firecracker/<id>/root (virtcontainers fc.go) and --id
 * <id>; the sandbox cgroup is the same kata_<id>. Thread names from
 * firecracker vcpu code ("fc_vcpu {}"), its API thread "fc_api". */
static void kata_firecracker(void **state)
{
	(void)state;
	const char *cg = "/kubepods/pod" POD "/kata_" SBX;
	const char *cgs[] = {cg};
	struct sl_sbx_thread ft[] = {{900, "firecracker"}, {901, "fc_api"}, {902, "fc_vcpu 0"}};
	struct sl_sbx_proc ps[] = {
		mkproc(900, 1, 5, "firecracker", "/firecracker --id " SBX " --start-time-us 1 --start-time-cpu-us 2", cg, ft, 3),
	};
	struct sl_sbx_list l;
	assert_int_equal(sl_sbx_identify(cgs, 1, ps, 1, &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.sbx[0].runtime, SL_SBX_KATA);
	assert_int_equal(l.sbx[0].vmm_kind, SL_SBX_FC);
	assert_int_equal(l.sbx[0].nvcpus, 1);
	assert_int_equal(l.sbx[0].vcpu[0].tid, 902);
	assert_string_equal(l.sbx[0].vm_dir, "/run/vc/firecracker/" SBX "/root");
	assert_string_equal(l.sbx[0].pod_uid, POD);
	sl_sbx_list_free(&l);
}

/* gVisor: runsc/sandbox/sandbox.go sets cmd.Args[0] = "runsc-sandbox" and
 * runs `boot ... <sandbox id>` (comm "exe": /proc/self/exe); gofers
 * cmd.Args[0] = "runsc-gofer" (runsc/container/container.go); both in the
 * pod sandbox container's cgroup (shared case cg18); the shim
 * containerd-shim-runsc-v1 -id <sandbox id>. Argument lists as `ps` shows
 * them (mizzy/container-playground gvisor/README.md). */
static void gvisor(void **state)
{
	(void)state;
	const char *cg = "/kubepods/burstable/pod" POD "/" SBX;
	const char *cgs[] = {"/kubepods/burstable/pod" POD, cg};
	struct sl_sbx_proc ps[] = {
		mkproc(1200, 1, 100, "containerd-shim",
		       "/usr/local/bin/containerd-shim-runsc-v1 -namespace k8s.io -address /run/containerd/containerd.sock -id " SBX,
		       "/system.slice/containerd.service", NULL, 0),
		mkproc(1210, 1200, 110, "exe",
		       "runsc-gofer --root=/run/containerd/runsc/k8s.io --log=/run/x/log.json gofer --bundle "
		       "/run/containerd/io.containerd.runtime.v2.task/k8s.io/" SBX " --spec-fd=3", cg, NULL, 0),
		mkproc(1211, 1200, 111, "exe",
		       "runsc-sandbox --root=/run/containerd/runsc/k8s.io --platform=systrap boot --bundle=/run/containerd/"
		       "io.containerd.runtime.v2.task/k8s.io/" SBX " --controller-fd=3 --spec-fd=4 " SBX, cg, NULL, 0),
		/* a gofer of the pod's second container, also reparented to the shim */
		mkproc(1300, 1200, 200, "exe", "runsc-gofer --root=/run/containerd/runsc/k8s.io gofer --bundle /b2",
		       "/kubepods/burstable/pod" POD "/" SBX2, NULL, 0),
	};
	struct sl_sbx_list l;
	assert_int_equal(sl_sbx_identify(cgs, 2, ps, 4, &l), 0);
	assert_int_equal(l.n, 1);
	const struct sl_sbx *s = &l.sbx[0];
	assert_string_equal(s->id, SBX);
	assert_int_equal(s->runtime, SL_SBX_GVISOR);
	assert_int_equal(s->vmm_kind, SL_SBX_VMM_NONE);
	assert_int_equal(s->vmm_pid, 1211);
	assert_string_equal(s->vmm_comm, "exe");
	assert_int_equal(s->nvcpus, 0);
	assert_string_equal(s->cgroup, cg);
	assert_string_equal(s->pod_uid, POD);
	assert_int_equal(s->ngofers, 2);
	assert_int_equal(s->gofer_pid[0], 1210);
	assert_int_equal(s->gofer_pid[1], 1300);
	assert_int_equal(s->nshims, 1);
	assert_int_equal(s->shim_pid[0], 1200);
	assert_string_equal(s->vm_dir, "");
	sl_sbx_list_free(&l);
}

/* Plain Firecracker under its jailer (firecracker docs/jailer.md): chroot
 * <chroot_base>/firecracker/<id>/root, default base /srv/jailer; cgroups
 * <parent_cgroup>/<id> with parent_cgroup defaulting to the exec file name;
 * the jailer exec()s firecracker with --id <id> (the docs' example id). */
static void firecracker_jailer(void **state)
{
	(void)state;
	const char *id = "551e7604-e35c-42b3-b825-416853441234";
	const char *cgs[] = {"/firecracker", "/firecracker/551e7604-e35c-42b3-b825-416853441234"};
	struct sl_sbx_thread ft[] = {{4000, "firecracker"}, {4001, "fc_api"}, {4003, "fc_vcpu 1"}, {4002, "fc_vcpu 0"}};
	struct sl_sbx_proc ps[] = {
		mkproc(4000, 3990, 77, "firecracker", "/firecracker --id 551e7604-e35c-42b3-b825-416853441234 --start-time-us 5",
		       "/firecracker/551e7604-e35c-42b3-b825-416853441234", ft, 4),
	};
	struct sl_sbx_list l;
	assert_int_equal(sl_sbx_identify(cgs, 2, ps, 1, &l), 0);
	assert_int_equal(l.n, 1);
	const struct sl_sbx *s = &l.sbx[0];
	assert_string_equal(s->id, id);
	assert_int_equal(s->runtime, SL_SBX_FIRECRACKER);
	assert_int_equal(s->vmm_kind, SL_SBX_FC);
	assert_int_equal(s->nvcpus, 2);
	assert_int_equal(s->vcpu[0].tid, 4002);
	assert_int_equal(s->vcpu[1].tid, 4003);
	assert_string_equal(s->cgroup, "/firecracker/551e7604-e35c-42b3-b825-416853441234");
	assert_string_equal(s->vm_dir, "/srv/jailer/firecracker/551e7604-e35c-42b3-b825-416853441234/root");
	assert_string_equal(s->pod_uid, "");
	sl_sbx_list_free(&l);

	/* the cgroup alone (VMM not started yet / exited): listed, no VMM */
	assert_int_equal(sl_sbx_identify(cgs, 2, NULL, 0, &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.sbx[0].vmm_pid, 0);
	sl_sbx_list_free(&l);
}

/* A sandbox going away, processes that name no sandbox, pid reuse. */
static void going_away_and_pid_reuse(void **state)
{
	(void)state;
	const char *ov = "/kata_overhead/" SBX;
	struct sl_sbx_thread ct[] = {{700, "cloud-hyperviso"}, {701, "vcpu0"}};
	struct sl_sbx_list l;

	/* everything gone: nothing */
	assert_int_equal(sl_sbx_identify(NULL, 0, NULL, 0, &l), 0);
	assert_int_equal(l.n, 0);
	sl_sbx_list_free(&l);

	/* the VMM exited, the overhead cgroup not yet removed: the sandbox, no VMM */
	const char *cgs[] = {ov};
	struct sl_sbx_proc shim_only[] = {
		mkproc(690, 1, 50, "containerd-shim", "/opt/kata/bin/containerd-shim-kata-v2 -id " SBX, ov, NULL, 0),
	};
	assert_int_equal(sl_sbx_identify(cgs, 1, shim_only, 1, &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.sbx[0].vmm_pid, 0);
	assert_int_equal(l.sbx[0].nshims, 1);
	sl_sbx_list_free(&l);

	/* a shim alone (cgroups gone) makes no sandbox */
	assert_int_equal(sl_sbx_identify(NULL, 0, shim_only, 1, &l), 0);
	assert_int_equal(l.n, 0);
	sl_sbx_list_free(&l);

	/* a qemu that names no sandbox (a developer's VM) is not claimed */
	struct sl_sbx_thread qt[] = {{50, "CPU 0/KVM"}};
	struct sl_sbx_proc devvm[] = {
		mkproc(49, 1, 5, "qemu-system-x86", "qemu-system-x86_64 -name devbox -m 1G", "/user.slice", qt, 1),
	};
	assert_int_equal(sl_sbx_identify(NULL, 0, devvm, 1, &l), 0);
	assert_int_equal(l.n, 0);
	sl_sbx_list_free(&l);

	/* pid reuse: the VMM's pid now names a shell started later: the
	 * sandbox is listed from its cgroup, without a VMM */
	struct sl_sbx_proc reused[] = {
		mkproc(700, 1, 99999, "bash", "bash", "/user.slice", NULL, 0),
	};
	assert_int_equal(sl_sbx_identify(cgs, 1, reused, 1, &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.sbx[0].vmm_pid, 0);
	sl_sbx_list_free(&l);

	/* two VMMs claim one id (a restart racing the old one's exit): the one with vCPUs */
	struct sl_sbx_proc two[] = {
		mkproc(710, 1, 70, "cloud-hyperviso", "/opt/kata/bin/cloud-hypervisor", ov, NULL, 0),
		mkproc(700, 1, 60, "cloud-hyperviso", "/opt/kata/bin/cloud-hypervisor", ov, ct, 2),
	};
	assert_int_equal(sl_sbx_identify(cgs, 1, two, 2, &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.sbx[0].vmm_pid, 700);
	assert_int_equal(l.sbx[0].nvcpus, 1);
	sl_sbx_list_free(&l);
}

/* ---------------------------------------------- the live reader on fixtures */

static void wfile(const char *dir, const char *name, const char *text, size_t len)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

static void mkproc_dir(const char *root, int pid, const char *comm, uint64_t start, const char *cmd,
		       size_t cmdlen, const char *cgroup, const char *const *threads, const int *tids, size_t nthr)
{
	char d[512], s[512];
	snprintf(d, sizeof(d), "%s/%d", root, pid);
	assert_int_equal(mkdir(d, 0755), 0);
	int n = snprintf(s, sizeof(s), "%d (%s) S 1 %d %d 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 %llu 0 0\n", pid,
			 comm, pid, pid, (unsigned long long)start);
	wfile(d, "stat", s, (size_t)n);
	wfile(d, "cmdline", cmd, cmdlen);
	wfile(d, "cgroup", cgroup, strlen(cgroup));
	char t[600];
	snprintf(t, sizeof(t), "%s/task", d);
	assert_int_equal(mkdir(t, 0755), 0);
	for (size_t i = 0; i < nthr; i++) {
		char td[700];
		snprintf(td, sizeof(td), "%s/%d", t, tids[i]);
		assert_int_equal(mkdir(td, 0755), 0);
		wfile(td, "comm", threads[i], strlen(threads[i]));
		wfile(td, "comm", threads[i], strlen(threads[i]));
	}
}

static void scan_fixture(void **state)
{
	(void)state;
	char root[] = "/tmp/sl-sbx-XXXXXX";
	assert_non_null(mkdtemp(root));
	char proc[200], cg[200], p[400];
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(cg, sizeof(cg), "%s/cg", root);
	assert_int_equal(mkdir(proc, 0755), 0);
	assert_int_equal(mkdir(cg, 0755), 0);
	snprintf(p, sizeof(p), "%s/kata_overhead", cg);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/kata_overhead/" SBX, cg);
	assert_int_equal(mkdir(p, 0755), 0);

	static const char cmd[] = "/opt/kata/bin/cloud-hypervisor\0--api-socket\0/run/vc/vm/" SBX "/clh-api.sock\0";
	const char *thr[] = {"cloud-hyperviso\n", "vcpu0\n", "vcpu1\n"};
	int tids[] = {700, 701, 702};
	mkproc_dir(proc, 700, "cloud-hyperviso", 4242, cmd, sizeof(cmd) - 1,
		   "11:memory:/kata_overhead/" SBX "\n0::/\n", thr, tids, 3);
	static const char bash[] = "bash\0";
	mkproc_dir(proc, 701 + 1000, "bash", 1, bash, sizeof(bash) - 1, "0::/user.slice\n", NULL, NULL, 0);
	/* VMMs in no sandbox cgroup: believed when /proc/<pid>/status says
	 * real uid 0; a user's, or one whose status cannot be read, is not */
	static const char fc1[] = "firecracker\0--id\0rootvm\0", fc2[] = "firecracker\0--id\0uservm\0",
			  fc3[] = "firecracker\0--id\0nostatus\0";
	mkproc_dir(proc, 800, "firecracker", 50, fc1, sizeof(fc1) - 1, "0::/system.slice/x.service\n", NULL, NULL, 0);
	mkproc_dir(proc, 801, "firecracker", 51, fc2, sizeof(fc2) - 1, "0::/user.slice\n", NULL, NULL, 0);
	mkproc_dir(proc, 802, "firecracker", 52, fc3, sizeof(fc3) - 1, "0::/user.slice\n", NULL, NULL, 0);
	static const char *const st[2] = { "Name:\tfirecracker\nUmask:\t0022\nState:\tS\nUid:\t0\t0\t0\t0\n",
					   "Name:\tfirecracker\nUid:\t1000\t0\t1000\t1000\nGid:\t1000\n" };
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/%d/status", proc, 800 + i);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fputs(st[i], f);
		fclose(f);
	}
	/* uid 0 counts only in the host's PID and user namespaces (those of
	 * /proc/1): 800 is; 803 is root in a container's own PID namespace,
	 * 804 root in a user namespace, 805 root whose ns links cannot be read */
	static const char fc4[] = "firecracker\0--id\0containerroot\0", fc5[] = "firecracker\0--id\0userns\0",
			  fc6[] = "firecracker\0--id\0nonslink\0";
	mkproc_dir(proc, 803, "firecracker", 53, fc4, sizeof(fc4) - 1,
		   "0::/kubepods/burstable/pod" POD "/" SBX2 "\n", NULL, NULL, 0);
	mkproc_dir(proc, 804, "firecracker", 54, fc5, sizeof(fc5) - 1, "0::/system.slice/y.service\n", NULL, NULL, 0);
	mkproc_dir(proc, 805, "firecracker", 55, fc6, sizeof(fc6) - 1, "0::/system.slice/z.service\n", NULL, NULL, 0);
	snprintf(p, sizeof(p), "%s/1", proc);
	assert_int_equal(mkdir(p, 0755), 0); /* no stat: not a candidate itself */
	static const struct {
		int pid;
		const char *pidns, *userns;
	} ns[] = {{1, "pid:[4026531836]", "user:[4026531837]"},
		  {800, "pid:[4026531836]", "user:[4026531837]"},
		  {803, "pid:[4026532901]", "user:[4026531837]"},
		  {804, "pid:[4026531836]", "user:[4026532902]"}};
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		snprintf(p, sizeof(p), "%s/%d/ns", proc, ns[i].pid);
		assert_int_equal(mkdir(p, 0755), 0);
		snprintf(p, sizeof(p), "%s/%d/ns/pid", proc, ns[i].pid);
		assert_int_equal(symlink(ns[i].pidns, p), 0);
		snprintf(p, sizeof(p), "%s/%d/ns/user", proc, ns[i].pid);
		assert_int_equal(symlink(ns[i].userns, p), 0);
	}
	for (int pid = 803; pid <= 805; pid++) {
		snprintf(p, sizeof(p), "%s/%d/status", proc, pid);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fputs(st[0], f);
		fclose(f);
	}

	struct sl_cg_mounts m;
	memset(&m, 0, sizeof(m));
	snprintf(m.v2, sizeof(m.v2), "%s", cg);
	struct sl_sbx_scan_opts o = {.mounts = &m, .proc_root = proc};
	struct sl_sbx_list l;
	assert_int_equal(sl_sbx_scan(&o, &l), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.sbx[0].overhead_cgroup, "/kata_overhead/" SBX);
	assert_int_equal(l.sbx[0].vmm_pid, 700);
	assert_int_equal(l.sbx[0].vmm_start_time, 4242);
	assert_int_equal(l.sbx[0].nvcpus, 2);
	assert_string_equal(l.sbx[0].vcpu[0].comm, "vcpu0");
	assert_string_equal(l.sbx[1].id, "rootvm");
	assert_int_equal(l.sbx[1].vmm_pid, 800);
	sl_sbx_list_free(&l);

	/* pid identity */
	assert_int_equal(sl_sbx_proc_alive(proc, 700, 4242), 1);
	assert_int_equal(sl_sbx_proc_alive(proc, 700, 4243), 0);
	assert_int_equal(sl_sbx_proc_alive(proc, 999, 4242), 0);

	char rm[700];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", root);
	assert_int_equal(system(rm), 0);

	/* an unreadable proc root */
	struct sl_sbx_scan_opts bad = {.mounts = NULL, .proc_root = "/nonexistent-sl"};
	assert_int_equal(sl_sbx_scan(&bad, &l), -ENOENT);
}

/* Any local user can start a process named "firecracker --id <id>" with
 * threads named "fc_vcpu 0": outside a cgroup only root makes, a non-root
 * VMM, sentry or shim names no sandbox and joins none; the jailer's
 * unprivileged firecracker (its own firecracker/<id> cgroup) counts, and a
 * process in a systemd user manager's delegated subtree never does. */
static void spoofed_roles(void **state)
{
	(void)state;
	const char *id = "551e7604-e35c-42b3-b825-416853441234";
	const char *cgs[] = {"/firecracker", "/firecracker/551e7604-e35c-42b3-b825-416853441234"};
	struct sl_sbx_thread ft[] = {{4002, "fc_vcpu 0"}};
	struct sl_sbx_thread fake[] = {{6001, "fc_vcpu 0"}, {6002, "fc_vcpu 1"}};
	const char *ucg = "/user.slice/user-1000.slice/session-3.scope";
	struct sl_sbx_proc ps[] = {
		/* the real one: jailed, uid 123, in its cgroup, started later */
		mkproc(4000, 3990, 900, "firecracker", "/firecracker --id 551e7604-e35c-42b3-b825-416853441234",
		       "/firecracker/551e7604-e35c-42b3-b825-416853441234", ft, 1),
		/* a user's fake of the same id, older, with more "vCPUs" */
		mkproc(6000, 5990, 10, "firecracker", "firecracker --id 551e7604-e35c-42b3-b825-416853441234", ucg,
		       fake, 2),
		/* a user's fake of a new id, a fake sentry and a fake shim */
		mkproc(6100, 5990, 11, "firecracker", "firecracker --id fake-vm", ucg, fake, 2),
		mkproc(6200, 5990, 12, "exe", "runsc-sandbox boot --bundle=/tmp/b fakesentry", ucg, NULL, 0),
		mkproc(6300, 5990, 13, "containerd-shim",
		       "containerd-shim-kata-v2 -id 551e7604-e35c-42b3-b825-416853441234", ucg, NULL, 0),
		/* in a kubepods-like cgroup under the user's delegated manager */
		mkproc(6400, 5990, 14, "exe", "runsc-sandbox boot " SBX,
		       "/user.slice/user-1000.slice/user@1000.service/kubepods/pod" POD "/" SBX, NULL, 0),
	};
	ps[0].uid = 123;
	for (size_t i = 1; i < 6; i++)
		ps[i].uid = 1000;
	struct sl_sbx_list l;
	assert_int_equal(sl_sbx_identify(cgs, 2, ps, 6, &l), 0);
	assert_int_equal(l.n, 1);
	const struct sl_sbx *s = &l.sbx[0];
	assert_string_equal(s->id, id);
	assert_int_equal(s->vmm_pid, 4000);
	assert_int_equal(s->nvcpus, 1);
	assert_int_equal(s->vcpu[0].tid, 4002);
	assert_int_equal(s->nshims, 0);
	sl_sbx_list_free(&l);

	/* a container tenant (uid 65534 in a kubepods container's cgroup): a
	 * fake VMM, and a fake sentry under runc's shim, take no role; gVisor's
	 * real sentry runs as nobody too, under runsc's root shim */
	const char *tcg = "/kubepods/burstable/pod" POD "/" SBX2;
	const char *gcg = "/kubepods/burstable/pod" POD "/" SBX;
	struct sl_sbx_proc tp[] = {
		mkproc(7000, 1, 5, "containerd-shim", "/usr/bin/containerd-shim-runc-v2 -namespace k8s.io -id " SBX2,
		       "/system.slice/containerd.service", NULL, 0),
		mkproc(7001, 7000, 6, "firecracker", "firecracker --id tenantfake", tcg, fake, 2),
		mkproc(7002, 7000, 7, "exe", "runsc-sandbox boot --bundle=/b faketenant", tcg, NULL, 0),
		mkproc(7100, 1, 8, "containerd-shim", "/usr/bin/containerd-shim-runsc-v1 -namespace k8s.io -id " SBX,
		       "/system.slice/containerd.service", NULL, 0),
		mkproc(7101, 7100, 9, "exe", "runsc-sandbox --root=/run/containerd/runsc/k8s.io boot " SBX, gcg, NULL, 0),
	};
	tp[1].uid = tp[2].uid = tp[4].uid = 65534;
	assert_int_equal(sl_sbx_identify(NULL, 0, tp, 5, &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.sbx[0].id, SBX);
	assert_int_equal(l.sbx[0].runtime, SL_SBX_GVISOR);
	assert_int_equal(l.sbx[0].vmm_pid, 7101);
	sl_sbx_list_free(&l);

	/* root inside a runc container (no user namespace) is uid 0 but not
	 * the host's root: its own PID namespace (host_ns 0). Its fake
	 * firecracker, its fake Kata cloud-hypervisor, its fake runsc shim
	 * with a fake sentry below, and its firecracker claiming the id of a
	 * real one run by the host's root (older, more "vCPUs") take no role;
	 * the real sandbox keeps its VMM and has no pod (not the tenant's) */
	struct sl_sbx_thread ct[] = {{9011, "vcpu0"}, {9012, "vcpu1"}};
	struct sl_sbx_thread rt[] = {{8001, "fc_vcpu 0"}};
	struct sl_sbx_proc rp[] = {
		mkproc(8000, 1, 500, "firecracker", "/usr/bin/firecracker --id realone", "/system.slice/fc.service", rt,
		       1),
		mkproc(9000, 7000, 20, "firecracker", "/bin/firecracker --id tenantspoof", tcg, fake, 2),
		mkproc(9010, 7000, 21, "cloud-hyperviso",
		       "/bin/cloud-hypervisor --api-socket /run/vc/vm/tenantkata/clh-api.sock", tcg, ct, 2),
		mkproc(9020, 7000, 22, "firecracker", "/bin/firecracker --id realone", tcg, fake, 2),
		mkproc(9030, 7000, 23, "containerd-shim", "/bin/containerd-shim-runsc-v1 -id tenantgv", tcg, NULL, 0),
		mkproc(9031, 9030, 24, "exe", "runsc-sandbox boot tenantgv", tcg, NULL, 0),
		mkproc(9040, 7000, 25, "containerd-shim", "/bin/containerd-shim-kata-v2 -id realone", tcg, NULL, 0),
	};
	for (size_t i = 1; i < 7; i++) {
		rp[i].uid = 0;
		rp[i].host_ns = 0;
	}
	rp[5].uid = 65534;
	assert_int_equal(sl_sbx_identify(NULL, 0, rp, 7, &l), 0);
	assert_int_equal(l.n, 1);
	s = &l.sbx[0];
	assert_string_equal(s->id, "realone");
	assert_int_equal(s->runtime, SL_SBX_FIRECRACKER);
	assert_int_equal(s->vmm_pid, 8000);
	assert_int_equal(s->nvcpus, 1);
	assert_int_equal(s->vcpu[0].tid, 8001);
	assert_string_equal(s->pod_uid, "");
	assert_int_equal(s->nshims, 0);
	sl_sbx_list_free(&l);
	/* the same processes in the host's namespaces would be believed: the
	 * namespace, not the names, is what refused them */
	for (size_t i = 1; i < 7; i++)
		rp[i].host_ns = 1;
	assert_int_equal(sl_sbx_identify(NULL, 0, rp, 7, &l), 0);
	assert_true(sl_sbx_find(&l, "tenantspoof") != NULL);
	assert_true(sl_sbx_find(&l, "tenantkata") != NULL);
	assert_true(sl_sbx_find(&l, "tenantgv") != NULL);
	sl_sbx_list_free(&l);
	/* two trusted VMMs of one id: the pod is the kept VMM's (the older
	 * one with vCPUs), whichever is listed first; the other's pod never
	 * sticks to the sandbox */
	struct sl_sbx_proc kept = rp[0], other = rp[3];
	kept.start_time = 5; /* older than other (22) */
	for (int order = 0; order < 2; order++) {
		struct sl_sbx_proc two[2] = {order ? kept : other, order ? other : kept};
		assert_int_equal(sl_sbx_identify(NULL, 0, two, 2, &l), 0);
		assert_int_equal(l.n, 1);
		assert_int_equal(l.sbx[0].vmm_pid, 8000);
		assert_string_equal(l.sbx[0].pod_uid, "");
		sl_sbx_list_free(&l);
	}
	/* uid 0 in the host's PID namespace but another user namespace */
	rp[1].host_ns = 0;
	snprintf(rp[1].cgroup, sizeof(rp[1].cgroup), "/system.slice/x.service");
	assert_int_equal(sl_sbx_identify(NULL, 0, &rp[1], 1, &l), 0);
	assert_int_equal(l.n, 0);
	sl_sbx_list_free(&l);

	/* the same fakes run by root are believed (root can do anything) */
	for (size_t i = 1; i < 6; i++)
		ps[i].uid = 0;
	assert_int_equal(sl_sbx_identify(cgs, 2, ps, 6, &l), 0);
	assert_true(sl_sbx_find(&l, "fake-vm") != NULL);
	sl_sbx_list_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names),
		cmocka_unit_test(cgroup_pick),
		cmocka_unit_test(kata_qemu),
		cmocka_unit_test(kata_clh_overhead),
		cmocka_unit_test(kata_firecracker),
		cmocka_unit_test(gvisor),
		cmocka_unit_test(firecracker_jailer),
		cmocka_unit_test(spoofed_roles),
		cmocka_unit_test(going_away_and_pid_reuse),
		cmocka_unit_test(scan_fixture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
