/* pprof writer: a gzip'd perftools.profiles.Profile (proto/profile.proto,
 * field numbers of github.com/google/pprof proto/profile.proto), encoded
 * with protobuf-c, compressed with zlib.
 *
 * Addresses: a user Location's address is the frame's FILE OFFSET in its
 * module and the module's Mapping is [0, max offset + 1) at file offset 0,
 * so one location stands for one instruction of one binary in every
 * process. Kernel locations carry the kernel address, or 0 when the caller
 * may not see kernel addresses (kaddrs_visible, profile.h). Every Mapping has
 * has_functions set: unresolved frames carry a "module+0xoffset" function,
 * so readers never try to re-symbolize. */
#include "profile/profile_internal.h"
#include "profile/prof_kinds.h"
#include "profile/profile.pb-c.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__ValueType PValueType;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Function PFunction;

struct strent {
	UT_hash_handle hh;
	int64_t idx;
	const char *s;
};

struct kv {
	UT_hash_handle hh;
	uint64_t id;
	char key[];
};

struct builder {
	struct strent *strs;
	char **table;
	size_t nstr, capstr;
	struct kv *maps, *funcs;
	int oom;
};

static int64_t str_idx(struct builder *b, const char *s)
{
	struct strent *e;
	if (!s)
		s = "";
	HASH_FIND_STR(b->strs, s, e);
	if (e)
		return e->idx;
	if (b->nstr == b->capstr) {
		size_t nc = b->capstr ? b->capstr * 2 : 256;
		char **nt = realloc(b->table, nc * sizeof(*nt));
		if (!nt) {
			b->oom = 1;
			return 0;
		}
		b->table = nt;
		b->capstr = nc;
	}
	e = malloc(sizeof(*e));
	if (!e) {
		b->oom = 1;
		return 0;
	}
	e->s = s;
	e->idx = (int64_t)b->nstr;
	b->table[b->nstr++] = (char *)s;
	HASH_ADD_KEYPTR(hh, b->strs, e->s, strlen(e->s), e);
	return e->idx;
}

/* Find-or-add an id for key in *tab; *isnew set when added. */
static uint64_t kv_id(struct builder *b, struct kv **tab, const char *key, uint64_t next, int *isnew)
{
	struct kv *e;
	*isnew = 0;
	HASH_FIND_STR(*tab, key, e);
	if (e)
		return e->id;
	size_t l = strlen(key);
	e = malloc(sizeof(*e) + l + 1);
	if (!e) {
		b->oom = 1;
		return 0;
	}
	memcpy(e->key, key, l + 1);
	e->id = next;
	HASH_ADD(hh, *tab, key[0], l, e);
	*isnew = 1;
	return next;
}

static void builder_free(struct builder *b)
{
	struct strent *e, *t;
	HASH_ITER(hh, b->strs, e, t) {
		HASH_DEL(b->strs, e);
		free(e);
	}
	struct kv *k, *kt;
	HASH_ITER(hh, b->maps, k, kt) {
		HASH_DEL(b->maps, k);
		free(k);
	}
	HASH_ITER(hh, b->funcs, k, kt) {
		HASH_DEL(b->funcs, k);
		free(k);
	}
	free(b->table);
}

static int gzip_write(const uint8_t *buf, size_t len, FILE *out)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	unsigned char ob[65536];
	z.next_in = (Bytef *)buf;
	int rc = 0, zr;
	size_t left = len;
	do {
		uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
		z.avail_in = chunk;
		left -= chunk;
		int flush = left ? Z_NO_FLUSH : Z_FINISH;
		do {
			z.next_out = ob;
			z.avail_out = sizeof(ob);
			zr = deflate(&z, flush);
			if (zr == Z_STREAM_ERROR) {
				rc = -EIO;
				break;
			}
			size_t have = sizeof(ob) - z.avail_out;
			if (have && fwrite(ob, 1, have, out) != have) {
				rc = -EIO;
				break;
			}
		} while (z.avail_out == 0);
	} while (!rc && left);
	deflateEnd(&z);
	return rc;
}

int sl_profile_write_pprof(const struct sl_profile *p, int kaddrs_visible, FILE *out)
{
	struct builder b = { 0 };
	PProfile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	/* sample types, units, labels: the kind's table entry (prof_kinds.c) */
	const struct sl_prof_kind_info *ki = sl_prof_kind_info(p->kind);
	const size_t nv = ki->ntypes;
	PValueType vt[SL_PROF_MAX_TYPES], *vtp[SL_PROF_MAX_TYPES];
	PValueType period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	int rc = -ENOMEM;

	size_t nf = p->nframes, ns = p->nsamples;
	PMapping *maps = calloc(nf + 1, sizeof(*maps));
	PMapping **mapp = calloc(nf + 1, sizeof(*mapp));
	PLocation *locs = calloc(nf + 1, sizeof(*locs));
	PLocation **locp = calloc(nf + 1, sizeof(*locp));
	PLine *lines = calloc(nf + 1, sizeof(*lines));
	PLine **linep = calloc(nf + 1, sizeof(*linep));
	PFunction *funcs = calloc(nf + 1, sizeof(*funcs));
	PFunction **funcp = calloc(nf + 1, sizeof(*funcp));
	uint64_t *loc_of_frame = calloc(nf + 1, sizeof(*loc_of_frame));
	PSample *smp = calloc(ns + 1, sizeof(*smp));
	PSample **smpp = calloc(ns + 1, sizeof(*smpp));
	PLabel *labels = calloc(5 * ns + 1, sizeof(*labels));
	PLabel **labelp = calloc(5 * ns + 1, sizeof(*labelp));
	int64_t *values = calloc(nv * ns + 1, sizeof(*values));
	size_t nlocids = 0;
	for (size_t i = 0; i < ns; i++)
		nlocids += p->samples[i].nframes;
	uint64_t *locids = calloc(nlocids + 1, sizeof(*locids));
	uint8_t *buf = NULL;
	if (!maps || !mapp || !locs || !locp || !lines || !linep || !funcs || !funcp || !loc_of_frame ||
	    !smp || !smpp || !labels || !labelp || !values || !locids)
		goto out;

	str_idx(&b, "");
	for (size_t i = 0; i < nv; i++) {
		perftools__profiles__value_type__init(&vt[i]);
		vt[i].type = str_idx(&b, ki->types[i].type);
		vt[i].unit = str_idx(&b, ki->types[i].unit);
		vtp[i] = &vt[i];
	}
	period.type = vt[ki->period_type].type;
	period.unit = vt[ki->period_type].unit;
	prof.n_sample_type = nv;
	prof.sample_type = vtp;
	prof.period_type = &period;
	prof.period = (int64_t)p->period_ns;
	prof.time_nanos = (int64_t)p->start_ns;
	prof.duration_nanos = (int64_t)p->duration_ns;
	prof.default_sample_type = vt[ki->default_type].type;

	/* Mappings, functions, locations: only frames samples use. */
	size_t nmap = 0, nfunc = 0, nloc = 0;
	char key[1200];
	for (size_t si = 0; si < ns; si++) {
		const struct sl_sample *s = &p->samples[si];
		for (uint32_t k = 0; k < s->nframes; k++) {
			uint32_t fi = s->frames[k];
			if (fi >= nf || loc_of_frame[fi])
				continue;
			const struct sl_frame *f = &p->frames[fi];
			int isnew;
			PLocation *L = &locs[nloc];
			perftools__profiles__location__init(L);
			L->id = nloc + 1;
			L->address = (f->flags & (SL_FRAME_UNKNOWN | SL_FRAME_JIT | SL_FRAME_PSEUDO)) &&
						     !(f->flags & SL_FRAME_KERNEL)
					     ? f->address
					     : f->module_offset;
			if ((f->flags & SL_FRAME_KERNEL) && !kaddrs_visible)
				L->address = 0; /* KASLR: sl_kaddrs_visible */
			if (f->module && !(f->flags & SL_FRAME_PSEUDO)) {
				snprintf(key, sizeof(key), "%s|%s", f->module, f->build_id ? f->build_id : "");
				uint64_t mid = kv_id(&b, &b.maps, key, nmap + 1, &isnew);
				if (isnew) {
					PMapping *M = &maps[nmap];
					perftools__profiles__mapping__init(M);
					M->id = mid;
					M->filename = str_idx(&b, f->module);
					M->build_id = str_idx(&b, f->build_id);
					M->has_functions = 1;
					M->memory_start = L->address;
					M->memory_limit = L->address + 1;
					mapp[nmap] = M;
					nmap++;
				}
				if (mid && mid <= nmap) {
					PMapping *M = &maps[mid - 1];
					if (L->address < M->memory_start)
						M->memory_start = L->address;
					if (L->address >= M->memory_limit)
						M->memory_limit = L->address + 1;
					L->mapping_id = mid;
				}
			}
			snprintf(key, sizeof(key), "%s|%s", f->name, f->module ? f->module : "");
			uint64_t fid = kv_id(&b, &b.funcs, key, nfunc + 1, &isnew);
			if (isnew) {
				PFunction *F = &funcs[nfunc];
				perftools__profiles__function__init(F);
				F->id = fid;
				F->name = str_idx(&b, f->name);
				F->system_name = F->name;
				funcp[nfunc] = F;
				nfunc++;
			}
			PLine *ln = &lines[nloc];
			perftools__profiles__line__init(ln);
			ln->function_id = fid;
			linep[nloc] = ln;
			L->n_line = 1;
			L->line = &linep[nloc];
			locp[nloc] = L;
			loc_of_frame[fi] = L->id;
			nloc++;
		}
	}
	/* User mappings are laid out by file offset from 0 (see top). */
	for (size_t i = 0; i < nmap; i++) {
		const char *fn = b.table[maps[i].filename];
		if (fn[0] != '[' || !strcmp(fn, "[vdso]"))
			maps[i].memory_start = 0;
	}
	prof.n_mapping = nmap;
	prof.mapping = mapp;
	prof.n_location = nloc;
	prof.location = locp;
	prof.n_function = nfunc;
	prof.function = funcp;

	int64_t k_pid = str_idx(&b, "pid"), k_tid = str_idx(&b, "tid"), k_comm = str_idx(&b, "comm");
	int64_t k_cid = str_idx(&b, "container_id"), k_st = str_idx(&b, ki->state_label);
	size_t nl = 0, li = 0;
	for (size_t si = 0; si < ns; si++) {
		const struct sl_sample *s = &p->samples[si];
		PSample *S = &smp[si];
		perftools__profiles__sample__init(S);
		S->n_location_id = s->nframes;
		S->location_id = &locids[li];
		for (uint32_t k = 0; k < s->nframes; k++) /* pprof: leaf first */
			locids[li + k] = s->frames[s->nframes - 1 - k] < nf ? loc_of_frame[s->frames[s->nframes - 1 - k]] : 0;
		li += s->nframes;
		S->n_value = nv;
		S->value = &values[nv * si];
		for (size_t i = 0; i < nv; i++)
			values[nv * si + i] = (int64_t)sl_prof_field_of(s, ki->types[i].field);
		size_t l0 = nl;
		perftools__profiles__label__init(&labels[nl]);
		labels[nl].key = k_pid;
		labels[nl].num = s->pid;
		labelp[nl] = &labels[nl];
		nl++;
		if (s->tid) {
			perftools__profiles__label__init(&labels[nl]);
			labels[nl].key = k_tid;
			labels[nl].num = s->tid;
			labelp[nl] = &labels[nl];
			nl++;
		}
		perftools__profiles__label__init(&labels[nl]);
		labels[nl].key = k_comm;
		labels[nl].str = str_idx(&b, s->comm);
		labelp[nl] = &labels[nl];
		nl++;
		if (s->container_id[0]) {
			perftools__profiles__label__init(&labels[nl]);
			labels[nl].key = k_cid;
			labels[nl].str = str_idx(&b, s->container_id);
			labelp[nl] = &labels[nl];
			nl++;
		}
		if (ki->state_label) {
			perftools__profiles__label__init(&labels[nl]);
			labels[nl].key = k_st;
			labels[nl].str = str_idx(&b, sl_prof_state_name(p->kind, (uint32_t)s->off_cpu_state));
			labelp[nl] = &labels[nl];
			nl++;
		}
		S->n_label = nl - l0;
		S->label = &labelp[l0];
		smpp[si] = S;
	}
	prof.n_sample = ns;
	prof.sample = smpp;
	if (b.oom)
		goto out;
	prof.n_string_table = b.nstr;
	prof.string_table = b.table;

	size_t len = perftools__profiles__profile__get_packed_size(&prof);
	buf = malloc(len ? len : 1);
	if (!buf)
		goto out;
	perftools__profiles__profile__pack(&prof, buf);
	rc = gzip_write(buf, len, out);
	if (!rc && ferror(out))
		rc = -EIO;
out:
	free(buf);
	free(maps);
	free(mapp);
	free(locs);
	free(locp);
	free(lines);
	free(linep);
	free(funcs);
	free(funcp);
	free(loc_of_frame);
	free(smp);
	free(smpp);
	free(labels);
	free(labelp);
	free(values);
	free(locids);
	builder_free(&b);
	return rc;
}
