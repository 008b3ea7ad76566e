/* libFuzzer: /proc/kallsyms (src/profile/symbolize_kallsyms.c): parse,
 * address lookups and name lookups. Seeds: symbolization cases. */
#include "fuzz_util.h"

#include "profile/profile_internal.h"

/* sl_ksyms_lookup writes the symbol here */
static struct sl_ksym kbuf;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_ksyms ks;
	if (sl_ksyms_parse((const char *)data, size, &ks))
		return 0;
	volatile const void *r = sl_ksyms_lookup(&ks, 0xffffffff81000000ull, &kbuf);
	r = sl_ksyms_lookup(&ks, 0, &kbuf);
	r = sl_ksyms_lookup(&ks, UINT64_MAX, &kbuf);
	(void)r;
	uint64_t addrs[4];
	sl_ksyms_addrs(&ks, "schedule", addrs, 4);
	sl_ksyms_free(&ks);
	return 0;
}
