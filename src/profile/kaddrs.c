/* sl_kaddrs_visible (profile.h): may a caller see kernel addresses, by the
 * rules the kernel applies to /proc/kallsyms (kernel/kallsyms.c
 * kallsyms_show_value). */
#include "profile/profile.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* A small integer sysctl; 0 or -1. */
static int read_sysctl(const char *dir, const char *name, long *v)
{
	char p[512], buf[32], *end;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	*v = strtol(buf, &end, 10);
	return end == buf || (*end && *end != '\n') ? -1 : 0;
}

int sl_kaddrs_visible(const char *sysctl_dir, int caller_cap_syslog)
{
	const char *dir = sysctl_dir ? sysctl_dir : "/proc/sys/kernel";
	long kr, paranoid;
	if (read_sysctl(dir, "kptr_restrict", &kr))
		return 0;
	switch (kr) {
	case 0:
		if (caller_cap_syslog)
			return 1;
		return !read_sysctl(dir, "perf_event_paranoid", &paranoid) && paranoid <= 1;
	case 1:
		return caller_cap_syslog != 0;
	default:
		return 0;
	}
}
