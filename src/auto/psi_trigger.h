/* PSI poll triggers (Documentation/accounting/psi.rst "Monitoring for
 * pressure thresholds"; kernel/sched/psi.c psi_trigger_create()).
 *
 * A trigger is the text "<some|full> <threshold_us> <window_us>" written to
 * a pressure file ({cpu,memory,io}.pressure of a cgroup v2 directory, or
 * /proc/pressure/<res>); the open file then reports POLLPRI when the tasks
 * of the cgroup were stalled for more than threshold_us within any
 * window_us. The kernel accepts a window of 500 ms .. 10 s and a threshold
 * of 1 .. window_us; a writer without CAP_SYS_RESOURCE (checked at open)
 * only windows that are a multiple of 2 s (kernels >= 6.5). The trigger
 * lives as long as the file stays open; one per open file.
 */
#ifndef SANDLENS_AUTO_PSI_TRIGGER_H
#define SANDLENS_AUTO_PSI_TRIGGER_H

#include <stddef.h>
#include <stdint.h>

#define SL_PSI_WINDOW_MIN_US 500000u   /* kernel/sched/psi.c WINDOW_MIN_US */
#define SL_PSI_WINDOW_MAX_US 10000000u /* WINDOW_MAX_US */
#define SL_PSI_UNPRIV_WINDOW_US 2000000u /* unprivileged windows: multiples of 2 s */

struct sl_psi_trigger {
	int full;              /* 0 "some", 1 "full" */
	uint32_t threshold_us; /* stall time within the window */
	uint32_t window_us;
};

/* Check t against the kernel's rules (privileged: CAP_SYS_RESOURCE).
 * 0, or -EINVAL with the reason in err. */
int sl_psi_trigger_check(const struct sl_psi_trigger *t, int privileged, char *err, size_t errlen);

/* Write the trigger text ("some 150000 1000000", no newline) into buf.
 * Returns its length, or -EINVAL (t fails the check for a privileged
 * writer) / -ENOSPC (buf too small). */
int sl_psi_trigger_format(const struct sl_psi_trigger *t, char *buf, size_t len);

/* Parse a trigger text (as formatted above; trailing whitespace allowed).
 * 0, or -EINVAL (not "<some|full> <u32> <u32>", or failing the privileged
 * check). */
int sl_psi_trigger_parse(const char *text, struct sl_psi_trigger *out);

/* For an unprivileged writer: the window rounded up to a multiple of 2 s
 * (at most 10 s) and the threshold scaled by the same factor, so the
 * stall share (threshold / window) stays. Returns 1 when *t changed, 0
 * when it already fits. */
int sl_psi_trigger_unpriv(struct sl_psi_trigger *t);

/* 1 when this process has CAP_SYS_RESOURCE in its effective set (read from
 * /proc/self/status CapEff), 0 otherwise or unknown. */
int sl_psi_privileged(void);

/* Open the pressure file at path (O_RDWR|O_NONBLOCK|O_CLOEXEC|O_NOFOLLOW)
 * and write the trigger. Returns the fd (poll it for POLLPRI; POLLERR
 * means the cgroup is gone), or -errno: -ENOENT no such file (cgroup v1
 * only, PSI off), -EINVAL the kernel refused the trigger, -EOPNOTSUPP PSI
 * disabled (psi=0). */
int sl_psi_trigger_open(const char *path, const struct sl_psi_trigger *t);

#endif
