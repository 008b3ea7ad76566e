/* Capture cooldowns (cooldown.h): a uthash table of (container, detector)
 * -> time of the last capture. */
#include "auto/cooldown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#define KEY_LEN 96

struct entry {
	char key[KEY_LEN]; /* "<detector>/<container>" */
	uint64_t last_ns;
	UT_hash_handle hh;
};

struct sl_cooldown {
	uint64_t cooldown_ns;
	size_t max_keys;
	struct entry *tab;
	struct sl_cooldown_stats st;
};

struct sl_cooldown *sl_cooldown_new(uint64_t cooldown_ns, size_t max_keys)
{
	struct sl_cooldown *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cooldown_ns = cooldown_ns;
	c->max_keys = max_keys ? max_keys : 65536;
	return c;
}

void sl_cooldown_free(struct sl_cooldown *c)
{
	if (!c)
		return;
	struct entry *e, *tmp;
	HASH_ITER(hh, c->tab, e, tmp) {
		HASH_DEL(c->tab, e);
		free(e);
	}
	free(c);
}

/* Make room for one more key. */
static void make_room(struct sl_cooldown *c, uint64_t now)
{
	struct entry *e, *tmp, *oldest = NULL;
	HASH_ITER(hh, c->tab, e, tmp) {
		if (now - e->last_ns >= c->cooldown_ns) {
			HASH_DEL(c->tab, e);
			free(e);
		} else if (!oldest || e->last_ns < oldest->last_ns) {
			oldest = e;
		}
	}
	if (HASH_COUNT(c->tab) >= c->max_keys && oldest) {
		HASH_DEL(c->tab, oldest);
		free(oldest);
		c->st.evicted++;
	}
}

int sl_cooldown_try(struct sl_cooldown *c, const char *container, unsigned detector, uint64_t now_ns,
		    uint64_t *remaining_ns)
{
	char key[KEY_LEN];
	struct entry *e;
	snprintf(key, sizeof(key), "%u/%s", detector, container ? container : "");
	HASH_FIND_STR(c->tab, key, e);
	if (e) {
		if (now_ns - e->last_ns < c->cooldown_ns) {
			c->st.suppressed++;
			if (remaining_ns)
				*remaining_ns = c->cooldown_ns - (now_ns - e->last_ns);
			return 0;
		}
		e->last_ns = now_ns;
		c->st.allowed++;
		return 1;
	}
	if (HASH_COUNT(c->tab) >= c->max_keys)
		make_room(c, now_ns);
	c->st.allowed++;
	e = calloc(1, sizeof(*e));
	if (!e)
		return 1;
	memcpy(e->key, key, sizeof(key));
	e->last_ns = now_ns;
	HASH_ADD_STR(c->tab, key, e);
	return 1;
}

void sl_cooldown_stats(const struct sl_cooldown *c, struct sl_cooldown_stats *out)
{
	*out = c->st;
	out->keys = HASH_COUNT(c->tab);
}
