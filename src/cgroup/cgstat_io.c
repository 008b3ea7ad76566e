/* io / blkio and pids readers (see cgstat.h, docs/STATS.md "I/O", "pids"). */
#include "cgroup/cgstat.h"

#include <string.h>

/* Row for major:minor, added when missing; NULL when the table is full
 * (the device still counts in the totals and in ndev_dropped, once). */
static struct sl_cgstat_iodev *dev_row(struct sl_cgstat_io *io, uint32_t maj, uint32_t min,
				       uint64_t *dropped_seen, size_t ndropped_max)
{
	for (uint32_t i = 0; i < io->ndev; i++)
		if (io->dev[i].major == maj && io->dev[i].minor == min)
			return &io->dev[i];
	if (io->ndev < SL_CGSTAT_IO_MAXDEV) {
		struct sl_cgstat_iodev *d = &io->dev[io->ndev++];
		d->major = maj;
		d->minor = min;
		return d;
	}
	/* Remember dropped devices (by packed dev number) to count each once. */
	uint64_t key = (uint64_t)maj << 32 | min;
	for (uint32_t i = 0; i < io->ndev_dropped && i < ndropped_max; i++)
		if (dropped_seen[i] == key)
			return NULL;
	if (io->ndev_dropped < ndropped_max)
		dropped_seen[io->ndev_dropped] = key;
	io->ndev_dropped++;
	return NULL;
}

#define DROPPED_TRACK 256

/* "MAJ:MIN" at *pp. */
static bool parse_devno(const char **pp, uint32_t *maj, uint32_t *min)
{
	const char *p = *pp;
	uint64_t a, b;

	if (!sl_cgparse_dec(&p, &a) || *p != ':')
		return false;
	p++;
	if (!sl_cgparse_dec(&p, &b) || a > UINT32_MAX || b > UINT32_MAX)
		return false;
	*maj = (uint32_t)a;
	*min = (uint32_t)b;
	*pp = p;
	return true;
}

static bool sp(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int sl_cgstat_io_v2_text(const char *io_stat, struct sl_cgstat_io *out)
{
	static const char *const keys[4] = {"rbytes", "wbytes", "rios", "wios"};
	uint64_t dropped_seen[DROPPED_TRACK];
	const char *p = io_stat;
	int bad = 0;

	memset(out, 0, sizeof(*out));
	if (!p)
		return 0;
	out->known = SL_IO_BYTES | SL_IO_OPS;
	while (*p) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p);
		const char *q = p;
		uint32_t maj, min;
		uint64_t v[4] = {0};
		bool ok = true;

		while (q < end && sp(*q))
			q++;
		if (q == end)
			goto next;
		if (!parse_devno(&q, &maj, &min) || (q < end && !sp(*q))) {
			bad++;
			goto next;
		}
		while (q < end) {
			const char *tok, *eq;
			while (q < end && sp(*q))
				q++;
			if (q == end)
				break;
			tok = q;
			while (q < end && !sp(*q))
				q++;
			eq = memchr(tok, '=', (size_t)(q - tok));
			if (!eq) {
				ok = false;
				break;
			}
			for (int k = 0; k < 4; k++) {
				size_t kl = strlen(keys[k]);
				if ((size_t)(eq - tok) == kl && memcmp(tok, keys[k], kl) == 0) {
					const char *n = eq + 1;
					if (!sl_cgparse_dec(&n, &v[k]) || n != q)
						ok = false;
				}
			}
			/* other keys (dbytes, dios, cost.vrate=1.00 ...) ignored */
		}
		if (!ok) {
			bad++;
			goto next;
		}
		struct sl_cgstat_iodev *d = dev_row(out, maj, min, dropped_seen, DROPPED_TRACK);
		if (d) {
			d->rbytes = sat_add(d->rbytes, v[0]);
			d->wbytes = sat_add(d->wbytes, v[1]);
			d->rios = sat_add(d->rios, v[2]);
			d->wios = sat_add(d->wios, v[3]);
		}
		out->rbytes = sat_add(out->rbytes, v[0]);
		out->wbytes = sat_add(out->wbytes, v[1]);
		out->rios = sat_add(out->rios, v[2]);
		out->wios = sat_add(out->wios, v[3]);
next:
		p = eol ? eol + 1 : end;
	}
	return bad;
}

/* One v1 blkio file; ops = false: bytes file, true: serviced file. */
static int parse_blkio_v1(const char *text, bool ops, struct sl_cgstat_io *out,
			  uint64_t *dropped_seen)
{
	const char *p = text;
	int bad = 0;

	while (*p) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p);
		const char *q = p, *op;
		size_t oplen;
		uint32_t maj, min;
		uint64_t v;

		while (q < end && sp(*q))
			q++;
		if (q == end)
			goto next;
		if (strncmp(q, "Total", 5) == 0 && q + 5 < end && sp(q[5])) {
			q += 5; /* "Total N": sum over devices, recomputed by us */
			while (q < end && sp(*q))
				q++;
			if (!sl_cgparse_dec(&q, &v))
				bad++;
			goto next;
		}
		if (!parse_devno(&q, &maj, &min) || q == end || !sp(*q)) {
			bad++;
			goto next;
		}
		while (q < end && sp(*q))
			q++;
		op = q;
		while (q < end && !sp(*q))
			q++;
		oplen = (size_t)(q - op);
		while (q < end && sp(*q))
			q++;
		if (oplen == 0 || !sl_cgparse_dec(&q, &v)) {
			bad++;
			goto next;
		}
		while (q < end && sp(*q))
			q++;
		if (q != end) {
			bad++;
			goto next;
		}
		bool rd = oplen == 4 && memcmp(op, "Read", 4) == 0;
		bool wr = oplen == 5 && memcmp(op, "Write", 5) == 0;
		if (!rd && !wr)
			goto next; /* Sync, Async, Discard, Total: not used */
		struct sl_cgstat_iodev *d = dev_row(out, maj, min, dropped_seen, DROPPED_TRACK);
		uint64_t *row = NULL, *tot;
		if (ops) {
			tot = rd ? &out->rios : &out->wios;
			if (d)
				row = rd ? &d->rios : &d->wios;
		} else {
			tot = rd ? &out->rbytes : &out->wbytes;
			if (d)
				row = rd ? &d->rbytes : &d->wbytes;
		}
		if (row)
			*row = sat_add(*row, v);
		*tot = sat_add(*tot, v);
next:
		p = eol ? eol + 1 : end;
	}
	return bad;
}

int sl_cgstat_io_v1_text(const char *service_bytes, const char *serviced,
			 struct sl_cgstat_io *out)
{
	uint64_t dropped_seen[DROPPED_TRACK];
	int bad = 0;

	memset(out, 0, sizeof(*out));
	if (service_bytes) {
		out->known |= SL_IO_BYTES;
		bad += parse_blkio_v1(service_bytes, false, out, dropped_seen);
	}
	if (serviced) {
		out->known |= SL_IO_OPS;
		bad += parse_blkio_v1(serviced, true, out, dropped_seen);
	}
	return bad;
}

int sl_cgstat_pids_text(const char *current, const char *max, struct sl_cgstat_pids *out)
{
	uint64_t v;
	int bad = 0, rc;

	memset(out, 0, sizeof(*out));
	if (current) {
		rc = sl_cgparse_u64(current, &v);
		if (rc == 0) {
			out->current = v;
			out->known |= SL_PIDS_CURRENT;
		} else {
			bad++;
		}
	}
	if (max) {
		rc = sl_cgparse_u64(max, &v); /* "max" -> SL_CGSTAT_UNLIMITED */
		if (rc >= 0) {
			out->max = v;
			out->known |= SL_PIDS_MAX;
		} else {
			bad++;
		}
	}
	return bad;
}
