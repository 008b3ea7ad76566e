/* sched_hist slot recycling; see sched_internal.h and the comment on
 * struct sl_sched_hist (include/sandlens/sched.h). */
#include "modules/sched_internal.h"
#include "common/log.h"
#include "sched.skel.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sched_slots_init(struct sched_priv *sp)
{
	size_t n = (size_t)sp->cfg->max_cgroups;
	int fd = bpf_map__fd(sp->skel->maps.sched_free);

	sp->slot_rel = calloc(n, sizeof(*sp->slot_rel));
	sp->slot_back = calloc(n, sizeof(*sp->slot_back));
	sp->pcpu_zero = calloc((size_t)sp->ncpus, sizeof(*sp->pcpu_zero));
	if (!sp->slot_rel || !sp->slot_back || !sp->pcpu_zero)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, NULL, &i, BPF_ANY))
			return -errno;
	return 0;
}

void sched_slot_release(struct sched_priv *sp, uint32_t slot)
{
	/* each index is held by at most one key, so at most max_cgroups are
	 * released between two ticks */
	if (slot < sp->cfg->max_cgroups && sp->nslot_rel < sp->cfg->max_cgroups)
		sp->slot_rel[sp->nslot_rel++] = slot;
}

void sched_slots_tick(struct sched_priv *sp)
{
	int hfd = bpf_map__fd(sp->skel->maps.sched_hist), qfd = bpf_map__fd(sp->skel->maps.sched_free);
	static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(60);
	uint32_t *t;

	for (size_t i = 0; i < sp->nslot_back; i++) {
		uint32_t k = sp->slot_back[i];
		/* zero on every CPU first: the next owner starts from nothing */
		if (bpf_map_update_elem(hfd, &k, sp->pcpu_zero, BPF_ANY) ||
		    bpf_map_update_elem(qfd, NULL, &k, BPF_ANY))
			sl_log_limited(&lim, SL_LOG_WARN, "sched", "histogram slot %u not given back: %s", k,
				       strerror(errno));
	}
	t = sp->slot_back;
	sp->slot_back = sp->slot_rel;
	sp->nslot_back = sp->nslot_rel;
	sp->slot_rel = t;
	sp->nslot_rel = 0;
}

void sched_slots_free(struct sched_priv *sp)
{
	free(sp->slot_rel);
	free(sp->slot_back);
	free(sp->pcpu_zero);
	sp->slot_rel = sp->slot_back = NULL;
	sp->pcpu_zero = NULL;
}
