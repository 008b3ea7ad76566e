/* Unix-socket connect failures in words (sock_diag.h). */
#include "cli/sock_diag.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int try_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		return ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	int e = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0;
	close(fd);
	return e;
}

/* The first directory on path's way that this user may not search
 * (no x permission) into dir; 0 when there is one, -1 when none. */
static int closed_dir(const char *path, char *dir, size_t size)
{
	size_t n = strlen(path);
	if (n >= size)
		return -1;
	for (size_t i = 1; i < n; i++) {
		if (path[i] != '/')
			continue;
		memcpy(dir, path, i);
		dir[i] = '\0';
		if (access(dir, X_OK) && (errno == EACCES || errno == EPERM))
			return 0;
	}
	return -1;
}

int cli_socket_diagnose(const char *path, char *buf, size_t size)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int e = try_connect(path ? path : "");
	const char *why;
	if (size)
		buf[0] = '\0';
	struct stat st;
	if (e && e != ENOENT && path && stat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		/* connect() says "refused" or "denied" for a directory or a file */
		if (size)
			snprintf(buf, size, "%s: not a socket (%s): --socket (or api.unix_socket) must name the agent's socket",
				 path, S_ISDIR(st.st_mode) ? "a directory" : S_ISREG(st.st_mode) ? "a regular file" : "another kind of file");
		return ENOTSOCK;
	}
	switch (e) {
	case 0:
		return 0;
	case ENOENT:
		why = "no such socket: the agent is not running, or its api.unix_socket names another path "
		      "(start it: systemctl start sandlensd; or give --socket PATH / --api URL)";
		break;
	case EACCES:
	case EPERM:
		if (path && path[0] == '/' && closed_dir(path, dir, sizeof(dir)) == 0) {
			if (size)
				snprintf(buf, size,
					 "%s: permission denied: this user may not enter the directory %s "
					 "(run as root, or as a member of the agent's api.admin_group; or use --api URL)",
					 path, dir);
			return e;
		}
		why = "permission denied: connecting needs write permission on the socket "
		      "(run as root, or as a member of the agent's api.admin_group; or use --api URL)";
		break;
	case ECONNREFUSED:
		why = "connection refused: nothing listens there, a stale socket left by an agent that stopped "
		      "(start the agent again: systemctl restart sandlensd)";
		break;
	case ENAMETOOLONG:
		why = "path too long for a unix socket (at most 107 bytes)";
		break;
	default:
		why = strerror(e);
		break;
	}
	if (size)
		snprintf(buf, size, "%s: %s", path ? path : "", why);
	return e;
}
