/* Unit tests for the guest-agent source's client and answer
 * (src/stats/guest_client.c, guest_kata.c, guest_source.c) against
 * tests/helpers/kata_agent_fake.py: a stand-in for a Kata agent behind a
 * VMM's hybrid-vsock socket that speaks the real wire protocol with its own
 * protobuf coding (handshake, ttrpc framing, agent.proto messages). The
 * Kata state is a fixture in mkdtemp laid out as the Go runtime writes it
 * (virtcontainers/persist/fs: <root>/sbs/<id>/persist.json and
 * <root>/sbs/<id>/<cid>/persist.json; cloud-hypervisor's hybrid vsock
 * <root>/vm/<id>/clh.sock). Modes: normal, slow (timeout), never answers,
 * no handshake, one container missing, sandbox replaced mid-read,
 * malformed frames (oversize, wrong type, wrong stream, truncated).
 * SKIPs without python3. A live micro-VM cannot run here (no nested
 * virtualization): docs/STATS.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stats/guest.h"
#include "stats/stats.h"

#define SB "sbx1"
static char root[64];
static pid_t server = -1;
static int server_out = -1; /* the fake's stdout, kept open while it runs */

static void put(const char *rel, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (char *s = strchr(p + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		mkdir(p, 0700);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* In place (same inode), as the runtime rewrites its state (O_TRUNC). */
static void sandbox_state(const char *state, int pid, const char *url_path)
{
	char b[2048], url[512];
	snprintf(url, sizeof(url), "%s", url_path ? url_path : "");
	if (!url_path)
		snprintf(url, sizeof(url), "%s/vm/" SB "/clh.sock", root);
	snprintf(b, sizeof(b),
		 "{\"State\":\"%s\",\"SandboxContainer\":\"" SB "\","
		 "\"HypervisorState\":{\"Type\":\"clh\",\"UUID\":\"uuid-1\",\"Pid\":%d,\"APISocket\":\"\"},"
		 "\"AgentState\":{\"URL\":\"hvsock://%s:1024\"},"
		 "\"Config\":{\"ContainerConfigs\":["
		 "{\"ID\":\"" SB "\",\"Annotations\":{\"io.kubernetes.cri.container-type\":\"sandbox\"},\"RootFs\":\"\"},"
		 "{\"ID\":\"c1\",\"Annotations\":{\"io.kubernetes.cri.container-type\":\"container\"}},"
		 "{\"ID\":\"c2\",\"Annotations\":{\"io.kubernetes.cri.container-type\":\"container\"}},"
		 "{\"ID\":\"c3\",\"Annotations\":{\"io.kubernetes.cri.container-type\":\"container\"}}]},"
		 "\"PersistVersion\":2}\n",
		 state, pid, url);
	put("sbs/" SB "/persist.json", b);
}

static const char *const figures_default =
	"{\"" SB "\": {\"cpu_ns\": 900000000000, \"usage\": 1000000},"
	" \"c1\": {\"cpu_ns\": 1500000999, \"user_ns\": 1000000000, \"sys_ns\": 500000999,"
	"          \"usage\": 104857600, \"max_usage\": 157286400, \"cache\": 4096,"
	"          \"stats\": {\"inactive_file\": 31457280}, \"pids\": 3},"
	" \"c2\": {\"cpu_ns\": 2000500, \"user_ns\": 1000000, \"sys_ns\": 1000500,"
	"          \"usage\": 52428800, \"max_usage\": 62914560,"
	"          \"stats\": {\"total_inactive_file\": 60000000}, \"pids\": 1},"
	" \"c3\": {\"cpu_ns\": 777000000000, \"usage\": 999}}";

static void fixture(void)
{
	snprintf(root, sizeof(root), "/tmp/sl-guest-XXXXXX");
	assert_non_null(mkdtemp(root));
	sandbox_state("running", 4242, NULL);
	put("sbs/" SB "/c1/persist.json",
	    "{\"State\":\"running\",\"CgroupPath\":\"/kata_c1\",\"Process\":{\"StartTime\":\"2026-12-04T20:00:00Z\",\"Token\":\"t1\",\"Pid\":11}}\n");
	put("sbs/" SB "/c2/persist.json",
	    "{\"State\":\"running\",\"Process\":{\"StartTime\":\"2026-12-04T20:00:01Z\",\"Token\":\"t2\",\"Pid\":12}}\n");
	/* created, never started: a carrier */
	put("sbs/" SB "/c3/persist.json",
	    "{\"State\":\"ready\",\"Process\":{\"StartTime\":\"0001-01-01T00:00:00Z\",\"Token\":\"\",\"Pid\":0}}\n");
	put("sbs/" SB "/" SB "/persist.json", "{\"State\":\"running\",\"Process\":{\"Pid\":10}}\n");
	put("figures.json", figures_default);
	char p[256];
	snprintf(p, sizeof(p), "%s/vm", root);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/vm/" SB, root);
	mkdir(p, 0700);
}

static void stop_server(void)
{
	if (server > 0) {
		kill(server, SIGKILL);
		waitpid(server, NULL, 0);
	}
	server = -1;
	if (server_out >= 0)
		close(server_out);
	server_out = -1;
}

/* Start the fake agent in mode; 0, or -1 when python3 is missing. */
static int start_server(const char *mode)
{
	stop_server();
	char sock[256], figs[256], helper[512];
	snprintf(sock, sizeof(sock), "%s/vm/" SB "/clh.sock", root);
	snprintf(figs, sizeof(figs), "%s/figures.json", root);
	snprintf(helper, sizeof(helper), "tests/helpers/kata_agent_fake.py");
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t p = fork();
	assert_true(p >= 0);
	if (!p) {
		dup2(pfd[1], 1);
		/* the fake's request log goes to SL_GUEST_FAKE_LOG (default: dropped) */
		const char *log = getenv("SL_GUEST_FAKE_LOG");
		int lfd = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (lfd >= 0)
			dup2(lfd, 2);
		close(pfd[0]);
		execlp("python3", "python3", helper, "--socket", sock, "--stats", figs, "--mode", mode,
		       "--delay", "3", "--state-dir", root, "--sandbox", SB, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	server = p;
	struct pollfd pl = {.fd = pfd[0], .events = POLLIN};
	char buf[16] = {0};
	int ok = poll(&pl, 1, 20000) == 1 && read(pfd[0], buf, sizeof(buf) - 1) > 0 && !strncmp(buf, "ready", 5);
	/* kept open until the fake is stopped: "ready" and its newline may
	 * come in two writes, and a closed pipe would kill the fake (EPIPE) */
	server_out = pfd[0];
	if (!ok) {
		stop_server();
		return -1;
	}
	return 0;
}

static int have_python(void)
{
	return system("python3 -c 'import socket, json' >/dev/null 2>&1") == 0;
}

static struct sl_guest *new_guest(uint64_t timeout_ms)
{
	struct sl_guest_config c = {.timeout_ns = timeout_ms * 1000000ull};
	snprintf(c.kata_root, sizeof(c.kata_root), "%s", root);
	struct sl_guest *g = sl_guest_new(&c);
	assert_non_null(g);
	return g;
}

/* The answer for SB as parsed JSON; *status set. */
static json_t *ask(struct sl_guest *g, unsigned *status, double *secs)
{
	struct sl_stats_reply r;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(sl_guest_answer(g, SB, &r), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (secs)
		*secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	*status = r.status;
	if (getenv("SL_GUEST_DEBUG"))
		print_message("%u %s\n", r.status, r.body);
	json_t *j = json_loadb(r.body, r.len, 0, NULL);
	assert_non_null(j);
	free(r.body);
	return j;
}

static const char *reason(json_t *j)
{
	const char *s = json_string_value(json_object_get(json_object_get(j, "error"), "reason"));
	return s ? s : "";
}

static json_int_t ival(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static int setup(void **state)
{
	(void)state;
	if (!have_python())
		return 0;
	fixture();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	stop_server();
	if (root[0]) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd)) {
		}
	}
	return 0;
}

#define NEED_SERVER(mode)                                                                   \
	do {                                                                                \
		if (!root[0] || start_server(mode)) {                                        \
			print_message("SKIP: python3 (for tests/helpers/kata_agent_fake.py) not usable\n"); \
			skip();                                                             \
		}                                                                           \
	} while (0)

static void test_normal_sum_and_epochs(void **state)
{
	(void)state;
	NEED_SERVER("normal");
	struct sl_guest *g = new_guest(2000);
	unsigned st;
	json_t *j = ask(g, &st, NULL);
	assert_int_equal(st, 200);
	assert_string_equal(json_string_value(json_object_get(j, "source")), "guest_agent");
	assert_true(json_is_false(json_object_get(j, "comparable_with_cgroup_source")));
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "sandbox");
	assert_int_equal(ival(j, "containers_read"), 2);
	assert_int_equal(ival(j, "containers_total"), 2);
	/* the rule: c1 + c2 only (the sandbox container and the never-started c3
	 * are carriers), ns -> µs floored per container, ws = usage - inactive
	 * (v2) / total_inactive (v1) */
	assert_int_equal(ival(j, "cpu_usage_usec"), 1500000 + 2000);
	assert_int_equal(ival(j, "cpu_user_usec"), 1000000 + 1000);
	assert_int_equal(ival(j, "cpu_system_usec"), 500000 + 1000);
	assert_int_equal(ival(j, "memory_current_bytes"), 104857600 + 52428800);
	/* c2: total_inactive_file above usage: its working set is floored at 0 */
	assert_int_equal(ival(j, "memory_working_set_bytes"), 104857600 - 31457280);
	assert_int_equal(ival(j, "memory_peak_bytes"), 157286400 + 62914560);
	assert_true(json_is_true(json_object_get(j, "memory_peak_is_upper_bound")));
	assert_int_equal(ival(j, "pids_current"), 4);
	assert_true(json_is_null(json_object_get(j, "io_read_bytes")));
	json_t *ex = json_object_get(j, "containers_excluded");
	assert_int_equal(json_array_size(ex), 2);
	json_t *ep = json_object_get(j, "epoch");
	char e1[32];
	snprintf(e1, sizeof(e1), "%s", json_string_value(json_object_get(ep, "id")));
	assert_int_equal(strlen(e1), 16);
	assert_string_equal(json_string_value(json_object_get(ep, "reason")), "first_seen");
	assert_true(json_is_true(json_object_get(ep, "first_sample")));
	json_decref(j);

	/* same epoch on the next read */
	j = ask(g, &st, NULL);
	assert_int_equal(st, 200);
	ep = json_object_get(j, "epoch");
	assert_string_equal(json_string_value(json_object_get(ep, "id")), e1);
	assert_true(json_is_false(json_object_get(ep, "first_sample")));
	json_decref(j);

	/* a restore: the VMM is a new process, the guest's counters came back
	 * (not lower): the epoch continues */
	sandbox_state("running", 5151, NULL);
	j = ask(g, &st, NULL);
	assert_int_equal(st, 200);
	ep = json_object_get(j, "epoch");
	assert_string_equal(json_string_value(json_object_get(ep, "id")), e1);
	assert_int_equal(ival(ep, "vmm_restarts"), 1);
	json_decref(j);

	/* a cold boot: the counters start again from zero -> new epoch */
	put("figures.json",
	    "{\"c1\": {\"cpu_ns\": 1000, \"usage\": 4096, \"max_usage\": 8192},"
	    " \"c2\": {\"cpu_ns\": 1000, \"usage\": 4096, \"max_usage\": 8192}}");
	stop_server();
	NEED_SERVER("normal");
	j = ask(g, &st, NULL);
	assert_int_equal(st, 200);
	ep = json_object_get(j, "epoch");
	assert_string_not_equal(json_string_value(json_object_get(ep, "id")), e1);
	assert_string_equal(json_string_value(json_object_get(ep, "reason")), "counter_reset");
	assert_int_equal(ival(j, "cpu_usage_usec"), 2);
	json_decref(j);
	put("figures.json", figures_default);
	sandbox_state("running", 4242, NULL);
	sl_guest_free(g);
}

static void test_timeouts(void **state)
{
	(void)state;
	static const char *const modes[] = {"slow", "never"};
	for (int i = 0; i < 2; i++) {
		NEED_SERVER(modes[i]);
		struct sl_guest *g = new_guest(300);
		unsigned st;
		double secs;
		json_t *j = ask(g, &st, &secs);
		print_message("mode %s: %u %s in %.2fs\n", modes[i], st, reason(j), secs);
		assert_int_equal(st, 503);
		assert_string_equal(reason(j), "guest_not_answering");
		assert_true(secs < 2.5); /* bounded by the 300 ms timeout (+ load), not the 3 s delay */
		json_decref(j);
		sl_guest_free(g);
	}
}

static void test_malformed_and_refused(void **state)
{
	(void)state;
	static const char *const modes[] = {"nohandshake", "oversize", "wrongtype", "badstream", "truncated"};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		NEED_SERVER(modes[i]);
		struct sl_guest *g = new_guest(2000);
		unsigned st;
		json_t *j = ask(g, &st, NULL);
		print_message("mode %s: %u %s\n", modes[i], st, reason(j));
		assert_int_equal(st, 503);
		assert_string_equal(reason(j), "guest_not_answering");
		json_decref(j);
		sl_guest_free(g);
	}
}

static void test_one_missing(void **state)
{
	(void)state;
	NEED_SERVER("missing");
	struct sl_guest *g = new_guest(2000);
	unsigned st;
	json_t *j = ask(g, &st, NULL);
	assert_int_equal(st, 200);
	assert_int_equal(ival(j, "containers_read"), 1);
	assert_int_equal(ival(j, "containers_total"), 2);
	/* c1 was asked first and is missing: only c2 counts */
	assert_int_equal(ival(j, "cpu_usage_usec"), 2000);
	assert_int_equal(ival(j, "memory_working_set_bytes"), 0); /* total_inactive > usage: floored */
	assert_true(json_is_false(json_object_get(j, "memory_peak_is_upper_bound")));
	json_decref(j);
	sl_guest_free(g);
}

static void test_replaced_mid_read(void **state)
{
	(void)state;
	NEED_SERVER("normal");
	struct sl_guest *g = new_guest(2000);
	unsigned st;
	json_t *j = ask(g, &st, NULL);
	assert_int_equal(st, 200);
	json_decref(j);
	NEED_SERVER("replace");
	j = ask(g, &st, NULL);
	assert_int_equal(st, 404);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "error"), "code")), "NOT_FOUND");
	json_decref(j);
	/* the new incarnation answers normally, in a new epoch */
	j = ask(g, &st, NULL);
	assert_int_equal(st, 200);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "epoch"), "reason")),
			    "sandbox_recreated"); /* a new incarnation: a new epoch */
	json_decref(j);
	sl_guest_free(g);
	stop_server();
	/* restore the fixture for later tests */
	sandbox_state("running", 4242, NULL);
}

static void test_states(void **state)
{
	(void)state;
	if (!have_python())
		skip();
	stop_server();
	struct sl_guest *g = new_guest(500);
	unsigned st;
	json_t *j;
	struct sl_stats_reply r;
	assert_int_equal(sl_guest_answer(g, "nosuch", &r), 0);
	assert_int_equal(r.status, 404);
	free(r.body);
	assert_int_equal(sl_guest_answer(g, "../etc", &r), 0);
	assert_int_equal(r.status, 400);
	free(r.body);

	/* booting / restoring: no guest yet */
	sandbox_state("ready", 4242, NULL);
	j = ask(g, &st, NULL);
	assert_int_equal(st, 409);
	assert_string_equal(reason(j), "no_guest");
	json_decref(j);
	sandbox_state("stopped", 4242, NULL);
	j = ask(g, &st, NULL);
	assert_int_equal(st, 503);
	assert_string_equal(reason(j), "tearing_down");
	json_decref(j);
	/* running, the socket file is there but nobody listens (a VMM that
	 * died): the guest does not answer */
	sandbox_state("running", 4242, NULL);
	j = ask(g, &st, NULL);
	assert_int_equal(st, 503);
	assert_string_equal(reason(j), "guest_not_answering");
	json_decref(j);
	/* running, but the socket is not there yet */
	char sock[300];
	snprintf(sock, sizeof(sock), "%s/vm/" SB "/clh.sock", root);
	unlink(sock);
	j = ask(g, &st, NULL);
	assert_int_equal(st, 409);
	assert_string_equal(reason(j), "no_guest");
	json_decref(j);
	/* a socket path outside the state root is refused */
	sandbox_state("running", 4242, "/tmp/elsewhere.sock");
	j = ask(g, &st, NULL);
	assert_int_equal(st, 503);
	assert_string_equal(reason(j), "unreadable");
	json_decref(j);
	/* ... and one with ".." */
	char up[300];
	snprintf(up, sizeof(up), "%s/vm/../vm/" SB "/clh.sock", root);
	sandbox_state("running", 4242, up);
	j = ask(g, &st, NULL);
	assert_int_equal(st, 503);
	json_decref(j);
	/* a symlink in the socket's path */
	char lnk[300], tgt[300];
	snprintf(lnk, sizeof(lnk), "%s/vm/link", root);
	snprintf(tgt, sizeof(tgt), "%s/vm/" SB, root);
	assert_int_equal(symlink(tgt, lnk), 0);
	snprintf(up, sizeof(up), "%s/vm/link/clh.sock", root);
	sandbox_state("running", 4242, up);
	assert_int_equal(start_server("normal"), 0);
	j = ask(g, &st, NULL);
	assert_int_equal(st, 503);
	assert_string_equal(reason(j), "unreadable");
	json_decref(j);
	stop_server();
	unlink(lnk);
	sandbox_state("running", 4242, NULL);

	/* persist.json a FIFO: refused at once, no hang */
	char p[300], q[300];
	snprintf(p, sizeof(p), "%s/sbs/" SB "/persist.json", root);
	snprintf(q, sizeof(q), "%s/sbs/" SB "/persist.json.bak", root);
	assert_int_equal(rename(p, q), 0);
	assert_int_equal(mkfifo(p, 0600), 0);
	j = ask(g, &st, NULL);
	assert_int_equal(st, 503);
	assert_string_equal(reason(j), "unreadable");
	json_decref(j);
	unlink(p);
	/* a symlink: refused */
	assert_int_equal(symlink(q, p), 0);
	j = ask(g, &st, NULL);
	assert_int_equal(st, 503);
	json_decref(j);
	unlink(p);
	assert_int_equal(rename(q, p), 0);

	/* only carriers: no workload container yet */
	put("sbs/" SB "/c1/persist.json", "{\"State\":\"ready\"}");
	put("sbs/" SB "/c2/persist.json", "{\"State\":\"creating\"}");
	j = ask(g, &st, NULL);
	assert_int_equal(st, 409);
	assert_string_equal(reason(j), "no_workload_containers");
	json_decref(j);
	put("sbs/" SB "/c1/persist.json", "{\"State\":\"running\",\"Process\":{\"StartTime\":\"2026-12-04T20:00:00Z\"}}");
	put("sbs/" SB "/c2/persist.json", "{\"State\":\"running\",\"Process\":{\"StartTime\":\"2026-12-04T20:00:01Z\"}}");
	sl_guest_free(g);
}

/* The read path takes no lock of the collector: answer while it is held. */
struct lock_arg {
	struct sl_stats *c;
	unsigned status;
	int done;
};

static void *lock_reader(void *p)
{
	struct lock_arg *a = p;
	struct sl_stats_reply r;
	sl_stats_api_workload_source(a->c, SB, SL_SRC_AUTO, &r);
	a->status = r.status;
	free(r.body);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_no_collector_lock(void **state)
{
	(void)state;
	NEED_SERVER("normal");
	struct sl_stats_mounts m;
	memset(&m, 0, sizeof(m));
	struct sl_guest_config gc = {.timeout_ns = 2000000000ull};
	snprintf(gc.kata_root, sizeof(gc.kata_root), "%s", root);
	struct sl_stats_config cfg = {.mounts = &m, .guest = &gc};
	struct sl_stats *c = sl_stats_new(&cfg);
	assert_non_null(c);
	sl_stats_test_lock(c);
	struct lock_arg a = {.c = c};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, lock_reader, &a), 0);
	for (int i = 0; i < 500 && !__atomic_load_n(&a.done, __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	int done = __atomic_load_n(&a.done, __ATOMIC_ACQUIRE);
	sl_stats_test_unlock(c);
	pthread_join(th, NULL);
	assert_true(done); /* answered while the lock was held */
	assert_int_equal(a.status, 200); /* auto chose the guest source */
	/* an id that is no Kata sandbox: auto falls back to the cgroup source */
	struct sl_stats_reply r;
	sl_stats_api_workload_source(c, "notkata", SL_SRC_AUTO, &r);
	assert_int_equal(r.status, 503); /* collector_not_ready: no pass ran */
	free(r.body);
	sl_stats_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normal_sum_and_epochs),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_malformed_and_refused),
		cmocka_unit_test(test_one_missing),
		cmocka_unit_test(test_replaced_mid_read),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_no_collector_lock),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
