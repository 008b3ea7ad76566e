/* ttrpc framing as containerd/ttrpc channel.go defines it (commit
 * 4b166fb8651537835471d5243c5b174127e70e38): a 10-byte header (length u32
 * big endian, stream id u32 big endian, type u8, flags u8) and a protobuf
 * body of at most 4 MiB: ttrpc.Request (type 1) or ttrpc.Response (type 2). */
#include "stats/guest.h"
#include "stats/kata_ttrpc.pb-c.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sl_ttrpc_hdr_encode(const struct sl_ttrpc_hdr *h, uint8_t *b)
{
	b[0] = (uint8_t)(h->length >> 24);
	b[1] = (uint8_t)(h->length >> 16);
	b[2] = (uint8_t)(h->length >> 8);
	b[3] = (uint8_t)h->length;
	b[4] = (uint8_t)(h->stream_id >> 24);
	b[5] = (uint8_t)(h->stream_id >> 16);
	b[6] = (uint8_t)(h->stream_id >> 8);
	b[7] = (uint8_t)h->stream_id;
	b[8] = h->type;
	b[9] = h->flags;
}

int sl_ttrpc_hdr_decode(const uint8_t *b, size_t max_len, struct sl_ttrpc_hdr *h)
{
	h->length = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	h->stream_id = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
	h->type = b[8];
	h->flags = b[9];
	if (!max_len)
		max_len = SL_TTRPC_MAX_MSG;
	return h->length > max_len ? -EMSGSIZE : 0;
}

int sl_ttrpc_request_frame(uint32_t stream_id, const char *service, const char *method,
			   const uint8_t *payload, size_t plen, int64_t timeout_nano,
			   uint8_t **out, size_t *len)
{
	Ttrpc__Request rq = TTRPC__REQUEST__INIT;
	rq.service = (char *)service;
	rq.method = (char *)method;
	rq.payload.data = (uint8_t *)payload;
	rq.payload.len = plen;
	rq.timeout_nano = timeout_nano;
	size_t n = ttrpc__request__get_packed_size(&rq);
	if (n > SL_TTRPC_MAX_MSG)
		return -EMSGSIZE;
	uint8_t *b = malloc(SL_TTRPC_HDR_LEN + n);
	if (!b)
		return -ENOMEM;
	struct sl_ttrpc_hdr h = {.length = (uint32_t)n, .stream_id = stream_id, .type = SL_TTRPC_REQUEST};
	sl_ttrpc_hdr_encode(&h, b);
	ttrpc__request__pack(&rq, b + SL_TTRPC_HDR_LEN);
	*out = b;
	*len = SL_TTRPC_HDR_LEN + n;
	return 0;
}

int sl_ttrpc_response_parse(const uint8_t *body, size_t len, int *status_code, char *msg,
			    size_t msglen, uint8_t **payload, size_t *plen)
{
	*payload = NULL;
	*plen = 0;
	*status_code = 0;
	if (msg && msglen)
		msg[0] = 0;
	Ttrpc__Response *rs = ttrpc__response__unpack(NULL, len, body);
	if (!rs)
		return -EPROTO;
	if (rs->status) {
		*status_code = rs->status->code;
		if (msg && msglen && rs->status->message)
			snprintf(msg, msglen, "%s", rs->status->message);
	}
	if (rs->payload.len) {
		*payload = malloc(rs->payload.len);
		if (!*payload) {
			ttrpc__response__free_unpacked(rs, NULL);
			return -ENOMEM;
		}
		memcpy(*payload, rs->payload.data, rs->payload.len);
		*plen = rs->payload.len;
	}
	ttrpc__response__free_unpacked(rs, NULL);
	return 0;
}
