/* The agent's open-file limit (RLIMIT_NOFILE). */
#ifndef SANDLENS_COMMON_NOFILE_H
#define SANDLENS_COMMON_NOFILE_H

#include <stdint.h>

/* Raise the soft RLIMIT_NOFILE to min(want, hard limit) when it is lower
 * (setrlimit(2); an unprivileged process may raise its soft limit up to
 * the hard one). Never lowers it. The statistics collector keeps cgroup
 * descriptors open within half the soft limit (cgroup/cgfd.h); the
 * default soft limit of 1,024 would cache only ~15 containers. want is
 * bounded by the caller rather than taken as the hard limit (often 2^20 or
 * more), so that a child process inheriting it and using select(2) is not
 * handed an absurd limit. Returns the soft limit in force afterwards, or
 * 0 when getrlimit fails. */
uint64_t sl_nofile_raise(uint64_t want);

#endif
