/* One OTLP/HTTP client (libcurl easy handle, connection reused): POST of a
 * protobuf body to <endpoint>/v1/logs or /v1/metrics with Content-Type
 * application/x-protobuf, optionally gzip-compressed (Content-Encoding:
 * gzip), with the configured headers and timeout. Used by the exporter
 * thread only (not thread-safe). */
#ifndef SANDLENS_EXPORT_OTLP_HTTP_H
#define SANDLENS_EXPORT_OTLP_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct sl_otlp_http;

/* What one POST got. */
struct sl_otlp_reply {
	long status;             /* HTTP status, 0 when no answer (error in err) */
	char retry_after[64];    /* Retry-After header value, "" when none */
	uint8_t *body;           /* response body (at most 64 KiB kept), malloc'd or NULL */
	size_t body_len;
	char err[256];           /* transport error (curl's message), "" when answered */
};

/* TLS material for an https endpoint (PEM files; NULL or "" = none: the
 * system's CA store, no client certificate). Peer and host name are always
 * verified. */
struct sl_otlp_tls {
	const char *ca_file;
	const char *client_cert;
	const char *client_key;
};

/* Set h's TLS material (copied). 0, or -1 when a path is too long. */
int sl_otlp_http_set_tls(struct sl_otlp_http *h, const struct sl_otlp_tls *tls);

/* headers: n "Name: value" lines. NULL on allocation failure. */
struct sl_otlp_http *sl_otlp_http_new(const char *endpoint, const char *const *headers, unsigned n,
				      uint64_t timeout_ms, int gzip);
void sl_otlp_http_free(struct sl_otlp_http *h);

/* POST body to endpoint + path ("/v1/logs"). Fills r (free r->body).
 * 0 when an answer came (any status), -1 on a transport error or when the
 * body could not be compressed (r->err). */
int sl_otlp_http_post(struct sl_otlp_http *h, const char *path, const uint8_t *body, size_t len,
		      struct sl_otlp_reply *r);

/* gzip (RFC 1952) of in into *out (malloc'd). 0 or -1. */
int sl_otlp_gzip(const uint8_t *in, size_t len, uint8_t **out, size_t *outlen);

#endif
