/* One fuzz input through every parser of the symbolizer that reads
 * untrusted bytes: the ELF reader (from memory and from a file), symbol
 * lookups over whatever it produced, and the maps / kallsyms / perf-map
 * text parsers. Shared by the libFuzzer harness (tests/fuzz/fuzz_elf.c)
 * and the deterministic replay unit test (tests/unit/test_sym_fuzz.c). */
#ifndef SL_FUZZ_ELF_TARGET_H
#define SL_FUZZ_ELF_TARGET_H

#include "profile/profile_internal.h"
#include "profile/symbolize_proc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t sl_fuzz_one(const uint8_t *data, size_t len)
{
	uint64_t acc = 0;
	struct sl_elf_info e;
	if (!sl_elf_read_mem(data, len, &e)) {
		acc += e.nsyms + e.nload;
		for (size_t i = 0; i < e.nsyms; i++) {
			const struct sl_esym *s = sl_elf_lookup(&e, e.syms[i].addr + 1);
			if (s)
				acc += strlen(e.names + s->name);
		}
		acc += sl_elf_off_to_vaddr(&e, len / 2);
		acc += strlen(e.build_id) + strlen(e.debuglink);
		sl_elf_info_free(&e);
	}
	/* the same bytes as text */
	struct sl_map_entry *v;
	size_t n;
	if (!sl_maps_parse((const char *)data, len, &v, &n)) {
		if (n)
			acc += (uint64_t)(sl_maps_find(v, n, v[0].start) != NULL);
		sl_maps_free(v, n);
	}
	struct sl_ksyms ks;
	if (!sl_ksyms_parse((const char *)data, len, &ks)) {
		struct sl_ksym kb;
		acc += (uint64_t)(sl_ksyms_lookup(&ks, 0xffffffff81000000ull, &kb) != NULL);
		sl_ksyms_free(&ks);
	}
	struct sl_jit_sym *j;
	if (!sl_perfmap_parse((const char *)data, len, &j, &n))
		sl_perfmap_free(j, n);
	return acc;
}

#endif
