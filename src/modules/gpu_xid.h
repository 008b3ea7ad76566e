/* gpu module: the NVIDIA driver's XID kernel-log lines, as the driver
 * prints them (NVIDIA "XID Errors" documentation, r535+ drivers):
 *   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.
 *   NVRM: Xid (PCI:0000:3b:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ...
 *   NVRM: Xid (0000:03:00): 14, Channel 00000001          (older drivers: no PCI:, no pid)
 * The bus id is domain:bus:device of the GPU (no function). */
#ifndef SANDLENS_MODULES_GPU_XID_H
#define SANDLENS_MODULES_GPU_XID_H

#include <stdint.h>

struct gpu_xid_line {
	unsigned domain, bus, device; /* from the (PCI:dddd:bb:dd) part */
	unsigned xid;
	uint32_t pid;      /* 0 when not given or '<unknown>' */
	char name[64];     /* process name, "" when not given or <unknown> */
	char detail[256];  /* the rest of the line */
};

/* gpu_xid event fields: gpu index (< 0: the bus id matched no GPU, gpu
 * and uuid left out), the GPU's uuid and bus id, the XID, and the parsed
 * log line (NULL: the XID came from NVML's event set). New reference, NULL
 * on ENOMEM. */
#include <jansson.h>
json_t *gpu_xid_fields(int gpu, const char *uuid, const char *bus_id, unsigned xid, const struct gpu_xid_line *line);

/* Parse one kernel-log message. Returns 0, or -1 when it is not an XID
 * line. */
int gpu_xid_parse(const char *msg, struct gpu_xid_line *out);

#endif
