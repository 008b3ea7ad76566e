/* Which embedded web UI file a URL names (api_ui.h). */
#include "api/api_ui.h"

#include <string.h>

const struct sl_ui_asset *sl_ui_asset_for(const char *url)
{
	static const char pre[] = "/ui/";
	if (!url || strncmp(url, pre, sizeof(pre) - 1))
		return NULL;
	const char *name = url + sizeof(pre) - 1;
	if (!*name)
		name = "index.html";
	for (unsigned i = 0; i < sl_ui_nassets; i++)
		if (!strcmp(sl_ui_assets[i].name, name))
			return &sl_ui_assets[i];
	return NULL;
}
