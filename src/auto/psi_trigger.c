/* PSI poll triggers (psi_trigger.h). */
#include "auto/psi_trigger.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sl_psi_trigger_check(const struct sl_psi_trigger *t, int privileged, char *err, size_t errlen)
{
	if (t->window_us < SL_PSI_WINDOW_MIN_US || t->window_us > SL_PSI_WINDOW_MAX_US) {
		snprintf(err, errlen, "window %u us outside %u..%u us", t->window_us, SL_PSI_WINDOW_MIN_US,
			 SL_PSI_WINDOW_MAX_US);
		return -EINVAL;
	}
	if (t->threshold_us == 0 || t->threshold_us > t->window_us) {
		snprintf(err, errlen, "threshold %u us must be 1..window (%u us)", t->threshold_us, t->window_us);
		return -EINVAL;
	}
	if (!privileged && t->window_us % SL_PSI_UNPRIV_WINDOW_US) {
		snprintf(err, errlen, "window %u us is not a multiple of 2 s (no CAP_SYS_RESOURCE)", t->window_us);
		return -EINVAL;
	}
	return 0;
}

int sl_psi_trigger_format(const struct sl_psi_trigger *t, char *buf, size_t len)
{
	char err[128];
	if (sl_psi_trigger_check(t, 1, err, sizeof(err)))
		return -EINVAL;
	int n = snprintf(buf, len, "%s %u %u", t->full ? "full" : "some", t->threshold_us, t->window_us);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return n;
}

static int parse_u32(const char **pp, uint32_t *out)
{
	const char *p = *pp;
	if (*p < '0' || *p > '9')
		return -1;
	unsigned long long v = 0;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > UINT32_MAX)
			return -1;
		p++;
	}
	*out = (uint32_t)v;
	*pp = p;
	return 0;
}

int sl_psi_trigger_parse(const char *text, struct sl_psi_trigger *out)
{
	struct sl_psi_trigger t = {0};
	char err[128];
	if (!text)
		return -EINVAL;
	if (!strncmp(text, "some ", 5))
		t.full = 0;
	else if (!strncmp(text, "full ", 5))
		t.full = 1;
	else
		return -EINVAL;
	const char *p = text + 5;
	if (parse_u32(&p, &t.threshold_us) || *p != ' ')
		return -EINVAL;
	p++;
	if (parse_u32(&p, &t.window_us))
		return -EINVAL;
	while (*p == ' ' || *p == '\n' || *p == '\t')
		p++;
	if (*p || sl_psi_trigger_check(&t, 1, err, sizeof(err)))
		return -EINVAL;
	*out = t;
	return 0;
}

int sl_psi_trigger_unpriv(struct sl_psi_trigger *t)
{
	if (t->window_us && t->window_us % SL_PSI_UNPRIV_WINDOW_US == 0)
		return 0;
	uint64_t w = ((uint64_t)t->window_us + SL_PSI_UNPRIV_WINDOW_US - 1) / SL_PSI_UNPRIV_WINDOW_US *
		     SL_PSI_UNPRIV_WINDOW_US;
	if (w == 0)
		w = SL_PSI_UNPRIV_WINDOW_US;
	if (w > SL_PSI_WINDOW_MAX_US)
		w = SL_PSI_WINDOW_MAX_US;
	uint64_t thr = t->window_us ? (uint64_t)t->threshold_us * w / t->window_us : t->threshold_us;
	if (thr == 0)
		thr = 1;
	if (thr > w)
		thr = w;
	t->window_us = (uint32_t)w;
	t->threshold_us = (uint32_t)thr;
	return 1;
}

int sl_psi_privileged(void)
{
	char line[256];
	unsigned long long eff = 0;
	int have = 0;
	FILE *f = fopen("/proc/self/status", "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			have = 1;
	if (f)
		fclose(f);
	return have && (eff >> 24 & 1); /* CAP_SYS_RESOURCE = 24, linux/capability.h */
}

int sl_psi_trigger_open(const char *path, const struct sl_psi_trigger *t)
{
	char buf[64];
	int n = sl_psi_trigger_format(t, buf, sizeof(buf));
	if (n < 0)
		return n;
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	/* psi.rst: the kernel takes the text without the NUL; write(2) once */
	if (write(fd, buf, (size_t)n) != n) {
		int e = errno ? errno : EIO;
		close(fd);
		return -e;
	}
	return fd;
}
