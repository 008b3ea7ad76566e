/* SIGHUP reload and sd_notify (src/agent/reload.c, config.c sl_config_diff,
 * src/agent/sdnotify.c): the diff names exactly the keys that changed
 * (agent, module, "<module>.enabled", string lists); a reload applies the
 * run-time keys, keeps the others and a bad file leaves the running config
 * untouched; a notification arrives as one datagram on a path socket and
 * on an abstract one, and nothing is sent without NOTIFY_SOCKET. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/agent.h"
#include "agent/sdnotify.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <errno.h>
#include <unistd.h>

static char names[32][128];
static int nnames;

static void collect(void *arg, const char *key, int module, const struct sl_cfg_key *mk)
{
	(void)arg;
	if (nnames < 32)
		snprintf(names[nnames++], sizeof(names[0]), "%s|%d|%s", key, module >= 0, mk ? mk->name : "-");
}

static int load(struct sl_config *c, const char *yaml)
{
	char err[256];
	sl_config_defaults(c);
	int rc = sl_config_load_buf(c, "t.yaml", yaml, strlen(yaml), err, sizeof(err));
	if (rc)
		print_message("load: %s\n", err);
	return rc;
}

static void diff_names_changed_keys(void **st)
{
	(void)st;
	static struct sl_config a, b;
	assert_int_equal(load(&a, ""), 0);
	assert_int_equal(load(&b, ""), 0);
	nnames = 0;
	assert_int_equal(sl_config_diff(&a, &b, collect, NULL), 0);
	assert_int_equal(nnames, 0);

	assert_int_equal(load(&b, "log_level: debug\nstore:\n  max_rows: 5\n  path: /tmp/x.db\n"
				  "proc:\n  exec_rate: 7\n  redact_args: [\"x=\"]\nsched:\n  enabled: false\n"), 0);
	nnames = 0;
	assert_int_equal(sl_config_diff(&a, &b, collect, NULL), 6);
	assert_int_equal(nnames, 6);
	const char *want[] = {"log_level|0|-", "store.path|0|-", "store.max_rows|0|-",
			      "proc.exec_rate|1|exec_rate", "proc.redact_args|1|redact_args", "sched.enabled|1|-"};
	for (int i = 0; i < 6; i++) {
		int found = 0;
		for (int j = 0; j < nnames; j++)
			found |= !strcmp(names[j], want[i]);
		if (!found)
			fail_msg("%s not reported", want[i]);
	}
	/* NULL callback: only the count */
	assert_int_equal(sl_config_diff(&b, &a, NULL, NULL), 6);
}

static char tmpdir[64];

static const char *write_file(const char *name, const char *text)
{
	static char p[128];
	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static void reload_applies_and_keeps(void **st)
{
	(void)st;
	static struct sl_agent a;
	char err[256];
	memset(&a, 0, sizeof(a));
	strcpy(tmpdir, "/tmp/sl-reload-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	const char *p = write_file("a.yaml", "log_level: warn\napi:\n  unix_socket: \"\"\n");
	sl_config_defaults(&a.cfg);
	assert_int_equal(sl_config_load(&a.cfg, p, err, sizeof(err)), 0);
	assert_int_equal(sl_agent_modules_setup(&a, err, sizeof(err)), 0);
	int old_level = sl_log_get_level();

	/* unchanged file: nothing applied */
	assert_int_equal(sl_agent_reload(&a, p), 0);
	/* log_level, retention and stats.interval apply; store.path and a
	 * module key without a reconfigure hook need a restart */
	write_file("a.yaml", "log_level: error\napi:\n  unix_socket: \"\"\nstore:\n  max_age: 1h\n  path: /tmp/other.db\n"
			     "stats:\n  interval: 2s\nproc:\n  exec_rate: 3\n");
	int applied = sl_agent_reload(&a, p);
	assert_int_equal(sl_log_get_level(), SL_LOG_ERROR);
	assert_int_equal(a.cfg.log_level, SL_LOG_ERROR);
	assert_int_equal(a.cfg.store.max_age_s, 3600);
	assert_int_equal(a.cfg.stats.interval_ns, 2000000000ull);
	assert_string_equal(a.cfg.store.path, "/var/lib/sandlens/events.db"); /* kept */
	int en = 0;
	const void *pc = sl_config_module_by_name(&a.cfg, "proc", &en);
	assert_non_null(pc);
	static struct sl_config dflt;
	sl_config_defaults(&dflt);
	assert_memory_equal(pc, sl_config_module_by_name(&dflt, "proc", NULL), dflt.mods[0]->config.size);
	assert_int_equal(applied, 3); /* store.max_age, stats.interval, log_level */

	/* a broken file: -1, nothing changes */
	write_file("a.yaml", "log_level: loud\n");
	assert_int_equal(sl_agent_reload(&a, p), -1);
	assert_int_equal(a.cfg.log_level, SL_LOG_ERROR);
	assert_int_equal(sl_log_get_level(), SL_LOG_ERROR);
	write_file("a.yaml", "store:\n  nosuchkey: 1\n");
	assert_int_equal(sl_agent_reload(&a, p), -1);
	assert_int_equal(a.cfg.store.max_age_s, 3600);
	/* no --config: nothing */
	assert_int_equal(sl_agent_reload(&a, NULL), 0);
	sl_log_set_level(old_level);
	unlink(p);
	rmdir(tmpdir);
}

/* A datagram socket bound at name (path, or '@' abstract); returns its fd. */
static int listener(const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	size_t n = strlen(name);
	memcpy(sa.sun_path, name, n);
	if (name[0] == '@') {
		sa.sun_path[0] = 0;
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else {
		unlink(name);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	}
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	struct timeval tv = {.tv_sec = 2};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void notify_path_and_abstract(void **st)
{
	(void)st;
	char buf[256];
	char path[64];
	snprintf(path, sizeof(path), "/tmp/sl-notify-%d.sock", (int)getpid());
	int fd = listener(path);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(sl_sd_notify("READY=1\nSTATUS=running"), 1);
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = 0;
	assert_string_equal(buf, "READY=1\nSTATUS=running");
	assert_int_equal(sl_sd_notify_reloading(), 1);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = 0;
	unsigned long long us = 0;
	assert_int_equal(sscanf(buf, "RELOADING=1\nMONOTONIC_USEC=%llu", &us), 1);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	unsigned long long now = (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
	assert_true(us <= now && now - us < 2000000);
	close(fd);
	unlink(path);

	char abs[64];
	snprintf(abs, sizeof(abs), "@sl-notify-test-%d", (int)getpid());
	fd = listener(abs);
	setenv("NOTIFY_SOCKET", abs, 1);
	assert_int_equal(sl_sd_notify("STOPPING=1"), 1);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = 0;
	assert_string_equal(buf, "STOPPING=1");
	close(fd);

	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(sl_sd_notify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "", 1);
	assert_int_equal(sl_sd_notify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "relative.sock", 1);
	assert_int_equal(sl_sd_notify("READY=1"), -EINVAL);
	setenv("NOTIFY_SOCKET", path, 1); /* nobody listens any more */
	assert_true(sl_sd_notify("READY=1") < 0);
	unsetenv("NOTIFY_SOCKET");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(diff_names_changed_keys),
		cmocka_unit_test(reload_applies_and_keeps),
		cmocka_unit_test(notify_path_and_abstract),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
