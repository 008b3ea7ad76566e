/* The web UI's static files (GET /ui/..., docs/UI.md): the files of web/
 * embedded into the binary at build time by scripts/gen-webui.sh (build/gen/webui_assets.c). */
#ifndef SL_API_UI_H
#define SL_API_UI_H

#include <stddef.h>

struct sl_ui_asset {
	const char *name;  /* file name under web/ ("index.html") */
	const char *ctype; /* Content-Type */
	const unsigned char *data;
	size_t len;
};

extern const struct sl_ui_asset sl_ui_assets[];
extern const unsigned sl_ui_nassets;

/* The Content-Security-Policy of every UI answer: nothing but the agent's
 * own origin (no inline script or style, no frames, no plugins). */
#define SL_UI_CSP                                                                                                  \
	"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "            \
	"object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"

/* The asset served at URL path url ("/ui/" is index.html, "/ui/app.js"
 * app.js), or NULL when url is under /ui/ but names no asset (or is not
 * under /ui/ at all). */
const struct sl_ui_asset *sl_ui_asset_for(const char *url);

#endif
