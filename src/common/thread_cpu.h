/* CPU time of a group of threads, for self-measurement that must leave some
 * threads out: the pressure code measures the agent's CPU less its API
 * threads, so that clients' requests (which anyone local may send) cannot
 * push the agent into dropping events (docs/ARCHITECTURE.md "Pressure").
 *
 * A thread registers itself once (cheap to call on every request: a
 * thread-local flag); the sum reads each registered thread's CPU clock
 * (pthread_getcpuclockid(3), clock_gettime(2)). Threads that have exited are
 * skipped (their clock is gone). At most SL_THREAD_CPU_MAX threads a group;
 * later ones are not counted.
 */
#ifndef SANDLENS_COMMON_THREAD_CPU_H
#define SANDLENS_COMMON_THREAD_CPU_H

#include <stdint.h>

enum sl_thread_group { SL_TCPU_API = 0, SL_TCPU_NGROUPS };
#define SL_THREAD_CPU_MAX 64

/* Register the calling thread in group (once per thread; later calls are a
 * no-op). Thread-safe. */
void sl_thread_cpu_register(int group);
/* Sum of user+system CPU, in ns, of the group's registered threads that are
 * still alive. Thread-safe. */
uint64_t sl_thread_cpu_ns(int group);
/* Registered threads of the group (alive or not). */
int sl_thread_cpu_count(int group);

#endif
