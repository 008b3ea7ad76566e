/* io module pure functions; see io_decode.h. */
#include "modules/io_decode.h"
#include "common/json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *io_op_name(unsigned op)
{
	static const char *const n[SL_IO_NOPS] = {"read", "write", "flush", "discard", "other"};
	return op < SL_IO_NOPS ? n[op] : "unknown";
}

json_t *io_slow_fields(const struct sl_io_slow_event *e, size_t size, const char *name)
{
	char comm[SL_COMM_LEN + 1], dev[24];
	json_t *o, *b;

	if (!e || size < sizeof(*e) || e->hdr.type != SL_EV_IO_SLOW)
		return NULL;
	memcpy(comm, e->task.comm, SL_COMM_LEN);
	comm[SL_COMM_LEN] = 0;
	snprintf(dev, sizeof(dev), "%u:%u", io_dev_major(e->key.dev), io_dev_minor(e->key.dev));
	o = json_object();
	b = json_object();
	json_object_set_new(o, "tid", json_integer(e->task.tid));
	json_object_set_new(o, "disk", json_string(dev));
	json_object_set_new(o, "disk_name", json_string(name ? name : ""));
	if (e->sector != (uint64_t)-1) /* a flush has no sector ((sector_t)-1) */
		json_object_set_new(o, "sector", json_integer((json_int_t)e->sector));
	json_object_set_new(o, "bytes", json_integer(e->bytes));
	json_object_set_new(o, "op", json_string(io_op_name(e->key.op)));
	json_object_set_new(o, "queue_ns", json_integer((json_int_t)e->queue_ns));
	json_object_set_new(o, "device_ns", json_integer((json_int_t)e->device_ns));
	json_object_set_new(o, "total_ns", json_integer((json_int_t)(e->queue_ns + e->device_ns)));
	json_object_set_new(o, "queued", json_boolean(e->queued));
	json_object_set_new(o, "error", json_integer(e->error));
	json_object_set_new(o, "cmd_flags", json_integer(e->cmd_flags));
	json_object_set_new(o, "truncated_count", json_integer((json_int_t)e->truncated_count));
	json_object_set_new(b, "cgroup_id", json_integer((json_int_t)e->key.blkcg_id));
	json_object_set_new(b, "hierarchy_id", json_integer(e->key.blkcg_hid));
	json_object_set_new(o, "blkcg", b);
	/* the submitter as the record has it; the poll loop replaces it with
	 * its attribution (sl_module_task_json) */
	b = json_object();
	json_object_set_new(b, "pid", json_integer(e->task.pid));
	json_object_set_new(b, "comm", sl_json_strz(comm));
	json_object_set_new(b, "cgroup_id", json_integer((json_int_t)e->task.cgroup_id));
	json_object_set_new(o, "task", b);
	return o;
}

int io_diskstat_parse(const char *line, struct io_diskstat *d)
{
	uint64_t v[17] = {0};
	char name[64];
	int n, off = 0, k = 0;

	memset(d, 0, sizeof(*d));
	if (!line || sscanf(line, "%u %u %63s%n", &d->major, &d->minor, name, &off) != 3)
		return -EINVAL;
	line += off;
	while (k < 17) {
		char *end;
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line < '0' || *line > '9')
			break;
		v[k++] = strtoull(line, &end, 10);
		line = end;
	}
	while (*line == ' ' || *line == '\t' || *line == '\n')
		line++;
	if (k < 11 || *line)
		return -EINVAL;
	n = k;
	snprintf(d->name, sizeof(d->name), "%s", name);
	/* reads: ios merges sectors ticks; writes: the same; in_flight io_ticks
	 * time_in_queue; discards (4.18+): ios merges sectors ticks; flush
	 * (5.5+): ios ticks */
	d->ops[SL_IO_OP_READ] = v[0];
	d->merged[SL_IO_OP_READ] = v[1];
	d->sectors[SL_IO_OP_READ] = v[2];
	d->ticks_ms[SL_IO_OP_READ] = v[3];
	d->ops[SL_IO_OP_WRITE] = v[4];
	d->merged[SL_IO_OP_WRITE] = v[5];
	d->sectors[SL_IO_OP_WRITE] = v[6];
	d->ticks_ms[SL_IO_OP_WRITE] = v[7];
	d->in_flight = v[8];
	d->io_ticks_ms = v[9];
	d->time_in_queue_ms = v[10];
	if (n >= 15) {
		d->ops[SL_IO_OP_DISCARD] = v[11];
		d->merged[SL_IO_OP_DISCARD] = v[12];
		d->sectors[SL_IO_OP_DISCARD] = v[13];
		d->ticks_ms[SL_IO_OP_DISCARD] = v[14];
	}
	if (n >= 17) {
		d->ops[SL_IO_OP_FLUSH] = v[15];
		d->ticks_ms[SL_IO_OP_FLUSH] = v[16];
	}
	d->nfields = n + 3;
	return 0;
}
