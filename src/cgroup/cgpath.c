/* Cgroup path rules (ATTR-1): bare cgroup path or /proc/<pid>/cgroup text
 * -> {is_container, runtime, container id, pod uid, qos, kind}.
 *
 * The path is split on '/'; every segment is classified; the innermost
 * (rightmost) container marker wins (docker-in-docker, podman's /container
 * child under libpod-<id>.scope, cgroups a container creates inside itself).
 * The path ends at the first newline (bare-path inputs read from files); a
 * trailing " (deleted)" (a dead cgroup, as /proc/<pid>/cgroup shows it) is
 * dropped (p21).
 * Pod uid and QoS come from any kubepods segment of the path. Matching of
 * fixed words is case-insensitive; "<id>" below is validated (hex ids: >= 12
 * hex digits; names: [A-Za-z0-9_.-]+).
 *
 *  segment (".scope" optional unless shown)   -> result
 *  ----------------------------------------------------------------------
 *  crio-conmon-<hexid>                        -> NOT a container, runtime cri-o,
 *                                                kind conmon, no id (case cg09)
 *  libpod-conmon-<hexid>                      -> same, runtime podman
 *  lxc.monitor.<name>                         -> same, runtime lxc (p24)
 *  libpod-payload-<hexid>                     -> podman (--cgroups=split, under
 *                                                any unit: p15, p16)
 *  nerdctl-<hexid>                            -> containerd (nerdctl, systemd
 *                                                driver: p25)
 *  lxc.payload.<name>                         -> lxc, id = name (p23)
 *  kata_overhead/<hexid>                      -> kata, id = sandbox id (the
 *                                                VMM/shim overhead cgroup, p18)
 *  cri-containerd-<hexid>                     -> containerd
 *  crio-<hexid>                               -> cri-o
 *  docker-<hexid>                             -> docker (systemd driver)
 *  libpod-<hexid>                             -> podman
 *  runc-<name>.scope                          -> runc (runc systemd driver)
 *  kata_<hexid> | kata-<hexid>                -> kata (sandbox id)
 *  <slice>:<prefix>:<id>  (systemd cgroupsPath rendered literally on v1)
 *      prefix cri-containerd|docker|crio|libpod|runc -> that runtime, id;
 *      nerdctl -> containerd (p26);
 *      <slice> is classified like a segment (pod/qos)
 *  <64hex> after a "docker" segment           -> docker (cgroupfs driver)
 *  <64hex> elsewhere                          -> container, runtime "" (the
 *                                                path does not say: k8s
 *                                                cgroupfs, gVisor sandbox, ...)
 *  any child directly under a k8s pod segment -> container, id = name, runtime ""
 *  /ecs/<task>/<id>                           -> ecs, id = third segment
 *  <runc parent>/<name> (sl_cgpath_opts)      -> runc, id = name (plain runc
 *                                                cgroupsPath chosen by a user)
 *  kubepods | kubepods.slice                  -> k8s root
 *  burstable | besteffort under k8s root,
 *  kubepods-<qos>.slice, <Qos>.slice (legacy) -> qos
 *  pod<uuid> under k8s root (cgroupfs)        -> pod uid; qos = the qos segment
 *                                                above, else guaranteed
 *  [kubepods-][<qos>-]pod<uuid_>.slice        -> pod uid ('_' -> '-'); qos from
 *                                                the prefix, guaranteed when
 *                                                only "kubepods-" (or none)
 *  pod<32 hex> in both forms                  -> a static pod's uid (the
 *                                                kubelet's manifest hash), as is
 *  <root>-kubepods[-...].slice                -> read as kubepods[-...].slice
 *                                                (kubelet --cgroup-root=/<root>,
 *                                                systemd driver; kind: kubelet)
 *  machine-libpod_pod_<id>.slice              -> podman pod: no k8s identity
 *
 *  No container marker: is_container NO; "/" -> runtime "host", kind host;
 *  a pod-level cgroup -> kind pod; a path with .slice/.scope/.service
 *  segments -> kind systemd; anything else (e.g. /process_api/<32hex>) ->
 *  kind host. runtime "" in all of these but "/".
 *
 * /proc/<pid>/cgroup: every "hid:controllers:path" line (path may contain
 * ':', may end in " (deleted)") is parsed; the line with most identity wins:
 * container > conmon/pod > other non-root path > root. Ties keep the first
 * v1 line over the 0:: line (hybrid hosts leave tasks of a cgroupfs-driven
 * docker in an unrelated v2 cgroup, case cg01). If every path is "/" the
 * answer is is_container UNKNOWN (a private cgroup namespace shows "/" to a
 * container, case cg23); if every line is deleted, NO with kind "deleted",
 * unless a deleted line names a container (a zombie task of a removed
 * container cgroup): that container, below any live container line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cgroup/attr.h"

static void set_str(char *dst, size_t cap, const char *src, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool hex_id_ok(const char *s, size_t n)
{
	return n >= 12 && n < SL_CONTAINER_ID_LEN && all_hex(s, n);
}

static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || n >= SL_CONTAINER_ID_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!isalnum(c) && c != '_' && c != '-' && c != '.')
			return false;
	}
	return true;
}

static bool has_prefix_ci(const char *s, size_t n, const char *p)
{
	size_t pl = strlen(p);
	return n >= pl && strncasecmp(s, p, pl) == 0;
}

static bool has_suffix(const char *s, size_t n, const char *suf)
{
	size_t sl = strlen(suf);
	return n >= sl && memcmp(s + n - sl, suf, sl) == 0;
}

static bool eq_ci(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && strncasecmp(s, w, n) == 0;
}

/* 8-4-4-4-12 hex with '-' or '_' separators. */
static bool uuid_ok(const char *s, size_t n)
{
	if (n != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-' && s[i] != '_')
				return false;
		} else if (!isxdigit((unsigned char)s[i])) {
			return false;
		}
	}
	return true;
}

static void set_uuid(char *dst, const char *s)
{
	for (size_t i = 0; i < 36; i++)
		dst[i] = s[i] == '_' ? '-' : (char)tolower((unsigned char)s[i]);
	dst[36] = '\0';
}

/* 32 hex digits: a static pod's uid (the kubelet's MD5 of the manifest,
 * pkg/kubelet/config/common.go, written without dashes). */
static bool hex32_ok(const char *s, size_t n)
{
	if (n != 32)
		return false;
	for (size_t i = 0; i < 32; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* Length of the pod uid that ends s[0..n) right after "pod": 36 (UUID,
 * '-' or '_'), 32 (static pod hash), or 0. */
static size_t pod_uid_tail(const char *s, size_t n)
{
	if (n >= 39 && has_prefix_ci(s + n - 39, 3, "pod") && uuid_ok(s + n - 36, 36))
		return 36;
	if (n >= 35 && has_prefix_ci(s + n - 35, 3, "pod") && hex32_ok(s + n - 32, 32))
		return 32;
	return 0;
}

/* The uid as the kubelet reports it: a UUID with '-' in lower case, a
 * static pod's hash as is. */
static void set_pod_uid(char *dst, const char *s, size_t n)
{
	if (n == 36) {
		set_uuid(dst, s);
		return;
	}
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* qos word at s[0..n) ("burstable"/"besteffort", any case) -> canonical. */
static const char *qos_word(const char *s, size_t n)
{
	if (eq_ci(s, n, "burstable"))
		return "burstable";
	if (eq_ci(s, n, "besteffort"))
		return "besteffort";
	if (eq_ci(s, n, "guaranteed"))
		return "guaranteed";
	return NULL;
}

enum mark { M_NONE = 0, M_CONTAINER, M_CONMON };

struct pstate {
	bool kube;          /* a kubepods root was seen */
	bool prev_kroot;    /* previous segment is the kubepods root */
	bool prev_pod;      /* previous segment is a k8s pod */
	bool prev_docker;   /* previous segment is "docker" */
	bool pod_seen, unit_seen;
	bool kata_overhead; /* a "kata_overhead" segment was seen */
	bool overhead;      /* the mark is a kata_overhead/<id> sandbox overhead cgroup */
	int ecs_at;         /* index of an "ecs" first segment, else -1 */
	const char *qos;    /* pending qos from a qos segment */
	enum mark mark;
	const char *mrt;    /* runtime of the mark */
	const char *mid;    /* id of the mark */
	size_t midlen;
	struct sl_attr *out;
};

static void mark(struct pstate *st, enum mark m, const char *rt, const char *id, size_t n)
{
	st->mark = m;
	st->overhead = false;
	st->mrt = rt;
	st->mid = id;
	st->midlen = n;
}

/* Pod/QoS segments. Returns true if the segment was a pod. */
static bool kube_segment(struct pstate *st, const char *s, size_t n, bool *kroot)
{
	*kroot = false;
	/* kubelet --cgroup-root=/<r> with the systemd driver (kind: /kubelet)
	 * prefixes every slice of the tree with "<r>-": <r>-kubepods.slice,
	 * <r>-kubepods-burstable-pod<uid>.slice */
	if (has_suffix(s, n, ".slice") && !has_prefix_ci(s, n, "kubepods")) {
		for (size_t i = 1; i + 14 <= n; i++) {
			if (s[i - 1] == '-' && has_prefix_ci(s + i, n - i, "kubepods") &&
			    (s[i + 8] == '-' || s[i + 8] == '.')) {
				s += i;
				n -= i;
				break;
			}
		}
	}
	if (eq_ci(s, n, "kubepods") || eq_ci(s, n, "kubepods.slice")) {
		st->kube = true;
		*kroot = true;
		return false;
	}
	if (st->kube && qos_word(s, n)) { /* cgroupfs /kubepods/<qos> */
		st->qos = qos_word(s, n);
		return false;
	}
	if (has_suffix(s, n, ".slice")) {
		size_t b = n - 6;
		/* kubepods-<qos>.slice, legacy <Qos>.slice */
		if (has_prefix_ci(s, b, "kubepods-") && qos_word(s + 9, b - 9)) {
			st->kube = true;
			st->qos = qos_word(s + 9, b - 9);
			return false;
		}
		if (qos_word(s, b)) {
			st->kube = true;
			st->qos = qos_word(s, b);
			return false;
		}
		/* [kubepods-][<qos>-]pod<uuid>.slice */
		size_t ul = pod_uid_tail(s, b);
		if (ul) {
			size_t pl = b - 3 - ul; /* prefix length, incl. trailing '-' */
			const char *q = NULL;
			bool ok = false;
			if (pl == 0) {
				ok = st->kube;
			} else if (s[pl - 1] == '-') {
				const char *p = s;
				size_t l = pl - 1;
				if (has_prefix_ci(p, l, "kubepods")) {
					ok = true;
					if (l > 8) {
						if (p[8] != '-')
							ok = false;
						q = qos_word(p + 9, l - 9);
						if (!q)
							ok = false;
					}
				} else if ((q = qos_word(p, l)) != NULL) {
					ok = true;
				}
			}
			if (ok) {
				st->kube = true;
				set_pod_uid(st->out->pod_uid, s + b - ul, ul);
				if (!q)
					q = st->qos ? st->qos : "guaranteed";
				snprintf(st->out->qos, sizeof(st->out->qos), "%s", q);
				return true;
			}
		}
		return false;
	}
	/* cgroupfs pod<uuid> */
	if (st->kube && (n == 39 || n == 35) && pod_uid_tail(s, n) == n - 3) {
		set_pod_uid(st->out->pod_uid, s + 3, n - 3);
		const char *q = st->qos ? st->qos : (st->prev_kroot ? "guaranteed" : NULL);
		snprintf(st->out->qos, sizeof(st->out->qos), "%s", q ? q : "");
		return true;
	}
	return false;
}

struct prefix_rule {
	const char *prefix;
	const char *runtime;
	enum mark mark;
	bool hex; /* id must be hex */
	bool need_scope;
};

static const struct prefix_rule prefix_rules[] = {
	{"crio-conmon-", "cri-o", M_CONMON, true, false},
	{"libpod-conmon-", "podman", M_CONMON, true, false},
	{"libpod-payload-", "podman", M_CONTAINER, true, false},
	{"nerdctl-", "containerd", M_CONTAINER, true, false},
	{"lxc.payload.", "lxc", M_CONTAINER, false, false},
	{"lxc.monitor.", "lxc", M_CONMON, false, false},
	{"cri-containerd-", "containerd", M_CONTAINER, true, false},
	{"crio-", "cri-o", M_CONTAINER, true, false},
	{"docker-", "docker", M_CONTAINER, true, false},
	{"libpod-", "podman", M_CONTAINER, true, false},
	{"runc-", "runc", M_CONTAINER, false, true},
	{"kata_", "kata", M_CONTAINER, true, false},
	{"kata-", "kata", M_CONTAINER, true, false},
};

/* Prefix-form container segment. Returns true if it matched. */
static bool prefix_segment(struct pstate *st, const char *s, size_t n)
{
	bool scope = has_suffix(s, n, ".scope");
	size_t b = scope ? n - 6 : n;
	for (size_t i = 0; i < sizeof(prefix_rules) / sizeof(prefix_rules[0]); i++) {
		const struct prefix_rule *r = &prefix_rules[i];
		if (r->need_scope && !scope)
			continue;
		if (!has_prefix_ci(s, b, r->prefix))
			continue;
		size_t pl = strlen(r->prefix);
		const char *id = s + pl;
		size_t il = b - pl;
		if (r->hex ? hex_id_ok(id, il) : name_ok(id, il)) {
			mark(st, r->mark, r->runtime, id, il);
			return true;
		}
	}
	return false;
}

/* <slice>:<prefix>:<id> */
static bool colon_segment(struct pstate *st, const char *s, size_t n, bool *pod)
{
	const char *c1 = memchr(s, ':', n);
	if (!c1)
		return false;
	const char *c2 = memchr(c1 + 1, ':', (size_t)(s + n - c1 - 1));
	if (!c2 || memchr(c2 + 1, ':', (size_t)(s + n - c2 - 1)))
		return false;
	static const struct {
		const char *p, *rt;
	} m[] = {{"cri-containerd", "containerd"}, {"docker", "docker"}, {"crio", "cri-o"},
		 {"libpod", "podman"},		  {"runc", "runc"},	{"nerdctl", "containerd"}};
	const char *pre = c1 + 1, *id = c2 + 1;
	size_t pl = (size_t)(c2 - pre), il = (size_t)(s + n - id);
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		if (!eq_ci(pre, pl, m[i].p) || !name_ok(id, il))
			continue;
		bool kroot;
		*pod = kube_segment(st, s, (size_t)(c1 - s), &kroot);
		mark(st, M_CONTAINER, m[i].rt, id, il);
		return true;
	}
	return false;
}

static bool runc_parent_child(const char *path, size_t off, const struct sl_cgpath_opts *o)
{
	if (!o)
		return false;
	for (size_t i = 0; i < o->n_runc_parents && i < SL_RUNC_PARENTS_MAX; i++) {
		const char *p = o->runc_parents[i];
		size_t pl = strnlen(p, SL_RUNC_PARENT_LEN);
		while (pl > 0 && p[pl - 1] == '/')
			pl--;
		/* the segment starts at off, right after "<parent>/" */
		if (pl > 0 && off == pl + 1 && strncmp(path, p, pl) == 0)
			return true;
	}
	return false;
}

static void attr_reset(struct sl_attr *out)
{
	memset(out, 0, sizeof(*out));
	out->is_container = SL_UNKNOWN;
}

int sl_cgpath_parse_opts(const char *path, const struct sl_cgpath_opts *opts, struct sl_attr *out)
{
	if (!out)
		return -EINVAL;
	attr_reset(out);
	if (!path || !*path)
		return -EINVAL;

	struct pstate st = {.ecs_at = -1, .out = out};
	int idx = 0;
	const char *p = path;
	/* the path ends at the end of its first line (bare-path inputs read
	 * from a file carry a trailing newline) */
	const char *end = path + strcspn(path, "\r\n");
	/* a dead cgroup as /proc/<pid>/cgroup shows it: "<path> (deleted)" */
	static const char del[] = " (deleted)";
	if ((size_t)(end - path) >= sizeof(del) - 1 && !memcmp(end - (sizeof(del) - 1), del, sizeof(del) - 1))
		end -= sizeof(del) - 1;
	while (p < end) {
		while (p < end && *p == '/')
			p++;
		if (p == end)
			break;
		const char *s = p;
		while (p < end && *p != '/')
			p++;
		size_t n = (size_t)(p - s);
		bool pod = false, kroot = false, docker = false;

		if (runc_parent_child(path, (size_t)(s - path), opts) && name_ok(s, n)) {
			mark(&st, M_CONTAINER, "runc", s, n);
		} else if (colon_segment(&st, s, n, &pod)) {
			/* done */
		} else if (prefix_segment(&st, s, n)) {
			/* done */
		} else if ((pod = kube_segment(&st, s, n, &kroot))) {
			st.pod_seen = true;
		} else if (eq_ci(s, n, "kata_overhead")) {
			st.kata_overhead = true;
		} else if (st.kata_overhead && hex_id_ok(s, n)) {
			mark(&st, M_CONTAINER, "kata", s, n); /* the sandbox id */
			st.overhead = true;
		} else if (!kroot && n == 64 && all_hex(s, n)) {
			mark(&st, M_CONTAINER, st.prev_docker ? "docker" : "", s, n);
		} else if (st.prev_pod && name_ok(s, n)) {
			size_t b = has_suffix(s, n, ".scope") ? n - 6 : n;
			mark(&st, M_CONTAINER, "", s, b);
		} else if (idx == 0 && eq_ci(s, n, "ecs")) {
			st.ecs_at = 0;
		} else if (st.ecs_at == 0 && idx == 2 && name_ok(s, n)) {
			mark(&st, M_CONTAINER, "ecs", s, n);
		} else if (eq_ci(s, n, "docker")) {
			docker = true;
		}
		if (pod)
			st.pod_seen = true;
		if (has_suffix(s, n, ".slice") || has_suffix(s, n, ".scope") ||
		    has_suffix(s, n, ".service"))
			st.unit_seen = true;
		st.prev_kroot = kroot;
		st.prev_pod = pod;
		st.prev_docker = docker;
		idx++;
	}

	if (st.mark != M_NONE) {
		out->is_container = st.mark == M_CONTAINER ? SL_YES : SL_NO;
		snprintf(out->runtime, sizeof(out->runtime), "%s", st.mrt);
		if (st.mark == M_CONTAINER) {
			set_str(out->container_id, sizeof(out->container_id), st.mid, st.midlen);
			/* the sandbox's overhead cgroup: attributed to the sandbox,
			 * not a container of its own (src/cgroup/sandbox.h) */
			snprintf(out->kind, sizeof(out->kind), "%s", st.overhead ? "overhead" : "container");
		} else {
			snprintf(out->kind, sizeof(out->kind), "conmon");
		}
		return 0;
	}
	out->is_container = SL_NO;
	if (idx == 0) {
		snprintf(out->runtime, sizeof(out->runtime), "host");
		snprintf(out->kind, sizeof(out->kind), "host");
	} else if (st.pod_seen) {
		snprintf(out->kind, sizeof(out->kind), "pod");
	} else if (st.unit_seen) {
		snprintf(out->kind, sizeof(out->kind), "systemd");
	} else {
		snprintf(out->kind, sizeof(out->kind), "host");
	}
	return 0;
}

int sl_cgpath_parse(const char *path, struct sl_attr *out)
{
	return sl_cgpath_parse_opts(path, NULL, out);
}

/* Identity score of one parsed line: a live container line 8, a dead
 * cgroup's (" (deleted)") container line 7, conmon/pod 6, another non-root
 * path 4, root 2. */
static int score(const struct sl_attr *a, bool root, bool deleted)
{
	if (a->is_container == SL_YES)
		return deleted ? 7 : 8;
	if (strcmp(a->kind, "conmon") == 0 || a->pod_uid[0])
		return 6;
	if (!root)
		return 4;
	return 2;
}

int sl_cgproc_parse(const char *text, struct sl_attr *out)
{
	if (!out)
		return -EINVAL;
	attr_reset(out);
	if (!text || !*text)
		return -EINVAL;

	int best = 0, lines = 0, deleted = 0;
	bool best_v2 = false;
	const char *p = text;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		const char *c1 = memchr(p, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(p + len - c1 - 1)) : NULL;
		if (c2) {
			const char *path = c2 + 1;
			size_t pl = (size_t)(p + len - path);
			bool v2 = (c1 - p == 1 && p[0] == '0' && c2 == c1 + 1);
			static const char del[] = " (deleted)";
			bool is_del = false;
			if (pl >= sizeof(del) - 1 &&
			    memcmp(path + pl - (sizeof(del) - 1), del, sizeof(del) - 1) == 0) {
				pl -= sizeof(del) - 1;
				is_del = true;
			}
			lines++;
			if (is_del)
				deleted++;
			if (pl > 0) {
				char *copy = strndup(path, pl);
				if (!copy)
					return -ENOMEM;
				struct sl_attr a;
				sl_cgpath_parse(copy, &a);
				bool root = strspn(copy, "/") == pl;
				free(copy);
				/* a dead cgroup counts only when it names a container
				 * (a zombie of a removed container cgroup, case p20) */
				int sc = is_del && a.is_container != SL_YES ? 0 : score(&a, root, is_del);
				/* higher score wins; on a tie a v1 line beats 0:: */
				if (sc > 0 && (sc > best || (sc == best && best_v2 && !v2))) {
					best = sc;
					best_v2 = v2;
					*out = a;
				}
			}
		}
		if (!eol)
			break;
		p = eol + 1;
	}
	if (lines == 0)
		return -EINVAL;
	if (best == 0) { /* only deleted lines */
		attr_reset(out);
		out->is_container = SL_NO;
		snprintf(out->kind, sizeof(out->kind), "deleted");
	} else if (best == 2) { /* every path is "/" */
		attr_reset(out);
		(void)deleted;
	}
	return 0;
}
