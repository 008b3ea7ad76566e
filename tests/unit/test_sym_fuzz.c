/* Deterministic, CI-sized replay of the ELF fuzz target
 * (tests/fuzz/fuzz_elf_target.h): real ELF images (this executable's
 * vdso, /usr/bin/true, this test binary's first 256 KiB) truncated at
 * every 61st length and mutated (byte flips, header field overwrites with
 * 0 / 0xff / huge values) with a fixed-seed PRNG, read from memory and,
 * for a subset, from a file (the fd path). Passing = no crash, no
 * sanitizer report, no leak. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "../fuzz/fuzz_elf_target.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint8_t *load(const char *path, size_t max, size_t *len)
{
	char *b;
	if (sl_read_small_file(path, max, &b, len))
		return NULL;
	return (uint8_t *)b;
}

static void mutate(uint8_t *d, size_t len)
{
	int k = 1 + (int)(next() % 8);
	for (int i = 0; i < k; i++) {
		/* headers (first 4 KiB) and the tail (section headers) most of the time */
		size_t pos = (next() & 1) ? next() % (len < 4096 ? len : 4096) : next() % len;
		switch (next() % 4) {
		case 0: d[pos] ^= (uint8_t)(1u << (next() % 8)); break;
		case 1: d[pos] = 0xff; break;
		case 2: d[pos] = 0; break;
		default:
			if (pos + 8 <= len) {
				uint64_t v = next() % 3 == 0 ? UINT64_MAX : next() % 3 == 1 ? 0x7fffffff : next();
				memcpy(d + pos, &v, 8);
			}
		}
	}
	/* aim at section headers: e_shoff lives at 0x28 in ELF64 */
	if (len > 0x40 && next() % 4 == 0) {
		uint64_t shoff;
		memcpy(&shoff, d + 0x28, 8);
		if (shoff < len) {
			size_t pos = (size_t)shoff + next() % (len - (size_t)shoff);
			d[pos] ^= (uint8_t)next();
		}
	}
}

static void replay(const uint8_t *img, size_t len, int iters, int fd_every)
{
	uint8_t *buf = malloc(len);
	assert_non_null(buf);
	/* truncations */
	for (size_t l = 0; l < len; l += 61) {
		sl_fuzz_one(img, l);
	}
	/* mutations */
	char tmp[] = "/tmp/sl_fuzz.XXXXXX";
	int tfd = mkstemp(tmp);
	assert_true(tfd >= 0);
	unlink(tmp);
	for (int i = 0; i < iters; i++) {
		memcpy(buf, img, len);
		mutate(buf, len);
		size_t l = (next() % 4 == 0) ? (size_t)(next() % len) : len;
		sl_fuzz_one(buf, l);
		if (fd_every && i % fd_every == 0) {
			assert_int_equal(ftruncate(tfd, 0), 0);
			assert_int_equal(pwrite(tfd, buf, l, 0), (ssize_t)l);
			struct sl_elf_info e;
			if (!sl_elf_read_fd(tfd, &e))
				sl_elf_info_free(&e);
		}
	}
	close(tfd);
	free(buf);
}

static void test_vdso_image(void **state)
{
	(void)state;
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	if (!base) {
		skip();
		return;
	}
	/* its size from /proc/self/maps */
	size_t len = 0, ml, n;
	char *mb;
	struct sl_map_entry *v;
	assert_int_equal(sl_read_small_file("/proc/self/maps", 1 << 24, &mb, &ml), 0);
	assert_int_equal(sl_maps_parse(mb, ml, &v, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (v[i].cls == SL_MAP_VDSO && v[i].start == base)
			len = v[i].end - v[i].start;
	sl_maps_free(v, n);
	free(mb);
	assert_true(len > 0);
	uint8_t *img = malloc(len);
	memcpy(img, (const void *)(uintptr_t)base, len);
	struct sl_elf_info e;
	assert_int_equal(sl_elf_read_mem(img, len, &e), 0); /* the seed is valid */
	assert_true(e.nsyms > 0);
	sl_elf_info_free(&e);
	replay(img, len, 3000, 10);
	free(img);
}

static void test_true_binary(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = load("/usr/bin/true", 1 << 20, &len);
	if (!img) {
		skip();
		return;
	}
	struct sl_elf_info e;
	assert_int_equal(sl_elf_read_mem(img, len, &e), 0);
	sl_elf_info_free(&e);
	replay(img, len, 1500, 25);
	free(img);
}

static void test_self_prefix(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = load("/proc/self/exe", 256 * 1024, &len);
	assert_non_null(img);
	replay(img, len, 300, 50);
	free(img);
}

static void test_not_elf(void **state)
{
	(void)state;
	struct sl_elf_info e;
	assert_int_equal(sl_elf_read_mem("hello", 5, &e), -EINVAL);
	assert_int_equal(sl_elf_read_mem(NULL, 0, &e), -EINVAL);
	assert_int_equal(sl_elf_read_fd(-1, &e), -EINVAL);
	uint8_t junk[4096];
	for (int i = 0; i < 200; i++) {
		for (size_t k = 0; k < sizeof(junk); k++)
			junk[k] = (uint8_t)next();
		if (i % 2)
			memcpy(junk, "\177ELF\002\001\001", 7);
		sl_fuzz_one(junk, sizeof(junk));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_vdso_image),
		cmocka_unit_test(test_true_binary),
		cmocka_unit_test(test_self_prefix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
