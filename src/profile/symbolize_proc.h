/* Helpers of the symbolizer exposed for tests (not a public API). */
#ifndef SANDLENS_PROFILE_SYMBOLIZE_PROC_H
#define SANDLENS_PROFILE_SYMBOLIZE_PROC_H

#include <stddef.h>
#include <stdint.h>

/* Read a whole (proc) file, at most max bytes, NUL-terminated; *buf
 * malloc'd. 0 or -errno. */
int sl_read_small_file(const char *path, size_t max, char **buf, size_t *len);

/* One line of a JIT perf map (/tmp/perf-<pid>.map, tools/perf/Documentation/
 * jit-interface.txt): "START SIZE NAME", hex START and SIZE. */
struct sl_jit_sym {
	uint64_t start, size;
	char *name;
};
/* Parse a perf map text; malformed lines skipped; sorted by start. 0 / -ENOMEM. */
int sl_perfmap_parse(const char *buf, size_t len, struct sl_jit_sym **out, size_t *n);
void sl_perfmap_free(struct sl_jit_sym *v, size_t n);
/* Entry containing addr, or NULL. */
const struct sl_jit_sym *sl_perfmap_lookup(const struct sl_jit_sym *v, size_t n, uint64_t addr);

#endif
