/* Loader of bench/stall_floor.bpf.c: attaches every tp_btf program and the
 * perf_event one to a cpu-clock event per CPU with the period given (ns),
 * prints "ready", and holds them until stdin closes. */
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct bpf_object *o;
	struct bpf_program *p;
	int ncpu = libbpf_num_possible_cpus();
	char c;

	if (argc < 3)
		return 2;
	o = bpf_object__open_file(argv[1], NULL);
	if (!o || bpf_object__load(o)) {
		fprintf(stderr, "load %s failed\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(p, o) {
		if (!strcmp(bpf_program__name(p), "floor_tick")) {
			for (int cpu = 0; cpu < ncpu; cpu++) {
				struct perf_event_attr a;
				memset(&a, 0, sizeof(a));
				a.size = sizeof(a);
				a.type = PERF_TYPE_SOFTWARE;
				a.config = PERF_COUNT_SW_CPU_CLOCK;
				a.sample_period = strtoull(argv[2], NULL, 10);
				a.pinned = 1;
				int fd = (int)syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
				if (fd >= 0 && !bpf_program__attach_perf_event(p, fd))
					fprintf(stderr, "attach perf cpu %d failed\n", cpu);
			}
		} else if (!bpf_program__attach(p)) {
			fprintf(stderr, "attach %s failed\n", bpf_program__name(p));
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
