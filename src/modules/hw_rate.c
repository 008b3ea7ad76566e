/* hw module: windowed corrected-error rate per key (hw_rate.h). */
#include "modules/hw_rate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

struct rate_key {
	char key[HW_RATE_KEY];
	uint64_t t[HW_RATE_SAMPLES], v[HW_RATE_SAMPLES];
	unsigned n;     /* samples held, oldest at 0 */
	int above;      /* last windowed count was >= threshold */
	uint64_t seen_ns;
	UT_hash_handle hh;
};

struct hw_rate {
	struct rate_key *keys;
};

struct hw_rate *hw_rate_new(void)
{
	return calloc(1, sizeof(struct hw_rate));
}

void hw_rate_free(struct hw_rate *r)
{
	struct rate_key *k, *t;

	if (!r)
		return;
	HASH_ITER(hh, r->keys, k, t) {
		HASH_DEL(r->keys, k);
		free(k);
	}
	free(r);
}

static void drop_front(struct rate_key *k, unsigned m)
{
	memmove(k->t, k->t + m, (k->n - m) * sizeof(k->t[0]));
	memmove(k->v, k->v + m, (k->n - m) * sizeof(k->v[0]));
	k->n -= m;
}

int hw_rate_update(struct hw_rate *r, const char *key, uint64_t now_ns, uint64_t count, uint64_t window_ns,
		   uint64_t threshold, uint64_t *in_window)
{
	struct rate_key *k;
	uint64_t step = window_ns / 64, base;

	HASH_FIND_STR(r->keys, key, k);
	if (!k) {
		if (!(k = calloc(1, sizeof(*k))))
			return -ENOMEM;
		snprintf(k->key, sizeof(k->key), "%s", key);
		HASH_ADD_STR(r->keys, key, k);
	}
	k->seen_ns = now_ns;
	if (k->n && count < k->v[k->n - 1]) { /* counter reset */
		k->n = 0;
		k->above = 0;
	}
	/* samples at least window/64 apart: while the one before the newest
	 * is less than a step old, the newest is replaced, not added */
	if (k->n >= 2 && now_ns - k->t[k->n - 2] < step) {
		k->t[k->n - 1] = now_ns;
		k->v[k->n - 1] = count;
	} else {
		if (k->n == HW_RATE_SAMPLES)
			drop_front(k, 1);
		k->t[k->n] = now_ns;
		k->v[k->n] = count;
		k->n++;
	}
	/* keep the newest sample at least a window old as the baseline, drop
	 * the ones before it */
	unsigned b = 0;
	for (unsigned i = 0; i < k->n; i++)
		if (now_ns - k->t[i] >= window_ns)
			b = i;
	if (b)
		drop_front(k, b);
	base = k->v[0];
	*in_window = count - base;
	if (*in_window >= threshold && threshold) {
		if (!k->above) {
			k->above = 1;
			return 1;
		}
		return 0;
	}
	k->above = 0;
	return 0;
}

size_t hw_rate_expire(struct hw_rate *r, uint64_t older_than_ns)
{
	struct rate_key *k, *t;
	size_t n = 0;

	HASH_ITER(hh, r->keys, k, t) {
		if (k->seen_ns < older_than_ns) {
			HASH_DEL(r->keys, k);
			free(k);
			n++;
		}
	}
	return n;
}

size_t hw_rate_count(const struct hw_rate *r)
{
	return HASH_COUNT(r->keys);
}
