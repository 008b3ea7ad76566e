/* Unit tests for src/cgroup/cgfd.c (the cgroup descriptor cache) through
 * the cached readers sl_cgstat_read_v2_cached / sl_cgstat_read_v1_cached,
 * over fixture trees in mkdtemp: an entry is reused (and reads the file's
 * current text), dropped when its directory leaves the walk, a re-created
 * directory (new inode) is read fresh, a kept directory of which nothing
 * is readable is dropped and read again, the descriptor budget is kept and
 * reads beyond it fall back to open-per-read with the same figures, FIFOs
 * and links are never read, no descriptor leaks. One test on the host's
 * real cgroupfs (root, skipped otherwise) checks the kernel behaviour the
 * cache relies on: a kept descriptor's pread at 0 regenerates the text,
 * and a removed-and-re-created cgroup is never read through the old one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cgfd.h"
#include "cgroup/cgstat.h"

static char root[128];

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/sl-cgfd-test.XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static void put(const char *dir, const char *file, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	FILE *f = fopen(p, "w"); /* truncates: the same inode, new text */
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A v2 cgroup directory root/name with memory.current = mem, cpu.stat
 * usage_usec = cpu, pids.current = pids (and a few constant files). */
static void v2dir(char *d, size_t n, const char *name, unsigned mem, unsigned cpu, unsigned pids)
{
	char t[128];
	snprintf(d, n, "%s/%s", root, name);
	mkdir(d, 0755);
	snprintf(t, sizeof(t), "%u\n", mem);
	put(d, "memory.current", t);
	put(d, "memory.stat", "anon 100\nfile 200\ninactive_file 50\n");
	put(d, "memory.max", "max\n");
	snprintf(t, sizeof(t), "usage_usec %u\nuser_usec 1\nsystem_usec 2\n", cpu);
	put(d, "cpu.stat", t);
	snprintf(t, sizeof(t), "%u\n", pids);
	put(d, "pids.current", t);
	put(d, "pids.max", "max\n");
	put(d, "io.stat", "8:0 rbytes=4096 wbytes=8192 rios=1 wios=2\n");
}

static uint64_t ino_of(const char *p)
{
	struct stat sb;
	assert_int_equal(stat(p, &sb), 0);
	return (uint64_t)sb.st_ino;
}

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	assert_non_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the DIR's own */
}

static void same_figures(const struct sl_cgstat *a, const struct sl_cgstat *b)
{
	assert_int_equal(a->version, b->version);
	assert_int_equal(a->files_read, b->files_read);
	assert_int_equal(a->malformed, b->malformed);
	assert_memory_equal(&a->cpu, &b->cpu, sizeof(a->cpu));
	assert_memory_equal(&a->mem, &b->mem, sizeof(a->mem));
	assert_memory_equal(&a->io, &b->io, sizeof(a->io));
	assert_memory_equal(&a->pids, &b->pids, sizeof(a->pids));
	assert_memory_equal(&a->spec, &b->spec, sizeof(a->spec));
	assert_memory_equal(a->psi, b->psi, sizeof(a->psi));
}

/* A second read reuses the directory and the files, and reads what the
 * files say now. */
static void entry_reused(void **s)
{
	(void)s;
	char d[256];
	struct sl_cgstat st, plain;
	struct sl_cgfd_stats cs;
	int fds0 = count_fds();
	v2dir(d, sizeof(d), "a", 1000, 77, 3);
	struct sl_cgfd_cache *c = sl_cgfd_cache_new(100);
	assert_non_null(c);

	sl_cgfd_cache_begin_pass(c);
	assert_int_equal(sl_cgstat_read_v2_cached(c, d, ino_of(d), &st), 0);
	sl_cgfd_cache_end_pass(c);
	assert_int_equal(sl_cgstat_read_v2(d, &plain), 0);
	same_figures(&st, &plain);
	assert_int_equal(st.files_read, 7);
	sl_cgfd_cache_stats(c, &cs);
	assert_int_equal(cs.entries, 1);
	assert_int_equal(cs.fds, 1 + 7); /* the directory and its readable files */
	assert_int_equal(cs.dir_hits, 0);
	assert_int_equal(cs.file_hits, 0);
	assert_int_equal(count_fds(), fds0 + 8);

	put(d, "memory.current", "2000\n");
	put(d, "pids.current", "5\n");
	put(d, "cpu.stat", "usage_usec 99\nuser_usec 1\nsystem_usec 2\n");
	sl_cgfd_cache_begin_pass(c);
	assert_int_equal(sl_cgstat_read_v2_cached(c, d, ino_of(d), &st), 0);
	sl_cgfd_cache_end_pass(c);
	sl_cgfd_cache_stats(c, &cs);
	assert_int_equal(cs.dir_hits, 1);
	assert_int_equal(cs.file_hits, 7);
	assert_int_equal(cs.fds, 8);
	assert_int_equal(st.mem.usage_bytes, 2000);
	assert_int_equal(st.pids.current, 5);
	assert_int_equal(st.cpu.usage_usec, 99);
	assert_int_equal(sl_cgstat_read_v2(d, &plain), 0);
	same_figures(&st, &plain);

	/* a file that appears later is opened (absent files are not cached) */
	put(d, "memory.peak", "4000\n");
	assert_int_equal(sl_cgstat_read_v2_cached(c, d, 0, &st), 0);
	assert_int_equal(st.mem.peak_bytes, 4000);
	assert_int_equal(st.files_read, 8);

	sl_cgfd_cache_free(c);
	assert_int_equal(count_fds(), fds0);
}

/* A cgroup the pass did not read (the walk no longer lists it) is closed
 * at the end of the pass. */
static void entry_dropped_unseen(void **s)
{
	(void)s;
	char a[256], b[256];
	struct sl_cgstat st;
	struct sl_cgfd_stats cs;
	int fds0 = count_fds();
	v2dir(a, sizeof(a), "a", 1, 1, 1);
	v2dir(b, sizeof(b), "b", 2, 2, 2);
	struct sl_cgfd_cache *c = sl_cgfd_cache_new(100);

	sl_cgfd_cache_begin_pass(c);
	assert_int_equal(sl_cgstat_read_v2_cached(c, a, 0, &st), 0);
	assert_int_equal(sl_cgstat_read_v2_cached(c, b, 0, &st), 0);
	sl_cgfd_cache_end_pass(c);
	sl_cgfd_cache_stats(c, &cs);
	assert_int_equal(cs.entries, 2);

	nftw(b, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	sl_cgfd_cache_begin_pass(c);
	assert_int_equal(sl_cgstat_read_v2_cached(c, a, 0, &st), 0);
	sl_cgfd_cache_end_pass(c);
	sl_cgfd_cache_stats(c, &cs);
	assert_int_equal(cs.entries, 1);
	assert_int_equal(cs.dropped_unseen, 1);
	assert_int_equal(cs.fds, 8);
	assert_int_equal(count_fds(), fds0 + 8);
	/* read by path now: gone */
	assert_int_equal(sl_cgstat_read_v2_cached(c, b, 0, &st), -ENOENT);
	assert_int_equal(st.files_read, 0);

	sl_cgfd_cache_begin_pass(c);
	sl_cgfd_cache_end_pass(c); /* nothing read: everything closed */
	sl_cgfd_cache_stats(c, &cs);
	assert_int_equal(cs.entries, 0);
	assert_int_equal(cs.fds, 0);
	assert_int_equal(count_fds(), fds0);
	sl_cgfd_cache_free(c);
}

/* Removed and re-created under the same name: the walk's new inode drops
 * the entry; the old descriptors (still readable on a fixture filesystem,
 * with the old figures) are never read. */
static void recreated_new_inode(void **s)
{
	(void)s;
	char d[256];
	struct sl_cgstat st;
	struct sl_cgfd_stats cs;
	int fds0 = count_fds();
	v2dir(d, sizeof(d), "a", 1000, 10, 3);
	uint64_t ino1 = ino_of(d);
	struct sl_cgfd_cache *c = sl_cgfd_cache_new(100);
	assert_int_equal(sl_cgstat_read_v2_cached(c, d, ino1, &st), 0);
	assert_int_equal(st.mem.usage_bytes, 1000);

	/* a placeholder keeps the old inode number from being reused */
	char keep[300];
	snprintf(keep, sizeof(keep), "%s/keep", root);
	assert_int_equal(rename(d, keep), 0);
	v2dir(d, sizeof(d), "a", 5000, 20, 9);
	uint64_t ino2 = ino_of(d);
	assert_true(ino2 != ino1);

	assert_int_equal(sl_cgstat_read_v2_cached(c, d, ino2, &st), 0);
	assert_int_equal(st.mem.usage_bytes, 5000);
	assert_int_equal(st.cpu.usage_usec, 20);
	assert_int_equal(st.pids.current, 9);
	sl_cgfd_cache_stats(c, &cs);
	assert_int_equal(cs.dropped_ino, 1);
	assert_int_equal(cs.entries, 1);
	assert_int_equal(cs.fds, 8);
	/* and it is kept from now on */
	assert_int_equal(sl_cgstat_read_v2_cached(c, d, ino2, &st), 0);
	sl_cgfd_cache_stats(c, &cs);
	assert_int_equal(cs.dir_hits, 1);
	sl_cgfd_cache_free(c);
	assert_int_equal(count_fds(), fds0);
}

/* Inode unknown (a hierarchy the walk does not visit), only the directory
 * kept: after a removal, nothing is readable through the old directory
 * (ENOENT, as on kernfs): the entry is dropped and the read done again on
 * the new directory. */
static void recreated_unknown_inode(void **s)
{
	(void)s;
	char d[256], keep[300];
	struct sl_cgstat st;
	struct sl_cgfd_stats cs;
	v2dir(d, sizeof(d), "a", 1000, 10, 3);
	struct sl_cgfd_cache *c = sl_cgfd_cache_new(1); /* a directory, no file */
	assert_int_equal(sl_cgstat_read_v2_cached(c, d, 0, &st), 0);
	sl_cgfd_cache_stats(c, &cs);
	assert_int_equal(cs.fds, 1);
	assert_true(cs.fallbacks > 0);

	snprintf(keep, sizeof(keep), "%s/keep2", root);
	assert_int_equal(rename(d, keep), 0);
	nftw(keep, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	v2dir(d, sizeof(d), "a", 7000, 30, 4);
	assert_int_equal(sl_cgstat_read_v2_cached(c, d, 0, &st), 0);
	assert_int_equal(st.files_read, 7);
	assert_int_equal(st.mem.usage_bytes, 7000);
	assert_int_equal(st.pids.current, 4);
	sl_cgfd_cache_stats(c, &cs);
	assert_int_equal(cs.dropped_gone, 1);
	assert_int_equal(cs.entries, 1);
	sl_cgfd_cache_free(c);
}

/* The budget is never exceeded; what does not fit is read by path with
 * the same figures; a budget of 0 keeps nothing. */
static void budget_and_fallback(void **s)
{
	(void)s;
	char d[5][256];
	struct sl_cgstat st, plain;
	struct sl_cgfd_stats cs;
	int fds0 = count_fds();
	for (int i = 0; i < 5; i++) {
		char n[8];
		snprintf(n, sizeof(n), "c%d", i);
		v2dir(d[i], sizeof(d[i]), n, 100u * (unsigned)i, (unsigned)i, (unsigned)i);
	}
	const size_t budgets[] = {0, 1, 6, 10, 21};
	for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++) {
		struct sl_cgfd_cache *c = sl_cgfd_cache_new(budgets[b]);
		for (int pass = 0; pass < 3; pass++) {
			sl_cgfd_cache_begin_pass(c);
			for (int i = 0; i < 5; i++) {
				assert_int_equal(sl_cgstat_read_v2_cached(c, d[i], ino_of(d[i]), &st), 0);
				assert_int_equal(sl_cgstat_read_v2(d[i], &plain), 0);
				same_figures(&st, &plain);
				assert_int_equal(st.mem.usage_bytes, 100u * (unsigned)i);
				sl_cgfd_cache_stats(c, &cs);
				assert_true(cs.fds <= budgets[b]);
				assert_int_equal(count_fds(), fds0 + (int)cs.fds);
			}
			sl_cgfd_cache_end_pass(c);
		}
		sl_cgfd_cache_stats(c, &cs);
		/* files only within the first half of the budget, directories
		 * up to all of it */
		assert_true(cs.fds - cs.entries <= budgets[b] / 2);
		assert_true(cs.entries <= budgets[b]);
		if (budgets[b] >= 5 + budgets[b] / 2)
			assert_int_equal(cs.entries, 5);
		if (budgets[b] == 1)
			assert_int_equal(cs.entries, 1);
		if (budgets[b] < 5 * 8)
			assert_true(cs.fallbacks > 0);
		sl_cgfd_cache_free(c);
		assert_int_equal(count_fds(), fds0);
	}
	assert_true(sl_cgfd_default_max() <= SL_CGFD_DEFAULT_MAX);
}

/* v1: cpu and cpuacct in one directory (co-mounted) share one entry; the
 * figures equal the plain reader's, pass after pass. */
static void v1_cached(void **s)
{
	(void)s;
	char mem[256], cpu[256], pids[256];
	struct sl_cgstat st, plain;
	struct sl_cgfd_stats cs;
	snprintf(mem, sizeof(mem), "%s/memory", root);
	snprintf(cpu, sizeof(cpu), "%s/cpu,cpuacct", root);
	snprintf(pids, sizeof(pids), "%s/pids", root);
	mkdir(mem, 0755), mkdir(cpu, 0755), mkdir(pids, 0755);
	put(mem, "memory.usage_in_bytes", "8192\n");
	put(mem, "memory.stat", "total_cache 4096\ntotal_rss 4096\ntotal_inactive_file 1024\n");
	put(mem, "memory.limit_in_bytes", "9223372036854771712\n");
	put(cpu, "cpuacct.usage", "5000000\n");
	put(cpu, "cpuacct.stat", "user 10\nsystem 5\n");
	put(cpu, "cpu.shares", "1024\n");
	put(pids, "pids.current", "2\n");
	struct sl_cgstat_v1_dirs dirs = {.memory = mem, .cpu = cpu, .cpuacct = cpu, .pids = pids};
	struct sl_cgfd_cache *c = sl_cgfd_cache_new(100);
	for (int pass = 0; pass < 3; pass++) {
		char t[64];
		snprintf(t, sizeof(t), "%d\n", 5000000 * (pass + 1));
		put(cpu, "cpuacct.usage", t);
		sl_cgfd_cache_begin_pass(c);
		assert_int_equal(sl_cgstat_read_v1_cached(c, &dirs, ino_of(mem), 0, 100, &st), 0);
		sl_cgfd_cache_end_pass(c);
		assert_int_equal(sl_cgstat_read_v1(&dirs, 100, &plain), 0);
		same_figures(&st, &plain);
		assert_int_equal(st.cpu.usage_usec, 5000u * (unsigned)(pass + 1));
	}
	sl_cgfd_cache_stats(c, &cs);
	assert_int_equal(cs.entries, 3);
	assert_int_equal(cs.fds, 3 + 7);
	sl_cgfd_cache_free(c);
}

/* Files at paths others control: a FIFO is neither read nor waited on, a
 * link is not followed; both leave their figures unknown. */
static void fifo_and_link(void **s)
{
	(void)s;
	char d[256], p[300], target[300];
	struct sl_cgstat st;
	v2dir(d, sizeof(d), "x", 1000, 1, 1);
	snprintf(p, sizeof(p), "%s/memory.current", d);
	unlink(p);
	assert_int_equal(mkfifo(p, 0600), 0);
	snprintf(target, sizeof(target), "%s/elsewhere", root);
	put(root, "elsewhere", "usage_usec 424242\n");
	snprintf(p, sizeof(p), "%s/cpu.stat", d);
	unlink(p);
	assert_int_equal(symlink(target, p), 0);
	struct sl_cgfd_cache *c = sl_cgfd_cache_new(100);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(sl_cgstat_read_v2_cached(c, d, 0, &st), 0);
		assert_int_equal(st.files_read, 5);
		assert_false(st.cpu.known & SL_CPU_USAGE);
		assert_int_equal(st.mem.flags & SL_MEMF_USAGE_FROM_STAT, SL_MEMF_USAGE_FROM_STAT);
		assert_int_equal(st.pids.current, 1);
	}
	assert_int_equal(sl_cgstat_read_v2(d, &st), 0);
	assert_int_equal(st.files_read, 5);
	sl_cgfd_cache_free(c);
}

/* The kernel behaviour behind the cache, on the host's cgroupfs: a kept
 * descriptor reads the current value (pread at 0 regenerates a seq file),
 * and a cgroup removed and re-created under the same name is read fresh
 * even when the caller does not know the inode. */
static void host_kernfs(void **s)
{
	(void)s;
	const char *base = NULL, *limf = NULL;
	char buf[256];
	int fd = open("/sys/fs/cgroup/cgroup.subtree_control", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0 && (buf[n] = 0, strstr(buf, "memory")))
		base = "/sys/fs/cgroup", limf = "memory.max";
	else if (access("/sys/fs/cgroup/memory/memory.usage_in_bytes", F_OK) == 0)
		base = "/sys/fs/cgroup/memory", limf = "memory.limit_in_bytes";
	if (!base || geteuid() != 0) {
		skip(); /* SKIP: no writable memory cgroup hierarchy (needs root) */
		return;
	}
	char d[256];
	snprintf(d, sizeof(d), "%s/sl-cgfd-test-%d", base, (int)getpid());
	rmdir(d);
	if (mkdir(d, 0755) != 0) {
		skip();
		return;
	}
	struct sl_cgstat st;
	struct sl_cgfd_stats cs;
	struct sl_cgfd_cache *c = sl_cgfd_cache_new(100);
	struct sl_cgstat_v1_dirs dirs = {.memory = d};
	int v2 = !strcmp(limf, "memory.max");
#define READ() (v2 ? sl_cgstat_read_v2_cached(c, d, 0, &st) \
		   : sl_cgstat_read_v1_cached(c, &dirs, 0, 0, 100, &st))
	put(d, limf, "1073741824\n");
	assert_int_equal(READ(), 0);
	assert_int_equal(st.mem.limit_bytes, 1073741824ull);
	put(d, limf, "536870912\n"); /* the kept descriptor reads the new limit */
	assert_int_equal(READ(), 0);
	assert_int_equal(st.mem.limit_bytes, 536870912ull);
	sl_cgfd_cache_stats(c, &cs);
	assert_true(cs.file_hits > 0);

	assert_int_equal(rmdir(d), 0);
	assert_int_equal(mkdir(d, 0755), 0); /* default limit: unlimited */
	assert_int_equal(READ(), 0);
	assert_true(st.mem.limit_bytes == SL_CGSTAT_UNLIMITED);
	sl_cgfd_cache_stats(c, &cs);
	assert_int_equal(cs.dropped_gone, 1);
	assert_int_equal(READ(), 0);
	assert_true(st.mem.limit_bytes == SL_CGSTAT_UNLIMITED);
#undef READ
	sl_cgfd_cache_free(c);
	assert_int_equal(rmdir(d), 0);
}

/* Whole texts at the read buffer's edges: a file read is one pread while
 * the text fits, and a text that fills the buffer is read on (4095 bytes
 * fill the first 4 KiB buffer with its NUL; 4096 and 9000 need more),
 * through a kept descriptor (second read) as through a fresh one. */
static void text_at_buffer_edges(void **s)
{
	(void)s;
	static const size_t sizes[] = {0, 1, 4094, 4095, 4096, 4097, 8191, 9000, 70000};
	struct sl_cgfd_cache *c = sl_cgfd_cache_new(64);
	char d[256];
	snprintf(d, sizeof(d), "%s/edges", root);
	assert_int_equal(mkdir(d, 0755), 0);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		char *want = malloc(n + 1);
		assert_non_null(want);
		for (size_t i = 0; i < n; i++)
			want[i] = (char)(i % 61 == 60 ? '\n' : 'a' + (char)(i % 26));
		want[n] = 0;
		put(d, "memory.stat", want);
		for (int pass = 0; pass < 2; pass++) {
			struct sl_cgfd_dir dd;
			assert_int_equal(sl_cgfd_dir_open(c, d, 0, &dd), 0);
			char *got = sl_cgfd_read(&dd, 0, "memory.stat");
			assert_non_null(got);
			assert_int_equal(strlen(got), n);
			assert_memory_equal(got, want, n);
			free(got);
			assert_int_equal(sl_cgfd_dir_close(&dd), 0);
		}
		free(want);
	}
	sl_cgfd_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(entry_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(entry_dropped_unseen, setup, teardown),
		cmocka_unit_test_setup_teardown(recreated_new_inode, setup, teardown),
		cmocka_unit_test_setup_teardown(recreated_unknown_inode, setup, teardown),
		cmocka_unit_test_setup_teardown(budget_and_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(v1_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(fifo_and_link, setup, teardown),
		cmocka_unit_test_setup_teardown(text_at_buffer_edges, setup, teardown),
		cmocka_unit_test(host_kernfs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
