/* Token-bucket table sweep (see proc_sweep.h). One walk collects the keys
 * of idle buckets, then they are deleted: deleting during the walk would
 * leave get_next_key without its previous key, and the walk would restart
 * from the first bucket after every delete (quadratic in the table size,
 * counting the live buckets many times; issue 8, finding 5). */
#include "modules/proc_sweep.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEY 64

static int idle(const struct sl_exec_bucket *b, uint64_t now_ns, uint64_t idle_ns)
{
	return now_ns > b->last_ns && now_ns - b->last_ns > idle_ns;
}

static int keep(void **keybuf, size_t *keycap, size_t n, const void *key, size_t key_size)
{
	if (n >= *keycap) {
		size_t cap = *keycap ? *keycap * 2 : 256;
		void *p = realloc(*keybuf, cap * key_size);
		if (!p)
			return -ENOMEM;
		*keybuf = p;
		*keycap = cap;
	}
	memcpy((char *)*keybuf + n * key_size, key, key_size);
	return 0;
}

int sl_bucket_sweep(int fd, size_t key_size, uint64_t now_ns, uint64_t idle_ns, sl_sweep_expired_fn on_expired,
		    void *ctx, void **keybuf, size_t *keycap, struct sl_sweep_result *out)
{
	unsigned char key[MAX_KEY], next[MAX_KEY];
	void *prev = NULL;
	struct sl_exec_bucket b;
	size_t n = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (key_size > MAX_KEY || !key_size)
		return -EINVAL;
	while (out->syscalls++, bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, key_size);
		prev = key;
		out->syscalls++;
		if (bpf_map_lookup_elem(fd, key, &b))
			continue; /* deleted meanwhile */
		if (!err && idle(&b, now_ns, idle_ns)) {
			err = keep(keybuf, keycap, n, key, key_size);
			if (!err) {
				n++;
				continue;
			}
		}
		out->pending += b.pending;
		out->buckets++;
	}
	if (err) { /* nothing removed: count the collected ones as left */
		for (size_t i = 0; i < n; i++) {
			out->syscalls++;
			if (bpf_map_lookup_elem(fd, (char *)*keybuf + i * key_size, &b) == 0) {
				out->pending += b.pending;
				out->buckets++;
			}
		}
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		const void *k = (const char *)*keybuf + i * key_size;
		out->syscalls++;
		if (bpf_map_lookup_and_delete_elem(fd, k, &b))
			continue;
		if (!idle(&b, now_ns, idle_ns)) {
			/* used again since the walk: put it back; if the kernel
			 * made a fresh bucket meanwhile, what this one held
			 * is expired after all */
			out->syscalls++;
			if (bpf_map_update_elem(fd, k, &b, BPF_NOEXIST) == 0) {
				out->pending += b.pending;
				out->buckets++;
				continue;
			}
		}
		out->removed++;
		if (on_expired)
			on_expired(k, &b, ctx);
	}
	return 0;
}
