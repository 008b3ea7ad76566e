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

/* One bucket of the walk: an idle one's key is kept for removal (unless
 * memory ran out before: *err), a live one is counted. */
static void visit(const void *key, const struct sl_exec_bucket *b, size_t key_size, uint64_t now_ns,
		  uint64_t idle_ns, void **keybuf, size_t *keycap, size_t *n, int *err, struct sl_sweep_result *out)
{
	if (!*err && idle(b, now_ns, idle_ns)) {
		*err = keep(keybuf, keycap, *n, key, key_size);
		if (!*err) {
			(*n)++;
			return;
		}
	}
	out->pending += b->pending;
	out->buckets++;
}

/* The walk by BPF_MAP_LOOKUP_BATCH (kernel/bpf/hashtab.c
 * __htab_map_lookup_and_delete_batch: whole hash buckets per call, ENOENT
 * at the end, ENOSPC when the first bucket does not fit in count: nothing
 * consumed, retried with more room): a few bpf() calls per sweep instead of
 * two per bucket (the sweep runs every tick). Returns 0 when the walk is
 * done, 1 when it is not (no batch ops on the map: EINVAL, ENOTSUPP...; no
 * memory for the buffers; an error mid-walk): the caller then walks per
 * element from the start, what this one visited discarded. */
static int walk_batch(int fd, size_t key_size, uint64_t now_ns, uint64_t idle_ns, void **keybuf, size_t *keycap,
		      size_t *n, int *err, struct sl_sweep_result *out)
{
	uint32_t chunk = 256, count;
	unsigned char token[MAX_KEY];
	unsigned char *keys = calloc(chunk, key_size); /* zeroed: valgrind does not see the kernel fill it */
	struct sl_exec_bucket *vals = calloc(chunk, sizeof(*vals));
	int first = 1, rc = 0;

	while (keys && vals) {
		LIBBPF_OPTS(bpf_map_batch_opts, o);
		count = chunk;
		out->syscalls++;
		int e = bpf_map_lookup_batch(fd, first ? NULL : token, token, keys, vals, &count, &o);
		if (e && errno == ENOSPC && chunk < (1u << 16)) {
			chunk *= 2;
			free(keys);
			free(vals);
			keys = calloc(chunk, key_size);
			vals = calloc(chunk, sizeof(*vals));
			continue;
		}
		if (e && errno != ENOENT) {
			rc = 1;
			break;
		}
		for (uint32_t i = 0; i < count; i++)
			visit(keys + (size_t)i * key_size, &vals[i], key_size, now_ns, idle_ns, keybuf, keycap, n, err,
			      out);
		first = 0;
		if (e) /* ENOENT: the end of the table */
			break;
	}
	if (!keys || !vals)
		rc = 1;
	free(keys);
	free(vals);
	return rc;
}

int sl_bucket_sweep(int fd, size_t key_size, uint64_t now_ns, uint64_t idle_ns, sl_sweep_expired_fn on_expired,
		    void *ctx, void **keybuf, size_t *keycap, struct sl_sweep_result *out)
{
	unsigned char key[MAX_KEY], next[MAX_KEY];
	void *prev = NULL;
	struct sl_exec_bucket b;
	size_t n = 0;
	int err = 0, w;

	memset(out, 0, sizeof(*out));
	if (key_size > MAX_KEY || !key_size)
		return -EINVAL;
	w = walk_batch(fd, key_size, now_ns, idle_ns, keybuf, keycap, &n, &err, out);
	if (w) { /* per element, from the start */
		out->pending = out->buckets = 0;
		n = 0;
		err = 0;
	}
	if (w)
		while (out->syscalls++, bpf_map_get_next_key(fd, prev, next) == 0) {
			memcpy(key, next, key_size);
			prev = key;
			out->syscalls++;
			if (bpf_map_lookup_elem(fd, key, &b))
				continue; /* deleted meanwhile */
			visit(key, &b, key_size, now_ns, idle_ns, keybuf, keycap, &n, &err, out);
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
