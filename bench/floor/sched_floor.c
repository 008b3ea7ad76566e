/* sl-sched-floor: load and attach bench/floor/sched_floor.bpf.c (the floor
 * program of bench/sched-overhead.sh) and hold it until SIGINT/SIGTERM.
 * Prints "ready" on stdout once attached; exit 1 on a load/attach error.
 * Also stops when its parent exits (PR_SET_PDEATHSIG). */
#include "sched_floor.skel.h"

#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_sig(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct sched_floor_bpf *s = sched_floor_bpf__open_and_load();

	if (!s || sched_floor_bpf__attach(s)) {
		fprintf(stderr, "sl-sched-floor: cannot load/attach the floor programs\n");
		sched_floor_bpf__destroy(s);
		return 1;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	/* a benchmark killed before its cleanup does not leave us attached */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		stop = 1;
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	sched_floor_bpf__destroy(s);
	return 0;
}
