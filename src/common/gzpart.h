/* gzip (RFC 1952) bodies assembled from separately compressed parts.
 *
 * /metrics is a large text that changes once per statistics pass (the
 * container families) followed by a small text that changes on every scrape
 * (the agent's own counters). Compressing the large part once per pass and
 * only the small part per request gives one valid gzip member:
 *
 *   SL_GZ_HEADER | part.z (raw deflate, ends in a sync flush: byte aligned,
 *   no final block) | tail (raw deflate of the small text, final block,
 *   then CRC-32 and ISIZE of the whole uncompressed body)
 *
 * This is how pigz joins independently compressed blocks: deflate blocks
 * may follow a sync-flushed block, and crc32_combine() gives the CRC of the
 * concatenation. All the compression is zlib's; this file only joins.
 */
#ifndef SANDLENS_COMMON_GZPART_H
#define SANDLENS_COMMON_GZPART_H

#include <stddef.h>
#include <stdint.h>

/* The 10-byte gzip member header (deflate, no name, no mtime, OS unknown). */
#define SL_GZ_HEADER_LEN 10
extern const unsigned char SL_GZ_HEADER[SL_GZ_HEADER_LEN];

/* One compressed leading part of a body. */
struct sl_gz_part {
	unsigned char *z; /* raw deflate data, sync-flushed (malloc'd) */
	size_t zlen;
	uint32_t crc;  /* CRC-32 of the uncompressed text */
	uint64_t len;  /* uncompressed length in bytes */
};

/* Compress text[0..len) at zlib level (1..9) into *out as a leading part.
 * Returns 0, -EINVAL (bad level) or -ENOMEM; *out is zeroed on error. */
int sl_gz_part_make(const void *text, size_t len, int level, struct sl_gz_part *out);

/* Free out->z and zero *out. NULL-safe. */
void sl_gz_part_free(struct sl_gz_part *p);

/* The closing bytes of a member whose earlier parts had CRC-32 crc_before
 * and uncompressed length len_before (0 and 0 when there are none; the
 * header still comes first): text compressed with a final block, then the
 * 8-byte trailer for the whole body. *out is malloc'd (*outlen bytes).
 * Returns 0, -EINVAL or -ENOMEM. */
int sl_gz_tail(const void *text, size_t len, int level, uint32_t crc_before, uint64_t len_before,
	       unsigned char **out, size_t *outlen);

/* 1 when an Accept-Encoding field value (RFC 9110 12.5.3; several header
 * lines joined with ", ") accepts gzip: a "gzip" or "x-gzip" member whose
 * weight is not 0 and no such member with weight 0; or, without any, a "*"
 * member whose weight is not 0. A malformed weight counts as 0. NULL or
 * empty: 0. Case-insensitive. */
int sl_gz_accepted(const char *accept_encoding);

#endif
