/* Title metadata of the flame graphs (SVG subtitle, HTML header): which
 * container, pod and host, which time range, which sample type. */
#include "profile/profile_internal.h"
#include "profile/prof_kinds.h"

#include "common/timefmt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *sl_flame_diff_title(int kind, char *buf, size_t len)
{
	if (kind == SL_PROF_ON_CPU || kind == SL_PROF_OFF_CPU)
		return kind == SL_PROF_OFF_CPU ? "Off-CPU differential profile" : "On-CPU differential profile";
	snprintf(buf, len, "%s (differential)", sl_prof_kind_info(kind)->title);
	return buf;
}

const char *sl_flame_sample_type(const struct sl_profile *p, const struct sl_flame_opts *o, int mode)
{
	if (o && o->sample_type && o->sample_type[0])
		return o->sample_type;
	if (p->kind == SL_PROF_ON_CPU || p->kind == SL_PROF_OFF_CPU) {
		int off = p->kind == SL_PROF_OFF_CPU;
		switch (mode) {
		case SL_VALUE_NS: return off ? "off-CPU time, ns" : "on-CPU time, ns";
		case SL_VALUE_US: return off ? "off-CPU time, us" : "on-CPU time, us";
		default: return off ? "off-CPU switch-outs" : "cpu samples";
		}
	}
	/* the other kinds: "<what the value is>, <unit>" from the kind's
	 * table entry ("bytes mapped, bytes", "contentions, samples") */
	static __thread char buf[96];
	const struct sl_prof_kind_info *ki = sl_prof_kind_info(p->kind);
	snprintf(buf, sizeof(buf), "%s, %s", mode == SL_VALUE_COUNT ? ki->count_text : ki->value_text,
		 sl_prof_value_unit(mode));
	return buf;
}

char sl_flame_kind(const struct sl_frame *f)
{
	if (!f || (f->flags & SL_FRAME_PSEUDO))
		return 'p';
	if (f->flags & (SL_FRAME_UNKNOWN | SL_FRAME_NOSYM))
		return 'x';
	if (f->flags & SL_FRAME_KERNEL)
		return 'k';
	if (f->flags & SL_FRAME_JIT)
		return 'j';
	return 'u';
}

static void add(char *buf, size_t sz, size_t *len, const char *fmt, ...)
{
	if (*len >= sz)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, sz - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < sz ? *len + (size_t)n : sz - 1;
}

size_t sl_flame_meta_line(const struct sl_profile *p, const struct sl_flame_opts *o, char *buf, size_t sz)
{
	size_t len = 0;
	if (!sz)
		return 0;
	buf[0] = 0;
	if (o && o->container && o->container[0])
		add(buf, sz, &len, "container %s, ", o->container);
	if (o && o->pod && o->pod[0])
		add(buf, sz, &len, "pod %s, ", o->pod);
	if (o && o->host && o->host[0])
		add(buf, sz, &len, "host %s, ", o->host);
	uint64_t start = o && o->start_ns ? o->start_ns : p->start_ns;
	uint64_t end = o && o->end_ns ? o->end_ns : p->start_ns + p->duration_ns;
	char a[SL_TIME_RFC3339_MAX], b[SL_TIME_RFC3339_MAX];
	if (start && end >= start && sl_time_format((int64_t)start, a, sizeof(a)) > 0 &&
	    sl_time_format((int64_t)end, b, sizeof(b)) > 0)
		add(buf, sz, &len, "%s .. %s (%.3f s), ", a, b, (double)(end - start) / 1e9);
	int mode = sl_prof_value_mode(p, o ? o->value : SL_VALUE_DEFAULT);
	add(buf, sz, &len, "%s", sl_flame_sample_type(p, o, mode));
	return len;
}
