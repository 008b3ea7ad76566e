/* Cgroup mount discovery (fixture mountinfo) and the attribution cache
 * (ATTR-2) over a fixture directory tree that mimics a pure-v2 cgroup mount:
 * ids are st_ino of the fixture directories, time is injected. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup/attr.h"
#include "cgroup/k8s_names.h"

#define SEC 1000000000ull
#define H1 "9e073649debeec6d511391c9ec7627ee67ce3a3fb508b0fa0437a97f8e58ba98"
#define H2 "0bd31f558c426d46f30778cefbc727282e4f257537b42b361ea5d03a44f4febe"
#define H3 "1111111111111111111111111111111111111111111111111111111111111111"
#define UID_ "019c1fe8_0d92_4aa0_b61c_4df58bdde71c"
#define UID "019c1fe8-0d92-4aa0-b61c-4df58bdde71c"
#define POD_DIR "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice"
#define CTR_PATH POD_DIR "/cri-containerd-" H1 ".scope"
#define DOCKER_PATH "/system.slice/docker-" H2 ".scope"
#define SESSION_PATH "/user.slice/user-0.slice/session-1.scope"

struct fx {
	char top[64];  /* mkdtemp dir */
	char mnt[128]; /* fixture v2 mount = top/mnt */
	struct sl_cg_mounts m;
};

static void xmkdir(const char *base, const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s%s", base, rel);
	/* mkdir -p */
	for (char *s = p + strlen(base); *s; s++) {
		if (s == p + strlen(base))
			continue;
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) != 0 && errno != EEXIST)
				fail_msg("mkdir %s: %s", p, strerror(errno));
			*s = '/';
		}
	}
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", p, strerror(errno));
}

static uint64_t ino_of(const char *base, const char *rel)
{
	char p[PATH_MAX];
	struct stat sb;
	snprintf(p, sizeof(p), "%s%s", base, rel);
	assert_int_equal(stat(p, &sb), 0);
	return (uint64_t)sb.st_ino;
}

static int rm_rf(const char *path)
{
	char cmd[PATH_MAX + 32];
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s'; rm -rf '%s'", path, path);
	return system(cmd);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	snprintf(f->top, sizeof(f->top), "/tmp/sl-attr-XXXXXX");
	if (!mkdtemp(f->top))
		return -1;
	snprintf(f->mnt, sizeof(f->mnt), "%s/mnt", f->top);
	xmkdir(f->mnt, "");
	xmkdir(f->mnt, CTR_PATH);
	xmkdir(f->mnt, DOCKER_PATH);
	xmkdir(f->mnt, SESSION_PATH);
	xmkdir(f->mnt, "/system.slice/locked/inner");
	xmkdir(f->top, "/outside/target");
	/* non-directories and a symlink to a directory must be skipped */
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/system.slice/cgroup.procs", f->mnt);
	int fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "%s/system.slice/link", f->mnt);
	char tgt[PATH_MAX];
	snprintf(tgt, sizeof(tgt), "%s/outside", f->top);
	if (symlink(tgt, p) != 0)
		return -1;
	/* unreadable (effective only when not root) */
	snprintf(p, sizeof(p), "%s/system.slice/locked", f->mnt);
	chmod(p, 0);
	memset(&f->m, 0, sizeof(f->m));
	snprintf(f->m.v2, sizeof(f->m.v2), "%s", f->mnt);
	f->m.v2_root_id = ino_of(f->mnt, "");
	f->m.v1_hierarchy_id = -1;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	rm_rf(f->top);
	free(f);
	return 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* ---- mounts ---- */

static void test_mounts_hybrid(void **state)
{
	struct fx *f = *state;
	char unified[PATH_MAX], mem[PATH_MAX], mi[PATH_MAX], cg[PATH_MAX], text[8192];
	snprintf(unified, sizeof(unified), "%s/unified", f->top);
	snprintf(mem, sizeof(mem), "%s/mem ory", f->top); /* escaped as \040 */
	xmkdir(unified, "");
	xmkdir(mem, "");
	snprintf(text, sizeof(text),
		 "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		 "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		 "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 master:2 - cgroup cgroup rw,cpu,cpuacct\n"
		 "33 31 0:30 / /sys/fs/cgroup/x rw - cgroup cgroup rw,memory_recursiveprot\n"
		 "35 31 0:32 / %s/mem\\040ory rw,relatime shared:12 - cgroup cgroup rw,memory\n"
		 "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
		 "41 31 0:38 / %s rw,relatime shared:5 - cgroup2 cgroup2 rw,nsdelegate\n"
		 "garbage line without separator\n",
		 f->top, unified);
	snprintf(mi, sizeof(mi), "%s/mountinfo", f->top);
	write_file(mi, text);
	snprintf(cg, sizeof(cg), "%s/cgroups", f->top);
	write_file(cg, "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
		       "cpuset\t3\t1\t1\ncpu\t1\t1\t1\nmemory\t5\t120\t1\n");
	struct sl_cg_mounts m;
	assert_int_equal(sl_cg_mounts_discover_ex(mi, cg, "memory", &m), 0);
	assert_string_equal(m.v2, unified);
	assert_string_equal(m.v1, mem);
	assert_string_equal(m.v1_controller, "memory");
	assert_int_equal(m.v1_hierarchy_id, 5);
	assert_int_equal(m.v2_root_id, ino_of(unified, ""));
	assert_int_equal(m.v1_root_id, ino_of(mem, ""));
	/* every controller the agent reads, from the same pass (co-mounted
	 * cpu,cpuacct share a path; "memory_recursiveprot" is not "memory") */
	assert_string_equal(m.v1_ctrl[SL_CG_MEMORY], mem);
	assert_string_equal(m.v1_ctrl[SL_CG_CPU], "/sys/fs/cgroup/cpu,cpuacct");
	assert_string_equal(m.v1_ctrl[SL_CG_CPUACCT], "/sys/fs/cgroup/cpu,cpuacct");
	assert_string_equal(m.v1_ctrl[SL_CG_BLKIO], "");
	assert_string_equal(m.v1_ctrl[SL_CG_PIDS], "");
	/* controller not mounted, /proc/cgroups unreadable */
	assert_int_equal(sl_cg_mounts_discover_ex(mi, "/nonexistent", "hugetlb", &m), 0);
	assert_string_equal(m.v1, "");
	assert_int_equal(m.v1_hierarchy_id, -1);
	assert_string_equal(m.v2, unified);
}

static void test_mounts_pure_v2(void **state)
{
	struct fx *f = *state;
	char mi[PATH_MAX], text[4096];
	snprintf(text, sizeof(text),
		 "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		 "30 22 0:26 / %s rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
		 "rw,nsdelegate,memory_recursiveprot",
		 f->mnt); /* no trailing newline */
	snprintf(mi, sizeof(mi), "%s/mountinfo2", f->top);
	write_file(mi, text);
	struct sl_cg_mounts m;
	assert_int_equal(sl_cg_mounts_discover_ex(mi, NULL, "memory", &m), 0);
	assert_string_equal(m.v2, f->mnt);
	assert_int_equal(m.v2_root_id, f->m.v2_root_id);
	assert_string_equal(m.v1, "");
	assert_int_equal(m.v1_hierarchy_id, -1);
	assert_int_equal(m.v1_root_id, 0);
	assert_int_equal(sl_cg_mounts_discover("/nonexistent/mountinfo", "memory", &m), -ENOENT);
	/* the real file parses */
	assert_int_equal(sl_cg_mounts_discover("/proc/self/mountinfo", "memory", &m), 0);
}

/* ---- cache ---- */

static struct sl_attr_cache *mk(const struct fx *f, size_t cap)
{
	struct sl_attr_cache_config cfg = {.capacity = cap,
					   .positive_ttl_ns = 300 * SEC,
					   .negative_ttl_ns = 30 * SEC,
					   .rewalk_interval_ns = 1 * SEC};
	struct sl_attr_cache *c = sl_attr_cache_new(&cfg, f ? &f->m : NULL);
	assert_non_null(c);
	return c;
}

static void test_hit_miss(void **state)
{
	struct fx *f = *state;
	struct sl_attr_cache *c = mk(f, 0);
	struct sl_attr a;
	struct sl_attr_cache_stats s;
	char path[512];
	uint64_t t = 1000 * SEC;

	assert_int_equal(sl_attr_cache_lookup(c, 0, ino_of(f->mnt, CTR_PATH), t, &a, path, sizeof(path)), 1);
	assert_string_equal(path, CTR_PATH);
	assert_int_equal(a.is_container, SL_YES);
	assert_string_equal(a.runtime, "containerd");
	assert_string_equal(a.container_id, H1);
	assert_string_equal(a.pod_uid, UID);
	assert_string_equal(a.qos, "burstable");
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.misses, 1);
	assert_int_equal(s.walks, 1);
	assert_int_equal(s.hits, 0);

	/* same id again: hit; docker id: recorded by the same walk */
	assert_int_equal(sl_attr_cache_lookup(c, 0, ino_of(f->mnt, CTR_PATH), t + 1, &a, NULL, 0), 1);
	assert_int_equal(sl_attr_cache_lookup(c, 0, ino_of(f->mnt, DOCKER_PATH), t + 2, &a, path,
					      sizeof(path)),
			 1);
	assert_string_equal(a.runtime, "docker");
	assert_string_equal(a.container_id, H2);
	assert_string_equal(path, DOCKER_PATH);
	assert_int_equal(sl_attr_cache_lookup(c, 0, ino_of(f->mnt, SESSION_PATH), t + 3, &a, NULL, 0), 1);
	assert_int_equal(a.is_container, SL_NO);
	assert_string_equal(a.kind, "systemd");
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.hits, 3);
	assert_int_equal(s.walks, 1);
	/* the symlinked outside dir was not followed */
	assert_int_equal(sl_attr_cache_lookup(c, 0, ino_of(f->top, "/outside/target"), t + 4, &a, path,
					      sizeof(path)),
			 0);
	assert_int_equal(a.is_container, SL_UNKNOWN);
	assert_string_equal(path, "");

	/* root id -> host */
	assert_int_equal(sl_attr_cache_lookup(c, 0, f->m.v2_root_id, t + 5, &a, path, sizeof(path)), 1);
	assert_string_equal(a.runtime, "host");
	assert_int_equal(a.is_container, SL_NO);
	assert_string_equal(path, "/");
	/* v1 not mounted in this fixture, bad hier */
	assert_int_equal(sl_attr_cache_lookup(c, 1, ino_of(f->mnt, CTR_PATH), t + 6, &a, NULL, 0), 0);
	assert_int_equal(sl_attr_cache_lookup(c, 7, 1, t + 6, &a, NULL, 0), 0);
	sl_attr_cache_free(c);
}

static void test_negative_ttl(void **state)
{
	struct fx *f = *state;
	struct sl_attr_cache *c = mk(f, 0);
	struct sl_attr a;
	struct sl_attr_cache_stats s;
	uint64_t t = 50 * SEC, id = ino_of(f->top, "/outside/target");

	assert_int_equal(sl_attr_cache_lookup(c, 0, id, t, &a, NULL, 0), 0);
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.walks, 1);
	assert_int_equal(s.misses, 1);
	/* the directory appears under the mount (rename keeps the inode) */
	char from[PATH_MAX], to[PATH_MAX];
	snprintf(from, sizeof(from), "%s/outside/target", f->top);
	snprintf(to, sizeof(to), "%s/system.slice/docker-" H3 ".scope", f->mnt);
	assert_int_equal(rename(from, to), 0);
	/* still negative inside the negative TTL, no new walk */
	assert_int_equal(sl_attr_cache_lookup(c, 0, id, t + 30 * SEC - 1, &a, NULL, 0), 0);
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.negative_hits, 1);
	assert_int_equal(s.walks, 1);
	/* expired: walks again and finds it */
	assert_int_equal(sl_attr_cache_lookup(c, 0, id, t + 30 * SEC, &a, NULL, 0), 1);
	assert_string_equal(a.container_id, H3);
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.walks, 2);
	assert_true(s.expired >= 1);
	assert_int_equal(rename(to, from), 0);
	sl_attr_cache_free(c);
}

static void test_rewalk_rate_limit(void **state)
{
	struct fx *f = *state;
	struct sl_attr_cache *c = mk(f, 0);
	struct sl_attr a;
	struct sl_attr_cache_stats s;
	uint64_t t = 10 * SEC;
	assert_int_equal(sl_attr_cache_lookup(c, 0, 12345678901ull, t, &a, NULL, 0), 0);
	xmkdir(f->mnt, "/system.slice/late.service");
	uint64_t id = ino_of(f->mnt, "/system.slice/late.service");
	/* inside the rewalk interval: negative without a walk */
	assert_int_equal(sl_attr_cache_lookup(c, 0, id, t + SEC / 2, &a, NULL, 0), 0);
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.walks, 1);
	assert_int_equal(s.misses, 2);
	/* that negative entry lasts only until the next walk is allowed */
	assert_int_equal(sl_attr_cache_lookup(c, 0, id, t + SEC, &a, NULL, 0), 1);
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.walks, 2);
	sl_attr_cache_free(c);
}

static void test_positive_ttl(void **state)
{
	struct fx *f = *state;
	struct sl_attr_cache *c = mk(f, 0);
	struct sl_attr a;
	struct sl_attr_cache_stats s;
	char path[512];
	uint64_t t = 100 * SEC, id = ino_of(f->mnt, DOCKER_PATH);
	uint64_t sid = ino_of(f->mnt, SESSION_PATH);
	assert_int_equal(sl_attr_cache_lookup(c, 0, id, t, &a, NULL, 0), 1);
	assert_int_equal(sl_attr_cache_lookup(c, 0, sid, t, &a, NULL, 0), 1);
	char from[PATH_MAX], to[PATH_MAX];
	snprintf(from, sizeof(from), "%s" DOCKER_PATH, f->mnt);
	snprintf(to, sizeof(to), "%s/system.slice/renamed.scope", f->mnt);
	assert_int_equal(rename(from, to), 0);
	/* within the TTL the cached answer stands */
	assert_int_equal(sl_attr_cache_lookup(c, 0, id, t + 300 * SEC - 1, &a, path, sizeof(path)), 1);
	assert_string_equal(a.runtime, "docker");
	/* after it: the entry is re-read (revalidation fails, walk finds the new path) */
	assert_int_equal(sl_attr_cache_lookup(c, 0, id, t + 300 * SEC, &a, path, sizeof(path)), 1);
	assert_string_equal(path, "/system.slice/renamed.scope");
	assert_int_equal(a.is_container, SL_NO);
	sl_attr_cache_get_stats(c, &s);
	assert_true(s.expired >= 1);
	uint64_t walks = s.walks;
	/* an unchanged dir past its TTL is revalidated with a stat, no walk */
	assert_int_equal(sl_attr_cache_lookup(c, 0, sid, t + 300 * SEC + 2 * SEC, &a, path, sizeof(path)),
			 1);
	assert_string_equal(path, SESSION_PATH);
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.walks, walks);
	assert_int_equal(rename(to, from), 0);
	sl_attr_cache_free(c);
}

static void test_capacity_eviction(void **state)
{
	struct fx *f = *state;
	struct sl_attr_cache *c = mk(f, 4);
	struct sl_attr a;
	struct sl_attr_cache_stats s;
	uint64_t ids[10];
	char rel[64];
	for (int i = 0; i < 10; i++) {
		snprintf(rel, sizeof(rel), "/cap/c%d", i);
		xmkdir(f->mnt, rel);
		ids[i] = ino_of(f->mnt, rel);
	}
	uint64_t t = 5000 * SEC;
	for (int i = 0; i < 10; i++) {
		t += 2 * SEC; /* past the rewalk interval */
		assert_int_equal(sl_attr_cache_lookup(c, 0, ids[i], t, &a, NULL, 0), 1);
		sl_attr_cache_get_stats(c, &s);
		assert_true(s.entries <= 4);
	}
	sl_attr_cache_get_stats(c, &s);
	assert_true(s.evictions >= 6);
	sl_attr_cache_free(c);

	/* LRU order, with mkdir-fed entries and no mounts (no walks) */
	c = mk(NULL, 4);
	for (uint64_t i = 101; i <= 104; i++)
		sl_attr_cache_on_mkdir(c, 0, i, "/system.slice/x.service", t);
	assert_int_equal(sl_attr_cache_lookup(c, 0, 101, t, &a, NULL, 0), 1); /* 101 most recent */
	sl_attr_cache_on_mkdir(c, 0, 105, "system.slice/y.service", t);      /* evicts 102 */
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.entries, 4);
	assert_int_equal(s.evictions, 1);
	char path[64];
	assert_int_equal(sl_attr_cache_lookup(c, 0, 101, t, &a, NULL, 0), 1);
	assert_int_equal(sl_attr_cache_lookup(c, 0, 105, t, &a, path, sizeof(path)), 1);
	assert_string_equal(path, "/system.slice/y.service");
	assert_int_equal(sl_attr_cache_lookup(c, 0, 102, t, &a, NULL, 0), 0);
	sl_attr_cache_free(c);
}

static void test_rmdir_and_churn(void **state)
{
	(void)state;
	struct sl_attr_cache *c = mk(NULL, 64);
	struct sl_attr a;
	struct sl_attr_cache_stats s;
	uint64_t t = SEC;
	sl_attr_cache_on_mkdir(c, 0, 42, "/system.slice/docker-" H2 ".scope", t);
	assert_int_equal(sl_attr_cache_lookup(c, 0, 42, t, &a, NULL, 0), 1);
	assert_string_equal(a.container_id, H2);
	sl_attr_cache_on_rmdir(c, 0, 42, t);
	sl_attr_cache_on_rmdir(c, 0, 42, t); /* twice: no-op */
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.rmdir_drops, 1);
	/* within the grace a late sample of the dead container still resolves
	 * (no revalidation: the directory is gone) */
	memset(&a, 0, sizeof(a));
	assert_int_equal(sl_attr_cache_lookup(c, 0, 42, t + SL_ATTR_RMDIR_GRACE_NS - 1, &a, NULL, 0), 1);
	assert_string_equal(a.container_id, H2);
	/* after it, the entry is gone: a miss (and the walk finds nothing) */
	assert_int_equal(sl_attr_cache_lookup(c, 0, 42, t + SL_ATTR_RMDIR_GRACE_NS, &a, NULL, 0), 0);
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.entries, 1); /* the negative entry of that miss */
	sl_attr_cache_on_rmdir(c, 0, 42, t); /* drops the negative entry at once */
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.entries, 0);
	t += SL_ATTR_RMDIR_GRACE_NS;

	/* dead cgroups in their grace never push live ones out */
	{
		struct sl_attr_cache *d = mk(NULL, 8);
		char q[160];
		for (uint64_t i = 0; i < 4; i++) { /* live */
			snprintf(q, sizeof(q), "/kubepods/besteffort/pod" UID "/%064llx", (unsigned long long)(70 + i));
			sl_attr_cache_on_mkdir(d, 0, 70 + i, q, t);
		}
		for (uint64_t i = 0; i < 64; i++) { /* short-lived: mkdir, rmdir */
			snprintf(q, sizeof(q), "/kubepods/besteffort/pod" UID "/%064llx", (unsigned long long)(500 + i));
			sl_attr_cache_on_mkdir(d, 0, 500 + i, q, t + i);
			sl_attr_cache_on_rmdir(d, 0, 500 + i, t + i);
		}
		for (uint64_t i = 0; i < 4; i++) {
			assert_int_equal(sl_attr_cache_lookup(d, 0, 70 + i, t + 100, &a, NULL, 0), 1);
			assert_int_equal(a.is_container, SL_YES);
		}
		sl_attr_cache_get_stats(d, &s);
		assert_int_equal(s.rmdir_drops, 64);
		assert_int_equal(s.evictions, 0); /* counted once, as rmdir drops */
		sl_attr_cache_free(d);
	}

	char p[128];
	for (uint64_t i = 0; i < 10000; i++) {
		snprintf(p, sizeof(p), "/kubepods/besteffort/pod" UID "/%064llx", (unsigned long long)i);
		sl_attr_cache_on_mkdir(c, i & 1, 1000 + i, p, t + i);
		assert_int_equal(sl_attr_cache_lookup(c, i & 1, 1000 + i, t + i, &a, NULL, 0), 1);
		assert_int_equal(a.is_container, SL_YES);
		sl_attr_cache_lookup(c, 0, 900000 + i, t + i, &a, NULL, 0); /* negative noise */
		sl_attr_cache_on_rmdir(c, i & 1, 1000 + i, t + i);
		sl_attr_cache_get_stats(c, &s);
		assert_true(s.entries <= 64);
	}
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.rmdir_drops, 2 + 10000); /* 42, its negative entry, the cycles */
	/* mkdir without rmdir: bounded by capacity */
	for (uint64_t i = 0; i < 10000; i++)
		sl_attr_cache_on_mkdir(c, 0, 50000 + i, "/x", t);
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.entries, 64);
	sl_attr_cache_free(c);
	sl_attr_cache_free(NULL);
}

static void test_defaults_and_missing_mount(void **state)
{
	(void)state;
	struct sl_cg_mounts m = {.v1_hierarchy_id = -1};
	snprintf(m.v2, sizeof(m.v2), "/nonexistent/cgroup");
	struct sl_attr_cache *c = sl_attr_cache_new(NULL, &m);
	assert_non_null(c);
	struct sl_attr a;
	assert_int_equal(sl_attr_cache_lookup(c, 0, 77, SEC, &a, NULL, 0), 0);
	assert_int_equal(a.is_container, SL_UNKNOWN);
	/* default capacity 4096 */
	for (uint64_t i = 0; i < 5000; i++)
		sl_attr_cache_on_mkdir(c, 0, 1000 + i, "/a", SEC);
	struct sl_attr_cache_stats s;
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.entries, 4096);
	/* default negative TTL 30 s: 77 (negative at 1 s) was evicted; a fresh
	 * negative at 2 s is still negative at 31.9 s and gone at 32 s */
	assert_int_equal(sl_attr_cache_lookup(c, 0, 78, 2 * SEC, &a, NULL, 0), 0);
	assert_int_equal(sl_attr_cache_lookup(c, 0, 78, 32 * SEC - 1, &a, NULL, 0), 0);
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.negative_hits, 1);
	sl_attr_cache_free(c);
}

static void test_hybrid_resolve(void **state)
{
	struct fx *f = *state;
	/* fixture hybrid host: v2 at mnt, v1 (memory) at top/v1 */
	char v1[128];
	snprintf(v1, sizeof(v1), "%.64s/v1", f->top);
	xmkdir(v1, "");
	xmkdir(v1, "/process_api/1d4141104217d3127574b5cf478a954e");
	xmkdir(v1, "/docker/" H3);
	struct sl_cg_mounts m = f->m;
	snprintf(m.v1, sizeof(m.v1), "%s", v1);
	snprintf(m.v1_controller, sizeof(m.v1_controller), "memory");
	m.v1_root_id = ino_of(v1, "");
	struct sl_attr_cache *c = sl_attr_cache_new(NULL, &m);
	assert_non_null(c);
	struct sl_attr a;
	char path[512];
	int h;
	uint64_t t = SEC;
	uint64_t host_v1 = ino_of(v1, "/process_api/1d4141104217d3127574b5cf478a954e");
	uint64_t dock_v1 = ino_of(v1, "/docker/" H3);
	/* host process: v2 root, v1 elsewhere -> v2 answer "host" */
	assert_int_equal(sl_attr_cache_resolve(c, m.v2_root_id, host_v1, t, &a, path, sizeof(path), &h), 1);
	assert_int_equal(h, 0);
	assert_string_equal(a.runtime, "host");
	/* runc container placed only in v2 (v1 at the launcher's cgroup) */
	assert_int_equal(sl_attr_cache_resolve(c, ino_of(f->mnt, CTR_PATH), host_v1, t, &a, path,
					       sizeof(path), &h),
			 1);
	assert_int_equal(h, 0);
	assert_string_equal(a.container_id, H1);
	/* docker cgroupfs on a hybrid host: only v1 names the container */
	assert_int_equal(sl_attr_cache_resolve(c, ino_of(f->mnt, SESSION_PATH), dock_v1, t, &a, path,
					       sizeof(path), &h),
			 1);
	assert_int_equal(h, 1);
	assert_string_equal(a.runtime, "docker");
	assert_string_equal(path, "/docker/" H3);
	/* nothing known */
	assert_int_equal(sl_attr_cache_resolve(c, 0, 0, t, &a, path, sizeof(path), &h), 0);
	assert_int_equal(h, -1);
	assert_int_equal(a.is_container, SL_UNKNOWN);
	sl_attr_cache_free(c);
}

/* sl_cg_mounts_parse: the same line parser on text in memory, not
 * NUL-terminated, no stat (ids stay 0). */
/* Kubernetes names: looked up once per entry, kept with it, retried with
 * a backoff while not found, gone with the entry after rmdir. */
static void test_names(void **state)
{
	struct fx *f = *state;
	struct sl_k8s_roots r;
	char p[PATH_MAX];
	memset(&r, 0, sizeof(r));
	snprintf(r.containerd, sizeof(r.containerd), "%s/containerd", f->top);
	xmkdir(f->top, "/containerd/k8s.io/" H1);
	struct sl_attr_cache_config cfg = {.positive_ttl_ns = 300 * SEC, .negative_ttl_ns = 30 * SEC,
					   .rewalk_interval_ns = SEC, .names = 1, .roots = &r};
	struct sl_attr_cache *c = sl_attr_cache_new(&cfg, &f->m);
	struct sl_attr a;
	struct sl_attr_cache_stats s;
	uint64_t t = 1000 * SEC, id = ino_of(f->mnt, CTR_PATH);

	assert_int_equal(sl_attr_cache_lookup(c, 0, id, t, &a, NULL, 0), 1);
	sl_attr_cache_names(c, 0, id, t, &a);
	assert_string_equal(a.names.pod, ""); /* no config.json yet */
	snprintf(p, sizeof(p), "%s/containerd/k8s.io/" H1 "/config.json", f->top);
	write_file(p, "{\"annotations\":{\"io.kubernetes.cri.sandbox-namespace\":\"shop\","
		      "\"io.kubernetes.cri.sandbox-name\":\"cart-0\",\"io.kubernetes.cri.container-name\":\"app\","
		      "\"io.kubernetes.cri.sandbox-uid\":\"" UID "\",\"io.kubernetes.cri.image-name\":\"cart:1\"}}");
	sl_attr_cache_names(c, 0, id, t + SEC / 2, &a); /* inside the backoff: not looked up */
	assert_string_equal(a.names.pod, "");
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.names_lookups, 1);
	sl_attr_cache_names(c, 0, id, t + SEC, &a);
	assert_string_equal(a.names.ns, "shop");
	assert_string_equal(a.names.pod, "cart-0");
	assert_string_equal(a.names.container, "app");
	assert_string_equal(a.names.image, "cart:1");
	/* from the entry now: the file is not read again */
	unlink(p);
	sl_attr_cache_names(c, 0, id, t + 2 * SEC, &a);
	assert_string_equal(a.names.pod, "cart-0");
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.names_lookups, 2);
	assert_int_equal(s.names_found, 1);
	/* a host cgroup has no names */
	struct sl_attr h;
	sl_attr_cache_lookup(c, 0, ino_of(f->mnt, SESSION_PATH), t, &h, NULL, 0);
	sl_attr_cache_names(c, 0, ino_of(f->mnt, SESSION_PATH), t, &h);
	assert_string_equal(h.names.pod, "");
	/* removed cgroup: names answer through the grace, then go with the entry */
	sl_attr_cache_on_rmdir(c, 0, id, t + 3 * SEC);
	assert_int_equal(sl_attr_cache_lookup(c, 0, id, t + 4 * SEC, &a, NULL, 0), 1);
	sl_attr_cache_names(c, 0, id, t + 4 * SEC, &a);
	assert_string_equal(a.names.pod, "cart-0");
	sl_attr_cache_lookup(c, 0, id, t + 3 * SEC + SL_ATTR_RMDIR_GRACE_NS + 1, &a, NULL, 0);
	sl_attr_cache_names(c, 0, id, t + 3 * SEC + SL_ATTR_RMDIR_GRACE_NS + 1, &a);
	assert_string_equal(a.names.pod, "");
	/* names off: nothing looked up */
	sl_attr_cache_free(c);
	cfg.names = 0;
	c = sl_attr_cache_new(&cfg, &f->m);
	sl_attr_cache_lookup(c, 0, id, t, &a, NULL, 0);
	sl_attr_cache_names(c, 0, id, t, &a);
	sl_attr_cache_get_stats(c, &s);
	assert_int_equal(s.names_lookups, 0);
	sl_attr_cache_free(c);
}

static void test_mounts_from_buffer(void **state)
{
	(void)state;
	static const char text[] =
		"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		"35 31 0:32 / /c/mem\\040ory rw,relatime shared:12 - cgroup cgroup rw,memory\n"
		"41 31 0:38 / /c/unified rw,relatime shared:5 - cgroup2 cgroup2 rw,nsdelegate\n"
		"41 31 0:38 / /c/second rw - cgroup2 cgroup2 rwXXXX";
	struct sl_cg_mounts m;
	assert_int_equal(sl_cg_mounts_parse(text, sizeof(text) - 5, "memory", &m), 0);
	assert_string_equal(m.v2, "/c/unified");
	assert_string_equal(m.v1, "/c/mem ory");
	assert_string_equal(m.v1_controller, "memory");
	assert_int_equal(m.v1_hierarchy_id, -1);
	assert_int_equal(m.v2_root_id, 0);
	/* a line cut before its super options counts for nothing */
	assert_int_equal(sl_cg_mounts_parse(text + 54, 65, "memory", &m), 0);
	assert_string_equal(m.v1, "");
	assert_int_equal(sl_cg_mounts_parse(NULL, 0, "memory", &m), -EINVAL);
	assert_int_equal(sl_cg_mounts_parse("", 0, NULL, &m), 0);
	assert_string_equal(m.v2, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mounts_hybrid, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_mounts_pure_v2, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_hit_miss, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_negative_ttl, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_rewalk_rate_limit, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_positive_ttl, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_capacity_eviction, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_hybrid_resolve, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_names, fx_setup, fx_teardown),
		cmocka_unit_test(test_rmdir_and_churn),
		cmocka_unit_test(test_defaults_and_missing_mount),
		cmocka_unit_test(test_mounts_from_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
