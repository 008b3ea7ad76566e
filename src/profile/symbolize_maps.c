/* /proc/<pid>/maps parsing and mapping classification.
 * Line format: fs/proc/task_mmu.c show_map_vma() / show_vma_header_prefix():
 *   "%08lx-%08lx %c%c%c%c %08llx %02x:%02x %lu " then padding and the path
 * (anonymous mappings: nothing after the inode, sometimes a trailing space).
 * Names in brackets come from vma->vm_ops->name / arch_vma_name() (e.g.
 * [vdso], [vvar], [vvar_vclock] since v6.13, [vsyscall], [heap], [stack]). */
#include "profile/profile_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int hexnum(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;
	while (s < end) {
		int c = (unsigned char)*s, d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (n >= 16)
			return -1;
		x = (x << 4) | (uint64_t)d;
		s++;
		n++;
	}
	if (!n)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

static int decnum(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;
	while (s < end && *s >= '0' && *s <= '9') {
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
		s++;
		n++;
	}
	if (!n)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

static int skip_spaces(const char **p, const char *end)
{
	const char *s = *p;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	int moved = s != *p;
	*p = s;
	return moved;
}

int sl_maps_classify(const char *path)
{
	size_t n = strlen(path);
	if (!n)
		return SL_MAP_ANON;
	if (path[0] == '[') {
		if (!strcmp(path, "[heap]"))
			return SL_MAP_HEAP;
		if (!strncmp(path, "[stack", 6))
			return SL_MAP_STACK;
		if (!strcmp(path, "[vdso]"))
			return SL_MAP_VDSO;
		if (!strncmp(path, "[vvar", 5))
			return SL_MAP_VVAR;
		if (!strcmp(path, "[vsyscall]"))
			return SL_MAP_VSYSCALL;
		return SL_MAP_SPECIAL;
	}
	if (!strncmp(path, "/memfd:", 7))
		return SL_MAP_MEMFD;
	if (path[0] != '/')
		return SL_MAP_OTHER_PSEUDO;
	if (!strncmp(path, "/SYSV", 5) || !strncmp(path, "/dev/zero", 9))
		return SL_MAP_OTHER_PSEUDO;
	if (n > 10 && !strcmp(path + n - 10, " (deleted)"))
		return SL_MAP_DELETED;
	return SL_MAP_FILE;
}

const char *sl_map_class_word(int cls)
{
	switch (cls) {
	case SL_MAP_FILE: return "file";
	case SL_MAP_DELETED: return "deleted";
	case SL_MAP_MEMFD: return "memfd";
	case SL_MAP_ANON: return "anonymous";
	case SL_MAP_OTHER_PSEUDO: return "pseudo";
	default: return "special";
	}
}

int sl_maps_parse_line(const char *line, size_t len, struct sl_map_entry *e)
{
	const char *p = line, *end = line + len;
	uint64_t maj, min;
	memset(e, 0, sizeof(*e));
	while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	if (hexnum(&p, end, &e->start) || p >= end || *p++ != '-' || hexnum(&p, end, &e->end))
		return -EINVAL;
	if (!skip_spaces(&p, end) || end - p < 4)
		return -EINVAL;
	memcpy(e->perms, p, 4);
	e->perms[4] = 0;
	p += 4;
	if (!skip_spaces(&p, end) || hexnum(&p, end, &e->offset))
		return -EINVAL;
	if (!skip_spaces(&p, end) || hexnum(&p, end, &maj) || p >= end || *p++ != ':' ||
	    hexnum(&p, end, &min))
		return -EINVAL;
	if (!skip_spaces(&p, end) || decnum(&p, end, &e->inode))
		return -EINVAL;
	if (p < end && *p != ' ' && *p != '\t')
		return -EINVAL;
	e->dev_major = (uint32_t)maj;
	e->dev_minor = (uint32_t)min;
	skip_spaces(&p, end);
	/* The path runs to the end of the line; it may itself contain spaces. */
	size_t plen = (size_t)(end - p);
	e->path = malloc(plen + 1);
	if (!e->path)
		return -ENOMEM;
	memcpy(e->path, p, plen);
	e->path[plen] = 0;
	if (e->end < e->start) {
		free(e->path);
		e->path = NULL;
		return -EINVAL;
	}
	e->cls = sl_maps_classify(e->path);
	return 0;
}

int sl_maps_parse(const char *buf, size_t len, struct sl_map_entry **out, size_t *n)
{
	size_t cap = 0, cnt = 0;
	struct sl_map_entry *v = NULL;
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		struct sl_map_entry e;
		int rc = sl_maps_parse_line(p, (size_t)(le - p), &e);
		if (rc == -ENOMEM) {
			sl_maps_free(v, cnt);
			return rc;
		}
		if (!rc) {
			if (cnt == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct sl_map_entry *nv = realloc(v, nc * sizeof(*nv));
				if (!nv) {
					free(e.path);
					sl_maps_free(v, cnt);
					return -ENOMEM;
				}
				v = nv;
				cap = nc;
			}
			v[cnt++] = e;
		}
		p = nl ? nl + 1 : end;
	}
	*out = v;
	*n = cnt;
	return 0;
}

void sl_maps_free(struct sl_map_entry *v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

const struct sl_map_entry *sl_maps_find(const struct sl_map_entry *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct sl_map_entry *e = &v[lo - 1];
	return addr < e->end ? e : NULL;
}
