/* Floor for the hw module's sysfs pass (bench/hw-gpu.sh): the least a
 * reader of the same tree does, every regular file opened, read and closed
 * (nftw, no parsing, no bounds, no snapshot). Prints the mean ns per pass
 * over PASSES passes: hw_floor ROOT PASSES */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char buf[4097];
static unsigned long files;

static int one(const char *p, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)f;
	if (type != FTW_F)
		return 0;
	int fd = open(p, O_RDONLY | O_NONBLOCK);
	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) >= 0)
			files++;
		close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	int n = argc > 2 ? atoi(argv[2]) : 100;

	if (argc < 2 || n <= 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++)
		nftw(argv[1], one, 16, FTW_PHYS);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
	printf("%.0f %lu\n", ns, files / (unsigned long)n);
	return 0;
}
