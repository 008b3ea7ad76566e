/* TRANSITIONAL (issue 9 item 4, branch h-prom): the metrics functions of the
 * store, the API, the stats collector and the pressure runtime take a
 * struct sl_prom * now; the agent core (src/agent/agent.c) is converted in
 * another branch and still passes its FILE *. Until it does, a call with a
 * FILE * goes to <fn>_file (src/agent/prom_compat.c), which gives the call
 * a writer of its own; a call with a writer goes to <fn> itself.
 *
 * Remove this header, src/agent/prom_compat.c and the SL_PROM_COMPAT*
 * lines of store.h, api.h, stats.h and pressure_rt.h once no caller passes
 * a FILE *. The functions are defined as (fn)(...) so that these macros do
 * not apply to their definitions. */
#ifndef SANDLENS_COMMON_PROM_COMPAT_H
#define SANDLENS_COMMON_PROM_COMPAT_H

#include <stdio.h>

/* fn(obj, out) with out a FILE * or a struct sl_prom *. */
#define SL_PROM_COMPAT(fn, obj, out) _Generic((out), FILE *: fn##_file, default: fn)(obj, out)
/* fn(out), the same without an object. */
#define SL_PROM_COMPAT1(fn, out) _Generic((out), FILE *: fn##_file, default: fn)(out)

#endif
