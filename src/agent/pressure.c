/* The pressure state machine (pure; see pressure.h). */
#include "agent/pressure.h"
#include "agent/module.h" /* enum sl_severity */

#include <stdio.h>
#include <string.h>

void sl_pressure_init(struct sl_pressure *p, const struct sl_pressure_config *cfg)
{
	memset(p, 0, sizeof(*p));
	p->cfg = *cfg;
	p->zone = SL_PZ_UNDER;
	snprintf(p->reason, sizeof(p->reason), "no measurement yet");
}

static double nonneg(double v)
{
	return v > 0 ? v : 0;
}

/* Which zone the input is in, with a reason naming the input that decided
 * it (the first one over its threshold, or for the band the first one not
 * below its release mark). */
static enum sl_pressure_zone classify(const struct sl_pressure_config *c, const struct sl_pressure_input *in,
				      char *why, size_t len)
{
	const double r = c->release_ratio;
	double cpu = nonneg(in->cpu_share), sf = nonneg(in->store_fill), rf = nonneg(in->ringbuf_fill);
	double rss_mib = (double)in->rss_bytes / 1048576.0, bud_mib = (double)c->memory_budget / 1048576.0;

	if (cpu > c->cpu_budget) {
		snprintf(why, len, "cpu %.4f of one CPU > budget %.4f", cpu, c->cpu_budget);
		return SL_PZ_OVER;
	}
	if (c->memory_budget && in->rss_bytes > c->memory_budget) {
		snprintf(why, len, "rss %.1f MiB > budget %.1f MiB", rss_mib, bud_mib);
		return SL_PZ_OVER;
	}
	if (sf > c->queue_high) {
		snprintf(why, len, "store queue %.0f%% full > %.0f%%", sf * 100, c->queue_high * 100);
		return SL_PZ_OVER;
	}
	if (rf > c->queue_high) {
		snprintf(why, len, "ring buffer %.0f%% full > %.0f%%", rf * 100, c->queue_high * 100);
		return SL_PZ_OVER;
	}
	if (cpu >= c->cpu_budget * r) {
		snprintf(why, len, "cpu %.4f within the hysteresis band [%.4f, %.4f]", cpu, c->cpu_budget * r,
			 c->cpu_budget);
		return SL_PZ_BAND;
	}
	if (c->memory_budget && (double)in->rss_bytes >= (double)c->memory_budget * r) {
		snprintf(why, len, "rss %.1f MiB within the hysteresis band [%.1f, %.1f] MiB", rss_mib, bud_mib * r,
			 bud_mib);
		return SL_PZ_BAND;
	}
	if (sf >= c->queue_high * r || rf >= c->queue_high * r) {
		snprintf(why, len, "queue fill (store %.0f%%, ring buffer %.0f%%) within the hysteresis band", sf * 100,
			 rf * 100);
		return SL_PZ_BAND;
	}
	snprintf(why, len, "cpu %.4f < %.4f, rss %.1f MiB, queues below %.0f%%", cpu, c->cpu_budget * r, rss_mib,
		 c->queue_high * r * 100);
	return SL_PZ_UNDER;
}

static void transition(struct sl_pressure *p, uint64_t now, int to)
{
	struct sl_pressure_transition *t = &p->log[p->ntransitions % SL_PRESSURE_LOG];
	t->mono_ns = now;
	t->from = p->level;
	t->to = to;
	snprintf(t->reason, sizeof(t->reason), "%s", p->reason);
	p->ntransitions++;
	p->level = to;
	p->steps_total[to]++;
	p->last_change_ns = now;
}

int sl_pressure_update(struct sl_pressure *p, const struct sl_pressure_input *in)
{
	uint64_t now = in->now_ns;
	enum sl_pressure_zone z = classify(&p->cfg, in, p->reason, sizeof(p->reason));

	p->last = *in;
	if (z != p->zone || p->streak_ns == 0) {
		p->zone = z;
		p->streak_ns = now ? now : 1;
	}
	if (z == SL_PZ_BAND)
		return p->level;
	/* a streak counts from the later of its start and the last transition */
	uint64_t from = p->streak_ns > p->last_change_ns ? p->streak_ns : p->last_change_ns;
	uint64_t held = now > from ? now - from : 0;
	if (z == SL_PZ_OVER && p->level < SL_PRESSURE_MAX_LEVEL && held >= p->cfg.dwell_up_ns)
		transition(p, now, p->level + 1);
	else if (z == SL_PZ_UNDER && p->level > 0 && held >= p->cfg.dwell_down_ns)
		transition(p, now, p->level - 1);
	return p->level;
}

const struct sl_pressure_transition *sl_pressure_transition_at(const struct sl_pressure *p, unsigned i)
{
	if (i >= SL_PRESSURE_LOG || i >= p->ntransitions)
		return NULL;
	return &p->log[(p->ntransitions - 1 - i) % SL_PRESSURE_LOG];
}

const char *sl_pressure_step_name(int step)
{
	static const char *const names[] = {"none", "metrics_slowed", "events_sampled", "tasks_refused",
					    "low_severity_dropped"};
	return step >= 0 && step <= SL_PRESSURE_MAX_LEVEL ? names[step] : "?";
}

int sl_pressure_low_severity(int severity)
{
	return severity <= SL_SEV_INFO;
}
