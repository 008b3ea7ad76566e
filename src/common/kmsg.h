/* The kernel log as records, from /dev/kmsg (Documentation/ABI/testing/
 * dev-kmsg): each read() returns one record "<prefix>,<seq>,<ts_usec>,
 * <flags>[,...];<message>\n" followed by optional " KEY=value" continuation
 * lines. Each open file has its own cursor, so every module that reads the
 * log (stall: soft lockups, RCU stalls; gpu: NVRM Xid lines) owns one
 * reader. Non-blocking: a poll returns what is there. */
#ifndef SANDLENS_COMMON_KMSG_H
#define SANDLENS_COMMON_KMSG_H

#include <stddef.h>
#include <stdint.h>

struct sl_kmsg_rec {
	unsigned level;    /* syslog priority: prefix & 7 (0 = emerg .. 7 = debug) */
	unsigned facility; /* prefix >> 3 (0 = kernel) */
	uint64_t seq;      /* the record's sequence number */
	uint64_t ts_us;    /* CLOCK_MONOTONIC microseconds when it was logged */
	char msg[1024];    /* the message, unescaped of the kernel's \xNN, truncated */
};

/* Parse one record as read(2) from /dev/kmsg returned it (len bytes, not
 * NUL-terminated; continuation lines after the first \n are ignored).
 * Returns 0, or -EINVAL when the header is malformed. */
int sl_kmsg_parse(const char *buf, size_t len, struct sl_kmsg_rec *r);

struct sl_kmsg;

/* Open a reader. from_end != 0: only records logged after now (an agent
 * start must not report a lockup from last week's boot); 0: the whole
 * buffer. path NULL = "/dev/kmsg" (tests pass a fixture file: records one a
 * line). Returns NULL with errno set (EACCES without CAP_SYSLOG, ENOENT). */
struct sl_kmsg *sl_kmsg_open(const char *path, int from_end);

/* Next record: 1 = *r filled, 0 = none right now, -errno on a read error.
 * Records overwritten before they were read (EPIPE from the kernel) are
 * skipped and counted in sl_kmsg_lost. */
int sl_kmsg_next(struct sl_kmsg *k, struct sl_kmsg_rec *r);

/* Records the kernel overwrote before this reader read them (EPIPE count). */
uint64_t sl_kmsg_lost(const struct sl_kmsg *k);

void sl_kmsg_close(struct sl_kmsg *k);

#endif
