/* sl-profprog: workloads with known stacks for the profiling tests
 * (tests/integration/t_prof_*.sh). Static, runs inside runc containers.
 *
 *   spin SECONDS [CPU]       busy loop in prof_spin_loop() (noinline) for
 *                            SECONDS of wall time, pinned to CPU when given
 *   sleeploop SECONDS MS     nanosleep(MS ms) in prof_sleep_loop() until
 *                            SECONDS have passed
 *   pipewait SECONDS MS      a child writes one byte to a pipe every MS ms;
 *                            the parent blocks in read() in
 *                            prof_pipe_reader() until SECONDS have passed
 *   phases SECONDS FILE      busy in prof_phase_a() until FILE exists, then
 *                            busy in prof_phase_b(); SECONDS of wall time in
 *                            all (continuous profiling: t_cprof_windows)
 *   duty SECONDS SPIN_MS PERIOD_MS  prof_spin_loop() for SPIN_MS of every
 *                            PERIOD_MS (a partly busy workload: bench/cprof-overhead.sh)
 *   syserr N                 N failing system calls of known kinds:
 *                            openat("/nonexistent") (ENOENT), close(-1)
 *                            (EBADF), then sleeps 1 s before exiting
 *
 * Every mode prints one JSON line when done: {"mode", "seconds" (wall),
 * "cpu_s" (own CPU time), "calls"}.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
}

__attribute__((noinline)) uint64_t prof_spin_loop(double seconds)
{
	volatile uint64_t acc = 0;
	double end = now_s() + seconds;
	while (now_s() < end)
		for (int i = 0; i < 100000; i++)
			acc += (uint64_t)i * 2654435761u;
	return acc;
}

/* Busy until path exists or end (monotonic s); 1 when path appeared. */
__attribute__((noinline)) int prof_phase_a(const char *path, double end)
{
	volatile uint64_t acc = 0;
	while (now_s() < end) {
		if (!access(path, F_OK))
			return 1;
		for (int i = 0; i < 200000; i++)
			acc += (uint64_t)i * 40503u;
	}
	return 0;
}

__attribute__((noinline)) uint64_t prof_phase_b(double end)
{
	volatile uint64_t acc = 0;
	while (now_s() < end)
		for (int i = 0; i < 200000; i++)
			acc += (uint64_t)i * 2246822519u;
	return acc;
}

__attribute__((noinline)) long prof_sleep_loop(double seconds, long ms)
{
	long calls = 0;
	double end = now_s() + seconds;
	while (now_s() < end) {
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
		calls++;
	}
	return calls;
}

__attribute__((noinline)) long prof_pipe_reader(int fd, double seconds)
{
	long calls = 0;
	char c;
	double end = now_s() + seconds;
	while (now_s() < end && read(fd, &c, 1) == 1)
		calls++;
	return calls;
}

static long pipewait(double seconds, long ms)
{
	int p[2];
	if (pipe(p))
		return -1;
	pid_t child = fork();
	if (child == 0) {
		close(p[0]);
		for (;;) {
			struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
			nanosleep(&ts, NULL);
			if (write(p[1], "x", 1) != 1)
				_exit(0);
		}
	}
	close(p[1]);
	long n = prof_pipe_reader(p[0], seconds);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(p[0]);
	return n;
}

__attribute__((noinline)) long prof_syscall_errors(long n)
{
	long failed = 0;
	for (long i = 0; i < n; i++) {
		if (open("/nonexistent/sl-profprog", O_RDONLY) < 0 && errno == ENOENT)
			failed++;
		if (close(-1) < 0 && errno == EBADF)
			failed++;
	}
	return failed;
}

int main(int argc, char **argv)
{
	double t0 = now_s(), secs = argc > 2 ? atof(argv[2]) : 0;
	long calls = 0;
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "spin") && (argc == 3 || argc == 4)) {
		if (argc == 4)
			pin(atoi(argv[3]));
		prof_spin_loop(secs);
	} else if (!strcmp(mode, "phases") && argc == 4) {
		double end = t0 + secs;
		calls = prof_phase_a(argv[3], end);
		prof_phase_b(end);
	} else if (!strcmp(mode, "duty") && argc == 5) {
		long spin = atol(argv[3]), period = atol(argv[4]);
		while (now_s() < t0 + secs) {
			prof_spin_loop((double)spin / 1000.0);
			struct timespec ts = {(period - spin) / 1000, ((period - spin) % 1000) * 1000000L};
			nanosleep(&ts, NULL);
			calls++;
		}
	} else if (!strcmp(mode, "sleeploop") && argc == 4) {
		calls = prof_sleep_loop(secs, atol(argv[3]));
	} else if (!strcmp(mode, "pipewait") && argc == 4) {
		calls = pipewait(secs, atol(argv[3]));
	} else if (!strcmp(mode, "syserr") && argc == 3) {
		calls = prof_syscall_errors(atol(argv[2]));
		sleep(1);
	} else {
		fprintf(stderr, "usage: sl-profprog spin S [CPU] | phases S FILE | duty S SPIN_MS PERIOD_MS | sleeploop S MS | pipewait S MS | syserr N\n");
		return 2;
	}
	printf("{\"mode\":\"%s\",\"seconds\":%.6f,\"cpu_s\":%.6f,\"calls\":%ld}\n", mode, now_s() - t0,
	       cpu_s(), calls);
	return 0;
}
