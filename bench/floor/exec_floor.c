/* sl-exec-floor: load and attach bench/floor/exec_floor.bpf.c (the floor
 * program of bench/exec-storm.sh), consume its ring buffer every 100 ms
 * (the programs commit without a wake-up; counting the records, as a real
 * tool's reader would drain them) until SIGINT/SIGTERM.
 * Prints "ready" on stdout once attached and, at the end, "records N".
 * Exit 1 on a load/attach error. Also stops when its parent exits
 * (PR_SET_PDEATHSIG). */
#include "exec_floor.skel.h"

#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static unsigned long long records;

static void on_sig(int sig)
{
	(void)sig;
	stop = 1;
}

static int on_rec(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	records++;
	return 0;
}

int main(void)
{
	struct exec_floor_bpf *s = exec_floor_bpf__open_and_load();
	struct ring_buffer *rb = NULL;

	if (!s || exec_floor_bpf__attach(s) ||
	    !(rb = ring_buffer__new(bpf_map__fd(s->maps.floor_events), on_rec, NULL, NULL))) {
		fprintf(stderr, "sl-exec-floor: cannot load/attach the floor programs\n");
		exec_floor_bpf__destroy(s);
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
	while (!stop) {
		ring_buffer__consume(rb);
		usleep(100 * 1000); /* EINTR on the signal: the loop ends */
	}
	ring_buffer__consume(rb);
	printf("records %llu\n", records);
	ring_buffer__free(rb);
	exec_floor_bpf__destroy(s);
	return 0;
}
