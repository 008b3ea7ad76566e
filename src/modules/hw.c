/* hw module: hardware errors (docs/HW.md). The RAS tracepoints the kernel
 * has (bpf/hw.bpf.c; each probed in tracefs, attached alone, an absent or
 * failed one does not stop the others), decoded into events; and once per
 * hw.interval a pass over the sysfs counters (hw_sysfs.c: EDAC, PCIe AER,
 * PCIe link state, InfiniBand port counters) published as a snapshot for
 * /metrics, with two detectors on the poll-loop thread: the corrected-
 * error rate per DIMM/csrow/device over hw.error_rate_window (hw_rate.c,
 * event hw_error_rate once per crossing) and PCIe link state changes
 * (event hw_pcie_link). */
#include "agent/btf_enum.h"
#include "agent/module.h"
#include "common/snapref.h"
#include "modules/hw_decode.h"
#include "modules/hw_rate.h"
#include "modules/hw_sysfs.h"
#include "sandlens/hw.h"
#include "sandlens/token_bucket.h"
#include "hw.skel.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uthash.h>

struct hw_cfg {
	char sysfs_root[256];
	uint64_t interval_ns;
	uint64_t rate_window_ns;
	uint64_t rate_threshold;
	int link_speed_counts;
	uint64_t max_entries;
	uint64_t ringbuf_bytes;
};

/* ---------- declarations ---------- */

#define F(f) SL_CFG_FIELD(struct hw_cfg, f)
static const struct sl_cfg_key hw_keys[] = {
	{"sysfs_root", SL_CFG_STR, F(sysfs_root), "/sys", 0, 0,
	 "where the sysfs counters are read (EDAC, PCIe AER and link, InfiniBand); tests point it at a fixture tree"},
	{"interval", SL_CFG_DURATION_NS, F(interval_ns), "10s", 100000000ULL, 3600ULL * SL_NSEC_PER_SEC,
	 "sysfs counters are read once per interval (100ms..1h)"},
	{"error_rate_window", SL_CFG_DURATION_NS, F(rate_window_ns), "10m", SL_NSEC_PER_SEC,
	 7ULL * 86400 * SL_NSEC_PER_SEC, "window of the corrected-error early warning (1s..7d)"},
	{"error_rate_threshold", SL_CFG_UINT, F(rate_threshold), "10", 0, 1000000000ULL,
	 "corrected errors of one DIMM/csrow/PCI device within the window that make an hw_error_rate event (0 = off)"},
	{"link_speed_counts", SL_CFG_BOOL, F(link_speed_counts), "true", 0, 0,
	 "a PCIe link below its max speed (not only width) is degraded; GPUs and NICs downclock idle links"},
	{"max_entries", SL_CFG_UINT, F(max_entries), "65536", 16, 1000000,
	 "sysfs entries kept per pass (controllers, rows, AER lines, links, port counters); the rest counted as cut"},
	{"ringbuf_size", SL_CFG_BYTES, F(ringbuf_bytes), "64KiB", 4096, 64ULL << 20,
	 "hw_events ring buffer size (a power of two)"},
};
#undef F

static int hw_cfg_check(const void *cfg, char *err, size_t errlen)
{
	const struct hw_cfg *c = cfg;

	if (c->ringbuf_bytes & (c->ringbuf_bytes - 1)) {
		snprintf(err, errlen, "hw.ringbuf_size: %llu is not a power of two", (unsigned long long)c->ringbuf_bytes);
		return -1;
	}
	if (c->sysfs_root[0] != '/') {
		snprintf(err, errlen, "hw.sysfs_root: '%s' is not an absolute path", c->sysfs_root);
		return -1;
	}
	return 0;
}

static const struct sl_field mc_fields[] = {
	{"error_type", SL_FT_STR, 0, "corrected | uncorrected | deferred | fatal | info (enum hw_event_mc_err_type)"},
	{"error_type_code", SL_FT_UINT, 0, "its number"},
	{"error_count", SL_FT_UINT, 0, "errors this report stands for"},
	{"mc_index", SL_FT_UINT, 0, "memory controller (mc<N> in sysfs)"},
	{"top_layer", SL_FT_INT, 0, "location, first EDAC layer (-1 unknown)"},
	{"middle_layer", SL_FT_INT, 0, "location, second layer (-1 unknown)"},
	{"lower_layer", SL_FT_INT, 0, "location, third layer (-1 unknown)"},
	{"address", SL_FT_STR, SL_FF_ADMIN, "physical address, hex (admin only)"},
	{"grain_bytes", SL_FT_UINT, 0, "address granularity, bytes (1 << grain_bits)"},
	{"syndrome", SL_FT_STR, 0, "ECC syndrome, hex"},
	{"msg", SL_FT_STR, 0, "driver message (first 63 bytes)"},
	{"label", SL_FT_STR, 0, "DIMM label(s) of the location"},
	{"driver_detail", SL_FT_STR, 0, "driver-specific detail"},
};
static const struct sl_field aer_fields[] = {
	{"bdf", SL_FT_STR, 0, "the PCI device, DDDD:BB:DD.F"},
	{"aer_severity", SL_FT_STR, 0, "corrected | nonfatal | fatal"},
	{"aer_severity_code", SL_FT_UINT, 0, "AER_NONFATAL 0, AER_FATAL 1, AER_CORRECTABLE 2"},
	{"status", SL_FT_UINT, 0, "AER status register"},
	{"status_bits", SL_FT_ARRAY, 0, "names of the status bits set (drivers/pci/pcie/aer.c)"},
	{"tlp_header", SL_FT_ARRAY, SL_FF_OPTIONAL, "the 4 logged TLP header words, when valid"},
};
static const struct sl_field ns_fields[] = {
	{"sec_type", SL_FT_STR, 0, "CPER section type GUID"},
	{"fru_id", SL_FT_STR, 0, "FRU id GUID"},
	{"fru_text", SL_FT_STR, 0, "FRU text"},
	{"cper_severity", SL_FT_STR, 0, "recoverable | fatal | corrected | informational"},
	{"cper_severity_code", SL_FT_UINT, 0, "its number (CPER_SEV_*)"},
	{"data_len", SL_FT_UINT, 0, "bytes of the raw section"},
};
static const struct sl_field arm_fields[] = {
	{"mpidr", SL_FT_STR, 0, "MPIDR of the processor, hex"},
	{"midr", SL_FT_STR, 0, "MIDR, hex"},
	{"running_state", SL_FT_UINT, 0, "running state"},
	{"psci_state", SL_FT_UINT, 0, "PSCI state"},
	{"affinity", SL_FT_UINT, 0, "affinity level"},
	{"cper_severity", SL_FT_STR, 0, "recoverable | fatal | corrected | informational"},
	{"cper_severity_code", SL_FT_UINT, 0, "its number"},
};
static const struct sl_field mf_fields[] = {
	{"pfn", SL_FT_STR, SL_FF_ADMIN, "page frame number, hex (admin only: the kernel shows PFNs to root only)"},
	{"page_type", SL_FT_STR, SL_FF_OPTIONAL, "enum mf_action_page_type name from kernel BTF"},
	{"page_type_code", SL_FT_INT, 0, "its number"},
	{"result", SL_FT_STR, 0, "ignored | failed | delayed | recovered (enum mf_result)"},
	{"result_code", SL_FT_INT, 0, "its number"},
};
static const struct sl_field mce_fields[] = {
	{"bank", SL_FT_UINT, 0, "MCA bank"},
	{"status", SL_FT_STR, 0, "MCi_STATUS, hex"},
	{"addr", SL_FT_STR, SL_FF_ADMIN, "MCi_ADDR, hex (admin only)"},
	{"misc", SL_FT_STR, SL_FF_ADMIN, "MCi_MISC, hex (admin only)"},
	{"synd", SL_FT_STR, 0, "MCi_SYND (0 where absent), hex"},
	{"ipid", SL_FT_STR, 0, "MCi_IPID (0 where absent), hex"},
	{"ip", SL_FT_STR, SL_FF_ADMIN, "instruction pointer, hex (admin only)"},
	{"mcgstatus", SL_FT_STR, 0, "MCG_STATUS, hex"},
	{"mcgcap", SL_FT_STR, 0, "MCG_CAP, hex"},
	{"socket", SL_FT_UINT, 0, "socket id"},
	{"apicid", SL_FT_UINT, 0, "APIC id"},
	{"cs", SL_FT_UINT, 0, "code segment"},
	{"cpuvendor", SL_FT_UINT, 0, "X86_VENDOR_*"},
	{"uncorrected", SL_FT_BOOL, 0, "MCI_STATUS_UC"},
	{"pcc", SL_FT_BOOL, 0, "MCI_STATUS_PCC: processor context corrupt"},
	{"overflow", SL_FT_BOOL, 0, "MCI_STATUS_OVER"},
};
static const struct sl_field rate_fields[] = {
	{"source", SL_FT_STR, 0, "edac_dimm | edac_csrow | pcie_aer"},
	{"hw_device", SL_FT_STR, 0, "mc<N>/dimm<K>, mc<N>/csrow<K> or the PCI BDF"},
	{"label", SL_FT_STR, 0, "DIMM label (EDAC), \"\" otherwise"},
	{"errors", SL_FT_UINT, 0, "corrected errors within the window"},
	{"total", SL_FT_UINT, 0, "the counter now"},
	{"window_seconds", SL_FT_REAL, 0, "hw.error_rate_window"},
	{"threshold", SL_FT_UINT, 0, "hw.error_rate_threshold"},
	{"rate_per_second", SL_FT_REAL, 0, "errors / window"},
};
static const struct sl_field link_fields[] = {
	{"bdf", SL_FT_STR, 0, "the PCI device"},
	{"degraded", SL_FT_BOOL, 0, "true: below max width (or speed, hw.link_speed_counts); false: back at max"},
	{"speed_gts", SL_FT_REAL, 0, "current_link_speed, GT/s"},
	{"max_speed_gts", SL_FT_REAL, 0, "max_link_speed, GT/s"},
	{"width", SL_FT_UINT, 0, "current_link_width, lanes"},
	{"max_width", SL_FT_UINT, 0, "max_link_width, lanes"},
	{"previous_speed_gts", SL_FT_REAL, SL_FF_OPTIONAL, "speed at the pass before"},
	{"previous_width", SL_FT_UINT, SL_FF_OPTIONAL, "width at the pass before"},
};

#define NF(a) (sizeof(a) / sizeof((a)[0]))
static const struct sl_event_kind hw_kinds[HW_NKINDS] = {
	[HW_K_MC] = {.name = "hw_mc_error", .severity_of = hw_mc_severity, .fields = mc_fields, .nfields = NF(mc_fields),
		     .details = "{error_count} {error_type} mc{mc_index} {label} addr={address}{?msg} {msg}{/}",
		     .doc = "ras:mc_event: a memory controller (EDAC) reported errors"},
	[HW_K_AER] = {.name = "hw_aer_error", .severity_of = hw_aer_severity, .fields = aer_fields,
		      .nfields = NF(aer_fields), .details = "{aer_severity} {bdf} status={status} {status_bits:join}",
		      .doc = "ras:aer_event: PCIe Advanced Error Reporting"},
	[HW_K_NONSTD] = {.name = "hw_nonstd_error", .severity_of = hw_cper_severity, .fields = ns_fields,
			 .nfields = NF(ns_fields), .details = "{cper_severity} section {sec_type} fru {fru_text}",
			 .doc = "ras:non_standard_event: a firmware (CPER) error record of a non-standard section"},
	[HW_K_ARM] = {.name = "hw_arm_error", .severity_of = hw_cper_severity, .fields = arm_fields,
		      .nfields = NF(arm_fields), .details = "{cper_severity} mpidr={mpidr}",
		      .doc = "ras:arm_event: an ARM processor error record"},
	[HW_K_MEMFAIL] = {.name = "hw_mem_failure", .severity_of = hw_memfail_severity, .fields = mf_fields,
			  .nfields = NF(mf_fields), .details = "pfn {pfn} {?page_type}{page_type} {/}{result}",
			  .doc = "ras:memory_failure_event: a poisoned page was handled"},
	[HW_K_MCE] = {.name = "hw_mce", .severity_of = hw_mce_severity, .fields = mce_fields, .nfields = NF(mce_fields),
		      .details = "bank {bank} status={status} addr={addr}{?uncorrected} uncorrected{/}",
		      .doc = "mce:mce_record: a machine check was logged"},
	[HW_K_RATE] = {.name = "hw_error_rate", .severity = SL_SEV_WARNING, .fields = rate_fields,
		       .nfields = NF(rate_fields),
		       .details = "{errors} corrected errors on {hw_device}{?label} ({label}){/} within {window_seconds}s "
				  "(threshold {threshold})",
		       .doc = "the corrected errors of a DIMM/csrow/PCI device within hw.error_rate_window reached "
			      "hw.error_rate_threshold (once per crossing)"},
	[HW_K_LINK] = {.name = "hw_pcie_link", .severity_of = hw_link_severity, .fields = link_fields,
		       .nfields = NF(link_fields),
		       .details = "{bdf} x{width} {speed_gts} GT/s (max x{max_width} {max_speed_gts} GT/s)"
				  "{?degraded} degraded{/}{!degraded} restored{/}",
		       .doc = "a PCIe link's width or speed changed against its max (degraded or restored)"},
};

/* The tracepoints: category, name, the kernel option behind them. */
static const struct {
	const char *cat, *name, *config;
} hw_tps[SL_HW_NTP] = {
	{"ras", "mc_event", "CONFIG_RAS with an EDAC driver"},
	{"ras", "aer_event", "CONFIG_PCIEAER"},
	{"ras", "non_standard_event", "CONFIG_RAS"},
	{"ras", "arm_event", "CONFIG_RAS"},
	{"ras", "memory_failure_event", "CONFIG_MEMORY_FAILURE"},
	{"mce", "mce_record", "CONFIG_X86_MCE"},
};

enum { H_SYS_EDAC = SL_HW_NTP, H_SYS_AER, H_SYS_LINK, H_SYS_IB, HW_NHOOKS };

static const struct sl_hook_decl hw_hooks[HW_NHOOKS] = {
	{"tp/ras/mc_event", "hw_mc_error events (EDAC memory errors)"},
	{"tp/ras/aer_event", "hw_aer_error events (PCIe AER)"},
	{"tp/ras/non_standard_event", "hw_nonstd_error events (firmware CPER records)"},
	{"tp/ras/arm_event", "hw_arm_error events (ARM processor errors)"},
	{"tp/ras/memory_failure_event", "hw_mem_failure events (poisoned pages)"},
	{"tp/mce/mce_record", "hw_mce events (x86 machine checks)"},
	{"sysfs/edac", "EDAC counters per controller, csrow and DIMM; hw_error_rate"},
	{"sysfs/pci_aer", "PCIe AER counters per device; hw_error_rate"},
	{"sysfs/pci_link", "PCIe link speed/width and degraded gauge; hw_pcie_link"},
	{"sysfs/infiniband", "InfiniBand/RoCE port counters"},
};

static const struct sl_prom_family hw_families[] = {
	{"sandlens_hw_edac_correctable_errors_total", SL_PROM_COUNTER, "Corrected memory errors per EDAC controller (mc<N>/ce_count)."},
	{"sandlens_hw_edac_uncorrectable_errors_total", SL_PROM_COUNTER, "Uncorrected memory errors per EDAC controller (ue_count)."},
	{"sandlens_hw_edac_noinfo_errors_total", SL_PROM_COUNTER, "EDAC errors without location (ce_noinfo_count, ue_noinfo_count)."},
	{"sandlens_hw_edac_csrow_correctable_errors_total", SL_PROM_COUNTER, "Corrected errors per EDAC csrow (csrow<K>/ce_count)."},
	{"sandlens_hw_edac_csrow_uncorrectable_errors_total", SL_PROM_COUNTER, "Uncorrected errors per EDAC csrow (csrow<K>/ue_count)."},
	{"sandlens_hw_edac_dimm_correctable_errors_total", SL_PROM_COUNTER, "Corrected errors per DIMM (dimm<K>/dimm_ce_count)."},
	{"sandlens_hw_edac_dimm_uncorrectable_errors_total", SL_PROM_COUNTER, "Uncorrected errors per DIMM (dimm<K>/dimm_ue_count)."},
	{"sandlens_hw_pcie_aer_errors_total", SL_PROM_COUNTER, "PCIe AER errors per device, severity and error type (aer_dev_*)."},
	{"sandlens_hw_pcie_aer_device_errors_total", SL_PROM_COUNTER, "PCIe AER errors per device and severity (TOTAL_ERR_* of aer_dev_*)."},
	{"sandlens_hw_pcie_link_speed_gts", SL_PROM_GAUGE, "PCIe link speed now, GT/s (current_link_speed)."},
	{"sandlens_hw_pcie_link_max_speed_gts", SL_PROM_GAUGE, "PCIe link max speed, GT/s (max_link_speed)."},
	{"sandlens_hw_pcie_link_width", SL_PROM_GAUGE, "PCIe link width now, lanes (current_link_width)."},
	{"sandlens_hw_pcie_link_max_width", SL_PROM_GAUGE, "PCIe link max width, lanes (max_link_width)."},
	{"sandlens_hw_pcie_link_degraded", SL_PROM_GAUGE, "1 when the PCIe link runs below its max width (or speed, hw.link_speed_counts)."},
	{"sandlens_hw_infiniband_port_data_received_bytes_total", SL_PROM_COUNTER, "Bytes received per port (counters/port_rcv_data x 4)."},
	{"sandlens_hw_infiniband_port_data_transmitted_bytes_total", SL_PROM_COUNTER, "Bytes sent per port (counters/port_xmit_data x 4)."},
	{"sandlens_hw_infiniband_port_stat_total", SL_PROM_COUNTER, "InfiniBand PortCounters per port, raw (ports/<n>/counters/<counter>)."},
	{"sandlens_hw_infiniband_port_hw_stat_total", SL_PROM_COUNTER, "Driver hardware counters per port, raw (ports/<n>/hw_counters/<counter>)."},
	{"sandlens_hw_ras_tracepoint_hits_total", SL_PROM_COUNTER, "Hits of each attached RAS tracepoint (BPF count, delivered or not)."},
	{"sandlens_hw_sysfs_passes_total", SL_PROM_COUNTER, "Passes over the sysfs counters."},
	{"sandlens_hw_sysfs_pass_seconds", SL_PROM_GAUGE, "Time the last sysfs pass took, seconds."},
	{"sandlens_hw_sysfs_pass_seconds_total", SL_PROM_COUNTER, "Time every sysfs pass took together, seconds."},
	{"sandlens_hw_sysfs_files", SL_PROM_GAUGE, "Attributes the last pass read."},
	{"sandlens_hw_sysfs_read_errors_total", SL_PROM_COUNTER, "Attributes that could not be read or parsed (not regular files included)."},
	{"sandlens_hw_sysfs_entries_cut", SL_PROM_GAUGE, "Entries the last pass did not keep (hw.max_entries)."},
};
#define HW_NFAM (sizeof(hw_families) / sizeof(hw_families[0]))

static int on_record(void *ctx, void *data, size_t size);
static const struct sl_ringbuf_decl hw_ringbufs[] = {{"hw_events", on_record}};

/* ---------- state ---------- */

struct hw_snap {
	struct sl_snap hdr;
	struct hw_scan scan;
};

/* Passes a device may go unread before its detector state is forgotten. */
#define FORGET_PASSES 10

struct link_state {
	char bdf[16];
	struct hw_link last;
	uint64_t seen_pass;
	UT_hash_handle hh;
};

struct hw_priv {
	struct sl_module *m;
	struct hw_bpf *skel;
	int ncpus;
	int attached[SL_HW_NTP];
	struct sl_snapref snap;
	struct hw_rate *rate;
	struct link_state *links;
	uint64_t last_pass_ns, pass_no;
	struct sl_btf_enum page_types; /* vmlinux enum mf_action_page_type, copied at load */
	_Atomic uint64_t passes, pass_ns_total, pass_ns_last, read_errors;
};

/* ---------- decoding ---------- */

static void page_type_name(struct hw_priv *hp, json_t *o)
{
	int code = (int)json_integer_value(json_object_get(o, "page_type_code"));
	const char *name = sl_btf_enum_name(&hp->page_types, code);

	if (name)
		json_object_set_new(o, "page_type", json_string(name));
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct sl_module *m = ctx;
	struct hw_priv *hp = m->priv;
	char dev[96];
	unsigned kind;
	int cpu;
	json_t *o = hw_ras_fields(data, size, &kind, dev, sizeof(dev), &cpu);
	struct sl_subject s;

	if (!o) {
		sl_module_decode_error(m);
		return 0;
	}
	if (kind == HW_K_MEMFAIL)
		page_type_name(hp, o);
	memset(&s, 0, sizeof(s));
	if (dev[0]) {
		s.kind = SL_SUBJ_DEVICE;
		s.device = dev;
	} else {
		s.kind = SL_SUBJ_CPU;
		s.cpu = cpu;
	}
	sl_module_emit(m, kind, ((const struct sl_hdr *)data)->ts_ns, &s, o, 1);
	return 0;
}

/* ---------- the sysfs pass ---------- */

static void emit_device(struct sl_module *m, unsigned kind, uint64_t now, const char *device, json_t *o)
{
	struct sl_subject s = {.kind = SL_SUBJ_DEVICE, .device = device};
	if (o)
		sl_module_emit(m, kind, now, &s, o, 1);
}

static void rate_check(struct hw_priv *hp, uint64_t now, const char *source, const char *key, const char *subject,
		       const char *label, uint64_t count)
{
	const struct hw_cfg *c = sl_module_cfg(hp->m);
	uint64_t in_w = 0;
	char k[HW_RATE_KEY];

	if (!c->rate_threshold)
		return;
	snprintf(k, sizeof(k), "%s/%s", source, key);
	if (hw_rate_update(hp->rate, k, now, count, c->rate_window_ns, c->rate_threshold, &in_w) == 1)
		emit_device(hp->m, HW_K_RATE, now, subject,
			    hw_rate_fields(source, key, label, in_w, count, c->rate_window_ns, c->rate_threshold));
}

static void detect(struct hw_priv *hp, const struct hw_scan *sc, uint64_t now)
{
	char key[64], subj[96];

	/* rate: DIMMs (or csrows where the controller has no dimm<K>), and
	 * PCI devices' TOTAL_ERR_COR */
	for (size_t i = 0; i < sc->nrows; i++) {
		const struct hw_edac_row *r = &sc->rows[i];
		snprintf(key, sizeof(key), "mc%s/%s%s", r->controller, r->is_dimm ? "dimm" : "csrow", r->row);
		snprintf(subj, sizeof(subj), "edac:%s", key);
		rate_check(hp, now, r->is_dimm ? "edac_dimm" : "edac_csrow", key, subj, r->label, r->ce);
	}
	for (size_t i = 0; i < sc->naer; i++) {
		const struct hw_aer_ctr *a = &sc->aer[i];
		if (a->sev != HW_AER_COR || !a->total)
			continue;
		snprintf(subj, sizeof(subj), "pci:%s", a->bdf);
		rate_check(hp, now, "pcie_aer", a->bdf, subj, "", a->v);
	}
	/* a key unread for FORGET_PASSES passes is gone (a device removed);
	 * one failed read must not lose its history (x 4: pressure step 1
	 * spaces metrics ticks by metrics_slowdown) */
	uint64_t keep = 4 * FORGET_PASSES * ((const struct hw_cfg *)sl_module_cfg(hp->m))->interval_ns;
	hw_rate_expire(hp->rate, now > keep ? now - keep : 0);

	/* links: an event when the degraded state changes */
	for (size_t i = 0; i < sc->nlinks; i++) {
		const struct hw_link *l = &sc->links[i];
		struct link_state *ls;
		HASH_FIND_STR(hp->links, l->bdf, ls);
		if (!ls) {
			if (!(ls = calloc(1, sizeof(*ls))))
				continue;
			snprintf(ls->bdf, sizeof(ls->bdf), "%s", l->bdf);
			ls->last = *l;
			HASH_ADD_STR(hp->links, bdf, ls);
		} else if (ls->last.degraded != l->degraded) {
			snprintf(subj, sizeof(subj), "pci:%s", l->bdf);
			emit_device(hp->m, HW_K_LINK, now, subj, hw_link_fields(l, &ls->last));
		}
		ls->last = *l;
		ls->seen_pass = hp->pass_no;
	}
	struct link_state *ls, *tmp;
	HASH_ITER(hh, hp->links, ls, tmp)
		if (ls->seen_pass + FORGET_PASSES <= hp->pass_no) {
			HASH_DEL(hp->links, ls);
			free(ls);
		}
}

static void snap_free(struct sl_snap *s)
{
	struct hw_snap *h = (struct hw_snap *)s;
	hw_scan_free(&h->scan);
	free(h);
}

static void hw_pass(struct hw_priv *hp, uint64_t now)
{
	const struct hw_cfg *c = sl_module_cfg(hp->m);
	struct hw_snap *sn = calloc(1, sizeof(*sn));
	uint64_t t0 = sl_mono_ns(), dt;

	if (!sn)
		return;
	sl_snap_init(&sn->hdr, snap_free);
	if (hw_scan_run(c->sysfs_root, c->max_entries, c->link_speed_counts, &sn->scan)) {
		sl_snap_put(&sn->hdr);
		return;
	}
	dt = sl_mono_ns() - t0;
	hp->pass_no++;
	atomic_fetch_add(&hp->passes, 1);
	atomic_fetch_add(&hp->pass_ns_total, dt);
	atomic_store(&hp->pass_ns_last, dt);
	atomic_fetch_add(&hp->read_errors, sn->scan.errors);
	detect(hp, &sn->scan, now);
	sl_snapref_publish(&hp->snap, &sn->hdr);
}

static void hw_tick(struct sl_module *m, uint64_t now_ns)
{
	struct hw_priv *hp = m->priv;
	const struct hw_cfg *c = sl_module_cfg(m);

	if (!hp)
		return;
	if (hp->last_pass_ns && now_ns - hp->last_pass_ns < c->interval_ns)
		return;
	hp->last_pass_ns = now_ns;
	hw_pass(hp, now_ns);
}

/* ---------- metrics (API thread) ---------- */

#define FAM(i) sl_prom_declared(p, &hw_families[i])

static void write_sysfs(struct sl_prom *p, const struct hw_scan *s)
{
	struct sl_prom_label l[5];
	char port[16];

	FAM(0);
	for (size_t i = 0; i < s->nmc; i++) {
		l[0] = (struct sl_prom_label){"controller", s->mc[i].controller};
		l[1] = (struct sl_prom_label){NULL, NULL};
		sl_prom_u64(p, hw_families[0].name, l, s->mc[i].ce);
	}
	FAM(1);
	for (size_t i = 0; i < s->nmc; i++) {
		l[0] = (struct sl_prom_label){"controller", s->mc[i].controller};
		l[1] = (struct sl_prom_label){NULL, NULL};
		sl_prom_u64(p, hw_families[1].name, l, s->mc[i].ue);
	}
	FAM(2);
	for (size_t i = 0; i < s->nmc; i++) {
		l[0] = (struct sl_prom_label){"controller", s->mc[i].controller};
		l[1] = (struct sl_prom_label){"type", "correctable"};
		l[2] = (struct sl_prom_label){NULL, NULL};
		sl_prom_u64(p, hw_families[2].name, l, s->mc[i].ce_noinfo);
		l[1].value = "uncorrectable";
		sl_prom_u64(p, hw_families[2].name, l, s->mc[i].ue_noinfo);
	}
	for (int f = 3; f <= 6; f++) {
		int dimm = f >= 5, ue = f == 4 || f == 6;
		FAM(f);
		for (size_t i = 0; i < s->nrows; i++) {
			const struct hw_edac_row *r = &s->rows[i];
			if (r->is_dimm != dimm)
				continue;
			l[0] = (struct sl_prom_label){"controller", r->controller};
			l[1] = (struct sl_prom_label){dimm ? "dimm" : "csrow", r->row};
			l[2] = (struct sl_prom_label){"label", r->label};
			l[3] = (struct sl_prom_label){NULL, NULL};
			sl_prom_u64(p, hw_families[f].name, l, ue ? r->ue : r->ce);
		}
	}
	for (int f = 7; f <= 8; f++) {
		FAM(f);
		for (size_t i = 0; i < s->naer; i++) {
			const struct hw_aer_ctr *a = &s->aer[i];
			if (a->total != (f == 8))
				continue;
			l[0] = (struct sl_prom_label){"device", a->bdf};
			l[1] = (struct sl_prom_label){"severity", hw_aer_sev_names[a->sev]};
			l[2] = (struct sl_prom_label){f == 7 ? "error" : NULL, f == 7 ? a->name : NULL};
			l[3] = (struct sl_prom_label){NULL, NULL};
			sl_prom_u64(p, hw_families[f].name, l, a->v);
		}
	}
	for (int f = 9; f <= 13; f++) {
		FAM(f);
		for (size_t i = 0; i < s->nlinks; i++) {
			const struct hw_link *k = &s->links[i];
			l[0] = (struct sl_prom_label){"device", k->bdf};
			l[1] = (struct sl_prom_label){NULL, NULL};
			double v = f == 9 ? k->speed : f == 10 ? k->max_speed : f == 11 ? (double)k->width
				   : f == 12 ? (double)k->max_width : (double)k->degraded;
			sl_prom_f64(p, hw_families[f].name, l, v);
		}
	}
	for (int f = 14; f <= 17; f++) {
		FAM(f);
		for (size_t i = 0; i < s->nib; i++) {
			const struct hw_ib_ctr *c = &s->ib[i];
			snprintf(port, sizeof(port), "%u", c->port);
			l[0] = (struct sl_prom_label){"device", c->dev};
			l[1] = (struct sl_prom_label){"port", port};
			l[2] = (struct sl_prom_label){NULL, NULL};
			if (f == 14 || f == 15) {
				if (c->hw || strcmp(c->name, f == 14 ? "port_rcv_data" : "port_xmit_data"))
					continue;
				/* IBA PortRcvData/PortXmitData count 32-bit words */
				sl_prom_u64(p, hw_families[f].name, l, c->v * 4);
				continue;
			}
			if (c->hw != (f == 17))
				continue;
			l[2] = (struct sl_prom_label){"counter", c->name};
			l[3] = (struct sl_prom_label){NULL, NULL};
			sl_prom_u64(p, hw_families[f].name, l, c->v);
		}
	}
}

static void hw_write_metrics(struct sl_module *m, struct sl_prom *p)
{
	struct hw_priv *hp = m->priv;
	struct hw_snap *sn;
	struct sl_prom_label l[2] = {{"tracepoint", NULL}, {NULL, NULL}};
	char tp[64];

	if (!hp)
		return;
	sn = (struct hw_snap *)sl_snapref_get(&hp->snap);
	if (sn)
		write_sysfs(p, &sn->scan);
	FAM(18);
	for (unsigned i = 0; i < SL_HW_NTP; i++) {
		if (!hp->attached[i])
			continue;
		snprintf(tp, sizeof(tp), "%s:%s", hw_tps[i].cat, hw_tps[i].name);
		l[0].value = tp;
		sl_prom_u64(p, hw_families[18].name, l, sl_percpu_sum(bpf_map__fd(hp->skel->maps.hw_stats), i, hp->ncpus));
	}
	FAM(19);
	sl_prom_u64(p, hw_families[19].name, NULL, atomic_load(&hp->passes));
	FAM(20);
	sl_prom_decimal(p, hw_families[20].name, NULL, atomic_load(&hp->pass_ns_last), 9);
	FAM(21);
	sl_prom_decimal(p, hw_families[21].name, NULL, atomic_load(&hp->pass_ns_total), 9);
	FAM(22);
	sl_prom_u64(p, hw_families[22].name, NULL, sn ? sn->scan.files : 0);
	FAM(23);
	sl_prom_u64(p, hw_families[23].name, NULL, atomic_load(&hp->read_errors));
	FAM(24);
	sl_prom_u64(p, hw_families[24].name, NULL, sn ? sn->scan.cut : 0);
	sl_snap_put(sn ? &sn->hdr : NULL);
}

static void hw_write_drops(struct sl_module *m, struct sl_prom *p)
{
	struct hw_priv *hp = m->priv;
	struct sl_prom_label l[3] = {{"reason", "ringbuf_full"}, {"type", NULL}, {NULL, NULL}};

	if (!hp || !hp->skel)
		return;
	for (unsigned i = 0; i < SL_HW_NTP; i++) {
		if (!hp->attached[i])
			continue;
		l[1].value = hw_kinds[i].name; /* kinds 0..5 follow the tracepoints */
		sl_prom_u64(p, "sandlens_events_dropped_total", l,
			    sl_percpu_sum(bpf_map__fd(hp->skel->maps.hw_stats), SL_HW_NTP + i, hp->ncpus));
	}
}

/* ---------- lifecycle ---------- */

static void sysfs_hook(struct sl_module *m, int h, unsigned found, const char *root, const char *where,
		       const char *what)
{
	char why[160];

	if (found) {
		sl_module_hook(m, hw_hooks[h].name, SL_HOOK_ATTACHED, NULL);
		return;
	}
	snprintf(why, sizeof(why), "absent: no %s under %s%s (%s)", what, root, where,
		 h == H_SYS_EDAC ? "no EDAC driver loaded" : h == H_SYS_IB ? "no RDMA device" : "no such PCI device files");
	sl_module_hook(m, hw_hooks[h].name, SL_HOOK_DEGRADED, why);
}

static int hw_init(struct sl_module *m)
{
	const struct hw_cfg *c = sl_module_cfg(m);
	struct hw_priv *hp = calloc(1, sizeof(*hp));
	struct hw_bpf *s;
	int err;

	if (!hp)
		return -ENOMEM;
	m->priv = hp;
	hp->m = m;
	sl_snapref_init(&hp->snap);
	if (!(hp->rate = hw_rate_new()))
		return -ENOMEM;
	hp->ncpus = libbpf_num_possible_cpus();
	if (hp->ncpus <= 0) {
		snprintf(m->error, sizeof(m->error), "cannot count possible CPUs");
		return -EINVAL;
	}
	s = hp->skel = hw_bpf__open();
	if (!s) {
		err = -errno;
		snprintf(m->error, sizeof(m->error), "open BPF object: %s", strerror(-err));
		return err;
	}
	struct bpf_program *progs[SL_HW_NTP] = {s->progs.hw_mc_event,           s->progs.hw_aer_event,
						 s->progs.hw_non_standard_event, s->progs.hw_arm_event,
						 s->progs.hw_memory_failure_event, s->progs.hw_mce_record};
	struct bpf_link **links[SL_HW_NTP] = {&s->links.hw_mc_event,           &s->links.hw_aer_event,
					      &s->links.hw_non_standard_event, &s->links.hw_arm_event,
					      &s->links.hw_memory_failure_event, &s->links.hw_mce_record};
	char why[SL_HW_NTP][256];
	int present[SL_HW_NTP];
	for (unsigned i = 0; i < SL_HW_NTP; i++) {
		char path[512];
		struct stat st;
		snprintf(path, sizeof(path), "%s/events/%s/%s", sl_module_tracefs(m), hw_tps[i].cat, hw_tps[i].name);
		int r = stat(path, &st), e = errno;
		present[i] = r == 0 && S_ISDIR(st.st_mode);
		if (!present[i]) {
			if (r && e != ENOENT)
				snprintf(why[i], sizeof(why[i]), "cannot check tracepoint %s:%s: %.80s: %s (tracefs access)",
					 hw_tps[i].cat, hw_tps[i].name, path, strerror(e));
			else
				snprintf(why[i], sizeof(why[i]),
					 "absent: tracepoint %s:%s not in this kernel (no %.80s; needs %s)", hw_tps[i].cat,
					 hw_tps[i].name, path, hw_tps[i].config);
			bpf_program__set_autoload(progs[i], false);
		}
	}
	bpf_map__set_max_entries(s->maps.hw_events, (__u32)c->ringbuf_bytes);
	err = hw_bpf__load(s);
	if (err) {
		snprintf(m->error, sizeof(m->error), "load BPF object: %s", strerror(-err));
		return err;
	}
	for (unsigned i = 0; i < SL_HW_NTP; i++) {
		if (!present[i]) {
			sl_module_hook(m, hw_hooks[i].name, SL_HOOK_DEGRADED, why[i]);
			continue;
		}
		sl_module_attach(m, progs[i], links[i], hw_hooks[i].name);
		hp->attached[i] = *links[i] != NULL;
	}
	err = sl_module_ringbuf(m, "hw_events", bpf_map__fd(s->maps.hw_events));
	if (err) {
		snprintf(m->error, sizeof(m->error), "ring buffer registration: %s", strerror(-err));
		return err;
	}
	/* only the names of one enum are needed after load: the parsed vmlinux
	 * BTF (~6 MB) is not kept */
	struct btf *vmlinux = btf__load_vmlinux_btf();
	sl_btf_enum_copy(vmlinux, "mf_action_page_type", &hp->page_types);
	btf__free(vmlinux);

	/* the first pass now: what sysfs has decides its hooks' states */
	uint64_t now = sl_mono_ns();
	hp->last_pass_ns = now;
	hw_pass(hp, now);
	struct hw_snap *sn = (struct hw_snap *)sl_snapref_get(&hp->snap);
	struct hw_scan empty;
	memset(&empty, 0, sizeof(empty));
	const struct hw_scan *sc = sn ? &sn->scan : &empty;
	sysfs_hook(m, H_SYS_EDAC, sc->edac_dirs, c->sysfs_root, "/devices/system/edac/mc", "mc<N>");
	sysfs_hook(m, H_SYS_AER, sc->aer_devs, c->sysfs_root, "/bus/pci/devices", "aer_dev_* files");
	sysfs_hook(m, H_SYS_LINK, sc->link_devs, c->sysfs_root, "/bus/pci/devices", "link speed/width files");
	sysfs_hook(m, H_SYS_IB, sc->ib_ports, c->sysfs_root, "/class/infiniband", "<dev>/ports/<n>");
	sl_snap_put(sn ? &sn->hdr : NULL);
	return 0;
}

static void hw_destroy(struct sl_module *m)
{
	struct hw_priv *hp = m->priv;
	struct link_state *ls, *tmp;

	if (!hp)
		return;
	hw_bpf__destroy(hp->skel);
	sl_snapref_destroy(&hp->snap);
	hw_rate_free(hp->rate);
	HASH_ITER(hh, hp->links, ls, tmp) {
		HASH_DEL(hp->links, ls);
		free(ls);
	}
	sl_btf_enum_free(&hp->page_types);
	free(hp);
	m->priv = NULL;
}

const struct sl_module_ops sl_hw_module = {
	.name = "hw",
	.doc = "docs/HW.md",
	.config = {.size = sizeof(struct hw_cfg), .keys = hw_keys, .nkeys = NF(hw_keys), .check = hw_cfg_check},
	.kinds = hw_kinds,
	.nkinds = HW_NKINDS,
	.families = hw_families,
	.nfamilies = HW_NFAM,
	.hooks = hw_hooks,
	.nhooks = HW_NHOOKS,
	.ringbufs = hw_ringbufs,
	.nringbufs = 1,
	.init = hw_init,
	.tick = hw_tick,
	.tick_is_metrics = 1,
	.write_metrics = hw_write_metrics,
	.write_drops = hw_write_drops,
	.destroy = hw_destroy,
};
