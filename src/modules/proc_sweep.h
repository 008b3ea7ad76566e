/* Sweep of a kernel token-bucket table (proc module: exec_buckets,
 * exit_buckets): remove the buckets idle longer than a limit, counting what
 * they still held, and sum what the others hold. Linear in the table size
 * (one walk, then the deletes). */
#ifndef SANDLENS_MODULES_PROC_SWEEP_H
#define SANDLENS_MODULES_PROC_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include "sandlens/proc.h"

/* Called for each removed bucket with its key and its final value. */
typedef void (*sl_sweep_expired_fn)(const void *key, const struct sl_exec_bucket *b, void *ctx);

struct sl_sweep_result {
	uint64_t buckets; /* buckets left in the table */
	uint64_t pending; /* Σ pending over the buckets left */
	uint64_t removed; /* buckets removed (idle) */
	uint64_t syscalls; /* bpf(2) calls the sweep made (cost measure) */
};

/* Sweep the BPF hash map fd (keys of key_size bytes, values struct
 * sl_exec_bucket) at time now_ns (CLOCK_MONOTONIC ns): a bucket whose
 * last_ns is more than idle_ns before now_ns is removed and passed to
 * on_expired (may be NULL). A bucket that was used again between the walk
 * and its removal is put back. *keybuf and *keycap: a scratch buffer reused
 * across calls (grown with realloc; free(*keybuf) when done).
 * Returns 0, or -ENOMEM (the walk still counted what it saw, nothing was
 * removed). */
int sl_bucket_sweep(int fd, size_t key_size, uint64_t now_ns, uint64_t idle_ns, sl_sweep_expired_fn on_expired,
		    void *ctx, void **keybuf, size_t *keycap, struct sl_sweep_result *out);

#endif
