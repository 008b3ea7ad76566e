/* libFuzzer: HTTP query parameters (src/api/api_params.c). The input is a
 * query string "k=v&k=v..." taken byte for byte as microhttpd hands the
 * decoded pairs over (NUL bytes included); then the checks and the event
 * and task-route parsers. */
#include "fuzz_util.h"

#include "api/api.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	static struct sl_api_params ps;
	memset(&ps, 0, sizeof(ps));
	/* split at '&' and the first '=' of each pair, keeping embedded NULs
	 * inside the sizes given to sl_api_params_add */
	size_t off = 0;
	while (off <= size) {
		char *pair = s + off;
		char *amp = memchr(pair, '&', size - off);
		size_t plen = amp ? (size_t)(amp - pair) : size - off;
		pair[plen] = '\0';
		char *eq = memchr(pair, '=', plen);
		if (eq) {
			*eq = '\0';
			sl_api_params_add(&ps, pair, (size_t)(eq - pair), eq + 1, plen - (size_t)(eq - pair) - 1);
		} else {
			sl_api_params_add(&ps, pair, plen, NULL, 0);
		}
		off += plen + 1;
	}
	char err[256];
	if (sl_api_params_check(&ps, err, sizeof(err)) == 0) {
		struct sl_event_filter f;
		static const char *const types[] = {"exec", "exit", "signal", "oom", "sched_delay"};
		sl_api_parse_event_params(ps.p, ps.n, 1700000000000000000ll, types, 5, &f, err, sizeof(err));
		sl_api_no_params(ps.p, ps.n, err, sizeof(err));
		static const char *const names[] = {"id", "format", "limit"};
		const char *vals[3];
		sl_api_params_only(ps.p, ps.n, names, 3, vals, err, sizeof(err));
	}
	free(s);
	return 0;
}
