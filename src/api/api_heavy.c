/* Heavy reads at once per listener (api_internal.h "api_heavy.c"). */
#include "api/api_internal.h"

#include <string.h>

void sl_api_heavy_init(struct sl_api_listener *lis, unsigned max)
{
	struct sl_api_heavy *h = &lis->heavy;
	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->mu, NULL);
	h->max = max ? max : 1;
	h->inited = 1;
}

void sl_api_heavy_destroy(struct sl_api_listener *lis)
{
	if (lis->heavy.inited)
		pthread_mutex_destroy(&lis->heavy.mu);
	lis->heavy.inited = 0;
}

int sl_api_heavy_route(const char *path)
{
	static const char *const exact[] = {"/api/v1/events", "/api/v1/containers", "/api/v1/flight",
					    "/api/v1/profiles", "/api/v1/profiles/diff", "/api/v1/profiles/windows"};
	static const char *const prefix[] = {"/api/v1/flight/", "/api/v1/events/"};
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(path, exact[i]))
			return 1;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (!strncmp(path, prefix[i], strlen(prefix[i])))
			return 1;
	return 0;
}

int sl_api_heavy_enter(struct conn_state *cs, struct MHD_Connection *c)
{
	struct sl_api_heavy *h = &cs->lis->heavy;
	int rc;
	if (!h->inited)
		return 1;
	pthread_mutex_lock(&h->mu);
	if (cs->heavy == SL_API_HEAVY_GRANTED) {
		rc = 1;
	} else if (h->stopping) {
		rc = -1;
	} else if (h->running < h->max) {
		h->running++;
		cs->heavy = SL_API_HEAVY_GRANTED;
		rc = 1;
	} else {
		cs->heavy = SL_API_HEAVY_WAITING;
		cs->heavy_conn = c;
		cs->heavy_next = NULL;
		if (h->tail)
			h->tail->heavy_next = cs;
		else
			h->head = cs;
		h->tail = cs;
		h->waiting++;
		atomic_fetch_add(&sl_api_counters.heavy_waited, 1);
		/* under h->mu: a slot handed over (leave, another thread) resumes
		 * c only after it is suspended */
		MHD_suspend_connection(c);
		rc = 0;
	}
	pthread_mutex_unlock(&h->mu);
	return rc;
}

void sl_api_heavy_leave(struct conn_state *cs)
{
	if (!cs || !cs->lis || !cs->lis->heavy.inited)
		return;
	struct sl_api_heavy *h = &cs->lis->heavy;
	pthread_mutex_lock(&h->mu);
	if (cs->heavy == SL_API_HEAVY_GRANTED) {
		cs->heavy = 0;
		struct conn_state *w = h->stopping ? NULL : h->head;
		if (w) { /* the slot goes to the first waiter */
			h->head = w->heavy_next;
			if (!h->head)
				h->tail = NULL;
			h->waiting--;
			w->heavy_next = NULL;
			w->heavy = SL_API_HEAVY_GRANTED;
			MHD_resume_connection(w->heavy_conn);
		} else {
			h->running--;
		}
	} else if (cs->heavy == SL_API_HEAVY_WAITING) {
		struct conn_state **pp = &h->head, *prev = NULL;
		while (*pp && *pp != cs) {
			prev = *pp;
			pp = &(*pp)->heavy_next;
		}
		if (*pp) {
			*pp = cs->heavy_next;
			if (h->tail == cs)
				h->tail = prev;
			h->waiting--;
		}
		cs->heavy = 0;
		cs->heavy_next = NULL;
	}
	pthread_mutex_unlock(&h->mu);
}

void sl_api_heavy_release_all(struct sl_api_listener *lis)
{
	struct sl_api_heavy *h = &lis->heavy;
	if (!h->inited)
		return;
	pthread_mutex_lock(&h->mu);
	h->stopping = 1;
	while (h->head) {
		struct conn_state *w = h->head;
		h->head = w->heavy_next;
		w->heavy_next = NULL;
		w->heavy = 0; /* resumed without a slot: on_request answers 503 */
		MHD_resume_connection(w->heavy_conn);
	}
	h->tail = NULL;
	h->waiting = 0;
	pthread_mutex_unlock(&h->mu);
}
