/* A cgroup-tree walk replayed while the tree has not changed (the
 * statistics collector's pass, stats/build.c).
 *
 * A recording walk (sl_cgwalk) keeps every directory the callback saw (its
 * path relative to the root, depth, inode, what the callback returned) and
 * puts an inotify watch (IN_CREATE | IN_DELETE | IN_MOVED_* | IN_*_SELF) on
 * each. A cgroup exists only through mkdir(2)/rmdir(2) on its parent, and
 * the VFS reports both to inotify (fs/namei.c vfs_mkdir -> fsnotify_mkdir,
 * vfs_rmdir -> fsnotify_rmdir), whichever mount of the hierarchy they went
 * through (one kernfs superblock per hierarchy: the same inodes). So while
 * no event is queued, the directory tree is the recorded one, and the next
 * walk calls the callback with the recorded entries instead of opening and
 * listing every directory again (at idle, about half of a pass's syscalls).
 *
 * A real walk is made instead when: an event or a queue overflow is queued;
 * a watch could not be added (fs.inotify.max_user_watches reached, or no
 * inotify); the last recording is not settled (a directory's st_nlink, read
 * once it was watched, does not match its recorded subdirectories: one was
 * made between the walker's leaf test and the watch, or a bound left one
 * out); full_every walks were replayed in a row (a bound on how long
 * anything missed could last); the root or the options changed; or at the
 * last replay the callback descended into a directory whose children were
 * not recorded (it had returned SKIP when recorded).
 *
 * A replayed entry has fd -1: a callback that needs the directory's
 * descriptor must use sl_cgwalk. Not thread-safe: one caller at a time. */
#ifndef SANDLENS_CGROUP_CGWALK_CACHE_H
#define SANDLENS_CGROUP_CGWALK_CACHE_H

#include "cgroup/cgwalk.h"

struct sl_cgwalk_cache;

/* full_every: at most this many replays between two real walks (0 = 12).
 * NULL when out of memory. */
struct sl_cgwalk_cache *sl_cgwalk_cache_new(unsigned full_every);
void sl_cgwalk_cache_free(struct sl_cgwalk_cache *c);

/* sl_cgwalk(root, o, fn, arg, st), or its replay (above). Same returns; *st
 * of a replay is the recording walk's but for dirs (the callbacks made).
 * c NULL: sl_cgwalk. */
int sl_cgwalk_cached(struct sl_cgwalk_cache *c, const char *root, const struct sl_cgwalk_opts *o,
		     sl_cgwalk_fn fn, void *arg, struct sl_cgwalk_stats *st);

struct sl_cgwalk_cache_stats {
	uint64_t walks;          /* real (recording) walks */
	uint64_t replays;        /* walks answered from the record */
	uint64_t watch_failures; /* recording walks that could not watch every directory */
	uint64_t events;         /* inotify events that ended a run of replays */
	uint64_t unsettled;      /* recording walks not used: a directory's subdirectory
				  * count (st_nlink) and its recorded children differ (made
				  * during the walk, or left out by a bound) */
};
void sl_cgwalk_cache_stats(const struct sl_cgwalk_cache *c, struct sl_cgwalk_cache_stats *out);

#endif
