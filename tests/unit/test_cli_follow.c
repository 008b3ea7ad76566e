/* sandlens events --follow over the event stream (src/cli/follow.c): the
 * SSE parser, the backoff, and the reconnect loop driven by a scripted
 * transport (stream ends, refused connections, duplicates after a resume,
 * 404 of an older agent, 4xx). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/follow.c"

/* ---- SSE parser ---- */

struct got {
	char ids[8][32];
	char data[8][256];
	int n;
};

static void on_ev(const char *id, const char *data, void *ctx)
{
	struct got *g = ctx;
	snprintf(g->ids[g->n], sizeof(g->ids[0]), "%s", id ? id : "(none)");
	snprintf(g->data[g->n], sizeof(g->data[0]), "%s", data);
	g->n++;
}

static void feed(struct cli_sse *p, const char *text)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *s = buf, *nl; (nl = strchr(s, '\n')); s = nl + 1) {
		*nl = 0;
		cli_sse_line(p, s);
	}
}

static void sse_parse(void **st)
{
	(void)st;
	struct got g = {0};
	struct cli_sse p = {.on_event = on_ev, .ctx = &g};
	feed(&p, "retry: 2000\n: hello\n\nid: 5\ndata: {\"a\":1}\n\n: heartbeat\n\n"
		 "data: one\r\ndata:two\r\n\r\nid: 9\n\nevent: x\ndata\nbogus: 1\n\n");
	assert_int_equal(p.retry_ms, 2000);
	assert_int_equal(p.comments, 2);
	assert_int_equal(g.n, 3);
	assert_string_equal(g.ids[0], "5");
	assert_string_equal(g.data[0], "{\"a\":1}");
	assert_string_equal(g.ids[1], "5"); /* the last id stays */
	assert_string_equal(g.data[1], "one\ntwo");
	assert_string_equal(g.ids[2], "9"); /* "id: 9" alone dispatched nothing */
	assert_string_equal(g.data[2], "");
	cli_sse_free(&p);
}

static void backoff(void **st)
{
	(void)st;
	int d = 0, seen[8];
	for (int i = 0; i < 8; i++)
		seen[i] = d = cli_follow_backoff(d);
	assert_int_equal(seen[0], 250);
	assert_int_equal(seen[1], 500);
	assert_int_equal(seen[2], 1000);
	assert_int_equal(seen[3], 2000);
	assert_int_equal(seen[4], 4000);
	assert_int_equal(seen[5], 5000);
	assert_int_equal(seen[7], 5000);
}

/* ---- the loop ---- */

struct step {
	long status;
	int rc;
	const char *lines; /* '\n'-separated, sent as they would arrive */
};

struct script {
	const struct step *steps;
	int n, at;
	int64_t last_ids[16];
	char paths[16][160];
	int stop_after; /* set *stop once this many steps ran (0: never) */
	volatile sig_atomic_t *stop;
};

static int fake_open(void *tctx, const char *path, int64_t last_id, void (*on_line)(char *, void *),
		     void *lctx, long *status, char *err, size_t errlen)
{
	struct script *s = tctx;
	assert_true(s->at < s->n);
	const struct step *st = &s->steps[s->at];
	snprintf(s->paths[s->at], sizeof(s->paths[0]), "%s", path);
	s->last_ids[s->at++] = last_id;
	*status = st->status;
	if (st->rc == -1)
		snprintf(err, errlen, "Couldn't connect to server");
	if (st->lines) {
		char buf[4096];
		snprintf(buf, sizeof(buf), "%s", st->lines);
		for (char *p = buf, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
			*nl = 0;
			on_line(p, lctx);
		}
	}
	if (s->stop_after && s->at >= s->stop_after)
		*s->stop = 1;
	return st->rc;
}

static int64_t printed[64];
static int nprinted;
static int slept[16], nslept;

static void print_ev(json_t *ev, void *ctx)
{
	(void)ctx;
	printed[nprinted++] = json_integer_value(json_object_get(ev, "id"));
}

static void fake_sleep(int ms) { slept[nslept++] = ms; }

#define EV(n) "id: " #n "\ndata: {\"specversion\":\"1.0\",\"id\":\"" #n "\",\"data\":{\"id\":" #n ",\"type\":\"exec\"}}\n\n"

static FILE *errf;

static int run(const struct step *steps, int n, int stop_after, int64_t cursor, struct cli_follow *f,
	       struct script *s)
{
	static volatile sig_atomic_t stop;
	stop = 0;
	nprinted = nslept = 0;
	memset(s, 0, sizeof(*s));
	s->steps = steps;
	s->n = n;
	s->stop_after = stop_after;
	s->stop = &stop;
	memset(f, 0, sizeof(*f));
	f->cursor = cursor;
	f->print = print_ev;
	f->err = errf;
	f->sleep_ms = fake_sleep;
	rewind(errf);
	if (ftruncate(fileno(errf), 0)) {
	}
	return cli_follow_run(f, "/api/v1/events/watch?heartbeat=5", fake_open, s, &stop);
}

static int count_in_err(const char *what)
{
	char buf[4096] = "";
	fflush(errf);
	rewind(errf);
	size_t n = fread(buf, 1, sizeof(buf) - 1, errf);
	buf[n] = 0;
	int c = 0;
	for (char *p = buf; (p = strstr(p, what)); p++)
		c++;
	return c;
}

static void restart_resumes_once(void **st)
{
	(void)st;
	const struct step steps[] = {
		{200, 0, ": up\n\n" EV(5) EV(6)}, /* agent stopped: the stream ended */
		{0, -1, NULL},                     /* down: refused */
		{0, -1, NULL},
		{200, -1, ": up\n\n" EV(6) EV(7) ": heartbeat\n\n" EV(8)}, /* back (6 again), then reset */
		{404, 0, NULL},                    /* replaced by an older agent */
	};
	struct cli_follow f;
	struct script s;
	int rc = run(steps, 5, 0, 4, &f, &s);
	assert_int_equal(rc, CLI_FOLLOW_NO_ROUTE);
	assert_int_equal(nprinted, 4);
	assert_int_equal(printed[0], 5);
	assert_int_equal(printed[1], 6);
	assert_int_equal(printed[2], 7);
	assert_int_equal(printed[3], 8);
	assert_int_equal(f.cursor, 8);
	/* each attempt resumed after the last printed id */
	assert_int_equal(s.last_ids[0], 4);
	assert_int_equal(s.last_ids[1], 6);
	assert_int_equal(s.last_ids[2], 6);
	assert_int_equal(s.last_ids[3], 6);
	assert_int_equal(s.last_ids[4], 8);
	/* one lost line per loss, one back line per regain */
	assert_int_equal(f.losses, 2);
	assert_int_equal(f.regains, 1);
	assert_int_equal(count_in_err("lost the agent"), 2);
	assert_int_equal(count_in_err("agent back: resuming after id 6"), 1);
	/* backoff 250, 500, 1000, then after the stream was up again 250 */
	assert_int_equal(nslept, 4);
	assert_int_equal(slept[0], 250);
	assert_int_equal(slept[1], 500);
	assert_int_equal(slept[2], 1000);
	assert_int_equal(slept[3], 250);
}

/* The agent came back on a new store (ids started again): the head of the
 * first stream named the epoch, the reconnect passes it back, the agent
 * says the store was recreated, and the follower prints the new store's
 * events from its first one (ids below the old cursor included) and says
 * so once. */
static void store_recreated(void **st)
{
	(void)st;
	const struct step steps[] = {
		{200, 0, ": sandlens event stream after id 40 store_epoch 00000000000000aa\n\n" EV(41) EV(42)},
		{200, CLI_HTTP_STOPPED,
		 ": sandlens event stream after id 0 store_epoch 00000000000000bb\n"
		 ": the store was recreated (store_epoch differs): from its first event\n\n" EV(1) EV(2)},
	};
	struct cli_follow f;
	struct script s;
	assert_int_equal(run(steps, 2, 0, 40, &f, &s), CLI_OK);
	assert_string_equal(s.paths[0], "/api/v1/events/watch?heartbeat=5");
	assert_string_equal(s.paths[1], "/api/v1/events/watch?heartbeat=5&store_epoch=00000000000000aa");
	assert_int_equal(s.last_ids[1], 42);
	assert_int_equal(nprinted, 4);
	assert_int_equal(printed[2], 1);
	assert_int_equal(printed[3], 2);
	assert_int_equal(f.cursor, 2);
	assert_string_equal(f.epoch, "00000000000000bb");
	assert_int_equal(f.recreations, 1);
	assert_int_equal(count_in_err("event store was recreated"), 1);
}

static void errors_and_stop(void **st)
{
	(void)st;
	struct cli_follow f;
	struct script s;
	const struct step bad[] = {{400, 0, NULL}};
	assert_int_equal(run(bad, 1, 0, 0, &f, &s), CLI_USAGE);
	const struct step denied[] = {{403, 0, NULL}};
	assert_int_equal(run(denied, 1, 0, 0, &f, &s), CLI_ERR);
	/* 429: a loss, retried */
	const struct step busy[] = {{429, 0, NULL}, {200, 0, EV(3)}};
	assert_int_equal(run(busy, 2, 2, 0, &f, &s), CLI_OK);
	assert_int_equal(nprinted, 1);
	assert_int_equal(count_in_err("too many event streams"), 1);
	/* stopped while streaming */
	const struct step one[] = {{200, CLI_HTTP_STOPPED, EV(1)}};
	assert_int_equal(run(one, 1, 0, 0, &f, &s), CLI_OK);
	assert_int_equal(f.losses, 0);
	/* data that is not a CloudEvent with an event: counted, not printed */
	const struct step junk[] = {{200, 0, "id: 4\ndata: nope\n\ndata: {\"data\":{}}\n\n"}};
	assert_int_equal(run(junk, 1, 1, 0, &f, &s), CLI_OK);
	assert_int_equal(nprinted, 0);
	assert_int_equal(f.bad_events, 2);
}

int main(void)
{
	errf = tmpfile();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sse_parse),
		cmocka_unit_test(backoff),
		cmocka_unit_test(restart_resumes_once),
		cmocka_unit_test(store_recreated),
		cmocka_unit_test(errors_and_stop),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	fclose(errf);
	return rc;
}
