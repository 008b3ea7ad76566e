/* The persisted OTLP logs cursor; see cursor_file.h. */
#include "export/cursor_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "sandlens-otlp-cursor 1\n"

int sl_export_cursor_load(const char *path, uint64_t *epoch, int64_t *after_id, char *err, size_t errlen)
{
	char buf[4097], hex[32];
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int e = errno;
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	buf[n] = 0;
	long long id = -1;
	int used = 0;
	if (strncmp(buf, MAGIC, strlen(MAGIC)) ||
	    sscanf(buf + strlen(MAGIC), "store_epoch %16[0-9a-f]\nafter_id %lld\n%n", hex, &id, &used) != 2 ||
	    strlen(hex) != 16 || id < 0 || (size_t)used + strlen(MAGIC) != (size_t)n) {
		snprintf(err, errlen, "%s: not a sandlens OTLP cursor file", path);
		return -EINVAL;
	}
	*epoch = strtoull(hex, NULL, 16);
	*after_id = (int64_t)id;
	return 1;
}

int sl_export_cursor_save(const char *path, uint64_t epoch, int64_t after_id)
{
	char tmp[4200], body[96];
	if (after_id < 0 || snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp))
		return -EINVAL;
	int len = snprintf(body, sizeof(body), MAGIC "store_epoch %016" PRIx64 "\nafter_id %" PRId64 "\n", epoch,
			   after_id);
	unlink(tmp); /* one of ours left by a crash between create and rename */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int rc = write(fd, body, (size_t)len) == len ? 0 : -EIO;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}
