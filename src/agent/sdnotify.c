/* sd_notify(3) without libsystemd: see sdnotify.h. */
#include "agent/sdnotify.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int sl_sd_notify(const char *state)
{
	const char *name = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	socklen_t salen;

	if (!name || !name[0])
		return 0;
	if (name[0] != '/' && name[0] != '@')
		return -EINVAL;
	size_t n = strlen(name);
	if (n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, name, n);
	if (name[0] == '@') {
		sa.sun_path[0] = '\0'; /* abstract: no NUL terminator, the length says where it ends */
		salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else {
		salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	}
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ssize_t w;
	do
		w = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	while (w < 0 && errno == EINTR);
	int e = w < 0 ? errno : 0;
	close(fd);
	return e ? -e : 1;
}

int sl_sd_notify_reloading(void)
{
	struct timespec ts;
	char msg[80];
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000);
	return sl_sd_notify(msg);
}
