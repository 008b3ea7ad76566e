/* The CLI's peer checks before it sends the admin token
 * (src/cli/peer_check.c): owners of loopback listeners from fixture
 * /proc/net/tcp{,6} files, and the SO_PEERCRED owner of a real unix
 * socket. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/peer_check.c"
#include "tmp_root.h"

static char root[64];

static void put(const char *name, const char *text)
{
	char p[200];
	snprintf(p, sizeof(p), "%s/net/%s", root, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

#define HDR "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
/* port 9753 = 0x2619 */
#define L(addr, port, st, uid) "   0: " addr ":" port " 00000000:0000 " st " 00000000:00000000 00:00000000 00000000 " uid " 0 12345 1 0000000000000000 100 0 0 10 0\n"

static void test_tcp_listener(void **state)
{
	(void)state;
	uid_t u = 7;
	/* root's listener on 127.0.0.1:9753, a nobody connection on it */
	put("tcp", HDR L("0100007F", "2619", "0A", "0") L("0100007F", "2619", "01", "65534"));
	put("tcp6", HDR);
	assert_int_equal(cli_tcp_listener_uid(root, "http://127.0.0.1:9753", &u), 0);
	assert_int_equal(u, 0);
	assert_int_equal(cli_tcp_listener_uid(root, "http://localhost:9753/", &u), 0);
	/* nobody bound it (the agent is down) */
	put("tcp", HDR L("0100007F", "2619", "0A", "65534"));
	assert_int_equal(cli_tcp_listener_uid(root, "http://127.0.0.1:9753", &u), 0);
	assert_int_equal(u, 65534);
	/* the wildcard address counts; another port does not */
	put("tcp", HDR L("00000000", "2619", "0A", "1000") L("0100007F", "2618", "0A", "0"));
	assert_int_equal(cli_tcp_listener_uid(root, "http://127.0.0.1:9753", &u), 0);
	assert_int_equal(u, 1000);
	/* nothing listens */
	put("tcp", HDR L("0100007F", "2618", "0A", "0"));
	assert_int_equal(cli_tcp_listener_uid(root, "http://127.0.0.1:9753", &u), -ENOENT);
	/* IPv6 loopback, and a v4 root listener with a v6 nobody one: two owners */
	put("tcp6", HDR L("00000000000000000000000001000000", "2619", "0A", "65534"));
	assert_int_equal(cli_tcp_listener_uid(root, "http://[::1]:9753", &u), 0);
	assert_int_equal(u, 65534);
	put("tcp", HDR L("0100007F", "2619", "0A", "0"));
	assert_int_equal(cli_tcp_listener_uid(root, "http://127.0.0.1:9753", &u), -EPERM);
	/* not loopback: cannot be known */
	assert_int_equal(cli_tcp_listener_uid(root, "http://10.0.0.5:9753", &u), -EINVAL);
	assert_int_equal(cli_tcp_listener_uid(root, "http://127.0.0.1:99999", &u), -EINVAL);
	assert_int_equal(cli_tcp_listener_uid(root, "http://127.0.0.1.evil.example:9753", &u), -EINVAL);
	/* no port: 80 */
	put("tcp6", HDR);
	put("tcp", HDR L("0100007F", "0050", "0A", "0"));
	assert_int_equal(cli_tcp_listener_uid(root, "http://127.0.0.1", &u), 0);
	/* garbage lines are skipped */
	put("tcp", HDR "garbage\n\n" L("0100007F", "2619", "0A", "0"));
	assert_int_equal(cli_tcp_listener_uid(root, "http://127.0.0.1:9753", &u), 0);
	assert_int_equal(u, 0);
}

static void test_socket_peer(void **state)
{
	(void)state;
	char p[200];
	snprintf(p, sizeof(p), "%s/s.sock", root);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, p);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	uid_t u = 12345;
	assert_int_equal(cli_socket_peer_uid(p, &u), 0);
	assert_int_equal(u, geteuid());
	close(fd);
	/* a stale socket file: nobody answers */
	assert_true(cli_socket_peer_uid(p, &u) < 0);
	snprintf(p, sizeof(p), "%s/none.sock", root);
	assert_int_equal(cli_socket_peer_uid(p, &u), -ENOENT);
}

int main(void)
{
	if (sl_test_mk_root(root, sizeof(root), "sl-clipeer"))
		return 1;
	char p[200];
	snprintf(p, sizeof(p), "%s/net", root);
	mkdir(p, 0700);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_listener),
		cmocka_unit_test(test_socket_peer),
	};
	return sl_test_rm_root(root, cmocka_run_group_tests(tests, NULL, NULL));
}
