/* Files others control (issue 8 finding 3, docs/PROFILING.md "Files from
 * other users"): any host user can plant /tmp/perf-<pid>.map for a process
 * the agent profiles. A FIFO there used to block the symbolizer in open()
 * forever (with the lock every task shares held); a symlink to /dev/zero or
 * a huge sparse file made it read 256 MiB. Here a child process (a fork of
 * this test, so its text is this executable) is snapshotted and symbolized
 * with each of those planted; each must return promptly (a watchdog alarm
 * fails the test instead of hanging it), with the ELF frame symbolized and
 * the JIT map ignored, without reading the file into memory. A perf map
 * owned by another user is ignored too; one owned by root is used (the
 * positive control). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "profile/profile.h"

#define WATCHDOG_S 60 /* a regression hangs: fail long before the runner's timeout */
#define JIT_IP 0x1010ull /* mapped nowhere: only a perf map can name it */

static pid_t child;
static char map[64];

__attribute__((noinline)) void sl_untrusted_target_fn(void)
{
	__asm__ volatile("" ::: "memory");
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "FAIL: the symbolizer hung on a planted /tmp/perf-<pid>.map (watchdog)\n";
	if (write(2, m, sizeof(m) - 1) < 0) {
	}
	if (child > 0)
		kill(child, SIGKILL);
	unlink(map);
	_exit(1);
}

static int setup(void **state)
{
	(void)state;
	signal(SIGALRM, on_alarm);
	child = fork();
	if (child == 0) {
		for (;;)
			pause();
	}
	assert_true(child > 0);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)child);
	unlink(map);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(map);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}

static long maxrss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* Snapshot the child and symbolize [target fn, JIT_IP]; returns the two
 * frame names (leaf first) in a and b. */
static void symbolize_child(char *a, char *b, size_t len)
{
	struct sl_sym_config cfg = { .kallsyms_path = "", .no_debuginfo = 1 };
	struct sl_symbolizer *s = sl_symbolizer_new(&cfg);
	assert_non_null(s);
	alarm(WATCHDOG_S);
	assert_int_equal(sl_symbolizer_cache_pid(s, (int)child), 0);
	uint64_t ips[2] = { (uint64_t)(uintptr_t)&sl_untrusted_target_fn, JIT_IP };
	struct sl_raw_profile *rp = sl_raw_profile_new(SL_PROF_ON_CPU, 1, 2, 3);
	struct sl_raw_stack st = { .pid = (uint32_t)child, .comm = "t", .user_ips = &ips[0], .n_user = 1, .count = 1 };
	assert_int_equal(sl_raw_profile_add(rp, &st), 0);
	st.user_ips = &ips[1];
	assert_int_equal(sl_raw_profile_add(rp, &st), 0);
	struct sl_profile *p = sl_symbolize(s, rp);
	alarm(0);
	sl_raw_profile_free(rp);
	assert_non_null(p);
	assert_int_equal(p->nsamples, 2);
	snprintf(a, len, "%s", p->frames[p->samples[0].frames[0]].name);
	snprintf(b, len, "%s", p->frames[p->samples[1].frames[0]].name);
	sl_profile_free(p);
	sl_symbolizer_free(s);
}

static void write_map(const char *text)
{
	int fd = open(map, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_control_root_owned_map(void **state)
{
	(void)state;
	char a[256], b[256];
	write_map("1000 100 jit_good_fn\n");
	symbolize_child(a, b, sizeof(a));
	assert_string_equal(a, "sl_untrusted_target_fn");
	assert_string_equal(b, "jit_good_fn");
}

static void test_fifo(void **state)
{
	(void)state;
	char a[256], b[256];
	assert_int_equal(mkfifo(map, 0666), 0);
	symbolize_child(a, b, sizeof(a));
	assert_string_equal(a, "sl_untrusted_target_fn");
	assert_string_equal(b, "[unknown]");
}

static void test_symlink_dev_zero(void **state)
{
	(void)state;
	char a[256], b[256];
	assert_int_equal(symlink("/dev/zero", map), 0);
	long before = maxrss_kb();
	symbolize_child(a, b, sizeof(a));
	print_message("max RSS grew by %ld KiB\n", maxrss_kb() - before);
	assert_true(maxrss_kb() - before < 32 * 1024);
	assert_string_equal(a, "sl_untrusted_target_fn");
	assert_string_equal(b, "[unknown]");
}

static void test_huge_sparse(void **state)
{
	(void)state;
	char a[256], b[256];
	write_map("1000 100 jit_huge_fn\n");
	assert_int_equal(truncate(map, 1ll << 30), 0); /* 1 GiB, sparse */
	long before = maxrss_kb();
	symbolize_child(a, b, sizeof(a));
	print_message("max RSS grew by %ld KiB\n", maxrss_kb() - before);
	assert_true(maxrss_kb() - before < 32 * 1024);
	assert_string_equal(a, "sl_untrusted_target_fn");
	assert_string_equal(b, "[unknown]");
}

static void test_other_users_map(void **state)
{
	(void)state;
	char a[256], b[256];
	if (geteuid() != 0) {
		print_message("needs root (chown to another user); skipped\n");
		skip();
	}
	write_map("1000 100 jit_planted_fn\n");
	assert_int_equal(chown(map, 12345, 12345), 0);
	symbolize_child(a, b, sizeof(a));
	assert_string_equal(a, "sl_untrusted_target_fn");
	assert_string_equal(b, "[unknown]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_control_root_owned_map, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_dev_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge_sparse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_users_map, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
