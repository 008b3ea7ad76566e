/* Syscall and errno names (syscall_names.h). */
#include "task/syscall_names.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "task/syscall_table.h"

static const char *lookup(const struct sl_syscall_name *t, size_t n, int nr)
{
	size_t lo = 0, hi = n; /* tables are sorted by nr */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t[mid].nr == nr)
			return t[mid].name;
		if (t[mid].nr < nr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *sl_syscall_name(int nr, const char *arch)
{
	int arm = 0;
	if (arch)
		arm = !strcmp(arch, "aarch64") || !strcmp(arch, "arm64");
	else
#if defined(__aarch64__)
		arm = 1;
#else
		arm = 0;
#endif
	if (arm)
		return lookup(sl_syscalls_arm64, sizeof(sl_syscalls_arm64) / sizeof(sl_syscalls_arm64[0]), nr);
	return lookup(sl_syscalls_x86_64, sizeof(sl_syscalls_x86_64) / sizeof(sl_syscalls_x86_64[0]), nr);
}

const char *sl_errno_name(int e)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	return e > 0 ? strerrorname_np(e) : NULL;
#else
	static const struct { int e; const char *n; } t[] = {
		{EPERM, "EPERM"}, {ENOENT, "ENOENT"}, {ESRCH, "ESRCH"}, {EINTR, "EINTR"},
		{EIO, "EIO"}, {EBADF, "EBADF"}, {EAGAIN, "EAGAIN"}, {ENOMEM, "ENOMEM"},
		{EACCES, "EACCES"}, {EFAULT, "EFAULT"}, {EEXIST, "EEXIST"}, {ENOTDIR, "ENOTDIR"},
		{EISDIR, "EISDIR"}, {EINVAL, "EINVAL"}, {ENOSPC, "ENOSPC"}, {EPIPE, "EPIPE"},
		{ENOSYS, "ENOSYS"}, {ENOTTY, "ENOTTY"}, {ECHILD, "ECHILD"}, {ETIMEDOUT, "ETIMEDOUT"},
		{ECONNREFUSED, "ECONNREFUSED"}, {EINPROGRESS, "EINPROGRESS"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].e == e)
			return t[i].n;
	return NULL;
#endif
}
