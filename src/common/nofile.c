/* Raising the open-file soft limit (see nofile.h). */
#include "common/nofile.h"

#include <sys/resource.h>

uint64_t sl_nofile_raise(uint64_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rlim_t to = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? (rlim_t)want : rl.rlim_max;
		if (to > rl.rlim_cur) {
			struct rlimit nr = {.rlim_cur = to, .rlim_max = rl.rlim_max};
			if (setrlimit(RLIMIT_NOFILE, &nr) == 0)
				rl.rlim_cur = to;
		}
	}
	return rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
}
