/* hw module: sysfs readers (EDAC, PCIe AER, PCIe link, InfiniBand). See
 * hw_sysfs.h for the files and the rules on opening them. */
#include "modules/hw_sysfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const hw_aer_sev_names[HW_AER_NSEV] = {"correctable", "nonfatal", "fatal"};
const char *const hw_aer_sev_files[HW_AER_NSEV] = {"aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal"};

#define MAX_DIR_NAMES 4096 /* entries of one directory looked at */

int hw_read_attr(int dirfd, const char *rel, char *buf, size_t len)
{
	struct stat st;
	ssize_t n;
	int fd, e;

	if (!len)
		return -EINVAL;
	buf[0] = 0;
	fd = openat(dirfd, rel, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (len > HW_ATTR_MAX + 1)
		len = HW_ATTR_MAX + 1;
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return (int)n;
}

int hw_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	while (*s == ' ')
		s++;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	while (*end == ' ' || *end == '\n')
		end++;
	if (*end)
		return -EINVAL;
	*v = x;
	return 0;
}

int hw_parse_link_speed(const char *s, double *gts)
{
	char *end;
	double x;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	x = strtod(s, &end);
	if (end == s || x <= 0 || x > 1000)
		return -EINVAL;
	while (*end == ' ')
		end++;
	if (strncmp(end, "GT/s", 4))
		return -EINVAL;
	*gts = x;
	return 0;
}

int hw_parse_aer(const char *text, void (*cb)(const char *name, uint64_t v, void *arg), void *arg)
{
	const char *p = text;
	int n = 0;

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t ll = eol ? (size_t)(eol - p) : strlen(p);
		char line[128], name[32];
		uint64_t v;
		char *sp;

		if (ll == 0) {
			p += 1;
			continue;
		}
		if (ll >= sizeof(line))
			return -EINVAL;
		memcpy(line, p, ll);
		line[ll] = 0;
		sp = strchr(line, ' ');
		if (!sp || sp == line || (size_t)(sp - line) >= sizeof(name))
			return -EINVAL;
		memcpy(name, line, (size_t)(sp - line));
		name[sp - line] = 0;
		for (char *c = name; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '_')
				return -EINVAL;
		if (hw_parse_u64(sp + 1, &v))
			return -EINVAL;
		cb(name, v, arg);
		n++;
		p += ll + (eol ? 1 : 0);
	}
	return n;
}

int hw_is_bdf(const char *s)
{
	/* DDDD:BB:DD.F */
	static const char pat[] = "xxxx:xx:xx.x";
	if (strlen(s) != sizeof(pat) - 1)
		return 0;
	for (size_t i = 0; pat[i]; i++)
		if (pat[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != pat[i])
			return 0;
	return 1;
}

/* ---------- helpers ---------- */

static int name_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t lx = strlen(x), ly = strlen(y);
	/* shorter first so mc2 < mc10, then lexical */
	return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x, y);
}

/* Names in directory dirfd/rel (no . and ..), sorted; *fd_out the opened
 * directory (caller closes). NULL when it cannot be opened. */
static char **list_dir(int dirfd, const char *rel, int *fd_out, size_t *n_out)
{
	int fd = openat(dirfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0;

	*n_out = 0;
	*fd_out = -1;
	if (fd < 0)
		return NULL;
	int dfd = dup(fd);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		close(fd);
		return NULL;
	}
	while ((de = readdir(d)) && n < MAX_DIR_NAMES) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nv = realloc(v, nc * sizeof(*nv));
			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		if (!(v[n] = strdup(de->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (!v) { /* empty directory: a non-NULL empty list */
		v = calloc(1, sizeof(*v));
		if (!v) {
			close(fd);
			return NULL;
		}
	}
	qsort(v, n, sizeof(*v), name_cmp);
	*fd_out = fd;
	*n_out = n;
	return v;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* "<prefix><digits>" -> the digits, else NULL */
static const char *numbered(const char *name, const char *prefix)
{
	size_t l = strlen(prefix);
	if (strncmp(name, prefix, l) || !name[l])
		return NULL;
	for (const char *c = name + l; *c; c++)
		if (!isdigit((unsigned char)*c))
			return NULL;
	return name + l;
}

static size_t total(const struct hw_scan *s)
{
	return s->nmc + s->nrows + s->naer + s->nlinks + s->nib;
}

/* Grow-and-append: *arr of *n elements of size sz. NULL when the bound is
 * reached (counted in cut) or on ENOMEM (*oom set). */
static void *push(struct hw_scan *s, void **arr, size_t *n, size_t sz, int *oom)
{
	if (total(s) >= s->cap) {
		s->cut++;
		return NULL;
	}
	/* capacity 8, then doubling at each power of two */
	if (*n == 0 || (*n >= 8 && (*n & (*n - 1)) == 0)) {
		size_t nc = *n ? *n * 2 : 8;
		void *na = realloc(*arr, nc * sz);
		if (!na) {
			*oom = 1;
			return NULL;
		}
		*arr = na;
	}
	void *e = (char *)*arr + *n * sz;
	memset(e, 0, sz);
	(*n)++;
	return e;
}

#define PUSH(s, field, count, oom) push((s), (void **)&(s)->field, &(s)->count, sizeof(*(s)->field), (oom))

static int read_u64_at(struct hw_scan *s, int dirfd, const char *rel, uint64_t *v)
{
	char buf[64];
	int r = hw_read_attr(dirfd, rel, buf, sizeof(buf));

	if (r == -ENOENT)
		return -ENOENT;
	s->files++;
	if (r < 0 || hw_parse_u64(buf, v)) {
		s->errors++;
		return -EINVAL;
	}
	return 0;
}

static void read_label(struct hw_scan *s, int dirfd, const char *rel, char *out, size_t len)
{
	char buf[HW_NAME];
	int r = hw_read_attr(dirfd, rel, buf, sizeof(buf));

	out[0] = 0;
	if (r == -ENOENT)
		return;
	s->files++;
	if (r < 0) {
		s->errors++;
		return;
	}
	snprintf(out, len, "%s", buf);
}

/* ---------- EDAC ---------- */

static int scan_edac_rows(struct hw_scan *s, int mcfd, const char *ctl, int dimms, char **names, size_t nn)
{
	int oom = 0;

	for (size_t i = 0; i < nn && !oom; i++) {
		const char *k = numbered(names[i], dimms ? "dimm" : "csrow");
		int fd;
		if (!k || (fd = openat(mcfd, names[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;
		uint64_t ce = 0, ue = 0;
		int rc = read_u64_at(s, fd, dimms ? "dimm_ce_count" : "ce_count", &ce);
		int ru = read_u64_at(s, fd, dimms ? "dimm_ue_count" : "ue_count", &ue);
		if (rc && ru) {
			close(fd);
			continue;
		}
		struct hw_edac_row *r = PUSH(s, rows, nrows, &oom);
		if (r) {
			snprintf(r->controller, sizeof(r->controller), "%s", ctl);
			snprintf(r->row, sizeof(r->row), "%s", k);
			r->is_dimm = dimms;
			r->ce = ce;
			r->ue = ue;
			read_label(s, fd, dimms ? "dimm_label" : "ch0_dimm_label", r->label, sizeof(r->label));
		}
		close(fd);
	}
	return oom ? -ENOMEM : 0;
}

static int scan_edac(struct hw_scan *s, int rootfd)
{
	size_t n;
	int dfd, oom = 0;
	char **mcs = list_dir(rootfd, "devices/system/edac/mc", &dfd, &n);

	if (!mcs)
		return 0;
	for (size_t i = 0; i < n && !oom; i++) {
		const char *ctl = numbered(mcs[i], "mc");
		int fd;
		if (!ctl || (fd = openat(dfd, mcs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;
		s->edac_dirs++;
		struct hw_edac_mc *m = PUSH(s, mc, nmc, &oom);
		if (m) {
			snprintf(m->controller, sizeof(m->controller), "%s", ctl);
			read_u64_at(s, fd, "ce_count", &m->ce);
			read_u64_at(s, fd, "ue_count", &m->ue);
			read_u64_at(s, fd, "ce_noinfo_count", &m->ce_noinfo);
			read_u64_at(s, fd, "ue_noinfo_count", &m->ue_noinfo);
			read_label(s, fd, "mc_name", m->name, sizeof(m->name));
		}
		/* dimm<K> (the per-DIMM API since 4.x) when the controller has
		 * them, else the legacy csrow<K> */
		size_t nn;
		int sfd;
		char **sub = list_dir(fd, ".", &sfd, &nn);
		if (sub) {
			int dimms = 0;
			for (size_t j = 0; j < nn && !dimms; j++)
				dimms = numbered(sub[j], "dimm") != NULL;
			if (scan_edac_rows(s, fd, ctl, dimms, sub, nn))
				oom = 1;
			free_list(sub, nn);
			close(sfd);
		}
		close(fd);
	}
	free_list(mcs, n);
	close(dfd);
	return oom ? -ENOMEM : 0;
}

/* ---------- PCI: AER and link ---------- */

struct aer_arg {
	struct hw_scan *s;
	const char *bdf;
	int sev;
	int oom;
};

static void aer_line(const char *name, uint64_t v, void *arg)
{
	struct aer_arg *a = arg;
	struct hw_aer_ctr *c;

	if (a->oom || !(c = PUSH(a->s, aer, naer, &a->oom)))
		return;
	snprintf(c->bdf, sizeof(c->bdf), "%s", a->bdf);
	c->sev = a->sev;
	c->total = !strncmp(name, "TOTAL_ERR_", 10);
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->v = v;
}

static int scan_pci_dev(struct hw_scan *s, int fd, const char *bdf, int speed_counts)
{
	char buf[HW_ATTR_MAX + 1];
	struct aer_arg a = {.s = s, .bdf = bdf};
	int had_aer = 0;

	for (int sev = 0; sev < HW_AER_NSEV; sev++) {
		int r = hw_read_attr(fd, hw_aer_sev_files[sev], buf, sizeof(buf));
		if (r == -ENOENT)
			continue;
		s->files++;
		had_aer = 1;
		a.sev = sev;
		if (r < 0 || hw_parse_aer(buf, aer_line, &a) < 0)
			s->errors++;
		if (a.oom)
			return -ENOMEM;
	}
	s->aer_devs += had_aer;

	char cs[64], ms[64], cw[32], mw[32];
	int r1 = hw_read_attr(fd, "current_link_speed", cs, sizeof(cs));
	int r2 = hw_read_attr(fd, "max_link_speed", ms, sizeof(ms));
	int r3 = hw_read_attr(fd, "current_link_width", cw, sizeof(cw));
	int r4 = hw_read_attr(fd, "max_link_width", mw, sizeof(mw));
	if (r1 == -ENOENT || r2 == -ENOENT || r3 == -ENOENT || r4 == -ENOENT)
		return 0; /* not a PCIe device with a link (or a root complex part) */
	s->files += 4;
	double sp, msp;
	uint64_t w, mwv;
	if (r1 < 0 || r2 < 0 || r3 < 0 || r4 < 0 || hw_parse_u64(cw, &w) || hw_parse_u64(mw, &mwv)) {
		s->errors++;
		return 0;
	}
	/* "Unknown" speed (a link that is down, a virtual function): no figure */
	if (hw_parse_link_speed(cs, &sp) || hw_parse_link_speed(ms, &msp) || mwv == 0 || mwv > 32 || w > 32)
		return 0;
	s->link_devs++;
	int oom = 0;
	struct hw_link *l = PUSH(s, links, nlinks, &oom);
	if (!l)
		return oom ? -ENOMEM : 0;
	snprintf(l->bdf, sizeof(l->bdf), "%s", bdf);
	l->speed = sp;
	l->max_speed = msp;
	l->width = (unsigned)w;
	l->max_width = (unsigned)mwv;
	l->degraded = l->width < l->max_width || (speed_counts && sp + 1e-9 < msp);
	return 0;
}

static int scan_pci(struct hw_scan *s, int rootfd, int speed_counts)
{
	size_t n;
	int dfd, err = 0;
	char **devs = list_dir(rootfd, "bus/pci/devices", &dfd, &n);

	if (!devs)
		return 0;
	for (size_t i = 0; i < n && !err; i++) {
		int fd;
		if (!hw_is_bdf(devs[i]) || (fd = openat(dfd, devs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;
		s->pci_dirs++;
		err = scan_pci_dev(s, fd, devs[i], speed_counts);
		close(fd);
	}
	free_list(devs, n);
	close(dfd);
	return err;
}

/* ---------- InfiniBand ---------- */

static int scan_ib_dir(struct hw_scan *s, int portfd, const char *dev, unsigned port, int hw)
{
	size_t n;
	int dfd, oom = 0;
	char **names = list_dir(portfd, hw ? "hw_counters" : "counters", &dfd, &n);

	if (!names)
		return 0;
	for (size_t i = 0; i < n && !oom; i++) {
		uint64_t v;
		/* hw_counters/lifespan is a setting (ms), not a counter */
		if (hw && !strcmp(names[i], "lifespan"))
			continue;
		if (read_u64_at(s, dfd, names[i], &v))
			continue;
		struct hw_ib_ctr *c = PUSH(s, ib, nib, &oom);
		if (!c)
			break;
		snprintf(c->dev, sizeof(c->dev), "%s", dev);
		c->port = port;
		c->hw = hw;
		snprintf(c->name, sizeof(c->name), "%s", names[i]);
		c->v = v;
	}
	free_list(names, n);
	close(dfd);
	return oom ? -ENOMEM : 0;
}

static int scan_ib(struct hw_scan *s, int rootfd)
{
	size_t n;
	int dfd, err = 0;
	char **devs = list_dir(rootfd, "class/infiniband", &dfd, &n);

	if (!devs)
		return 0;
	for (size_t i = 0; i < n && !err; i++) {
		size_t np;
		int pfd;
		char rel[HW_NAME + 16];
		if (strlen(devs[i]) >= HW_NAME)
			continue;
		snprintf(rel, sizeof(rel), "%s/ports", devs[i]);
		char **ports = list_dir(dfd, rel, &pfd, &np);
		if (!ports)
			continue;
		for (size_t j = 0; j < np && !err; j++) {
			const char *num = numbered(ports[j], "");
			int fd;
			if (!num || strlen(num) > 3 || (fd = openat(pfd, ports[j], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
				continue;
			s->ib_ports++;
			unsigned port = (unsigned)atoi(num);
			err = scan_ib_dir(s, fd, devs[i], port, 0);
			if (!err)
				err = scan_ib_dir(s, fd, devs[i], port, 1);
			close(fd);
		}
		free_list(ports, np);
		close(pfd);
	}
	free_list(devs, n);
	close(dfd);
	return err;
}

int hw_scan_run(const char *root, size_t max_entries, int speed_counts, struct hw_scan *s)
{
	int rootfd, err;

	memset(s, 0, sizeof(*s));
	s->cap = max_entries;
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return 0;
	err = scan_edac(s, rootfd);
	if (!err)
		err = scan_pci(s, rootfd, speed_counts);
	if (!err)
		err = scan_ib(s, rootfd);
	close(rootfd);
	return err;
}

void hw_scan_free(struct hw_scan *s)
{
	free(s->mc);
	free(s->rows);
	free(s->aer);
	free(s->links);
	free(s->ib);
	memset(s, 0, sizeof(*s));
}
