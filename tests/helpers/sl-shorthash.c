/* sl-shorthash: a short-lived program for the exec-heavy profiling test
 * (tests/integration/t_prof_shortlived.sh), like `dd if=/dev/urandom |
 * md5sum` but with symbols: static, frame pointers, lives a few ms.
 *
 *   gen N    write N blocks of 64 KiB of xorshift bytes to stdout
 *            (computed in shorthash_gen_block())
 *   sum      read stdin to its end, mixing every byte in
 *            shorthash_sum_block(); print the 64-bit sum in hex
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLK 65536

__attribute__((noinline)) void shorthash_gen_block(uint64_t *st, unsigned char *b, size_t n)
{
	uint64_t x = *st;
	for (size_t i = 0; i < n; i++) {
		for (int r = 0; r < 8; r++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		b[i] = (unsigned char)x;
	}
	*st = x;
}

__attribute__((noinline)) uint64_t shorthash_sum_block(uint64_t h, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (int r = 0; r < 8; r++)
			h = (h ^ b[i]) * 0x100000001b3ull + (h >> 29);
	}
	return h;
}

static int write_all(const unsigned char *b, size_t n)
{
	while (n) {
		ssize_t w = write(1, b, n);
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static unsigned char buf[BLK];
	if (argc == 3 && !strcmp(argv[1], "gen")) {
		uint64_t st = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
		for (long i = 0; i < atol(argv[2]); i++) {
			shorthash_gen_block(&st, buf, sizeof(buf));
			if (write_all(buf, sizeof(buf)))
				return 1;
		}
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "sum")) {
		uint64_t h = 0xcbf29ce484222325ull;
		ssize_t r;
		while ((r = read(0, buf, sizeof(buf))) > 0)
			h = shorthash_sum_block(h, buf, (size_t)r);
		printf("%016llx\n", (unsigned long long)h);
		return r < 0;
	}
	fprintf(stderr, "usage: sl-shorthash gen N | sum\n");
	return 2;
}
