/* API access control (docs/API.md "Access control"): who is an admin, which
 * route needs one, the bearer token file, and what a non-admin may see.
 *
 * Admin: over the unix socket, a peer (SO_PEERCRED) with uid 0 or in the
 * group api.admin_group (primary or supplementary, SO_PEERGROUPS); on any
 * listener, a request with "Authorization: Bearer <token>" matching the
 * token of api.token_file. Everybody else is a reader: public routes, and
 * events without argv.
 *
 * The policy functions are pure (unit-tested in tests/unit/test_api_auth.c);
 * the I/O ones say so.
 */
#ifndef SANDLENS_API_API_AUTH_H
#define SANDLENS_API_API_AUTH_H

#include <jansson.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Bytes of the token (hex characters read from / written to the file). */
#define SL_API_TOKEN_MIN 16
#define SL_API_TOKEN_MAX 256
/* A generated token: 32 random bytes as 64 hex characters. */
#define SL_API_TOKEN_GEN_BYTES 32
/* Supplementary groups of a peer looked at (more are ignored). */
#define SL_API_MAX_PEER_GROUPS 64

/* Who sent a request. */
struct sl_api_caller {
	int unix_peer;     /* 1: came over the unix socket, uid/gid are its peer credentials */
	uid_t uid;         /* peer uid (unix_peer), else (uid_t)-1 (unknown) */
	int in_admin_group; /* unix_peer and api.admin_group is one of its groups */
	int token_ok;      /* the request carried the right bearer token */
};

/* 1 when the caller may use admin routes (see the top of this file). */
int sl_api_caller_is_admin(const struct sl_api_caller *c);

/* 1 when the caller counts as having CAP_SYSLOG for kernel addresses in
 * results (profile.h sl_kaddrs_visible(NULL, this), which applies
 * kptr_restrict as /proc/kallsyms does): uid 0 over the socket, or the
 * token holder (the token file is readable by root only). A member of
 * api.admin_group is an admin but not this. */
int sl_api_caller_cap_syslog(const struct sl_api_caller *c);

/* Access a route needs. */
enum sl_api_access {
	SL_ACCESS_PUBLIC,   /* anybody */
	SL_ACCESS_REDACTED, /* anybody; a non-admin gets secrets withheld (events: argv) */
	SL_ACCESS_ADMIN,    /* admins only: 403 for everybody else */
};

/* The access rule of method on url (path without the query):
 * - /mcp, any method: PUBLIC (the MCP route applies these rules to each
 *   tool's API requests, as its caller: src/api/api_mcp.c);
 * - any method other than GET and HEAD (POST, DELETE, ...): ADMIN;
 * - /api/v1/tasks and everything below it (task records echo targets,
 *   progress holds stack frames, results hold stacks and addresses): ADMIN;
 * - /api/v1/events, everything below it (/watch, /{id}/flight), /api/v1/flight
 *   and everything below it: REDACTED;
 * - everything else (/healthz, /metrics, /api/v1/containers, /api/v1/sched,
 *   /api/v1/workloads..., /api/v1/capabilities, unknown paths): PUBLIC. */
enum sl_api_access sl_api_route_access(const char *method, const char *url);

/* What a non-admin gets of events: each object of the array that has
 * "argv" loses it and gets "argv_withheld": true instead. Other fields
 * (filename, comm, ...) stay. Returns how many were changed. */
size_t sl_api_withhold_secrets(json_t *events);

/* 1 when the Authorization header value hdr (may be NULL) is "Bearer "
 * (scheme case-insensitive, then one or more spaces) followed by exactly
 * token[0..toklen). The token bytes are compared in constant time (the
 * time depends only on the lengths). toklen 0 never matches. */
int sl_api_bearer_matches(const char *hdr, const char *token, size_t toklen);

/* Checks the metadata of a token file: a regular file, owned by uid 0 (or
 * by the caller's effective uid: a non-root agent's own file), no
 * permission bits for group or others, at most SL_API_TOKEN_MAX + 2
 * bytes. 0, or -EPERM with the reason in err ("... is group- or
 * other-accessible (mode 0644); chmod 600 it"). */
int sl_api_token_stat_ok(const struct stat *st, char *err, size_t errlen);

/* Parses the token text buf[0..len): leading/trailing whitespace dropped,
 * then SL_API_TOKEN_MIN..SL_API_TOKEN_MAX printable non-space ASCII bytes.
 * Copies it NUL-terminated to tok (toksize > SL_API_TOKEN_MAX) and returns
 * its length, or -EINVAL with the reason in err. */
int sl_api_token_parse(const char *buf, size_t len, char *tok, size_t toksize, char *err,
		       size_t errlen);

/* I/O. Reads the token file at path (opened O_NOFOLLOW|O_NONBLOCK, checked
 * with sl_api_token_stat_ok on the open descriptor, size-bounded). When the
 * file does not exist and create is set, generates one first: its
 * directory must exist (one level is created, mode 0755, owned by root),
 * be owned by root (or by the agent's effective uid: a non-root agent
 * run by systemd owns its RuntimeDirectory) and not group/other-writable; the file is created
 * O_CREAT|O_EXCL|O_NOFOLLOW mode 0600 with SL_API_TOKEN_GEN_BYTES from
 * getrandom(2) as hex and a newline. Returns the token length (tok as in
 * sl_api_token_parse), 0 when the file is missing and create is 0, or a
 * negative errno with "api.token_file: <path>: <reason>" in err. */
int sl_api_token_load(const char *path, int create, char *tok, size_t toksize, char *err,
		      size_t errlen);

/* I/O. Peer credentials of a connected unix socket fd: uid, and whether
 * admin_gid ((gid_t)-1: none) is its primary or one of its supplementary
 * groups. Returns 0, or -errno (c is then left "unknown": uid (uid_t)-1). */
int sl_api_peer_caller(int fd, gid_t admin_gid, struct sl_api_caller *c);

#endif
