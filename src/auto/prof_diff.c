/* Baseline diff (prof_diff.h). */
#include "auto/prof_diff.h"
#include "common/json.h"
#include "profile/profile_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

struct acc {
	const char *name; /* the key: points into one of the profiles */
	const char *module;
	uint64_t self[2], total[2]; /* [0] capture, [1] baseline */
	uint64_t seen_stack;        /* last stack (1-based over both profiles) that counted total */
	UT_hash_handle hh;
};

static const char *frame_name(const struct sl_frame *f)
{
	return f->function ? f->function : f->name;
}

static int add_profile(struct acc **tab, const struct sl_profile *p, int which, uint64_t *stack_no)
{
	for (size_t i = 0; p && i < p->nsamples; i++) {
		const struct sl_sample *s = &p->samples[i];
		++*stack_no;
		for (uint32_t k = 0; k < s->nframes; k++) {
			if (s->frames[k] >= p->nframes)
				continue;
			const struct sl_frame *f = &p->frames[s->frames[k]];
			const char *name = frame_name(f);
			struct acc *a;
			HASH_FIND_STR(*tab, name, a);
			if (!a) {
				a = calloc(1, sizeof(*a));
				if (!a)
					return -ENOMEM;
				a->name = name;
				a->module = f->module;
				HASH_ADD_KEYPTR(hh, *tab, a->name, strlen(a->name), a);
			}
			if (a->seen_stack != *stack_no) {
				a->seen_stack = *stack_no;
				a->total[which] += s->count;
			}
			if (k + 1 == s->nframes)
				a->self[which] += s->count;
		}
	}
	return 0;
}

static int cmp_frames(const void *x, const void *y)
{
	const struct sl_prof_diff_frame *a = x, *b = y;
	if (a->self_delta != b->self_delta)
		return a->self_delta > b->self_delta ? -1 : 1;
	if (a->total_delta != b->total_delta)
		return a->total_delta > b->total_delta ? -1 : 1;
	return strcmp(a->name, b->name);
}

int sl_prof_diff(const struct sl_profile *capture, const struct sl_profile *baseline, size_t top,
		 struct sl_prof_diff_frame **out)
{
	*out = NULL;
	uint64_t tc = capture ? sl_profile_total_count(capture) : 0;
	uint64_t tb = baseline ? sl_profile_total_count(baseline) : 0;
	if (!capture || tc == 0)
		return -EINVAL;
	struct acc *tab = NULL, *a, *tmp;
	uint64_t stack_no = 0;
	int rc = add_profile(&tab, capture, 0, &stack_no);
	if (!rc)
		rc = add_profile(&tab, baseline, 1, &stack_no);
	size_t n = HASH_COUNT(tab), m = 0;
	struct sl_prof_diff_frame *v = rc ? NULL : calloc(n ? n : 1, sizeof(*v));
	if (!rc && !v)
		rc = -ENOMEM;
	HASH_ITER(hh, tab, a, tmp) {
		if (v) {
			struct sl_prof_diff_frame f = {0};
			f.self_capture = (double)a->self[0] / (double)tc;
			f.total_capture = (double)a->total[0] / (double)tc;
			f.self_baseline = tb ? (double)a->self[1] / (double)tb : 0;
			f.total_baseline = tb ? (double)a->total[1] / (double)tb : 0;
			f.self_delta = f.self_capture - f.self_baseline;
			f.total_delta = f.total_capture - f.total_baseline;
			if (f.self_delta > 0 || f.total_delta > 0) {
				snprintf(f.name, sizeof(f.name), "%s", a->name);
				snprintf(f.module, sizeof(f.module), "%s", a->module ? a->module : "");
				v[m++] = f;
			}
		}
		HASH_DEL(tab, a);
		free(a);
	}
	if (rc)
		return rc;
	qsort(v, m, sizeof(*v), cmp_frames);
	if (m > top)
		m = top;
	*out = v;
	return (int)m;
}

static double r4(double x)
{
	return round(x * 1e4) / 1e4;
}

json_t *sl_prof_diff_json(const struct sl_prof_diff_frame *f, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < n; i++) {
		json_t *o = json_pack("{s:o, s:f, s:f, s:f, s:f, s:f, s:f}", "function", sl_json_strz(f[i].name), "self_share",
				      r4(f[i].self_capture), "baseline_self_share", r4(f[i].self_baseline),
				      "self_delta", r4(f[i].self_delta), "total_share", r4(f[i].total_capture),
				      "baseline_total_share", r4(f[i].total_baseline), "total_delta",
				      r4(f[i].total_delta));
		if (o && f[i].module[0])
			json_object_set_new(o, "module", sl_json_strz(f[i].module));
		if (o)
			json_array_append_new(arr, o);
	}
	return arr;
}

struct sl_profile *sl_prof_from_folded(const char *text, size_t len, int kind)
{
	struct sl_profile *p = sl_prof_new(kind, 0, 0, 0);
	uint32_t *idx = malloc(SL_PROF_MAX_DEPTH * 4 * sizeof(uint32_t));
	char *line = malloc(len + 1);
	if (!p || !idx || !line)
		goto fail;
	size_t pos = 0;
	while (pos < len) {
		size_t e = pos;
		while (e < len && text[e] != '\n')
			e++;
		memcpy(line, text + pos, e - pos);
		line[e - pos] = 0;
		pos = e + 1;
		char *sp = strrchr(line, ' ');
		if (!sp || sp == line)
			continue;
		*sp = 0;
		char *end;
		unsigned long long cnt = strtoull(sp + 1, &end, 10);
		if (*end || end == sp + 1 || !cnt)
			continue;
		struct sl_sample s = {0};
		s.count = cnt;
		uint32_t n = 0;
		char *save = NULL;
		int first = 1;
		for (char *tok = strtok_r(line, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
			if (first) {
				snprintf(s.comm, sizeof(s.comm), "%s", tok);
				first = 0;
				continue;
			}
			if (n >= SL_PROF_MAX_DEPTH * 4)
				break;
			struct sl_frame f = {.name = tok, .function = tok, .flags = SL_FRAME_PSEUDO};
			int64_t fi = sl_prof_frame(p, &f);
			if (fi < 0)
				goto fail;
			idx[n++] = (uint32_t)fi;
		}
		if (sl_prof_add_sample(p, &s, idx, n))
			goto fail;
	}
	free(idx);
	free(line);
	return p;
fail:
	free(idx);
	free(line);
	sl_profile_free(p);
	return NULL;
}
