/* OTLP/HTTP POST with libcurl (otlp_http.h). */
#include "export/otlp_http.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define BODY_MAX (64u << 10)

struct sl_otlp_http {
	CURL *c;
	struct curl_slist *hdr, *hdr_gz;
	char endpoint[512];
	uint64_t timeout_ms;
	int gzip;
	char ca_file[512], client_cert[512], client_key[512];
};

static int copy_path(char *dst, size_t len, const char *src)
{
	return snprintf(dst, len, "%s", src ? src : "") < (int)len ? 0 : -1;
}

int sl_otlp_http_set_tls(struct sl_otlp_http *h, const struct sl_otlp_tls *tls)
{
	return copy_path(h->ca_file, sizeof(h->ca_file), tls->ca_file) ||
			       copy_path(h->client_cert, sizeof(h->client_cert), tls->client_cert) ||
			       copy_path(h->client_key, sizeof(h->client_key), tls->client_key)
		       ? -1
		       : 0;
}

struct sl_otlp_http *sl_otlp_http_new(const char *endpoint, const char *const *headers, unsigned n,
				      uint64_t timeout_ms, int gzip)
{
	struct sl_otlp_http *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	snprintf(h->endpoint, sizeof(h->endpoint), "%s", endpoint);
	size_t el = strlen(h->endpoint);
	while (el && h->endpoint[el - 1] == '/')
		h->endpoint[--el] = 0;
	h->timeout_ms = timeout_ms;
	h->gzip = gzip;
	h->c = curl_easy_init();
	struct curl_slist *l = curl_slist_append(NULL, "Content-Type: application/x-protobuf");
	l = l ? curl_slist_append(l, "Expect:") : NULL;
	for (unsigned i = 0; l && i < n; i++)
		l = curl_slist_append(l, headers[i]);
	h->hdr = l;
	/* the same list plus Content-Encoding: gzip (a second list: the first
	 * is not shared, so appending to a copy keeps both valid) */
	struct curl_slist *g = curl_slist_append(NULL, "Content-Type: application/x-protobuf");
	g = g ? curl_slist_append(g, "Expect:") : NULL;
	g = g ? curl_slist_append(g, "Content-Encoding: gzip") : NULL;
	for (unsigned i = 0; g && i < n; i++)
		g = curl_slist_append(g, headers[i]);
	h->hdr_gz = g;
	if (!h->c || !h->hdr || !h->hdr_gz) {
		sl_otlp_http_free(h);
		return NULL;
	}
	return h;
}

void sl_otlp_http_free(struct sl_otlp_http *h)
{
	if (!h)
		return;
	if (h->c)
		curl_easy_cleanup(h->c);
	curl_slist_free_all(h->hdr);
	curl_slist_free_all(h->hdr_gz);
	free(h);
}

int sl_otlp_gzip(const uint8_t *in, size_t len, uint8_t **out, size_t *outlen)
{
	z_stream z = {0};
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	size_t cap = deflateBound(&z, (uLong)len);
	uint8_t *buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	*outlen = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}

static size_t on_body(char *p, size_t sz, size_t nm, void *arg)
{
	struct sl_otlp_reply *r = arg;
	size_t n = sz * nm, keep = n;
	if (r->body_len + keep > BODY_MAX)
		keep = BODY_MAX - r->body_len;
	if (keep) {
		uint8_t *nb = realloc(r->body, r->body_len + keep);
		if (!nb)
			return n;
		memcpy(nb + r->body_len, p, keep);
		r->body = nb;
		r->body_len += keep;
	}
	return n;
}

static size_t on_header(char *p, size_t sz, size_t nm, void *arg)
{
	struct sl_otlp_reply *r = arg;
	size_t n = sz * nm;
	if (n > 12 && !strncasecmp(p, "Retry-After:", 12)) {
		size_t vl = n - 12;
		const char *v = p + 12;
		while (vl && (*v == ' ' || *v == '\t')) {
			v++;
			vl--;
		}
		while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
			vl--;
		if (vl >= sizeof(r->retry_after))
			vl = sizeof(r->retry_after) - 1;
		memcpy(r->retry_after, v, vl);
		r->retry_after[vl] = 0;
	}
	return n;
}

int sl_otlp_http_post(struct sl_otlp_http *h, const char *path, const uint8_t *body, size_t len,
		      struct sl_otlp_reply *r)
{
	char url[600];
	uint8_t *gz = NULL;
	size_t gzlen = 0;
	memset(r, 0, sizeof(*r));
	if (h->gzip && sl_otlp_gzip(body, len, &gz, &gzlen)) {
		snprintf(r->err, sizeof(r->err), "gzip failed");
		return -1;
	}
	snprintf(url, sizeof(url), "%s%s", h->endpoint, path);
	CURL *c = h->c;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, gz ? (const char *)gz : (const char *)body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(gz ? gzlen : len));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, gz ? h->hdr_gz : h->hdr);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)h->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)h->timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (h->ca_file[0])
		curl_easy_setopt(c, CURLOPT_CAINFO, h->ca_file);
	if (h->client_cert[0]) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, h->client_cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, h->client_key);
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "sandlensd-otlp");
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	CURLcode cc = curl_easy_perform(c);
	free(gz);
	if (cc != CURLE_OK) {
		snprintf(r->err, sizeof(r->err), "%s", curl_easy_strerror(cc));
		r->status = 0;
		return -1;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	return 0;
}
