/* Why the CLI cannot talk to the agent over a unix socket (sock_diag.c):
 * libcurl reports a failed unix-socket connect in the words of a TCP one
 * ("Failed to connect to 127.0.0.1 port 9753"), naming an address that was
 * never tried. */
#ifndef SANDLENS_CLI_SOCK_DIAG_H
#define SANDLENS_CLI_SOCK_DIAG_H

#include <stddef.h>

/* Connects to the unix socket at path (SOCK_STREAM) and, when that fails,
 * writes into buf (size bytes, NUL-terminated, cut to fit) a sentence that
 * names path, the reason and what to do:
 *   ENOENT        the socket does not exist: the agent is not running or
 *                 api.unix_socket names another path;
 *   EACCES/EPERM  not permitted (connect(2) needs write permission on the
 *                 socket and search permission on its directories): root or
 *                 a member of api.admin_group;
 *   ECONNREFUSED  nobody listens: a stale socket of an agent that stopped;
 *   ENOTSOCK, ENOTDIR, ENAMETOOLONG (a path of sizeof(sun_path) bytes or
 *                 more) and the rest: strerror's text.
 * Returns the errno of the failed connect (> 0), or 0 when the connect
 * succeeds (buf then holds "" and the failure was elsewhere). */
int cli_socket_diagnose(const char *path, char *buf, size_t size);

#endif
