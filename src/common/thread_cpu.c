#include "common/thread_cpu.h"

#include <pthread.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static clockid_t clocks[SL_TCPU_NGROUPS][SL_THREAD_CPU_MAX];
static int nclocks[SL_TCPU_NGROUPS];
static _Thread_local int registered[SL_TCPU_NGROUPS];

void sl_thread_cpu_register(int group)
{
	if (group < 0 || group >= SL_TCPU_NGROUPS || registered[group])
		return;
	registered[group] = 1;
	clockid_t cid;
	if (pthread_getcpuclockid(pthread_self(), &cid))
		return;
	pthread_mutex_lock(&mu);
	if (nclocks[group] < SL_THREAD_CPU_MAX)
		clocks[group][nclocks[group]++] = cid;
	pthread_mutex_unlock(&mu);
}

uint64_t sl_thread_cpu_ns(int group)
{
	if (group < 0 || group >= SL_TCPU_NGROUPS)
		return 0;
	uint64_t sum = 0;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nclocks[group]; i++) {
		struct timespec ts;
		if (clock_gettime(clocks[group][i], &ts) == 0)
			sum += (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	pthread_mutex_unlock(&mu);
	return sum;
}

int sl_thread_cpu_count(int group)
{
	if (group < 0 || group >= SL_TCPU_NGROUPS)
		return 0;
	pthread_mutex_lock(&mu);
	int n = nclocks[group];
	pthread_mutex_unlock(&mu);
	return n;
}
