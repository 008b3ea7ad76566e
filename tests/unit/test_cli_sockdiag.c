/* Unix-socket connect failures in words (src/cli/sock_diag.c) and through
 * the CLI's HTTP layer (src/cli/http.c): a missing socket, a stale one
 * (nobody listens), one we may not connect to (as uid 65534 in a child)
 * each name the socket path and their reason, never libcurl's
 * "127.0.0.1 port 9753" (break-it item 9). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/wait.h>

#include "cli/format.c"
#include "cli/http.c"
#include "cli/peer_check.c"
#include "cli/schema.c"
#include "cli/sock_diag.c"
#include "tmp_root.h"

static char root[64];

static int listen_at(const char *p)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, p);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

static void test_diagnose(void **state)
{
	(void)state;
	char p[200], why[400];
	snprintf(p, sizeof(p), "%s/none.sock", root);
	assert_int_equal(cli_socket_diagnose(p, why, sizeof(why)), ENOENT);
	assert_non_null(strstr(why, p));
	assert_non_null(strstr(why, "agent is not running"));
	assert_non_null(strstr(why, "api.unix_socket"));

	snprintf(p, sizeof(p), "%s/s.sock", root);
	int fd = listen_at(p);
	assert_int_equal(cli_socket_diagnose(p, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	close(fd); /* the file stays: a stale socket */
	assert_int_equal(cli_socket_diagnose(p, why, sizeof(why)), ECONNREFUSED);
	assert_non_null(strstr(why, p));
	assert_non_null(strstr(why, "stale socket"));

	/* not a socket */
	snprintf(p, sizeof(p), "%s/file", root);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(cli_socket_diagnose(p, why, sizeof(why)), ENOTSOCK);
	assert_non_null(strstr(why, p));
	assert_non_null(strstr(why, "not a socket (a regular file)"));
	assert_null(strstr(why, "stale"));
	/* a directory: connect() says "refused", which read as a stale socket */
	assert_int_equal(cli_socket_diagnose(root, why, sizeof(why)), ENOTSOCK);
	assert_non_null(strstr(why, "not a socket (a directory)"));

	char lng[300];
	memset(lng, 'a', sizeof(lng) - 1);
	lng[0] = '/';
	lng[sizeof(lng) - 1] = 0;
	assert_int_equal(cli_socket_diagnose(lng, why, sizeof(why)), ENAMETOOLONG);
	/* a small buffer is cut, still terminated */
	assert_int_equal(cli_socket_diagnose(lng, why, 8), ENAMETOOLONG);
	assert_int_equal(strlen(why), 7);
}

/* cli_socket_diagnose(p) as uid 65534 in a child: its text into got,
 * returns the errno it gave (-1: the child failed). */
static int diagnose_as_nobody(const char *p, char *got, size_t size)
{
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char why[400];
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(255);
		int e = cli_socket_diagnose(p, why, sizeof(why));
		if (write(pfd[1], why, strlen(why) + 1) < 0)
			_exit(255);
		_exit(e & 0x7f);
	}
	close(pfd[1]);
	got[0] = 0;
	ssize_t n = read(pfd[0], got, size - 1);
	close(pfd[0]);
	got[n > 0 ? n : 0] = 0;
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) && WEXITSTATUS(st) != 255 ? WEXITSTATUS(st) : -1;
}

/* As uid 65534: a root socket of mode 0600 is not ours to connect to;
 * one in a directory of mode 0700 names the directory, not the socket. */
static void test_diagnose_eacces(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	char p[200], got[400];
	snprintf(p, sizeof(p), "%s/root.sock", root);
	int fd = listen_at(p);
	assert_int_equal(chmod(p, 0600), 0);
	assert_int_equal(chmod(root, 0755), 0);
	assert_int_equal(diagnose_as_nobody(p, got, sizeof(got)), EACCES);
	close(fd);
	assert_non_null(strstr(got, p));
	assert_non_null(strstr(got, "permission denied"));
	assert_non_null(strstr(got, "write permission on the socket"));
	assert_non_null(strstr(got, "api.admin_group"));

	char d[100];
	snprintf(d, sizeof(d), "%s/closed", root);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(p, sizeof(p), "%s/open.sock", d);
	fd = listen_at(p);
	assert_int_equal(chmod(p, 0666), 0);
	assert_int_equal(diagnose_as_nobody(p, got, sizeof(got)), EACCES);
	close(fd);
	assert_non_null(strstr(got, p));
	assert_non_null(strstr(got, "may not enter the directory"));
	assert_non_null(strstr(got, d));
	assert_null(strstr(got, "on the socket"));
}

/* Through the HTTP layer: the transport error names the socket and why,
 * not the URL's host and port. */
static void test_http_error(void **state)
{
	(void)state;
	char p[200];
	struct cli_conn c;
	struct cli_resp r;
	snprintf(p, sizeof(p), "%s/gone.sock", root);
	cli_token_file = NULL;
	setenv("SANDLENS_TOKEN_FILE", "/nonexistent/sl-token", 1);
	assert_int_equal(cli_http_init(&c, "http://127.0.0.1:9753", p), 0);
	assert_int_equal(cli_http_get(&c, "/healthz", &r), -1);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.sock_errno, ENOENT);
	assert_null(strstr(r.error, "127.0.0.1"));
	assert_null(strstr(r.error, "9753"));
	assert_non_null(strstr(r.error, p));
	assert_non_null(strstr(r.error, "agent is not running"));

	snprintf(p, sizeof(p), "%s/s.sock", root); /* stale since test_diagnose */
	c.socket = p;
	assert_int_equal(cli_http_get(&c, "/healthz", &r), -1);
	assert_int_equal(r.sock_errno, ECONNREFUSED);
	assert_null(strstr(r.error, "127.0.0.1"));
	assert_non_null(strstr(r.error, "stale socket"));
	cli_resp_free(&r);
	cli_http_close(&c);
}

int main(void)
{
	if (sl_test_mk_root(root, sizeof(root), "sl-clisock"))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diagnose),
		cmocka_unit_test(test_diagnose_eacces),
		cmocka_unit_test(test_http_error),
	};
	return sl_test_rm_root(root, cmocka_run_group_tests(tests, NULL, NULL));
}
