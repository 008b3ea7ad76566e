/* Peer checks before a token is sent (peer_check.h). */
#include "cli/peer_check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int cli_socket_peer_uid(const char *path, uid_t *uid)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	if (!path || strlen(path) >= sizeof(sa.sun_path))
		return -EINVAL;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int rc = 0;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl))
		rc = -errno;
	else
		*uid = cr.uid;
	close(fd);
	return rc;
}

/* host and port of url; 1 when host is a loopback name or address. */
static int loopback_port(const char *url, unsigned *port)
{
	const char *h = strstr(url, "://");
	char host[256];
	size_t n;
	h = h ? h + 3 : url;
	if (*h == '[') {
		const char *e = strchr(h, ']');
		if (!e || (size_t)(e - h - 1) >= sizeof(host))
			return 0;
		n = (size_t)(e - h - 1);
		memcpy(host, h + 1, n);
		host[n] = 0;
		h = e + 1;
	} else {
		n = strcspn(h, ":/");
		if (n >= sizeof(host))
			return 0;
		memcpy(host, h, n);
		host[n] = 0;
		h += n;
	}
	*port = 80;
	if (*h == ':') {
		char *end;
		unsigned long p = strtoul(h + 1, &end, 10);
		if (end == h + 1 || p == 0 || p > 65535)
			return 0;
		*port = (unsigned)p;
	}
	return !strcmp(host, "127.0.0.1") || !strcmp(host, "localhost") || !strcmp(host, "::1") ||
	       !strcmp(host, "localhost.localdomain") || !strcmp(host, "ip6-localhost");
}

/* Listener owners on port in one /proc/net/tcp{,6} file: *found set when
 * one is seen, *uid the owner, -EPERM on two owners. */
static int scan(const char *path, int v6, unsigned port, int *found, uid_t *uid)
{
	FILE *f = fopen(path, "re");
	char line[512];
	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f)) { /* header */
		fclose(f);
		return 0;
	}
	int rc = 0;
	while (fgets(line, sizeof(line), f)) {
		char local[64];
		unsigned lport, st;
		unsigned long u;
		/* sl local_address rem_address st tx:rx tr:when retrnsmt uid */
		if (sscanf(line, " %*s %63[0-9A-Fa-f]:%x %*s %x %*s %*s %*s %lu", local, &lport, &st, &u) != 4)
			continue;
		if (st != 0x0A || lport != port)
			continue;
		int ok;
		if (!v6)
			ok = !strcmp(local, "0100007F") || !strcmp(local, "00000000");
		else
			ok = !strcmp(local, "00000000000000000000000001000000") ||
			     !strcmp(local, "00000000000000000000000000000000") ||
			     !strcmp(local, "0000000000000000FFFF00000100007F");
		if (!ok)
			continue;
		if (*found && *uid != (uid_t)u)
			rc = -EPERM;
		*found = 1;
		*uid = (uid_t)u;
	}
	fclose(f);
	return rc;
}

int cli_tcp_listener_uid(const char *proc_root, const char *url, uid_t *uid)
{
	unsigned port;
	char p[512];
	int found = 0, rc;
	if (!url || !loopback_port(url, &port))
		return -EINVAL;
	snprintf(p, sizeof(p), "%s/net/tcp", proc_root);
	if ((rc = scan(p, 0, port, &found, uid)))
		return rc;
	snprintf(p, sizeof(p), "%s/net/tcp6", proc_root);
	if ((rc = scan(p, 1, port, &found, uid)))
		return rc;
	return found ? 0 : -ENOENT;
}
