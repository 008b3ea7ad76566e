/* ELF reading for the symbolizer through elfutils: libelf for sections,
 * program headers and symbols, libdw's dwelf helpers for the GNU build-id
 * note (NT_GNU_BUILD_ID) and the .gnu_debuglink section. Every size comes
 * from the file, so every one is checked; a corrupt or truncated file gives
 * -EINVAL, never a crash (tests/fuzz/fuzz_elf.c). Files are read with
 * ELF_C_READ (pread, not mmap): a file truncated under us cannot SIGBUS. */
#include "profile/profile_internal.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <elfutils/libdwelf.h>
#include <stdlib.h>
#include <string.h>

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif

static int elf_ready(void)
{
	static int ok = -1;
	if (ok < 0)
		ok = elf_version(EV_CURRENT) != EV_NONE;
	return ok;
}

struct names {
	char *buf;
	size_t len, cap;
};

static int64_t names_add(struct names *nm, const char *s)
{
	size_t l = strnlen(s, 4096);
	if (nm->len + l + 1 > nm->cap) {
		size_t nc = nm->cap ? nm->cap * 2 : 4096;
		while (nc < nm->len + l + 1)
			nc *= 2;
		char *nb = realloc(nm->buf, nc);
		if (!nb)
			return -1;
		nm->buf = nb;
		nm->cap = nc;
	}
	size_t off = nm->len;
	memcpy(nm->buf + off, s, l);
	nm->buf[off + l] = 0;
	nm->len += l + 1;
	if (off > UINT32_MAX)
		return -1;
	return (int64_t)off;
}

static int cmp_esym(const void *a, const void *b)
{
	const struct sl_esym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* preferred first: sized, then global, weak, local */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	int rx = x->bind == STB_GLOBAL ? 0 : x->bind == STB_WEAK ? 1 : 2;
	int ry = y->bind == STB_GLOBAL ? 0 : y->bind == STB_WEAK ? 1 : 2;
	if (rx != ry)
		return rx - ry;
	return x->name < y->name ? -1 : x->name > y->name;
}

static void sort_dedup(struct sl_elf_info *e)
{
	if (e->nsyms < 2)
		return;
	qsort(e->syms, e->nsyms, sizeof(*e->syms), cmp_esym);
	size_t k = 1;
	for (size_t i = 1; i < e->nsyms; i++)
		if (e->syms[i].addr != e->syms[k - 1].addr)
			e->syms[k++] = e->syms[i];
	e->nsyms = k;
}

static int add_sym(struct sl_elf_info *e, size_t *cap, struct names *nm, uint64_t addr,
		   uint64_t size, uint8_t bind, const char *name)
{
	if (e->nsyms == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct sl_esym *ns = realloc(e->syms, nc * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		e->syms = ns;
		*cap = nc;
	}
	int64_t off = names_add(nm, name);
	if (off < 0)
		return -ENOMEM;
	e->syms[e->nsyms++] = (struct sl_esym){ .addr = addr, .size = size, .name = (uint32_t)off, .bind = bind };
	return 0;
}

static int read_syms(Elf *elf, struct sl_elf_info *e, size_t *cap, struct names *nm)
{
	size_t shnum = 0;
	if (elf_getshdrnum(elf, &shnum))
		return 0;
	Elf_Scn *scn = NULL;
	size_t seen = 0;
	while ((scn = elf_nextscn(elf, scn)) && seen++ < shnum) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		if (sh.sh_link >= shnum || sh.sh_link == 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		size_t ent = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
		if (!ent)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			e->has_symtab = 1;
		size_t nsym = d->d_size / ent;
		for (size_t i = 1; i < nsym; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s))
				break;
			int t = GELF_ST_TYPE(s.st_info);
			if (t != STT_FUNC && t != STT_GNU_IFUNC)
				continue;
			if (s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			int rc = add_sym(e, cap, nm, s.st_value, s.st_size, (uint8_t)GELF_ST_BIND(s.st_info), name);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int read_elf(Elf *elf, struct sl_elf_info *e)
{
	memset(e, 0, sizeof(*e));
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -EINVAL;
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return -EINVAL;
	size_t phnum = 0;
	if (!elf_getphdrnum(elf, &phnum)) {
		for (size_t i = 0; i < phnum && i < 4096 && e->nload < 16; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph))
				break;
			if (ph.p_type != PT_LOAD)
				continue;
			e->load[e->nload++] = (struct sl_pt_load){ .offset = ph.p_offset, .vaddr = ph.p_vaddr,
								  .filesz = ph.p_filesz, .flags = ph.p_flags };
		}
	}
	const void *bid = NULL;
	ssize_t bl = dwelf_elf_gnu_build_id(elf, &bid);
	if (bl > 0 && bid) {
		static const char hx[] = "0123456789abcdef";
		size_t n = (size_t)bl > 40 ? 40 : (size_t)bl;
		for (size_t i = 0; i < n; i++) {
			e->build_id[2 * i] = hx[((const unsigned char *)bid)[i] >> 4];
			e->build_id[2 * i + 1] = hx[((const unsigned char *)bid)[i] & 15];
		}
		e->build_id[2 * n] = 0;
	}
	GElf_Word crc = 0;
	const char *dl = dwelf_elf_gnu_debuglink(elf, &crc);
	if (dl && *dl && !strchr(dl, '/')) {
		strncpy(e->debuglink, dl, sizeof(e->debuglink) - 1);
		e->debuglink_crc = crc;
	}
	size_t cap = 0;
	struct names nm = { 0 };
	int rc = read_syms(elf, e, &cap, &nm);
	e->names = nm.buf;
	e->names_len = nm.len;
	if (rc) {
		sl_elf_info_free(e);
		return rc;
	}
	sort_dedup(e);
	return 0;
}

int sl_elf_read_mem(const void *img, size_t len, struct sl_elf_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!elf_ready() || !img || !len)
		return -EINVAL;
	Elf *elf = elf_memory((char *)img, len);
	int rc = read_elf(elf, out);
	if (elf)
		elf_end(elf);
	return rc;
}

int sl_elf_read_fd(int fd, struct sl_elf_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!elf_ready() || fd < 0)
		return -EINVAL;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	int rc = read_elf(elf, out);
	if (elf)
		elf_end(elf);
	return rc;
}

void sl_elf_info_free(struct sl_elf_info *e)
{
	free(e->syms);
	free(e->names);
	e->syms = NULL;
	e->names = NULL;
	e->nsyms = e->names_len = 0;
}

int sl_elf_merge_syms(struct sl_elf_info *e, const struct sl_elf_info *dbg)
{
	if (!dbg->nsyms)
		return 0;
	size_t cap = e->nsyms;
	struct names nm = { .buf = e->names, .len = e->names_len, .cap = e->names_len };
	int rc = 0;
	for (size_t i = 0; i < dbg->nsyms && !rc; i++) {
		const struct sl_esym *s = &dbg->syms[i];
		if (s->name >= dbg->names_len)
			continue;
		rc = add_sym(e, &cap, &nm, s->addr, s->size, s->bind, dbg->names + s->name);
	}
	e->names = nm.buf;
	e->names_len = nm.len;
	if (dbg->has_symtab)
		e->has_symtab = 1;
	sort_dedup(e);
	return rc;
}

uint64_t sl_elf_off_to_vaddr(const struct sl_elf_info *e, uint64_t off)
{
	for (size_t i = 0; i < e->nload; i++) {
		const struct sl_pt_load *l = &e->load[i];
		if (off >= l->offset && off - l->offset < l->filesz)
			return off - l->offset + l->vaddr;
	}
	return off;
}

int sl_elf_off_is_text(const struct sl_elf_info *e, uint64_t off)
{
	if (!e->nload)
		return -1;
	for (size_t i = 0; i < e->nload; i++) {
		const struct sl_pt_load *l = &e->load[i];
		if ((l->flags & PF_X) && off >= l->offset && off - l->offset < l->filesz)
			return 1;
	}
	return 0;
}

const struct sl_esym *sl_elf_lookup(const struct sl_elf_info *e, uint64_t vaddr)
{
	size_t lo = 0, hi = e->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct sl_esym *s = &e->syms[lo - 1];
	if (s->size && vaddr - s->addr >= s->size)
		return NULL;
	if (s->name >= e->names_len)
		return NULL;
	return s;
}
