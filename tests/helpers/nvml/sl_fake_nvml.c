/* A test NVML: libnvidia-ml.so.1 implementing the entry points sandlens's
 * gpu module calls (src/modules/gpu_nvml.h), with values scripted in the
 * file named by $SL_FAKE_NVML_SCRIPT, re-read at every call so a test can
 * change them while the agent runs. Loaded through gpu.nvml_path: the real
 * dlopen/dlsym code path runs. Script lines (# comments):
 *   gpu <i> <key> <value> [<key> <value> ...]
 *     keys: uuid name bus (DDDD:BB:DD.F) temp power_mw util memutil fb_total
 *     fb_used ecc_sbe_vol ecc_dbe_vol ecc_sbe_agg ecc_dbe_agg retired_sbe
 *     retired_dbe remap_corr remap_unc remap_pending remap_fail throttle
 *     replay nvlink_replay nvlink_recovery nvlink_crc_flit nvlink_crc_data
 *   proc <i> <pid> <bytes>      a running compute process on GPU i
 *   xid <i> <xid>               delivered once, in order, by nvmlEventSetWait_v2
 *   init_fail <code>            nvmlInit_v2 returns code
 * Built with the build's sanitizers (so it loads into an ASan agent). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "modules/gpu_nvml.h"

#define MAXG 8
#define MAXP 64

struct fdev {
	char uuid[96], name[96], bus[32];
	unsigned long long v[32];
	unsigned np;
	unsigned pid[MAXP];
	unsigned long long bytes[MAXP];
};
static const char *const keys[] = {"temp", "power_mw", "util", "memutil", "fb_total", "fb_used", "ecc_sbe_vol",
				   "ecc_dbe_vol", "ecc_sbe_agg", "ecc_dbe_agg", "retired_sbe", "retired_dbe",
				   "remap_corr", "remap_unc", "remap_pending", "remap_fail", "throttle", "replay",
				   "nvlink_replay", "nvlink_recovery", "nvlink_crc_flit", "nvlink_crc_data", NULL};
enum { K_TEMP, K_POWER, K_UTIL, K_MEMUTIL, K_FBT, K_FBU, K_SBEV, K_DBEV, K_SBEA, K_DBEA, K_RSBE, K_RDBE, K_RC,
       K_RU, K_RP, K_RF, K_THR, K_REPLAY, K_NV0 };

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static struct fdev devs[MAXG];
static unsigned ndev, nxid, xid_gpu[256], xid_val[256], xid_done;
static int init_fail;

static void load(void)
{
	const char *path = getenv("SL_FAKE_NVML_SCRIPT");
	FILE *f = path ? fopen(path, "r") : NULL;
	char line[1024];

	memset(devs, 0, sizeof(devs));
	ndev = nxid = 0;
	init_fail = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *save, *t = strtok_r(line, " \t\n", &save);
		if (!t || t[0] == '#')
			continue;
		if (!strcmp(t, "init_fail")) {
			init_fail = atoi(strtok_r(NULL, " \t\n", &save) ?: "999");
			continue;
		}
		char *is = strtok_r(NULL, " \t\n", &save);
		unsigned i = is ? (unsigned)atoi(is) : MAXG;
		if (i >= MAXG)
			continue;
		if (!strcmp(t, "gpu")) {
			if (i + 1 > ndev)
				ndev = i + 1;
			char *k, *v;
			while ((k = strtok_r(NULL, " \t\n", &save)) && (v = strtok_r(NULL, " \t\n", &save))) {
				if (!strcmp(k, "uuid"))
					snprintf(devs[i].uuid, sizeof(devs[i].uuid), "%s", v);
				else if (!strcmp(k, "name"))
					snprintf(devs[i].name, sizeof(devs[i].name), "%s", v);
				else if (!strcmp(k, "bus"))
					snprintf(devs[i].bus, sizeof(devs[i].bus), "%s", v);
				else
					for (int j = 0; keys[j]; j++)
						if (!strcmp(k, keys[j]))
							devs[i].v[j] = strtoull(v, NULL, 10);
			}
		} else if (!strcmp(t, "proc") && devs[i].np < MAXP) {
			char *p = strtok_r(NULL, " \t\n", &save), *b = strtok_r(NULL, " \t\n", &save);
			if (p && b) {
				devs[i].pid[devs[i].np] = (unsigned)atoi(p);
				devs[i].bytes[devs[i].np++] = strtoull(b, NULL, 10);
			}
		} else if (!strcmp(t, "xid") && nxid < 256) {
			char *x = strtok_r(NULL, " \t\n", &save);
			xid_gpu[nxid] = i;
			xid_val[nxid++] = x ? (unsigned)atoi(x) : 0;
		}
	}
	fclose(f);
}

static struct fdev *dev(nvmlDevice_t h)
{
	size_t i = (size_t)((struct fdev *)(void *)h - devs);
	load();
	return i < ndev ? &devs[i] : NULL;
}

#define DEV_OR_FAIL(h)                                                                                               \
	struct fdev *d;                                                                                              \
	pthread_mutex_lock(&lk);                                                                                     \
	if (!(d = dev(h))) {                                                                                         \
		pthread_mutex_unlock(&lk);                                                                           \
		return 2; /* NVML_ERROR_INVALID_ARGUMENT */                                                          \
	}
#define DONE(r)                                                                                                      \
	do {                                                                                                         \
		pthread_mutex_unlock(&lk);                                                                           \
		return (r);                                                                                          \
	} while (0)

nvmlReturn_t nvmlInit_v2(void)
{
	pthread_mutex_lock(&lk);
	load();
	DONE(init_fail);
}
nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }
const char *nvmlErrorString(nvmlReturn_t r) { return r ? "fake NVML error" : "Success"; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	pthread_mutex_lock(&lk);
	load();
	*n = ndev;
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h)
{
	if (i >= MAXG)
		return 2;
	*h = (nvmlDevice_t)(void *)&devs[i];
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char *b, unsigned int n)
{
	DEV_OR_FAIL(h);
	snprintf(b, n, "%s", d->uuid);
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char *b, unsigned int n)
{
	DEV_OR_FAIL(h);
	snprintf(b, n, "%s", d->name);
	for (char *c = b; *c; c++)
		if (*c == '_')
			*c = ' ';
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, nvmlPciInfo_t *p)
{
	unsigned dom = 0, bus = 0, dv = 0, fn = 0;
	DEV_OR_FAIL(h);
	memset(p, 0, sizeof(*p));
	sscanf(d->bus, "%x:%x:%x.%x", &dom, &bus, &dv, &fn);
	p->domain = dom;
	p->bus = bus;
	p->device = dv;
	snprintf(p->busId, sizeof(p->busId), "%08X:%02X:%02X.%X", dom, bus, dv, fn);
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04X:%02X:%02X.%X", dom, bus, dv, fn);
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t h, int t, int c, unsigned long long *v)
{
	DEV_OR_FAIL(h);
	*v = d->v[t ? (c ? K_DBEA : K_DBEV) : (c ? K_SBEA : K_SBEV)];
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t h, int cause, unsigned int *cnt, unsigned long long *a)
{
	DEV_OR_FAIL(h);
	unsigned n = (unsigned)d->v[cause ? K_RDBE : K_RSBE];
	(void)a;
	int r = *cnt < n ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
	*cnt = n;
	DONE(r);
}
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t h, unsigned *c, unsigned *u, unsigned *p, unsigned *f)
{
	DEV_OR_FAIL(h);
	*c = (unsigned)d->v[K_RC];
	*u = (unsigned)d->v[K_RU];
	*p = (unsigned)d->v[K_RP];
	*f = (unsigned)d->v[K_RF];
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t h, unsigned long long *r)
{
	DEV_OR_FAIL(h);
	*r = d->v[K_THR];
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t h, int s, unsigned int *t)
{
	DEV_OR_FAIL(h);
	(void)s;
	*t = (unsigned)d->v[K_TEMP];
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t h, unsigned int *p)
{
	DEV_OR_FAIL(h);
	*p = (unsigned)d->v[K_POWER];
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t *u)
{
	DEV_OR_FAIL(h);
	u->gpu = (unsigned)d->v[K_UTIL];
	u->memory = (unsigned)d->v[K_MEMUTIL];
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t *m)
{
	DEV_OR_FAIL(h);
	m->total = d->v[K_FBT];
	m->used = d->v[K_FBU];
	m->free = m->total > m->used ? m->total - m->used : 0;
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t h, unsigned int *v)
{
	DEV_OR_FAIL(h);
	*v = (unsigned)d->v[K_REPLAY];
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t h, unsigned int link, int c, unsigned long long *v)
{
	DEV_OR_FAIL(h);
	if (link != 0 || c < 0 || c > 3)
		DONE(NVML_ERROR_NOT_SUPPORTED); /* one link */
	*v = d->v[K_NV0 + c];
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t h, unsigned int *cnt, nvmlProcessInfo_t *p)
{
	DEV_OR_FAIL(h);
	if (*cnt < d->np) {
		*cnt = d->np;
		DONE(NVML_ERROR_INSUFFICIENT_SIZE);
	}
	for (unsigned i = 0; i < d->np; i++) {
		p[i].pid = d->pid[i];
		p[i].usedGpuMemory = d->bytes[i];
		p[i].gpuInstanceId = p[i].computeInstanceId = ~0u;
	}
	*cnt = d->np;
	DONE(NVML_SUCCESS);
}
static int the_set;
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *s)
{
	*s = (nvmlEventSet_t)(void *)&the_set;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t h, unsigned long long t, nvmlEventSet_t s)
{
	(void)t;
	(void)s;
	DEV_OR_FAIL(h);
	(void)d;
	DONE(NVML_SUCCESS);
}
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t s, nvmlEventData_t *e, unsigned int ms)
{
	(void)s;
	pthread_mutex_lock(&lk);
	load();
	if (xid_done < nxid) {
		memset(e, 0, sizeof(*e));
		e->device = (nvmlDevice_t)(void *)&devs[xid_gpu[xid_done]];
		e->eventType = nvmlEventTypeXidCriticalError;
		e->eventData = xid_val[xid_done++];
		DONE(NVML_SUCCESS);
	}
	pthread_mutex_unlock(&lk);
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	return NVML_ERROR_TIMEOUT;
}
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t s)
{
	(void)s;
	return NVML_SUCCESS;
}
