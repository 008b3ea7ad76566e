/* sandlensd configuration loading (src/agent/config.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/config.h"
#include "common/units.h"
#include "modules/proc.h"
#include "modules/sched.h"

/* the modules' sections (tests may name modules) */
static inline struct sl_proc_cfg *PROC(struct sl_config *c)
{
	return sl_config_module_by_name(c, "proc", NULL);
}
static inline struct sl_sched_cfg *SCHED(struct sl_config *c)
{
	return sl_config_module_by_name(c, "sched", NULL);
}
#include "common/log.h"

static char path[64];

static int load(const char *yaml, struct sl_config *c, char *err, size_t len)
{
	strcpy(path, "/tmp/sl-config-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	sl_config_defaults(c);
	err[0] = 0;
	int rc = sl_config_load(c, path, err, len);
	unlink(path);
	return rc;
}

static void defaults(void **state)
{
	(void)state;
	struct sl_config c;
	sl_config_defaults(&c);
	assert_string_equal(c.api.listen, "127.0.0.1:9753");
	assert_int_equal(c.attribution.cache_size, 4096);
	assert_int_equal(c.attribution.positive_ttl_s, 300);
	assert_int_equal(c.attribution.negative_ttl_s, 30);
	assert_int_equal(c.store.max_age_s, 7 * 86400);
	assert_int_equal(c.store.max_bytes, 1ull << 30);
	assert_int_equal(PROC(&c)->ringbuf_size, 2u << 20);
}

static void full_file(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	const char *y = "log_level: debug\n"
			"store:\n  path: /tmp/x.db\n  max_age: 2d\n  max_rows: 500\n  max_bytes: 64MiB\n"
			"api:\n  listen: 127.0.0.1:1234\n  unix_socket: /run/s.sock\n"
			"attribution:\n  enabled: false\n  negative_ttl: 1m\n"
			"proc:\n  exec_rate: 7\n  exec_burst: 9\n  ringbuf_size: 8MiB\n";
	assert_int_equal(load(y, &c, err, sizeof(err)), 0);
	assert_int_equal(c.log_level, SL_LOG_DEBUG);
	assert_string_equal(c.store.path, "/tmp/x.db");
	assert_int_equal(c.store.max_age_s, 2 * 86400);
	assert_int_equal(c.store.max_rows, 500);
	assert_int_equal(c.store.max_bytes, 64u << 20);
	assert_string_equal(c.api.unix_socket, "/run/s.sock");
	assert_int_equal(c.attribution.enabled, 0);
	assert_int_equal(c.attribution.negative_ttl_s, 60);
	assert_int_equal(PROC(&c)->exec_rate, 7);
	assert_int_equal(PROC(&c)->exec_burst, 9);
	assert_int_equal(PROC(&c)->ringbuf_size, 8u << 20);
}

static void api_access_keys(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	sl_config_defaults(&c);
	assert_string_equal(c.api.unix_socket, "/run/sandlens/api.sock");
	assert_string_equal(c.api.token_file, "/run/sandlens/api.token");
	assert_string_equal(c.api.admin_group, "");
	assert_int_equal(c.api.admin_gid, (gid_t)-1);
	assert_int_equal(c.api.header_timeout_s, 10);
	assert_int_equal(c.api.max_client_connections, 16);
	const char *y = "api:\n  token_file: /etc/sl.token\n  admin_group: root\n  header_timeout: 3s\n"
			"  max_client_connections: 4\n";
	assert_int_equal(load(y, &c, err, sizeof(err)), 0);
	assert_string_equal(c.api.token_file, "/etc/sl.token");
	assert_string_equal(c.api.admin_group, "root");
	assert_int_equal(c.api.admin_gid, 0);
	assert_int_equal(c.api.header_timeout_s, 3);
	assert_int_equal(c.api.max_client_connections, 4);
	assert_int_equal(load("api:\n  token_file: \"\"\n", &c, err, sizeof(err)), 0);
	assert_string_equal(c.api.token_file, "");
	assert_int_equal(c.api.admin_gid, (gid_t)-1);
}

static void errors_name_the_key(void **state)
{
	(void)state;
	static const struct { const char *yaml, *want; } cases[] = {
		{"bogus: 1\n", "bogus: unknown key"},
		{"proc:\n  exec_rat: 3\n", "proc.exec_rat: unknown key"},
		{"nosuch:\n  a: 1\n", "nosuch: unknown key"},
		{"proc:\n  exec_rate: fast\n", "proc.exec_rate:"},
		{"proc:\n  exec_rate: -1\n", "proc.exec_rate:"},
		{"proc:\n  exec_burst: 0\n", "proc.exec_burst:"},
		{"proc:\n  ringbuf_size: 3MiB\n", "proc.ringbuf_size:"},
		{"attribution:\n  enabled: maybe\n", "attribution.enabled:"},
		{"log_level: loud\n", "log_level:"},
		{"store:\n  max_age: 5 weeks\n", "store.max_age:"},
		{"api:\n  listen: nowhere\n", "api.listen:"},
		{"api:\n  unix_socket: relative.sock\n", "api.unix_socket:"},
		{"api:\n  token_file: relative.token\n", "api.token_file: 'relative.token' is not an absolute path"},
		{"api:\n  admin_group: no-such-group-sl\n", "api.admin_group: no such group 'no-such-group-sl'"},
		{"api:\n  header_timeout: 0s\n", "api.header_timeout:"},
		{"api:\n  header_timeout: soon\n", "api.header_timeout:"},
		{"api:\n  max_client_connections: 0\n", "api.max_client_connections:"},
		{"api:\n  max_client_connections: 5000\n", "api.max_client_connections:"},
		{"api:\n  listen: [a, b]\n", "api.listen:"},
		{"- a\n- b\n", "top level"},
		{"store: {path: \"\"}\n", "store.path:"},
		{"api:\n  listen: 127.0.0.1:99999\n", "api.listen:"},
		{"api:\n  listen: \"127.0.0.1:\"\n", "api.listen:"},
		{"api:\n  listen: \":80\"\n", "api.listen:"},
		{"log_level: info\nlog_level: debug\n", "log_level: given more than once"},
		{"proc:\n  exec_rate: 1\nproc:\n  exec_burst: 2\n", "proc: given more than once"},
		/* a section that is not a mapping */
		{"store: 5\n", "store: must be a mapping (got a scalar)"},
		{"store: \"\"\n", "store: must be a mapping (got a scalar)"},
		{"api: [a, b]\n", "api: must be a mapping (got a sequence)"},
		{"store: {}\napi:\n  listen: 5\n", "api.listen:"},
		/* a single-valued key given a mapping or a sequence, or nothing */
		{"api:\n  listen:\n    host: a\n", "api.listen: expected a single value (got a mapping)"},
		{"log_level: [debug]\n", "log_level: expected a single value (got a sequence)"},
		{"store:\n  max_rows:\n", "store.max_rows: no value"},
		{"store:\n  max_bytes: 512KiB\n", "store.max_bytes: 524288 is below 1MiB (0 = no limit)"},
		{"store:\n  max_bytes: lots\n", "store.max_bytes: 'lots' is not a size"},
		{"proc:\n  enabled: ~\n", "proc.enabled: no value"},
		{"tasks:\n  store_path: ~\n", "tasks.store_path: no value"},
		{"api:\n  unix_socket: null\n", "api.unix_socket: no value"},
		{"tracefs: !!null x\n", "tracefs: no value"},
		{"tracefs: \"/sys/kernel/tr\\0acing\"\n", "tracefs: value contains a NUL byte"},
		/* a dotted key is not the nested one */
		{"store.path: /tmp/x.db\n", "store.path: unknown key"},
		{"store:\n  path: /a\nstore.path: /b\n", "store.path: unknown key"},
		/* enums */
		{"attribution:\n  v1_controller: bogus\n", "attribution.v1_controller: 'bogus' is not a cgroup v1 controller"},
		{"attribution:\n  v1_controller: \"\"\n", "attribution.v1_controller:"},
		{"attribution:\n  v1_controller: Memory\n", "attribution.v1_controller:"},
		{"attribution:\n  v1_controller: io\n", "attribution.v1_controller:"},
		{"attribution:\n  v1_controller: name=systemd\n", "attribution.v1_controller:"},
		{"log_level: INFO\n", "log_level:"},
		/* paths that must be given */
		{"tracefs: \"\"\n", "tracefs: '' is not an absolute path"},
		{"tracefs: sys/kernel/tracing\n", "tracefs:"},
		{"attribution:\n  runc_root: \"\"\n", "attribution.runc_root: '' is not an absolute path"},
		{"attribution:\n  runc_root: run/runc\n", "attribution.runc_root:"},
		{"attribution:\n  host_root: host\n", "attribution.host_root: 'host' is not an absolute path"},
		/* sched.watch: a list has at least one prefix; all/none are whole values */
		{"sched:\n  watch: \"\"\n", "sched.watch:"},
		{"sched:\n  watch: \" , ,\"\n", "sched.watch:"},
		{"sched:\n  watch: all,4f2a\n", "sched.watch:"},
		{"sched:\n  watch: 4f2a, none\n", "sched.watch:"},
		{"sched:\n  watch: 4f2a;rm\n", "sched.watch:"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sl_config c;
		char err[256];
		assert_int_equal(load(cases[i].yaml, &c, err, sizeof(err)), -1);
		if (!strstr(err, cases[i].want)) {
			print_error("case %zu: error '%s' does not contain '%s'\n", i, err, cases[i].want);
			fail();
		}
	}
}

static void syntax_error_has_line(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	assert_int_equal(load("a: 1\nb: [1, 2\n", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":3:"));
}

static void empty_file_is_defaults(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	assert_int_equal(load("", &c, err, sizeof(err)), 0);
	assert_int_equal(PROC(&c)->exec_rate, 50);
}

/* A section with every key commented out (or ~) means all defaults. */
static void empty_section_is_defaults(void **state)
{
	(void)state;
	static const char *const cases[] = {
		"api:\n  # listen: 127.0.0.1:1\n  # threads: 8\nproc:\n  exec_rate: 7\n",
		"api: ~\nproc:\n  exec_rate: 7\n",
		"api: null\nproc:\n  exec_rate: 7\n",
		"api: !!null\nproc:\n  exec_rate: 7\n",
		"proc:\n  exec_rate: 7\napi:\n",
		"store: {}\napi: {}\nproc: {exec_rate: 7}\n",
		"tasks:\nstats:\nsched:\nattribution:\napi:\nstore:\nproc:\n  exec_rate: 7\n",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sl_config c, d;
		char err[256];
		if (load(cases[i], &c, err, sizeof(err))) {
			print_error("case %zu: '%s'\n", i, err);
			fail();
		}
		sl_config_defaults(&d);
		PROC(&d)->exec_rate = 7;
		assert_memory_equal(&c, &d, sizeof(c));
	}
}

/* The file holds one YAML document; a second one is an error, not ignored. */
static void one_document_only(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	assert_int_equal(load("proc:\n  exec_rate: 7\n---\nproc:\n  exec_rate: 8\n", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":3: only one YAML document is allowed"));
	assert_int_equal(load("---\nlog_level: debug\n---\n", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "only one YAML document"));
	assert_int_equal(load("log_level: debug\n...\n---\nbogus: 1\n", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "only one YAML document"));
	/* a syntax error in the second document is still a syntax error */
	assert_int_equal(load("log_level: debug\n---\na: [1\n", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":4:"));
	/* explicit start and end markers around one document are fine */
	assert_int_equal(load("---\nlog_level: debug\n...\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.log_level, SL_LOG_DEBUG);
	/* a document of only comments, or a bare ---, is all defaults */
	assert_int_equal(load("# nothing\n", &c, err, sizeof(err)), 0);
	assert_int_equal(load("---\n# nothing\n", &c, err, sizeof(err)), 0);
	assert_int_equal(load("~\n", &c, err, sizeof(err)), 0);
	assert_int_equal(PROC(&c)->exec_rate, 50);
}

static void v1_controller_names(void **state)
{
	(void)state;
	static const char *const ok[] = {"memory", "cpu", "cpuacct", "pids", "blkio", "devices",
					  "freezer", "net_cls", "perf_event", "hugetlb", "cpuset",
					  "net_prio", "rdma", "misc"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct sl_config c;
		char err[256], y[128];
		snprintf(y, sizeof(y), "attribution:\n  v1_controller: %s\n", ok[i]);
		if (load(y, &c, err, sizeof(err))) {
			print_error("%s: '%s'\n", ok[i], err);
			fail();
		}
		assert_string_equal(c.attribution.v1_controller, ok[i]);
	}
	/* the error lists what is allowed */
	struct sl_config c;
	char err[512];
	assert_int_equal(load("attribution:\n  v1_controller: bogus\n", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "(memory|cpu|"));
	assert_non_null(strstr(err, "|misc)"));
	/* a short buffer truncates the list, never overruns */
	char small[40];
	assert_int_equal(load("attribution:\n  v1_controller: bogus\n", &c, small, sizeof(small)), -1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

/* Values that stay accepted: quoted "" where "" means none, lists. */
static void accepted_values(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	const char *y = "api:\n  listen: \"\"\n  unix_socket: /run/s.sock\n"
			"tasks:\n  store_path: \"\"\n"
			"sched:\n  watch: \"4f2a9c, 6d1e-pod\"\n"
			"tracefs: /sys/kernel/debug/tracing\n"
			"attribution:\n  runc_root: /run/containerd/runc/k8s.io\n  v1_controller: pids\n  host_root: /host\n";
	if (load(y, &c, err, sizeof(err))) {
		print_error("'%s'\n", err);
		fail();
	}
	assert_string_equal(c.api.listen, "");
	assert_string_equal(c.tasks.store_path, "");
	assert_string_equal(SCHED(&c)->watch, "4f2a9c, 6d1e-pod");
	assert_string_equal(c.tracefs, "/sys/kernel/debug/tracing");
	assert_string_equal(c.attribution.runc_root, "/run/containerd/runc/k8s.io");
	assert_string_equal(c.attribution.v1_controller, "pids");
	assert_string_equal(c.attribution.host_root, "/host");
	assert_int_equal(load("sched:\n  watch: none\n", &c, err, sizeof(err)), 0);
}

static void duration_and_bytes(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(sl_parse_duration_s("90", &v), 0);
	assert_int_equal(v, 90);
	assert_int_equal(sl_parse_duration_s("5m", &v), 0);
	assert_int_equal(v, 300);
	assert_int_equal(sl_parse_duration_s("7d", &v), 0);
	assert_int_equal(v, 604800);
	assert_int_equal(sl_parse_duration_s("5x", &v), -1);
	assert_int_equal(sl_parse_duration_s("", &v), -1);
	assert_int_equal(sl_parse_duration_ns("500ms", &v), 0);
	assert_int_equal(v, 500000000);
	assert_int_equal(sl_parse_duration_ns("1h", &v), 0);
	assert_int_equal(v, 3600000000000ull);
	assert_int_equal(sl_parse_duration_ns("6000000h", &v), -1); /* overflows u64 ns */
	assert_int_equal(sl_parse_duration_ns("1d", &v), 0); /* days too (docs/CONFIG.md) */
	assert_true(v == 86400000000000ull);
	assert_int_equal(sl_parse_duration_ns("1w", &v), -1);
	struct sl_config c;
	char err[256];
	assert_int_equal(load("stats:\n  interval: 1h\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.stats.interval_ns, 3600000000000ull);
	assert_int_equal(sl_parse_bytes("4MiB", &v), 0);
	assert_int_equal(v, 4u << 20);
	assert_int_equal(sl_parse_bytes("99999999999999999999", &v), -1);
	assert_int_equal(sl_parse_bytes("1TiB", &v), -1);
}

/* n nested flow mappings under store ("store: {a: {a: ... 1}}") */
static char *nested_flow(size_t n)
{
	char *y = malloc(16 + n * 5);
	assert_non_null(y);
	char *w = y + sprintf(y, "store: ");
	for (size_t i = 0; i < n; i++)
		w += sprintf(w, "{a: ");
	*w++ = '1';
	memset(w, '}', n);
	strcpy(w + n, "\n");
	return y;
}

/* Deep nesting is refused before libyaml loads it (its loader is quadratic
 * in the depth: 40k levels took ~20 s); the message names the limit. */
static void depth_limit(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	/* at the limit: loaded, then refused for its (unknown) key, not its depth */
	char *y = nested_flow(SL_CONFIG_MAX_DEPTH - 1); /* + the top-level mapping */
	assert_int_equal(load(y, &c, err, sizeof(err)), -1);
	assert_null(strstr(err, "depth limit"));
	assert_non_null(strstr(err, "store.a"));
	free(y);
	y = nested_flow(SL_CONFIG_MAX_DEPTH);
	assert_int_equal(load(y, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "depth limit"));
	assert_non_null(strstr(err, "32"));
	assert_non_null(strstr(err, ":1:"));
	free(y);
	y = nested_flow(10000);
	assert_int_equal(load(y, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "depth limit"));
	free(y);
	/* block style, one level per line: the line of the first level too deep */
	size_t n = 1000, cap = n * (n + 8); /* 0.5 MB, under the size limit */
	y = malloc(cap);
	assert_non_null(y);
	char *w = y;
	for (size_t i = 0; i < n; i++) {
		memset(w, ' ', i);
		w += i;
		w += sprintf(w, i == n - 1 ? "a: 1\n" : "a:\n");
	}
	assert_int_equal(load(y, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "depth limit"));
	assert_non_null(strstr(err, ":33:"));
	free(y);
	/* sequences count too */
	char seq[256];
	memset(seq, '[', 100);
	memset(seq + 100, ']', 100);
	strcpy(seq + 200, "\n");
	sl_config_defaults(&c);
	assert_int_equal(sl_config_load_buf(&c, "mem.yaml", seq, strlen(seq), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "mem.yaml:1:"));
	assert_non_null(strstr(err, "depth limit"));
}

/* The in-memory loader: same answers as the file loader, input not
 * NUL-terminated, a size limit. */
static void load_from_buffer(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	const char y[] = "proc:\n  exec_rate: 7\nXXXX";
	sl_config_defaults(&c);
	assert_int_equal(sl_config_load_buf(&c, "b", y, sizeof(y) - 5, err, sizeof(err)), 0);
	assert_int_equal(PROC(&c)->exec_rate, 7);
	size_t big = SL_CONFIG_MAX_BYTES + 1;
	char *b = malloc(big);
	assert_non_null(b);
	memset(b, '#', big);
	assert_int_equal(sl_config_load_buf(&c, "big.yaml", b, big, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "size limit"));
	free(b);
}

/* mem.missing_tracepoints names only tracepoints the mem module hooks:
 * anything else is refused naming the key, the name and the known ones. */
static void mem_missing_tracepoints(void **state)
{
	(void)state;
	struct sl_config c;
	char err[512];
	assert_int_equal(load("mem:\n  missing_tracepoints: [mm_vmscan_throttled, mm_vmscan_memcg_reclaim_begin]\n", &c,
			      err, sizeof(err)),
			 0);
	assert_int_equal(load("mem:\n  missing_tracepoints: [mm_vmscan_throttled, nonexistent_tp]\n", &c, err,
			      sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "mem.missing_tracepoints"));
	assert_non_null(strstr(err, "nonexistent_tp"));
	assert_non_null(strstr(err, "mm_vmscan_direct_reclaim_begin")); /* the known ones, first ... */
	assert_non_null(strstr(err, "cgroup_rmdir"));                   /* ... to last */
	/* a short buffer still names the key */
	char small[48];
	assert_int_equal(load("mem:\n  missing_tracepoints: [x]\n", &c, small, sizeof(small)), -1);
	assert_non_null(strstr(small, "mem.missing_tracepoints"));
}

/* Messages (finding 5): a range error of a plain number names the unit it
 * was read in; a key with a NUL byte is reported as such (was "unknown key"
 * naming the valid key before the NUL); control bytes of keys and values are
 * escaped, never echoed raw. */
static void messages(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	static const struct {
		const char *yaml, *want;
	} cases[] = {
		{"mem:\n  stall_threshold: 5\n", "mem.stall_threshold: 5 (ns) out of range [1us, 1m]"},
		{"sched:\n  delay_threshold: 999\n", "sched.delay_threshold: 999 (ns) out of range [1us, 1m]"},
		{"mem:\n  stall_threshold: 90s\n", "mem.stall_threshold: 90s out of range [1us, 1m]"},
		{"proc:\n  ringbuf_size: 100\n", "proc.ringbuf_size: 100 (bytes) out of range [4KiB, 1GiB]"},
		{"stats:\n  interval: 5\n", "stats.interval: 5 (ns) out of range"},
		{"api:\n  header_timeout: 7200\n", "api.header_timeout: 7200 (s) out of range"},
		{"mem:\n  \"stall_rate\\0x\": 1\n", "mem.stall_rate\\x00x: the key contains a NUL byte"},
		{"\"api\\0\": 1\n", "api\\x00: the key contains a NUL byte"},
		{"mem:\n  \"a\\e[2Jb\": 1\n", "mem.a\\x1b[2Jb: unknown key"},
		{"\"\\e]0;t\\a\": 1\n", "\\x1b]0;t\\x07: unknown key"},
		{"log_level: \"x\\e[2J\"\n", "log_level: 'x\\x1b[2J' is not one of"},
		{"mem:\n  stall_threshold: \"1\\u009bs\"\n", "mem.stall_threshold: '1\\u{009b}s' is not a duration"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(load(cases[i].yaml, &c, err, sizeof(err)), -1);
		if (!strstr(err, cases[i].want)) {
			print_error("case %zu: error '%s' does not contain '%s'\n", i, err, cases[i].want);
			fail();
		}
		for (const unsigned char *u = (const unsigned char *)err; *u; u++)
			if (*u < 0x20 || *u == 0x7f || (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f)) {
				print_error("case %zu: raw control byte in '%s'\n", i, err);
				fail();
			}
	}
	/* a plain number of an ns key is nanoseconds, as documented */
	assert_int_equal(load("mem:\n  stall_threshold: 2000\n", &c, err, sizeof(err)), 0);
}

/* The pressure section: ratios, defaults, and errors naming the key. */
static void pressure_keys(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	sl_config_defaults(&c);
	assert_int_equal(c.pressure.enabled, 1);
	assert_true(c.pressure.cpu_budget > 0.099 && c.pressure.cpu_budget < 0.101);
	assert_int_equal(c.pressure.memory_budget, 256ull << 20);
	assert_int_equal(c.pressure.cgroup.enabled, 0);
	assert_int_equal(load("pressure:\n  cpu_budget: 0.001\n  memory_budget: 1GiB\n  window: 2s\n"
			      "  dwell_up: 1s\n  dwell_down: 500ms\n  release_ratio: .5\n  rate_shift: 8\n"
			      "  cgroup:\n    enabled: true\n    name: a/sandlens-1\n    cpu_limit: 0.5\n"
			      "    memory_limit: 64MiB\n",
			      &c, err, sizeof(err)),
			 0);
	assert_true(c.pressure.cpu_budget > 0.00099 && c.pressure.cpu_budget < 0.00101);
	assert_int_equal(c.pressure.memory_budget, 1ull << 30);
	assert_int_equal(c.pressure.window_ns, 2000000000ull);
	assert_int_equal(c.pressure.dwell_down_ns, 500000000ull);
	assert_true(c.pressure.release_ratio > 0.49 && c.pressure.release_ratio < 0.51);
	assert_int_equal(c.pressure.rate_shift, 8);
	assert_int_equal(c.pressure.cgroup.enabled, 1);
	assert_string_equal(c.pressure.cgroup.name, "a/sandlens-1");
	assert_int_equal(c.pressure.cgroup.memory_limit, 64ull << 20);
	static const struct { const char *yaml, *want; } cases[] = {
		{"pressure:\n  cpu_budget: 0\n", "pressure.cpu_budget: 0 out of range"},
		{"pressure:\n  cpu_budget: -0.1\n", "pressure.cpu_budget: '-0.1' is not a decimal number"},
		{"pressure:\n  cpu_budget: 1e-3\n", "pressure.cpu_budget: '1e-3' is not a decimal number"},
		{"pressure:\n  cpu_budget: nan\n", "pressure.cpu_budget:"},
		{"pressure:\n  cpu_budget: 0.1.2\n", "pressure.cpu_budget:"},
		{"pressure:\n  cpu_budget: 10%\n", "pressure.cpu_budget:"},
		{"pressure:\n  release_ratio: 1\n", "pressure.release_ratio: 1 out of range"},
		{"pressure:\n  queue_high: 1.5\n", "pressure.queue_high:"},
		{"pressure:\n  window: 10ms\n", "pressure.window:"},
		{"pressure:\n  rate_shift: 9\n", "pressure.rate_shift:"},
		{"pressure:\n  metrics_slowdown: 1\n", "pressure.metrics_slowdown:"},
		{"pressure:\n  memory_budget: lots\n", "pressure.memory_budget:"},
		{"pressure:\n  cgroup: 1\n", "pressure.cgroup: must be a mapping"},
		{"pressure:\n  cgroup:\n    bogus: 1\n", "pressure.cgroup.bogus: unknown key"},
		{"pressure:\n  cgroup:\n    enabled: true\n    name: /abs\n", "pressure.cgroup.name:"},
		{"pressure:\n  cgroup:\n    enabled: true\n    name: a/../b\n", "pressure.cgroup.name:"},
		{"pressure:\n  cgroup:\n    enabled: true\n    name: \"\"\n", "pressure.cgroup.name:"},
		{"pressure:\n  cgroup:\n    enabled: true\n    name: a b\n", "pressure.cgroup.name:"},
		{"pressure:\n  cgroup:\n    enabled: true\n    memory_limit: 1MiB\n", "pressure.cgroup.memory_limit:"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(load(cases[i].yaml, &c, err, sizeof(err)), -1);
		if (!strstr(err, cases[i].want)) {
			print_error("case %zu: error '%s' does not contain '%s'\n", i, err, cases[i].want);
			fail();
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(full_file),
		cmocka_unit_test(api_access_keys),
		cmocka_unit_test(errors_name_the_key),
		cmocka_unit_test(syntax_error_has_line),
		cmocka_unit_test(empty_file_is_defaults),
		cmocka_unit_test(empty_section_is_defaults),
		cmocka_unit_test(one_document_only),
		cmocka_unit_test(v1_controller_names),
		cmocka_unit_test(accepted_values),
		cmocka_unit_test(duration_and_bytes),
		cmocka_unit_test(depth_limit),
		cmocka_unit_test(load_from_buffer),
		cmocka_unit_test(pressure_keys),
		cmocka_unit_test(mem_missing_tracepoints),
		cmocka_unit_test(messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
