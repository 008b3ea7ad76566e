/* gzip bodies from separately compressed parts: see gzpart.h. */
#include "common/gzpart.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=255 (unknown) */
const unsigned char SL_GZ_HEADER[SL_GZ_HEADER_LEN] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255};

#define CHUNK_MAX (1u << 30) /* avail_in/avail_out are uInt */

/* Raw deflate of text with the given final flush (Z_SYNC_FLUSH or
 * Z_FINISH); extra = bytes reserved after the data for the caller. */
static int deflate_raw(const void *text, size_t len, int level, int flush, size_t extra,
		       unsigned char **out, size_t *zlen)
{
	*out = NULL;
	*zlen = 0;
	if (level < 1 || level > 9)
		return -EINVAL;
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	/* deflateBound assumes one Z_FINISH; a sync flush adds an empty stored
	 * block (<= 5 bytes) and chunked input may add a few more */
	/* start from the bound of at most 64 MiB of input; doubling grows it */
	size_t cap = deflateBound(&zs, (uLong)(len > (64u << 20) ? (64u << 20) : len)) + 64;
	unsigned char *buf = malloc(cap + extra);
	if (!buf) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	const unsigned char *in = text;
	size_t left = len, used = 0;
	int rc;
	for (;;) {
		uInt take = left > CHUNK_MAX ? CHUNK_MAX : (uInt)left;
		zs.next_in = (Bytef *)(uintptr_t)in;
		zs.avail_in = take;
		int fl = left == take ? flush : Z_NO_FLUSH;
		do {
			if (used == cap) {
				size_t ncap = cap * 2;
				unsigned char *nb = realloc(buf, ncap + extra);
				if (!nb) {
					free(buf);
					deflateEnd(&zs);
					return -ENOMEM;
				}
				buf = nb;
				cap = ncap;
			}
			size_t room = cap - used;
			zs.next_out = buf + used;
			zs.avail_out = room > CHUNK_MAX ? CHUNK_MAX : (uInt)room;
			uInt before = zs.avail_out;
			rc = deflate(&zs, fl);
			used += before - zs.avail_out;
			if (rc == Z_STREAM_ERROR) {
				free(buf);
				deflateEnd(&zs);
				return -ENOMEM;
			}
		} while (zs.avail_out == 0 || (fl == Z_FINISH && rc != Z_STREAM_END));
		in += take;
		left -= take;
		if (!left)
			break;
	}
	deflateEnd(&zs);
	if (cap > used + (used >> 3) + 4096) { /* give back the unused bound */
		unsigned char *nb = realloc(buf, used + extra);
		if (nb)
			buf = nb;
	}
	*out = buf;
	*zlen = used;
	return 0;
}

static uint32_t crc_of(const void *text, size_t len)
{
	uLong crc = crc32(0L, Z_NULL, 0);
	const unsigned char *p = text;
	while (len) {
		uInt take = len > CHUNK_MAX ? CHUNK_MAX : (uInt)len;
		crc = crc32(crc, p, take);
		p += take;
		len -= take;
	}
	return (uint32_t)crc;
}

int sl_gz_part_make(const void *text, size_t len, int level, struct sl_gz_part *out)
{
	memset(out, 0, sizeof(*out));
	int rc = deflate_raw(text, len, level, Z_SYNC_FLUSH, 0, &out->z, &out->zlen);
	if (rc)
		return rc;
	out->crc = crc_of(text, len);
	out->len = len;
	return 0;
}

void sl_gz_part_free(struct sl_gz_part *p)
{
	if (!p)
		return;
	free(p->z);
	memset(p, 0, sizeof(*p));
}

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

int sl_gz_tail(const void *text, size_t len, int level, uint32_t crc_before, uint64_t len_before,
	       unsigned char **out, size_t *outlen)
{
	unsigned char *buf;
	size_t zlen;
	int rc = deflate_raw(text, len, level, Z_FINISH, 8, &buf, &zlen);
	if (rc) {
		*out = NULL;
		*outlen = 0;
		return rc;
	}
	/* zlib's crc32_combine takes the second block's length as z_off_t */
	uint32_t crc = (uint32_t)crc32_combine(crc_before, crc_of(text, len), (z_off_t)len);
	put_le32(buf + zlen, crc);
	put_le32(buf + zlen + 4, (uint32_t)((len_before + len) & 0xffffffffu)); /* ISIZE: mod 2^32 */
	*out = buf;
	*outlen = zlen + 8;
	return 0;
}

/* The weight of one list member's parameters, p..end being what follows the
 * coding name: 1000ths; 1000 when there is no weight. RFC 9110 12.4.2:
 * weight = OWS ";" OWS "q=" qvalue, qvalue = "0" ["." 0*3DIGIT] /
 * "1" ["." 0*3("0")]. Anything else is malformed and weighs 0 (not
 * acceptable: the answer falls back to identity, which is always safe). */
static int qvalue(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end)
		return 1000;
	if (*p++ != ';')
		return 0;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (end - p < 3 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=' || (p[2] != '0' && p[2] != '1'))
		return 0;
	int one = p[2] == '1', v = one ? 1000 : 0, scale = 100;
	p += 3;
	if (p < end && *p == '.') {
		p++;
		for (int d = 0; d < 3 && p < end && isdigit((unsigned char)*p); d++, p++) {
			if (one && *p != '0')
				return 0;
			v += (*p - '0') * scale;
			scale /= 10;
		}
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p == end ? v : 0;
}

int sl_gz_accepted(const char *ae)
{
	if (!ae)
		return 0;
	int q_gzip = -1, q_star = -1;
	const char *p = ae;
	while (*p) {
		const char *end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		const char *name = p;
		while (p < end && *p != ';' && *p != ' ' && *p != '\t')
			p++;
		size_t nl = (size_t)(p - name);
		int q = qvalue(p, end);
		/* an explicit zero for gzip (or its alias) refuses it, whatever else
		 * the list says */
		if ((nl == 4 && !strncasecmp(name, "gzip", 4)) || (nl == 6 && !strncasecmp(name, "x-gzip", 6)))
			q_gzip = q_gzip < 0 || q == 0 ? q : q_gzip == 0 ? 0 : q;
		else if (nl == 1 && name[0] == '*')
			q_star = q;
		p = *end ? end + 1 : end;
	}
	if (q_gzip >= 0)
		return q_gzip > 0;
	return q_star > 0;
}
