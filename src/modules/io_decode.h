/* io module pure functions: op names, slow_io record decoding, the
 * /proc/diskstats parser and disk names. No agent state: unit-tested in
 * tests/unit/test_io_decode.c. */
#ifndef SANDLENS_MODULES_IO_DECODE_H
#define SANDLENS_MODULES_IO_DECODE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sandlens/io.h"

/* "read" | "write" | "flush" | "discard" | "other" (enum sl_io_op);
 * "unknown" outside. */
const char *io_op_name(unsigned op);

/* major / minor of a kernel dev_t as the BPF half encodes it (MKDEV:
 * major << 20 | minor). */
static inline unsigned io_dev_major(uint32_t dev) { return dev >> 20; }
static inline unsigned io_dev_minor(uint32_t dev) { return dev & 0xfffff; }

/* Module fields of a slow_io record of size bytes: tid, comm, disk
 * ("M:m"), disk_name (name, "" when not given), sector (absent for a flush:
 * (sector_t)-1), bytes, op,
 * queue_ns, device_ns, total_ns, queued, error, cmd_flags,
 * truncated_count, blkcg {cgroup_id, hierarchy_id}, task {pid, comm,
 * cgroup_id} (the poll loop adds the containers). name: the disk's
 * name or NULL. Returns a new object, or NULL when size is short or the
 * type is not SL_EV_IO_SLOW. */
json_t *io_slow_fields(const struct sl_io_slow_event *e, size_t size, const char *name);

/* One disk row of /proc/diskstats (Documentation/admin-guide/iostats.rst):
 * the fields of block/genhd.c diskstats_show(). ops[]/sectors[]/ticks_ms[]
 * by enum sl_io_op (read, write, flush, discard; other unused: the
 * kernel has no such group; flush has no sectors). */
struct io_diskstat {
	unsigned major, minor;
	char name[64];
	uint64_t ops[SL_IO_NOPS];      /* requests completed */
	uint64_t merged[SL_IO_NOPS];   /* merged (read, write, discard) */
	uint64_t sectors[SL_IO_NOPS];  /* 512-byte sectors */
	uint64_t ticks_ms[SL_IO_NOPS]; /* ms spent by requests of the group */
	uint64_t in_flight;            /* requests issued to the driver, not completed */
	uint64_t io_ticks_ms;          /* ms with at least one request in flight */
	uint64_t time_in_queue_ms;     /* weighted ms (ticks summed) */
	int nfields;                   /* number fields on the line (11, 15, 17, 20) */
};

/* Parse one line of /proc/diskstats into *d. Returns 0, or -EINVAL for a
 * line that is not a diskstats row (fewer than 11 numbers after the name, or
 * anything but numbers). */
int io_diskstat_parse(const char *line, struct io_diskstat *d);

#endif
