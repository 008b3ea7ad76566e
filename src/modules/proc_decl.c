/* proc module declarations (src/agent/module.h): its config section, event
 * kinds with their field schema and DETAILS templates, Prometheus families
 * and hooks. Pure data plus two pure functions, so the config loader's
 * fuzz target links it without the BPF half. */
#include "modules/proc.h"
#include "modules/proc_redact.h"

#include <stdio.h>

#define K(name, type, f, def, min, max, doc)                                                   \
	{                                                                                      \
		name, type, SL_CFG_FIELD(struct sl_proc_cfg, f), def, min, max, doc            \
	}

const struct sl_cfg_key sl_proc_cfg_keys[SL_PROC_NCFG] = {
	K("exec_rate", SL_CFG_UINT, exec_rate, "50", 0, 1000000,
	  "exec events/s per (ppid, comm) token bucket; 0 = no limit"),
	K("exec_burst", SL_CFG_UINT, exec_burst, "100", 1, 1000000, "exec bucket size (events)"),
	K("exec_buckets", SL_CFG_UINT, exec_buckets, "16384", 64, 1u << 20,
	  "max (ppid, comm) keys (and (cgroup, comm) exit keys) in the kernel tables"),
	K("ringbuf_size", SL_CFG_BYTES, ringbuf_size, "2MiB", 4096, 1u << 30,
	  "proc ring buffer bytes, a power of two"),
	K("fatal_signals_only", SL_CFG_BOOL, fatal_signals_only, "true", 0, 0,
	  "report only signals whose default action kills the target"),
	K("exit_rate", SL_CFG_UINT, exit_rate, "50", 0, 1000000,
	  "exit and fatal-signal events/s per (cgroup, comm) token bucket; 0 = no limit"),
	K("exit_burst", SL_CFG_UINT, exit_burst, "100", 1, 1000000, "exit/signal bucket size (events)"),
	K("redact_args", SL_CFG_STRLIST, redact_args, SL_REDACT_DEFAULTS, 0, 0,
	  "argv redaction patterns (\"NAME=\", \"NAME*\", \"--flag\"); [] = none"),
};

int sl_proc_cfg_check(const void *cfg, char *err, size_t errlen)
{
	const struct sl_proc_cfg *c = cfg;
	const char *why = NULL;

	if (c->ringbuf_size & (c->ringbuf_size - 1)) {
		snprintf(err, errlen, "proc.ringbuf_size: %llu is not a power of two",
			 (unsigned long long)c->ringbuf_size);
		return -1;
	}
	for (unsigned i = 0; i < c->redact_args.n; i++)
		if (sl_redact_pattern_check(c->redact_args.v[i], &why)) {
			snprintf(err, errlen, "proc.redact_args[%u]: '%s': %s", i, c->redact_args.v[i], why);
			return -1;
		}
	return 0;
}

/* ---- event kinds ---- */

static const struct sl_field exec_fields[] = {
	{"filename", SL_FT_STR, 0, "path as passed to execve (its first 255 bytes)"},
	{"argv", SL_FT_ARRAY, SL_FF_ADMIN, "argument strings (first 1024 bytes, redacted by proc.redact_args)"},
	{"args_redacted", SL_FT_BOOL, SL_FF_OPTIONAL, "true when some argument was redacted"},
	{"args_truncated", SL_FT_BOOL, 0, "argv was cut at 1024 bytes"},
	{"truncated_count", SL_FT_UINT, 0, "execs of the same (ppid, comm) not delivered since the previous one"},
};

static const struct sl_field exit_fields[] = {
	{"exit_code", SL_FT_INT, 0, "exit status (valid when signal is 0)"},
	{"signal", SL_FT_UINT, 0, "terminating signal, 0 if none"},
	{"core_dumped", SL_FT_BOOL, 0, "the kernel wrote a core dump"},
	{"lifetime_ns", SL_FT_UINT, 0, "ns from the process start to its exit"},
	{"truncated_count", SL_FT_UINT, 0, "exits of the same (cgroup, comm) not delivered since the previous one"},
	{"truncated_abnormal", SL_FT_UINT, 0, "of truncated_count: abnormal exits"},
};

static const struct sl_field signal_fields[] = {
	{"signal", SL_FT_UINT, 0, "signal number"},
	{"si_code", SL_FT_INT, 0, "siginfo si_code: <= 0 sent by a user, > 0 by the kernel"},
	{"sender_kernel", SL_FT_BOOL, 0, "si_code is SI_KERNEL (0x80): the kernel itself sent it (the OOM killer's SIGKILL); sender_* is then the task that was running, not a sender"},
	{"sender_pid", SL_FT_UINT, 0, "pid of the sender"},
	{"sender_comm", SL_FT_STR, 0, "comm of the sender"},
	{"target_pid", SL_FT_UINT, 0, "pid of the target (the subject)"},
	{"target_comm", SL_FT_STR, 0, "comm of the target"},
	{"sender", SL_FT_OBJ, 0, "the sender: {pid, comm, cgroup_id, container_id, pod_uid, runtime}"},
	{"truncated_count", SL_FT_UINT, 0, "fatal signals to the same (cgroup, comm) not delivered since the previous one"},
};

static const struct sl_field oom_fields[] = {
	{"constraint", SL_FT_STR, 0, "memcg | global"},
	{"constraint_source", SL_FT_STR, 0, "kprobe (exact) | inferred"},
	{"memcg_limit_bytes", SL_FT_UINT, SL_FF_OPTIONAL, "memcg OOM: the limit that was hit, bytes"},
	{"actor", SL_FT_OBJ, 0, "the task that triggered the OOM killer"},
	{"victim", SL_FT_OBJ, 0, "the task killed (the subject)"},
};

int sl_proc_exit_severity(const json_t *fields)
{
	if (json_integer_value(json_object_get(fields, "signal")))
		return SL_SEV_WARNING;
	return json_integer_value(json_object_get(fields, "exit_code")) ? SL_SEV_NOTICE : SL_SEV_INFO;
}

/* Flight recorder triggers (struct sl_event_kind.freezes, docs/FLIGHT.md):
 * the signals that mean a crash (default action "core", signal(7): SIGQUIT,
 * SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ,
 * SIGSYS) or a kill (SIGKILL, also the OOM killer's); a polite stop
 * (SIGTERM, SIGINT, SIGHUP, ...) does not freeze. */
static int crash_or_kill(json_int_t sig)
{
	switch (sig) {
	case 3: case 4: case 5: case 6: case 7: case 8: case 9: case 11: case 24: case 25: case 31:
		return 1;
	default:
		return 0;
	}
}

int sl_proc_kind_freezes(unsigned kind, const json_t *fields)
{
	switch (kind) {
	case SL_PROC_K_OOM:
		return 1;
	case SL_PROC_K_EXIT:
	case SL_PROC_K_SIGNAL:
		return crash_or_kill(json_integer_value(json_object_get(fields, "signal")));
	default:
		return 0;
	}
}

#define N(a) (unsigned)(sizeof(a) / sizeof((a)[0]))

const struct sl_event_kind sl_proc_kinds[SL_PROC_NKINDS] = {
	[SL_PROC_K_EXEC] = {"exec", SL_SEV_INFO, NULL, exec_fields, N(exec_fields),
			    "{?argv}{argv:join}{/}{!argv}{filename}{/}{?args_truncated} ...[args truncated]{/}{?truncated_count} (+{truncated_count} execs suppressed){/}",
			    "a process image was replaced (execve)"},
	[SL_PROC_K_EXIT] = {"exit", SL_SEV_INFO, sl_proc_exit_severity, exit_fields, N(exit_fields),
			    "{?signal}killed by {signal:sig}{?core_dumped} (core dumped){/}{/}{!signal}exit {exit_code}{/}{+lifetime_ns} after {lifetime_ns:dur}{/}{?truncated_count} (+{truncated_count} exits suppressed, {truncated_abnormal} abnormal){/}",
			    "a process ended (its last thread)"},
	[SL_PROC_K_SIGNAL] = {"signal", SL_SEV_WARNING, NULL, signal_fields, N(signal_fields),
			    "{signal:sig} {?sender_kernel}kernel{/}{!sender_kernel}{sender_pid}({sender_comm}){/} -> {target_pid}({target_comm}){?truncated_count} (+{truncated_count} signals suppressed){/}",
			      "a fatal signal was generated for a process"},
	[SL_PROC_K_OOM] = {"oom", SL_SEV_ERROR, NULL, oom_fields, N(oom_fields),
			    "victim {victim.pid}({victim.comm}){?victim.container_id} [{victim.container_id:id}]{/} by {actor.pid}({actor.comm}){?actor.container_id} [{actor.container_id:id}]{/} constraint={constraint}",
			   "the OOM killer chose a victim"},
};

/* ---- families ---- */

const struct sl_prom_family sl_proc_families[SL_PROC_NFAMILIES] = {
	{"sandlens_exec_seen_total", SL_PROM_COUNTER, "Execs seen by the kernel hook (delivered or not)."},
	{"sandlens_exec_rate_limited_total", SL_PROM_COUNTER,
	 "Execs suppressed by the (ppid, comm) token bucket; carried as truncated_count."},
	{"sandlens_exec_truncated_total", SL_PROM_COUNTER, "Sum of truncated_count over delivered exec events."},
	{"sandlens_exec_ratelimit_pending", SL_PROM_GAUGE,
	 "Suppressed execs not yet carried by a delivered event (last sweep)."},
	{"sandlens_exit_suppressed_total", SL_PROM_COUNTER,
	 "Clean exits (code 0, no signal) not sent because the process' exec event was not delivered."},
	{"sandlens_exec_ratelimit_buckets", SL_PROM_GAUGE, "(ppid, comm) token buckets in the kernel table (last sweep)."},
	{"sandlens_exec_args_redacted_total", SL_PROM_COUNTER, "Exec events whose argv was redacted (proc.redact_args)."},
	{"sandlens_exit_seen_total", SL_PROM_COUNTER, "Process exits seen by the kernel hook (delivered or not)."},
	{"sandlens_exit_rate_limited_total", SL_PROM_COUNTER,
	 "Exits suppressed by the (cgroup, comm) token bucket; carried as truncated_count."},
	{"sandlens_exit_abnormal_rate_limited_total", SL_PROM_COUNTER,
	 "Of the rate-limited exits, abnormal ones (non-zero code or a signal); carried as truncated_abnormal."},
	{"sandlens_exit_truncated_total", SL_PROM_COUNTER, "Sum of truncated_count over delivered exit events."},
	{"sandlens_exit_abnormal_expired_total", SL_PROM_COUNTER,
	 "Abnormal exits still pending in a bucket that went idle (counted in the exit drops)."},
	{"sandlens_signal_seen_total", SL_PROM_COUNTER, "Fatal signals that passed the signal filters (delivered or not)."},
	{"sandlens_signal_rate_limited_total", SL_PROM_COUNTER,
	 "Fatal signals suppressed by the target's (cgroup, comm) token bucket; carried as truncated_count."},
	{"sandlens_signal_truncated_total", SL_PROM_COUNTER, "Sum of truncated_count over delivered signal events."},
	{"sandlens_exit_ratelimit_pending", SL_PROM_GAUGE,
	 "Suppressed exits and signals not yet carried by a delivered event (last sweep)."},
	{"sandlens_exit_ratelimit_buckets", SL_PROM_GAUGE,
	 "(cgroup, comm) token buckets of exits and signals in the kernel table (last sweep)."},
	{"sandlens_proc_rate_shift", SL_PROM_GAUGE,
	 "Runtime rate shift of the proc token buckets: rates and bursts are divided by 2^shift (degradation)."},
	{"sandlens_proc_sweep_seconds", SL_PROM_GAUGE, "Duration of the last token-bucket table sweep."},
	{"sandlens_ringbuf_reserve_failures_total", SL_PROM_COUNTER,
	 "BPF ring buffer reservations that failed (buffer full), by event type."},
	{"sandlens_proc_ratelimit_table_full_total", SL_PROM_COUNTER,
	 "Events delivered without a rate limit because their token-bucket table was full "
	 "(proc.exec_buckets), by event type: a full table never hides events."},
};

/* ---- hooks ---- */

const struct sl_hook_decl sl_proc_hooks[SL_PROC_NHOOKS] = {
	{"tp_btf/sched_process_exec", "exec events"},
	{"tp_btf/sched_process_exit", "exit events, process lifetime"},
	{"tp_btf/signal_generate", "signal events"},
	{"tp_btf/mark_victim", "oom events with the victim task"},
	{"tp/oom/mark_victim", "oom events, victim pid only (kernels without the task argument)"},
	{"kprobe/oom_kill_process", "the exact OOM constraint (memcg or global)"},
	{"tp_btf/cgroup_mkdir", "attribution cache: new cgroups"},
	{"tp_btf/cgroup_rmdir", "attribution cache: removed cgroups"},
};
