/* The Kata agent client: a connection (hybrid vsock or AF_VSOCK) and the
 * StatsContainer call over ttrpc, every step bounded by one deadline.
 *
 * Hybrid vsock (Firecracker, cloud-hypervisor): the VMM listens on a unix
 * socket; the host side writes "CONNECT <port>\n" and the VMM answers
 * "OK <host port>\n" once the guest's listener accepted, then the stream
 * is the guest's (kata-containers src/runtime/virtcontainers/pkg/agent/
 * protocols/client/client.go HybridVSockDialer; Firecracker
 * docs/vsock.md). The descriptor is non-blocking throughout; poll(2)
 * waits at most until the deadline. */
#include "stats/guest.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/vm_sockets.h>

struct sl_guest_conn {
	int fd;
	uint32_t next_stream; /* odd, from 1 (ttrpc client.go) */
	int broken;           /* a call timed out or the stream desynchronised */
};

int64_t sl_guest_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Wait for events on fd until deadline. 0, -ETIMEDOUT, -errno. */
static int wait_fd(int fd, short ev, int64_t deadline_ns)
{
	for (;;) {
		int64_t left = deadline_ns - sl_guest_mono_ns();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = {.fd = fd, .events = ev};
		int ms = (int)((left + 999999) / 1000000);
		int n = poll(&p, 1, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n > 0)
			return 0;
	}
}

static int write_all(int fd, const uint8_t *b, size_t len, int64_t deadline_ns)
{
	while (len) {
		ssize_t w = send(fd, b, len, MSG_NOSIGNAL);
		if (w > 0) {
			b += w;
			len -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN)
			return -errno;
		int rc = wait_fd(fd, POLLOUT, deadline_ns);
		if (rc)
			return rc;
	}
	return 0;
}

static int read_all(int fd, uint8_t *b, size_t len, int64_t deadline_ns)
{
	while (len) {
		ssize_t r = recv(fd, b, len, 0);
		if (r > 0) {
			b += r;
			len -= (size_t)r;
			continue;
		}
		if (r == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		int rc = wait_fd(fd, POLLIN, deadline_ns);
		if (rc)
			return rc;
	}
	return 0;
}

/* Connect a non-blocking socket, retrying EAGAIN (a unix listener's full
 * backlog) until the deadline. */
static int connect_until(int fd, const struct sockaddr *sa, socklen_t sl, int64_t deadline_ns)
{
	for (;;) {
		if (!connect(fd, sa, sl))
			return 0;
		int e = errno;
		if (e == EINTR)
			continue;
		if (e == EINPROGRESS) {
			int rc = wait_fd(fd, POLLOUT, deadline_ns);
			if (rc)
				return rc;
			int soerr = 0;
			socklen_t l = sizeof(soerr);
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l))
				return -errno;
			return soerr ? -soerr : 0;
		}
		if (e != EAGAIN)
			return -e;
		if (sl_guest_mono_ns() >= deadline_ns)
			return -ETIMEDOUT;
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
	}
}

/* The hybrid-vsock handshake: "CONNECT <port>\n", then one line that must
 * start with "OK" (read byte by byte: nothing after the newline belongs to
 * the handshake). */
static int handshake(int fd, uint32_t port, int64_t deadline_ns)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "CONNECT %u\n", port);
	int rc = write_all(fd, (const uint8_t *)line, (size_t)n, deadline_ns);
	if (rc)
		return rc;
	size_t i = 0;
	for (;;) {
		uint8_t c;
		rc = read_all(fd, &c, 1, deadline_ns);
		if (rc)
			return rc;
		if (c == '\n')
			break;
		if (i + 1 >= sizeof(line))
			return -EPROTO;
		line[i++] = (char)c;
	}
	line[i] = 0;
	return strncmp(line, "OK", 2) ? -EPROTO : 0;
}

struct sl_guest_conn *sl_guest_connect(const struct sl_guest_addr *a, int64_t deadline_ns, int *err)
{
	int fd = -1, rc;
	if (a->kind == SL_GADDR_HVSOCK) {
		struct sockaddr_un su = {.sun_family = AF_UNIX};
		/* the O_PATH descriptor: connect to what was checked, not to a
		 * path someone could swap afterwards */
		snprintf(su.sun_path, sizeof(su.sun_path), "/proc/self/fd/%d", a->path_fd);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			*err = -errno;
			return NULL;
		}
		rc = connect_until(fd, (struct sockaddr *)&su, sizeof(su), deadline_ns);
		if (!rc)
			rc = handshake(fd, a->port, deadline_ns);
	} else if (a->kind == SL_GADDR_VSOCK) {
		struct sockaddr_vm sv = {.svm_family = AF_VSOCK, .svm_cid = a->cid, .svm_port = a->port};
		fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			*err = -errno;
			return NULL;
		}
		rc = connect_until(fd, (struct sockaddr *)&sv, sizeof(sv), deadline_ns);
	} else {
		*err = -EINVAL;
		return NULL;
	}
	if (rc) {
		close(fd);
		*err = rc;
		return NULL;
	}
	struct sl_guest_conn *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	c->fd = fd;
	c->next_stream = 1;
	return c;
}

void sl_guest_conn_close(struct sl_guest_conn *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

int sl_guest_stats_call(struct sl_guest_conn *c, const char *container_id, int64_t deadline_ns,
			Grpc__StatsContainerResponse **resp, int *code)
{
	*resp = NULL;
	*code = 0;
	if (c->broken)
		return -EPROTO;
	Grpc__StatsContainerRequest rq = GRPC__STATS_CONTAINER_REQUEST__INIT;
	rq.container_id = (char *)container_id;
	uint8_t pb[256], *frame = NULL;
	size_t plen = grpc__stats_container_request__get_packed_size(&rq), flen;
	if (plen > sizeof(pb))
		return -EINVAL;
	grpc__stats_container_request__pack(&rq, pb);
	uint32_t sid = c->next_stream;
	c->next_stream += 2;
	int64_t left = deadline_ns - sl_guest_mono_ns();
	int rc = sl_ttrpc_request_frame(sid, "grpc.AgentService", "StatsContainer", pb, plen,
					left > 0 ? left : 1, &frame, &flen);
	if (rc)
		return rc;
	rc = write_all(c->fd, frame, flen, deadline_ns);
	free(frame);
	if (rc)
		goto broken;
	for (;;) {
		uint8_t hb[SL_TTRPC_HDR_LEN];
		struct sl_ttrpc_hdr h;
		rc = read_all(c->fd, hb, sizeof(hb), deadline_ns);
		if (rc)
			goto broken;
		if (sl_ttrpc_hdr_decode(hb, 0, &h)) {
			rc = -EPROTO;
			goto broken;
		}
		uint8_t *body = h.length ? malloc(h.length) : NULL;
		if (h.length && !body) {
			rc = -ENOMEM;
			goto broken;
		}
		rc = read_all(c->fd, body, h.length, deadline_ns);
		if (rc) {
			free(body);
			goto broken;
		}
		if (h.stream_id != sid || h.type != SL_TTRPC_RESPONSE) {
			free(body);
			/* a late answer of an earlier stream cannot come: the
			 * connection is dropped after a timeout; anything else is
			 * a protocol error */
			rc = -EPROTO;
			goto broken;
		}
		uint8_t *payload;
		size_t pl;
		rc = sl_ttrpc_response_parse(body, h.length, code, NULL, 0, &payload, &pl);
		free(body);
		if (rc)
			goto broken;
		if (*code) {
			free(payload);
			return SL_GCALL_STATUS;
		}
		if (pl) {
			*resp = grpc__stats_container_response__unpack(NULL, pl, payload);
			free(payload);
			if (!*resp) {
				rc = -EPROTO;
				goto broken;
			}
		}
		return SL_GCALL_OK;
	}
broken:
	c->broken = 1;
	return rc;
}
