/* The service manager notification protocol (systemd's sd_notify(3)):
 * one datagram of "KEY=VALUE\n..." lines to the AF_UNIX socket named by
 * $NOTIFY_SOCKET (a path, or an abstract name written with a leading '@').
 * Implemented here (a socket and a sendto) rather than linked from
 * libsystemd: the protocol is small and stable, and the agent keeps no
 * run-time dependency on systemd. Used for Type=notify readiness
 * (READY=1), reload (RELOADING=1 + MONOTONIC_USEC, then READY=1) and
 * shutdown (STOPPING=1); docs/DEPLOY.md. */
#ifndef SANDLENS_AGENT_SDNOTIFY_H
#define SANDLENS_AGENT_SDNOTIFY_H

/* Send state (e.g. "READY=1\nSTATUS=running") to $NOTIFY_SOCKET.
 * Returns 1 when sent, 0 when NOTIFY_SOCKET is unset or empty (not run by
 * a service manager: nothing to do), or -errno (a name that is not an
 * absolute path or '@'-abstract name: -EINVAL; too long: -ENAMETOOLONG;
 * socket or sendto errors). Any thread. */
int sl_sd_notify(const char *state);

/* sl_sd_notify of "RELOADING=1\nMONOTONIC_USEC=<CLOCK_MONOTONIC now in
 * microseconds>" (what sd_notify(3) asks of a service reloading). Same
 * return values. */
int sl_sd_notify_reloading(void);

#endif
