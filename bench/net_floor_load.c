/* Loader of bench/net_floor.bpf.c for bench/net-overhead.sh: opens the
 * object given as argv[1], loads it, attaches every program, prints
 * "ready" and waits for SIGTERM/SIGINT (then detaches by exiting). */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

int main(int argc, char **argv)
{
	struct bpf_object *o;
	struct bpf_program *p;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OBJ\n", argv[0]);
		return 2;
	}
	o = bpf_object__open_file(argv[1], NULL);
	if (!o || bpf_object__load(o)) {
		fprintf(stderr, "cannot load %s\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(p, o) {
		if (!bpf_program__attach(p)) {
			fprintf(stderr, "cannot attach %s\n", bpf_program__name(p));
			return 1;
		}
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	bpf_object__close(o);
	return 0;
}
