/* stall module: kernel-log line decoders; see stall_kmsg.h. */
#include "modules/stall_kmsg.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_prefix(const char *m)
{
	static const char *const pfx[] = {"NMI watchdog: ", "watchdog: ", "rcu: "};
	for (unsigned i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++) {
		size_t n = strlen(pfx[i]);
		if (!strncmp(m, pfx[i], n))
			return m + n;
	}
	return m;
}

/* "[comm:pid]" where comm may itself hold ':' (kworker/0:1): the pid is
 * after the last ':' before the closing ']'. */
static int parse_task(const char *p, struct sl_stall_klog *o)
{
	const char *end, *colon = NULL;

	if (*p != '[')
		return -1;
	p++;
	end = strrchr(p, ']');
	if (!end)
		return -1;
	for (const char *q = p; q < end; q++)
		if (*q == ':')
			colon = q;
	if (!colon || colon == end - 1)
		return -1;
	for (const char *q = colon + 1; q < end; q++)
		if (!isdigit((unsigned char)*q))
			return -1;
	size_t n = (size_t)(colon - p);
	if (n >= sizeof(o->comm))
		n = sizeof(o->comm) - 1;
	memcpy(o->comm, p, n);
	o->comm[n] = 0;
	o->pid = atoi(colon + 1);
	return 0;
}

static void init(struct sl_stall_klog *o)
{
	memset(o, 0, sizeof(*o));
	o->cpu = -1;
	o->pid = -1;
}

int sl_stall_klog_decode(const char *msg, struct sl_stall_klog *o)
{
	const char *m, *p;
	int cpu, n = 0;
	unsigned u;

	init(o);
	if (!msg)
		return SL_KLOG_NONE;
	m = skip_prefix(msg);
	/* soft lockup */
	if (sscanf(m, "BUG: soft lockup - CPU#%d stuck for %us! %n", &cpu, &u, &n) == 2 && n > 0 && cpu >= 0) {
		o->kind = SL_KLOG_SOFT_LOCKUP;
		o->cpu = cpu;
		o->stuck_s = u;
		parse_task(m + n, o); /* optional: older kernels printed it the same way */
		return o->kind;
	}
	/* hard lockup: "[CPU%u: ]Watchdog detected hard LOCKUP on cpu %u" */
	p = strstr(m, "Watchdog detected hard LOCKUP on cpu ");
	if (p && (p == m || !strncmp(m, "CPU", 3))) {
		if (sscanf(p, "Watchdog detected hard LOCKUP on cpu %d", &cpu) == 1 && cpu >= 0) {
			o->kind = SL_KLOG_HARD_LOCKUP;
			o->cpu = cpu;
			return o->kind;
		}
	}
	/* RCU stall headers */
	if (!strncmp(m, "INFO: ", 6)) {
		char fl[32];
		n = 0;
		if (sscanf(m + 6, "%31s %n", fl, &n) == 1 && n > 0 && !strncmp(fl, "rcu", 3)) {
			const char *rest = m + 6 + n;
			const char *how = NULL;
			if (!strncmp(rest, "self-detected stall on CPU", 26))
				how = "self_detected";
			else if (!strncmp(rest, "detected stalls on CPUs/tasks:", 30))
				how = "other_cpus";
			else if (!strncmp(rest, "detected expedited stalls on CPUs/tasks:", 40))
				how = "expedited";
			if (how) {
				o->kind = SL_KLOG_RCU_STALL;
				snprintf(o->flavor, sizeof(o->flavor), "%s", fl);
				snprintf(o->how, sizeof(o->how), "%s", how);
				return o->kind;
			}
		}
	}
	/* RCU CPU line: "\t%d-%c%c%c%c: (%lu %s)" */
	p = m;
	while (*p == '\t' || *p == ' ')
		p++;
	if (p != m && isdigit((unsigned char)*p)) {
		unsigned long t;
		char f[5];
		n = 0;
		if (sscanf(p, "%d-%4[^:]: (%lu %n", &cpu, f, &t, &n) == 3 && n > 0 && cpu >= 0 && strlen(f) == 4) {
			o->kind = SL_KLOG_RCU_CPU;
			o->cpu = cpu;
			o->ticks = t;
			return o->kind;
		}
	}
	return SL_KLOG_NONE;
}

const char *sl_stall_klog_kind_name(int kind)
{
	switch (kind) {
	case SL_KLOG_SOFT_LOCKUP: return "soft_lockup";
	case SL_KLOG_HARD_LOCKUP: return "hard_lockup";
	case SL_KLOG_RCU_STALL: return "rcu_stall";
	case SL_KLOG_RCU_CPU: return "rcu_cpu";
	default: return "none";
	}
}
