/* The mem module (SYS-1; docs/MEM.md): reclaim and compaction latency per
 * container, memcg reclaim per memcg, kswapd and throttling per node,
 * mem_stall events. Known to the agent only through these ops (the one
 * line in src/modules/registry.c). */
#ifndef SANDLENS_MODULES_MEM_H
#define SANDLENS_MODULES_MEM_H

#include "agent/module.h"

extern const struct sl_module_ops sl_mem_module;

#endif
