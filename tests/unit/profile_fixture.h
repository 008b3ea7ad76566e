/* A small symbolized profile built by hand for the writer tests:
 *   comm "app" pid 100:  main;work;hot_fn        30 samples
 *                        main;work               10
 *                        main;work;hot_fn;[k]__schedule  (kernel leaf) 4
 *   comm "app" pid 101:  main;work;hot_fn        6   (same stack, other pid)
 *   comm "side" pid 2, container "c0ffee": main;"op<&>"  5
 * total 55 samples; value_ns = count * 10 ms (on-CPU) or as given. */
#ifndef SL_TEST_PROFILE_FIXTURE_H
#define SL_TEST_PROFILE_FIXTURE_H

#include "profile/profile_internal.h"

#include <string.h>

static uint32_t fx_frame(struct sl_profile *p, const char *name, const char *module, uint64_t off,
			 uint32_t flags)
{
	struct sl_frame f = { .name = name, .function = name, .module = module, .module_offset = off,
			      .address = 0x400000 + off, .flags = flags, .build_id = "abcdef0123" };
	if (flags & SL_FRAME_KERNEL)
		f.build_id = NULL;
	int64_t k = sl_prof_frame(p, &f);
	return (uint32_t)k;
}

static void fx_add(struct sl_profile *p, uint32_t pid, const char *comm, const char *cid, int st,
		   const uint32_t *fr, uint32_t n, uint64_t count)
{
	struct sl_sample s = { .pid = pid, .tid = pid, .off_cpu_state = st, .count = count,
			       .value_ns = count * 10000000ull };
	strncpy(s.comm, comm, sizeof(s.comm) - 1);
	strncpy(s.container_id, cid, sizeof(s.container_id) - 1);
	sl_prof_add_sample(p, &s, fr, n);
}

static struct sl_profile *fx_profile(int kind)
{
	struct sl_profile *p = sl_prof_new(kind, 1700000000000000000ull, 5000000000ull,
					   kind == SL_PROF_ON_CPU ? 10000000ull : 0);
	uint32_t m = fx_frame(p, "main", "/bin/app", 0x1000, 0);
	uint32_t w = fx_frame(p, "work", "/bin/app", 0x2000, 0);
	uint32_t h = fx_frame(p, "hot_fn", "/bin/app", 0x3000, 0);
	uint32_t k = fx_frame(p, "__schedule", "[kernel.kallsyms]", 0xffffffff81001000ull, SL_FRAME_KERNEL);
	uint32_t o = fx_frame(p, "op<&>", "/lib/libx.so", 0x500, 0);
	int blk = kind == SL_PROF_OFF_CPU ? SL_OFFCPU_BLOCKED : SL_OFFCPU_NONE;
	int rq = kind == SL_PROF_OFF_CPU ? SL_OFFCPU_RUNQUEUE : SL_OFFCPU_NONE;
	uint32_t s1[] = { m, w, h }, s2[] = { m, w }, s3[] = { m, w, h, k }, s4[] = { m, o };
	fx_add(p, 100, "app", "", blk, s1, 3, 30);
	fx_add(p, 100, "app", "", blk, s2, 2, 10);
	fx_add(p, 100, "app", "", rq, s3, 4, 4);
	fx_add(p, 101, "app", "", blk, s1, 3, 6);
	fx_add(p, 2, "side", "c0ffee", blk, s4, 2, 5);
	return p;
}

#endif
