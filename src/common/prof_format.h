/* Profile result formats: the names of the API's `format` parameter
 * (GET /api/v1/tasks/{id}/result?format=..., docs/TASKS.md) and the file
 * extensions the CLI maps onto them. Shared by the agent (src/profile,
 * src/task) and the CLI (`sandlens profile -o FILE`). Pure, any thread.
 */
#ifndef SANDLENS_COMMON_PROF_FORMAT_H
#define SANDLENS_COMMON_PROF_FORMAT_H

enum sl_prof_format {
	SL_FMT_PPROF = 0,  /* gzip'd profile.proto (github.com/google/pprof proto/profile.proto) */
	SL_FMT_FOLDED = 1, /* "root;...;leaf N\n" (Brendan Gregg's stackcollapse format) */
	SL_FMT_SVG = 2,    /* self-contained SVG flame graph + hottest-symbols table */
	SL_FMT_JSON = 3,   /* JSON: totals, top functions, and the call tree (docs/PROFILING.md) */
	SL_FMT_HTML = 4,   /* self-contained interactive HTML flame graph (inline script, no network) */
};

/* "pprof" | "folded" | "svg" | "json" | "html" (ASCII case-insensitive) -> enum;
 * -1 when unknown or NULL. */
int sl_prof_format_from_name(const char *name);
/* The API name of a format ("pprof", ...), NULL when fmt is not one. */
const char *sl_prof_format_name(int fmt);
/* Format from a file name's extension: ".pb.gz"/".pprof"/".pb" pprof,
 * ".folded"/".txt" folded, ".svg" svg, ".json" json, ".html"/".htm" html
 * (case-insensitive);
 * -1 when unknown or NULL. */
int sl_prof_format_from_path(const char *path);
/* MIME type of a format, for HTTP answers ("application/octet-stream" for
 * pprof and unknown values; "text/html; charset=utf-8" for html). */
const char *sl_prof_format_mime(int fmt);

#endif
