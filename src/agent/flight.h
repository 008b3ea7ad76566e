/* The per-container flight recorder (docs/FLIGHT.md).
 *
 * Per container, an in-memory ring of the events the pipeline attributed to
 * it over the last `window_ns` (flight.window, default 60 s), as the stored
 * JSON text of each event, bounded in bytes per container
 * (flight.container_max_bytes) and in total (flight.max_bytes), and in
 * containers (flight.max_containers). Generic over kinds: an event is a kind
 * index, a type name, a weight and its JSON; no module is named here.
 *
 * Freezing: a trigger (an event whose kind says it means death or a hang:
 * ops.kind_freezes, src/agent/module.h; or sl_flight_freeze()
 * from another part of the agent) opens a recording for the container with
 * a new id at once (the triggering event carries it as flight_recording_id)
 * and completes it flight.post_trigger later (default 1 s): the ring's events
 * in [completion - window, completion] are copied, sorted by time and handed
 * to the sink (the store writer, flight_store.h). Triggers of the same
 * container while a recording is open join it (the OOM killer's SIGKILL, the
 * OOM event and the victim's exit are one recording). Later appends never
 * change a completed copy.
 *
 * Rate limits: a container gets at most one recording per
 * flight.freeze_interval (default 1 m), and the host at most
 * flight.max_freezes_per_minute (a token bucket): a crash loop does not fill
 * the store. Refused triggers are counted.
 *
 * Eviction: entries older than the window go at every append and tick; a
 * container's oldest entries go when its bytes pass container_max_bytes, the
 * host's oldest when the total passes max_bytes (both counted as ring drops,
 * and noted in the container's next recording); a container whose ring is
 * empty, with no recording open and none within freeze_interval, is forgotten
 * at the tick (it is gone or idle); a new container past max_containers
 * evicts the one with the oldest last event (counted).
 *
 * Threads: one mutex. The poll loop appends and ticks; sl_flight_freeze()
 * may be called from any thread; the sink is called without the mutex held,
 * on the thread that completed the recording (the poll loop, or the caller
 * of sl_flight_freeze when post_trigger is 0). Counters are atomics (any
 * thread). API threads never read the rings: they read completed copies. */
#ifndef SANDLENS_AGENT_FLIGHT_H
#define SANDLENS_AGENT_FLIGHT_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/attr.h"

struct sl_flight;

/* Defaults of the configuration keys (docs/CONFIG.md "flight"). */
#define SL_FLIGHT_DEFAULT_WINDOW_NS (60ull * 1000000000ull)
#define SL_FLIGHT_DEFAULT_CONTAINER_MAX_BYTES (1ull << 20) /* 1 MiB */
#define SL_FLIGHT_DEFAULT_MAX_BYTES (64ull << 20)          /* 64 MiB */
#define SL_FLIGHT_DEFAULT_MAX_CONTAINERS 1024u
#define SL_FLIGHT_DEFAULT_POST_TRIGGER_NS 1000000000ull  /* 1 s */
#define SL_FLIGHT_DEFAULT_FREEZE_INTERVAL_NS (60ull * 1000000000ull)
#define SL_FLIGHT_DEFAULT_MAX_FREEZES_PER_MINUTE 10u
/* Triggers kept in one recording (more join it but are only counted). */
#define SL_FLIGHT_MAX_TRIGGERS 16
/* Bytes one ring entry costs besides its JSON text (accounting). */
#define SL_FLIGHT_ENTRY_OVERHEAD 64u

struct sl_flight_config {
	uint64_t window_ns;           /* how far back a recording reaches, ns */
	uint64_t container_max_bytes; /* bound of one container's ring (JSON + overhead), bytes */
	uint64_t max_bytes;           /* bound of all rings, bytes */
	unsigned max_containers;      /* containers with a ring at most */
	uint64_t post_trigger_ns;     /* a recording completes this long after its first trigger */
	uint64_t freeze_interval_ns;  /* at most one recording per container per this, ns */
	unsigned max_freezes_per_minute; /* host-wide token bucket (burst = the same number) */
	int64_t mono_to_real_ns;      /* wall clock = CLOCK_MONOTONIC + this (the recording's times) */
	int64_t first_id;             /* recording ids start after this (the store's largest) */
};

/* A completed recording: its id, container, wall-clock completion time and
 * the recording JSON text (docs/FLIGHT.md "Recording"). The sink owns it
 * (sl_flight_rec_free). */
struct sl_flight_rec {
	int64_t id;
	int64_t time_ns; /* wall clock, ns since the epoch: when it was completed */
	char container_id[SL_CONTAINER_ID_LEN];
	char reason[64];
	size_t events;   /* events in it */
	char *json;      /* malloc'd, NUL-terminated */
	size_t len;
	struct sl_flight_rec *next; /* for the sink's queue */
};
void sl_flight_rec_free(struct sl_flight_rec *r);

/* The sink of completed recordings (takes ownership of r). */
typedef void (*sl_flight_sink)(void *ctx, struct sl_flight_rec *r);

/* Counters (atomics; any thread). */
struct sl_flight_stats {
	uint64_t appended;            /* events put into rings */
	uint64_t ring_dropped_container_bytes; /* entries dropped: a container's ring over its bytes */
	uint64_t ring_dropped_total_bytes;     /* entries dropped: all rings over flight.max_bytes */
	uint64_t ring_dropped_evicted;         /* entries dropped with an evicted container */
	uint64_t containers_evicted;  /* containers evicted for max_containers */
	uint64_t containers_expired;  /* containers forgotten: nothing in the window */
	uint64_t recorded;            /* recordings completed */
	uint64_t joined;              /* triggers that joined an open recording */
	uint64_t rate_limited_container; /* triggers refused: freeze_interval of the container */
	uint64_t rate_limited_host;      /* triggers refused: max_freezes_per_minute */
	uint64_t unknown_container;   /* sl_flight_freeze of a container without a ring */
	uint64_t containers;          /* gauge: containers with a ring */
	uint64_t bytes;               /* gauge: bytes of all rings */
	uint64_t entries;             /* gauge: entries of all rings */
};

/* A host-wide drop counter (reason, type, total so far), given to the tick. */
struct sl_flight_drop {
	const char *reason;
	const char *type;
	uint64_t value;
};

/* A recorder with cfg (copied; 0 fields take the defaults above), delivering
 * completed recordings to sink(ctx, rec). NULL on ENOMEM. */
struct sl_flight *sl_flight_new(const struct sl_flight_config *cfg, sl_flight_sink sink, void *ctx);
/* Completes nothing; frees every ring and open recording. NULL is a no-op. */
void sl_flight_free(struct sl_flight *f);

/* A trigger for the container of at (a container: is_container SL_YES and a
 * container id; else 0): type = the event's kind name, reason = why (the
 * kind name for an event, the caller's text for sl_flight_freeze),
 * info (may be NULL; borrowed, copied) = what the recording lists about the
 * trigger (the pipeline passes {type, time, pid, comm, severity}). now_ns =
 * CLOCK_MONOTONIC. Returns the recording id (> 0): a new one, or the open
 * one of the container (the trigger joins it); 0 when refused (rate limit,
 * not a container). Poll-loop thread (takes the mutex). */
int64_t sl_flight_trigger(struct sl_flight *f, const struct sl_attr *at, const char *reason, const json_t *info,
			  uint64_t now_ns);

/* Append one event of the container of at (ignored for anything else) to its
 * ring: kind index, ts_ns (CLOCK_MONOTONIC of the event), weight (the kernel
 * events it stands for, 1 + suppressed), json (copied; len bytes, the
 * pipeline's stored text), type (the kind's name, for the drop notes). Then
 * completes due recordings. Poll-loop thread. */
void sl_flight_append(struct sl_flight *f, const struct sl_attr *at, unsigned kind, const char *type, uint64_t ts_ns,
		      uint64_t weight, const char *json, size_t len, uint64_t now_ns);

/* Periodic work (poll loop, each agent tick): ages out old entries,
 * forgets idle containers, completes due recordings, and keeps drops[0..n)
 * (host-wide drop counters, totals) as this tick's sample so a recording
 * can report the host's drops over its window. */
void sl_flight_tick(struct sl_flight *f, uint64_t now_ns, const struct sl_flight_drop *drops, size_t n);

/* The external trigger (e.g. an automatic capture): freeze the ring of
 * container_id (exact id) with reason (text, <= 63 bytes kept) and
 * trigger_event_id (the store row id of the event or record that caused it,
 * 0 = none; listed in the recording as "trigger_event_id"). Any thread.
 * Returns the recording id (> 0; the container's open recording when one
 * is open), or -ENOENT (no ring for that container: no event of it in the
 * window), -EBUSY (rate-limited: freeze_interval or the host bucket),
 * -EINVAL (f, container_id or reason NULL or empty). The recording is
 * completed flight.post_trigger later (by the poll loop's tick), or at
 * once when post_trigger is 0. */
int64_t sl_flight_freeze(struct sl_flight *f, const char *container_id, const char *reason,
			 int64_t trigger_event_id);

/* Complete every open recording whose time has come (now_ns). Called by
 * append and tick; exposed for tests. */
void sl_flight_complete_due(struct sl_flight *f, uint64_t now_ns);

/* The counters. */
void sl_flight_get_stats(struct sl_flight *f, struct sl_flight_stats *out);

#endif
