/* Event stream follow (follow.h). */
#include "cli/follow.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

void cli_sse_free(struct cli_sse *p)
{
	free(p->data);
	p->data = NULL;
	p->len = 0;
}

static void data_add(struct cli_sse *p, const char *v)
{
	size_t vl = strlen(v);
	char *nb = realloc(p->data, p->len + vl + 2);
	if (!nb)
		return;
	p->data = nb;
	if (p->len)
		p->data[p->len++] = '\n';
	memcpy(p->data + p->len, v, vl);
	p->len += vl;
	p->data[p->len] = 0;
}

void cli_sse_line(struct cli_sse *p, char *line)
{
	size_t n = strlen(line);
	if (n && line[n - 1] == '\r')
		line[--n] = 0;
	if (n == 0) { /* dispatch */
		if (p->data && p->on_event)
			p->on_event(p->has_id ? p->id : NULL, p->data, p->ctx);
		cli_sse_free(p);
		return;
	}
	if (line[0] == ':') {
		p->comments++;
		return;
	}
	char *colon = strchr(line, ':');
	const char *val = "";
	if (colon) {
		*colon = 0;
		val = colon + 1;
		if (*val == ' ')
			val++;
	}
	if (!strcmp(line, "data")) {
		data_add(p, val);
		if (!p->data) /* an empty first data line */
			data_add(p, "");
	} else if (!strcmp(line, "id")) {
		snprintf(p->id, sizeof(p->id), "%s", val);
		p->has_id = 1;
	} else if (!strcmp(line, "retry")) {
		char *e;
		long v = strtol(val, &e, 10);
		if (*val && !*e && v >= 0)
			p->retry_ms = v;
	}
}

int cli_follow_backoff(int delay_ms)
{
	if (delay_ms <= 0)
		return 250;
	return delay_ms >= 2500 ? 5000 : delay_ms * 2;
}

struct attempt {
	struct cli_follow *f;
	struct cli_sse sse;
	int up; /* something arrived on this stream */
};

static void on_event(const char *id, const char *data, void *ctx)
{
	struct attempt *at = ctx;
	struct cli_follow *f = at->f;
	json_error_t je;
	json_t *ce = json_loads(data, 0, &je);
	json_t *ev = json_object_get(ce, "data");
	json_t *eid = json_object_get(ev, "id");
	(void)id;
	if (!json_is_object(ev) || !json_is_integer(eid)) {
		f->bad_events++;
	} else if (json_integer_value(eid) > f->cursor) { /* never twice */
		f->print(ev, f->pctx);
		f->cursor = json_integer_value(eid);
	}
	json_decref(ce);
}

static void on_line(char *line, void *ctx)
{
	struct attempt *at = ctx;
	if (!at->up) {
		at->up = 1;
		if (at->f->lost) {
			fprintf(at->f->err, "sandlens: agent back: resuming after id %lld\n",
				(long long)at->f->cursor);
			fflush(at->f->err);
			at->f->lost = 0;
			at->f->regains++;
		}
	}
	/* the stream's head (api_watch.c): ": sandlens event stream after id N
	 * store_epoch E", then ": the store was recreated ..." when the cursor
	 * was from a store that is gone */
	static const char head[] = ": sandlens event stream after id ";
	static const char recr[] = ": the store was recreated";
	if (!strncmp(line, head, sizeof(head) - 1)) {
		const char *e = strstr(line, " store_epoch ");
		if (e) {
			e += strlen(" store_epoch ");
			size_t n = strspn(e, "0123456789abcdef");
			if (n && n < sizeof(at->f->epoch)) {
				memcpy(at->f->epoch, e, n);
				at->f->epoch[n] = 0;
			}
		}
	} else if (!strncmp(line, recr, sizeof(recr) - 1)) {
		at->f->cursor = 0;
		at->f->recreations++;
		fprintf(at->f->err, "sandlens: the agent's event store was recreated: following it from its first event\n");
		fflush(at->f->err);
	}
	cli_sse_line(&at->sse, line);
}

int cli_follow_run(struct cli_follow *f, const char *base_path, cli_follow_open open, void *tctx,
		   volatile sig_atomic_t *stop)
{
	int delay = 0;
	while (!*stop) {
		struct attempt at = {.f = f, .sse = {.on_event = on_event}};
		at.sse.ctx = &at;
		char err[256] = "";
		long status = 0;
		char path[2048];
		if (f->epoch[0] && snprintf(path, sizeof(path), "%s%cstore_epoch=%s", base_path,
					    strchr(base_path, '?') ? '&' : '?', f->epoch) < (int)sizeof(path))
			; /* resume within the store the cursor came from */
		else
			snprintf(path, sizeof(path), "%s", base_path);
		int rc = open(tctx, path, f->cursor, on_line, &at, &status, err, sizeof(err));
		cli_sse_free(&at.sse);
		if (*stop || rc == CLI_HTTP_STOPPED)
			return CLI_OK;
		if (status == 404)
			return CLI_FOLLOW_NO_ROUTE;
		if (status >= 400 && status < 500 && status != 429) {
			fprintf(f->err, "sandlens: %s: HTTP %ld%s%s\n", base_path, status, err[0] ? ": " : "", err);
			return status == 400 ? CLI_USAGE : CLI_ERR;
		}
		if (at.up)
			delay = 0; /* it was up: start the backoff again */
		if (!f->lost) {
			fprintf(f->err, "sandlens: lost the agent (%s): reconnecting, will resume after id %lld\n",
				status == 429 ? "too many event streams (HTTP 429)"
				: err[0]      ? err
				: status      ? "the stream ended"
					      : "no answer",
				(long long)f->cursor);
			fflush(f->err);
			f->lost = 1;
			f->losses++;
		}
		delay = cli_follow_backoff(delay);
		f->sleep_ms(delay);
	}
	return CLI_OK;
}
