/* Internals shared by the API's source files (api.c: listeners, routing,
 * replies; api_metrics.c: /metrics). Not for use outside src/api. */
#ifndef SANDLENS_API_API_INTERNAL_H
#define SANDLENS_API_API_INTERNAL_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "api/api.h"

struct sl_api {
	struct sl_agent *a;
	struct MHD_Daemon *tcp;
	struct MHD_Daemon *unx;
	int tcp_port;
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t sock_dev;
	ino_t sock_ino;
	size_t max_body;
	atomic_uint metrics_inflight; /* /metrics responses not yet released */
};

struct reply {
	unsigned status;
	char *body; /* malloc'd */
	size_t len;
	const char *ctype;
	const char *arg; /* prefix routes: the URL after the prefix */
	int accept_gzip; /* request: its Accept-Encoding takes gzip */
	/* instead of body: a response made of up to 3 pieces that are not
	 * copied; iov_free(iov_cls) runs when microhttpd is done with them */
	struct MHD_IoVec iov[3];
	unsigned niov;
	MHD_ContentReaderFreeCallback iov_free;
	void *iov_cls;
	const char *encoding; /* Content-Encoding of the pieces, or NULL */
};

/* Make r an error answer: status, JSON body {"error":{code, message}}. */
void sl_api_reply_error(struct reply *r, unsigned status, const char *code, const char *msg);

/* GET /metrics (api_metrics.c): the agent's own families rendered now plus
 * the statistics snapshot's text by reference, identity or gzip. */
void sl_api_h_metrics(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r);

/* 1 when the request's Accept-Encoding lines, read as one list, take gzip
 * (common/gzpart.h sl_gz_accepted). */
int sl_api_accepts_gzip(struct MHD_Connection *c);

#endif
