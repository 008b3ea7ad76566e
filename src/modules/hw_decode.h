/* hw module: decoders of the RAS records (include/sandlens/hw.h) and of
 * the sysfs-derived events into event fields (the kinds of
 * src/modules/hw.c; docs/HW.md names each field's kernel source). */
#ifndef SANDLENS_MODULES_HW_DECODE_H
#define SANDLENS_MODULES_HW_DECODE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "modules/hw_sysfs.h"
#include "sandlens/hw.h"

/* Kind indices of the hw module (ops.kinds order). */
enum hw_kind {
	HW_K_MC = 0,      /* hw_mc_error        ras:mc_event */
	HW_K_AER,         /* hw_aer_error       ras:aer_event */
	HW_K_NONSTD,      /* hw_nonstd_error ras:non_standard_event */
	HW_K_ARM,         /* hw_arm_error       ras:arm_event */
	HW_K_MEMFAIL,     /* hw_mem_failure  ras:memory_failure_event */
	HW_K_MCE,         /* hw_mce             mce:mce_record */
	HW_K_RATE,        /* hw_error_rate      sysfs corrected-error rate crossing */
	HW_K_LINK,        /* hw_pcie_link       sysfs link state change */
	HW_NKINDS,
};

/* Fields of one RAS record (size bytes); *kind gets its enum hw_kind and
 * subject the device string of its subject ("edac:mc0", "pci:0000:3b:00.0",
 * "memory") or "" when the subject is a CPU (*cpu set: arm, mce). NULL
 * when the record is short or of an unknown type. */
json_t *hw_ras_fields(const void *data, size_t size, unsigned *kind, char *subject, size_t slen, int *cpu);

/* Names of the codes (static strings; "unknown" out of range). */
const char *hw_mc_err_type_name(unsigned t);  /* enum hw_event_mc_err_type: corrected, uncorrected, deferred, fatal, info */
const char *hw_aer_sev_name(unsigned s);      /* AER_NONFATAL 0 nonfatal, AER_FATAL 1 fatal, AER_CORRECTABLE 2 corrected */
const char *hw_cper_sev_name(unsigned s);     /* CPER_SEV_*: recoverable, fatal, corrected, informational */
const char *hw_mf_result_name(int r);         /* enum mf_result: ignored, failed, delayed, recovered */

/* AER status bits set in status as names (drivers/pci/pcie/aer.c
 * aer_correctable_error_string / aer_uncorrectable_error_string). */
json_t *hw_aer_status_names(uint32_t status, int correctable);

/* hw_error_rate fields. source: "edac_dimm" | "edac_csrow" | "pcie_aer". */
json_t *hw_rate_fields(const char *source, const char *device, const char *label, uint64_t in_window,
		       uint64_t total, uint64_t window_ns, uint64_t threshold);
/* hw_pcie_link fields: now and the state before (prev NULL: first seen). */
json_t *hw_link_fields(const struct hw_link *now, const struct hw_link *prev);

/* severity_of of the kinds (enum sl_severity). */
int hw_mc_severity(const json_t *f);
int hw_aer_severity(const json_t *f);
int hw_cper_severity(const json_t *f);
int hw_mce_severity(const json_t *f);
int hw_link_severity(const json_t *f);
int hw_memfail_severity(const json_t *f);

#endif
