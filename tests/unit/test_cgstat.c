/* Unit tests for src/cgroup/cgstat*.c (STATS-1 readers).
 *
 * 1. Every case under ../shared/cases/{memory,cpu,psi} (SL_SHARED_CASES
 *    overrides the root), read in place, and every case under
 *    tests/unit/cases/{memory,cpu,psi,io} (same format), through the pure
 *    text functions. Cases are discovered by their .json; each .expected key
 *    that names a figure is compared; a numeric key the test does not know
 *    fails the case (so a new figure cannot pass silently).
 * 2. Inline tests of edge cases of each parser.
 * 3. Fixture directories in mkdtemp (a fake v2 cgroup, a fake v1 set) read
 *    through sl_cgstat_read_v2 / sl_cgstat_read_v1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shared_cases.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cgstat.h"

/* The shared cases state USER_HZ = 100 ("assumption" in c03). */
#define CASE_CLK_TCK 100

/* ------------------------------------------------------------ helpers */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			char *nb = realloc(buf, cap);
			assert_non_null(nb);
			buf = nb;
		}
		size_t r = fread(buf + len, 1, cap - len - 1, f);
		len += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char *shared_root(void) { return sl_shared_cases_root(); }

#define OWN_ROOT "tests/unit/cases"

/* One case: its input files keyed by kernel file name. */
#define MAX_INPUTS 12
struct kcase {
	char id[256];
	int n;
	char name[MAX_INPUTS][96]; /* kernel file name, e.g. "memory.stat" */
	char *text[MAX_INPUTS];
	json_t *expected;
	int fails;
};

static const char *input(struct kcase *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->name[i], name) == 0)
			return c->text[i];
	return NULL;
}

static void case_fail(struct kcase *c, const char *fmt, ...)
{
	va_list ap;
	char msg[512];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	print_error("case %s: %s\n", c->id, msg);
	c->fails++;
}

/* Load <dir>/<id>.json, its input files and <id>.expected. */
static int load_case(const char *dir, const char *id, struct kcase *c)
{
	char path[1024];
	json_error_t jerr;
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", id);

	snprintf(path, sizeof(path), "%s/%s.json", dir, id);
	json_t *meta = json_load_file(path, 0, &jerr);
	if (!meta) {
		print_error("%s: %s\n", path, jerr.text);
		return -1;
	}
	json_t *files = json_object_get(meta, "input_files");
	size_t i;
	json_t *v;
	size_t prefix = strlen(id) + strlen(".in.");
	json_array_foreach(files, i, v) {
		const char *fn = json_string_value(v);
		if (!fn || c->n >= MAX_INPUTS || strlen(fn) <= prefix ||
		    strncmp(fn, id, strlen(id)) != 0 || strncmp(fn + strlen(id), ".in.", 4) != 0) {
			print_error("%s: bad input file entry\n", path);
			json_decref(meta);
			return -1;
		}
		snprintf(c->name[c->n], sizeof(c->name[0]), "%s", fn + prefix);
		snprintf(path, sizeof(path), "%s/%s", dir, fn);
		c->text[c->n] = slurp(path);
		if (!c->text[c->n]) {
			print_error("cannot read %s\n", path);
			json_decref(meta);
			return -1;
		}
		c->n++;
	}
	json_decref(meta);
	snprintf(path, sizeof(path), "%s/%s.expected", dir, id);
	c->expected = json_load_file(path, 0, &jerr);
	if (!c->expected) {
		print_error("%s: %s\n", path, jerr.text);
		return -1;
	}
	return 0;
}

static void free_case(struct kcase *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->text[i]);
	json_decref(c->expected);
}

/* Compare one figure: expected JSON (integer, null = unknown, "max" =
 * unlimited) against (known, value). Returns 1 if compared. */
static void cmp_u64(struct kcase *c, const char *key, json_t *want, bool known, uint64_t got)
{
	if (json_is_null(want)) {
		if (known)
			case_fail(c, "%s: want unknown, got %llu", key, (unsigned long long)got);
		return;
	}
	if (json_is_string(want) && strcmp(json_string_value(want), "max") == 0) {
		if (!known || got != SL_CGSTAT_UNLIMITED)
			case_fail(c, "%s: want max, got %s %llu", key, known ? "known" : "unknown",
				  (unsigned long long)got);
		return;
	}
	if (!json_is_integer(want)) {
		case_fail(c, "%s: expected value is neither integer, null nor \"max\"", key);
		return;
	}
	uint64_t w = (uint64_t)json_integer_value(want);
	if (!known)
		case_fail(c, "%s: want %llu, got unknown", key, (unsigned long long)w);
	else if (got != w)
		case_fail(c, "%s: want %llu, got %llu", key, (unsigned long long)w,
			  (unsigned long long)got);
}

struct fig {
	const char *key;
	bool known;
	uint64_t val;
};

/* Walk the expected object: keys in figs[] are compared; "malformed" is
 * compared with the parser's count; string-valued keys not in figs are
 * explanations; keys in ignore[] are documented non-figures; any other key
 * fails. Returns the number of comparisons. */
static int compare_expected(struct kcase *c, const struct fig *figs, size_t nfig,
			    const char *const *ignore, int malformed)
{
	const char *key;
	json_t *want;
	int compared = 0;

	json_object_foreach(c->expected, key, want) {
		bool done = false;
		for (size_t i = 0; i < nfig && !done; i++) {
			if (strcmp(figs[i].key, key) == 0) {
				cmp_u64(c, key, want, figs[i].known, figs[i].val);
				compared++;
				done = true;
			}
		}
		if (done)
			continue;
		if (strcmp(key, "malformed") == 0) {
			if (json_integer_value(want) != malformed)
				case_fail(c, "malformed: want %lld, got %d",
					  (long long)json_integer_value(want), malformed);
			compared++;
			continue;
		}
		for (const char *const *ig = ignore; ig && *ig && !done; ig++)
			done = strcmp(*ig, key) == 0;
		if (done || json_is_string(want))
			continue;
		case_fail(c, "expected key '%s' is not a figure this test knows", key);
	}
	if (compared == 0)
		case_fail(c, "nothing compared");
	return compared;
}

/* Input files the readers deliberately do not use (documented in STATS.md). */
static bool unused_input(const char *name)
{
	static const char *const unused[] = {
		"cpuacct.usage_all",    /* per-cpu user/system ns: not a STATS-1 figure */
		"cpuacct.usage_percpu", /* per-cpu usage: not a STATS-1 figure */
		NULL,
	};
	for (const char *const *u = unused; *u; u++)
		if (strcmp(*u, name) == 0)
			return true;
	return false;
}

static void check_inputs_known(struct kcase *c, const char *const *known)
{
	for (int i = 0; i < c->n; i++) {
		bool ok = unused_input(c->name[i]);
		for (const char *const *k = known; *k && !ok; k++)
			ok = strcmp(*k, c->name[i]) == 0;
		if (!ok)
			case_fail(c, "input file '%s' is not read by any reader", c->name[i]);
	}
}

/* ---------------------------------------------------- per-kind runners */

static void run_memory(struct kcase *c)
{
	static const char *const files[] = {
		"memory.current",        "memory.stat",          "memory.peak",
		"memory.max",            "memory.swap.current",  "memory.events",
		"memory.usage_in_bytes", "memory.max_usage_in_bytes",
		"memory.limit_in_bytes", "memory.oom_control",   NULL,
	};
	struct sl_cgstat_mem m;
	int bad;
	bool v1 = input(c, "memory.usage_in_bytes") || input(c, "memory.max_usage_in_bytes") ||
		  input(c, "memory.limit_in_bytes") || input(c, "memory.oom_control");

	check_inputs_known(c, files);
	if (v1) {
		struct sl_cgmem_v1_text t = {
			.usage_in_bytes = input(c, "memory.usage_in_bytes"),
			.stat = input(c, "memory.stat"),
			.max_usage_in_bytes = input(c, "memory.max_usage_in_bytes"),
			.limit_in_bytes = input(c, "memory.limit_in_bytes"),
			.oom_control = input(c, "memory.oom_control"),
		};
		bad = sl_cgstat_mem_v1_text(&t, &m);
	} else {
		struct sl_cgmem_v2_text t = {
			.current = input(c, "memory.current"),
			.stat = input(c, "memory.stat"),
			.peak = input(c, "memory.peak"),
			.max = input(c, "memory.max"),
			.swap_current = input(c, "memory.swap.current"),
			.events = input(c, "memory.events"),
		};
		bad = sl_cgstat_mem_v2_text(&t, &m);
	}
	/* Invariants, whatever the case says. */
	if ((m.known & SL_MEM_WORKING_SET) && m.working_set_bytes > m.usage_bytes)
		case_fail(c, "working set %llu > usage %llu", (unsigned long long)m.working_set_bytes,
			  (unsigned long long)m.usage_bytes);
	if (!(m.known & SL_MEM_PEAK) && (m.peak_bytes != 0 || !(m.flags & SL_MEMF_NO_PEAK)))
		case_fail(c, "absent peak must be 0 with SL_MEMF_NO_PEAK");

	const struct fig figs[] = {
		{"usage_bytes", m.known & SL_MEM_USAGE, m.usage_bytes},
		{"working_set_bytes", m.known & SL_MEM_WORKING_SET, m.working_set_bytes},
		{"inactive_file_bytes", m.known & SL_MEM_INACTIVE_FILE, m.inactive_file_bytes},
		{"peak_bytes", m.known & SL_MEM_PEAK, m.peak_bytes},
		{"limit_bytes", m.known & SL_MEM_LIMIT, m.limit_bytes},
		{"cache_bytes", m.known & SL_MEM_CACHE, m.cache_bytes},
		{"rss_bytes", m.known & SL_MEM_RSS, m.rss_bytes},
		{"swap_bytes", m.known & SL_MEM_SWAP, m.swap_bytes},
		{"oom_events", m.known & SL_MEM_OOM, m.oom_events},
		{"oom_kill_events", m.known & SL_MEM_OOM_KILL, m.oom_kill_events},
	};
	static const char *const ignore[] = {"flags", NULL};
	compare_expected(c, figs, sizeof(figs) / sizeof(figs[0]), ignore, bad);

	/* "flags": the exact set of SL_MEMF_* names, when given */
	json_t *want = json_object_get(c->expected, "flags");
	if (want) {
		static const struct {
			const char *name;
			uint32_t bit;
		} names[] = {
			{"usage_from_stat", SL_MEMF_USAGE_FROM_STAT},
			{"ws_no_inactive", SL_MEMF_WS_NO_INACTIVE},
			{"ws_floored", SL_MEMF_WS_FLOORED},
			{"no_peak", SL_MEMF_NO_PEAK},
		};
		uint32_t wf = 0;
		size_t i;
		json_t *v;
		json_array_foreach(want, i, v) {
			bool found = false;
			for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
				if (json_is_string(v) && strcmp(json_string_value(v), names[k].name) == 0) {
					wf |= names[k].bit;
					found = true;
				}
			}
			if (!found)
				case_fail(c, "flags: unknown flag name");
		}
		if (wf != m.flags)
			case_fail(c, "flags: want 0x%x, got 0x%x", wf, m.flags);
	}
}

static void run_cpu(struct kcase *c)
{
	static const char *const files[] = {"cpu.stat", "cpuacct.usage", "cpuacct.stat", NULL};
	static const char *const ignore[] = {
		"usage_ns_raw",          /* the raw input, not a figure */
		"throttled_time_ns_raw", /* the raw input, not a figure */
		"percpu_count",          /* cpuacct.usage_percpu is not read (STATS.md) */
		NULL,
	};
	struct sl_cgstat_cpu u;
	int bad;
	json_t *hz = json_object_get(c->expected, "clk_tck");
	long clk = json_is_integer(hz) ? (long)json_integer_value(hz) : CASE_CLK_TCK;

	check_inputs_known(c, files);
	if (input(c, "cpuacct.usage") || input(c, "cpuacct.stat")) {
		struct sl_cgcpu_v1_text t = {
			.cpuacct_usage = input(c, "cpuacct.usage"),
			.cpuacct_stat = input(c, "cpuacct.stat"),
			.cpu_stat = input(c, "cpu.stat"),
		};
		bad = sl_cgstat_cpu_v1_text(&t, clk, &u);
	} else {
		bad = sl_cgstat_cpu_v2_text(input(c, "cpu.stat"), &u);
	}
	const struct fig figs[] = {
		{"usage_usec", u.known & SL_CPU_USAGE, u.usage_usec},
		{"user_usec", u.known & SL_CPU_USER, u.user_usec},
		{"system_usec", u.known & SL_CPU_SYSTEM, u.system_usec},
		{"user_usec_from_cpuacct_stat", u.known & SL_CPU_USER, u.user_usec},
		{"system_usec_from_cpuacct_stat", u.known & SL_CPU_SYSTEM, u.system_usec},
		{"nr_periods", u.known & SL_CPU_NR_PERIODS, u.nr_periods},
		{"nr_throttled", u.known & SL_CPU_NR_THROTTLED, u.nr_throttled},
		{"throttled_usec", u.known & SL_CPU_THROTTLED, u.throttled_usec},
		{"clk_tck", true, (uint64_t)clk},
	};
	compare_expected(c, figs, sizeof(figs) / sizeof(figs[0]), ignore, bad);
}

static void cmp_psi_line(struct kcase *c, const char *which, json_t *want, bool has,
			 const struct sl_psi_line *l)
{
	if (!want) {
		case_fail(c, "%s: missing from .expected", which);
		return;
	}
	if (json_is_null(want)) {
		if (has)
			case_fail(c, "%s: want absent, got a line", which);
		return;
	}
	if (!has) {
		case_fail(c, "%s: want a line, got absent", which);
		return;
	}
	const struct {
		const char *k;
		double v;
	} avgs[] = {{"avg10", l->avg10}, {"avg60", l->avg60}, {"avg300", l->avg300}};
	for (size_t i = 0; i < 3; i++) {
		json_t *w = json_object_get(want, avgs[i].k);
		if (!json_is_number(w))
			case_fail(c, "%s.%s missing", which, avgs[i].k);
		else if (fabs(json_number_value(w) - avgs[i].v) > 1e-9)
			case_fail(c, "%s.%s: want %.4f, got %.4f", which, avgs[i].k,
				  json_number_value(w), avgs[i].v);
	}
	char key[64];
	snprintf(key, sizeof(key), "%s.total_us", which);
	cmp_u64(c, key, json_object_get(want, "total_us"), true, l->total_usec);
}

static void run_psi(struct kcase *c)
{
	struct sl_cgstat_psi p;
	if (c->n != 1) {
		case_fail(c, "psi case wants exactly one input file");
		return;
	}
	int bad = sl_cgparse_psi(c->text[0], &p);
	cmp_psi_line(c, "some", json_object_get(c->expected, "some"), p.has_some, &p.some);
	cmp_psi_line(c, "full", json_object_get(c->expected, "full"), p.has_full, &p.full);
	json_t *m = json_object_get(c->expected, "malformed");
	if (m && json_integer_value(m) != bad)
		case_fail(c, "malformed: want %lld, got %d", (long long)json_integer_value(m), bad);
}

static void run_io(struct kcase *c)
{
	static const char *const files[] = {
		"io.stat",
		"blkio.throttle.io_service_bytes",
		"blkio.throttle.io_serviced",
		"blkio.throttle.io_service_bytes_recursive",
		"blkio.throttle.io_serviced_recursive",
		NULL,
	};
	static const char *const ignore[] = {"devices", NULL};
	struct sl_cgstat_io io;
	int bad;

	check_inputs_known(c, files);
	if (input(c, "io.stat")) {
		bad = sl_cgstat_io_v2_text(input(c, "io.stat"), &io);
	} else {
		const char *b = input(c, "blkio.throttle.io_service_bytes_recursive");
		const char *o = input(c, "blkio.throttle.io_serviced_recursive");
		bad = sl_cgstat_io_v1_text(b ? b : input(c, "blkio.throttle.io_service_bytes"),
					   o ? o : input(c, "blkio.throttle.io_serviced"), &io);
	}
	bool kb = io.known & SL_IO_BYTES, ko = io.known & SL_IO_OPS;
	const struct fig figs[] = {
		{"rbytes", kb, io.rbytes}, {"wbytes", kb, io.wbytes},
		{"rios", ko, io.rios},     {"wios", ko, io.wios},
		{"ndev", true, io.ndev},   {"ndev_dropped", true, io.ndev_dropped},
	};
	compare_expected(c, figs, sizeof(figs) / sizeof(figs[0]), ignore, bad);

	json_t *devs = json_object_get(c->expected, "devices");
	if (!devs)
		return;
	if (json_array_size(devs) != io.ndev)
		case_fail(c, "devices: want %zu rows, got %u", json_array_size(devs), io.ndev);
	size_t i;
	json_t *d;
	json_array_foreach(devs, i, d) {
		if (i >= io.ndev)
			break;
		const struct sl_cgstat_iodev *r = &io.dev[i];
		char dev[32], key[64];
		snprintf(dev, sizeof(dev), "%u:%u", r->major, r->minor);
		const char *wdev = json_string_value(json_object_get(d, "dev"));
		if (!wdev || strcmp(wdev, dev) != 0)
			case_fail(c, "devices[%zu]: want %s, got %s", i, wdev ? wdev : "?", dev);
		const struct fig df[] = {
			{"rbytes", kb, r->rbytes}, {"wbytes", kb, r->wbytes},
			{"rios", ko, r->rios},     {"wios", ko, r->wios},
		};
		for (size_t k = 0; k < 4; k++) {
			json_t *w = json_object_get(d, df[k].key);
			snprintf(key, sizeof(key), "devices[%zu].%s", i, df[k].key);
			if (w)
				cmp_u64(c, key, w, df[k].known, df[k].val);
		}
	}
}

static int cmp_str(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Run every case of <root>/<kind>; returns the number of cases run. */
static int run_kind(const char *root, const char *kind, void (*run)(struct kcase *), int *fails)
{
	char dir[512];
	struct dirent **ents;
	int n, ran = 0;

	snprintf(dir, sizeof(dir), "%s/%s", root, kind);
	n = scandir(dir, &ents, NULL, cmp_str);
	if (n < 0) {
		print_error("cannot list %s: %s\n", dir, strerror(errno));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		size_t l = strlen(nm);
		if (l > 5 && strcmp(nm + l - 5, ".json") == 0) {
			char id[256];
			struct kcase c;
			snprintf(id, sizeof(id), "%.*s", (int)(l - 5), nm);
			if (load_case(dir, id, &c) == 0) {
				run(&c);
				*fails += c.fails;
				ran++;
			} else {
				(*fails)++;
			}
			free_case(&c);
		}
		free(ents[i]);
	}
	free(ents);
	print_message("%s: %d case(s)\n", dir, ran);
	return ran;
}

static void shared_memory(void **s)
{
	(void)s;
	int fails = 0;
	assert_true(run_kind(shared_root(), "memory", run_memory, &fails) >= 3);
	assert_int_equal(fails, 0);
}

static void shared_cpu(void **s)
{
	(void)s;
	int fails = 0;
	assert_true(run_kind(shared_root(), "cpu", run_cpu, &fails) >= 3);
	assert_int_equal(fails, 0);
}

static void shared_psi(void **s)
{
	(void)s;
	int fails = 0;
	assert_true(run_kind(shared_root(), "psi", run_psi, &fails) >= 4);
	assert_int_equal(fails, 0);
}

static void own_cases(void **s)
{
	(void)s;
	int fails = 0;
	assert_true(run_kind(OWN_ROOT, "memory", run_memory, &fails) >= 1);
	assert_true(run_kind(OWN_ROOT, "cpu", run_cpu, &fails) >= 1);
	assert_true(run_kind(OWN_ROOT, "psi", run_psi, &fails) >= 1);
	assert_true(run_kind(OWN_ROOT, "io", run_io, &fails) >= 1);
	assert_int_equal(fails, 0);
}

/* ------------------------------------------------------ inline parsers */

static void parse_u64_edges(void **s)
{
	(void)s;
	uint64_t v = 7;
	assert_int_equal(sl_cgparse_u64("123\n", &v), 0);
	assert_int_equal(v, 123);
	assert_int_equal(sl_cgparse_u64(" 42 \n", &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(sl_cgparse_u64("max\n", &v), 1);
	assert_true(v == SL_CGSTAT_UNLIMITED);
	assert_int_equal(sl_cgparse_u64("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	v = 5;
	assert_int_equal(sl_cgparse_u64("18446744073709551616", &v), -EINVAL);
	assert_int_equal(sl_cgparse_u64("-1\n", &v), -EINVAL);
	assert_int_equal(sl_cgparse_u64("", &v), -EINVAL);
	assert_int_equal(sl_cgparse_u64("\n", &v), -EINVAL);
	assert_int_equal(sl_cgparse_u64("12 13\n", &v), -EINVAL);
	assert_int_equal(sl_cgparse_u64("12a", &v), -EINVAL);
	assert_int_equal(sl_cgparse_u64("maxi", &v), -EINVAL);
	assert_int_equal(sl_cgparse_u64(NULL, &v), -EINVAL);
	assert_int_equal(v, 5); /* untouched on error */
}

static void parse_kv_malformed(void **s)
{
	(void)s;
	static const char *const keys[] = {"anon", "file", "inactive_file"};
	uint64_t v[3] = {0}, f = 0;
	const char *t = "anon x\n"          /* bad value */
			"file 12 13\n"      /* trailing junk */
			"\n"                /* blank: not counted */
			"inactive_file 5\n" /* good */
			"nokey\n"           /* no value */
			"anon -3\n"         /* negative */
			"file 99999999999999999999\n" /* overflow */
			"other 1\r\n"       /* good, CR tolerated */
			"anon 7";           /* unterminated last line, good */
	assert_int_equal(sl_cgparse_kv(t, keys, 3, v, &f), 5);
	assert_int_equal(f, 1u | 4u);
	assert_int_equal(v[0], 7);
	assert_int_equal(v[2], 5);
	f = 0;
	assert_int_equal(sl_cgparse_kv(NULL, keys, 3, v, &f), 0);
	assert_int_equal(f, 0);
	/* a key must match whole, not as a prefix */
	f = 0;
	assert_int_equal(sl_cgparse_kv("anon_thp 5\nfile_mapped 3\n", keys, 3, v, &f), 0);
	assert_int_equal(f, 0);
}

static void psi_edges(void **s)
{
	(void)s;
	struct sl_cgstat_psi p;
	/* exact decimal rounding, 64-bit total, junk lines counted */
	const char *t = "some avg10=1.71 avg60=100.00 avg300=0.01 total=18446744073709551615\n"
			"bogus line\n"
			"full avg10=1.00 avg60=1.01\n"
			"full avg10=1,5 avg60=1.01 avg300=1.00 total=1\n";
	assert_int_equal(sl_cgparse_psi(t, &p), 3);
	assert_true(p.has_some);
	assert_false(p.has_full);
	assert_true(p.some.avg10 == 1.71);
	assert_true(p.some.avg60 == 100.0);
	assert_true(p.some.avg300 == 0.01);
	assert_true(p.some.total_usec == UINT64_MAX);
	assert_int_equal(sl_cgparse_psi("", &p), 0);
	assert_false(p.has_some || p.has_full);
	assert_int_equal(sl_cgparse_psi(NULL, &p), 0);
	assert_false(p.has_some || p.has_full);
}

static void cpu_v1_ticks(void **s)
{
	(void)s;
	struct sl_cgstat_cpu u;
	struct sl_cgcpu_v1_text t = {.cpuacct_usage = "1999\n", .cpuacct_stat = "user 3\nsystem 1\n"};
	assert_int_equal(sl_cgstat_cpu_v1_text(&t, 100, &u), 0);
	assert_int_equal(u.usage_usec, 1); /* ns floored to us */
	assert_int_equal(u.user_usec, 30000);
	assert_int_equal(u.system_usec, 10000);
	assert_int_equal(sl_cgstat_cpu_v1_text(&t, 300, &u), 0); /* 1e6/300 not integral */
	assert_int_equal(u.user_usec, 10000);
	assert_int_equal(u.system_usec, 3333);
	assert_int_equal(sl_cgstat_cpu_v1_text(&t, 0, &u), 0); /* unknown tick rate */
	assert_int_equal(u.known, SL_CPU_USAGE);
	/* huge tick counts do not overflow */
	t.cpuacct_stat = "user 18446744073709\nsystem 0\n";
	assert_int_equal(sl_cgstat_cpu_v1_text(&t, 100, &u), 0);
	assert_true(u.user_usec == 18446744073709ull * 10000ull);
	/* malformed usage, v1 cpu.stat through the v1 reader; cpu.stat usage keys ignored */
	struct sl_cgcpu_v1_text t2 = {
		.cpuacct_usage = "max\n",
		.cpu_stat = "nr_periods 7\nnr_throttled 2\nthrottled_time 127918677\nusage_usec 5\n",
	};
	assert_int_equal(sl_cgstat_cpu_v1_text(&t2, 100, &u), 1);
	assert_int_equal(u.known, SL_CPU_NR_PERIODS | SL_CPU_NR_THROTTLED | SL_CPU_THROTTLED);
	assert_int_equal(u.throttled_usec, 127918);
	assert_int_equal(sl_cgstat_cpu_v1_text(NULL, 100, &u), 0);
	assert_int_equal(u.known, 0);
}

static void mem_v2_edges(void **s)
{
	(void)s;
	struct sl_cgstat_mem m;
	/* no memory.stat: working set = usage, flagged; no peak: 0 + flag */
	struct sl_cgmem_v2_text t = {.current = "1000\n", .max = "max\n"};
	assert_int_equal(sl_cgstat_mem_v2_text(&t, &m), 0);
	assert_true(m.known & SL_MEM_WORKING_SET);
	assert_int_equal(m.working_set_bytes, 1000);
	assert_true(m.flags & SL_MEMF_WS_NO_INACTIVE);
	assert_false(m.known & SL_MEM_PEAK);
	assert_int_equal(m.peak_bytes, 0);
	assert_true(m.flags & SL_MEMF_NO_PEAK);
	assert_true(m.limit_bytes == SL_CGSTAT_UNLIMITED);
	/* malformed memory.current: usage unknown, no anon+file fallback */
	struct sl_cgmem_v2_text t2 = {.current = "garbage\n", .stat = "anon 1\nfile 2\n",
				      .peak = "max\n"};
	assert_int_equal(sl_cgstat_mem_v2_text(&t2, &m), 2);
	assert_false(m.known & (SL_MEM_USAGE | SL_MEM_WORKING_SET | SL_MEM_PEAK));
	/* floored working set */
	struct sl_cgmem_v2_text t3 = {.current = "10", .stat = "inactive_file 11"};
	assert_int_equal(sl_cgstat_mem_v2_text(&t3, &m), 0);
	assert_int_equal(m.working_set_bytes, 0);
	assert_true(m.flags & SL_MEMF_WS_FLOORED);
	/* everything absent */
	struct sl_cgmem_v2_text none = {0};
	assert_int_equal(sl_cgstat_mem_v2_text(&none, &m), 0);
	assert_int_equal(m.known, 0);
	assert_int_equal(sl_cgstat_mem_v2_text(NULL, &m), 0);
	assert_int_equal(m.known, 0);
}

static void mem_v1_edges(void **s)
{
	(void)s;
	struct sl_cgstat_mem m;
	struct sl_cgmem_v1_text t = {
		.usage_in_bytes = "4096\n",
		.limit_in_bytes = "9223372036854771712\n",
		/* non-hierarchical keys only: not used */
		.stat = "cache 1\nrss 2\ninactive_file 3\nswap 4\n",
		.oom_control = "oom_kill_disable 0\nunder_oom 0\n", /* pre-4.13: no oom_kill */
	};
	assert_int_equal(sl_cgstat_mem_v1_text(&t, &m), 0);
	assert_true(m.limit_bytes == SL_CGSTAT_UNLIMITED);
	assert_int_equal(m.working_set_bytes, 4096);
	assert_true(m.flags & SL_MEMF_WS_NO_INACTIVE);
	assert_false(m.known & (SL_MEM_CACHE | SL_MEM_RSS | SL_MEM_SWAP | SL_MEM_OOM |
				SL_MEM_OOM_KILL | SL_MEM_PEAK));
	t.limit_in_bytes = "1073741824\n";
	assert_int_equal(sl_cgstat_mem_v1_text(&t, &m), 0);
	assert_int_equal(m.limit_bytes, 1073741824);
	t.limit_in_bytes = "max\n"; /* not a v1 spelling */
	assert_int_equal(sl_cgstat_mem_v1_text(&t, &m), 1);
	assert_false(m.known & SL_MEM_LIMIT);
}

static void io_v2_many_devices(void **s)
{
	(void)s;
	char *t = malloc(64 * 128);
	size_t len = 0;
	struct sl_cgstat_io io;
	assert_non_null(t);
	for (int i = 0; i < 40; i++)
		len += (size_t)sprintf(t + len, "8:%d rbytes=%d wbytes=1 rios=2 wios=3 dbytes=0 dios=0\n",
				       i * 16, i);
	/* the same device again, and a garbage line */
	len += (size_t)sprintf(t + len, "8:0 rbytes=1000 wbytes=0 rios=0 wios=0\nxyz\n");
	assert_int_equal(sl_cgstat_io_v2_text(t, &io), 1);
	assert_int_equal(io.ndev, SL_CGSTAT_IO_MAXDEV);
	assert_int_equal(io.ndev_dropped, 40 - SL_CGSTAT_IO_MAXDEV);
	assert_int_equal(io.rbytes, 40 * 39 / 2 + 1000);
	assert_int_equal(io.wbytes, 40);
	assert_int_equal(io.rios, 80);
	assert_int_equal(io.dev[0].rbytes, 1000);
	assert_int_equal(io.dev[31].minor, 31 * 16);
	free(t);
	assert_int_equal(sl_cgstat_io_v2_text(NULL, &io), 0);
	assert_int_equal(io.known, 0);
}

static void pids_edges(void **s)
{
	(void)s;
	struct sl_cgstat_pids p;
	assert_int_equal(sl_cgstat_pids_text("3\n", "max\n", &p), 0);
	assert_int_equal(p.known, SL_PIDS_CURRENT | SL_PIDS_MAX);
	assert_int_equal(p.current, 3);
	assert_true(p.max == SL_CGSTAT_UNLIMITED);
	assert_int_equal(sl_cgstat_pids_text("max\n", "4096\n", &p), 1); /* current is never max */
	assert_int_equal(p.known, SL_PIDS_MAX);
	assert_int_equal(p.max, 4096);
	assert_int_equal(sl_cgstat_pids_text(NULL, "x", &p), 1);
	assert_int_equal(p.known, 0);
}

/* ---------------------------------------------------- fixture dirs */

static char *mkfix(void)
{
	char tmpl[] = "/tmp/sl_cgstat_XXXXXX";
	char *d = mkdtemp(tmpl);
	assert_non_null(d);
	return strdup(d);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_rf(const char *path)
{
	assert_true(strncmp(path, "/tmp/sl_cgstat_", 15) == 0);
	assert_int_equal(nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void sub(char *out, size_t n, const char *a, const char *b)
{
	snprintf(out, n, "%s/%s", a, b);
	assert_int_equal(mkdir(out, 0755), 0);
}

static void dir_v2(void **s)
{
	(void)s;
	char *d = mkfix();
	struct sl_cgstat st;

	write_file(d, "cpu.stat",
		   "usage_usec 73899\nuser_usec 27213\nsystem_usec 46685\nnr_periods 7\n"
		   "nr_throttled 3\nthrottled_usec 139381\nnr_bursts 0\nburst_usec 0\n");
	write_file(d, "memory.current", "13071106048\n");
	write_file(d, "memory.stat", "anon 2471755776\nfile 8532865024\ninactive_file 2935459840\n"
				     "this is junk\n");
	write_file(d, "memory.max", "max\n");
	write_file(d, "memory.swap.current", "4096\n");
	write_file(d, "memory.events",
		   "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n");
	write_file(d, "cpu.pressure", "some avg10=1.71 avg60=2.36 avg300=2.57 total=230548833\n"
				      "full avg10=1.00 avg60=1.01 avg300=1.00 total=157622356\n");
	write_file(d, "memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=2466\n"
					 "full avg10=0.00 avg60=0.00 avg300=0.00 total=1705\n");
	/* io.pressure absent */
	write_file(d, "io.stat", "8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 "
				 "dios=0\n");
	write_file(d, "pids.current", "12\n");
	write_file(d, "pids.max", "max\n");
	/* memory.peak exists but cannot be read: a directory in its place */
	char p[600];
	sub(p, sizeof(p), d, "memory.peak");

	assert_int_equal(sl_cgstat_read_v2(d, &st), 0);
	assert_int_equal(st.version, 2);
	assert_int_equal(st.files_read, 11); /* memory.peak unreadable */
	assert_int_equal(st.malformed, 1);
	assert_int_equal(st.cpu.known, 0x3f);
	assert_int_equal(st.cpu.usage_usec, 73899);
	assert_int_equal(st.cpu.throttled_usec, 139381);
	assert_int_equal(st.mem.usage_bytes, 13071106048ull);
	assert_int_equal(st.mem.working_set_bytes, 10135646208ull);
	assert_int_equal(st.mem.cache_bytes, 8532865024ull);
	assert_int_equal(st.mem.rss_bytes, 2471755776ull);
	assert_int_equal(st.mem.swap_bytes, 4096);
	assert_true(st.mem.limit_bytes == SL_CGSTAT_UNLIMITED);
	assert_int_equal(st.mem.oom_events, 3);
	assert_int_equal(st.mem.oom_kill_events, 2);
	assert_false(st.mem.known & SL_MEM_PEAK);
	assert_true(st.mem.flags & SL_MEMF_NO_PEAK);
	assert_true(st.psi[SL_PSI_CPU].has_full);
	assert_int_equal(st.psi[SL_PSI_CPU].full.total_usec, 157622356);
	assert_int_equal(st.psi[SL_PSI_MEMORY].some.total_usec, 2466);
	assert_false(st.psi[SL_PSI_IO].has_some || st.psi[SL_PSI_IO].has_full);
	assert_int_equal(st.io.known, SL_IO_BYTES | SL_IO_OPS);
	assert_int_equal(st.io.ndev, 1);
	assert_int_equal(st.io.dev[0].major, 8);
	assert_int_equal(st.io.dev[0].minor, 16);
	assert_int_equal(st.io.wbytes, 314773504);
	assert_int_equal(st.pids.current, 12);
	assert_true(st.pids.max == SL_CGSTAT_UNLIMITED);

	/* the root-cgroup shape: no memory.current -> anon + file */
	char path[600];
	snprintf(path, sizeof(path), "%s/memory.current", d);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(sl_cgstat_read_v2(d, &st), 0);
	assert_int_equal(st.mem.usage_bytes, 2471755776ull + 8532865024ull);
	assert_true(st.mem.flags & SL_MEMF_USAGE_FROM_STAT);

	rm_rf(d);
	/* cgroup gone: -ENOENT, all unknown, no crash */
	memset(&st, 0xab, sizeof(st));
	assert_int_equal(sl_cgstat_read_v2(d, &st), -ENOENT);
	assert_int_equal(st.files_read, 0);
	assert_int_equal(st.cpu.known | st.mem.known | st.io.known | st.pids.known, 0);
	assert_int_equal(sl_cgstat_read_v2("", &st), -EINVAL);
	assert_int_equal(sl_cgstat_read_v2(NULL, &st), -EINVAL);
	free(d);
}

static void dir_v2_empty(void **s)
{
	(void)s;
	char *d = mkfix();
	struct sl_cgstat st;
	assert_int_equal(sl_cgstat_read_v2(d, &st), 0);
	assert_int_equal(st.files_read, 0);
	assert_int_equal(st.cpu.known | st.mem.known | st.io.known | st.pids.known, 0);
	assert_false(st.psi[SL_PSI_CPU].has_some);
	rm_rf(d);
	free(d);
}

static void dir_v1(void **s)
{
	(void)s;
	char *d = mkfix();
	char mem[600], cpu[600], blk[600], pids[600], uni[600];
	struct sl_cgstat st;

	sub(mem, sizeof(mem), d, "memory");
	sub(cpu, sizeof(cpu), d, "cpu,cpuacct");
	sub(blk, sizeof(blk), d, "blkio");
	sub(pids, sizeof(pids), d, "pids");
	sub(uni, sizeof(uni), d, "unified");

	write_file(mem, "memory.usage_in_bytes", "6901760\n");
	write_file(mem, "memory.max_usage_in_bytes", "12238848\n");
	write_file(mem, "memory.limit_in_bytes", "9223372036854771712\n");
	write_file(mem, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 4\n");
	write_file(mem, "memory.stat", "cache 3878912\nrss 1728512\ninactive_file 1\n"
				       "total_cache 3878912\ntotal_rss 1728512\ntotal_swap 8192\n"
				       "total_inactive_file 135168\n");
	write_file(cpu, "cpuacct.usage", "70878383605\n");
	write_file(cpu, "cpuacct.stat", "user 4282\nsystem 2805\n");
	write_file(cpu, "cpu.stat", "nr_periods 10\nnr_throttled 1\nthrottled_time 2500\n"
				    "nr_bursts 0\nburst_time 0\n");
	/* only the non-recursive files: the fallback is used */
	write_file(blk, "blkio.throttle.io_service_bytes",
		   "254:0 Read 1048576\n254:0 Write 4096\n254:0 Sync 1052672\n254:0 Async 0\n"
		   "254:0 Discard 0\n254:0 Total 1052672\nTotal 1052672\n");
	write_file(blk, "blkio.throttle.io_serviced",
		   "254:0 Read 16\n254:0 Write 1\n254:0 Sync 17\n254:0 Async 0\n"
		   "254:0 Discard 0\n254:0 Total 17\nTotal 17\n");
	write_file(pids, "pids.current", "5\n");
	write_file(pids, "pids.max", "1024\n");
	write_file(uni, "io.pressure", "some avg10=0.00 avg60=0.08 avg300=0.45 total=6061739\n"
				       "full avg10=0.00 avg60=0.08 avg300=0.42 total=5776903\n");

	struct sl_cgstat_v1_dirs dirs = {
		.memory = mem, .cpu = cpu, .cpuacct = cpu, .blkio = blk, .pids = pids, .unified = uni,
	};
	assert_int_equal(sl_cgstat_read_v1(&dirs, 100, &st), 0);
	assert_int_equal(st.version, 1);
	assert_int_equal(st.files_read, 13);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(st.cpu.known, 0x3f);
	assert_int_equal(st.cpu.usage_usec, 70878383);
	assert_int_equal(st.cpu.user_usec, 42820000);
	assert_int_equal(st.cpu.system_usec, 28050000);
	assert_int_equal(st.cpu.throttled_usec, 2);
	assert_int_equal(st.mem.usage_bytes, 6901760);
	assert_int_equal(st.mem.working_set_bytes, 6901760 - 135168);
	assert_int_equal(st.mem.peak_bytes, 12238848);
	assert_true(st.mem.limit_bytes == SL_CGSTAT_UNLIMITED);
	assert_int_equal(st.mem.swap_bytes, 8192);
	assert_int_equal(st.mem.oom_kill_events, 4);
	assert_false(st.mem.known & SL_MEM_OOM);
	assert_int_equal(st.io.ndev, 1);
	assert_int_equal(st.io.dev[0].major, 254);
	assert_int_equal(st.io.dev[0].rbytes, 1048576);
	assert_int_equal(st.io.dev[0].wios, 1);
	assert_int_equal(st.io.rios, 16);
	assert_int_equal(st.pids.max, 1024);
	assert_true(st.psi[SL_PSI_IO].has_full);
	assert_false(st.psi[SL_PSI_CPU].has_some);

	/* the _recursive file wins over the plain one when both exist */
	write_file(blk, "blkio.throttle.io_service_bytes_recursive",
		   "254:0 Read 2097152\n254:0 Write 0\nTotal 2097152\n");
	assert_int_equal(sl_cgstat_read_v1(&dirs, 100, &st), 0);
	assert_int_equal(st.io.rbytes, 2097152);
	assert_int_equal(st.io.rios, 16);

	/* hybrid subset: only memory given; a missing controller dir is skipped */
	char gone[700];
	snprintf(gone, sizeof(gone), "%s/nope", d);
	struct sl_cgstat_v1_dirs only = {.memory = mem, .cpu = gone};
	assert_int_equal(sl_cgstat_read_v1(&only, 0, &st), 0);
	assert_int_equal(st.cpu.known, 0);
	assert_true(st.mem.known & SL_MEM_WORKING_SET);

	struct sl_cgstat_v1_dirs none = {.memory = gone, .cpu = gone};
	assert_int_equal(sl_cgstat_read_v1(&none, 0, &st), -ENOENT);
	struct sl_cgstat_v1_dirs empty = {0};
	assert_int_equal(sl_cgstat_read_v1(&empty, 0, &st), -EINVAL);
	assert_int_equal(sl_cgstat_read_v1(NULL, 0, &st), -EINVAL);
	rm_rf(d);
	free(d);
}

/* The container_spec_* parsers (cgstat_spec.c), over kernel text. */
static void spec_text(void **s)
{
	(void)s;
	uint64_t q = 7, p = 7;

	/* cpu.max */
	assert_int_equal(sl_cgparse_cpu_max("30000 100000\n", &q, &p), 0);
	assert_int_equal(q, 30000);
	assert_int_equal(p, 100000);
	assert_int_equal(sl_cgparse_cpu_max("max 100000\n", &q, &p), 0);
	assert_true(q == SL_CGSTAT_UNLIMITED);
	assert_int_equal(p, 100000);
	q = p = 7;
	const char *bad_max[] = {NULL, "", "max\n", "100000\n", "max 0\n", "-1 100000\n",
				 "30000 100000 5\n", "30000 max\n", "30000\t100000\n",
				 "30000 100000x\n", "99999999999999999999 100000\n"};
	for (size_t i = 0; i < sizeof(bad_max) / sizeof(bad_max[0]); i++) {
		assert_int_equal(sl_cgparse_cpu_max(bad_max[i], &q, &p), -EINVAL);
		assert_int_equal(q, 7);
		assert_int_equal(p, 7);
	}
	/* cpu.cfs_quota_us */
	assert_int_equal(sl_cgparse_cfs_quota("-1\n", &q), 1);
	assert_true(q == SL_CGSTAT_UNLIMITED);
	assert_int_equal(sl_cgparse_cfs_quota("50000\n", &q), 0);
	assert_int_equal(q, 50000);
	assert_int_equal(sl_cgparse_cfs_quota("-2\n", &q), -EINVAL);
	assert_int_equal(sl_cgparse_cfs_quota("-1x\n", &q), -EINVAL);
	assert_int_equal(sl_cgparse_cfs_quota("max\n", &q), -EINVAL);
	assert_int_equal(sl_cgparse_cfs_quota(NULL, &q), -EINVAL);
	/* cpu.weight -> shares, cAdvisor's convertCPUWeightToCPULimit */
	uint64_t sh = 0;
	assert_true(sl_cgstat_weight_to_shares(1, &sh));
	assert_int_equal(sh, 2);
	assert_true(sl_cgstat_weight_to_shares(100, &sh)); /* the v2 default */
	assert_int_equal(sh, 2597);
	assert_true(sl_cgstat_weight_to_shares(39, &sh)); /* runc's weight for 1024 shares */
	assert_int_equal(sh, 998);
	assert_true(sl_cgstat_weight_to_shares(10000, &sh));
	assert_int_equal(sh, 262144);
	assert_false(sl_cgstat_weight_to_shares(0, &sh));
	assert_false(sl_cgstat_weight_to_shares(10001, &sh));

	/* v2: every file */
	struct sl_cgstat_spec sp;
	struct sl_cgspec_v2_text v2 = {"30000 100000\n", "39\n", "16777216\n", "max\n"};
	assert_int_equal(sl_cgstat_spec_v2_text(&v2, &sp), 0);
	assert_int_equal(sp.known, 0x1f);
	assert_int_equal(sp.cpu_quota_usec, 30000);
	assert_int_equal(sp.cpu_period_usec, 100000);
	assert_int_equal(sp.cpu_shares, 998);
	assert_int_equal(sp.mem_reservation_bytes, 16777216);
	assert_true(sp.mem_swap_limit_bytes == SL_CGSTAT_UNLIMITED);
	/* v2: absent files unknown, malformed files counted and unknown */
	struct sl_cgspec_v2_text v2b = {"max 100000\n", "0\n", "junk\n", NULL};
	assert_int_equal(sl_cgstat_spec_v2_text(&v2b, &sp), 2);
	assert_int_equal(sp.known, SL_SPEC_CPU_QUOTA | SL_SPEC_CPU_PERIOD);
	assert_true(sp.cpu_quota_usec == SL_CGSTAT_UNLIMITED);
	assert_int_equal(sl_cgstat_spec_v2_text(NULL, &sp), 0);
	assert_int_equal(sp.known, 0);

	/* v1: the "unlimited" huge values (PAGE_COUNTER_MAX * 4 KiB) */
	struct sl_cgspec_v1_text v1 = {"-1\n", "100000\n", "1024\n", "9223372036854771712\n",
				       "9223372036854771712\n"};
	assert_int_equal(sl_cgstat_spec_v1_text(&v1, &sp), 0);
	assert_int_equal(sp.known, 0x1f);
	assert_true(sp.cpu_quota_usec == SL_CGSTAT_UNLIMITED);
	assert_int_equal(sp.cpu_period_usec, 100000);
	assert_int_equal(sp.cpu_shares, 1024);
	assert_true(sp.mem_reservation_bytes == SL_CGSTAT_UNLIMITED);
	assert_true(sp.mem_swap_limit_bytes == SL_CGSTAT_UNLIMITED);
	struct sl_cgspec_v1_text v1b = {"25000\n", "0\n", "max\n", "33554432\n", "67108864\n"};
	assert_int_equal(sl_cgstat_spec_v1_text(&v1b, &sp), 2); /* period 0, shares "max" */
	assert_int_equal(sp.known, SL_SPEC_CPU_QUOTA | SL_SPEC_MEM_RESERVATION | SL_SPEC_MEM_SWAP_LIMIT);
	assert_int_equal(sp.cpu_quota_usec, 25000);
	assert_int_equal(sp.mem_reservation_bytes, 33554432);
	assert_int_equal(sp.mem_swap_limit_bytes, 67108864);
}

/* The spec files through the directory readers. */
static void dir_spec(void **s)
{
	(void)s;
	char *d = mkfix();
	struct sl_cgstat st;

	write_file(d, "cpu.max", "50000 100000\n");
	write_file(d, "cpu.weight", "100\n");
	write_file(d, "memory.min", "0\n");
	write_file(d, "memory.swap.max", "134217728\n");
	assert_int_equal(sl_cgstat_read_v2(d, &st), 0);
	assert_int_equal(st.files_read, 4);
	assert_int_equal(st.spec.known, 0x1f);
	assert_int_equal(st.spec.cpu_quota_usec, 50000);
	assert_int_equal(st.spec.cpu_shares, 2597);
	assert_int_equal(st.spec.mem_reservation_bytes, 0);
	assert_int_equal(st.spec.mem_swap_limit_bytes, 134217728);
	rm_rf(d);
	free(d);

	d = mkfix();
	char mem[600], cpu[600];
	sub(mem, sizeof(mem), d, "memory");
	sub(cpu, sizeof(cpu), d, "cpu");
	write_file(cpu, "cpu.cfs_quota_us", "30000\n");
	write_file(cpu, "cpu.cfs_period_us", "100000\n");
	write_file(cpu, "cpu.shares", "512\n");
	write_file(mem, "memory.soft_limit_in_bytes", "9223372036854771712\n");
	/* no memory.memsw.limit_in_bytes: no swap accounting -> unknown */
	struct sl_cgstat_v1_dirs dirs = {.memory = mem, .cpu = cpu};
	assert_int_equal(sl_cgstat_read_v1(&dirs, 100, &st), 0);
	assert_int_equal(st.spec.known, SL_SPEC_CPU_QUOTA | SL_SPEC_CPU_PERIOD | SL_SPEC_CPU_SHARES |
						SL_SPEC_MEM_RESERVATION);
	assert_int_equal(st.spec.cpu_quota_usec, 30000);
	assert_int_equal(st.spec.cpu_shares, 512);
	assert_true(st.spec.mem_reservation_bytes == SL_CGSTAT_UNLIMITED);
	rm_rf(d);
	free(d);
}

/* The host's own cgroup root: whatever is mounted, the readers must not
 * crash and must keep the invariants. Environment-dependent values are
 * not asserted. */
static void host_smoke(void **s)
{
	(void)s;
	struct sl_cgstat st;
	const char *v2[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
	for (size_t i = 0; i < 2; i++) {
		int rc = sl_cgstat_read_v2(v2[i], &st);
		assert_true(rc == 0 || rc == -ENOENT || rc == -EACCES);
		if (st.mem.known & SL_MEM_WORKING_SET)
			assert_true(st.mem.working_set_bytes <= st.mem.usage_bytes);
	}
	struct sl_cgstat_v1_dirs d = {
		.memory = "/sys/fs/cgroup/memory", .cpu = "/sys/fs/cgroup/cpu",
		.cpuacct = "/sys/fs/cgroup/cpuacct", .blkio = "/sys/fs/cgroup/blkio",
		.pids = "/sys/fs/cgroup/pids", .unified = "/sys/fs/cgroup/unified",
	};
	int rc = sl_cgstat_read_v1(&d, 0, &st);
	assert_true(rc == 0 || rc == -ENOENT || rc == -EACCES);
	if (st.mem.known & SL_MEM_WORKING_SET)
		assert_true(st.mem.working_set_bytes <= st.mem.usage_bytes);
}

int main(void)
{
	static const char *const kinds[] = {"memory", "cpu", "psi"};
	char dir[512];
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (sl_shared_cases_dir("test_cgstat", kinds[i], dir, sizeof(dir)))
			return sl_shared_cases_fail("test_cgstat");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shared_memory),     cmocka_unit_test(shared_cpu),
		cmocka_unit_test(shared_psi),        cmocka_unit_test(own_cases),
		cmocka_unit_test(parse_u64_edges),   cmocka_unit_test(parse_kv_malformed),
		cmocka_unit_test(psi_edges),         cmocka_unit_test(cpu_v1_ticks),
		cmocka_unit_test(mem_v2_edges),      cmocka_unit_test(mem_v1_edges),
		cmocka_unit_test(io_v2_many_devices), cmocka_unit_test(pids_edges),
		cmocka_unit_test(dir_v2),            cmocka_unit_test(dir_v2_empty),
		cmocka_unit_test(dir_v1),            cmocka_unit_test(host_smoke),
		cmocka_unit_test(spec_text),         cmocka_unit_test(dir_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
