/* The net module (docs/NET.md): TCP retransmits and resets, packet drops
 * by kernel drop reason per container, NET_RX/NET_TX softirq latency per
 * CPU, per-netns TCP queue counters and device counters, net_drop and
 * tcp_retransmit events. Known to the agent only through these ops (the
 * one line in src/modules/registry.c). */
#ifndef SANDLENS_MODULES_NET_H
#define SANDLENS_MODULES_NET_H

#include "agent/module.h"

extern const struct sl_module_ops sl_net_module;

#endif
