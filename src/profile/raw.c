/* Raw profiles (sampler output) and the common parts of symbolized
 * profiles: allocation, totals, format names. */
#include "profile/profile.h"
#include "profile/profile_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sl_raw_profile *sl_raw_profile_new(int kind, uint64_t start_ns, uint64_t duration_ns,
					  uint64_t period_ns)
{
	struct sl_raw_profile *rp = calloc(1, sizeof(*rp));
	if (!rp)
		return NULL;
	rp->kind = kind;
	rp->start_ns = start_ns;
	rp->duration_ns = duration_ns;
	rp->period_ns = period_ns;
	return rp;
}

static uint64_t *copy_ips(const uint64_t *ips, uint32_t *n)
{
	uint32_t k = 0;
	if (*n > SL_PROF_MAX_DEPTH)
		*n = SL_PROF_MAX_DEPTH;
	if (!ips)
		*n = 0;
	while (k < *n && ips[k])
		k++;
	*n = k;
	if (!k)
		return NULL;
	uint64_t *c = malloc(k * sizeof(*c));
	if (c)
		memcpy(c, ips, k * sizeof(*c));
	return c;
}

/* User frames of s: with build-id frames, the depth ends at the first
 * frame that has neither a build-id nor an address. *n clipped. */
static int copy_user(const struct sl_raw_stack *s, struct sl_raw_stack *c)
{
	uint32_t n = s->n_user > SL_PROF_MAX_DEPTH ? SL_PROF_MAX_DEPTH : s->n_user, k = 0;
	c->user_bid = NULL;
	if (!s->user_bid) {
		c->n_user = n;
		c->user_ips = copy_ips(s->user_ips, &c->n_user);
		return c->n_user && !c->user_ips ? -ENOMEM : 0;
	}
	while (k < n && (s->user_bid[k].len || (s->user_ips && s->user_ips[k])))
		k++;
	c->n_user = k;
	c->user_ips = NULL;
	if (!k)
		return 0;
	uint64_t *ips = calloc(k, sizeof(*ips));
	struct sl_raw_bid *b = malloc(k * sizeof(*b));
	if (!ips || !b) {
		free(ips);
		free(b);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < k; i++) {
		b[i] = s->user_bid[i];
		if (b[i].len > SL_BUILD_ID_MAX)
			b[i].len = SL_BUILD_ID_MAX;
		ips[i] = s->user_ips ? s->user_ips[i] : 0;
	}
	c->user_ips = ips;
	c->user_bid = b;
	return 0;
}

int sl_raw_profile_add(struct sl_raw_profile *rp, const struct sl_raw_stack *s)
{
	if (rp->n_stacks == rp->cap_) {
		size_t nc = rp->cap_ ? rp->cap_ * 2 : 64;
		struct sl_raw_stack *ns = realloc(rp->stacks, nc * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		rp->stacks = ns;
		rp->cap_ = nc;
	}
	struct sl_raw_stack c = *s;
	c.comm[SL_PROF_COMM_LEN - 1] = 0;
	c.container_id[SL_PROF_ID_LEN - 1] = 0;
	if (copy_user(s, &c))
		return -ENOMEM;
	c.kernel_ips = copy_ips(s->kernel_ips, &c.n_kernel);
	if (c.n_kernel && !c.kernel_ips) {
		free((void *)c.user_ips);
		free((void *)c.user_bid);
		return -ENOMEM;
	}
	rp->stacks[rp->n_stacks++] = c;
	return 0;
}

void sl_raw_profile_free(struct sl_raw_profile *rp)
{
	if (!rp)
		return;
	for (size_t i = 0; i < rp->n_stacks; i++) {
		free((void *)rp->stacks[i].user_ips);
		free((void *)rp->stacks[i].user_bid);
		free((void *)rp->stacks[i].kernel_ips);
	}
	free(rp->stacks);
	free(rp);
}

uint64_t sl_profile_total_count(const struct sl_profile *p)
{
	uint64_t t = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		t += p->samples[i].count;
	return t;
}

uint64_t sl_profile_total_ns(const struct sl_profile *p)
{
	uint64_t t = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		t += p->samples[i].value_ns;
	return t;
}

int sl_profile_write_opts(const struct sl_profile *p, int fmt, int kaddrs_visible,
			  const struct sl_flame_opts *opts, FILE *out)
{
	switch (fmt) {
	case SL_FMT_PPROF: return sl_profile_write_pprof(p, kaddrs_visible, out);
	case SL_FMT_FOLDED: return sl_profile_write_folded(p, opts ? opts->value : SL_VALUE_DEFAULT, out);
	case SL_FMT_SVG: return sl_profile_write_svg(p, opts, out);
	case SL_FMT_JSON: return sl_profile_write_json(p, out);
	case SL_FMT_HTML: return sl_profile_write_html(p, opts, out);
	default: return -EINVAL;
	}
}

int sl_profile_write(const struct sl_profile *p, int fmt, int kaddrs_visible, FILE *out)
{
	return sl_profile_write_opts(p, fmt, kaddrs_visible, NULL, out);
}
