/* `sandlens events --follow` over the agent's event stream
 * (GET /api/v1/events/watch, docs/CLI.md "events"): the SSE parser, and
 * the follow loop that reconnects with backoff and resumes after the last
 * id it printed. Transport-agnostic so that the unit test drives it. */
#ifndef SANDLENS_CLI_FOLLOW_H
#define SANDLENS_CLI_FOLLOW_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

/* SSE parser (html.spec.whatwg.org "Server-sent events", event stream
 * interpretation) fed one line at a time (without its '\n'; a trailing
 * '\r' is dropped). A blank line dispatches the event: on_event(id, data)
 * with id the last "id:" field seen (NULL if none so far) and data the
 * "data:" lines joined by '\n'; an event without data is not dispatched.
 * Comment lines (':') and unknown fields are ignored; "retry" is kept. */
struct cli_sse {
	char id[32];
	int has_id;
	char *data; /* malloc'd */
	size_t len;
	long retry_ms; /* last "retry:" value, 0 if none */
	int comments;  /* comment lines seen (heartbeats) */
	void (*on_event)(const char *id, const char *data, void *ctx);
	void *ctx;
};
void cli_sse_line(struct cli_sse *p, char *line);
void cli_sse_free(struct cli_sse *p);

/* Reconnect delay after delay_ms (0 = the first): 250 ms, doubling, at
 * most 5 s. */
int cli_follow_backoff(int delay_ms);

/* One stream attempt: GET path with "Last-Event-ID: <last_id>" when
 * last_id >= 0, lines to on_line as they arrive; *status the HTTP status
 * (0 when none). Returns 0 when the reply ended, -1 transport error,
 * -2 stopped (cli.h CLI_HTTP_STOPPED). err gets a reason. */
typedef int (*cli_follow_open)(void *tctx, const char *path, int64_t last_id,
			       void (*on_line)(char *line, void *ctx), void *lctx, long *status,
			       char *err, size_t errlen);

struct cli_follow {
	int64_t cursor;        /* last id printed (resume after it) */
	void (*print)(json_t *ev, void *ctx); /* one event (the CloudEvent's data) */
	void *pctx;
	FILE *err;             /* the lost / back lines */
	void (*sleep_ms)(int ms);
	int lost;              /* the agent is lost now (a "lost" line was printed) */
	unsigned losses, regains;
	int bad_events;        /* data that was not a CloudEvent with an event */
	char epoch[17];        /* the store epoch the cursor belongs to ("" until a stream named it) */
	unsigned recreations;  /* streams that said the store was recreated */
};

/* Returned by cli_follow_run when the agent has no watch route (404). */
#define CLI_FOLLOW_NO_ROUTE 100

/* Follow base_path (the watch path with its filters, "?..." included)
 * after f->cursor until *stop: every event whose id is above the cursor is
 * printed once, in order. When the stream ends or the agent cannot be
 * reached it prints one line "sandlens: lost the agent (...): reconnecting
 * ..." to f->err, retries with cli_follow_backoff delays, and when a stream
 * is up again one line "sandlens: agent back: resuming after id N".
 * A 429 (too many streams) counts as a lost agent. The stream's first
 * comment names the store's epoch; reconnects pass it back (store_epoch=),
 * and when the agent answers that the store was recreated (ids started
 * again) the cursor restarts at 0 and one line "sandlens: the agent's event
 * store was recreated: following it from its first event" is printed. Returns 0 (CLI_OK) when
 * *stop ended it, CLI_FOLLOW_NO_ROUTE on a 404 (an agent older than the
 * route: the caller polls instead), 2 (CLI_USAGE) on a 400 and 1 (CLI_ERR)
 * on any other 4xx, with "sandlens: <path>: HTTP <status>" printed. */
int cli_follow_run(struct cli_follow *f, const char *base_path, cli_follow_open open, void *tctx,
		   volatile sig_atomic_t *stop);

#endif
