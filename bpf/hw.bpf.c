// SPDX-License-Identifier: GPL-2.0
/* hw module, kernel half: the RAS tracepoints, one record per hit with the
 * tracepoint's raw fields. ABI: include/sandlens/hw.h; docs/HW.md.
 *
 * Classic tracepoints (tp/<category>/<name>), their contexts declared
 * here as CO-RE types with the ___sl suffix (matched by name against the
 * kernel's trace_event_raw_<name>), so this object builds on a kernel
 * whose vmlinux.h lacks them. User space loads a program only when
 * <tracefs>/events/<category>/<name> exists (src/modules/hw.c); a
 * missing tracepoint is reported absent, never faked.
 *
 * These fire rarely (a corrected-error storm is the worst case: then the
 * ring buffer fills and the loss is counted per tracepoint in hw_stats).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "sandlens/hw.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} hw_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_HW_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} hw_stats SEC(".maps");

/* include/trace/events/ras.h, TRACE_EVENT(mc_event) */
struct trace_event_raw_mc_event___sl {
	unsigned int error_type;
	__u32 __data_loc_msg;
	__u32 __data_loc_label;
	__u16 error_count;
	__u8 mc_index;
	__s8 top_layer;
	__s8 middle_layer;
	__s8 lower_layer;
	long address;
	__u8 grain_bits;
	long syndrome;
	__u32 __data_loc_driver_detail;
} __attribute__((preserve_access_index));

/* include/ras/ras_event.h, TRACE_EVENT(aer_event) */
struct trace_event_raw_aer_event___sl {
	__u32 __data_loc_dev_name;
	__u32 status;
	__u8 severity;
	__u8 tlp_header_valid;
	__u32 tlp_header[4];
} __attribute__((preserve_access_index));

/* TRACE_EVENT(non_standard_event) */
struct trace_event_raw_non_standard_event___sl {
	char sec_type[16];
	char fru_id[16];
	__u32 __data_loc_fru_text;
	__u8 sev;
	__u32 len;
} __attribute__((preserve_access_index));

/* TRACE_EVENT(arm_event); cpu since 6.12 */
struct trace_event_raw_arm_event___sl {
	__u64 mpidr;
	__u64 midr;
	__u32 running_state;
	__u32 psci_state;
	__u8 affinity;
	__u8 sev;
	int cpu;
} __attribute__((preserve_access_index));

/* TRACE_EVENT(memory_failure_event) */
struct trace_event_raw_memory_failure_event___sl {
	unsigned long pfn;
	int type;
	int result;
} __attribute__((preserve_access_index));

/* include/trace/events/mce.h, TRACE_EVENT(mce_record); synd and ipid since 5.x */
struct trace_event_raw_mce_record___sl {
	__u64 mcgcap;
	__u64 mcgstatus;
	__u64 status;
	__u64 addr;
	__u64 misc;
	__u64 synd;
	__u64 ipid;
	__u64 ip;
	__u32 cpu;
	__u32 apicid;
	__u32 socketid;
	__u8 cs;
	__u8 bank;
	__u8 cpuvendor;
} __attribute__((preserve_access_index));

/* A __data_loc string: low 16 bits = offset from the record start. */
static __always_inline void data_loc_str(char *dst, __u32 n, void *ctx, __u32 loc)
{
	if (bpf_probe_read_kernel_str(dst, n, (char *)ctx + (loc & 0xffff)) < 0)
		dst[0] = 0;
}

static __always_inline struct sl_hw_ras_event *reserve(__u32 type)
{
	struct sl_hw_ras_event *e;

	sl_stat_inc(&hw_stats, type - SL_EV_HW_MC);
	e = bpf_ringbuf_reserve(&hw_events, sizeof(*e), 0);
	if (!e) {
		sl_stat_inc(&hw_stats, SL_HW_NTP + type - SL_EV_HW_MC);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->hdr.type = type;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = bpf_ktime_get_ns();
	return e;
}

SEC("tp/ras/mc_event")
int hw_mc_event(struct trace_event_raw_mc_event___sl *ctx)
{
	struct sl_hw_ras_event *e = reserve(SL_EV_HW_MC);

	if (!e)
		return 0;
	e->u.mc.error_type = ctx->error_type;
	e->u.mc.error_count = ctx->error_count;
	e->u.mc.mc_index = ctx->mc_index;
	e->u.mc.top_layer = ctx->top_layer;
	e->u.mc.middle_layer = ctx->middle_layer;
	e->u.mc.lower_layer = ctx->lower_layer;
	e->u.mc.grain_bits = ctx->grain_bits;
	e->u.mc.address = ctx->address;
	e->u.mc.syndrome = ctx->syndrome;
	data_loc_str(e->u.mc.msg, sizeof(e->u.mc.msg), ctx, ctx->__data_loc_msg);
	data_loc_str(e->u.mc.label, sizeof(e->u.mc.label), ctx, ctx->__data_loc_label);
	data_loc_str(e->u.mc.driver_detail, sizeof(e->u.mc.driver_detail), ctx, ctx->__data_loc_driver_detail);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp/ras/aer_event")
int hw_aer_event(struct trace_event_raw_aer_event___sl *ctx)
{
	struct sl_hw_ras_event *e = reserve(SL_EV_HW_AER);

	if (!e)
		return 0;
	e->u.aer.status = ctx->status;
	e->u.aer.severity = ctx->severity;
	e->u.aer.tlp_header_valid = ctx->tlp_header_valid;
	if (bpf_probe_read_kernel(e->u.aer.tlp_header, sizeof(e->u.aer.tlp_header), &ctx->tlp_header) < 0)
		e->u.aer.tlp_header_valid = 0;
	data_loc_str(e->u.aer.dev_name, sizeof(e->u.aer.dev_name), ctx, ctx->__data_loc_dev_name);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp/ras/non_standard_event")
int hw_non_standard_event(struct trace_event_raw_non_standard_event___sl *ctx)
{
	struct sl_hw_ras_event *e = reserve(SL_EV_HW_NON_STANDARD);

	if (!e)
		return 0;
	bpf_probe_read_kernel(e->u.ns.sec_type, 16, &ctx->sec_type);
	bpf_probe_read_kernel(e->u.ns.fru_id, 16, &ctx->fru_id);
	e->u.ns.sev = ctx->sev;
	e->u.ns.len = ctx->len;
	data_loc_str(e->u.ns.fru_text, sizeof(e->u.ns.fru_text), ctx, ctx->__data_loc_fru_text);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp/ras/arm_event")
int hw_arm_event(struct trace_event_raw_arm_event___sl *ctx)
{
	struct sl_hw_ras_event *e = reserve(SL_EV_HW_ARM);

	if (!e)
		return 0;
	e->u.arm.mpidr = ctx->mpidr;
	e->u.arm.midr = ctx->midr;
	e->u.arm.running_state = ctx->running_state;
	e->u.arm.psci_state = ctx->psci_state;
	e->u.arm.affinity = ctx->affinity;
	e->u.arm.sev = ctx->sev;
	e->u.arm.cpu = bpf_core_field_exists(ctx->cpu) ? ctx->cpu : -1;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp/ras/memory_failure_event")
int hw_memory_failure_event(struct trace_event_raw_memory_failure_event___sl *ctx)
{
	struct sl_hw_ras_event *e = reserve(SL_EV_HW_MEM_FAILURE);

	if (!e)
		return 0;
	e->u.mf.pfn = ctx->pfn;
	e->u.mf.type = ctx->type;
	e->u.mf.result = ctx->result;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp/mce/mce_record")
int hw_mce_record(struct trace_event_raw_mce_record___sl *ctx)
{
	struct sl_hw_ras_event *e = reserve(SL_EV_HW_MCE);

	if (!e)
		return 0;
	e->u.mce.mcgcap = ctx->mcgcap;
	e->u.mce.mcgstatus = ctx->mcgstatus;
	e->u.mce.status = ctx->status;
	e->u.mce.addr = ctx->addr;
	e->u.mce.misc = ctx->misc;
	e->u.mce.synd = bpf_core_field_exists(ctx->synd) ? ctx->synd : 0;
	e->u.mce.ipid = bpf_core_field_exists(ctx->ipid) ? ctx->ipid : 0;
	e->u.mce.ip = ctx->ip;
	e->u.mce.cpu = ctx->cpu;
	e->u.mce.apicid = ctx->apicid;
	e->u.mce.socketid = ctx->socketid;
	e->u.mce.cs = ctx->cs;
	e->u.mce.bank = ctx->bank;
	e->u.mce.cpuvendor = ctx->cpuvendor;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
