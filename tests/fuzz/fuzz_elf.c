/* libFuzzer harness for the symbolizer's untrusted-input parsers (ELF via
 * libelf/libdw, /proc maps, kallsyms, perf maps). Build and run:
 *   tests/fuzz/run.sh [SECONDS]
 * (clang -fsanitize=fuzzer,address,undefined; seeds: small system ELFs).
 * A CI-sized deterministic replay of mutated and truncated ELFs runs as the
 * unit test tests/unit/test_sym_fuzz.c. */
#include "fuzz_elf_target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	volatile uint64_t sink = sl_fuzz_one(data, size);
	(void)sink;
	return 0;
}
