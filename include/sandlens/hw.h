/* hw module ABI (bpf/hw.bpf.c, src/modules/hw*.c, docs/HW.md): one record
 * per hit of a RAS tracepoint (include/trace/events/ras.h, mce.h in the
 * kernel), raw fields as the tracepoint carries them. The sysfs counters
 * (EDAC, PCIe AER and link state, InfiniBand) are read by user space and
 * have no ABI here. Record types 96..111 (include/sandlens/common.h: 16
 * per module). */
#ifndef SANDLENS_HW_H
#define SANDLENS_HW_H

#include "sandlens/common.h"

/* One value per tracepoint: struct sl_hw_ras_event.hdr.type. */
enum sl_hw_event_type {
	SL_EV_HW_MC = 96,       /* ras:mc_event (drivers/edac/edac_mc.c edac_raw_mc_handle_error) */
	SL_EV_HW_AER,           /* ras:aer_event (drivers/pci/pcie/aer.c aer_print_error) */
	SL_EV_HW_NON_STANDARD,  /* ras:non_standard_event (drivers/ras/ras.c log_non_standard_event) */
	SL_EV_HW_ARM,           /* ras:arm_event (drivers/ras/ras.c log_arm_hw_error) */
	SL_EV_HW_MEM_FAILURE,   /* ras:memory_failure_event (mm/memory-failure.c action_result) */
	SL_EV_HW_MCE,           /* mce:mce_record (arch/x86/kernel/cpu/mce/core.c mce_log) */
	SL_EV_HW_END,
};
#define SL_HW_NTP (SL_EV_HW_END - SL_EV_HW_MC)

#define SL_HW_STR 64 /* strings copied from a record (msg, label, dev_name, ...) */

/* ras:mc_event. error_type: enum hw_event_mc_err_type (0 corrected,
 * 1 uncorrected, 2 deferred, 3 fatal, 4 info). */
struct sl_hw_mc {
	__u32 error_type;
	__u16 error_count;
	__u8 mc_index;
	__s8 top_layer, middle_layer, lower_layer;
	__u8 grain_bits;
	__u8 pad;
	__s64 address;
	__s64 syndrome;
	char msg[SL_HW_STR];
	char label[SL_HW_STR];
	char driver_detail[SL_HW_STR];
};

/* ras:aer_event. severity: AER_NONFATAL 0, AER_FATAL 1, AER_CORRECTABLE 2
 * (include/linux/aer.h); status = the AER status register bits. */
struct sl_hw_aer {
	__u32 status;
	__u8 severity;
	__u8 tlp_header_valid;
	__u8 pad[2];
	__u32 tlp_header[4];
	char dev_name[SL_HW_STR]; /* the device's BDF, dev_name(&pdev->dev) */
};

/* ras:non_standard_event. sev: CPER severity (0 recoverable, 1 fatal,
 * 2 corrected, 3 informational: include/linux/cper.h). */
struct sl_hw_nonstd {
	__u8 sec_type[16]; /* GUID of the CPER section */
	__u8 fru_id[16];
	__u8 sev;
	__u8 pad[3];
	__u32 len;
	char fru_text[SL_HW_STR];
};

/* ras:arm_event. sev: CPER severity as above; cpu -1 where the kernel's
 * tracepoint has no cpu field (before 6.12). */
struct sl_hw_arm {
	__u64 mpidr, midr;
	__u32 running_state, psci_state;
	__u8 affinity, sev;
	__u8 pad[2];
	__s32 cpu;
};

/* ras:memory_failure_event. type: enum mf_action_page_type, result:
 * enum mf_result (0 ignored, 1 failed, 2 delayed, 3 recovered). */
struct sl_hw_memfail {
	__u64 pfn;
	__s32 type;
	__s32 result;
};

/* mce:mce_record (struct mce fields). */
struct sl_hw_mce {
	__u64 mcgcap, mcgstatus, status, addr, misc, synd, ipid, ip;
	__u32 cpu, socketid, apicid;
	__u8 bank, cs, cpuvendor;
	__u8 pad;
};

struct sl_hw_ras_event {
	struct sl_hdr hdr; /* hdr.type: enum sl_hw_event_type; hdr.cpu: the CPU that logged it */
	union {
		struct sl_hw_mc mc;
		struct sl_hw_aer aer;
		struct sl_hw_nonstd ns;
		struct sl_hw_arm arm;
		struct sl_hw_memfail mf;
		struct sl_hw_mce mce;
	} u;
};

/* Per-CPU counters (map hw_stats, index = type - SL_EV_HW_MC for hits,
 * SL_HW_NTP + that for ring buffer reservations that failed). */
#define SL_HW_NSTATS (2 * SL_HW_NTP)

#endif
