/* Who is at the other end before the CLI sends its admin token
 * (peer_check.c). A token found in the default file, unasked, must not go
 * to whoever bound 127.0.0.1:9753 or planted a socket while the agent was
 * down. */
#ifndef SANDLENS_CLI_PEER_CHECK_H
#define SANDLENS_CLI_PEER_CHECK_H

#include <sys/types.h>

/* Owner (SO_PEERCRED uid) of the process listening on the unix socket at
 * path: 0 with *uid set, or -errno (cannot connect / no credentials). */
int cli_socket_peer_uid(const char *path, uid_t *uid);

/* Owner of the TCP listener(s) on the loopback port of url
 * ("http://127.0.0.1:9753", "http://localhost:9753", "http://[::1]:9753";
 * port 80 when none), from /proc/net/tcp and /proc/net/tcp6 (the uid
 * column of sockets in state LISTEN, 0A, bound to 127.0.0.1, ::1 or the
 * wildcard address on that port; tcp(5) of /proc). proc_root is "/proc"
 * (tests give a fixture). Returns 0 with *uid set when every such
 * listener has the same owner; -ENOENT when none listens; -EPERM when
 * listeners of different owners share the port; -EINVAL when url's host
 * is not a loopback name or address (the listener cannot be known). */
int cli_tcp_listener_uid(const char *proc_root, const char *url, uid_t *uid);

#endif
