/* Sampler helpers (sampler_util.h). */
#include "profile/sampler_util.h"
#include "profile/profile.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int sl_online_cpus(int *cpus, int max)
{
	char buf[4096];
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC), n = 0;
	if (fd < 0)
		return -errno;
	ssize_t len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	buf[len] = 0;
	for (char *p = buf; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			return -EINVAL;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				return -EINVAL;
		}
		for (long c = a; c <= b && n < max; c++)
			cpus[n++] = (int)c;
		p = *end == ',' ? end + 1 : end;
	}
	return n;
}

int sl_perf_open_freq(int type, uint64_t config, uint32_t hz, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = (uint32_t)type,
		.config = config,
		.sample_freq = hz,
		.freq = 1,
	};
	return (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

uint64_t sl_bpf_percpu_sum(int fd, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0;
	if (fd < 0 || ncpu <= 0)
		return 0;
	uint64_t *v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return 0;
	if (bpf_map_lookup_elem(fd, &key, v) == 0)
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

uint32_t sl_bpf_stack_read(int fd, int32_t id, uint64_t *ips)
{
	uint32_t n = 0;
	if (id < 0)
		return 0;
	memset(ips, 0, SL_STACK_DEPTH * sizeof(*ips));
	if (bpf_map_lookup_elem(fd, &id, ips))
		return 0;
	while (n < SL_STACK_DEPTH && ips[n])
		n++;
	return n;
}

uint32_t sl_bpf_ustack_read_bid(int fd, int32_t id, struct sl_raw_bid *bid, uint64_t *ips)
{
	struct bpf_stack_build_id f[SL_STACK_DEPTH];
	uint32_t n = 0;
	if (id < 0)
		return 0;
	memset(f, 0, sizeof(f));
	if (bpf_map_lookup_elem(fd, &id, f))
		return 0;
	for (; n < SL_STACK_DEPTH && f[n].status != BPF_STACK_BUILD_ID_EMPTY; n++) {
		memset(&bid[n], 0, sizeof(bid[n]));
		ips[n] = 0;
		if (f[n].status == BPF_STACK_BUILD_ID_VALID) {
			_Static_assert(sizeof(f[n].build_id) == SL_BUILD_ID_MAX, "build-id size");
			bid[n].len = SL_BUILD_ID_MAX;
			memcpy(bid[n].id, f[n].build_id, SL_BUILD_ID_MAX);
			bid[n].offset = f[n].offset;
		} else {
			ips[n] = f[n].ip;
			if (!ips[n])
				break;
		}
	}
	return n;
}
