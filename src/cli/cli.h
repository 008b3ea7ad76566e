/* The `sandlens` command: a client of the local HTTP API (docs/CLI.md). */
#ifndef SANDLENS_CLI_H
#define SANDLENS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <jansson.h>

/* Exit codes (docs/CLI.md). */
enum { CLI_OK = 0, CLI_ERR = 1, CLI_USAGE = 2 };

/* ---- http.c: the CLI's one HTTP layer (libcurl, TCP or a unix socket) ----
 *
 * Every command talks to the API through these functions. A request goes to
 * c->base + path (over c->socket when set) on the connection's one easy
 * handle (kept alive between requests), with only http/https allowed, a
 * 5 s connect timeout and a whole-request timeout of timeout_s seconds
 * (<= 0: 30 s; cli_http_get and the cli_get_* helpers use 30 s). A request
 * body is sent as Content-Type: application/json (without Expect:). A
 * buffered reply body is bounded by CLI_MAX_BODY. Only cli_unreachable,
 * cli_http_error and the cli_get_* helpers print (to stderr). */

#define CLI_DEFAULT_API "http://127.0.0.1:9753"
/* The agent's default unix socket and token file (api.unix_socket,
 * api.token_file): used when nothing else is given and accessible. */
#define CLI_DEFAULT_SOCKET "/run/sandlens/api.sock"
#define CLI_DEFAULT_TOKEN_FILE "/run/sandlens/api.token"

struct cli_conn {
	const char *base;   /* "http://127.0.0.1:9753" (no trailing '/') */
	const char *socket; /* unix socket path, or NULL for TCP */
	void *curl;         /* CURL easy handle, reused (keep-alive) */
	char auth[320];     /* "Authorization: Bearer <token>" or "" (cli_http_init) */
	int auth_explicit;  /* the token was asked for (--token-file, SANDLENS_TOKEN_FILE) */
	int auth_state;     /* 0 peer not checked yet, 1 the token may go, -1 it may not */
};

/* --token-file PATH (main.c, before any command runs); NULL when not given. */
extern const char *cli_token_file;

/* Removes the global option --token-file PATH / --token-file=PATH from
 * argv (anywhere; *argc updated) into cli_token_file. Returns 0, or -1 when
 * it lacks its PATH. */
int cli_take_token_option(int *argc, char **argv);

/* Reads a bearer token from path: opened O_NOFOLLOW|O_NONBLOCK, a regular
 * file of at most 258 bytes, surrounding whitespace dropped, 16..256
 * printable bytes. Returns its length with the token in tok (NUL-terminated,
 * size > 256), or -errno (-EACCES when not readable by us, -EINVAL when
 * malformed). */
int cli_read_token(const char *path, char *tok, size_t size);

struct cli_resp {
	long status;       /* HTTP status, 0 on transport error (see cli_http_stream) */
	char *body;        /* malloc'd, NUL-terminated; NULL when empty */
	size_t len;
	char error[512];   /* transport error text */
	int sock_errno;    /* > 0: connecting to the unix socket failed with it (error says why) */
};

/* Largest body the CLI accepts (the server bounds its bodies at 8 MiB). */
#define CLI_MAX_BODY ((size_t)64 << 20)

/* cli_http_stream's return when *stop ended the transfer. */
#define CLI_HTTP_STOPPED (-2)

/* The API address: *api and *socket from the options, else $SANDLENS_API
 * and $SANDLENS_SOCKET; when none of the four is given, CLI_DEFAULT_SOCKET
 * if it exists and we may connect to it (read+write access), else
 * CLI_DEFAULT_API over TCP (*api is left pointing at the URL used, for
 * messages; over a socket the URL only names the Host). base gets the URL
 * without trailing '/'. Returns 0; -1 when that is empty or does not fit in
 * size; -2 when *api has no "://" (not a URL). Prints nothing. */
int cli_api_resolve(const char **api, const char **socket, char *base, size_t size);

/* curl_global_init + one easy handle; base and socket (NULL or "" for TCP)
 * are kept by reference. The bearer token sent with every request comes
 * from cli_token_file, else $SANDLENS_TOKEN_FILE, else
 * CLI_DEFAULT_TOKEN_FILE, when that file is readable by us (a file we
 * cannot read just means no token: reader access). Returns 0; -1 when
 * libcurl fails; -2 when the file named by --token-file cannot be used
 * (message printed). */
int cli_http_init(struct cli_conn *c, const char *base, const char *socket);
void cli_http_close(struct cli_conn *c);

/* method (GET, POST, DELETE, ...) base + path (path includes any query),
 * with body (NUL-terminated JSON) when not NULL, the whole reply buffered in
 * r. Returns 0 when an HTTP response arrived (any status); -1 on a
 * transport error or timeout, with r->error set ("response too large" past
 * CLI_MAX_BODY or when out of memory, "request URL too long", when the
 * unix socket cannot be connected to "unix socket PATH: REASON" with
 * r->sock_errno set (cli_socket_diagnose, sock_diag.h: libcurl's own text
 * would name 127.0.0.1 and the port of the URL), else libcurl's text),
 * r->status 0 and r->body NULL. Free r->body with
 * cli_resp_free() (also safe after -1). */
int cli_http_request(struct cli_conn *c, const char *method, const char *path, const char *body,
		     long timeout_s, struct cli_resp *r);
/* cli_http_request(c, "GET", path, NULL, 0 (30 s), r). */
int cli_http_get(struct cli_conn *c, const char *path, struct cli_resp *r);
/* Like cli_http_request, but a 2xx reply's body is not buffered: each
 * complete line is passed to on_line as it arrives (NUL-terminated, without
 * the '\n'; a last line without '\n' is dropped); other replies' bodies are
 * buffered in r. The transfer is aborted (closing the connection) as soon
 * as *stop (may be NULL) is non-zero. Returns 0 when the reply ended
 * normally; CLI_HTTP_STOPPED when *stop aborted it; -1 on a transport
 * error or timeout (r->error set, libcurl's text). Unlike cli_http_request,
 * after CLI_HTTP_STOPPED or -1 r->status is the reply's status when one had
 * begun (0 if none) and r->body keeps what had arrived of a non-2xx body.
 * Free r->body with cli_resp_free() in every case. */
int cli_http_stream(struct cli_conn *c, const char *method, const char *path, const char *body,
		    long timeout_s, void (*on_line)(char *line, void *ctx), void *ctx,
		    volatile sig_atomic_t *stop, struct cli_resp *r);
/* cli_http_stream of a GET that may last forever (an event stream): hdr
 * (may be NULL) is one more request header ("Last-Event-ID: 12"); no total
 * timeout, but the transfer fails (-1) after idle_s seconds without a byte
 * (the stream's heartbeats keep a live one busy). */
int cli_http_watch(struct cli_conn *c, const char *path, const char *hdr, long idle_s,
		   void (*on_line)(char *line, void *ctx), void *ctx, volatile sig_atomic_t *stop,
		   struct cli_resp *r);
void cli_resp_free(struct cli_resp *r);

/* "sandlens: cannot reach the API at URL|unix:PATH: r->error" on stderr
 * (when the unix socket's connect failed, r->error already names the socket
 * and why: "sandlens: cannot reach the API: unix socket PATH: REASON");
 * returns CLI_ERR. */
int cli_unreachable(const struct cli_conn *c, const struct cli_resp *r);
/* Prints a non-2xx reply for what: the API's JSON {"error":{code,message
 * [,reason]}} as "sandlens: WHAT: MESSAGE (HTTP STATUS CODE[, reason R])",
 * else "sandlens: WHAT: HTTP STATUS: BODY" (body cut at 200 bytes). Returns
 * the exit code: CLI_USAGE for HTTP 400 (the request was bad), else CLI_ERR. */
int cli_http_error(const char *what, const struct cli_resp *r);
/* GET path (30 s). Success is HTTP 200, or 503 too when allow_503: returns
 * CLI_OK with the reply in r (free with cli_resp_free). Otherwise prints why
 * (cli_unreachable or cli_http_error with path as what), frees r and returns
 * the exit code. *status (may be NULL) gets the status of any reply. */
int cli_get_reply(struct cli_conn *c, const char *path, int allow_503, struct cli_resp *r,
		  long *status);
/* cli_get_reply, then the body parsed as JSON into *out (new reference).
 * An empty or non-JSON body prints "sandlens: PATH: the API returned invalid
 * JSON" and returns CLI_ERR. */
int cli_get_json(struct cli_conn *c, const char *path, int allow_503, json_t **out, long *status);

/* Query string builder: appends "&k=v" (or "?k=v" first) with v
 * percent-encoded to a fixed buffer. Returns -1 when it does not fit. */
int cli_query_add(char *buf, size_t size, const char *k, const char *v);

/* ---- main.c: signals ---- */

/* Set to 1 by SIGINT/SIGTERM once cli_catch_signals() ran; follow loops
 * and task streams stop on it. */
extern volatile sig_atomic_t cli_stop;
/* Installs the SIGINT/SIGTERM handler and ignores SIGPIPE (a closed stdout
 * shows up as EPIPE). */
void cli_catch_signals(void);

/* ---- format.c: tables for people ---- */

/* Columns a table line may take (0: no limit), set by main() from
 * cli_term_width() (term.c, commands.h): tables drop or cut columns to fit
 * instead of letting the terminal wrap a line. */
extern int cli_width;

/* Every value the CLI prints in a table goes through one of these two: s
 * escaped for a terminal by sl_term_escape (src/common/detail.h: control
 * characters, C1, bidi overrides, invalid UTF-8, backslashes). */
/* Writes s (already escaped) and pads it with spaces to width code points
 * (not bytes: no wcwidth, an escape counts as its length). */
void cli_put_padded(FILE *out, const char *s, int width);
/* Writes text (lines ending in '\n', already escaped) with each line cut
 * to width code points (width <= 0: whole), the last three of a cut line
 * "..." (width > 3). */
void cli_put_lines(FILE *out, const char *text, int width);
/* Writes s (NULL = "") escaped to out. */
void cli_put_safe(FILE *out, const char *s);
/* Longest symbol (function) name a human output prints whole, in code
 * points of its escaped text: a workload can make a name of any length (a
 * 100 KB C++ template instance). --json output is never cut. */
#define CLI_SYM_MAX 160
/* cli_esc(s) for a symbol or function name: cut to CLI_SYM_MAX code points,
 * the last of them U+2026 (the "…" marker), when longer. Same ring as
 * cli_esc. */
const char *cli_esc_sym(const char *s);
/* s (NULL = "") escaped, in a buffer that stays valid for the next 15
 * calls (a ring: use the result in the statement that asked for it);
 * "?" when out of memory. Single-threaded. */
const char *cli_esc(const char *s);
/* "2024-05-01T12:00:00.123Z" from the API's ns RFC 3339 string (copied
 * unchanged when it is not in that form). */
void cli_short_time(const char *rfc3339, char *buf, size_t len);
/* First 12 chars of the container id; the runtime ("host") when there is
 * none; "-" when neither is known. Not escaped. */
void cli_short_container(json_t *ev, char *buf, size_t len);

struct cli_schema; /* src/cli/schema.h */
/* DETAILS column of an event: its kind's template from the schema
 * (sl_detail_render), or, for a kind the schema does not list or has no
 * usable template for, its own scalar non-common fields as key=value.
 * Escaped. malloc'd; NULL when out of memory. */
char *cli_event_details(const struct cli_schema *s, json_t *ev);

/* The events table: header and one row, TYPE as wide as s->type_width;
 * with cli_width set, a row is cut to it (DETAILS last, "..."). */
void cli_print_event_header(FILE *out, const struct cli_schema *s);
void cli_print_event_row(FILE *out, const struct cli_schema *s, json_t *ev);
void cli_print_containers(FILE *out, json_t *containers);
/* Health table; metrics may be NULL (Prometheus text for a short summary). */
void cli_print_status(FILE *out, json_t *health, const char *metrics);

/* ---- top.c: `sandlens top` (GET /api/v1/sched) ---- */

/* Table of the sched snapshot: one row per container (and host), sorted by
 * runqueue wait in the interval: waits/s, p50/p90/p99/max wait, WAIT% (share
 * of runnable time spent waiting), internal/external wait, throttled time,
 * top two neighbours with the wait they caused. */
void cli_print_top(FILE *out, json_t *sched);
/* One snapshot (follow = 0) or a refresh every second until *stop; json
 * prints the API body as one line per refresh. Returns a CLI exit code. */
int cli_top(struct cli_conn *c, int json, int follow, volatile sig_atomic_t *stop);

/* ---- io.c: `sandlens io` (GET /api/v1/io) ---- */

/* Tables of the io snapshot: per (container, disk, op) requests, bytes,
 * queue p50/p99, device p50/p99/max, errors, sorted by device time; per
 * container page cache, readahead and dirty throttling; per disk the
 * module's request counts next to /proc/diskstats. */
void cli_print_io(FILE *out, json_t *io);
/* One snapshot; json prints the API body. Returns a CLI exit code. */
int cli_io(struct cli_conn *c, int json);
/* ---- net.c: `sandlens net` (GET /api/v1/net, docs/CLI.md) ---- */
/* The table of a GET /api/v1/net body: per container retransmits, resets,
 * drops (total, top reason), device drops/errors, ListenOverflows and
 * RcvPruned of its netns; then softirq latency per CPU and vector. */
void cli_print_net(FILE *out, json_t *net);
/* GET /api/v1/net: the table, or the JSON body with json. Returns CLI_*. */
int cli_net(struct cli_conn *c, int json);

#endif
