/* BPF half of src/common/log2hist.h: the log2 slot (1 us base) of a
 * duration, the same slot as sl_l2h_slot(ns, nslots) for nslots <= 34
 * (finite slots up to 2^32 us), branch-free after the range checks so the
 * verifier sees a bounded result. Include after vmlinux.h. */
#ifndef SANDLENS_BPF_LOG2HIST_H
#define SANDLENS_BPF_LOG2HIST_H

/* Slot 0..nslots-1 of a duration of ns nanoseconds; nslots a constant in
 * 2..34. */
static __always_inline __u32 sl_l2h_slot_bpf(__u64 ns, const __u32 nslots)
{
	__u64 v = ns ? (ns - 1) / 1000 : 0;
	__u32 r = 0, s;

	if (v == 0)
		return 0;
	if (v >= (1ULL << (nslots - 2)))
		return nslots - 1;
	s = (v >= (1ULL << 16)) << 4; v >>= s; r |= s;
	s = (v >= (1 << 8)) << 3;  v >>= s; r |= s;
	s = (v >= (1 << 4)) << 2;  v >>= s; r |= s;
	s = (v >= (1 << 2)) << 1;  v >>= s; r |= s;
	r |= (v >> 1);
	return r + 1;
}

#endif
