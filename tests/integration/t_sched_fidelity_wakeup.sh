#!/bin/bash
# t_sched_fidelity with sched.wait_source: wakeup (the fallback where a
# kernel keeps no sched_info, and a reader of the waits independent of
# the kernel's sched_info accounting the default mode reads): the same
# window, the same 5 % bounds against /proc/<pid>/task/<tid>/schedstat.
# sl-san: once (the user-space path is the one t_sched_fidelity's ASan pass runs; only the BPF program differs)
SL_SCHED_WAIT_SOURCE=wakeup exec bash "$(dirname "$0")/t_sched_fidelity.sh"
