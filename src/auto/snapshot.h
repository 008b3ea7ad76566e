/* The scene of a capture (AUTO-2, docs/AUTO.md "Capture"): the container's
 * processes, the kernel stacks of its D-state tasks and its top open files,
 * read from /proc at the moment the detector fired.
 *
 * Bounded: at most max_procs processes (from the cgroup's cgroup.procs, in
 * its order), 64 D-state tasks, 32 KiB per stack file, 4096 fds per process.
 * Files under /proc are read with plain reads (procfs never blocks on
 * them); fd targets are only readlink()ed and stat()ed, never opened. A
 * process that exits meanwhile is skipped. Admin-only parts (argv, kernel
 * stacks) are stored and withheld from readers by the API (docs/AUTO.md).
 */
#ifndef SANDLENS_AUTO_SNAPSHOT_H
#define SANDLENS_AUTO_SNAPSHOT_H

#include <jansson.h>
#include <stddef.h>

struct sl_snapshot_opts {
	const char *proc_root;  /* "/proc" */
	size_t max_procs;       /* processes listed */
	size_t top_files;       /* open files listed */
	int stacks;             /* read /proc/<pid>/task/<tid>/stack of D-state tasks */
};

/* Snapshot of the processes listed in the cgroup.procs file at procs_path
 * (one pid per line). Returns a new object {processes: [{pid, comm, state,
 * threads, rss_bytes, open_fds, cmdline}], processes_total, dstate_tasks:
 * [{pid, tid, comm, wchan, stack: [frames]}], open_files: [{path, fds,
 * size_bytes?}], errors?}, or NULL on ENOMEM. An unreadable procs file
 * gives empty lists and "error". */
json_t *sl_snapshot_take(const char *procs_path, const struct sl_snapshot_opts *o);

/* State letter of /proc/<pid>/task/<tid>/stat text (the field after the
 * last ')'), or 0 when malformed. */
char sl_snapshot_stat_state(const char *stat_text);

#endif
