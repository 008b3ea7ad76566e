/* What every sampler of sandlens does on the user-space side of its BPF
 * programs (the task samplers src/task/task_bpf.c and task_kprof.c, the
 * continuous profiler src/cprof/cprof_bpf.c): find the online CPUs, open
 * one sampling perf event per CPU, sum a per-CPU counter, read a stack of
 * a BPF_MAP_TYPE_STACK_TRACE map. */
#ifndef SANDLENS_PROFILE_SAMPLER_UTIL_H
#define SANDLENS_PROFILE_SAMPLER_UTIL_H

#include <stdint.h>

struct sl_raw_bid;

/* PERF_MAX_STACK_DEPTH (include/uapi/linux/perf_event.h: 127): the frames
 * a stack-trace map value holds in the samplers' maps. */
#define SL_STACK_DEPTH 127

/* The online CPUs from /sys/devices/system/cpu/online ("0-3,5",
 * Documentation/admin-guide/cputopology.rst) into cpus[0..max). Returns the
 * count (at most max), or -errno when the file cannot be read, -EIO when it
 * is empty, -EINVAL when it is malformed. */
int sl_online_cpus(int *cpus, int max);

/* perf_event_open(2) of one sampling event (type, config) on cpu, all
 * tasks, in frequency mode at hz samples per second, close-on-exec. Returns
 * the fd, or -1 with errno set. */
int sl_perf_open_freq(int type, uint64_t config, uint32_t hz, int cpu);

/* Sum over the possible CPUs of key's value (u64) in the per-CPU array or
 * hash map fd. 0 when fd < 0, the key is absent or memory runs out. */
uint64_t sl_bpf_percpu_sum(int fd, uint32_t key);

/* Leaf-first ips of stack id in the stack-trace map fd (value_size
 * SL_STACK_DEPTH * 8) into ips[SL_STACK_DEPTH]; returns the depth, 0 when
 * id < 0 (bpf_get_stackid()'s error) or the entry is gone. */
uint32_t sl_bpf_stack_read(int fd, int32_t id, uint64_t *ips);

/* Leaf-first frames of user stack id in a BPF_F_STACK_BUILD_ID stack-trace
 * map fd (struct bpf_stack_build_id[SL_STACK_DEPTH] values) into
 * bid[SL_STACK_DEPTH] (build-id and file offset; len 0 for a frame the
 * kernel could only give an ip for) and ips[SL_STACK_DEPTH] (that ip, else
 * 0). Returns the depth, 0 when id < 0 or the entry is gone. */
uint32_t sl_bpf_ustack_read_bid(int fd, int32_t id, struct sl_raw_bid *bid, uint64_t *ips);

#endif
