/* Start-time probes of what this kernel offers, from its BTF
 * (/sys/kernel/btf/vmlinux) and sysfs. Used by modules to choose hooks. */
#ifndef SANDLENS_AGENT_PROBE_H
#define SANDLENS_AGENT_PROBE_H

/* Value of enumerator `name` of `enum enum_name` in vmlinux BTF, e.g.
 * ("cgroup_subsys_id", "memory_cgrp_id") -> 4 on 6.18. Returns 0 and *out,
 * -ENOENT when the enum or the enumerator is absent, -errno on BTF errors. */
int sl_btf_enum_value(const char *enum_name, const char *name, long *out);

/* Whether argument `idx` (0-based, not counting the hidden __data pointer)
 * of tracepoint `tp` as seen by tp_btf (typedef btf_trace_<tp>) is a
 * pointer. Returns 1 pointer, 0 other type, -ENOENT no such tracepoint or
 * argument, -errno on BTF errors. */
int sl_btf_tp_arg_is_ptr(const char *tp, int idx);

/* 1 when the kernel can attach kprobes (the kprobe PMU exists in
 * /sys/bus/event_source/devices/kprobe, i.e. CONFIG_KPROBES), else 0. */
int sl_kprobes_available(void);

#endif
