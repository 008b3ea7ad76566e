/* The part of NVIDIA's NVML API the gpu module calls, declared from the
 * published nvml.h documentation (NVML API Reference, docs.nvidia.com/
 * deploy/nvml-api): no build-time dependency on the driver or CUDA. The
 * library is opened at run time with dlopen (gpu.nvml_path, default
 * "libnvidia-ml.so.1") and each entry point looked up with dlsym; one
 * that is missing (an older driver) leaves its figure out.
 *
 * Layouts are the documented ones: nvmlPciInfo_t (v3 call), nvmlMemory_t
 * (v1), nvmlUtilization_t, nvmlProcessInfo_t (the v2 struct the _v3 call
 * fills), nvmlEventData_t. */
#ifndef SANDLENS_MODULES_GPU_NVML_H
#define SANDLENS_MODULES_GPU_NVML_H

typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_TIMEOUT 10

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_NVLINK_MAX_LINKS 18

typedef struct {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE]; /* "00000000:3B:00.0" */
} nvmlPciInfo_t;

typedef struct {
	unsigned long long total, free, used; /* bytes */
} nvmlMemory_t;

typedef struct {
	unsigned int gpu;    /* % of time a kernel ran, last sample period */
	unsigned int memory; /* % of time device memory was read or written */
} nvmlUtilization_t;

typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory; /* bytes; NVML_VALUE_NOT_AVAILABLE when unknown */
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

typedef struct {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData; /* the XID for nvmlEventTypeXidCriticalError */
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlEventData_t;
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL

/* enum values used */
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_AGGREGATE_ECC 1
#define NVML_TEMPERATURE_GPU 0
#define NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS 0
#define NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR 1
/* nvmlNvLinkErrorCounter_t */
#define NVML_NVLINK_ERROR_DL_REPLAY 0
#define NVML_NVLINK_ERROR_DL_RECOVERY 1
#define NVML_NVLINK_ERROR_DL_CRC_FLIT 2
#define NVML_NVLINK_ERROR_DL_CRC_DATA 3

/* The entry points, as function pointers filled from dlsym. */
struct gpu_nvml {
	void *lib;
	nvmlReturn_t (*Init_v2)(void);
	nvmlReturn_t (*Shutdown)(void);
	const char *(*ErrorString)(nvmlReturn_t);
	nvmlReturn_t (*DeviceGetCount_v2)(unsigned int *);
	nvmlReturn_t (*DeviceGetHandleByIndex_v2)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*DeviceGetUUID)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*DeviceGetName)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*DeviceGetPciInfo_v3)(nvmlDevice_t, nvmlPciInfo_t *);
	nvmlReturn_t (*DeviceGetTotalEccErrors)(nvmlDevice_t, int, int, unsigned long long *);
	nvmlReturn_t (*DeviceGetRetiredPages)(nvmlDevice_t, int, unsigned int *, unsigned long long *);
	nvmlReturn_t (*DeviceGetRemappedRows)(nvmlDevice_t, unsigned int *, unsigned int *, unsigned int *,
					      unsigned int *);
	nvmlReturn_t (*DeviceGetCurrentClocksThrottleReasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*DeviceGetTemperature)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*DeviceGetPowerUsage)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetUtilizationRates)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*DeviceGetMemoryInfo)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*DeviceGetPcieReplayCounter)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetNvLinkErrorCounter)(nvmlDevice_t, unsigned int, int, unsigned long long *);
	nvmlReturn_t (*DeviceGetComputeRunningProcesses_v3)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
	nvmlReturn_t (*EventSetCreate)(nvmlEventSet_t *);
	nvmlReturn_t (*DeviceRegisterEvents)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
	nvmlReturn_t (*EventSetWait_v2)(nvmlEventSet_t, nvmlEventData_t *, unsigned int);
	nvmlReturn_t (*EventSetFree)(nvmlEventSet_t);
};

/* dlopen path and resolve every entry point; Init_v2 and the count and
 * handle calls are required. Returns 0, or -1 with the reason in err
 * (dlerror text, or the missing symbol). */
int gpu_nvml_open(struct gpu_nvml *n, const char *path, char *err, size_t errlen);
/* dlclose (after Shutdown, which the caller runs). */
void gpu_nvml_close(struct gpu_nvml *n);

#endif
