/* Guest-agent statistics source (STATS-5) for micro-VM sandboxes (Kata
 * Containers with cloud-hypervisor or Firecracker): per-workload figures
 * read from inside the guest through the Kata agent's StatsContainer call,
 * not from the host cgroup (which holds the VMM and the guest RAM it took
 * at boot). docs/STATS.md "Guest-agent source" is the reference.
 *
 * Layers, each its own file:
 *   guest_conv.c   the pure conversion of one container's CgroupStats and
 *                  the sum over a sandbox's workload containers
 *   guest_ttrpc.c  ttrpc framing (containerd/ttrpc channel.go) and the
 *                  Request/Response envelope
 *   guest_client.c the hybrid-vsock connection (CONNECT <port>\n / OK ...)
 *                  and one StatsContainer call, with a deadline
 *   guest_kata.c   the Kata runtime's published state on the host
 *                  (<root>/sbs/<id>/persist.json, the agent URL)
 *   guest_source.c the answer: status codes, the read under identity
 *                  checks, epochs
 */
#ifndef SANDLENS_STATS_GUEST_H
#define SANDLENS_STATS_GUEST_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "stats/kata_agent.pb-c.h"

/* ------------------------------------------------------- conversion */

/* Known bits of struct sl_guest_sample. */
enum {
	SL_GS_CPU_USAGE = 1u << 0,
	SL_GS_CPU_USER = 1u << 1,
	SL_GS_CPU_SYSTEM = 1u << 2,
	SL_GS_CPU_THROTTLE = 1u << 3, /* periods, throttled periods, throttled time */
	SL_GS_MEM_USAGE = 1u << 4,
	SL_GS_MEM_WS = 1u << 5,
	SL_GS_MEM_PEAK = 1u << 6,
	SL_GS_MEM_CACHE = 1u << 7,
	SL_GS_MEM_SWAP = 1u << 8,
	SL_GS_PIDS = 1u << 9,
};

/* Flags of a converted sample (struct sl_guest_sample.flags). */
enum {
	SL_GSF_WS_FLOORED = 1u << 0,     /* inactive_file > usage: working set 0 */
	SL_GSF_WS_NO_INACTIVE = 1u << 1, /* memory.stat had no inactive key: ws = usage (upper bound) */
	SL_GSF_WS_V1 = 1u << 2,          /* total_inactive_file (v1 spelling) was subtracted */
	SL_GSF_NIL = 1u << 3,            /* the agent answered without cgroup stats */
};

/* One container's figures as the guest kernel keeps them, or their sum.
 * Units: µs, bytes, counts. A figure whose message the agent left out is
 * 0 with its known bit clear. */
struct sl_guest_sample {
	uint32_t known; /* SL_GS_* */
	uint32_t flags; /* SL_GSF_* (a sum ORs them) */
	uint64_t cpu_usage_usec, cpu_user_usec, cpu_system_usec;
	uint64_t cpu_periods, cpu_throttled_periods, cpu_throttled_usec;
	uint64_t mem_usage_bytes, mem_working_set_bytes, mem_peak_bytes;
	uint64_t mem_cache_bytes, mem_swap_bytes;
	uint64_t pids_current;
};

/* Convert one container's StatsContainer answer (cs may be NULL: the agent
 * has no accounting for it, a zero sample with SL_GSF_NIL). Never fails.
 *   cpu: CpuUsage.total_usage / usage_in_usermode / usage_in_kernelmode and
 *        ThrottlingData.throttled_time are ns (the agent's cgroups-rs reads
 *        v2 cpu.stat usage_usec and multiplies by 1000; v1 cpuacct.usage is
 *        ns): divided by 1000, floored (sub-µs remainders are dropped).
 *   memory: usage = MemoryData.usage (v2 memory.current); working set =
 *        usage - memory.stat total_inactive_file when that key is present
 *        (v1, hierarchical; a v1 guest also prints the local inactive_file,
 *        which leaves out descendants), else - inactive_file (v2),
 *        saturating at 0; without either key ws = usage and
 *        SL_GSF_WS_NO_INACTIVE. peak = MemoryData.max_usage (v2 memory.peak,
 *        v1 max_usage_in_bytes), unknown when 0 (kernels before 5.19 have
 *        no memory.peak and the agent sends 0). cache = MemoryStats.cache,
 *        swap = swap_usage.usage.
 *   pids: PidsStats.current. */
void sl_guest_from_cgroup_stats(const Grpc__CgroupStats *cs, struct sl_guest_sample *out);

/* a += b, each figure saturating at 2^64-1. A figure is known in the sum
 * when it is known in either (a container that did not report it adds 0:
 * the guest source's summing rule, docs/STATS.md). */
void sl_guest_sample_add(struct sl_guest_sample *a, const struct sl_guest_sample *b);

/* ----------------------------------------------------------- ttrpc */

#define SL_TTRPC_HDR_LEN 10
#define SL_TTRPC_MAX_MSG (4u << 20) /* containerd/ttrpc messageLengthMax */
#define SL_TTRPC_REQUEST 1
#define SL_TTRPC_RESPONSE 2

struct sl_ttrpc_hdr {
	uint32_t length;    /* payload bytes after the header */
	uint32_t stream_id; /* client streams are odd, from 1 */
	uint8_t type;       /* SL_TTRPC_REQUEST / RESPONSE (3 = data, not used) */
	uint8_t flags;
};

/* Encode h into buf[SL_TTRPC_HDR_LEN] (big endian, channel.go
 * writeMessageHeader). */
void sl_ttrpc_hdr_encode(const struct sl_ttrpc_hdr *h, uint8_t *buf);
/* Decode buf[SL_TTRPC_HDR_LEN]. Returns 0, or -EMSGSIZE when length >
 * max_len (max_len 0 = SL_TTRPC_MAX_MSG). */
int sl_ttrpc_hdr_decode(const uint8_t *buf, size_t max_len, struct sl_ttrpc_hdr *h);

/* A whole request frame (header + ttrpc.Request{service, method, payload,
 * timeout_nano}) for stream_id, malloc'd into *out / *len. 0 or -ENOMEM,
 * -EMSGSIZE (larger than SL_TTRPC_MAX_MSG). */
int sl_ttrpc_request_frame(uint32_t stream_id, const char *service, const char *method,
			   const uint8_t *payload, size_t plen, int64_t timeout_nano,
			   uint8_t **out, size_t *len);

/* Parse a response frame body (the bytes after the header) as
 * ttrpc.Response. On success *status_code is the google.rpc code (0 = OK),
 * msg (when non-NULL) the status message, and *payload / *plen point into a
 * malloc'd copy the caller frees with free(*payload). Returns 0, or -EPROTO
 * (not a Response), -ENOMEM. */
int sl_ttrpc_response_parse(const uint8_t *body, size_t len, int *status_code, char *msg,
			    size_t msglen, uint8_t **payload, size_t *plen);

/* ----------------------------------------------------------- client */

/* Where the agent is: a hybrid-vsock unix socket reached through an
 * O_PATH descriptor (so no path component was a symlink), or an AF_VSOCK
 * context id (QEMU's vhost-vsock). */
struct sl_guest_addr {
	int kind;        /* SL_GADDR_HVSOCK or SL_GADDR_VSOCK */
	int path_fd;     /* HVSOCK: O_PATH fd of the socket (owned) */
	uint32_t cid;    /* VSOCK */
	uint32_t port;   /* agent port, 1024 by default (Kata hypervisor.go vSockPort) */
};
enum { SL_GADDR_NONE = 0, SL_GADDR_HVSOCK = 1, SL_GADDR_VSOCK = 2 };

/* Outcome of one container's call. */
enum sl_guest_call_rc {
	SL_GCALL_OK = 0,          /* answered (stats may be NULL) */
	SL_GCALL_STATUS = 1,      /* answered with a non-OK ttrpc status (e.g. no such container) */
};

struct sl_guest_conn;

/* Connect to the agent and, for hybrid vsock, do the handshake
 * ("CONNECT <port>\n", answer a line starting "OK"), all before deadline_ns
 * (CLOCK_MONOTONIC). NULL with *err set: -ETIMEDOUT, -ECONNREFUSED,
 * -ENOENT, -EPROTO (handshake refused), -ENOMEM. */
struct sl_guest_conn *sl_guest_connect(const struct sl_guest_addr *a, int64_t deadline_ns, int *err);
void sl_guest_conn_close(struct sl_guest_conn *c);

/* One StatsContainer(container_id) call, answered before deadline_ns.
 * Returns SL_GCALL_OK with *resp (free with
 * grpc__stats_container_response__free_unpacked; NULL when the agent sent
 * an empty payload), SL_GCALL_STATUS with *code (google.rpc code) for a
 * refused call, or -errno: -ETIMEDOUT (no answer in time: the connection
 * is unusable after it), -EPROTO (malformed frame, wrong type or stream,
 * oversized), -ECONNRESET / -EPIPE (closed), -ENOMEM. */
int sl_guest_stats_call(struct sl_guest_conn *c, const char *container_id, int64_t deadline_ns,
			Grpc__StatsContainerResponse **resp, int *code);

/* CLOCK_MONOTONIC now, ns. */
int64_t sl_guest_mono_ns(void);

/* ------------------------------------------------------- Kata state */

#define SL_GUEST_MAX_MEMBERS 64
#define SL_GUEST_ID_LEN 80

struct sl_kata_member {
	char id[SL_GUEST_ID_LEN];
	char state[16];       /* "running", "ready", "stopped", "paused", "" unknown */
	char start[40];       /* Process.StartTime as persisted (RFC 3339), "" none */
	int workload;         /* 1: summed; 0: a carrier (sandbox container, never started) */
};

/* A sandbox as the Kata runtime persisted it (virtcontainers/persist/fs:
 * <root>/sbs/<id>/persist.json and <root>/sbs/<id>/<cid>/persist.json). */
struct sl_kata_sandbox {
	char id[SL_GUEST_ID_LEN];
	char state[16];          /* SandboxState.State */
	char hv_type[32];        /* HypervisorState.Type */
	char hv_uuid[64];        /* HypervisorState.UUID */
	int hv_pid;              /* HypervisorState.Pid (0 unknown) */
	char agent_url[512];     /* AgentState.URL: hvsock://<uds>:<port> or vsock://<cid>:<port> */
	uint64_t state_ino;      /* inode of persist.json: the sandbox's incarnation (rewritten in place, O_TRUNC) */
	uint64_t ident;          /* identity for the read check: persist.json inode, hv uuid, pid */
	size_t n;
	struct sl_kata_member m[SL_GUEST_MAX_MEMBERS];
};

/* Read sandbox id under root (e.g. "/run/vc"). Files are opened
 * non-blocking with O_NOFOLLOW below root, must be regular and at most
 * 1 MiB. Returns 0, -ENOENT (no such sandbox dir or no persist.json),
 * -EINVAL (malformed JSON / not a regular file), -ENOMEM. A member whose
 * own persist.json is missing has state "". */
int sl_kata_read(const char *root, const char *id, struct sl_kata_sandbox *sb);

/* Resolve sb->agent_url into a, allowing a hybrid-vsock socket only below
 * root (the state root as the runtime names it: the URL's path must begin
 * with it; no "..", no symlink in any component below it; the file must be
 * a socket), opened below open_root (root with attribution.host_root in
 * front; equal to root without one). 0, -ENOENT (socket not there yet),
 * -EPERM (outside root, a symlink, not a socket), -EINVAL (unparsable URL). */
int sl_kata_agent_addr(const char *root, const char *open_root, const struct sl_kata_sandbox *sb,
		       struct sl_guest_addr *a);

/* ---------------------------------------------------------- source */

struct sl_guest_config {
	char kata_root[256];   /* stats.guest.kata_root, default "/run/vc" (as the runtime writes it) */
	char host_root[256];   /* attribution.host_root: prefix for opening, "" = none */
	uint64_t timeout_ns;   /* stats.guest.timeout: whole read, default 1 s */
	unsigned max_inflight; /* concurrent guest reads, default 8 */
};

struct sl_guest;

struct sl_guest *sl_guest_new(const struct sl_guest_config *cfg);
void sl_guest_free(struct sl_guest *g);

/* 1 when id names a Kata sandbox in the configured state root (its
 * <root>/sbs/<id> directory exists); used by source=auto. */
int sl_guest_knows(struct sl_guest *g, const char *id);

struct sl_stats_reply;
/* The answer of GET /api/v1/workloads/{id}/stats?source=guest_agent
 * (docs/STATS.md "Guest-agent source", status table there). Any thread;
 * takes no lock of the stats collector or of the Kata runtime; blocks at
 * most the configured timeout. Returns 0 or -ENOMEM. */
int sl_guest_answer(struct sl_guest *g, const char *id, struct sl_stats_reply *r);

#endif
