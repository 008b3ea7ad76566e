/* gpu module: NVML loaded at run time (gpu_nvml.h). */
#include <stddef.h>

#include "modules/gpu_nvml.h"
#include "common/trusted_file.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int gpu_nvml_open(struct gpu_nvml *n, const char *path, char *err, size_t errlen)
{
	memset(n, 0, sizeof(*n));
	/* a path (not a name the loader looks up in the system's directories)
	 * must be a file only root could have put there: it runs as root */
	if (strchr(path, '/') && sl_file_trusted(path, err, errlen))
		return -1;
	dlerror();
	n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen failed");
		return -1;
	}
#define SYM(f, name)                                                                                                 \
	do {                                                                                                         \
		void *p_ = dlsym(n->lib, name);                                                                      \
		memcpy(&n->f, &p_, sizeof(p_));                                                                      \
	} while (0)
	SYM(Init_v2, "nvmlInit_v2");
	SYM(Shutdown, "nvmlShutdown");
	SYM(ErrorString, "nvmlErrorString");
	SYM(DeviceGetCount_v2, "nvmlDeviceGetCount_v2");
	SYM(DeviceGetHandleByIndex_v2, "nvmlDeviceGetHandleByIndex_v2");
	SYM(DeviceGetUUID, "nvmlDeviceGetUUID");
	SYM(DeviceGetName, "nvmlDeviceGetName");
	SYM(DeviceGetPciInfo_v3, "nvmlDeviceGetPciInfo_v3");
	SYM(DeviceGetTotalEccErrors, "nvmlDeviceGetTotalEccErrors");
	SYM(DeviceGetRetiredPages, "nvmlDeviceGetRetiredPages");
	SYM(DeviceGetRemappedRows, "nvmlDeviceGetRemappedRows");
	SYM(DeviceGetCurrentClocksThrottleReasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
	SYM(DeviceGetTemperature, "nvmlDeviceGetTemperature");
	SYM(DeviceGetPowerUsage, "nvmlDeviceGetPowerUsage");
	SYM(DeviceGetUtilizationRates, "nvmlDeviceGetUtilizationRates");
	SYM(DeviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo");
	SYM(DeviceGetPcieReplayCounter, "nvmlDeviceGetPcieReplayCounter");
	SYM(DeviceGetNvLinkErrorCounter, "nvmlDeviceGetNvLinkErrorCounter");
	SYM(DeviceGetComputeRunningProcesses_v3, "nvmlDeviceGetComputeRunningProcesses_v3");
	SYM(EventSetCreate, "nvmlEventSetCreate");
	SYM(DeviceRegisterEvents, "nvmlDeviceRegisterEvents");
	SYM(EventSetWait_v2, "nvmlEventSetWait_v2");
	SYM(EventSetFree, "nvmlEventSetFree");
#undef SYM
	const char *missing = !n->Init_v2 ? "nvmlInit_v2"
			      : !n->Shutdown ? "nvmlShutdown"
			      : !n->DeviceGetCount_v2 ? "nvmlDeviceGetCount_v2"
			      : !n->DeviceGetHandleByIndex_v2 ? "nvmlDeviceGetHandleByIndex_v2"
							      : NULL;
	if (missing) {
		snprintf(err, errlen, "%s: no symbol %s", path, missing);
		dlclose(n->lib);
		n->lib = NULL;
		return -1;
	}
	return 0;
}

void gpu_nvml_close(struct gpu_nvml *n)
{
	if (n->lib)
		dlclose(n->lib);
	n->lib = NULL;
}
