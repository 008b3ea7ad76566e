/* The script and style of the HTML flame graph (src/profile/flame_page.js,
 * flame_page.css), embedded at build time by scripts/gen-flame-page.sh
 * (build/gen/flame_page.c) with the Content-Security-Policy that allows
 * exactly them (their SHA-256 hashes, CSP Level 2 hash-source). */
#ifndef SANDLENS_PROFILE_FLAME_PAGE_H
#define SANDLENS_PROFILE_FLAME_PAGE_H

#include <stddef.h>

extern const char sl_flame_page_js[];   /* NUL-terminated */
extern const size_t sl_flame_page_js_len;
extern const char sl_flame_page_css[];
extern const size_t sl_flame_page_css_len;
/* For the page's <meta http-equiv="Content-Security-Policy">: default-src
 * 'none', the script and the style by hash, data: images. */
extern const char sl_flame_page_csp_meta[];
/* For an HTTP header: the same plus frame-ancestors 'none' and
 * "sandbox allow-scripts" (an opaque origin: the page cannot act as the
 * agent's origin), which a <meta> policy cannot carry. */
extern const char sl_flame_page_csp_header[];

#endif
