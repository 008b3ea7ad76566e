/* sl-kindprog: workloads with known stacks and known amounts for the
 * memory and lock profile tests (tests/integration/t_prof_kinds.sh).
 * Static; every mode prints "ready" and waits for SIGUSR1 before it starts
 * (so the profile task is already running), then prints one JSON line.
 *
 *   mem UNIT_KIB ROUNDS   ROUNDS times: kind_alloc_big() maps 3 x UNIT_KIB
 *                         and kind_alloc_small() 1 x UNIT_KIB of anonymous
 *                         memory (mmap, MADV_NOHUGEPAGE: one fault per
 *                         page), write every page, munmap. Prints the bytes
 *                         of each site and the process's minor faults
 *                         (getrusage ru_minflt) over the run.
 *   mutex ITERS           two threads take one pthread mutex ITERS times
 *                         each in kind_lock_hold() and hold it ~200 us.
 *   futex ITERS           two threads take a futex-based mutex (Drepper's
 *                         "mutex2") ITERS times each in kind_futex_lock();
 *                         every FUTEX_WAIT call is timed around the system
 *                         call: prints the number of waits and their ns.
 *   kmmap SECONDS         four threads mmap/touch/munmap 256 KiB in a loop
 *                         in kind_mmap_churn() (mmap_lock contention).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void wait_go(void)
{
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);
}

static long page_size;

__attribute__((noinline)) void kind_touch(volatile char *p, size_t len)
{
	for (size_t off = 0; off < len; off += (size_t)page_size)
		p[off] = 1;
}

__attribute__((noinline)) static int map_touch_unmap(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	madvise(p, len, MADV_NOHUGEPAGE);
	kind_touch(p, len);
	munmap(p, len);
	return 0;
}

__attribute__((noinline)) int kind_alloc_big(size_t unit)
{
	return map_touch_unmap(3 * unit);
}

__attribute__((noinline)) int kind_alloc_small(size_t unit)
{
	return map_touch_unmap(unit);
}

static int mode_mem(size_t unit_kib, int rounds)
{
	size_t unit = unit_kib * 1024;
	struct rusage a, b;
	wait_go();
	getrusage(RUSAGE_SELF, &a);
	for (int r = 0; r < rounds; r++)
		if (kind_alloc_big(unit) || kind_alloc_small(unit))
			return 1;
	getrusage(RUSAGE_SELF, &b);
	printf("{\"mode\":\"mem\",\"big_bytes\":%zu,\"small_bytes\":%zu,\"mmaps\":%d,\"minflt\":%ld,\"page_size\":%ld}\n",
	       3 * unit * (size_t)rounds, unit * (size_t)rounds, 2 * rounds, b.ru_minflt - a.ru_minflt, page_size);
	return 0;
}

/* ---- pthread mutex ---- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int iters;
static volatile uint64_t shared_counter;

static void spin_us(unsigned us)
{
	uint64_t end = now_ns() + us * 1000ull;
	while (now_ns() < end)
		;
}

/* glibc (Debian 12) is built without frame pointers: a frame-pointer
 * unwind from inside pthread_mutex_lock/__lll_lock_wait skips the frame
 * that called into libc. kind_mutex_take() is that frame, so the named
 * function that locks, kind_lock_hold(), is in the stack. */
__attribute__((noinline)) void kind_mutex_take(void)
{
	pthread_mutex_lock(&mu);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void kind_lock_hold(void)
{
	kind_mutex_take();
	shared_counter++;
	spin_us(200);
	pthread_mutex_unlock(&mu);
}

static void *mutex_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < iters; i++) {
		kind_lock_hold();
		spin_us(20);
	}
	return NULL;
}

/* ---- futex mutex (Drepper, "Futexes Are Tricky", mutex2) ---- */

static _Atomic int fx; /* 0 free, 1 locked, 2 locked with waiters */
static _Atomic uint64_t fx_waits, fx_wait_ns;

static int cmpxchg(_Atomic int *p, int old, int new)
{
	atomic_compare_exchange_strong(p, &old, new);
	return old;
}

/* FUTEX_WAIT_PRIVATE by an inline system call: the wait's user ip is in
 * kind_futex_lock() itself (libc's syscall() has no frame pointer, which
 * would hide its caller from a frame-pointer unwind). */
static inline __attribute__((always_inline)) void futex_wait_here(_Atomic int *addr, int val)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = 0;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_futex), "D"(addr), "S"((long)FUTEX_WAIT_PRIVATE), "d"((long)val), "r"(r10)
			 : "rcx", "r11", "memory");
	(void)ret;
#else
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
#endif
}

__attribute__((noinline)) void kind_futex_lock(void)
{
	int c = cmpxchg(&fx, 0, 1);
	if (!c)
		return;
	if (c != 2)
		c = atomic_exchange(&fx, 2);
	while (c) {
		uint64_t t0 = now_ns();
		futex_wait_here(&fx, 2);
		uint64_t t1 = now_ns();
		atomic_fetch_add(&fx_waits, 1);
		atomic_fetch_add(&fx_wait_ns, t1 - t0);
		c = atomic_exchange(&fx, 2);
	}
}

static void futex_unlock(void)
{
	if (atomic_fetch_sub(&fx, 1) != 1) {
		atomic_store(&fx, 0);
		syscall(SYS_futex, &fx, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

static void *futex_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < iters; i++) {
		kind_futex_lock();
		shared_counter++;
		spin_us(200);
		futex_unlock();
		spin_us(20);
	}
	return NULL;
}

/* ---- mmap_lock churn ---- */

static uint64_t churn_end;

/* One more named frame between kind_mmap_churn() and libc (see
 * kind_mutex_take()). */
__attribute__((noinline)) void kind_map_once(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	kind_touch(p, len);
	munmap(p, len);
}

__attribute__((noinline)) void kind_mmap_churn(void)
{
	while (now_ns() < churn_end)
		kind_map_once(256 * 1024);
}

static void *churn_worker(void *arg)
{
	(void)arg;
	kind_mmap_churn();
	return NULL;
}

static int run_threads(int n, void *(*fn)(void *))
{
	pthread_t t[8];
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, NULL))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	page_size = sysconf(_SC_PAGESIZE);
	if (argc == 4 && !strcmp(argv[1], "mem"))
		return mode_mem((size_t)atol(argv[2]), atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "mutex")) {
		iters = atoi(argv[2]);
		wait_go();
		uint64_t t0 = now_ns();
		if (run_threads(2, mutex_worker))
			return 1;
		printf("{\"mode\":\"mutex\",\"locks\":%llu,\"seconds\":%.3f}\n", (unsigned long long)shared_counter,
		       (double)(now_ns() - t0) / 1e9);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "futex")) {
		iters = atoi(argv[2]);
		wait_go();
		if (run_threads(2, futex_worker))
			return 1;
		printf("{\"mode\":\"futex\",\"locks\":%llu,\"waits\":%llu,\"wait_ns\":%llu}\n",
		       (unsigned long long)shared_counter, (unsigned long long)fx_waits,
		       (unsigned long long)fx_wait_ns);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "kmmap")) {
		wait_go();
		churn_end = now_ns() + (uint64_t)(atof(argv[2]) * 1e9);
		if (run_threads(4, churn_worker))
			return 1;
		printf("{\"mode\":\"kmmap\"}\n");
		return 0;
	}
	fprintf(stderr, "usage: sl-kindprog mem UNIT_KIB ROUNDS | mutex ITERS | futex ITERS | kmmap SECONDS\n");
	return 2;
}
