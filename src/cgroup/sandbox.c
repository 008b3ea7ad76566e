/* Sandbox identity: the pure rules (sandbox.h). The live reader is
 * sandbox_scan.c. */
#include "cgroup/sandbox.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sl_sbx_runtime_name(int rt)
{
	switch (rt) {
	case SL_SBX_KATA: return "kata";
	case SL_SBX_GVISOR: return "gvisor";
	case SL_SBX_FIRECRACKER: return "firecracker";
	default: return "";
	}
}

const char *sl_sbx_vmm_name(int vmm)
{
	switch (vmm) {
	case SL_SBX_QEMU: return "qemu";
	case SL_SBX_CLH: return "cloud-hypervisor";
	case SL_SBX_FC: return "firecracker";
	default: return "";
	}
}

void sl_sbx_list_free(struct sl_sbx_list *l)
{
	if (!l)
		return;
	free(l->sbx);
	l->sbx = NULL;
	l->n = 0;
}

const struct sl_sbx *sl_sbx_find(const struct sl_sbx_list *l, const char *id)
{
	for (size_t i = 0; l && id && i < l->n; i++)
		if (!strcmp(l->sbx[i].id, id))
			return &l->sbx[i];
	return NULL;
}

/* ------------------------------------------------------------ names */

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

int sl_sbx_vmm_of(const char *comm, const char *argv0)
{
	const char *names[2] = {argv0 && argv0[0] ? base(argv0) : NULL, comm};
	for (int i = 0; i < 2; i++) {
		const char *n = names[i];
		if (!n || !n[0])
			continue;
		if (!strncmp(n, "qemu-system-", 12) || !strcmp(n, "qemu-kvm"))
			return SL_SBX_QEMU;
		/* comm is cut to 15 bytes: "cloud-hyperviso" */
		if (!strncmp(n, "cloud-hyperviso", 15))
			return SL_SBX_CLH;
		if (!strcmp(n, "firecracker"))
			return SL_SBX_FC;
		if (i == 0)
			return SL_SBX_VMM_NONE; /* argv[0] known and not a VMM: comm does not overrule it */
	}
	return SL_SBX_VMM_NONE;
}

/* Decimal 0..65535 spanning [p, end) exactly; -1 otherwise. */
static int dec(const char *p, const char *end)
{
	if (p >= end || end - p > 5)
		return -1;
	int v = 0;
	for (; p < end; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v <= 65535 ? v : -1;
}

int sl_sbx_vcpu_index(int vmm, const char *comm)
{
	if (!comm)
		return -1;
	size_t n = strnlen(comm, SL_SBX_COMM_LEN);
	switch (vmm) {
	case SL_SBX_QEMU: /* "CPU %d/KVM" */
		if (n > 8 && !strncmp(comm, "CPU ", 4) && !strcmp(comm + n - 4, "/KVM"))
			return dec(comm + 4, comm + n - 4);
		return -1;
	case SL_SBX_CLH: /* "vcpu%d" */
		return n > 4 && !strncmp(comm, "vcpu", 4) ? dec(comm + 4, comm + n) : -1;
	case SL_SBX_FC: /* "fc_vcpu %d" */
		return n > 8 && !strncmp(comm, "fc_vcpu ", 8) ? dec(comm + 8, comm + n) : -1;
	default:
		return -1;
	}
}

int sl_sbx_proc_candidate(const char *comm)
{
	static const char *const pre[] = {"qemu-", "cloud-hyperviso", "firecracker", "containerd-shim",
					  "runsc", "exe", "jailer"};
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (!strncmp(comm, pre[i], strlen(pre[i])))
			return 1;
	return 0;
}

/* ---------------------------------------------------------- cmdline */

struct argv_it {
	const char *p, *end;
};

static const char *arg_next(struct argv_it *it)
{
	if (it->p >= it->end)
		return NULL;
	const char *a = it->p;
	const char *z = memchr(a, 0, (size_t)(it->end - a));
	it->p = z ? z + 1 : it->end;
	return a;
}

/* argv[0] into out ("" when none). */
static void argv0(const struct sl_sbx_proc *p, char *out, size_t len)
{
	size_t n = strnlen(p->cmdline, p->cmdline_len < sizeof(p->cmdline) ? p->cmdline_len : sizeof(p->cmdline));
	if (n >= len)
		n = len - 1;
	memcpy(out, p->cmdline, n);
	out[n] = 0;
}

/* The value of flag (exact "-id", "--id", with " " or "=" separator). */
static int arg_value(const struct sl_sbx_proc *p, const char *flag, char *out, size_t len)
{
	size_t cl = p->cmdline_len < sizeof(p->cmdline) ? p->cmdline_len : sizeof(p->cmdline);
	struct argv_it it = {p->cmdline, p->cmdline + cl};
	size_t fl = strlen(flag);
	const char *a;
	arg_next(&it); /* argv[0] */
	while ((a = arg_next(&it))) {
		const char *v = NULL;
		size_t al = strnlen(a, (size_t)(it.end - a));
		if (al == fl && !memcmp(a, flag, fl))
			v = arg_next(&it);
		else if (al > fl && !memcmp(a, flag, fl) && a[fl] == '=')
			v = a + fl + 1;
		if (v) {
			size_t vl = strnlen(v, (size_t)(it.end - v));
			if (vl == 0 || vl >= len)
				return 0;
			memcpy(out, v, vl);
			out[vl] = 0;
			return 1;
		}
	}
	return 0;
}

/* The last argument (runsc-sandbox boot ... <id>). */
static int arg_last(const struct sl_sbx_proc *p, char *out, size_t len)
{
	size_t cl = p->cmdline_len < sizeof(p->cmdline) ? p->cmdline_len : sizeof(p->cmdline);
	struct argv_it it = {p->cmdline, p->cmdline + cl};
	const char *a, *last = NULL;
	int n = 0;
	while ((a = arg_next(&it)))
		if (*a) {
			last = a;
			n++;
		}
	if (n < 2 || !last)
		return 0;
	size_t vl = strnlen(last, (size_t)(it.end - last));
	if (vl >= len)
		return 0;
	memcpy(out, last, vl);
	out[vl] = 0;
	return 1;
}

/* A sandbox id as the runtimes make them: 1..79 of [A-Za-z0-9_.-], first
 * alphanumeric (containerd ids, Firecracker jailer ids). */
static int id_ok(const char *s, size_t n)
{
	if (n == 0 || n >= SL_CONTAINER_ID_LEN || !isalnum((unsigned char)s[0]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
			return 0;
	return 1;
}

static int hex_ok(const char *s, size_t n)
{
	if (n < 12 || n >= SL_CONTAINER_ID_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* Ids named in a VMM's command line: qemu `-name sandbox-<id>`,
 * cloud-hypervisor `--api-socket <dir>/vm/<id>/clh-api.sock`, firecracker
 * `--id <id>`. */
static int vmm_cmd_id(const struct sl_sbx_proc *p, int vmm, char *out, size_t len)
{
	char v[SL_SBX_PATH_LEN];
	if (vmm == SL_SBX_QEMU && arg_value(p, "-name", v, sizeof(v))) {
		const char *s = v;
		if (!strncmp(s, "guest=", 6)) /* -name guest=<name>,debug-threads=on */
			s += 6;
		size_t n = strcspn(s, ",");
		if (n > 8 && !strncmp(s, "sandbox-", 8) && id_ok(s + 8, n - 8) && n - 8 < len) {
			memcpy(out, s + 8, n - 8);
			out[n - 8] = 0;
			return 1;
		}
	}
	if (vmm == SL_SBX_CLH && arg_value(p, "--api-socket", v, sizeof(v))) {
		const char *s = strstr(v, "/vm/");
		if (s) {
			s += 4;
			size_t n = strcspn(s, "/");
			if (s[n] == '/' && id_ok(s, n) && n < len) {
				memcpy(out, s, n);
				out[n] = 0;
				return 1;
			}
		}
	}
	if (vmm == SL_SBX_FC && arg_value(p, "--id", v, sizeof(v)) && id_ok(v, strlen(v)) &&
	    strlen(v) < len) {
		memcpy(out, v, strlen(v) + 1);
		return 1;
	}
	return 0;
}

/* ---------------------------------------------------------- cgroups */

enum cg_kind { CG_NONE, CG_KATA, CG_KATA_OVERHEAD, CG_FC };

/* What sandbox cgroup the path is or lies in: the innermost kata_<id> /
 * kata-<id>[.scope], kata_overhead/<id>, or a trailing firecracker/<id>
 * (jailer). id and the path up to that segment (prefix) are written. */
static int cg_classify(const char *path, char *id, size_t idlen, char *prefix, size_t plen)
{
	int kind = CG_NONE;
	const char *p = path, *prev = NULL;
	size_t prevn = 0;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *s = p;
		size_t n = strcspn(s, "/");
		p = s + n;
		size_t core = n;
		if (core > 6 && !strncmp(s + core - 6, ".scope", 6))
			core -= 6;
		int k = CG_NONE;
		const char *ids = NULL;
		size_t idn = 0;
		if (prev && prevn == 13 && !strncmp(prev, "kata_overhead", 13) && id_ok(s, n)) {
			k = CG_KATA_OVERHEAD;
			ids = s, idn = n;
		} else if (core > 5 && (!strncmp(s, "kata_", 5) || !strncmp(s, "kata-", 5)) &&
			   hex_ok(s + 5, core - 5)) {
			k = CG_KATA;
			ids = s + 5, idn = core - 5;
		} else if (prev && prevn == 11 && !strncmp(prev, "firecracker", 11) && id_ok(s, n) &&
			   !*p) {
			k = CG_FC;
			ids = s, idn = n;
		}
		if (k != CG_NONE && idn < idlen && (size_t)(p - path) < plen) {
			kind = k;
			memcpy(id, ids, idn);
			id[idn] = 0;
			memcpy(prefix, path, (size_t)(p - path));
			prefix[p - path] = 0;
		}
		prev = s;
		prevn = n;
	}
	return kind;
}

int sl_sbx_cgroup_pick(const char *text, char *out, size_t len)
{
	if (!text || !out || len == 0)
		return -EINVAL;
	char v2[SL_SBX_PATH_LEN] = "", v1sbx[SL_SBX_PATH_LEN] = "", v1any[SL_SBX_PATH_LEN] = "";
	const char *l = text;
	while (*l) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		const char *c1 = memchr(l, ':', n);
		const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - l)) : NULL;
		if (c2) {
			const char *path = c2 + 1;
			size_t pn = n - (size_t)(path - l);
			if (pn > 10 && !memcmp(path + pn - 10, " (deleted)", 10))
				pn -= 10;
			if (pn > 0 && pn < SL_SBX_PATH_LEN) {
				char tmp[SL_SBX_PATH_LEN], id[SL_CONTAINER_ID_LEN], pre[SL_SBX_PATH_LEN];
				memcpy(tmp, path, pn);
				tmp[pn] = 0;
				int is_v2 = c1 == l + 1 && l[0] == '0' && c2 == c1 + 1;
				if (is_v2)
					memcpy(v2, tmp, pn + 1);
				else if (strcmp(tmp, "/")) {
					if (!v1sbx[0] && cg_classify(tmp, id, sizeof(id), pre, sizeof(pre)) != CG_NONE)
						memcpy(v1sbx, tmp, pn + 1);
					if (!v1any[0])
						memcpy(v1any, tmp, pn + 1);
				}
			}
		}
		if (!e)
			break;
		l = e + 1;
	}
	char id[SL_CONTAINER_ID_LEN], pre[SL_SBX_PATH_LEN];
	const char *pick;
	if (v2[0] && strcmp(v2, "/") && (cg_classify(v2, id, sizeof(id), pre, sizeof(pre)) != CG_NONE || !v1sbx[0]))
		pick = v2;
	else if (v1sbx[0])
		pick = v1sbx;
	else if (v2[0] && strcmp(v2, "/"))
		pick = v2;
	else if (v1any[0])
		pick = v1any;
	else
		pick = "/";
	snprintf(out, len, "%s", pick);
	return 0;
}

/* ---------------------------------------------------------- building */

struct bld {
	struct sl_sbx *v;
	size_t n, cap;
	int oom;
};

static struct sl_sbx *get(struct bld *b, const char *id, int create)
{
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->v[i].id, id))
			return &b->v[i];
	if (!create)
		return NULL;
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 8;
		struct sl_sbx *nv = realloc(b->v, nc * sizeof(*nv));
		if (!nv) {
			b->oom = 1;
			return NULL;
		}
		b->v = nv;
		b->cap = nc;
	}
	struct sl_sbx *s = &b->v[b->n++];
	memset(s, 0, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "%s", id);
	return s;
}

static void set_pod(struct sl_sbx *s, const char *cg)
{
	if (s->pod_uid[0])
		return;
	struct sl_attr at;
	if (sl_cgpath_parse(cg, &at) == 0 && at.pod_uid[0])
		snprintf(s->pod_uid, sizeof(s->pod_uid), "%s", at.pod_uid);
}

static void add_cgroup(struct bld *b, const char *path)
{
	char id[SL_CONTAINER_ID_LEN], pre[SL_SBX_PATH_LEN];
	int k = cg_classify(path, id, sizeof(id), pre, sizeof(pre));
	if (k == CG_NONE || strcmp(pre, path)) /* only the sandbox directory itself */
		return;
	struct sl_sbx *s = get(b, id, 1);
	if (!s)
		return;
	if (k == CG_KATA_OVERHEAD) {
		snprintf(s->overhead_cgroup, sizeof(s->overhead_cgroup), "%s", path);
		s->runtime = SL_SBX_KATA;
	} else {
		if (!s->cgroup[0])
			snprintf(s->cgroup, sizeof(s->cgroup), "%s", path);
		if (k == CG_KATA)
			s->runtime = SL_SBX_KATA;
		else if (!s->runtime)
			s->runtime = SL_SBX_FIRECRACKER;
	}
	set_pod(s, path);
}

static int cmp_vcpu(const void *a, const void *b)
{
	const struct sl_sbx_vcpu *x = a, *y = b;
	return x->index != y->index ? x->index - y->index : x->tid - y->tid;
}

static void add_aux(int32_t *arr, size_t *n, int32_t pid)
{
	for (size_t i = 0; i < *n; i++)
		if (arr[i] == pid)
			return;
	if (*n < SL_SBX_MAX_AUX)
		arr[(*n)++] = pid;
}

static void set_vmm(struct sl_sbx *s, const struct sl_sbx_proc *p, int vmm)
{
	/* two VMM processes for one id: keep the one with vCPU threads, then the older */
	if (s->vmm_pid && s->nvcpus && (s->vmm_start_time <= p->start_time))
		return;
	size_t nv = 0;
	struct sl_sbx_vcpu tmp[SL_SBX_MAX_VCPUS];
	for (size_t t = 0; t < p->nthreads && nv < SL_SBX_MAX_VCPUS; t++) {
		int ix = sl_sbx_vcpu_index(vmm, p->threads[t].comm);
		if (ix < 0)
			continue;
		tmp[nv].tid = p->threads[t].tid;
		tmp[nv].index = ix;
		snprintf(tmp[nv].comm, sizeof(tmp[nv].comm), "%s", p->threads[t].comm);
		nv++;
	}
	if (s->vmm_pid && s->nvcpus && nv == 0)
		return;
	s->vmm_pid = p->pid;
	s->vmm_start_time = p->start_time;
	s->vmm_kind = vmm;
	snprintf(s->vmm_comm, sizeof(s->vmm_comm), "%s", p->comm);
	memcpy(s->vcpu, tmp, nv * sizeof(tmp[0]));
	s->nvcpus = nv;
	qsort(s->vcpu, s->nvcpus, sizeof(s->vcpu[0]), cmp_vcpu);
}

static int cmp_sbx(const void *a, const void *b)
{
	return strcmp(((const struct sl_sbx *)a)->id, ((const struct sl_sbx *)b)->id);
}

enum role { R_NONE, R_VMM, R_KATA_SHIM, R_RUNSC_SHIM, R_SENTRY, R_GOFER };

static int role_of(const struct sl_sbx_proc *p, int *vmm)
{
	char a0[SL_SBX_PATH_LEN];
	argv0(p, a0, sizeof(a0));
	const char *b = base(a0);
	*vmm = sl_sbx_vmm_of(p->comm, a0);
	if (*vmm)
		return R_VMM;
	if (!strcmp(b, "containerd-shim-kata-v2"))
		return R_KATA_SHIM;
	if (!strcmp(b, "containerd-shim-runsc-v1"))
		return R_RUNSC_SHIM;
	if (!strcmp(b, "runsc-sandbox"))
		return R_SENTRY;
	if (!strcmp(b, "runsc-gofer"))
		return R_GOFER;
	return R_NONE;
}

/* The host's root: real uid 0 in the host's PID namespace and the initial
 * user namespace (host_ns). uid 0 in a runc container (its own PID
 * namespace) or in a user namespace is a tenant's root, not the host's. */
static int host_root(const struct sl_sbx_proc *p)
{
	return p->uid == 0 && p->host_ns == 1;
}

/* A process may take a sandbox role (its argv and thread names are its
 * own to choose) when it runs as the host's root (host_root: a tenant is
 * uid 0 inside its container), or in a sandbox cgroup (kind k:
 * kata_<id>, kata_overhead/<id>, firecracker/<id>; only the runtime makes
 * those), not under a systemd user manager (user@<uid>.service is
 * delegated to that user, who may name cgroups at will). A non-root
 * process in an ordinary container cgroup is a tenant's: it takes a role
 * only as gVisor's sentry or gofer (they run as nobody in the pod sandbox
 * container's cgroup), and only when its parent is a root runsc process
 * (the shim containerd-shim-runsc-v1, or runsc itself), which a tenant's
 * process never has: the parent of a container's first process is runc's
 * shim, of the others a process of the container. */
static int trusted(const struct sl_sbx_proc *p, int k, int role, const struct sl_sbx_proc *procs, size_t nprocs)
{
	if (host_root(p))
		return 1;
	if (strstr(p->cgroup, "/user@"))
		return 0;
	if (k != CG_NONE)
		return 1;
	if (role != R_SENTRY && role != R_GOFER)
		return 0;
	struct sl_attr at;
	if (sl_cgpath_parse(p->cgroup, &at) != 0 || !at.container_id[0])
		return 0;
	for (size_t j = 0; j < nprocs; j++) {
		if (procs[j].pid != p->ppid || !host_root(&procs[j]))
			continue;
		char a0[SL_SBX_PATH_LEN];
		argv0(&procs[j], a0, sizeof(a0));
		const char *b = base(a0);
		return !strcmp(b, "containerd-shim-runsc-v1") || !strcmp(b, "runsc");
	}
	return 0;
}

int sl_sbx_identify(const char *const *cgroups, size_t ncgroups, const struct sl_sbx_proc *procs,
		    size_t nprocs, struct sl_sbx_list *out)
{
	if (!out || (ncgroups && !cgroups) || (nprocs && !procs))
		return -EINVAL;
	out->n = 0;
	out->sbx = NULL;
	struct bld b = {0};
	int *roles = calloc(nprocs + 1, sizeof(int));
	int *vmms = calloc(nprocs + 1, sizeof(int));
	if (!roles || !vmms) {
		free(roles);
		free(vmms);
		return -ENOMEM;
	}

	/* 1. sandbox and overhead cgroups */
	for (size_t i = 0; i < ncgroups; i++)
		if (cgroups[i])
			add_cgroup(&b, cgroups[i]);

	/* 2. VMMs and sentries: they make a sandbox */
	for (size_t i = 0; i < nprocs && !b.oom; i++) {
		const struct sl_sbx_proc *p = &procs[i];
		roles[i] = role_of(p, &vmms[i]);
		char id[SL_CONTAINER_ID_LEN] = "", pre[SL_SBX_PATH_LEN];
		int k = cg_classify(p->cgroup, id, sizeof(id), pre, sizeof(pre));
		if (roles[i] != R_NONE && !trusted(p, k, roles[i], procs, nprocs)) {
			roles[i] = R_NONE;
			continue;
		}
		if (roles[i] == R_VMM) {
			int kata_by_cmd = 0;
			if (k == CG_NONE) {
				if (!vmm_cmd_id(p, vmms[i], id, sizeof(id))) {
					/* the parent is a Kata shim naming its sandbox */
					for (size_t j = 0; j < nprocs && !id[0]; j++) {
						int v;
						if (procs[j].pid == p->ppid && role_of(&procs[j], &v) == R_KATA_SHIM)
							arg_value(&procs[j], "-id", id, sizeof(id));
					}
					kata_by_cmd = id[0] != 0;
				} else {
					kata_by_cmd = vmms[i] != SL_SBX_FC;
				}
			}
			if (!id[0])
				continue; /* a VMM that names no sandbox: not ours to claim */
			struct sl_sbx *s = get(&b, id, 1);
			if (!s)
				break;
			if (k == CG_KATA || k == CG_KATA_OVERHEAD || kata_by_cmd)
				s->runtime = SL_SBX_KATA;
			else if (!s->runtime)
				s->runtime = vmms[i] == SL_SBX_FC ? SL_SBX_FIRECRACKER : SL_SBX_KATA;
			if (k == CG_KATA_OVERHEAD && !s->overhead_cgroup[0])
				snprintf(s->overhead_cgroup, sizeof(s->overhead_cgroup), "%s", pre);
			else if ((k == CG_KATA || k == CG_FC) && !s->cgroup[0])
				snprintf(s->cgroup, sizeof(s->cgroup), "%s", pre);
			set_vmm(s, p, vmms[i]);
		} else if (roles[i] == R_SENTRY) {
			struct sl_attr at;
			sl_cgpath_parse(p->cgroup, &at);
			if (!arg_last(p, id, sizeof(id)) || !id_ok(id, strlen(id))) {
				if (!at.container_id[0])
					continue;
				snprintf(id, sizeof(id), "%s", at.container_id);
			}
			struct sl_sbx *s = get(&b, id, 1);
			if (!s)
				break;
			s->runtime = SL_SBX_GVISOR;
			if (!s->cgroup[0] && strcmp(p->cgroup, "/"))
				snprintf(s->cgroup, sizeof(s->cgroup), "%s", p->cgroup);
			if (!s->vmm_pid || p->start_time < s->vmm_start_time) {
				s->vmm_pid = p->pid;
				s->vmm_start_time = p->start_time;
				snprintf(s->vmm_comm, sizeof(s->vmm_comm), "%s", p->comm);
			}
		}
	}

	/* 2b. a sandbox with no pod from its cgroups takes the pod of the VMM /
	 * sentry kept, once all are seen: never that of another process
	 * claiming the same id (set_vmm passed over it) */
	for (size_t i = 0; i < nprocs && !b.oom; i++) {
		if (roles[i] != R_VMM && roles[i] != R_SENTRY)
			continue;
		for (size_t k = 0; k < b.n; k++)
			if (b.v[k].vmm_pid == procs[i].pid && b.v[k].vmm_start_time == procs[i].start_time)
				set_pod(&b.v[k], procs[i].cgroup);
	}

	/* 3. shims and gofers join a sandbox that exists */
	for (size_t i = 0; i < nprocs && !b.oom; i++) {
		const struct sl_sbx_proc *p = &procs[i];
		if (roles[i] == R_KATA_SHIM || roles[i] == R_RUNSC_SHIM) {
			char id[SL_CONTAINER_ID_LEN];
			struct sl_sbx *s = arg_value(p, "-id", id, sizeof(id)) ? get(&b, id, 0) : NULL;
			for (size_t k = 0; !s && k < b.n; k++) /* the VMM's / sentry's parent */
				for (size_t j = 0; j < nprocs && !s; j++)
					if (procs[j].pid == b.v[k].vmm_pid && procs[j].ppid == p->pid)
						s = &b.v[k];
			if (s)
				add_aux(s->shim_pid, &s->nshims, p->pid);
		} else if (roles[i] == R_GOFER) {
			/* the sentry in the same cgroup, else the sentry with the same parent */
			struct sl_sbx *s = NULL;
			for (size_t k = 0; !s && k < b.n; k++)
				if (b.v[k].runtime == SL_SBX_GVISOR && b.v[k].cgroup[0] &&
				    !strcmp(b.v[k].cgroup, p->cgroup) && strcmp(p->cgroup, "/"))
					s = &b.v[k];
			for (size_t k = 0; !s && k < b.n; k++)
				for (size_t j = 0; j < nprocs && !s; j++)
					if (b.v[k].runtime == SL_SBX_GVISOR && procs[j].pid == b.v[k].vmm_pid &&
					    procs[j].ppid == p->ppid && p->ppid > 1)
						s = &b.v[k];
			if (s)
				add_aux(s->gofer_pid, &s->ngofers, p->pid);
		}
	}
	free(roles);
	free(vmms);
	if (b.oom) {
		free(b.v);
		return -ENOMEM;
	}
	for (size_t k = 0; k < b.n; k++) {
		struct sl_sbx *s = &b.v[k];
		if (s->runtime == SL_SBX_KATA && s->vmm_kind == SL_SBX_FC)
			snprintf(s->vm_dir, sizeof(s->vm_dir), "/run/vc/firecracker/%s/root", s->id);
		else if (s->runtime == SL_SBX_KATA)
			snprintf(s->vm_dir, sizeof(s->vm_dir), "/run/vc/vm/%s", s->id);
		else if (s->runtime == SL_SBX_FIRECRACKER)
			snprintf(s->vm_dir, sizeof(s->vm_dir), "/srv/jailer/firecracker/%s/root", s->id);
	}
	if (b.n)
		qsort(b.v, b.n, sizeof(*b.v), cmp_sbx);
	out->sbx = b.v;
	out->n = b.n;
	return 0;
}
