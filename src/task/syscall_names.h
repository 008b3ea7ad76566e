/* Syscall number -> name for trace_syscall_errors results. The tables are
 * generated from the kernel uapi headers by scripts/gen-syscall-names.sh
 * (x86_64: asm/unistd_64.h; arm64: asm-generic/unistd.h) and committed in
 * src/task/syscall_table.h. */
#ifndef SANDLENS_TASK_SYSCALL_NAMES_H
#define SANDLENS_TASK_SYSCALL_NAMES_H

struct sl_syscall_name {
	int nr;
	const char *name;
};

/* Name of syscall nr for arch ("x86_64" or "aarch64"/"arm64"; NULL = the
 * arch this agent was built for). NULL when unknown. */
const char *sl_syscall_name(int nr, const char *arch);

/* Symbolic errno name ("ENOENT") of e (positive), NULL when unknown.
 * Uses strerrorname_np when the C library has it, else a short table. */
const char *sl_errno_name(int e);

#endif
