/* libFuzzer: the YAML config loader (src/agent/config.c,
 * sl_config_load_buf: depth and size limits, libyaml, the key table, the
 * modules' declared sections, value parsers, validation). Seeds:
 * deploy/sandlensd.yaml. Links the modules' declarations only
 * (src/modules/<m>_decl.c), not their BPF halves. */
#include "fuzz_util.h"

#include "agent/config.h"
#include "modules/proc.h"
#include "modules/sched.h"

static struct sl_module_ops fz_ops[2];
static const struct sl_module_ops *fz_list[2] = {&fz_ops[0], &fz_ops[1]};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sl_config c;
	char err[512];
	if (!fz_ops[0].name) { /* the real declarations, as the registry's ops carry them */
		fz_ops[0].name = "proc";
		fz_ops[0].config = (struct sl_module_config){sizeof(struct sl_proc_cfg), sl_proc_cfg_keys, SL_PROC_NCFG,
							     sl_proc_cfg_check};
		fz_ops[1].name = "sched";
		fz_ops[1].config = (struct sl_module_config){sizeof(struct sl_sched_cfg), sl_sched_cfg_keys,
							     SL_SCHED_NCFG, sl_sched_cfg_check};
	}
	sl_config_defaults_mods(&c, fz_list, 2);
	sl_config_load_buf(&c, "fuzz.yaml", (const char *)data, size, err, sizeof(err));
	return 0;
}
