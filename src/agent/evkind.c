/* Event kind names: the one list the pipeline, /metrics and the API's type
 * filter share (kept apart from agent.c so the API links without it). */
#include "agent/agent.h"

const char *const sl_evkind_names[SL_K_MAX] = {"exec", "exit", "signal", "oom", "sched_delay"};
