/* sl-testprog: a static helper the integration tests run inside runc
 * containers (busybox rootfs, no libc there) and on the host. Each mode does
 * one thing the agent must see, with values the test knows in advance.
 *
 *   exit N            exit with status N (0..255)
 *   segv              write through a NULL pointer (a real SIGSEGV, si_code
 *                     SEGV_MAPERR, raised by the kernel)
 *   abort             abort(3): SIGABRT sent to itself via tgkill
 *   hog MIB           malloc MIB MiB, touch it page by page, then sleep
 *                     forever (meant to be OOM-killed by a memcg limit)
 *   sleep S           sleep S seconds (fractions allowed)
 *   storm N PROG [ARGS...]
 *                     vfork+execve PROG N times one after another, waiting
 *                     for each; sleep 1.5 s (the agent's token bucket
 *                     refills); exec PROG once more; then print
 *                     {"execs":<successful execve calls>,"pid":<own pid>,
 *                      "failed":<failed execve calls>,"seconds":<storm phase>,
 *                      "final_ns":<CLOCK_REALTIME ns just before the final exec>}
 *                     on stdout. Every exec'd child has this process as its
 *                     parent, so the (ppid, comm) key is (pid, comm of PROG).
 *   parents P C RATE PROG [ARGS...]
 *                     P parent processes one after another, each vfork+
 *                     execve'ing PROG C times (waiting for each) and then
 *                     exiting: P * C execs from P different parents (P
 *                     different (ppid, comm) keys). RATE: execs per second
 *                     overall (0 = as fast as possible). Then print
 *                     {"execs":<successful execve calls>,"failed":<failed>,
 *                      "parents":P,"seconds":<duration>} on stdout.
 *   forkbomb N MODE   N children forked (not exec'd) as fast as possible,
 *                     at most 64 alive at a time; each child exits at once:
 *                     MODE exit0 = exit(0), exit3 = exit(3), segv = a real
 *                     SIGSEGV, mix = every 10th segv, every 10th+1 exit 3,
 *                     the rest exit 0. Then sleep 1.5 s (the agent's token
 *                     buckets refill), fork one more child that dies of
 *                     SIGSEGV (counted), and print {"children":N+1,
 *                     "exit0":..,"exit3":..,"segv":..,"seconds":<bomb phase>}.
 *   memstorm FILE ANON_MIB ROUNDS DELAY
 *                     sleep DELAY seconds (a counter can attach), keep
 *                     ANON_MIB MiB of anonymous memory touched, then ROUNDS
 *                     times: read FILE from start to end in 1 MiB reads
 *                     (page cache charged to this cgroup) and map, touch
 *                     and unmap 8 MiB of anonymous memory; print
 *                     {"rounds":R,"file_bytes":B,"anon_mib":A,"seconds":S}
 *                     on stdout, then sleep forever (reclaim storm inside a
 *                     memory limit; docs/MEM.md, t_mem_reclaim)
 *   spin SECONDS      busy loop in sl_spin_busy_loop() (noinline) for SECONDS
 *                     of wall time (a stable symbol for profiling tests)
 *
 * Exit status: the mode's own, 2 on bad usage, 1 on a system call failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int usage(void)
{
	fprintf(stderr,
		"usage: sl-testprog exit N | segv | abort | hog MIB | sleep S |\n"
		"       storm N PROG [ARGS...] | parents P C RATE PROG [ARGS...] |\n"
		"       forkbomb N exit0|exit3|segv|mix | spin SECONDS |\n"
		"       memstorm FILE ANON_MIB ROUNDS DELAY\n");
	return 2;
}

static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1e7)
		return -1;
	*out = v;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static int do_segv(void)
{
	/* A volatile pointer object to a volatile int: the compiler must load
	 * the pointer and store through it, so this is a real page fault at
	 * address 0 (not removed, not replaced by a trap instruction). */
	volatile int *volatile p = NULL;
	*p = 42;
	return 1; /* not reached */
}

static int do_hog(long mib)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)mib << 20;
	volatile char *buf = malloc(len);
	if (!buf) {
		perror("sl-testprog hog: malloc");
		return 1;
	}
	for (size_t off = 0; off < len; off += (size_t)page)
		buf[off] = (char)1;
	for (;;)
		pause();
}

static void touch(volatile char *p, size_t len, long page)
{
	for (size_t off = 0; off < len; off += (size_t)page)
		p[off] = (char)1;
}

static int do_memstorm(const char *file, long anon_mib, long rounds, double delay)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t keep = (size_t)anon_mib << 20, chunk = 8u << 20;
	static char buf[1 << 20];
	unsigned long long bytes = 0;
	double t0;

	sleep_s(delay);
	t0 = now_s();
	volatile char *a = keep ? mmap(NULL, keep, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : NULL;
	if (a == MAP_FAILED) {
		perror("sl-testprog memstorm: mmap");
		return 1;
	}
	if (keep)
		touch(a, keep, page);
	for (long r = 0; r < rounds; r++) {
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		ssize_t n;
		if (fd < 0) {
			perror("sl-testprog memstorm: open");
			return 1;
		}
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			bytes += (unsigned long long)n;
		close(fd);
		volatile char *c = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED) {
			perror("sl-testprog memstorm: mmap chunk");
			return 1;
		}
		touch(c, chunk, page);
		munmap((void *)c, chunk);
	}
	printf("{\"rounds\":%ld,\"file_bytes\":%llu,\"anon_mib\":%ld,\"seconds\":%.3f}\n", rounds, bytes,
	       anon_mib, now_s() - t0);
	fflush(stdout);
	for (;;)
		pause();
}

/* One vfork+execve of argv[0]; returns 1 if the execve succeeded, 0 if it
 * failed (the child then exits 127), -1 if vfork/wait failed. */
static int run_once(char **argv)
{
	volatile int exec_failed = 0; /* shared with the vfork child */
	pid_t pid = vfork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execve(argv[0], argv, environ);
		exec_failed = 1;
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return exec_failed ? 0 : 1;
}

static int do_storm(long n, char **argv)
{
	long ok = 0, failed = 0;
	double t0 = now_s();
	for (long i = 0; i < n; i++) {
		int r = run_once(argv);
		if (r < 0) {
			perror("sl-testprog storm: vfork/waitpid");
			return 1;
		}
		if (r)
			ok++;
		else
			failed++;
	}
	double storm_s = now_s() - t0;
	sleep_s(1.5);
	struct timespec fin;
	clock_gettime(CLOCK_REALTIME, &fin);
	int r = run_once(argv);
	if (r < 0) {
		perror("sl-testprog storm: vfork/waitpid");
		return 1;
	}
	if (r)
		ok++;
	else
		failed++;
	printf("{\"execs\":%ld,\"pid\":%ld,\"failed\":%ld,\"seconds\":%.3f,\"final_ns\":%lld}\n", ok,
	       (long)getpid(), failed, storm_s, (long long)fin.tv_sec * 1000000000LL + fin.tv_nsec);
	fflush(stdout);
	return failed ? 1 : 0;
}

static int do_parents(long np, long nc, long rate, char **argv)
{
	long ok = 0, failed = 0;
	double t0 = now_s();
	for (long i = 0; i < np; i++) {
		if (rate > 0) { /* pace: parent i starts when i * nc execs are due */
			double due = t0 + (double)(i * nc) / (double)rate, t = now_s();
			if (due > t)
				sleep_s(due - t);
		}
		int fds[2];
		if (pipe(fds)) {
			perror("sl-testprog parents: pipe");
			return 1;
		}
		pid_t pid = fork();
		if (pid < 0) {
			perror("sl-testprog parents: fork");
			return 1;
		}
		if (pid == 0) {
			long cok = 0;
			close(fds[0]);
			for (long j = 0; j < nc; j++)
				cok += run_once(argv) == 1;
			ssize_t w = write(fds[1], &cok, sizeof(cok));
			_exit(w == (ssize_t)sizeof(cok) ? 0 : 1);
		}
		close(fds[1]);
		long cok = 0;
		if (read(fds[0], &cok, sizeof(cok)) != (ssize_t)sizeof(cok))
			cok = 0;
		close(fds[0]);
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		ok += cok;
		failed += nc - cok;
	}
	printf("{\"execs\":%ld,\"failed\":%ld,\"parents\":%ld,\"seconds\":%.3f}\n", ok, failed, np, now_s() - t0);
	fflush(stdout);
	return failed ? 1 : 0;
}

/* What child i of a fork bomb does in mode m: 0 exit 0, 3 exit 3, 11 segv. */
static int bomb_kind(const char *m, long i)
{
	if (!strcmp(m, "exit0"))
		return 0;
	if (!strcmp(m, "exit3"))
		return 3;
	if (!strcmp(m, "segv"))
		return 11;
	return i % 10 == 0 ? 11 : i % 10 == 1 ? 3 : 0;
}

static int do_forkbomb(long n, const char *mode)
{
	long alive = 0, cnt[3] = {0, 0, 0};
	double t0 = now_s(), secs = 0;
	for (long i = 0; i <= n; i++) {
		int k = i == n ? 11 : bomb_kind(mode, i);
		if (i == n) { /* the final crash after the pause */
			while (alive > 0) {
				if (wait(NULL) > 0)
					alive--;
				else if (errno != EINTR)
					break;
			}
			secs = now_s() - t0;
			sleep_s(1.5);
		}
		while (alive >= 64) {
			if (wait(NULL) > 0)
				alive--;
			else if (errno != EINTR)
				return 1;
		}
		pid_t pid = fork();
		if (pid < 0) {
			if (errno == EAGAIN) { /* pids.max: wait for one and retry */
				i--;
				if (alive && wait(NULL) > 0)
					alive--;
				continue;
			}
			perror("sl-testprog forkbomb: fork");
			return 1;
		}
		if (pid == 0) {
			if (k == 11) { /* not dumpable: no core file, no core helper */
				prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
				signal(SIGSEGV, SIG_DFL);
				do_segv();
			}
			_exit(k);
		}
		alive++;
		cnt[k == 0 ? 0 : k == 3 ? 1 : 2]++;
	}
	while (alive > 0) {
		if (wait(NULL) > 0)
			alive--;
		else if (errno != EINTR)
			break;
	}
	printf("{\"children\":%ld,\"exit0\":%ld,\"exit3\":%ld,\"segv\":%ld,\"seconds\":%.3f}\n", n + 1, cnt[0],
	       cnt[1], cnt[2], secs);
	fflush(stdout);
	return 0;
}

/* Busy loop with a stable, un-inlined symbol for profiling tests. */
__attribute__((noinline)) uint64_t sl_spin_busy_loop(double seconds)
{
	volatile uint64_t acc = 0;
	double end = now_s() + seconds;
	while (now_s() < end) {
		for (int i = 0; i < 100000; i++)
			acc += (uint64_t)i * 2654435761u;
	}
	return acc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	const char *mode = argv[1];
	long v;
	double s;

	if (!strcmp(mode, "exit") && argc == 3) {
		if (parse_long(argv[2], 0, 255, &v))
			return usage();
		return (int)v;
	}
	if (!strcmp(mode, "segv") && argc == 2)
		return do_segv();
	if (!strcmp(mode, "abort") && argc == 2) {
		abort();
	}
	if (!strcmp(mode, "hog") && argc == 3) {
		if (parse_long(argv[2], 1, 1L << 20, &v))
			return usage();
		return do_hog(v);
	}
	if (!strcmp(mode, "memstorm") && argc == 6) {
		long am, rounds;
		if (parse_long(argv[3], 0, 1L << 20, &am) || parse_long(argv[4], 1, 1000000L, &rounds) ||
		    parse_seconds(argv[5], &s))
			return usage();
		return do_memstorm(argv[2], am, rounds, s);
	}
	if (!strcmp(mode, "sleep") && argc == 3) {
		if (parse_seconds(argv[2], &s))
			return usage();
		sleep_s(s);
		return 0;
	}
	if (!strcmp(mode, "storm") && argc >= 4) {
		if (parse_long(argv[2], 0, 100000000L, &v))
			return usage();
		return do_storm(v, argv + 3);
	}
	if (!strcmp(mode, "parents") && argc >= 6) {
		long np, nc, rate;
		if (parse_long(argv[2], 1, 10000000L, &np) || parse_long(argv[3], 1, 100000L, &nc) ||
		    parse_long(argv[4], 0, 1000000L, &rate))
			return usage();
		return do_parents(np, nc, rate, argv + 5);
	}
	if (!strcmp(mode, "forkbomb") && argc == 4) {
		if (parse_long(argv[2], 1, 10000000L, &v) ||
		    (strcmp(argv[3], "exit0") && strcmp(argv[3], "exit3") && strcmp(argv[3], "segv") &&
		     strcmp(argv[3], "mix")))
			return usage();
		return do_forkbomb(v, argv[3]);
	}
	if (!strcmp(mode, "spin") && argc == 3) {
		if (parse_seconds(argv[2], &s))
			return usage();
		sl_spin_busy_loop(s);
		return 0;
	}
	return usage();
}
