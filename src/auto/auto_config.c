/* auto.* key checks (auto_config.h). */
#include "auto/auto_config.h"
#include "auto/detect.h"
#include "auto/psi_trigger.h"

#include <stdio.h>
#include <string.h>

const char *const sl_auto_det_names[SL_AUTO_NDET] = {
	"cpu", "throttle", "runqueue", "dstate", "memgrowth", "mempsi", "cpupsi", "iolat",
};

int sl_auto_config_check(const struct sl_config *c, char *err, size_t errlen)
{
	for (int i = 0; i < SL_AUTO_NDET; i++) {
		const struct sl_cfg_auto_det *d = &c->autotr.det[i];
		const char *n = sl_auto_det_names[i];
		if (sl_det_method_parse(d->method) < 0) {
			snprintf(err, errlen, "auto.%s.method: '%s' is not one of mean, ema, jump, consecutive", n,
				 d->method);
			return -1;
		}
		if (d->trigger[0]) {
			struct sl_psi_trigger t;
			if (sl_psi_trigger_parse(d->trigger, &t)) {
				snprintf(err, errlen,
					 "auto.%s.trigger: '%s' is not '<some|full> <threshold_us> <window_us>' with a window of 500000..10000000 us and a threshold of 1..window",
					 n, d->trigger);
				return -1;
			}
		}
	}
	return 0;
}
