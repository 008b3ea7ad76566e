/* The `sandlens events` table (src/cli/format.c, compiled into this test):
 * DETAILS for every event type the agent emits, sched_delay's row, and the
 * TYPE column wide enough that every row lines up with the header. The
 * end-to-end table through the built binary is in test_api.c (test_cli_*). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/format.c"

static json_t *parse(const char *s)
{
	json_error_t je;
	json_t *o = json_loads(s, 0, &je);
	if (!o)
		fail_msg("bad fixture JSON: %s: %s", je.text, s);
	return o;
}

#define COMMON                                                                               \
	"\"id\":7,\"time\":\"2024-05-01T12:00:00.123456789Z\",\"pid\":1234,\"ppid\":1,"      \
	"\"comm\":\"sh\",\"cgroup_id\":99,\"container_id\":\"4f3a2b1c0d9e8877665544\","    \
	"\"pod_uid\":\"\",\"runtime\":\"containerd\",\"qos\":\"burstable\""

/* One event of each kind the agent emits, as the pipeline shapes them. */
static const char *fixture(const char *type)
{
	if (!strcmp(type, "exec"))
		return "{" COMMON ",\"type\":\"exec\",\"filename\":\"/bin/sh\","
		       "\"argv\":[\"sh\",\"-c\",\"echo hi\"],\"truncated_count\":2}";
	if (!strcmp(type, "exit"))
		return "{" COMMON ",\"type\":\"exit\",\"exit_code\":3,\"signal\":0,"
		       "\"lifetime_ns\":2100000}";
	if (!strcmp(type, "signal"))
		return "{" COMMON ",\"type\":\"signal\",\"signal\":11,\"sender_pid\":1240,"
		       "\"sender_comm\":\"crash\",\"target_pid\":1240,\"target_comm\":\"crash\"}";
	if (!strcmp(type, "oom"))
		return "{" COMMON ",\"type\":\"oom\",\"constraint\":\"memcg\","
		       "\"victim\":{\"pid\":1250,\"comm\":\"hog\",\"container_id\":\"4f3a2b1c0d9e88\"},"
		       "\"actor\":{\"pid\":1250,\"comm\":\"hog\",\"container_id\":\"4f3a2b1c0d9e88\"}}";
	if (!strcmp(type, "sched_delay"))
		return "{" COMMON ",\"type\":\"sched_delay\",\"tid\":1235,\"wait_ns\":4567890,"
		       "\"cpu\":3,\"contention\":\"external\",\"enqueue\":\"preempted\","
		       "\"truncated_count\":9,\"neighbour\":{\"pid\":200,\"tid\":202,"
		       "\"comm\":\"stress\",\"cgroup_id\":77,"
		       "\"container_id\":\"deadbeef99887766\",\"pod_uid\":\"\","
		       "\"runtime\":\"containerd\"}}";
	return NULL;
}

static char *details(const char *json)
{
	json_t *ev = parse(json);
	char *d = cli_event_details(ev);
	json_decref(ev);
	assert_non_null(d);
	return d;
}

static char *row(const char *json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	json_t *ev = parse(json);
	cli_print_event_row(f, ev);
	json_decref(ev);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static char *header(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	cli_print_event_header(f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Start column of each of the first n whitespace-separated words. */
static void word_starts(const char *s, size_t *at, int n)
{
	int w = 0;
	for (size_t i = 0; s[i] && s[i] != '\n' && w < n; i++)
		if (s[i] != ' ' && (i == 0 || s[i - 1] == ' '))
			at[w++] = i;
	assert_int_equal(w, n);
}

/* The row's columns TIME TYPE CONTAINER PID(right-aligned) COMM DETAILS
 * start where the header's do. */
static void assert_aligned(const char *hdr, const char *r)
{
	size_t h[6], c[6];
	word_starts(hdr, h, 6);
	word_starts(r, c, 6);
	assert_int_equal(c[0], h[0]); /* TIME */
	assert_int_equal(c[1], h[1]); /* TYPE */
	assert_int_equal(c[2], h[2]); /* CONTAINER */
	assert_true(c[3] > h[2] + 12 && c[3] <= h[3] + 3); /* PID, right-aligned under "PID" */
	assert_int_equal(c[4], h[4]); /* COMM */
	assert_int_equal(c[5], h[5]); /* DETAILS */
}

static void test_sched_delay_row(void **state)
{
	(void)state;
	char *d = details(fixture("sched_delay"));
	assert_string_equal(d, "wait 4.6ms cpu 3 external (preempted) neighbour 200(stress) "
			       "[deadbeef9988] (+9 delays suppressed)");
	free(d);

	char *h = header(), *r = row(fixture("sched_delay"));
	assert_string_equal(h, "TIME                     TYPE        CONTAINER        PID COMM"
			       "             DETAILS\n");
	assert_string_equal(r, "2024-05-01T12:00:00.123Z sched_delay 4f3a2b1c0d9e    1234 sh"
			       "               wait 4.6ms cpu 3 external (preempted) neighbour "
			       "200(stress) [deadbeef9988] (+9 delays suppressed)\n");
	assert_aligned(h, r);
	free(h);
	free(r);

	/* a host neighbour, a sub-millisecond wait, no suppressed events, a
	 * control character in the neighbour's comm */
	d = details("{\"type\":\"sched_delay\",\"wait_ns\":250000,\"cpu\":0,"
		    "\"contention\":\"internal\",\"enqueue\":\"wakeup\",\"truncated_count\":0,"
		    "\"neighbour\":{\"pid\":9,\"comm\":\"k\\u0001w\",\"container_id\":\"\","
		    "\"runtime\":\"host\"}}");
	assert_string_equal(d, "wait 250us cpu 0 internal (wakeup) neighbour 9(k\\x01w) [host]");
	free(d);
	/* attribution off: no neighbour container at all */
	d = details("{\"type\":\"sched_delay\",\"wait_ns\":1500000000,\"cpu\":1,"
		    "\"contention\":\"idle\",\"enqueue\":\"wakeup_new\","
		    "\"neighbour\":{\"pid\":0,\"comm\":\"swapper/1\"}}");
	assert_string_equal(d, "wait 1.50s cpu 1 idle (wakeup_new) neighbour 0(swapper/1)");
	free(d);
}

/* Every kind of every registered module has a fixture here, non-empty DETAILS,
 * and a row that lines up with the header. */
static void test_every_kind(void **state)
{
	(void)state;
	char *h = header();
	for (unsigned m = 0; m < sl_registry_count; m++)
	for (unsigned k = 0; k < sl_registry[m]->nkinds; k++) {
		const char *name = sl_registry[m]->kinds[k].name;
		const char *j = fixture(name);
		if (!j)
			fail_msg("no fixture for event type '%s': add it and its DETAILS", name);
		char *d = details(j);
		if (!*d)
			fail_msg("empty DETAILS for '%s'", name);
		free(d);
		char *r = row(j);
		assert_aligned(h, r);
		free(r);
	}
	free(h);
}

static void test_known_details(void **state)
{
	(void)state;
	static const struct {
		const char *type, *want;
	} c[] = {
		{"exec", "sh -c echo hi (+2 execs suppressed)"},
		{"exit", "exit 3 after 2.1ms"},
		{"signal", "SIGSEGV 1240(crash) -> 1240(crash)"},
		{"oom", "victim 1250(hog) [4f3a2b1c0d9e] by 1250(hog) [4f3a2b1c0d9e] constraint=memcg"},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *d = details(fixture(c[i].type));
		assert_string_equal(d, c[i].want);
		free(d);
	}
}

/* Rate-limited exits and signals say what they carry. */
static void test_exit_signal_truncated(void **state)
{
	(void)state;
	char *d = details("{" COMMON ",\"type\":\"exit\",\"exit_code\":0,\"signal\":0,"
			  "\"truncated_count\":7,\"truncated_abnormal\":2}");
	assert_string_equal(d, "exit 0 (+7 exits suppressed, 2 abnormal)");
	free(d);
	d = details("{" COMMON ",\"type\":\"signal\",\"signal\":11,\"sender_pid\":5,\"sender_comm\":\"a\","
		    "\"target_pid\":5,\"target_comm\":\"a\",\"truncated_count\":3}");
	assert_string_equal(d, "SIGSEGV 5(a) -> 5(a) (+3 signals suppressed)");
	free(d);
}

/* A type this CLI does not know still gets its own fields as DETAILS. */
static void test_unknown_type(void **state)
{
	(void)state;
	char *d = details("{" COMMON ",\"type\":\"future\",\"bytes\":42,\"path\":\"/x\\ny\","
			  "\"nested\":{\"a\":1}}");
	assert_string_equal(d, "bytes=42 path=/x\\x0ay");
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sched_delay_row),
		cmocka_unit_test(test_exit_signal_truncated),
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_known_details),
		cmocka_unit_test(test_unknown_type),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
