/* The CLI's one HTTP layer (cli.h): libcurl requests, buffered or streamed
 * line by line, and the error reports every command shares. */
#include "cli/cli.h"
#include "cli/peer_check.h"
#include "cli/sock_diag.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

const char *cli_token_file;

int cli_take_token_option(int *argc, char **argv)
{
	int o = 1;
	for (int i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--token-file")) {
			if (i + 1 >= *argc)
				return -1;
			cli_token_file = argv[++i];
		} else if (!strncmp(argv[i], "--token-file=", 13)) {
			cli_token_file = argv[i] + 13;
		} else {
			argv[o++] = argv[i];
		}
	}
	argv[o] = NULL;
	*argc = o;
	return 0;
}

int cli_read_token(const char *path, char *tok, size_t size)
{
	char buf[260];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 258) {
		close(fd);
		return -EINVAL;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	size_t b = 0, e = (size_t)n;
	while (b < e && strchr(" \t\r\n", buf[b]))
		b++;
	while (e > b && strchr(" \t\r\n", buf[e - 1]))
		e--;
	if (e - b < 16 || e - b > 256 || e - b >= size)
		return -EINVAL;
	for (size_t i = b; i < e; i++)
		if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] >= 0x7f)
			return -EINVAL;
	memcpy(tok, buf + b, e - b);
	tok[e - b] = 0;
	memset(buf, 0, sizeof(buf));
	return (int)(e - b);
}

int cli_http_init(struct cli_conn *c, const char *base, const char *socket)
{
	memset(c, 0, sizeof(*c));
	const char *tf = cli_token_file ? cli_token_file : getenv("SANDLENS_TOKEN_FILE");
	c->auth_explicit = tf && *tf;
	if (!tf || !*tf)
		tf = CLI_DEFAULT_TOKEN_FILE;
	char tok[260];
	int tl = cli_read_token(tf, tok, sizeof(tok));
	if (tl > 0) {
		snprintf(c->auth, sizeof(c->auth), "Authorization: Bearer %s", tok);
		memset(tok, 0, sizeof(tok));
	} else if (cli_token_file) {
		fprintf(stderr, "sandlens: --token-file %s: %s\n", cli_token_file,
			tl == -EINVAL ? "not a regular file holding one token of 16..256 printable characters"
				      : strerror(-tl));
		return -2;
	}
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

/* 1 when c's token may be sent to the peer, checked once a connection:
 *   - a unix socket: served by root or by us (SO_PEERCRED), whatever the
 *     token's origin (a socket planted while the agent was down is not);
 *   - TCP, a token asked for: as asked;
 *   - TCP, the default token file found unasked: only to a loopback port
 *     whose listener is root's or ours (/proc/net/tcp{,6}): anyone can bind
 *     127.0.0.1:9753 while the agent is down and collect it.
 * Otherwise the request goes without it (a reader's answers), and why is
 * said once on stderr. */
static int auth_may_go(struct cli_conn *c)
{
	uid_t u = (uid_t)-1, me = geteuid();
	int rc;
	if (c->auth_state)
		return c->auth_state > 0;
	c->auth_state = 1;
	if (c->socket) {
		rc = cli_socket_peer_uid(c->socket, &u);
		if (rc || (u != 0 && u != me)) {
			c->auth_state = -1;
			/* a socket that cannot be connected to at all: the request
			 * fails too, and says why (cli_socket_diagnose) */
			if (rc == -ENOENT || rc == -EACCES || rc == -EPERM || rc == -ECONNREFUSED)
				;
			else if (rc)
				fprintf(stderr, "sandlens: not sending the API token: cannot check who serves %s: %s\n",
					c->socket, strerror(-rc));
			else
				fprintf(stderr, "sandlens: not sending the API token: %s is served by uid %u, not root\n",
					c->socket, (unsigned)u);
		}
	} else if (!c->auth_explicit) {
		rc = cli_tcp_listener_uid("/proc", c->base, &u);
		if (rc == -ENOENT) {
			/* nothing listens: the request fails and says so; a word
			 * on the token (and --token-file) would only mislead */
			c->auth_state = -1;
		} else if (rc || (u != 0 && u != me)) {
			c->auth_state = -1;
			fprintf(stderr,
				"sandlens: not sending the token of %s to %s: %s (give --token-file to send it)\n",
				CLI_DEFAULT_TOKEN_FILE, c->base,
				rc == -EINVAL ? "not a loopback address, its listener cannot be checked"
				: rc	      ? "listeners of different users share the port"
						: "its listener is not root's");
		}
	}
	return c->auth_state > 0;
}

/* 1 when an agent accepts connections on the unix socket at path (a stale
 * socket left by a killed agent refuses them: then TCP is used instead). */
static int socket_answers(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		return 0;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

int cli_api_resolve(const char **api, const char **socket, char *base, size_t size)
{
	if (!*api)
		*api = getenv("SANDLENS_API");
	if (!*socket)
		*socket = getenv("SANDLENS_SOCKET");
	if ((!*api || !**api) && (!*socket || !**socket) && access(CLI_DEFAULT_SOCKET, R_OK | W_OK) == 0 &&
	    socket_answers(CLI_DEFAULT_SOCKET))
		*socket = CLI_DEFAULT_SOCKET; /* the agent's default socket, when we may use it */
	if (!*api || !**api)
		*api = CLI_DEFAULT_API;
	size_t bl = strlen(*api);
	while (bl && (*api)[bl - 1] == '/')
		bl--;
	if (bl == 0 || bl >= size)
		return -1;
	if (!strstr(*api, "://"))
		return -2;
	memcpy(base, *api, bl);
	base[bl] = '\0';
	return 0;
}

/* One transfer: where the reply body goes. */
struct xfer {
	CURL *h;
	struct cli_resp *r;                  /* status; the buffered body */
	void (*on_line)(char *line, void *ctx); /* NULL: buffer every body */
	void *ctx;
	volatile sig_atomic_t *stop;
	char *line;                          /* partial line of a streamed body */
	size_t line_len;
	int too_large;                       /* the buffered body hit its bound */
	const char *hdr;                     /* one more request header, or NULL */
	long idle_s;                         /* > 0: no total timeout; abort after this long without a byte */
};

/* Appends to the buffered body; 0 (which aborts the transfer with
 * CURLE_WRITE_ERROR) past CLI_MAX_BODY or when out of memory. */
static size_t buffer(struct xfer *x, const char *p, size_t add)
{
	struct cli_resp *r = x->r;
	char *nb = r->len + add > CLI_MAX_BODY ? NULL : realloc(r->body, r->len + add + 1);
	if (!nb) {
		x->too_large = 1;
		return 0;
	}
	r->body = nb;
	memcpy(r->body + r->len, p, add);
	r->len += add;
	r->body[r->len] = '\0';
	return add;
}

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t add = sz * n;
	if (!x->on_line)
		return buffer(x, p, add);
	if (!x->r->status)
		curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &x->r->status);
	if (x->r->status / 100 != 2)
		return buffer(x, p, add);
	char *nb = realloc(x->line, x->line_len + add + 1);
	if (!nb)
		return 0;
	x->line = nb;
	memcpy(x->line + x->line_len, p, add);
	x->line_len += add;
	x->line[x->line_len] = '\0';
	char *nl;
	while ((nl = memchr(x->line, '\n', x->line_len))) {
		*nl = '\0';
		x->on_line(x->line, x->ctx);
		size_t used = (size_t)(nl - x->line) + 1;
		memmove(x->line, nl + 1, x->line_len - used);
		x->line_len -= used;
		x->line[x->line_len] = '\0';
	}
	return add;
}

static int on_xfer(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)a, (void)b, (void)c, (void)d;
	struct xfer *x = ud;
	return *x->stop ? 1 : 0; /* non-zero aborts: CURLE_ABORTED_BY_CALLBACK */
}

/* Runs one request with x's body handling; sets x->r->status (0 when no
 * reply began) and, on failure, x->r->error. Returns 0, -1 or
 * CLI_HTTP_STOPPED. */
static int perform(struct cli_conn *c, const char *method, const char *path, const char *body,
		   long timeout_s, struct xfer *x)
{
	CURL *h = c->curl;
	char url[4096], cerr[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL;

	memset(x->r, 0, sizeof(*x->r));
	if ((size_t)snprintf(url, sizeof(url), "%s%s", c->base, path) >= sizeof(url)) {
		snprintf(x->r->error, sizeof(x->r->error), "request URL too long");
		return -1;
	}
	x->h = h;
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	if (c->socket)
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, x->idle_s > 0 ? 0L : timeout_s > 0 ? timeout_s : 30L);
	if (x->idle_s > 0) {
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, x->idle_s);
	}
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "sandlens-cli");
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (c->auth[0] && auth_may_go(c))
		hdrs = curl_slist_append(hdrs, c->auth);
	if (x->hdr)
		hdrs = curl_slist_append(hdrs, x->hdr);
	if (body) {
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		hdrs = curl_slist_append(hdrs, "Expect:");
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	if (hdrs)
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	if (x->stop) {
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_xfer);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
	}
	CURLcode rc = curl_easy_perform(h);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	free(x->line);
	x->line = NULL;
	if (!x->r->status)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &x->r->status);
	if (rc == CURLE_OK)
		return 0;
	char why[400];
	if (c->socket && rc == CURLE_COULDNT_CONNECT && !x->r->status &&
	    (x->r->sock_errno = cli_socket_diagnose(c->socket, why, sizeof(why))) > 0) {
		snprintf(x->r->error, sizeof(x->r->error), "unix socket %s", why);
		return -1;
	}
	snprintf(x->r->error, sizeof(x->r->error), "%s",
		 x->too_large ? "response too large" : cerr[0] ? cerr : curl_easy_strerror(rc));
	return rc == CURLE_ABORTED_BY_CALLBACK ? CLI_HTTP_STOPPED : -1;
}

int cli_http_request(struct cli_conn *c, const char *method, const char *path, const char *body,
		     long timeout_s, struct cli_resp *r)
{
	struct xfer x = {.r = r};
	if (perform(c, method, path, body, timeout_s, &x) == 0)
		return 0;
	cli_resp_free(r);
	r->status = 0;
	return -1;
}

int cli_http_get(struct cli_conn *c, const char *path, struct cli_resp *r)
{
	return cli_http_request(c, "GET", path, NULL, 0, r);
}

int cli_http_stream(struct cli_conn *c, const char *method, const char *path, const char *body,
		    long timeout_s, void (*on_line)(char *line, void *ctx), void *ctx,
		    volatile sig_atomic_t *stop, struct cli_resp *r)
{
	struct xfer x = {.r = r, .on_line = on_line, .ctx = ctx, .stop = stop};
	return perform(c, method, path, body, timeout_s, &x);
}

int cli_http_watch(struct cli_conn *c, const char *path, const char *hdr, long idle_s,
		   void (*on_line)(char *line, void *ctx), void *ctx, volatile sig_atomic_t *stop,
		   struct cli_resp *r)
{
	struct xfer x = {.r = r, .on_line = on_line, .ctx = ctx, .stop = stop, .hdr = hdr, .idle_s = idle_s};
	return perform(c, "GET", path, NULL, 0, &x);
}

void cli_resp_free(struct cli_resp *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

int cli_unreachable(const struct cli_conn *c, const struct cli_resp *r)
{
	if (r->sock_errno > 0) {
		fprintf(stderr, "sandlens: cannot reach the API: %s\n", cli_esc(r->error));
		return CLI_ERR;
	}
	fprintf(stderr, "sandlens: cannot reach the API at %s%s: %s\n", c->socket ? "unix:" : "",
		cli_esc(c->socket ? c->socket : c->base), cli_esc(r->error));
	return CLI_ERR;
}

int cli_http_error(const char *what, const struct cli_resp *r)
{
	json_error_t je;
	json_t *o = r->body ? json_loads(r->body, 0, &je) : NULL;
	json_t *e = json_object_get(o, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *msg = json_string_value(json_object_get(e, "message"));
	const char *reason = json_string_value(json_object_get(e, "reason"));
	/* every text from the agent (or whatever answers --api) is escaped */
	if (code && msg) {
		fprintf(stderr, "sandlens: %s: %s (HTTP %ld %s%s%s)\n", cli_esc(what), cli_esc(msg), r->status,
			cli_esc(code), reason ? ", reason " : "", reason ? cli_esc(reason) : "");
	} else {
		char head[201];
		snprintf(head, sizeof(head), "%.200s", r->body ? r->body : "");
		fprintf(stderr, "sandlens: %s: HTTP %ld%s%s\n", cli_esc(what), r->status,
			r->body ? ": " : "", cli_esc(head));
	}
	json_decref(o);
	return r->status == 400 ? CLI_USAGE : CLI_ERR;
}

int cli_get_reply(struct cli_conn *c, const char *path, int allow_503, struct cli_resp *r,
		  long *status)
{
	if (cli_http_get(c, path, r))
		return cli_unreachable(c, r);
	if (status)
		*status = r->status;
	if (r->status != 200 && !(allow_503 && r->status == 503)) {
		int rc = cli_http_error(path, r);
		cli_resp_free(r);
		return rc;
	}
	return CLI_OK;
}

int cli_get_json(struct cli_conn *c, const char *path, int allow_503, json_t **out, long *status)
{
	struct cli_resp r;
	int rc = cli_get_reply(c, path, allow_503, &r, status);
	if (rc)
		return rc;
	json_error_t je;
	*out = r.body ? json_loads(r.body, 0, &je) : NULL;
	cli_resp_free(&r);
	if (!*out) {
		fprintf(stderr, "sandlens: %s: the API returned invalid JSON\n", cli_esc(path));
		return CLI_ERR;
	}
	return CLI_OK;
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
