/* A cache of open cgroup directory and file descriptors, kept across
 * statistics passes (issue 13 item 4: the agent's idle cost).
 *
 * Reading a cgroup's ~20 files by path every pass costs, per file, a path
 * walk through kernfs (openat: kernfs_dop_revalidate, lookup_fast), an open
 * (kernfs_fop_open, seq_open) and a close: most of the statistics thread's
 * CPU at 100 containers. The cache keeps each cgroup directory open
 * (keyed by its absolute path, which names the hierarchy: one entry per
 * hierarchy) and, within a budget, the files read from it, re-read with
 * pread at offset 0.
 *
 * Why a kept descriptor reads current figures: cgroup files are kernfs seq
 * files (kernfs_fop_read_iter -> seq_read_iter); a read at offset 0 resets
 * the iterator and calls the file's show function again (fs/seq_file.c
 * seq_read_iter: "if request is to read from zero offset, reset iterator to
 * first record"), so every pread at 0 regenerates the text. memory.peak
 * (6.12+) keeps a per-open-file watermark only after a write to that file
 * descriptor; a read-only one reads the cgroup's watermark.
 *
 * When an entry is dropped (its descriptors closed, the next read opens by
 * path again):
 *   - the caller's inode for the directory (the walk's st_ino, the cgroup
 *     id on v2) differs from the one the entry was opened with: the cgroup
 *     was removed and re-created under the same name;
 *   - a kept descriptor reads or opens with ENODEV/ENOENT (kernfs: the
 *     node was removed, kernfs_get_active fails), or a reused directory
 *     yields no readable file at all: the read is retried once on a fresh
 *     open by path (cgstat.c), so a removed-and-re-created cgroup is never
 *     read through its old descriptors;
 *   - it was not used during a pass (sl_cgfd_cache_end_pass): the walk no
 *     longer lists the cgroup.
 *
 * Bounds: at most max_fds descriptors are held (directories up to the whole
 * budget, files only while fewer than half of it are held: each kept seq
 * file also holds its kernel buffer, a page or more); beyond that a
 * directory or file is opened, read and closed as without a cache. The
 * default budget is half of RLIMIT_NOFILE's soft limit, at most
 * SL_CGFD_DEFAULT_MAX.
 *
 * Files are opened O_NONBLOCK | O_NOFOLLOW and read only if fstat says they
 * are regular files (cgroup directories may be delegated to other users: a
 * FIFO or a link planted in a fixture or delegated tree is never read and
 * never blocks); directories are opened O_DIRECTORY by the path the caller
 * gives (the walk that found them never enters a link, cgwalk.h; a mount
 * point may be one).
 *
 * Thread safety: none; one cache belongs to one thread (the statistics
 * collector, under its pass mutex).
 */
#ifndef SANDLENS_CGROUP_CGFD_H
#define SANDLENS_CGROUP_CGFD_H

#include <stddef.h>
#include <stdint.h>

/* File slots per directory (cgstat.c numbers its files below this). */
#define SL_CGFD_NFILES 40
/* Upper bound of the default budget (descriptors). */
#define SL_CGFD_DEFAULT_MAX 8192

struct sl_cgfd_cache;

/* Counters of a cache (cumulative since creation, except fds/entries). */
struct sl_cgfd_stats {
	uint64_t entries;      /* directories held now */
	uint64_t fds;          /* descriptors held now (directories + files) */
	uint64_t max_fds;      /* the budget */
	uint64_t dir_hits;     /* directory reads served by a kept descriptor */
	uint64_t file_hits;    /* file reads served by a kept descriptor */
	uint64_t dropped_gone; /* entries dropped: ENODEV/ENOENT or nothing readable */
	uint64_t dropped_ino;  /* entries dropped: the directory's inode changed */
	uint64_t dropped_unseen; /* entries dropped: not used in a pass */
	uint64_t fallbacks;    /* opens not kept because the budget was used up */
};

/* The default budget: RLIMIT_NOFILE soft limit / 2, at most
 * SL_CGFD_DEFAULT_MAX; 0 (no caching) when the limit is below 512 or
 * getrlimit fails. */
size_t sl_cgfd_default_max(void);

/* A new, empty cache holding at most max_fds descriptors (0: nothing is
 * kept, every read opens by path). Returns NULL when out of memory. */
struct sl_cgfd_cache *sl_cgfd_cache_new(size_t max_fds);

/* Close every descriptor and free the cache. NULL is a no-op. */
void sl_cgfd_cache_free(struct sl_cgfd_cache *c);

/* Start a pass: entries used from now until sl_cgfd_cache_end_pass are
 * kept, the others are closed there. */
void sl_cgfd_cache_begin_pass(struct sl_cgfd_cache *c);

/* End a pass: close and drop every entry not used since begin_pass. */
void sl_cgfd_cache_end_pass(struct sl_cgfd_cache *c);

/* Current counters. */
void sl_cgfd_cache_stats(const struct sl_cgfd_cache *c, struct sl_cgfd_stats *out);

/* ---------------------------------------------- used by the readers */

struct sl_cgfd_ent;

/* One directory being read (valid between sl_cgfd_dir_open and
 * sl_cgfd_dir_close). */
struct sl_cgfd_dir {
	struct sl_cgfd_cache *c; /* NULL: not cached */
	struct sl_cgfd_ent *e;   /* the kept entry, NULL: dfd is closed at dir_close */
	int dfd;                 /* -1: directory absent */
	int reused;              /* e was opened in an earlier read */
	int stale;               /* a kept descriptor showed the cgroup is gone */
	unsigned tried, nread;   /* files tried / read in this read */
};

/* Open directory path for reading (through cache c when non-NULL). ino:
 * the directory's inode as the caller's walk saw it (0 = unknown, no
 * check): an entry opened on another inode is dropped first. Returns 0
 * with *d set, -errno from open(2) (-ENOENT: no such cgroup), -EINVAL for
 * a NULL or empty path. On error d->dfd is -1 (reading it reads nothing). */
int sl_cgfd_dir_open(struct sl_cgfd_cache *c, const char *path, uint64_t ino,
		     struct sl_cgfd_dir *d);

/* The whole text of file `name` (slot `slot` < SL_CGFD_NFILES; one name
 * per slot) of d, NUL-terminated, malloc'd; NULL when absent, unreadable,
 * not a regular file, or out of memory (at most 4 MiB are read; the rest
 * is cut). */
char *sl_cgfd_read(struct sl_cgfd_dir *d, unsigned slot, const char *name);

/* End the read of d: close what is not kept; drop the entry when it went
 * stale. Returns 1 when a descriptor kept from an earlier read went stale
 * (the caller should read again, on a fresh open), else 0. */
int sl_cgfd_dir_close(struct sl_cgfd_dir *d);

#endif
