/* BPF half of src/common/log2hist.h: the log2 slot (1 us base) of a
 * duration, the same slot as sl_l2h_slot(ns, nslots) for nslots <= 34
 * (finite slots up to 2^32 us), bounded (1..32 after the range checks) so
 * the verifier sees a bounded result. Include after vmlinux.h. */
#ifndef SANDLENS_BPF_LOG2HIST_H
#define SANDLENS_BPF_LOG2HIST_H

/* Slot 0..nslots-1 of a duration of ns nanoseconds; nslots a constant in
 * 2..34. Slot k >= 1 holds (1000 * 2^(k-1), 1000 * 2^k] ns, i.e. u = ns - 1
 * >= 1000 << (k-1): the slot is the number of thresholds 1000 << j
 * (j = 0..nslots-2) that u reaches, found by a binary search over j (no
 * 64-bit division on the hot path: several times the cost of the five
 * compares on x86). */
static __always_inline __u32 sl_l2h_slot_bpf(__u64 ns, const __u32 nslots)
{
	__u64 u = ns - 1;
	__u32 c = 1; /* thresholds reached: j = 0 at least, below */

	if (ns <= 1000)
		return 0;
	if (u >= (1000ULL << (nslots - 2)))
		return nslots - 1;
	/* 1000 <= u < 1000 << 32: c ends in 1..32 */
	if (u >= (1000ULL << (c + 15)))
		c += 16;
	if (u >= (1000ULL << (c + 7)))
		c += 8;
	if (u >= (1000ULL << (c + 3)))
		c += 4;
	if (u >= (1000ULL << (c + 1)))
		c += 2;
	if (u >= (1000ULL << c))
		c += 1;
	return c;
}

#endif
