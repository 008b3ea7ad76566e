/* gzip members joined from separately compressed parts (src/common/gzpart.c).
 * Oracles: zlib's own gzip decoder (checks CRC-32 and ISIZE) and the gzip(1)
 * program, neither of which knows how the member was assembled. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "common/gzpart.h"

/* Prometheus-like text: repetitive lines with varying numbers, plus some
 * noise so that not everything compresses to nothing. */
static char *make_text(size_t len, unsigned seed)
{
	char *t = malloc(len + 1);
	assert_non_null(t);
	size_t i = 0;
	unsigned x = seed * 2654435761u + 1;
	while (i < len) {
		char line[160];
		x = x * 1103515245u + 12345u;
		int n = snprintf(line, sizeof(line),
				 "container_memory_usage_bytes{id=\"/kubepods/pod%08x/%u\"} %u\n", x >> 8,
				 x % 1000, x);
		for (int k = 0; k < n && i < len; k++)
			t[i++] = line[k];
	}
	t[len] = '\0';
	return t;
}

/* Inflate a whole gzip member with zlib (16 + MAX_WBITS: gzip wrapper,
 * CRC-32 and ISIZE verified). Returns the length or -1. */
static long gunzip(const unsigned char *z, size_t zlen, char *out, size_t cap)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
	zs.next_in = (Bytef *)(uintptr_t)z;
	zs.avail_in = (uInt)zlen;
	zs.next_out = (Bytef *)out;
	zs.avail_out = (uInt)cap;
	int rc = inflate(&zs, Z_FINISH);
	long n = rc == Z_STREAM_END && zs.avail_in == 0 ? (long)zs.total_out : -1;
	inflateEnd(&zs);
	return n;
}

/* header | part(a) | tail(b) */
static unsigned char *join(const char *a, size_t al, const char *b, size_t bl, int level, size_t *len)
{
	struct sl_gz_part p;
	assert_int_equal(sl_gz_part_make(a, al, level, &p), 0);
	assert_int_equal(p.len, al);
	assert_int_equal(p.crc, (uint32_t)crc32(crc32(0, Z_NULL, 0), (const Bytef *)a, (uInt)al));
	unsigned char *tail;
	size_t tl;
	assert_int_equal(sl_gz_tail(b, bl, level, p.crc, p.len, &tail, &tl), 0);
	*len = SL_GZ_HEADER_LEN + p.zlen + tl;
	unsigned char *m = malloc(*len);
	assert_non_null(m);
	memcpy(m, SL_GZ_HEADER, SL_GZ_HEADER_LEN);
	memcpy(m + SL_GZ_HEADER_LEN, p.z, p.zlen);
	memcpy(m + SL_GZ_HEADER_LEN + p.zlen, tail, tl);
	free(tail);
	sl_gz_part_free(&p);
	assert_null(p.z);
	return m;
}

static void test_join_roundtrip(void **state)
{
	(void)state;
	static const size_t sizes[][2] = {{0, 0},	    {0, 10},	   {10, 0},	    {1, 1},
					  {5000, 300},	    {300, 5000},   {4800000, 20000}, {65536, 65536},
					  {1 << 20, 1}};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t al = sizes[i][0], bl = sizes[i][1];
		char *a = make_text(al, (unsigned)i), *b = make_text(bl, (unsigned)i + 100);
		for (int level = 1; level <= 9; level += 8) {
			size_t zl;
			unsigned char *m = join(a, al, b, bl, level, &zl);
			char *out = malloc(al + bl + 1);
			long n = gunzip(m, zl, out, al + bl + 1);
			if (n != (long)(al + bl))
				fail_msg("sizes %zu+%zu level %d: inflated %ld bytes", al, bl, level, n);
			assert_memory_equal(out, a, al);
			assert_memory_equal(out + al, b, bl);
			if (al > 100000)
				assert_true(zl < (al + bl) / 4); /* it does compress */
			free(out);
			free(m);
		}
		free(a);
		free(b);
	}
}

/* A corrupted trailer is caught by the decoder: the CRC really is checked. */
static void test_trailer_checked(void **state)
{
	(void)state;
	char *a = make_text(1000, 1), *b = make_text(100, 2);
	size_t zl;
	unsigned char *m = join(a, 1000, b, 100, 6, &zl);
	char out[2000];
	assert_int_equal(gunzip(m, zl, out, sizeof(out)), 1100);
	m[zl - 8] ^= 1; /* CRC */
	assert_int_equal(gunzip(m, zl, out, sizeof(out)), -1);
	m[zl - 8] ^= 1;
	m[zl - 4] ^= 1; /* ISIZE */
	assert_int_equal(gunzip(m, zl, out, sizeof(out)), -1);
	free(m);
	free(a);
	free(b);
}

/* gzip(1) reads the joined member as one file. */
static void test_gzip_program(void **state)
{
	(void)state;
	if (system("command -v gzip >/dev/null 2>&1") != 0) {
		skip();
		return;
	}
	size_t al = 300000, bl = 7000;
	char *a = make_text(al, 7), *b = make_text(bl, 8);
	size_t zl;
	unsigned char *m = join(a, al, b, bl, 1, &zl);
	char zpath[] = "/tmp/sl-gz-XXXXXX";
	int fd = mkstemp(zpath);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, m, zl), (ssize_t)zl);
	close(fd);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "gzip -dc < %s", zpath);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char *out = malloc(al + bl + 16);
	size_t n = fread(out, 1, al + bl + 16, p);
	assert_int_equal(pclose(p), 0);
	assert_int_equal(n, al + bl);
	assert_memory_equal(out, a, al);
	assert_memory_equal(out + al, b, bl);
	unlink(zpath);
	free(out);
	free(m);
	free(a);
	free(b);
}

static void test_bad_level(void **state)
{
	(void)state;
	struct sl_gz_part p;
	assert_int_equal(sl_gz_part_make("x", 1, 0, &p), -EINVAL);
	assert_null(p.z);
	assert_int_equal(sl_gz_part_make("x", 1, 10, &p), -EINVAL);
	unsigned char *t = (unsigned char *)"sentinel";
	size_t tl = 5;
	assert_int_equal(sl_gz_tail("x", 1, -1, 0, 0, &t, &tl), -EINVAL);
	assert_null(t);
	assert_int_equal(tl, 0);
	sl_gz_part_free(NULL);
}

static void test_accepted(void **state)
{
	(void)state;
	static const struct {
		const char *h;
		int want;
	} t[] = {
		{NULL, 0},
		{"", 0},
		{"gzip", 1},
		{"GZIP", 1},
		{"x-gzip", 1},
		{"identity", 0},
		{"deflate, br", 0},
		{"gzip, deflate, br", 1}, /* browsers, curl --compressed */
		{"deflate;q=1.0, gzip;q=0.5", 1},
		{"gzip;q=0", 0},
		{"gzip; q=0.000", 0},
		{"gzip;q=0.001", 1},
		{"*", 1},
		{"*;q=0", 0},
		{"gzip;q=0, *", 0}, /* an explicit refusal beats the wildcard */
		{"identity;q=1, *;q=0.5", 1},
		{"gzipx", 0},
		{"gzip;q=", 0},
		{" gzip ", 1},
		{"br,gzip", 1},
		{"gzip;q=1.000", 1},
		{"gzip;Q=0.5", 1},
		{"gzip ; q=0.5", 1},
		{"gzip;q=0.0", 0},
		{"gzip;q=0, x-gzip", 0}, /* explicit zero wins, in either order */
		{"x-gzip, gzip;q=0", 0},
		{"gzip, gzip;q=0", 0},
		{"identity, gzip", 1}, /* two header lines, joined */
		/* malformed weights weigh 0 */
		{"gzip; q = 0", 0},
		{"gzip;q=1.5", 0},
		{"gzip;q=2", 0},
		{"gzip;q=0.5x", 0},
		{"gzip;q=0.1234", 0},
		{"gzip;foo=bar", 0},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (sl_gz_accepted(t[i].h) != t[i].want)
			fail_msg("'%s': want %d", t[i].h ? t[i].h : "(null)", t[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join_roundtrip), cmocka_unit_test(test_trailer_checked),
		cmocka_unit_test(test_gzip_program),   cmocka_unit_test(test_bad_level),
		cmocka_unit_test(test_accepted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
