/* libcurl GET client for the CLI. */
#include "cli/cli.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

int cli_http_init(struct cli_conn *c, const char *base, const char *socket)
{
	memset(c, 0, sizeof(*c));
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -1;
	c->base = base;
	c->socket = socket && *socket ? socket : NULL;
	c->curl = curl_easy_init();
	return c->curl ? 0 : -1;
}

void cli_http_close(struct cli_conn *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	c->curl = NULL;
	curl_global_cleanup();
}

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
	struct cli_resp *r = ud;
	size_t add = sz * n;
	if (r->len + add > CLI_MAX_BODY)
		return 0; /* aborts the transfer: CURLE_WRITE_ERROR */
	char *nb = realloc(r->body, r->len + add + 1);
	if (!nb)
		return 0;
	r->body = nb;
	memcpy(r->body + r->len, p, add);
	r->len += add;
	r->body[r->len] = '\0';
	return add;
}

int cli_http_get(struct cli_conn *c, const char *path, struct cli_resp *r)
{
	CURL *h = c->curl;
	char url[4096], cerr[CURL_ERROR_SIZE] = "";

	memset(r, 0, sizeof(*r));
	if ((size_t)snprintf(url, sizeof(url), "%s%s", c->base, path) >= sizeof(url)) {
		snprintf(r->error, sizeof(r->error), "request URL too long");
		return -1;
	}
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	if (c->socket)
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "sandlens-cli");
	CURLcode rc = curl_easy_perform(h);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	if (rc != CURLE_OK) {
		snprintf(r->error, sizeof(r->error), "%s",
			 rc == CURLE_WRITE_ERROR ? "response too large"
			 : cerr[0]		 ? cerr
						 : curl_easy_strerror(rc));
		free(r->body);
		r->body = NULL;
		r->len = 0;
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	return 0;
}

void cli_resp_free(struct cli_resp *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

int cli_query_add(char *buf, size_t size, const char *k, const char *v)
{
	char *ev = curl_easy_escape(NULL, v, 0);
	if (!ev)
		return -1;
	size_t used = strlen(buf);
	int n = snprintf(buf + used, size - used, "%c%s=%s", strchr(buf, '?') ? '&' : '?', k, ev);
	curl_free(ev);
	if (n < 0 || (size_t)n >= size - used) {
		buf[used] = '\0';
		return -1;
	}
	return 0;
}
