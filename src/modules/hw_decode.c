/* hw module: record and event field builders (hw_decode.h). */
#include "modules/hw_decode.h"

#include "agent/module.h"

#include <stdio.h>
#include <string.h>

#define ARRAY_N(a) (sizeof(a) / sizeof((a)[0]))

const char *hw_mc_err_type_name(unsigned t)
{
	/* include/linux/edac.h enum hw_event_mc_err_type */
	static const char *const n[] = {"corrected", "uncorrected", "deferred", "fatal", "info"};
	return t < ARRAY_N(n) ? n[t] : "unknown";
}

const char *hw_aer_sev_name(unsigned s)
{
	/* include/linux/aer.h: AER_NONFATAL 0, AER_FATAL 1, AER_CORRECTABLE 2 */
	static const char *const n[] = {"nonfatal", "fatal", "corrected"};
	return s < ARRAY_N(n) ? n[s] : "unknown";
}

const char *hw_cper_sev_name(unsigned s)
{
	/* include/linux/cper.h CPER_SEV_* */
	static const char *const n[] = {"recoverable", "fatal", "corrected", "informational"};
	return s < ARRAY_N(n) ? n[s] : "unknown";
}

const char *hw_mf_result_name(int r)
{
	/* include/linux/mm.h enum mf_result */
	static const char *const n[] = {"ignored", "failed", "delayed", "recovered"};
	return r >= 0 && (size_t)r < ARRAY_N(n) ? n[r] : "unknown";
}

json_t *hw_aer_status_names(uint32_t status, int correctable)
{
	/* drivers/pci/pcie/aer.c aer_correctable_error_string[],
	 * aer_uncorrectable_error_string[] */
	static const char *const cor[32] = {[0] = "RxErr",      [6] = "BadTLP",       [7] = "BadDLLP",
					    [8] = "Rollover",   [12] = "Timeout",     [13] = "NonFatalErr",
					    [14] = "CorrIntErr", [15] = "HeaderOF"};
	static const char *const unc[32] = {
		[0] = "Undefined",     [4] = "DLP",           [5] = "SDES",          [12] = "TLP",
		[13] = "FCP",          [14] = "CmpltTO",      [15] = "CmpltAbrt",    [16] = "UnxCmplt",
		[17] = "RxOF",         [18] = "MalfTLP",      [19] = "ECRC",         [20] = "UnsupReq",
		[21] = "ACSViol",      [22] = "UncorrIntErr", [23] = "BlockedTLP",   [24] = "AtomicOpBlocked",
		[25] = "TLPBlockedErr", [26] = "PoisonTLPBlocked"};
	json_t *a = json_array();
	char b[16];

	for (unsigned i = 0; i < 32 && a; i++) {
		if (!(status & (1u << i)))
			continue;
		const char *n = (correctable ? cor : unc)[i];
		if (!n) {
			snprintf(b, sizeof(b), "bit%u", i);
			n = b;
		}
		json_array_append_new(a, json_string(n));
	}
	return a;
}

static json_t *guid_str(const uint8_t g[16])
{
	/* the kernel's %pU (little-endian guid_t as printed by CPER: %pUl) */
	char b[40];
	snprintf(b, sizeof(b), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", g[3], g[2], g[1],
		 g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
	return json_string(b);
}

static json_t *hex64(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%016llx", (unsigned long long)v);
	return json_string(b);
}

/* a string the BPF program copied: bounded, NUL-terminated here */
static json_t *rec_str(const char *s, size_t n)
{
	char b[SL_HW_STR + 1];
	size_t l = strnlen(s, n < SL_HW_STR ? n : SL_HW_STR);
	memcpy(b, s, l);
	b[l] = 0;
	json_t *j = json_string(b);
	return j ? j : json_string(""); /* invalid UTF-8: json_string refuses it */
}

#define SET(o, k, v) json_object_set_new((o), (k), (v))

json_t *hw_ras_fields(const void *data, size_t size, unsigned *kind, char *subject, size_t slen, int *cpu)
{
	const struct sl_hw_ras_event *e = data;
	json_t *o;

	if (size < sizeof(*e) || !(o = json_object()))
		return NULL;
	subject[0] = 0;
	*cpu = (int)e->hdr.cpu;
	switch (e->hdr.type) {
	case SL_EV_HW_MC: {
		const struct sl_hw_mc *m = &e->u.mc;
		*kind = HW_K_MC;
		snprintf(subject, slen, "edac:mc%u", m->mc_index);
		SET(o, "error_type", json_string(hw_mc_err_type_name(m->error_type)));
		SET(o, "error_type_code", json_integer(m->error_type));
		SET(o, "error_count", json_integer(m->error_count));
		SET(o, "mc_index", json_integer(m->mc_index));
		SET(o, "top_layer", json_integer(m->top_layer));
		SET(o, "middle_layer", json_integer(m->middle_layer));
		SET(o, "lower_layer", json_integer(m->lower_layer));
		SET(o, "address", hex64((uint64_t)m->address));
		SET(o, "grain_bytes", json_integer(m->grain_bits < 63 ? (json_int_t)(1ULL << m->grain_bits) : 0));
		SET(o, "syndrome", hex64((uint64_t)m->syndrome));
		SET(o, "msg", rec_str(m->msg, sizeof(m->msg)));
		SET(o, "label", rec_str(m->label, sizeof(m->label)));
		SET(o, "driver_detail", rec_str(m->driver_detail, sizeof(m->driver_detail)));
		return o;
	}
	case SL_EV_HW_AER: {
		const struct sl_hw_aer *a = &e->u.aer;
		char dev[SL_HW_STR + 1];
		*kind = HW_K_AER;
		snprintf(dev, sizeof(dev), "%.*s", (int)strnlen(a->dev_name, sizeof(a->dev_name)), a->dev_name);
		snprintf(subject, slen, "pci:%s", dev);
		SET(o, "bdf", rec_str(a->dev_name, sizeof(a->dev_name)));
		SET(o, "aer_severity", json_string(hw_aer_sev_name(a->severity)));
		SET(o, "aer_severity_code", json_integer(a->severity));
		SET(o, "status", json_integer(a->status));
		SET(o, "status_bits", hw_aer_status_names(a->status, a->severity == 2));
		if (a->tlp_header_valid) {
			json_t *t = json_array();
			for (int i = 0; i < 4; i++)
				json_array_append_new(t, json_integer(a->tlp_header[i]));
			SET(o, "tlp_header", t);
		}
		return o;
	}
	case SL_EV_HW_NON_STANDARD: {
		const struct sl_hw_nonstd *n = &e->u.ns;
		*kind = HW_K_NONSTD;
		snprintf(subject, slen, "firmware");
		SET(o, "sec_type", guid_str(n->sec_type));
		SET(o, "fru_id", guid_str(n->fru_id));
		SET(o, "fru_text", rec_str(n->fru_text, sizeof(n->fru_text)));
		SET(o, "cper_severity", json_string(hw_cper_sev_name(n->sev)));
		SET(o, "cper_severity_code", json_integer(n->sev));
		SET(o, "data_len", json_integer(n->len));
		return o;
	}
	case SL_EV_HW_ARM: {
		const struct sl_hw_arm *a = &e->u.arm;
		*kind = HW_K_ARM;
		if (a->cpu >= 0)
			*cpu = a->cpu;
		SET(o, "mpidr", hex64(a->mpidr));
		SET(o, "midr", hex64(a->midr));
		SET(o, "running_state", json_integer(a->running_state));
		SET(o, "psci_state", json_integer(a->psci_state));
		SET(o, "affinity", json_integer(a->affinity));
		SET(o, "cper_severity", json_string(hw_cper_sev_name(a->sev)));
		SET(o, "cper_severity_code", json_integer(a->sev));
		return o;
	}
	case SL_EV_HW_MEM_FAILURE: {
		const struct sl_hw_memfail *f = &e->u.mf;
		*kind = HW_K_MEMFAIL;
		snprintf(subject, slen, "memory");
		SET(o, "pfn", hex64(f->pfn));
		SET(o, "page_type_code", json_integer(f->type));
		SET(o, "result", json_string(hw_mf_result_name(f->result)));
		SET(o, "result_code", json_integer(f->result));
		return o;
	}
	case SL_EV_HW_MCE: {
		const struct sl_hw_mce *m = &e->u.mce;
		*kind = HW_K_MCE;
		*cpu = (int)m->cpu;
		SET(o, "bank", json_integer(m->bank));
		SET(o, "status", hex64(m->status));
		SET(o, "addr", hex64(m->addr));
		SET(o, "misc", hex64(m->misc));
		SET(o, "synd", hex64(m->synd));
		SET(o, "ipid", hex64(m->ipid));
		SET(o, "ip", hex64(m->ip));
		SET(o, "mcgstatus", hex64(m->mcgstatus));
		SET(o, "mcgcap", hex64(m->mcgcap));
		SET(o, "socket", json_integer(m->socketid));
		SET(o, "apicid", json_integer(m->apicid));
		SET(o, "cs", json_integer(m->cs));
		SET(o, "cpuvendor", json_integer(m->cpuvendor));
		/* arch/x86/include/asm/mce.h MCI_STATUS_* */
		SET(o, "uncorrected", json_boolean(m->status >> 61 & 1));
		SET(o, "pcc", json_boolean(m->status >> 57 & 1));
		SET(o, "overflow", json_boolean(m->status >> 62 & 1));
		return o;
	}
	}
	json_decref(o);
	return NULL;
}

json_t *hw_rate_fields(const char *source, const char *device, const char *label, uint64_t in_window,
		       uint64_t total, uint64_t window_ns, uint64_t threshold)
{
	json_t *o = json_object();
	double w = (double)window_ns / 1e9;

	if (!o)
		return NULL;
	SET(o, "source", json_string(source));
	SET(o, "hw_device", json_string(device));
	SET(o, "label", json_string(label ? label : ""));
	SET(o, "errors", json_integer((json_int_t)in_window));
	SET(o, "total", json_integer((json_int_t)total));
	SET(o, "window_seconds", json_real(w));
	SET(o, "threshold", json_integer((json_int_t)threshold));
	SET(o, "rate_per_second", json_real(w > 0 ? (double)in_window / w : 0));
	return o;
}

json_t *hw_link_fields(const struct hw_link *now, const struct hw_link *prev)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	SET(o, "bdf", json_string(now->bdf));
	SET(o, "degraded", json_boolean(now->degraded));
	SET(o, "speed_gts", json_real(now->speed));
	SET(o, "max_speed_gts", json_real(now->max_speed));
	SET(o, "width", json_integer(now->width));
	SET(o, "max_width", json_integer(now->max_width));
	if (prev) {
		SET(o, "previous_speed_gts", json_real(prev->speed));
		SET(o, "previous_width", json_integer(prev->width));
	}
	return o;
}

static const char *str_of(const json_t *f, const char *k)
{
	const char *s = json_string_value(json_object_get(f, k));
	return s ? s : "";
}

int hw_mc_severity(const json_t *f)
{
	const char *t = str_of(f, "error_type");
	if (!strcmp(t, "fatal"))
		return SL_SEV_CRITICAL;
	if (!strcmp(t, "uncorrected"))
		return SL_SEV_ERROR;
	if (!strcmp(t, "info"))
		return SL_SEV_NOTICE;
	return SL_SEV_WARNING;
}

int hw_aer_severity(const json_t *f)
{
	const char *t = str_of(f, "aer_severity");
	return !strcmp(t, "fatal") ? SL_SEV_CRITICAL : !strcmp(t, "nonfatal") ? SL_SEV_ERROR : SL_SEV_WARNING;
}

int hw_cper_severity(const json_t *f)
{
	const char *t = str_of(f, "cper_severity");
	if (!strcmp(t, "fatal"))
		return SL_SEV_CRITICAL;
	if (!strcmp(t, "recoverable"))
		return SL_SEV_ERROR;
	if (!strcmp(t, "informational"))
		return SL_SEV_NOTICE;
	return SL_SEV_WARNING;
}

int hw_mce_severity(const json_t *f)
{
	int uc = json_is_true(json_object_get(f, "uncorrected")), pcc = json_is_true(json_object_get(f, "pcc"));
	return uc && pcc ? SL_SEV_CRITICAL : uc ? SL_SEV_ERROR : SL_SEV_WARNING;
}

int hw_link_severity(const json_t *f)
{
	return json_is_true(json_object_get(f, "degraded")) ? SL_SEV_WARNING : SL_SEV_NOTICE;
}

int hw_memfail_severity(const json_t *f)
{
	const char *r = str_of(f, "result");
	return !strcmp(r, "recovered") ? SL_SEV_WARNING : !strcmp(r, "failed") ? SL_SEV_CRITICAL : SL_SEV_ERROR;
}
