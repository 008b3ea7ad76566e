/* sl-fakevmm: stands in for a sandbox's host processes in integration tests
 * (t_sandbox.sh), since no real micro-VM can run without nested
 * virtualization. What it does depends on argv[0]'s basename:
 *   cloud-hypervisor ... --vcpus N --spin S
 *       names N threads "vcpu<i>" (cloud-hypervisor's vCPU thread names,
 *       vmm/src/cpu.rs) with prctl(PR_SET_NAME), each spinning S seconds
 *       or until the process gets SIGUSR1 (whichever comes first), then
 *       they sleep; the main thread (comm "cloud-hyperviso", cut by
 *       the kernel from the exec'd file name) sleeps until killed.
 *   firecracker ... [--vcpus N] [--spin S]
 *       the same with the threads named "fc_vcpu <i>" (firecracker's,
 *       src/vmm/src/vstate/vcpu); spin 1 s by default.
 *   anything else (e.g. containerd-shim-kata-v2 -id ID): sleeps until killed.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static double spin_s = 1;
static volatile sig_atomic_t stop_spin;
static const char *vcpu_fmt = "vcpu%d";

static void on_usr1(int sig)
{
	(void)sig;
	stop_spin = 1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *vcpu(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), vcpu_fmt, (int)(long)arg);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	volatile unsigned long x = 0;
	double end = now() + spin_s;
	while (!stop_spin && now() < end)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *b = strrchr(argv[0], '/');
	b = b ? b + 1 : argv[0];
	if (!strcmp(b, "firecracker"))
		vcpu_fmt = "fc_vcpu %d";
	else if (strcmp(b, "cloud-hypervisor"))
		for (;;)
			pause();
	int n = 2;
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--vcpus"))
			n = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--spin"))
			spin_s = atof(argv[i + 1]);
	}
	if (n < 1 || n > 64)
		n = 2;
	signal(SIGUSR1, on_usr1);
	for (long i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, vcpu, (void *)i))
			return 1;
	}
	printf("vcpus up\n");
	fflush(stdout);
	for (;;)
		pause();
}
