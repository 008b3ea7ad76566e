/* Helpers shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c): a NUL-
 * terminated copy of the input, and splitting one input into several
 * "files" (for parsers that take more than one kernel file). Built by
 * `make fuzz` (build-fuzz/), run by tests/fuzz/run.sh. */
#ifndef SL_FUZZ_UTIL_H
#define SL_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* malloc'ed copy of data with a NUL after it (the input may hold NULs of
 * its own: text parsers then see a shorter string, as from a C reader). */
static inline char *sl_fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

/* Splits the NUL-terminated copy s in place into up to n parts at the
 * separator byte sep (0x1e, ASCII record separator, by convention); parts
 * beyond the input are NULL ("file absent"). Returns how many were found. */
static inline size_t sl_fuzz_split(char *s, char sep, const char **parts, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		parts[i] = NULL;
	while (s && k < n) {
		parts[k++] = s;
		char *e = strchr(s, sep);
		if (!e)
			break;
		*e = '\0';
		s = e + 1;
	}
	return k;
}

#define SL_FUZZ_SEP '\x1e'

#endif
