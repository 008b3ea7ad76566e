/* Retry policy (otlp_retry.h). */
#include "export/otlp_retry.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

int sl_otlp_retryable(long status)
{
	return status == 0 || status == 429 || status == 502 || status == 503 || status == 504;
}

uint64_t sl_otlp_backoff_ns(unsigned attempt, uint64_t initial_ns, uint64_t max_ns, double rnd,
			    uint64_t retry_after_ns)
{
	if (retry_after_ns)
		return retry_after_ns;
	uint64_t d = initial_ns ? initial_ns : 1;
	for (unsigned i = 1; i < attempt && d < max_ns; i++)
		d = d > UINT64_MAX / 2 ? UINT64_MAX : d * 2;
	if (d > max_ns)
		d = max_ns;
	if (rnd < 0 || rnd >= 1)
		rnd = 0.5;
	return (uint64_t)((double)d * (0.5 + rnd));
}

uint64_t sl_otlp_retry_after_ns(const char *v, int64_t now_s)
{
	if (!v)
		return 0;
	while (*v == ' ' || *v == '\t')
		v++;
	if (!*v)
		return 0;
	if (strspn(v, "0123456789") == strcspn(v, " \t\r\n")) {
		char *e;
		unsigned long long s = strtoull(v, &e, 10);
		if (s > 86400ull * 365)
			s = 86400ull * 365;
		return s * 1000000000ull;
	}
	time_t t = curl_getdate(v, NULL);
	if (t == (time_t)-1 || (int64_t)t <= now_s)
		return 0;
	return (uint64_t)((int64_t)t - now_s) * 1000000000ull;
}
