/* The io module (docs/IO.md): block request latency per container, disk
 * and op (queue and device stages), bytes, requests, slow_io events, page
 * cache and writeback throttling per container, per-disk /proc/diskstats.
 * Known to the agent only through these ops (the one line in
 * src/modules/registry.c). */
#ifndef SANDLENS_MODULES_IO_H
#define SANDLENS_MODULES_IO_H

#include "agent/module.h"

extern const struct sl_module_ops sl_io_module;

#endif
