/* Helpers of the symbolizer exposed for tests (not a public API). */
#ifndef SANDLENS_PROFILE_SYMBOLIZE_PROC_H
#define SANDLENS_PROFILE_SYMBOLIZE_PROC_H

#include <stddef.h>
#include <stdint.h>

struct stat;

/* Size limits of the files the symbolizer reads (docs/PROFILING.md "Files
 * from other users"). A perf map or ELF file above its limit is not read
 * at all (its frames stay module+0xoffset / [unknown]); a proc file is
 * read up to its limit. */
#define SL_SYM_PROCFILE_MAX (64u << 20)   /* /proc/<pid>/maps, bytes */
#define SL_SYM_PERFMAP_MAX (64u << 20)    /* /tmp/perf-<pid>.map, bytes */
#define SL_SYM_ELF_MAX (1ull << 30)       /* an ELF or separate debug file, bytes */
#define SL_SYM_KALLSYMS_MAX (512u << 20)  /* kallsyms_path, bytes */

#define SL_SYM_NOFOLLOW 1 /* sl_sym_open: the last component must not be a symlink */

/* Open a file whose path others may control, for reading, without ever
 * blocking in open() (O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_NOCTTY, plus
 * O_NOFOLLOW with SL_SYM_NOFOLLOW). root NULL or "": path as is; else path
 * is resolved inside root (e.g. "/proc/<pid>/root") with openat2
 * RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS, so that a symlink planted in a
 * container cannot lead to a host file. The result must be a regular file
 * of at most max bytes (st_size). Returns the fd (*st filled when st is
 * not NULL), or -errno: -EINVAL not a regular file (FIFO, device,
 * directory), -EFBIG above max, -ELOOP a symlink (SL_SYM_NOFOLLOW) or one
 * that leaves root, others from open. */
int sl_sym_open(const char *root, const char *path, int flags, uint64_t max, struct stat *st);

/* Read fd to its end, at most max bytes (the rest is ignored),
 * NUL-terminated; *buf malloc'd. 0 or -errno. */
int sl_read_fd_bounded(int fd, size_t max, char **buf, size_t *len);

/* Read a whole (proc) file, at most max bytes (the rest is ignored),
 * NUL-terminated; *buf malloc'd. Opened with sl_sym_open (non-blocking,
 * regular files only: a FIFO gives -EINVAL at once). 0 or -errno. */
int sl_read_small_file(const char *path, size_t max, char **buf, size_t *len);

/* One line of a JIT perf map (/tmp/perf-<pid>.map, tools/perf/Documentation/
 * jit-interface.txt): "START SIZE NAME", hex START and SIZE. */
struct sl_jit_sym {
	uint64_t start, size;
	char *name;
};
/* Parse a perf map text; malformed lines skipped; sorted by start. 0 / -ENOMEM. */
int sl_perfmap_parse(const char *buf, size_t len, struct sl_jit_sym **out, size_t *n);
void sl_perfmap_free(struct sl_jit_sym *v, size_t n);
/* Entry containing addr, or NULL. */
const struct sl_jit_sym *sl_perfmap_lookup(const struct sl_jit_sym *v, size_t n, uint64_t addr);

/* 1 when fn is a function a process or thread starts in (_start,
 * __libc_start_main, __libc_start_call_main, start_thread, clone3, ...):
 * sl_symbolize drops the user frames above a chain of them. */
int sl_sym_is_entry_fn(const char *fn);
/* 1 when fn calls nothing (register_tm_clones, deregister_tm_clones), so
 * it can never be a caller frame: sl_symbolize ends a user stack below
 * such a caller frame. */
int sl_sym_is_never_caller(const char *fn);

/* ---- debuginfod client (symbolize_debuginfod.c, libdebuginfod) ---- */
struct sl_dbgd;
/* Settings for debuginfod queries: urls (DEBUGINFOD_URLS), cache directory
 * (DEBUGINFOD_CACHE_PATH, NULL/"" = default), timeout_s for the whole
 * download of one file (0 = 10 s). Sets those environment variables now.
 * NULL on ENOMEM or when libdebuginfod is not usable. */
struct sl_dbgd *sl_dbgd_new(const char *urls, const char *cache, unsigned timeout_s);
void sl_dbgd_free(struct sl_dbgd *d);
/* A read-only fd of the debuginfo (what 0) or executable (what 1) of
 * build-id id[len], from the cache or downloaded (blocking, at most
 * timeout_s); *path (malloc'd) its cache path. -errno on failure
 * (-ENOENT not on the servers, -ETIME timed out). Thread-safe (one
 * libdebuginfod client per call). */
int sl_dbgd_fetch(struct sl_dbgd *d, const uint8_t *id, size_t len, int what, char **path);

#endif
