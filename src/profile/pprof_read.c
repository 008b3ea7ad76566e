/* pprof reader: the inverse of pprof.c for what pprof carries
 * (profile_merge.h). gunzip (zlib, bounded), unpack (protobuf-c), rebuild
 * frames and samples through profile_build.c. */
#include "profile/profile_merge.h"
#include "profile/profile_internal.h"
#include "profile/profile.pb-c.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile PProfile;

/* gunzip buf[len] into *out (*olen bytes); plain protobuf (no gzip magic)
 * is copied. 0, -EINVAL, -EFBIG, -ENOMEM. */
static int gunzip(const uint8_t *buf, size_t len, uint8_t **out, size_t *olen)
{
	*out = NULL;
	*olen = 0;
	if (len < 2 || buf[0] != 0x1f || buf[1] != 0x8b) {
		if (len > SL_PPROF_READ_MAX)
			return -EFBIG;
		*out = malloc(len ? len : 1);
		if (!*out)
			return -ENOMEM;
		memcpy(*out, buf, len);
		*olen = len;
		return 0;
	}
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -ENOMEM;
	size_t cap = len * 4 + 4096, n = 0;
	uint8_t *o = malloc(cap);
	int rc = 0;
	if (!o) {
		inflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)buf;
	z.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
	for (;;) {
		if (n == cap) {
			if (cap >= SL_PPROF_READ_MAX) {
				rc = -EFBIG;
				break;
			}
			size_t nc = cap * 2 > SL_PPROF_READ_MAX ? SL_PPROF_READ_MAX : cap * 2;
			uint8_t *no = realloc(o, nc);
			if (!no) {
				rc = -ENOMEM;
				break;
			}
			o = no;
			cap = nc;
		}
		z.next_out = o + n;
		z.avail_out = (uInt)(cap - n > UINT32_MAX ? UINT32_MAX : cap - n);
		size_t before = z.avail_out;
		int zr = inflate(&z, Z_NO_FLUSH);
		n += before - z.avail_out;
		if (zr == Z_STREAM_END)
			break;
		if (zr != Z_OK && !(zr == Z_BUF_ERROR && z.avail_out == 0)) {
			rc = -EINVAL;
			break;
		}
		if (zr == Z_OK && z.avail_in == 0 && z.avail_out != 0) { /* truncated input */
			rc = -EINVAL;
			break;
		}
	}
	inflateEnd(&z);
	if (rc) {
		free(o);
		return rc;
	}
	*out = o;
	*olen = n;
	return 0;
}

static const char *str_at(const PProfile *pp, int64_t i)
{
	if (i < 0 || (size_t)i >= pp->n_string_table)
		return NULL;
	return pp->string_table[i];
}

static int is_user_pseudo_module(const char *m)
{
	return !strcmp(m, "[vdso]") || !strcmp(m, "[anon]") || !strcmp(m, "[jit]");
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b && b[1] ? b + 1 : p;
}

/* Index of the entry with id in v[0..n) (n when none): the writer numbers
 * them 1..n in order, so that is tried first. */
#define DEFINE_FIND_ID(fn, T)                                                  \
	static size_t fn(T *const *v, size_t n, uint64_t id)                   \
	{                                                                      \
		if (id && id <= n && v[id - 1]->id == id)                      \
			return id - 1;                                         \
		for (size_t j = 0; j < n; j++)                                 \
			if (v[j]->id == id)                                    \
				return j;                                      \
		return n;                                                      \
	}
DEFINE_FIND_ID(find_function, Perftools__Profiles__Function)
DEFINE_FIND_ID(find_mapping, Perftools__Profiles__Mapping)
DEFINE_FIND_ID(find_location, Perftools__Profiles__Location)

/* The frame of location L (rules in profile_merge.h). 0 or -EINVAL. */
static int location_frame(const PProfile *pp, const Perftools__Profiles__Location *L, struct sl_frame *f)
{
	const char *name = NULL, *module = NULL, *build_id = NULL;
	memset(f, 0, sizeof(*f));
	if (L->n_line >= 1 && L->line[0]) {
		uint64_t fid = L->line[0]->function_id;
		size_t i = find_function(pp->function, pp->n_function, fid);
		if (i < pp->n_function)
			name = str_at(pp, pp->function[i]->name);
	}
	if (L->mapping_id) {
		size_t i = find_mapping(pp->mapping, pp->n_mapping, L->mapping_id);
		if (i < pp->n_mapping) {
			module = str_at(pp, pp->mapping[i]->filename);
			build_id = str_at(pp, pp->mapping[i]->build_id);
		}
		if (!module)
			return -EINVAL;
	}
	if (!name || !name[0])
		name = "[unknown]";
	f->name = name;
	f->address = L->address;
	if (!module || !module[0]) { /* unresolved, or a pseudo frame */
		f->flags = SL_FRAME_UNKNOWN;
		if (!strncmp(name, "[lost ", 6)) {
			f->flags |= SL_FRAME_PSEUDO;
			if (strstr(name, "kernel"))
				f->flags |= SL_FRAME_KERNEL;
		}
		return 0;
	}
	f->module = module;
	f->build_id = build_id && build_id[0] ? build_id : NULL;
	f->module_offset = L->address;
	if (module[0] == '[' && !is_user_pseudo_module(module)) {
		f->flags = SL_FRAME_KERNEL;
		if (!strcmp(name, "[kernel]"))
			f->flags |= SL_FRAME_UNKNOWN;
		else
			f->function = name;
		return 0;
	}
	if (!strcmp(module, "[jit]")) {
		f->flags = SL_FRAME_JIT;
		f->function = name;
		f->module_offset = 0;
		return 0;
	}
	char nosym[600];
	snprintf(nosym, sizeof(nosym), "%s+0x%" PRIx64, base_name(module), L->address);
	if (!strcmp(name, nosym) || (!strcmp(module, "[anon]") && !strcmp(name, "[anon]")))
		f->flags = SL_FRAME_NOSYM;
	else
		f->function = name;
	return 0;
}

static int label_str(const PProfile *pp, const Perftools__Profiles__Sample *S, const char *key, const char **out)
{
	for (size_t i = 0; i < S->n_label; i++) {
		const char *k = str_at(pp, S->label[i]->key);
		if (k && !strcmp(k, key)) {
			*out = str_at(pp, S->label[i]->str);
			return *out ? 0 : -EINVAL;
		}
	}
	return -ENOENT;
}

static int label_num(const PProfile *pp, const Perftools__Profiles__Sample *S, const char *key, int64_t *out)
{
	for (size_t i = 0; i < S->n_label; i++) {
		const char *k = str_at(pp, S->label[i]->key);
		if (k && !strcmp(k, key)) {
			*out = S->label[i]->num;
			return 0;
		}
	}
	return -ENOENT;
}

static struct sl_profile *decode(const PProfile *pp, int *err)
{
	if (pp->n_sample_type < 2 || pp->n_string_table < 1) {
		*err = -EINVAL;
		return NULL;
	}
	const char *t1 = str_at(pp, pp->sample_type[1]->type);
	if (!t1) {
		*err = -EINVAL;
		return NULL;
	}
	int kind = !strcmp(t1, "off_cpu") ? SL_PROF_OFF_CPU : SL_PROF_ON_CPU;
	struct sl_profile *p = sl_prof_new(kind, (uint64_t)pp->time_nanos, (uint64_t)pp->duration_nanos,
					   kind == SL_PROF_ON_CPU ? (uint64_t)pp->period : 0);
	int64_t *frame_of = calloc(pp->n_location + 1, sizeof(*frame_of));
	uint32_t *fr = NULL;
	size_t frcap = 0;
	*err = -ENOMEM;
	if (!p || !frame_of)
		goto fail;
	for (size_t i = 0; i < pp->n_location; i++) {
		struct sl_frame f;
		if (location_frame(pp, pp->location[i], &f)) {
			*err = -EINVAL;
			goto fail;
		}
		frame_of[i] = sl_prof_frame(p, &f);
		if (frame_of[i] < 0)
			goto fail;
	}
	for (size_t si = 0; si < pp->n_sample; si++) {
		const Perftools__Profiles__Sample *S = pp->sample[si];
		struct sl_sample s;
		memset(&s, 0, sizeof(s));
		if (S->n_value < 2) {
			*err = -EINVAL;
			goto fail;
		}
		s.count = (uint64_t)S->value[0];
		s.value_ns = (uint64_t)S->value[1];
		int64_t num;
		const char *str;
		if (!label_num(pp, S, "pid", &num))
			s.pid = (uint32_t)num;
		if (!label_num(pp, S, "tid", &num))
			s.tid = (uint32_t)num;
		if (!label_str(pp, S, "comm", &str))
			snprintf(s.comm, sizeof(s.comm), "%s", str);
		if (!label_str(pp, S, "container_id", &str))
			snprintf(s.container_id, sizeof(s.container_id), "%s", str);
		if (!label_str(pp, S, "off_cpu_state", &str))
			s.off_cpu_state = !strcmp(str, "runqueue") ? SL_OFFCPU_RUNQUEUE : SL_OFFCPU_BLOCKED;
		if (S->n_location_id > frcap) {
			uint32_t *nf = realloc(fr, S->n_location_id * sizeof(*nf));
			if (!nf)
				goto fail;
			fr = nf;
			frcap = S->n_location_id;
		}
		for (size_t k = 0; k < S->n_location_id; k++) { /* pprof is leaf first */
			size_t li = find_location(pp->location, pp->n_location, S->location_id[S->n_location_id - 1 - k]);
			if (li == pp->n_location) {
				*err = -EINVAL;
				goto fail;
			}
			fr[k] = (uint32_t)frame_of[li];
		}
		if (sl_prof_add_sample(p, &s, fr, (uint32_t)S->n_location_id))
			goto fail;
	}
	free(frame_of);
	free(fr);
	*err = 0;
	return p;
fail:
	free(frame_of);
	free(fr);
	sl_profile_free(p);
	return NULL;
}

struct sl_profile *sl_profile_read_pprof(const void *buf, size_t len, int *err)
{
	int e;
	uint8_t *raw;
	size_t rl;
	if (!err)
		err = &e;
	if (!buf) {
		*err = -EINVAL;
		return NULL;
	}
	*err = gunzip(buf, len, &raw, &rl);
	if (*err)
		return NULL;
	PProfile *pp = perftools__profiles__profile__unpack(NULL, rl, raw);
	free(raw);
	if (!pp) {
		*err = -EINVAL;
		return NULL;
	}
	struct sl_profile *p = decode(pp, err);
	perftools__profiles__profile__free_unpacked(pp, NULL);
	return p;
}
