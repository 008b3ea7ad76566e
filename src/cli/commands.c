/* The command table (commands.h): every `sandlens` command, its options and
 * its handler. Help, "did you mean", completion and the man page are
 * derived from these entries; add a command here (one entry) and nowhere
 * else. Keep the entries in the order `sandlens --help` lists them. */
#include "cli/commands.h"

#include <stddef.h>

#define JSON_OPT {"json", 0, NULL, "one compact JSON object per line instead of a table"}
#define TARGET_OPTS                                                                      \
	{"container", 0, "ID", "target: a container id or a prefix of >= 4 characters"}, \
	{"pod", 0, "UID", "target: a pod UID"},                                           \
	{"pid", 0, "N", "target: a process (all its threads)"},                           \
	{"tid", 0, "N", "target: one thread"}

static const struct cli_opt events_opts[] = {
	{"type", 0, "T", "one event kind (the TYPE column; GET /api/v1/schema/events lists them)"},
	{"container", 0, "ID", "container id or a prefix of >= 4 characters"},
	{"pod", 0, "UID", "pod UID"},
	{"since", 0, "T", "RFC 3339 time, duration ago (90s, 5m, 2h, 7d) or ns since the epoch"},
	{"until", 0, "T", "same forms as --since; exclusive"},
	{"limit", 0, "N", "at most N events (1..10000; server default 100)"},
	{"follow", 'f', NULL, "keep printing new events until interrupted; survives agent restarts"},
	{"no-host", 0, NULL, "hide host events (runtime \"host\"); filtered by the CLI, so fewer than --limit may show"},
	JSON_OPT,
	{NULL, 0, NULL, NULL},
};

static const struct cli_opt json_only_opts[] = {JSON_OPT, {NULL, 0, NULL, NULL}};

static const struct cli_opt stats_opts[] = {
	{"sandbox", 0, "ID", "the sandbox ID (sandlens sandboxes lists them): its figures, source and epoch; "
			     "exit 1 when ID is not a sandbox. A Kata micro-VM sandbox is read from inside its guest (source auto)"},
	{"source", 0, "S", "cgroup (host cgroup, the default for ID), guest (the Kata agent in the guest) or auto"},
	JSON_OPT,
	{NULL, 0, NULL, NULL},
};

static const struct cli_opt top_opts[] = {
	{"follow", 'f', NULL, "refresh every second until interrupted"},
	JSON_OPT,
	{NULL, 0, NULL, NULL},
};

static const struct cli_opt profile_opts[] = {
	TARGET_OPTS,
	{"sandbox", 0, "ID", "target: a sandbox's VMM process (sandlens sandboxes); its vCPU threads are told "
			     "by the samples' comm/tid labels"},
	{"duration", 0, "D", "how long to profile (default 10s; 10s, 2m)"},
	{"hz", 0, "N", "on-CPU sampling frequency (default: the agent's)"},
	{"off-cpu", 0, NULL, "off-CPU profile: where the target blocked or waited for a CPU"},
	{"min-off-cpu-us", 0, "N", "with --off-cpu: ignore off-CPU parts shorter than N us"},
	{"type", 0, "KIND", "on_cpu (default), off_cpu, mem_virtual, page_faults, resident, lock_kernel or futex"},
	{"fault-period", 0, "N", "with --type page_faults: sample every N-th fault per CPU (default 16)"},
	{"output", 'o', "FILE", "write the profile to FILE (its extension picks the format: .svg .pb.gz "
				".folded .json) or to standard output with '-' (folded)"},
	{"since", 0, "T", "stored continuous-profiling windows from T (RFC 3339, 10m ago, ns); no task"},
	{"until", 0, "T", "stored windows up to T (same forms; default now)"},
	{"base-since", 0, "T", "diff: the base range starts at T; --since/--until give the new range"},
	{"base-until", 0, "T", "diff: the base range ends at T"},
	{"host", 0, NULL, "stored windows of the whole host (every container and host process)"},
	{"windows", 0, NULL, "list the stored windows instead of a profile"},
	{NULL, 0, NULL, NULL},
};

static const struct cli_opt syscall_errors_opts[] = {
	TARGET_OPTS,
	{"duration", 0, "D", "how long to trace (default 5s)"},
	JSON_OPT,
	{NULL, 0, NULL, NULL},
};

static const struct cli_opt flight_opts[] = {
	{"event", 0, "N", "the recording event N (its store id) froze or joined"},
	{"container", 0, "ID", "list: only this container's recordings (its full id)"},
	JSON_OPT,
	{NULL, 0, NULL, NULL},
};

static const char *const tasks_words[] = {"list", "show", "stop", NULL};
static const char *const captures_words[] = {"list", "show", NULL};
static const struct cli_opt captures_opts[] = {
	{"container", 0, "ID", "list: captures of containers whose id starts with ID"},
	{"detector", 0, "NAME", "list: captures of one detector (cpu, throttle, runqueue, dstate, memgrowth, mempsi, cpupsi, iolat)"},
	{"limit", 0, "N", "list: at most N (1..10000; default 100)"},
	JSON_OPT,
	{NULL, 0, NULL, NULL},
};
static const char *const completion_words[] = {"bash", NULL};

const struct cli_command cli_commands[] = {
	{"events", "list events of every kind the agent's modules declare",
	 "[--type T] [--container ID] [--pod UID] [--since T] [--until T] [--limit N] [-f] [--no-host] [--json]",
	 "Prints the newest matching events, oldest first. With --follow it then follows the agent's "
	 "event stream and prints each event as it arrives, resuming after the last event printed when "
	 "the agent restarts.",
	 events_opts, 0, 0, NULL, cli_cmd_events},
	{"containers", "list containers seen, with event counts", "[--json]", NULL, json_only_opts, 0, 0, NULL,
	 cli_cmd_containers},
	{"status", "agent health: modules, hooks, self-metrics", "[--json]",
	 "Exits 1 when the agent reports a failed module.", json_only_opts, 0, 0, NULL, cli_cmd_status},
	{"stats", "workload statistics: the list, or one pod uid / sandbox / container id",
	 "[ID | --sandbox ID] [--source cgroup|guest|auto] [--json]",
	 "The host-cgroup and guest-agent sources count different things and are not comparable "
	 "(docs/STATS.md).", stats_opts, 0, 1, NULL, cli_cmd_stats},
	{"sandboxes", "micro-VM and gVisor sandboxes on this host: runtime, pod, VMM pid, vCPU threads",
	 "[ID] [--json]",
	 "Kata (qemu, cloud-hypervisor, firecracker), gVisor (runsc) and Firecracker jailer sandboxes, "
	 "told from the cgroup layout and the processes in it (docs/ATTRIBUTION.md \"Sandboxes\"). "
	 "Exit 1 when ID is not a sandbox on this host.",
	 json_only_opts, 0, 1, NULL, cli_cmd_sandboxes},
	{"top", "per-container runqueue latency, contention, neighbours over the last interval", "[-f] [--json]",
	 "Every figure is of the agent's last interval (its length is on the first line). Columns that "
	 "do not fit the terminal width are dropped, the least important first.",
	 top_opts, 0, 0, NULL, cli_cmd_top},
	{"io", "per-container block I/O latency, bytes, page cache, per-disk diskstats", "[--json]",
	 "Per (container, disk, op): requests, bytes, queue and device stage p50/p99, all cumulative "
	 "since the agent started (or the series appeared); page cache misses, readahead and dirty "
	 "throttling per container; per-disk counts next to /proc/diskstats (docs/IO.md).",
	 json_only_opts, 0, 0, NULL, cli_cmd_io},
	{"net", "per-container TCP retransmits, resets, drops by kernel reason, softirq latency", "[--json]",
	 "Per container, cumulative since the agent started: retransmits, resets sent and received, "
	 "drops (total and the top reason), its network namespace's device drops/errors and TCP queue "
	 "counters; then NET_RX/NET_TX softirq latency per CPU (docs/NET.md).",
	 json_only_opts, 0, 0, NULL, cli_cmd_net},
	{"profile", "CPU, off-CPU, memory or lock profile of a container, pod or process to a file",
	 "(--container ID | --pod UID | --pid N | --tid N) [--duration D] [--hz N] [--off-cpu "
	 "[--min-off-cpu-us N]] [--type KIND [--fault-period N]] -o FILE | (--container ID | --pod UID | --host) --since T [--until T] "
	 "[--base-since T [--base-until T]] [--windows] [-o FILE]",
	 "Starts a profile task (admin only), shows its progress on a terminal, then writes the "
	 "result. The file is created mode 0600 without following a planted symlink. --type picks "
	 "the kind: on_cpu, off_cpu, mem_virtual (mmap/brk bytes), page_faults (sampled user page "
	 "faults, bytes), resident (resident memory growth), lock_kernel (kernel lock waits), futex "
	 "(user-space lock waits); docs/TASKS.md. With --since "
	 "(or --until, --base-since, --windows, --host) no task runs: the continuous-profiling "
	 "windows stored for that range are merged (folded text on standard output without -o), "
	 "compared with a base range, or listed.",
	 profile_opts, 0, 0, NULL, cli_cmd_profile},
	{"tasks", "on-demand tasks: list, show ID, stop ID", "[list | show ID | stop ID] [--json]", NULL,
	 json_only_opts, 0, 2, tasks_words, cli_cmd_tasks},
	{"captures", "AutoTracing captures: list, show ID (why a detector fired, profile, baseline diff, scene)",
	 "[list | show ID] [--container ID] [--detector NAME] [--limit N] [--json]",
	 "Reads GET /api/v1/captures (docs/AUTO.md). Profiles: GET /api/v1/captures/ID/profile?format=pprof|folded|svg|json (admin).",
	 captures_opts, 0, 2, captures_words, cli_cmd_captures},
	{"syscall-errors", "failed system calls of a container by (syscall, errno)",
	 "(--container ID | --pod UID | --pid N | --tid N) [--duration D] [--json]", NULL, syscall_errors_opts,
	 0, 0, NULL, cli_cmd_syscall_errors},
	{"flight", "flight recordings: what a container did in the minute before it died or hung",
	 "[ID | --event N] [--container ID] [--json]",
	 "Without an argument lists the recordings, newest first. With a recording ID (or --event N, the "
	 "id of an OOM kill, crash or hung-task event that carries flight_recording_id) prints that "
	 "recording: its window, triggers and drop notes, then its events as `sandlens events` prints them. "
	 "Readers get the events without their admin-only fields (argv, stacks); docs/FLIGHT.md.",
	 flight_opts, 0, 1, NULL, cli_cmd_flight},
	{"mcp", "Model Context Protocol server on stdin/stdout (docs/MCP.md)", "",
	 "Serves the Model Context Protocol on stdin/stdout (newline-delimited JSON-RPC 2.0; revisions "
	 "2025-11-25 and 2026-07-28), answering from the agent's local API. Point an MCP client at it as "
	 "a stdio server: command \"sandlens\", args [\"mcp\"]. docs/MCP.md lists the tools.",
	 NULL, 0, 0, NULL, cli_cmd_mcp},
	{"help", "help of a command", "[COMMAND]", NULL, NULL, 0, 1, NULL, cli_cmd_help},
	{"version", "the CLI's version", "", NULL, NULL, 0, 0, NULL, cli_cmd_version},
	{"completion", "shell completion script generated from this table", "bash",
	 "Load it with: source <(sandlens completion bash)", NULL, 1, 1, completion_words, cli_cmd_completion},
	{"man", "the sandlens(1) man page in roff, generated from this table", "",
	 "View it with: sandlens man | man -l -", NULL, 0, 0, NULL, cli_cmd_man},
	{NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

const struct cli_opt cli_global_opts[] = {
	{"api", 0, "URL", "API base URL (env SANDLENS_API; default " CLI_DEFAULT_API ")"},
	{"socket", 0, "PATH", "talk HTTP over this unix socket (env SANDLENS_SOCKET; default "
			      CLI_DEFAULT_SOCKET " when accessible)"},
	{"token-file", 0, "FILE", "send the admin bearer token read from FILE (env SANDLENS_TOKEN_FILE; "
				  "default " CLI_DEFAULT_TOKEN_FILE " when readable)"},
	{"help", 'h', NULL, "help of the command (or the list of commands)"},
	{"version", 'V', NULL, "print the version and exit"},
	{NULL, 0, NULL, NULL},
};
