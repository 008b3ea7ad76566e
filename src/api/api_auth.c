/* API access control (api_auth.h). */
#include "api/api_auth.h"
#include "common/dir_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

int sl_api_caller_is_admin(const struct sl_api_caller *c)
{
	if (!c)
		return 0;
	if (c->token_ok)
		return 1;
	return c->unix_peer && (c->uid == 0 || c->in_admin_group);
}

int sl_api_caller_cap_syslog(const struct sl_api_caller *c)
{
	return c && (c->token_ok || (c->unix_peer && c->uid == 0));
}

enum sl_api_access sl_api_route_access(const char *method, const char *url)
{
	static const char tasks[] = "/api/v1/tasks";
	if (!method || !url)
		return SL_ACCESS_ADMIN;
	/* the MCP route: every caller may speak the protocol; each tool's
	 * requests go through these rules in process (api_mcp.c) */
	if (!strcmp(url, "/mcp"))
		return SL_ACCESS_PUBLIC;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return SL_ACCESS_ADMIN;
	if (!strncmp(url, tasks, sizeof(tasks) - 1) &&
	    (url[sizeof(tasks) - 1] == 0 || url[sizeof(tasks) - 1] == '/'))
		return SL_ACCESS_ADMIN;
	/* continuous profiles reveal stacks (docs/API.md "Continuous profiles") */
	if (!strncmp(url, "/api/v1/profiles", 16) && (url[16] == 0 || url[16] == '/'))
		return SL_ACCESS_ADMIN;
	if (!strcmp(url, "/api/v1/events") || !strncmp(url, "/api/v1/events/", 15))
		return SL_ACCESS_REDACTED;
	/* flight recordings hold events (docs/FLIGHT.md) */
	if (!strcmp(url, "/api/v1/flight") || !strncmp(url, "/api/v1/flight/", 15))
		return SL_ACCESS_REDACTED;
	/* AutoTracing captures: records redacted (argv, kernel stacks), their
	 * profiles (stacks) for admins (api_captures.c) */
	if (!strncmp(url, "/api/v1/captures/", 17)) {
		size_t l = strlen(url);
		if (l > 8 && !strcmp(url + l - 8, "/profile"))
			return SL_ACCESS_ADMIN;
		return SL_ACCESS_REDACTED;
	}
	if (!strcmp(url, "/api/v1/captures"))
		return SL_ACCESS_REDACTED;
	return SL_ACCESS_PUBLIC;
}

size_t sl_api_withhold_secrets(json_t *events)
{
	size_t i, n = 0;
	json_t *ev;
	json_array_foreach(events, i, ev)
	{
		if (json_is_object(ev) && json_object_get(ev, "argv")) {
			json_object_del(ev, "argv");
			json_object_set_new(ev, "argv_withheld", json_true());
			n++;
		}
	}
	return n;
}

int sl_api_bearer_matches(const char *hdr, const char *token, size_t toklen)
{
	if (!hdr || !token || toklen == 0 || strncasecmp(hdr, "Bearer ", 7))
		return 0;
	const char *p = hdr + 7;
	while (*p == ' ')
		p++;
	size_t pl = strlen(p);
	while (pl && (p[pl - 1] == ' ' || p[pl - 1] == '\t'))
		pl--;
	/* every byte of the token is looked at whatever the input holds */
	volatile unsigned char diff = (unsigned char)(pl != toklen);
	for (size_t i = 0; i < toklen; i++)
		diff |= (unsigned char)(token[i] ^ (i < pl ? p[i] : 0));
	return diff == 0;
}

int sl_api_token_stat_ok(const struct stat *st, char *err, size_t errlen)
{
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "not a regular file");
		return -EPERM;
	}
	if (st->st_uid != 0 && st->st_uid != geteuid()) { /* root, or the (non-root) agent's own user */
		snprintf(err, errlen, "owned by uid %u, not root", (unsigned)st->st_uid);
		return -EPERM;
	}
	if (st->st_mode & 077) {
		snprintf(err, errlen, "is group- or other-accessible (mode %04o); chmod 600 it",
			 (unsigned)(st->st_mode & 07777));
		return -EPERM;
	}
	if (st->st_size > SL_API_TOKEN_MAX + 2) {
		snprintf(err, errlen, "larger than %d bytes", SL_API_TOKEN_MAX + 2);
		return -EPERM;
	}
	return 0;
}

int sl_api_token_parse(const char *buf, size_t len, char *tok, size_t toksize, char *err,
		       size_t errlen)
{
	while (len && (buf[0] == ' ' || buf[0] == '\t' || buf[0] == '\n' || buf[0] == '\r')) {
		buf++;
		len--;
	}
	while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t' || buf[len - 1] == '\n' ||
		       buf[len - 1] == '\r'))
		len--;
	if (len < SL_API_TOKEN_MIN || len > SL_API_TOKEN_MAX || toksize <= len) {
		snprintf(err, errlen, "the token must be %d..%d characters (it has %zu)",
			 SL_API_TOKEN_MIN, SL_API_TOKEN_MAX, len);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] >= 0x7f) {
			snprintf(err, errlen, "the token holds a space, control or non-ASCII byte at offset %zu", i);
			return -EINVAL;
		}
	memcpy(tok, buf, len);
	tok[len] = 0;
	return (int)len;
}

static int fail(char *err, size_t errlen, const char *path, int e, const char *fmt, const char *arg)
{
	char why[300];
	snprintf(why, sizeof(why), fmt, arg);
	snprintf(err, errlen, "api.token_file: %s: %s", path, why);
	return e > 0 ? -e : e;
}

/* Creates path with a fresh token (see sl_api_token_load). */
static int generate(const char *path, char *err, size_t errlen)
{
	char dir[4096];
	struct stat st;
	if (strlen(path) >= sizeof(dir))
		return fail(err, errlen, path, ENAMETOOLONG, "%s", "path too long");
	strcpy(dir, path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return fail(err, errlen, path, EINVAL, "%s", "not an absolute path");
	if (slash == dir)
		slash[1] = 0;
	else
		*slash = 0;
	/* 0755 whatever the umask: the unix socket often shares the
	 * directory, and api.admin_group's members must enter it */
	int mk = sl_mkdir_mode(dir, 0755);
	if (mk < 0)
		return fail(err, errlen, path, -mk, "creating its directory: %s", strerror(-mk));
	if (lstat(dir, &st) != 0)
		return fail(err, errlen, path, errno, "its directory: %s", strerror(errno));
	if (!S_ISDIR(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022))
		return fail(err, errlen, path, EPERM, "%s",
			    "its directory must be a real directory owned by root and writable by root only");
	unsigned char raw[SL_API_TOKEN_GEN_BYTES];
	size_t got = 0;
	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return fail(err, errlen, path, errno ? errno : EIO, "getrandom: %s", strerror(errno));
		got += (size_t)n;
	}
	char hex[2 * SL_API_TOKEN_GEN_BYTES + 2];
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	hex[2 * sizeof(raw)] = '\n';
	hex[2 * sizeof(raw) + 1] = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == EEXIST ? 0 /* someone else made it: read theirs */
				       : fail(err, errlen, path, errno, "creating it: %s", strerror(errno));
	size_t len = strlen(hex), off = 0;
	int rc = 0;
	if (fchmod(fd, 0600) != 0)
		rc = -errno;
	while (!rc && off < len) {
		ssize_t n = write(fd, hex + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rc = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	if (!rc && fsync(fd) != 0)
		rc = -errno;
	close(fd);
	explicit_bzero(hex, sizeof(hex));
	explicit_bzero(raw, sizeof(raw));
	if (rc) {
		unlink(path);
		return fail(err, errlen, path, -rc, "writing it: %s", strerror(-rc));
	}
	return 0;
}

int sl_api_token_load(const char *path, int create, char *tok, size_t toksize, char *err,
		      size_t errlen)
{
	char why[200];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (!create)
			return 0;
		int rc = generate(path, err, errlen);
		if (rc)
			return rc;
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	}
	if (fd < 0)
		return fail(err, errlen, path, errno,
			    errno == ELOOP ? "%s: a symbolic link is not accepted" : "%s",
			    strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return fail(err, errlen, path, e, "%s", strerror(e));
	}
	if (sl_api_token_stat_ok(&st, why, sizeof(why))) {
		close(fd);
		return fail(err, errlen, path, EPERM, "%s", why);
	}
	char buf[SL_API_TOKEN_MAX + 3];
	ssize_t n = read(fd, buf, sizeof(buf));
	int e = errno;
	close(fd);
	if (n < 0)
		return fail(err, errlen, path, e, "%s", strerror(e));
	if ((size_t)n == sizeof(buf))
		return fail(err, errlen, path, EINVAL, "larger than %s bytes", "258");
	int len = sl_api_token_parse(buf, (size_t)n, tok, toksize, why, sizeof(why));
	explicit_bzero(buf, sizeof(buf));
	if (len < 0)
		return fail(err, errlen, path, EINVAL, "%s", why);
	return len;
}

int sl_api_peer_caller(int fd, gid_t admin_gid, struct sl_api_caller *c)
{
	struct ucred cr;
	socklen_t sl = sizeof(cr);
	memset(c, 0, sizeof(*c));
	c->uid = (uid_t)-1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) != 0)
		return -errno;
	c->unix_peer = 1;
	c->uid = cr.uid;
	if (admin_gid == (gid_t)-1)
		return 0;
	if (cr.gid == admin_gid) {
		c->in_admin_group = 1;
		return 0;
	}
	gid_t groups[SL_API_MAX_PEER_GROUPS];
	sl = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &sl) != 0)
		return 0; /* ERANGE: more groups than we look at; the primary one was checked */
	for (size_t i = 0; i < sl / sizeof(gid_t); i++)
		if (groups[i] == admin_gid)
			c->in_admin_group = 1;
	return 0;
}
