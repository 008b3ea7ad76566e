/* stall module: blocking-episode bookkeeping; see stall_hung.h. */
#include "modules/stall_hung.h"

#include <errno.h>
#include <stdlib.h>

void sl_hung_begin(struct sl_hung *h)
{
	h->gen++;
}

int sl_hung_observe(struct sl_hung *h, uint32_t tid, uint64_t switches, uint64_t now_ns, uint64_t threshold_ns,
		    uint64_t *blocked_ns, int *over)
{
	struct sl_hung_task *t;

	HASH_FIND(hh, h->tasks, &tid, sizeof(tid), t);
	if (!t) {
		if (!(t = calloc(1, sizeof(*t))))
			return -ENOMEM;
		t->tid = tid;
		t->switches = switches;
		t->since_ns = now_ns;
		HASH_ADD(hh, h->tasks, tid, sizeof(t->tid), t);
		h->n++;
	} else if (t->switches != switches || t->seen_gen + 1 < h->gen) {
		/* it ran (or a whole scan missed it): a new episode */
		t->switches = switches;
		t->since_ns = now_ns;
		t->reported = 0;
	}
	t->seen_gen = h->gen;
	*blocked_ns = now_ns >= t->since_ns ? now_ns - t->since_ns : 0;
	*over = *blocked_ns >= threshold_ns;
	if (*over && !t->reported) {
		t->reported = 1;
		return 1;
	}
	return 0;
}

unsigned sl_hung_end(struct sl_hung *h)
{
	struct sl_hung_task *t, *tmp;
	unsigned n = 0;

	HASH_ITER(hh, h->tasks, t, tmp) {
		if (t->seen_gen == h->gen)
			continue;
		HASH_DEL(h->tasks, t);
		free(t);
		h->n--;
		n++;
	}
	return n;
}

void sl_hung_free(struct sl_hung *h)
{
	struct sl_hung_task *t, *tmp;

	HASH_ITER(hh, h->tasks, t, tmp) {
		HASH_DEL(h->tasks, t);
		free(t);
	}
	h->n = 0;
}
