/* gpu module (NVIDIA): NVML opened at run time (gpu_nvml.h, gpu.nvml_path),
 * per-GPU figures sampled every gpu.interval on the module's own thread,
 * XID events from NVML's event set (the same thread, a short wait) and from
 * the driver's "NVRM: Xid" kernel-log lines (src/common/kmsg.h), per-
 * process GPU memory attributed to containers. No library, no driver or
 * no GPU: every hook says absent in /healthz and nothing runs (no thread,
 * no kmsg reader). docs/GPU.md. */
#include "agent/module.h"
#include "cgroup/attr_labels.h"
#include "common/kmsg.h"
#include "common/snapref.h"
#include "modules/gpu_nvml.h"
#include "common/trusted_file.h"
#include "modules/gpu_xid.h"
#include "sandlens/token_bucket.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GPU_MAX 64
#define GPU_MAX_PROCS 256 /* per GPU */
#define XID_QUEUE 64
#define WAIT_MS 200

struct gpu_cfg {
	char nvml_path[256];
	uint64_t interval_ns;
	char kmsg_path[256];
};

#define F(f) SL_CFG_FIELD(struct gpu_cfg, f)
static const struct sl_cfg_key gpu_keys[] = {
	{"nvml_path", SL_CFG_STR, F(nvml_path), "libnvidia-ml.so.1", 0, 0,
	 "NVML library dlopen()ed at start (a name is looked up the loader's way, a path is used as is)"},
	{"interval", SL_CFG_DURATION_NS, F(interval_ns), "10s", 100000000ULL, 3600ULL * SL_NSEC_PER_SEC,
	 "per-GPU figures and running processes are read once per interval (100ms..1h)"},
	{"kmsg_path", SL_CFG_STR, F(kmsg_path), "/dev/kmsg", 0, 0,
	 "the kernel log read for NVRM Xid lines; testing: a file of records, one a line"},
};
#undef F

/* gpu.nvml_path given as a path: the file, when it is there, must be one
 * only root could have written (it is loaded into the root agent);
 * gpu.kmsg_path absolute. A missing library is fine (no NVIDIA driver:
 * the module says absent). */
static int gpu_cfg_check(const void *cfg, char *err, size_t errlen)
{
	const struct gpu_cfg *c = cfg;
	char why[400];

	if (!c->nvml_path[0]) {
		snprintf(err, errlen, "gpu.nvml_path: empty (a library name such as libnvidia-ml.so.1, or an absolute path)");
		return -1;
	}
	if (strchr(c->nvml_path, '/') && c->nvml_path[0] != '/') {
		snprintf(err, errlen, "gpu.nvml_path: '%s' is a relative path (a name is looked up by the loader; a path must be absolute)",
			 c->nvml_path);
		return -1;
	}
	if (c->nvml_path[0] == '/') {
		int rc = sl_file_trusted(c->nvml_path, why, sizeof(why));
		if (rc && rc != -ENOENT) {
			snprintf(err, errlen, "gpu.nvml_path: %s", why);
			return -1;
		}
	}
	if (c->kmsg_path[0] != '/') {
		snprintf(err, errlen, "gpu.kmsg_path: '%s' is not an absolute path", c->kmsg_path);
		return -1;
	}
	return 0;
}

static const struct sl_field xid_fields[] = {
	{"gpu", SL_FT_UINT, SL_FF_OPTIONAL, "NVML index of the GPU (absent when the bus id matches no GPU)"},
	{"uuid", SL_FT_STR, SL_FF_OPTIONAL, "GPU UUID"},
	{"pci_bus_id", SL_FT_STR, 0, "PCI bus id of the GPU"},
	{"xid", SL_FT_UINT, 0, "the XID (NVIDIA XID Errors catalogue)"},
	{"source", SL_FT_STR, 0, "nvml (event set) | kmsg (NVRM: Xid kernel-log line)"},
	{"reported_pid", SL_FT_UINT, SL_FF_OPTIONAL, "pid= of the log line (the process whose channel faulted)"},
	{"process_name", SL_FT_STR, SL_FF_OPTIONAL, "name= of the log line"},
	{"detail", SL_FT_STR, SL_FF_OPTIONAL, "rest of the log line"},
};
static const struct sl_event_kind gpu_kinds[] = {
	{.name = "gpu_xid",
	 .severity = SL_SEV_ERROR,
	 .fields = xid_fields,
	 .nfields = sizeof(xid_fields) / sizeof(xid_fields[0]),
	 .details = "Xid {xid} on {pci_bus_id} ({source}){?process_name} {process_name}{/}{?detail}: {detail}{/}",
	 .doc = "the NVIDIA driver reported an XID error (NVML event or kernel log)"},
};

enum { H_NVML, H_XID_EVENTS, H_KMSG, H_PROCS, GPU_NHOOKS };
static const struct sl_hook_decl gpu_hooks[GPU_NHOOKS] = {
	{"nvml", "per-GPU temperature, power, utilization, memory, ECC, remapped rows, PCIe replays, NVLink errors"},
	{"nvml/xid_events", "gpu_xid events from nvmlEventSetWait_v2"},
	{"kmsg/nvrm_xid", "gpu_xid events from the driver's NVRM: Xid log lines, with pid and container"},
	{"nvml/processes", "per-container GPU memory from the running compute processes"},
};

static const struct sl_prom_family gpu_families[] = {
	{"DCGM_FI_DEV_GPU_TEMP", SL_PROM_GAUGE, "GPU temperature (in C)."},
	{"DCGM_FI_DEV_POWER_USAGE", SL_PROM_GAUGE, "Power draw (in W)."},
	{"DCGM_FI_DEV_GPU_UTIL", SL_PROM_GAUGE, "GPU utilization (in %)."},
	{"DCGM_FI_DEV_MEM_COPY_UTIL", SL_PROM_GAUGE, "Memory utilization (in %)."},
	{"DCGM_FI_DEV_FB_USED", SL_PROM_GAUGE, "Framebuffer memory used (in MiB)."},
	{"DCGM_FI_DEV_FB_FREE", SL_PROM_GAUGE, "Framebuffer memory free (in MiB)."},
	{"DCGM_FI_DEV_XID_ERRORS", SL_PROM_GAUGE, "Value of the last XID error encountered (0 none)."},
	{"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", SL_PROM_GAUGE, "Current clock throttle reasons (bitmask of nvmlClocksThrottleReason*)."},
	{"DCGM_FI_DEV_ROW_REMAP_FAILURE", SL_PROM_GAUGE, "Whether remapping of rows has failed (1 yes)."},
	{"sandlens_gpu_ecc_errors_total", SL_PROM_COUNTER, "ECC errors (nvmlDeviceGetTotalEccErrors) by type and counter (volatile since driver load, aggregate lifetime)."},
	{"sandlens_gpu_retired_pages", SL_PROM_GAUGE, "Pages retired (nvmlDeviceGetRetiredPages) by cause."},
	{"sandlens_gpu_remapped_rows", SL_PROM_GAUGE, "Rows remapped (nvmlDeviceGetRemappedRows) by type."},
	{"sandlens_gpu_row_remap_pending", SL_PROM_GAUGE, "1 when a row remap is pending (needs a GPU reset)."},
	{"sandlens_gpu_pcie_replays_total", SL_PROM_COUNTER, "PCIe replays (nvmlDeviceGetPcieReplayCounter)."},
	{"sandlens_gpu_nvlink_errors_total", SL_PROM_COUNTER, "NVLink errors over all links (nvmlDeviceGetNvLinkErrorCounter) by counter."},
	{"sandlens_gpu_memory_total_bytes", SL_PROM_GAUGE, "Framebuffer memory total, bytes."},
	{"sandlens_gpu_xid_errors_total", SL_PROM_COUNTER, "XID errors seen per GPU, XID and source."},
	{"sandlens_gpu_container_memory_used_bytes", SL_PROM_GAUGE, "GPU memory used by the compute processes of a container (host: not in one)."},
	{"sandlens_gpu_container_processes", SL_PROM_GAUGE, "Compute processes of a container on the GPU."},
	{"sandlens_gpu_devices", SL_PROM_GAUGE, "GPUs NVML reports."},
	{"sandlens_gpu_nvml_errors_total", SL_PROM_COUNTER, "NVML calls that failed (not counting NOT_SUPPORTED)."},
	{"sandlens_gpu_kmsg_lost_total", SL_PROM_COUNTER, "Kernel-log records overwritten before the gpu module read them."},
};
#define GPU_NFAM (sizeof(gpu_families) / sizeof(gpu_families[0]))
enum {
	FM_TEMP, FM_POWER, FM_UTIL, FM_MEMUTIL, FM_FB_USED, FM_FB_FREE, FM_XID, FM_THROTTLE, FM_REMAP_FAIL, FM_ECC,
	FM_RETIRED, FM_REMAPPED, FM_REMAP_PEND, FM_REPLAY, FM_NVLINK, FM_MEMTOTAL, FM_XID_TOTAL, FM_CT_MEM, FM_CT_PROCS,
	FM_DEVICES, FM_NVML_ERR, FM_KMSG_LOST,
};

/* ---------- state ---------- */

/* One GPU's figures; has_* = the call succeeded. */
struct gpu_fig {
	int has_temp, has_power, has_util, has_mem, has_ecc, has_retired, has_remap, has_throttle, has_replay,
		has_nvlink;
	unsigned temp, power_mw, util, memutil, replay;
	unsigned long long fb_total, fb_used, fb_free;
	unsigned long long ecc[2][2]; /* [corrected|uncorrected][volatile|aggregate] */
	unsigned retired[2];          /* [sbe|dbe] */
	unsigned remap_corr, remap_unc, remap_pending, remap_fail;
	unsigned long long throttle;
	unsigned long long nvlink[4];
	unsigned nproc;
	nvmlProcessInfo_t procs[GPU_MAX_PROCS];
};

struct gpu_dev {
	nvmlDevice_t h;
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE], name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	char bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
	char index[12], minor[24];
	unsigned domain, bus, device;
};

/* Per container GPU memory, one GPU. */
struct gpu_ct {
	unsigned gpu;
	struct sl_attr at;
	uint64_t bytes;
	unsigned procs;
};

struct gpu_snap {
	struct sl_snap hdr;
	unsigned n;
	struct gpu_fig fig[GPU_MAX];
	unsigned last_xid[GPU_MAX];
	size_t nct;
	struct gpu_ct *ct;
};

struct xid_count {
	unsigned gpu, xid, src; /* src 0 nvml, 1 kmsg */
	uint64_t n;
};
#define MAX_XID_COUNTS 256

struct gpu_priv {
	struct sl_module *m;
	struct gpu_nvml nvml;
	int inited;
	unsigned n;
	struct gpu_dev dev[GPU_MAX];
	nvmlEventSet_t set;
	struct sl_kmsg *kmsg;
	pthread_t thr;
	int thr_started;
	_Atomic int stop;
	/* thread -> poll loop */
	pthread_mutex_t lock;
	struct gpu_fig *raw; /* the newest sample (GPU_MAX figs), NULL when taken */
	struct xid_q {
		unsigned gpu, xid;
		uint64_t ts;
	} q[XID_QUEUE];
	unsigned nq;
	_Atomic uint64_t nvml_errors, xid_dropped;
	/* poll loop */
	unsigned last_xid[GPU_MAX];
	struct xid_count xc[MAX_XID_COUNTS];
	unsigned nxc;
	pthread_mutex_t xc_lock; /* xc read by API threads */
	struct sl_snapref snap;
};

/* ---------- sampling (gpu thread) ---------- */

static int ok(struct gpu_priv *gp, nvmlReturn_t r)
{
	if (r == NVML_SUCCESS)
		return 1;
	if (r != NVML_ERROR_NOT_SUPPORTED)
		atomic_fetch_add(&gp->nvml_errors, 1);
	return 0;
}

static void sample_one(struct gpu_priv *gp, nvmlDevice_t h, struct gpu_fig *f)
{
	const struct gpu_nvml *n = &gp->nvml;
	nvmlUtilization_t u;
	nvmlMemory_t mem;

	memset(f, 0, offsetof(struct gpu_fig, procs));
	if (n->DeviceGetTemperature)
		f->has_temp = ok(gp, n->DeviceGetTemperature(h, NVML_TEMPERATURE_GPU, &f->temp));
	if (n->DeviceGetPowerUsage)
		f->has_power = ok(gp, n->DeviceGetPowerUsage(h, &f->power_mw));
	if (n->DeviceGetUtilizationRates && (f->has_util = ok(gp, n->DeviceGetUtilizationRates(h, &u)))) {
		f->util = u.gpu;
		f->memutil = u.memory;
	}
	if (n->DeviceGetMemoryInfo && (f->has_mem = ok(gp, n->DeviceGetMemoryInfo(h, &mem)))) {
		f->fb_total = mem.total;
		f->fb_used = mem.used;
		f->fb_free = mem.free;
	}
	if (n->DeviceGetTotalEccErrors) {
		f->has_ecc = 1;
		for (int t = 0; t < 2; t++)
			for (int c = 0; c < 2; c++)
				f->has_ecc &= ok(gp, n->DeviceGetTotalEccErrors(h, t, c, &f->ecc[t][c]));
	}
	if (n->DeviceGetRetiredPages) {
		f->has_retired = 1;
		for (int c = 0; c < 2; c++) {
			unsigned cnt = 0;
			nvmlReturn_t r = n->DeviceGetRetiredPages(h, c, &cnt, NULL);
			if (r == NVML_ERROR_INSUFFICIENT_SIZE)
				r = NVML_SUCCESS; /* cnt holds the count */
			f->has_retired &= ok(gp, r);
			f->retired[c] = cnt;
		}
	}
	if (n->DeviceGetRemappedRows)
		f->has_remap = ok(gp, n->DeviceGetRemappedRows(h, &f->remap_corr, &f->remap_unc, &f->remap_pending,
							       &f->remap_fail));
	if (n->DeviceGetCurrentClocksThrottleReasons)
		f->has_throttle = ok(gp, n->DeviceGetCurrentClocksThrottleReasons(h, &f->throttle));
	if (n->DeviceGetPcieReplayCounter)
		f->has_replay = ok(gp, n->DeviceGetPcieReplayCounter(h, &f->replay));
	if (n->DeviceGetNvLinkErrorCounter) {
		for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++)
			for (int c = 0; c < 4; c++) {
				unsigned long long v = 0;
				/* links a GPU does not have answer NOT_SUPPORTED or INVALID_ARGUMENT */
				if (n->DeviceGetNvLinkErrorCounter(h, l, c, &v) == NVML_SUCCESS) {
					f->has_nvlink = 1;
					f->nvlink[c] += v;
				}
			}
	}
	f->nproc = 0;
	if (n->DeviceGetComputeRunningProcesses_v3) {
		unsigned cnt = GPU_MAX_PROCS;
		if (ok(gp, n->DeviceGetComputeRunningProcesses_v3(h, &cnt, f->procs)))
			f->nproc = cnt < GPU_MAX_PROCS ? cnt : GPU_MAX_PROCS;
	}
}

static unsigned gpu_of_handle(const struct gpu_priv *gp, nvmlDevice_t h)
{
	for (unsigned i = 0; i < gp->n; i++)
		if (gp->dev[i].h == h)
			return i;
	return GPU_MAX;
}

static void *gpu_thread(void *arg)
{
	struct gpu_priv *gp = arg;
	const struct gpu_cfg *c = sl_module_cfg(gp->m);
	uint64_t last = 0;

	pthread_setname_np(pthread_self(), "sl-gpu");
	while (!atomic_load(&gp->stop)) {
		uint64_t now = sl_mono_ns();
		if (!last || now - last >= c->interval_ns) {
			struct gpu_fig *figs = calloc(GPU_MAX, sizeof(*figs));
			last = now;
			if (figs) {
				for (unsigned i = 0; i < gp->n; i++)
					sample_one(gp, gp->dev[i].h, &figs[i]);
				pthread_mutex_lock(&gp->lock);
				free(gp->raw);
				gp->raw = figs;
				pthread_mutex_unlock(&gp->lock);
			}
		}
		if (gp->set) {
			nvmlEventData_t d;
			memset(&d, 0, sizeof(d));
			nvmlReturn_t r = gp->nvml.EventSetWait_v2(gp->set, &d, WAIT_MS);
			if (r == NVML_SUCCESS && (d.eventType & nvmlEventTypeXidCriticalError)) {
				pthread_mutex_lock(&gp->lock);
				if (gp->nq < XID_QUEUE) {
					gp->q[gp->nq].gpu = gpu_of_handle(gp, d.device);
					gp->q[gp->nq].xid = (unsigned)d.eventData;
					gp->q[gp->nq].ts = sl_mono_ns();
					gp->nq++;
				} else {
					atomic_fetch_add(&gp->xid_dropped, 1);
				}
				pthread_mutex_unlock(&gp->lock);
			} else if (r != NVML_SUCCESS && r != NVML_ERROR_TIMEOUT) {
				atomic_fetch_add(&gp->nvml_errors, 1);
				struct timespec ts = {0, WAIT_MS * 1000000L};
				nanosleep(&ts, NULL);
			}
		} else {
			struct timespec ts = {0, WAIT_MS * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

/* ---------- pid -> task identity (poll loop) ---------- */

/* The task's cgroup pair from /proc/<pid>/cgroup: the v2 line's directory
 * inode under the v2 mount, the attribution controller's v1 line under its
 * mount. Returns 0, or -1 when the process is gone. */
static int task_of_pid(const struct sl_cg_mounts *cm, uint32_t pid, struct sl_task_id *t)
{
	char path[64], buf[4096], dir[1024];
	int fd;
	ssize_t n;
	struct stat st;

	memset(t, 0, sizeof(*t));
	t->pid = t->tid = pid;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, t->comm, sizeof(t->comm) - 1);
		close(fd);
		if (n > 0 && t->comm[n - 1] == '\n')
			t->comm[n - 1] = 0;
	}
	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || !cm)
			continue;
		*c2 = 0;
		const char *ctrls = c1 + 1, *p = c2 + 1;
		if (!*ctrls && cm->v2[0]) { /* 0::/path */
			snprintf(dir, sizeof(dir), "%s%s", cm->v2, p);
			if (!stat(dir, &st))
				t->cgroup_id = st.st_ino;
			continue;
		}
		if (!cm->v1[0] || !cm->v1_controller[0])
			continue;
		/* "cpu,cpuacct" style lists */
		size_t cl = strlen(cm->v1_controller);
		for (const char *q = ctrls; *q;) {
			const char *e = strchr(q, ',');
			size_t l = e ? (size_t)(e - q) : strlen(q);
			if (l == cl && !strncmp(q, cm->v1_controller, l)) {
				snprintf(dir, sizeof(dir), "%s%s", cm->v1, p);
				if (!stat(dir, &st))
					t->cgroup_v1_id = st.st_ino;
				break;
			}
			q += l + (e ? 1 : 0);
		}
	}
	return 0;
}

/* ---------- the tick (poll loop) ---------- */

static void count_xid(struct gpu_priv *gp, unsigned gpu, unsigned xid, unsigned src)
{
	pthread_mutex_lock(&gp->xc_lock);
	for (unsigned i = 0; i < gp->nxc; i++)
		if (gp->xc[i].gpu == gpu && gp->xc[i].xid == xid && gp->xc[i].src == src) {
			gp->xc[i].n++;
			pthread_mutex_unlock(&gp->xc_lock);
			return;
		}
	if (gp->nxc < MAX_XID_COUNTS)
		gp->xc[gp->nxc++] = (struct xid_count){gpu, xid, src, 1};
	pthread_mutex_unlock(&gp->xc_lock);
}

static void emit_xid(struct gpu_priv *gp, uint64_t ts, unsigned gpu, unsigned xid, const char *bus_id,
		     const struct gpu_xid_line *line)
{
	int known = gpu < gp->n;
	json_t *o = gpu_xid_fields(known ? (int)gpu : -1, known ? gp->dev[gpu].uuid : NULL, bus_id, xid, line);
	struct sl_subject s;
	struct sl_task_id t;
	char dev[32];

	if (!o)
		return;
	if (known) {
		gp->last_xid[gpu] = xid;
		count_xid(gp, gpu, xid, line ? 1 : 0);
	}
	memset(&s, 0, sizeof(s));
	s.kind = SL_SUBJ_DEVICE;
	snprintf(dev, sizeof(dev), "gpu:%u", known ? gpu : 0);
	s.device = known ? dev : "gpu:unknown";
	/* the faulting process, when it still exists: its container */
	if (line && line->pid && task_of_pid(sl_module_mounts(gp->m), line->pid, &t) == 0) {
		s.kind = SL_SUBJ_TASK;
		s.task = &t;
	}
	sl_module_emit(gp->m, 0, ts, &s, o, 1);
}

static void drain_kmsg(struct gpu_priv *gp)
{
	struct sl_kmsg_rec r;
	struct gpu_xid_line x;
	char bus[32];

	for (int i = 0; i < 256 && sl_kmsg_next(gp->kmsg, &r) == 1; i++) {
		/* the kernel's own lines only: a record written to /dev/kmsg by a
		 * process (facility != 0, e.g. "<12>") could forge a GPU fault */
		if (r.facility != 0 || gpu_xid_parse(r.msg, &x))
			continue;
		unsigned g = GPU_MAX;
		for (unsigned k = 0; k < gp->n; k++)
			if (gp->dev[k].domain == x.domain && gp->dev[k].bus == x.bus && gp->dev[k].device == x.device)
				g = k;
		if (g < gp->n)
			snprintf(bus, sizeof(bus), "%s", gp->dev[g].bus_id);
		else
			snprintf(bus, sizeof(bus), "%08x:%02x:%02x.0", x.domain, x.bus, x.device);
		emit_xid(gp, r.ts_us * 1000, g, x.xid, bus, &x);
	}
}

static void snap_free(struct sl_snap *s)
{
	struct gpu_snap *g = (struct gpu_snap *)s;
	free(g->ct);
	free(g);
}

static int same_attr(const struct sl_attr *a, const struct sl_attr *b)
{
	return !strcmp(a->container_id, b->container_id) && !strcmp(a->pod_uid, b->pod_uid) &&
	       !strcmp(a->runtime, b->runtime);
}

static void build_snap(struct gpu_priv *gp, struct gpu_fig *figs)
{
	struct gpu_snap *sn = calloc(1, sizeof(*sn));
	size_t cap = 0;

	if (!sn)
		return;
	sl_snap_init(&sn->hdr, snap_free);
	sn->n = gp->n;
	memcpy(sn->fig, figs, sizeof(sn->fig));
	memcpy(sn->last_xid, gp->last_xid, sizeof(sn->last_xid));
	for (unsigned g = 0; g < gp->n; g++) {
		for (unsigned i = 0; i < figs[g].nproc; i++) {
			const nvmlProcessInfo_t *pi = &figs[g].procs[i];
			struct sl_task_id t;
			struct sl_attr at;
			memset(&at, 0, sizeof(at));
			if (task_of_pid(sl_module_mounts(gp->m), pi->pid, &t))
				continue; /* exited since the sample */
			sl_module_resolve_task(gp->m, &t, &at, NULL);
			if (at.is_container != SL_YES) {
				memset(&at, 0, sizeof(at));
				snprintf(at.runtime, sizeof(at.runtime), "host");
			}
			size_t k;
			for (k = 0; k < sn->nct; k++)
				if (sn->ct[k].gpu == g && same_attr(&sn->ct[k].at, &at))
					break;
			if (k == sn->nct) {
				if (sn->nct == cap) {
					size_t nc = cap ? cap * 2 : 8;
					struct gpu_ct *n = realloc(sn->ct, nc * sizeof(*n));
					if (!n)
						continue;
					sn->ct = n;
					cap = nc;
				}
				memset(&sn->ct[k], 0, sizeof(sn->ct[k]));
				sn->ct[k].gpu = g;
				sn->ct[k].at = at;
				sn->nct++;
			}
			if (pi->usedGpuMemory != NVML_VALUE_NOT_AVAILABLE)
				sn->ct[k].bytes += pi->usedGpuMemory;
			sn->ct[k].procs++;
		}
	}
	sl_snapref_publish(&gp->snap, &sn->hdr);
}

static void gpu_tick(struct sl_module *m, uint64_t now_ns)
{
	struct gpu_priv *gp = m->priv;
	struct gpu_fig *figs;
	unsigned nq;
	(void)now_ns;

	if (!gp || !gp->thr_started)
		return;
	pthread_mutex_lock(&gp->lock);
	figs = gp->raw;
	gp->raw = NULL;
	nq = gp->nq;
	struct xid_q q[XID_QUEUE];
	memcpy(q, gp->q, nq * sizeof(q[0]));
	gp->nq = 0;
	pthread_mutex_unlock(&gp->lock);
	for (unsigned i = 0; i < nq; i++)
		emit_xid(gp, q[i].ts, q[i].gpu, q[i].xid, q[i].gpu < gp->n ? gp->dev[q[i].gpu].bus_id : "", NULL);
	if (gp->kmsg)
		drain_kmsg(gp);
	if (figs) {
		build_snap(gp, figs);
		free(figs);
	}
}

/* ---------- metrics (API thread) ---------- */

static size_t dev_labels(const struct gpu_dev *d, struct sl_prom_label *l)
{
	/* DCGM exporter's labels (modelName as model_name: promtool's
	 * snake_case rule), Hostname left to the scrape's instance */
	l[0] = (struct sl_prom_label){"gpu", d->index};
	l[1] = (struct sl_prom_label){"UUID", d->uuid};
	l[2] = (struct sl_prom_label){"device", d->minor};
	l[3] = (struct sl_prom_label){"model_name", d->name};
	l[4] = (struct sl_prom_label){"pci_bus_id", d->bus_id};
	return 5;
}

#define FAM(i) sl_prom_declared(p, &gpu_families[i])

static void gauge_all(struct sl_prom *p, const struct gpu_priv *gp, const struct gpu_snap *s, int fam)
{
	struct sl_prom_label l[8];

	FAM(fam);
	for (unsigned g = 0; g < s->n; g++) {
		const struct gpu_fig *f = &s->fig[g];
		size_t k = dev_labels(&gp->dev[g], l);
		l[k] = (struct sl_prom_label){NULL, NULL};
		const char *nm = gpu_families[fam].name;
		switch (fam) {
		case FM_TEMP: if (f->has_temp) sl_prom_u64(p, nm, l, f->temp); break;
		case FM_POWER: if (f->has_power) sl_prom_decimal(p, nm, l, f->power_mw, 3); break;
		case FM_UTIL: if (f->has_util) sl_prom_u64(p, nm, l, f->util); break;
		case FM_MEMUTIL: if (f->has_util) sl_prom_u64(p, nm, l, f->memutil); break;
		case FM_FB_USED: if (f->has_mem) sl_prom_u64(p, nm, l, f->fb_used >> 20); break;
		case FM_FB_FREE: if (f->has_mem) sl_prom_u64(p, nm, l, f->fb_free >> 20); break;
		case FM_MEMTOTAL: if (f->has_mem) sl_prom_u64(p, nm, l, f->fb_total); break;
		case FM_XID: sl_prom_u64(p, nm, l, s->last_xid[g]); break;
		case FM_THROTTLE: if (f->has_throttle) sl_prom_u64(p, nm, l, f->throttle); break;
		case FM_REMAP_FAIL: if (f->has_remap) sl_prom_u64(p, nm, l, f->remap_fail); break;
		case FM_REMAP_PEND: if (f->has_remap) sl_prom_u64(p, nm, l, f->remap_pending); break;
		case FM_REPLAY: if (f->has_replay) sl_prom_u64(p, nm, l, f->replay); break;
		case FM_ECC:
			if (!f->has_ecc)
				break;
			for (int t = 0; t < 2; t++)
				for (int c = 0; c < 2; c++) {
					l[k] = (struct sl_prom_label){"type", t ? "uncorrected" : "corrected"};
					l[k + 1] = (struct sl_prom_label){"counter", c ? "aggregate" : "volatile"};
					l[k + 2] = (struct sl_prom_label){NULL, NULL};
					sl_prom_u64(p, nm, l, f->ecc[t][c]);
				}
			break;
		case FM_RETIRED:
			if (!f->has_retired)
				break;
			for (int c = 0; c < 2; c++) {
				l[k] = (struct sl_prom_label){"cause", c ? "double_bit_ecc" : "multiple_single_bit_ecc"};
				l[k + 1] = (struct sl_prom_label){NULL, NULL};
				sl_prom_u64(p, nm, l, f->retired[c]);
			}
			break;
		case FM_REMAPPED:
			if (!f->has_remap)
				break;
			for (int c = 0; c < 2; c++) {
				l[k] = (struct sl_prom_label){"type", c ? "uncorrectable" : "correctable"};
				l[k + 1] = (struct sl_prom_label){NULL, NULL};
				sl_prom_u64(p, nm, l, c ? f->remap_unc : f->remap_corr);
			}
			break;
		case FM_NVLINK: {
			static const char *const cn[4] = {"replay", "recovery", "crc_flit", "crc_data"};
			if (!f->has_nvlink)
				break;
			for (int c = 0; c < 4; c++) {
				l[k] = (struct sl_prom_label){"counter", cn[c]};
				l[k + 1] = (struct sl_prom_label){NULL, NULL};
				sl_prom_u64(p, nm, l, f->nvlink[c]);
			}
			break;
		}
		}
	}
}

static void gpu_write_metrics(struct sl_module *m, struct sl_prom *p)
{
	struct gpu_priv *gp = m->priv;
	struct gpu_snap *s;
	struct sl_prom_label l[16];
	char xid[16];

	if (!gp)
		return;
	FAM(FM_DEVICES);
	sl_prom_u64(p, gpu_families[FM_DEVICES].name, NULL, gp->thr_started ? gp->n : 0);
	if (!gp->thr_started)
		return;
	FAM(FM_NVML_ERR);
	sl_prom_u64(p, gpu_families[FM_NVML_ERR].name, NULL, atomic_load(&gp->nvml_errors));
	FAM(FM_KMSG_LOST);
	sl_prom_u64(p, gpu_families[FM_KMSG_LOST].name, NULL, gp->kmsg ? sl_kmsg_lost(gp->kmsg) : 0);
	s = (struct gpu_snap *)sl_snapref_get(&gp->snap);
	if (!s)
		return;
	for (int f = FM_TEMP; f <= FM_MEMTOTAL; f++)
		gauge_all(p, gp, s, f);
	FAM(FM_XID_TOTAL);
	pthread_mutex_lock(&gp->xc_lock);
	for (unsigned i = 0; i < gp->nxc; i++) {
		size_t k = dev_labels(&gp->dev[gp->xc[i].gpu], l);
		snprintf(xid, sizeof(xid), "%u", gp->xc[i].xid);
		l[k] = (struct sl_prom_label){"xid", xid};
		l[k + 1] = (struct sl_prom_label){"source", gp->xc[i].src ? "kmsg" : "nvml"};
		l[k + 2] = (struct sl_prom_label){NULL, NULL};
		sl_prom_u64(p, gpu_families[FM_XID_TOTAL].name, l, gp->xc[i].n);
	}
	pthread_mutex_unlock(&gp->xc_lock);
	for (int f = FM_CT_MEM; f <= FM_CT_PROCS; f++) {
		FAM(f);
		for (size_t i = 0; i < s->nct; i++) {
			const struct gpu_ct *c = &s->ct[i];
			l[0] = (struct sl_prom_label){"gpu", gp->dev[c->gpu].index};
			l[1] = (struct sl_prom_label){"UUID", gp->dev[c->gpu].uuid};
			size_t k = 2 + sl_attr_labels(&c->at, l + 2);
			l[k] = (struct sl_prom_label){NULL, NULL};
			sl_prom_u64(p, gpu_families[f].name, l, f == FM_CT_MEM ? c->bytes : c->procs);
		}
	}
	sl_snap_put(&s->hdr);
}

/* ---------- lifecycle ---------- */

static void all_absent(struct sl_module *m, const char *why)
{
	for (unsigned i = 0; i < GPU_NHOOKS; i++)
		sl_module_hook(m, gpu_hooks[i].name, SL_HOOK_DEGRADED, why);
}

static int gpu_init(struct sl_module *m)
{
	const struct gpu_cfg *c = sl_module_cfg(m);
	struct gpu_priv *gp = calloc(1, sizeof(*gp));
	char err[200], why[300];
	unsigned cnt = 0;
	nvmlReturn_t r;

	if (!gp)
		return -ENOMEM;
	m->priv = gp;
	gp->m = m;
	pthread_mutex_init(&gp->lock, NULL);
	pthread_mutex_init(&gp->xc_lock, NULL);
	sl_snapref_init(&gp->snap);
	if (gpu_nvml_open(&gp->nvml, c->nvml_path, err, sizeof(err))) {
		snprintf(why, sizeof(why), "absent: no NVML (%s): no NVIDIA driver here", err);
		all_absent(m, why);
		return 0;
	}
	if ((r = gp->nvml.Init_v2()) != NVML_SUCCESS) {
		snprintf(why, sizeof(why), "absent: nvmlInit_v2 failed: %d %s", r,
			 gp->nvml.ErrorString ? gp->nvml.ErrorString(r) : "");
		all_absent(m, why);
		gpu_nvml_close(&gp->nvml);
		return 0;
	}
	gp->inited = 1;
	if (gp->nvml.DeviceGetCount_v2(&cnt) != NVML_SUCCESS || cnt == 0) {
		all_absent(m, "absent: NVML reports no GPU");
		return 0;
	}
	for (unsigned i = 0; i < cnt && gp->n < GPU_MAX; i++) {
		struct gpu_dev *d = &gp->dev[gp->n];
		nvmlPciInfo_t pci;
		if (gp->nvml.DeviceGetHandleByIndex_v2(i, &d->h) != NVML_SUCCESS)
			continue;
		snprintf(d->index, sizeof(d->index), "%u", i);
		snprintf(d->minor, sizeof(d->minor), "nvidia%u", i);
		if (!gp->nvml.DeviceGetUUID || gp->nvml.DeviceGetUUID(d->h, d->uuid, sizeof(d->uuid)) != NVML_SUCCESS)
			d->uuid[0] = 0;
		if (!gp->nvml.DeviceGetName || gp->nvml.DeviceGetName(d->h, d->name, sizeof(d->name)) != NVML_SUCCESS)
			d->name[0] = 0;
		d->uuid[sizeof(d->uuid) - 1] = d->name[sizeof(d->name) - 1] = 0;
		memset(&pci, 0, sizeof(pci));
		if (gp->nvml.DeviceGetPciInfo_v3 && gp->nvml.DeviceGetPciInfo_v3(d->h, &pci) == NVML_SUCCESS) {
			pci.busId[sizeof(pci.busId) - 1] = 0;
			snprintf(d->bus_id, sizeof(d->bus_id), "%s", pci.busId);
			d->domain = pci.domain;
			d->bus = pci.bus;
			d->device = pci.device;
		}
		gp->n++;
	}
	sl_module_hook(m, gpu_hooks[H_NVML].name, SL_HOOK_ATTACHED, NULL);
	sl_module_hook(m, gpu_hooks[H_PROCS].name,
		       gp->nvml.DeviceGetComputeRunningProcesses_v3 ? SL_HOOK_ATTACHED : SL_HOOK_DEGRADED,
		       gp->nvml.DeviceGetComputeRunningProcesses_v3
			       ? NULL
			       : "absent: no nvmlDeviceGetComputeRunningProcesses_v3 in this NVML (driver < 510)");
	/* XID events: every GPU registered in one set */
	if (gp->nvml.EventSetCreate && gp->nvml.DeviceRegisterEvents && gp->nvml.EventSetWait_v2 &&
	    gp->nvml.EventSetCreate(&gp->set) == NVML_SUCCESS) {
		unsigned reg = 0;
		for (unsigned i = 0; i < gp->n; i++)
			reg += gp->nvml.DeviceRegisterEvents(gp->dev[i].h, nvmlEventTypeXidCriticalError, gp->set) ==
			       NVML_SUCCESS;
		if (reg)
			sl_module_hook(m, gpu_hooks[H_XID_EVENTS].name, SL_HOOK_ATTACHED, NULL);
		else {
			sl_module_hook(m, gpu_hooks[H_XID_EVENTS].name, SL_HOOK_DEGRADED,
				       "nvmlDeviceRegisterEvents refused XID events on every GPU: kernel log only");
			if (gp->nvml.EventSetFree)
				gp->nvml.EventSetFree(gp->set);
			gp->set = NULL;
		}
	} else {
		gp->set = NULL;
		sl_module_hook(m, gpu_hooks[H_XID_EVENTS].name, SL_HOOK_DEGRADED,
			       "absent: no NVML event set entry points: kernel log only");
	}
	gp->kmsg = sl_kmsg_open(c->kmsg_path[0] ? c->kmsg_path : NULL, 1);
	if (gp->kmsg)
		sl_module_hook(m, gpu_hooks[H_KMSG].name, SL_HOOK_ATTACHED, NULL);
	else {
		snprintf(why, sizeof(why), "cannot read %.120s: %s (CAP_SYSLOG)", c->kmsg_path[0] ? c->kmsg_path : "/dev/kmsg",
			 strerror(errno));
		sl_module_hook(m, gpu_hooks[H_KMSG].name, SL_HOOK_DEGRADED, why);
	}
	if (pthread_create(&gp->thr, NULL, gpu_thread, gp)) {
		snprintf(m->error, sizeof(m->error), "cannot start the gpu thread");
		return -EAGAIN;
	}
	gp->thr_started = 1;
	return 0;
}

static void gpu_destroy(struct sl_module *m)
{
	struct gpu_priv *gp = m->priv;

	if (!gp)
		return;
	if (gp->thr_started) {
		atomic_store(&gp->stop, 1);
		pthread_join(gp->thr, NULL);
	}
	if (gp->set && gp->nvml.EventSetFree)
		gp->nvml.EventSetFree(gp->set);
	if (gp->inited)
		gp->nvml.Shutdown();
	gpu_nvml_close(&gp->nvml);
	sl_kmsg_close(gp->kmsg);
	sl_snapref_destroy(&gp->snap);
	free(gp->raw);
	pthread_mutex_destroy(&gp->lock);
	pthread_mutex_destroy(&gp->xc_lock);
	free(gp);
	m->priv = NULL;
}

const struct sl_module_ops sl_gpu_module = {
	.name = "gpu",
	.doc = "docs/GPU.md",
	.config = {.size = sizeof(struct gpu_cfg),
		   .keys = gpu_keys,
		   .nkeys = sizeof(gpu_keys) / sizeof(gpu_keys[0]),
		   .check = gpu_cfg_check},
	.kinds = gpu_kinds,
	.nkinds = 1,
	.families = gpu_families,
	.nfamilies = GPU_NFAM,
	.hooks = gpu_hooks,
	.nhooks = GPU_NHOOKS,
	.init = gpu_init,
	.tick = gpu_tick,
	.write_metrics = gpu_write_metrics,
	.destroy = gpu_destroy,
};
