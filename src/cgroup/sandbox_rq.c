/* Runqueue wait of sandbox vCPU threads from schedstat (sandbox_rq.h). */
#include "cgroup/sandbox_rq.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sl_sbx_rq_ent {
	int32_t pid, tid;
	uint64_t start_time;
	uint64_t t_ns; /* when base was read */
	uint64_t run_delay_ns, timeslices; /* base */
	int iv_known;
	uint64_t iv_ns, iv_run_delay_ns, iv_timeslices;
	int seen;
};

/* one unsigned decimal; *p advanced past it; -1 on none or overflow */
static int num(const char **p, uint64_t *v)
{
	const char *s = *p;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	uint64_t x = 0;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	*p = s;
	return 0;
}

int sl_sbx_rq_parse(const char *text, struct sl_sbx_rq *rq)
{
	uint64_t a, b, c;
	const char *p = text;
	rq->known = 0;
	if (!p || num(&p, &a) || num(&p, &b) || num(&p, &c))
		return -EINVAL;
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	if (a == 0 && b == 0 && c == 0)
		return -EINVAL; /* accounting off: the kernel prints "0 0 0" */
	rq->oncpu_ns = a;
	rq->run_delay_ns = b;
	rq->timeslices = c;
	rq->known = 1;
	return 0;
}

size_t sl_sbx_rq_read(const char *proc_root, struct sl_sbx *s)
{
	size_t known = 0;
	for (size_t i = 0; i < s->nvcpus; i++)
		memset(&s->vcpu[i].rq, 0, sizeof(s->vcpu[i].rq));
	if (s->vmm_pid <= 0 || !s->nvcpus)
		return 0;
	char p[300];
	snprintf(p, sizeof(p), "%s/%d", proc_root ? proc_root : "/proc", (int)s->vmm_pid);
	int pd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pd < 0)
		return 0;
	uint64_t st;
	if (sl_sbx_start_time_at(pd, &st) || st != s->vmm_start_time) {
		close(pd);
		return 0;
	}
	for (size_t i = 0; i < s->nvcpus; i++) {
		char name[64], buf[128];
		snprintf(name, sizeof(name), "task/%d/schedstat", (int)s->vcpu[i].tid);
		if (sl_sbx_read_at(pd, name, buf, sizeof(buf)) > 0 && !sl_sbx_rq_parse(buf, &s->vcpu[i].rq))
			known++;
	}
	/* after: still the same process (else nothing read counts) */
	if (sl_sbx_start_time_at(pd, &st) || st != s->vmm_start_time) {
		for (size_t i = 0; i < s->nvcpus; i++)
			memset(&s->vcpu[i].rq, 0, sizeof(s->vcpu[i].rq));
		known = 0;
	}
	close(pd);
	return known;
}

int sl_sbx_rq_sum(const struct sl_sbx *s, struct sl_sbx_rq *sum)
{
	memset(sum, 0, sizeof(*sum));
	if (!s->nvcpus)
		return 0;
	int known = 1, iv = 1;
	for (size_t i = 0; i < s->nvcpus; i++) {
		const struct sl_sbx_rq *r = &s->vcpu[i].rq;
		if (!r->known) {
			known = iv = 0;
			break;
		}
		sum->oncpu_ns += r->oncpu_ns;
		sum->run_delay_ns += r->run_delay_ns;
		sum->timeslices += r->timeslices;
		if (!r->iv_known) {
			iv = 0;
			continue;
		}
		sum->iv_run_delay_ns += r->iv_run_delay_ns;
		sum->iv_timeslices += r->iv_timeslices;
		if (r->iv_ns > sum->iv_ns)
			sum->iv_ns = r->iv_ns;
	}
	if (!known) {
		memset(sum, 0, sizeof(*sum));
		return 0;
	}
	sum->known = 1;
	sum->iv_known = iv;
	if (!iv)
		sum->iv_ns = sum->iv_run_delay_ns = sum->iv_timeslices = 0;
	return 1;
}

void sl_sbx_rq_track_init(struct sl_sbx_rq_track *t, uint64_t min_ns)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->mu, NULL);
	t->min_ns = min_ns ? min_ns : SL_SBX_RQ_MIN_INTERVAL_NS;
}

void sl_sbx_rq_track_free(struct sl_sbx_rq_track *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
	pthread_mutex_destroy(&t->mu);
}

static struct sl_sbx_rq_ent *find(struct sl_sbx_rq_track *t, const struct sl_sbx *s, int32_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].pid == s->vmm_pid && t->v[i].tid == tid && t->v[i].start_time == s->vmm_start_time)
			return &t->v[i];
	return NULL;
}

static void rebase(struct sl_sbx_rq_ent *e, const struct sl_sbx_rq *r, uint64_t now)
{
	e->t_ns = now;
	e->run_delay_ns = r->run_delay_ns;
	e->timeslices = r->timeslices;
}

int sl_sbx_rq_track(struct sl_sbx_rq_track *t, struct sl_sbx_list *l, uint64_t now_ns)
{
	int rc = 0;
	pthread_mutex_lock(&t->mu);
	for (size_t i = 0; i < t->n; i++)
		t->v[i].seen = 0;
	for (size_t k = 0; k < l->n; k++) {
		struct sl_sbx *s = &l->sbx[k];
		for (size_t j = 0; j < s->nvcpus; j++) {
			struct sl_sbx_rq *r = &s->vcpu[j].rq;
			r->iv_known = 0;
			if (!r->known)
				continue; /* forgotten below: a later reading starts anew */
			struct sl_sbx_rq_ent *e = find(t, s, s->vcpu[j].tid);
			if (!e) {
				if (t->n == t->cap) {
					size_t nc = t->cap ? t->cap * 2 : 16;
					struct sl_sbx_rq_ent *nv = realloc(t->v, nc * sizeof(*nv));
					if (!nv) {
						rc = -ENOMEM;
						continue;
					}
					t->v = nv;
					t->cap = nc;
				}
				e = &t->v[t->n++];
				memset(e, 0, sizeof(*e));
				e->pid = s->vmm_pid;
				e->tid = s->vcpu[j].tid;
				e->start_time = s->vmm_start_time;
				rebase(e, r, now_ns);
			} else if (r->run_delay_ns < e->run_delay_ns || r->timeslices < e->timeslices ||
				   now_ns < e->t_ns) {
				e->iv_known = 0; /* reset: another thread under this tid */
				rebase(e, r, now_ns);
			} else if (now_ns - e->t_ns >= t->min_ns) {
				e->iv_known = 1;
				e->iv_ns = now_ns - e->t_ns;
				e->iv_run_delay_ns = r->run_delay_ns - e->run_delay_ns;
				e->iv_timeslices = r->timeslices - e->timeslices;
				rebase(e, r, now_ns);
			}
			e->seen = 1;
			if (e->iv_known) {
				r->iv_known = 1;
				r->iv_ns = e->iv_ns;
				r->iv_run_delay_ns = e->iv_run_delay_ns;
				r->iv_timeslices = e->iv_timeslices;
			}
		}
	}
	size_t w = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].seen)
			t->v[w++] = t->v[i];
	t->n = w;
	pthread_mutex_unlock(&t->mu);
	return rc;
}
