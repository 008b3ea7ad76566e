/* Loader of bench/io_floor.bpf.c: open, load, attach every program, print
 * "ready" and the program ids, wait for SIGINT/SIGTERM, detach.
 *   io_floor OBJECT */
#include <bpf/bpf.h>
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
	struct bpf_link *links[16];
	int n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OBJECT\n", argv[0]);
		return 2;
	}
	o = bpf_object__open_file(argv[1], NULL);
	if (!o || bpf_object__load(o)) {
		fprintf(stderr, "cannot load %s\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(p, o) {
		if (n == 16 || !(links[n] = bpf_program__attach(p))) {
			fprintf(stderr, "cannot attach %s\n", bpf_program__name(p));
			return 1;
		}
		n++;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	for (int i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(o);
	return 0;
}
