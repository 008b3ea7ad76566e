/* `sandlens profile`: create a profile task, follow it, fetch the result in
 * the format the output file's extension names, write the file. */
#include "cli/tasks.h"
#include "cli/commands.h"
#include "common/prof_format.h"
#include "common/units.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static void progress(json_t *rec, void *ctx)
{
	(void)ctx;
	json_t *p = json_object_get(rec, "progress");
	const char *st = json_string_value(json_object_get(rec, "status"));
	if (!isatty(2))
		return;
	if (p && st && !strcmp(st, "running"))
		fprintf(stderr, "\rprofiling %s: %.0f/%.0f s, %lld %s ", cli_esc(json_string_value(json_object_get(rec, "id"))),
			json_number_value(json_object_get(p, "elapsed_s")),
			json_number_value(json_object_get(rec, "duration_s")),
			(long long)json_integer_value(json_object_get(p, "matched")),
			"events");
}

/* Mode of the file `sandlens profile -o` writes (docs/CLI.md): a profile
 * shows the stacks of the profiled processes, which the API serves to root
 * only, so the file is private to the user who asked for it. */
#define OUTPUT_MODE 0600
#define TMP_TRIES 64

/* Write len bytes to path atomically, safe in a directory others can write
 * to (/tmp): the temporary file is created in path's directory under an
 * unpredictable name with O_CREAT|O_EXCL|O_NOFOLLOW (a planted file or
 * symlink is never opened, let alone truncated), mode OUTPUT_MODE, written,
 * fsync'ed, then renameat() onto path (which replaces a symlink at path,
 * never its target) and the directory fsync'ed. 0 or -errno. */
static int write_file(const char *path, const char *buf, size_t len)
{
	char dir[4096], base[256], tmp[300];
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) : 0;
	if (dl >= sizeof(dir) || strlen(slash ? slash + 1 : path) >= sizeof(base) - 32)
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%.*s", (int)dl, path);
	if (slash && !dl)
		snprintf(dir, sizeof(dir), "/");
	snprintf(base, sizeof(base), "%s", slash ? slash + 1 : path);
	if (!base[0] || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	int fd = -1;
	for (int i = 0; i < TMP_TRIES && fd < 0; i++) {
		unsigned char r[8];
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
			int e = errno ? errno : EIO;
			close(dfd);
			return -e;
		}
		snprintf(tmp, sizeof(tmp), ".%s.%02x%02x%02x%02x%02x%02x%02x%02x.tmp", base, r[0], r[1], r[2],
			 r[3], r[4], r[5], r[6], r[7]);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, OUTPUT_MODE);
		if (fd < 0 && errno != EEXIST) {
			int e = errno;
			close(dfd);
			return -e;
		}
	}
	if (fd < 0) {
		close(dfd);
		return -EEXIST;
	}
	int e = 0;
	for (size_t off = 0; off < len && !e;) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w < 0 && errno != EINTR)
			e = errno;
		else if (w > 0)
			off += (size_t)w;
	}
	if (!e && fsync(fd))
		e = errno;
	if (close(fd) && !e)
		e = errno;
	if (!e && renameat(dfd, tmp, dfd, base))
		e = errno;
	if (e)
		unlinkat(dfd, tmp, 0);
	else
		fsync(dfd); /* the rename itself durable; a failure here loses nothing written */
	close(dfd);
	return -e;
}

/* -o -: the profile goes to standard output as folded text (one stack a
 * line: what flamegraph.pl and inferno read from a pipe); the summary line
 * then goes to stderr. */
#define STDOUT_FORMAT_PATH "-.folded"

/* The result to standard output: 0 or -errno (EPIPE for a closed pipe). */
/* Profile text to standard output. On a terminal, control bytes other than
 * newline and tab (a process names itself: comm and function names are
 * the workload's to choose) are written as '?', so an escape sequence in a
 * frame name cannot reach the operator's terminal. */
static int write_stdout(const char *buf, size_t len)
{
	if (len && isatty(STDOUT_FILENO)) {
		for (size_t i = 0; i < len; i++) {
			unsigned char ch = (unsigned char)buf[i];
			if (putc((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f ? '?' : ch, stdout) == EOF)
				return -(errno ? errno : EIO);
		}
	} else if (len && fwrite(buf, 1, len, stdout) != len) {
		return -(errno ? errno : EIO);
	}
	if (fflush(stdout))
		return -(errno ? errno : EIO);
	return 0;
}

int cli_profile_main(struct cli_conn *c, const struct cli_run *cr, volatile sig_atomic_t *stop)
{
	if (cli_profile_stored_wanted(cr)) /* continuous profiling windows (profile_stored.c) */
		return cli_profile_stored(c, cr, write_file, write_stdout);
	json_t *body = json_object();
	const char *out = cli_opt(cr, "output"), *v;
	uint64_t ns = 10000000000ull;
	long hz = 0, min_us = -1;
	int off = cli_flag(cr, "off-cpu");
	const char *kind = off ? "off_cpu" : "on_cpu";
	long fault_period = 0;

#define USAGE(...) do { fprintf(stderr, "sandlens: profile: " __VA_ARGS__); fputc('\n', stderr); \
		json_decref(body); return CLI_USAGE; } while (0)
	int t = cli_task_target(cr, body);
	if (t < 0) {
		json_decref(body);
		return CLI_USAGE;
	}
	if ((v = cli_opt(cr, "duration")) && cli_parse_task_duration(v, &ns))
		USAGE("--duration: '%s' is not a duration like 10s or 2m", v);
	if ((v = cli_opt(cr, "hz"))) {
		char *end;
		hz = strtol(v, &end, 10);
		if (!*v || *end || hz <= 0)
			USAGE("--hz: '%s' is not a positive frequency", v);
	}
	if ((v = cli_opt(cr, "min-off-cpu-us"))) {
		char *end;
		min_us = strtol(v, &end, 10);
		if (!*v || *end || min_us < 0)
			USAGE("--min-off-cpu-us: '%s' is not a number of microseconds", v);
	}
	if ((v = cli_opt(cr, "type"))) {
		static const char *const kinds[] = {"on_cpu", "off_cpu", "mem_virtual", "page_faults",
						    "resident", "lock_kernel", "futex", NULL};
		char k[32];
		snprintf(k, sizeof(k), "%s", v);
		for (char *q = k; *q; q++)
			if (*q == '-')
				*q = '_';
		kind = NULL;
		for (int i = 0; kinds[i]; i++)
			if (!strcmp(k, kinds[i]))
				kind = kinds[i];
		if (!kind)
			USAGE("--type: '%s' is not one of on_cpu, off_cpu, mem_virtual, page_faults, resident, lock_kernel, futex", v);
		if (off && strcmp(kind, "off_cpu"))
			USAGE("--off-cpu and --type %s contradict each other", kind);
		off = !strcmp(kind, "off_cpu");
	}
	if ((v = cli_opt(cr, "fault-period"))) {
		char *end;
		fault_period = strtol(v, &end, 10);
		if (!*v || *end || fault_period <= 0)
			USAGE("--fault-period: '%s' is not a positive number of faults", v);
		if (strcmp(kind, "page_faults"))
			USAGE("--fault-period is for --type page_faults");
	}
	if ((v = cli_opt(cr, "sandbox"))) {
		/* the sandbox's VMM, resolved now (GET /api/v1/sandboxes/{id}): a
		 * thread-group target whose samples carry each thread's tid and
		 * comm, so vCPU threads ("CPU 0/KVM", "vcpu0", "fc_vcpu 0") show */
		if (t)
			USAGE("give one target (--container, --pod, --pid, --tid or --sandbox)");
		char path[256];
		json_t *sb = NULL;
		if (strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-") != strlen(v) ||
		    !*v || strlen(v) > 79)
			USAGE("--sandbox: '%s' is not a sandbox id", v);
		snprintf(path, sizeof(path), "/api/v1/sandboxes/%s", v);
		int grc = cli_get_json(c, path, 0, &sb, NULL);
		if (grc) {
			json_decref(body);
			return grc;
		}
		json_t *pid = json_object_get(sb, "vmm_pid");
		if (!json_is_integer(pid)) {
			fprintf(stderr, "sandlens: profile: sandbox %s has no VMM running\n", cli_esc(v));
			json_decref(sb);
			json_decref(body);
			return CLI_ERR;
		}
		fprintf(stderr, "sandlens: profile: sandbox %s: VMM pid %lld, %zu vCPU threads\n", cli_esc(v),
			(long long)json_integer_value(pid), json_array_size(json_object_get(sb, "vcpus")));
		json_object_set_new(body, "target", json_pack("{s:I}", "pid", (json_int_t)json_integer_value(pid)));
		json_decref(sb);
		t = 1;
	}
	if (!t)
		USAGE("give a target: --container ID, --pod UID, --pid N, --tid N or --sandbox ID");
	if (!out)
		USAGE("give the output file: -o FILE (.svg, .html, .pb.gz, .folded or .json), or -o - for folded text on standard output");
	int to_stdout = !strcmp(out, "-");
	int fmt = sl_prof_format_from_path(to_stdout ? STDOUT_FORMAT_PATH : out);
	if (fmt < 0)
		USAGE("cannot tell the format of '%s' from its extension (.svg, .html, .pb.gz, .folded, .json)", out);
	if (hz && strcmp(kind, "on_cpu"))
		USAGE("--hz is for on-CPU profiles (without --off-cpu or --type)");
	if (min_us >= 0 && !off)
		USAGE("--min-off-cpu-us needs --off-cpu");
#undef USAGE
	char type[48];
	snprintf(type, sizeof(type), "profile_%s", kind);
	json_object_set_new(body, "type", json_string(type));
	if (fault_period)
		json_object_set_new(body, "fault_period", json_integer(fault_period));
	json_object_set_new(body, "duration_s", json_real((double)ns / 1e9));
	if (hz)
		json_object_set_new(body, "hz", json_integer(hz));
	if (min_us >= 0)
		json_object_set_new(body, "min_off_cpu_us", json_integer(min_us));

	json_t *final = NULL;
	int rc = cli_task_run(c, body, (long)(ns / 1000000000ull) + 300, progress, NULL, stop, &final);
	json_decref(body);
	if (rc)
		return rc;
	const char *id = json_string_value(json_object_get(final, "id"));
	char path[160];
	snprintf(path, sizeof(path), "/api/v1/tasks/%s/result?format=%s", id, sl_prof_format_name(fmt));
	struct cli_resp r;
	if (cli_http_request(c, "GET", path, NULL, 120, &r)) {
		fprintf(stderr, "sandlens: fetching the result: %s\n", cli_esc(r.error));
		json_decref(final);
		return CLI_ERR;
	}
	if (r.status != 200) {
		rc = cli_http_error(path, &r);
		cli_resp_free(&r);
		json_decref(final);
		return rc;
	}
	int w = to_stdout ? write_stdout(r.body ? r.body : "", r.len) : write_file(out, r.body ? r.body : "", r.len);
	if (w) {
		fprintf(stderr, "sandlens: writing %s: %s\n", out, strerror(-w));
		cli_resp_free(&r);
		json_decref(final);
		return CLI_ERR;
	}
	json_t *res = json_object_get(final, "result");
	json_t *top = json_array_get(json_object_get(res, "top_user_leaves"), 0);
	long long total = (long long)json_integer_value(json_object_get(res, "total_count"));
	/* the summary goes to stderr when the profile itself is on stdout */
	FILE *so = to_stdout ? stderr : stdout;
	json_t *tv = json_object_get(res, "total_value"); /* memory and lock kinds */
	if (tv) {
		const char *unit = json_string_value(json_object_get(res, "unit"));
		double val = (double)json_integer_value(tv);
		int ns = unit && !strcmp(unit, "nanoseconds");
		fprintf(so, "wrote %s (%s, %zu bytes): task %s, %s profile, %lld events, %.3f %s",
			to_stdout ? "standard output" : out, sl_prof_format_name(fmt), r.len, cli_esc(id), kind, total,
			ns ? val / 1e9 : val / 1048576.0, ns ? "s waited" : "MiB");
		json_t *tb = json_array_get(json_object_get(res, "top_user_leaves_by_value"), 0);
		if (tb && val > 0) {
			fprintf(so, ", top: ");
			fputs(cli_esc_sym(json_string_value(json_object_get(tb, "function")) ?: "?"), so);
			fprintf(so, " (%.0f%%)", 100.0 * (double)json_integer_value(json_object_get(tb, "value")) / val);
		}
		top = NULL;
	} else {
		fprintf(so, "wrote %s (%s, %zu bytes): task %s, %lld %s, %.3f s", to_stdout ? "standard output" : out,
			sl_prof_format_name(fmt), r.len, cli_esc(id), total, off ? "off-CPU intervals" : "samples",
			(double)json_integer_value(json_object_get(res, "total_ns")) / 1e9);
	}
	if (top && total > 0) {
		fprintf(so, ", hottest: ");
		fputs(cli_esc_sym(json_string_value(json_object_get(top, "function")) ?: "?"), so);
		fprintf(so, " (%.0f%%)", 100.0 * (double)json_integer_value(json_object_get(top, "count")) / (double)total);
	}
	fputc('\n', so);
	cli_resp_free(&r);
	json_decref(final);
	return CLI_OK;
}
