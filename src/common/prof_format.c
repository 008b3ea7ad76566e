/* Profile result formats (src/common/prof_format.h). */
#include "common/prof_format.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

int sl_prof_format_from_name(const char *name)
{
	if (!name)
		return -1;
	if (!strcasecmp(name, "pprof"))
		return SL_FMT_PPROF;
	if (!strcasecmp(name, "folded"))
		return SL_FMT_FOLDED;
	if (!strcasecmp(name, "svg"))
		return SL_FMT_SVG;
	if (!strcasecmp(name, "json"))
		return SL_FMT_JSON;
	if (!strcasecmp(name, "html"))
		return SL_FMT_HTML;
	return -1;
}

const char *sl_prof_format_name(int fmt)
{
	switch (fmt) {
	case SL_FMT_PPROF: return "pprof";
	case SL_FMT_FOLDED: return "folded";
	case SL_FMT_SVG: return "svg";
	case SL_FMT_JSON: return "json";
	case SL_FMT_HTML: return "html";
	default: return NULL;
	}
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcasecmp(s + a - b, suf);
}

int sl_prof_format_from_path(const char *path)
{
	if (!path)
		return -1;
	if (ends_with(path, ".pb.gz") || ends_with(path, ".pprof") || ends_with(path, ".pb"))
		return SL_FMT_PPROF;
	if (ends_with(path, ".folded") || ends_with(path, ".txt"))
		return SL_FMT_FOLDED;
	if (ends_with(path, ".svg"))
		return SL_FMT_SVG;
	if (ends_with(path, ".json"))
		return SL_FMT_JSON;
	if (ends_with(path, ".html") || ends_with(path, ".htm"))
		return SL_FMT_HTML;
	return -1;
}

const char *sl_prof_format_mime(int fmt)
{
	switch (fmt) {
	case SL_FMT_PPROF: return "application/octet-stream";
	case SL_FMT_FOLDED: return "text/plain; charset=utf-8";
	case SL_FMT_SVG: return "image/svg+xml";
	case SL_FMT_JSON: return "application/json";
	case SL_FMT_HTML: return "text/html; charset=utf-8";
	default: return "application/octet-stream";
	}
}
