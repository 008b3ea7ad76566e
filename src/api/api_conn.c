/* Connection guard (api_internal.h): every open connection is tracked with
 * its peer; a per-client budget is enforced at connect and a sweeper thread
 * closes connections whose request headers do not complete in time.
 *
 * libmicrohttpd 0.9 has only an idle timeout (MHD_OPTION_CONNECTION_TIMEOUT),
 * which a client trickling one header line every few seconds never hits,
 * and a per-IP limit, useless on loopback where every local user is
 * 127.0.0.1. So the guard shuts such sockets down itself: shutdown(2) on
 * the descriptor MHD still owns makes MHD's next read see EOF and close the
 * connection through its own path. The descriptor stays valid while the
 * connection is in our list: MHD calls NOTIFY_CONNECTION/CLOSED (which
 * takes conn_mu and unlinks it) before it closes the socket. */
#include "common/thread_cpu.h"
#include "api/api_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "agent/read.h"
#include "common/log.h"

#define MOD "api"
#define SWEEP_INTERVAL_MS 250

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int sl_api_client_budget_ok(unsigned same, unsigned max, int exempt)
{
	return exempt || same < max;
}

static int is_loopback_sa(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return 0;
}

int sl_api_tcp_peer_uid(int fd, uid_t *uid)
{
	struct sockaddr_storage loc, peer;
	socklen_t ll = sizeof(loc), pl = sizeof(peer);
	if (getsockname(fd, (struct sockaddr *)&loc, &ll) || getpeername(fd, (struct sockaddr *)&peer, &pl))
		return -errno;
	if (loc.ss_family != peer.ss_family || !is_loopback_sa(&peer))
		return -EADDRNOTAVAIL;
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req;
	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = (unsigned char)peer.ss_family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	/* the peer's socket: local = its address (our peer), remote = us */
	if (peer.ss_family == AF_INET) {
		const struct sockaddr_in *p = (void *)&peer, *l = (void *)&loc;
		req.r.id.idiag_sport = p->sin_port;
		req.r.id.idiag_dport = l->sin_port;
		memcpy(req.r.id.idiag_src, &p->sin_addr, 4);
		memcpy(req.r.id.idiag_dst, &l->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *p = (void *)&peer, *l = (void *)&loc;
		req.r.id.idiag_sport = p->sin6_port;
		req.r.id.idiag_dport = l->sin6_port;
		memcpy(req.r.id.idiag_src, &p->sin6_addr, 16);
		memcpy(req.r.id.idiag_dst, &l->sin6_addr, 16);
	}
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -errno;
	struct timeval tv = {0, 200000};
	setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int rc = -ENOENT;
	if (send(nl, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
		rc = -errno;
		goto out;
	}
	union {
		char b[8192];
		struct nlmsghdr h;
	} resp;
	ssize_t n = recv(nl, resp.b, sizeof(resp.b), 0);
	if (n < 0) {
		rc = -errno;
		goto out;
	}
	for (struct nlmsghdr *h = &resp.h; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);
			rc = e->error ? e->error : -ENOENT;
			break;
		}
		if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			*uid = m->idiag_uid;
			rc = 0;
			break;
		}
	}
out:
	close(nl);
	return rc;
}

/* Same client: the same uid when known, else the same peer address. */
static int same_client(const struct conn_state *a, const struct conn_state *b)
{
	if (a->budget_uid != (uid_t)-1 || b->budget_uid != (uid_t)-1)
		return a->budget_uid == b->budget_uid;
	return !memcmp(a->addr, b->addr, sizeof(a->addr));
}

static void identify(struct sl_api *api, struct conn_state *cs)
{
	struct sl_api_listener *lis = cs->lis;
	cs->budget_uid = (uid_t)-1;
	cs->peer.uid = (uid_t)-1;
	if (cs->fd < 0)
		return;
	if (lis->is_unix) {
		if (sl_api_peer_caller(cs->fd, sl_read_config(api->a)->api.admin_gid, &cs->peer) == 0)
			cs->budget_uid = cs->peer.uid;
		return;
	}
	uid_t u;
	if (sl_api_tcp_peer_uid(cs->fd, &u) == 0) {
		cs->budget_uid = u;
		return;
	}
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	if (getpeername(cs->fd, (struct sockaddr *)&peer, &pl) == 0) {
		if (peer.ss_family == AF_INET)
			memcpy(cs->addr, &((struct sockaddr_in *)&peer)->sin_addr, 4);
		else if (peer.ss_family == AF_INET6)
			memcpy(cs->addr, &((struct sockaddr_in6 *)&peer)->sin6_addr, 16);
	}
}

void sl_api_conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode toe)
{
	/* microhttpd's threads: their CPU is the API's, not the pipeline's (pressure) */
	sl_thread_cpu_register(SL_TCPU_API);
	struct sl_api_listener *lis = cls;
	struct sl_api *api = lis->api;
	static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(10);

	if (toe != MHD_CONNECTION_NOTIFY_STARTED) {
		struct conn_state *cs = *socket_context;
		if (cs) {
			sl_api_heavy_leave(cs); /* never left queued or holding a slot */
			pthread_mutex_lock(&api->conn_mu);
			if (cs->prev)
				cs->prev->next = cs->next;
			else
				lis->conns = cs->next;
			if (cs->next)
				cs->next->prev = cs->prev;
			lis->nconns--;
			pthread_mutex_unlock(&api->conn_mu);
			free(cs);
		}
		*socket_context = NULL;
		return;
	}
	struct conn_state *cs = calloc(1, sizeof(*cs)); /* NULL: on_request's 500 */
	*socket_context = cs;
	if (!cs)
		return;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	cs->fd = ci ? (int)ci->connect_fd : -1;
	cs->lis = lis;
	identify(api, cs);
	cs->exempt = cs->budget_uid == 0;
	cs->wait_since_ns = mono_ns();

	pthread_mutex_lock(&api->conn_mu);
	unsigned same = 0;
	for (struct conn_state *o = lis->conns; o; o = o->next)
		if (!o->cut && same_client(o, cs))
			same++;
	cs->next = lis->conns;
	if (lis->conns)
		lis->conns->prev = cs;
	lis->conns = cs;
	lis->nconns++;
	int ok = sl_api_client_budget_ok(same, api->max_client,
					 cs->exempt);
	if (!ok && cs->fd >= 0) {
		cs->cut = 1;
		shutdown(cs->fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&api->conn_mu);
	if (!ok) {
		atomic_fetch_add(&sl_api_counters.cut_client_limit, 1);
		sl_log_limited(&lim, SL_LOG_WARN, MOD,
			       "%s: client uid %d has %u connections open (api.max_client_connections): refused",
			       lis->is_unix ? "unix socket" : "tcp", (int)cs->budget_uid, same);
	}
}

struct conn_state *sl_api_conn_state(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

void sl_api_conn_request_begins(struct conn_state *cs)
{
	if (!cs || cs->in_request)
		return;
	pthread_mutex_lock(&cs->lis->api->conn_mu);
	cs->in_request = 1;
	pthread_mutex_unlock(&cs->lis->api->conn_mu);
}

void sl_api_conn_request_ends(struct conn_state *cs)
{
	if (!cs)
		return;
	pthread_mutex_lock(&cs->lis->api->conn_mu);
	cs->in_request = 0;
	cs->line_seen = 0;
	cs->wait_since_ns = mono_ns();
	pthread_mutex_unlock(&cs->lis->api->conn_mu);
}

int sl_api_conn_cap_syslog(struct MHD_Connection *c)
{
	struct conn_state *cs = sl_api_conn_state(c);
	return cs && sl_api_caller_cap_syslog(&cs->caller);
}

static void *sweep(void *arg)
{
	struct sl_api *api = arg;
	static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(10);
	int64_t limit_ns = (int64_t)api->header_timeout_s * 1000000000;

	pthread_mutex_lock(&api->conn_mu);
	while (!api->sweeper_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += SWEEP_INTERVAL_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&api->conn_cv, &api->conn_mu, &ts);
		if (api->sweeper_stop)
			break;
		int64_t now = mono_ns();
		unsigned cut = 0, cut_line = 0; /* cut_line: its request line had arrived */
		for (int l = 0; l < 2; l++)
			for (struct conn_state *cs = api->lis[l].conns; cs; cs = cs->next)
				if (!cs->in_request && !cs->cut && cs->fd >= 0 &&
				    now - cs->wait_since_ns > limit_ns) {
					cs->cut = 1;
					shutdown(cs->fd, SHUT_RDWR);
					cut++;
					cut_line += cs->line_seen != 0;
				}
		if (cut) {
			atomic_fetch_add(&sl_api_counters.cut_header_timeout, cut);
			pthread_mutex_unlock(&api->conn_mu);
			/* what the sweeper knows: no request line at all, or a request
			 * line but no request handed to the agent (its headers still
			 * arriving, or microhttpd gave up on it: see its log line) */
			if (cut > cut_line)
				sl_log_limited(&lim, SL_LOG_WARN, MOD,
					       "closed %u connection(s) that sent no complete request line within %llus (api.header_timeout)",
					       cut - cut_line, (unsigned long long)api->header_timeout_s);
			if (cut_line)
				sl_log_limited(&lim, SL_LOG_WARN, MOD,
					       "closed %u connection(s) whose request line arrived but whose request did not reach the agent within %llus (api.header_timeout): headers not complete, or refused by microhttpd (see its log line)",
					       cut_line, (unsigned long long)api->header_timeout_s);
			pthread_mutex_lock(&api->conn_mu);
		}
	}
	pthread_mutex_unlock(&api->conn_mu);
	return NULL;
}

int sl_api_conn_guard_start(struct sl_api *api)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&api->conn_cv, &ca);
	pthread_condattr_destroy(&ca);
	int rc = pthread_create(&api->sweeper, NULL, sweep, api);
	if (rc) {
		pthread_cond_destroy(&api->conn_cv);
		return -rc;
	}
	api->sweeper_started = 1;
	return 0;
}

void sl_api_conn_guard_stop(struct sl_api *api)
{
	if (!api->sweeper_started)
		return;
	pthread_mutex_lock(&api->conn_mu);
	api->sweeper_stop = 1;
	pthread_cond_broadcast(&api->conn_cv);
	pthread_mutex_unlock(&api->conn_mu);
	pthread_join(api->sweeper, NULL);
	pthread_cond_destroy(&api->conn_cv);
	api->sweeper_started = 0;
}
