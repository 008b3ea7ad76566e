/* The Kata runtime's published state on the host (Go runtime,
 * src/runtime/virtcontainers/persist/fs/fs.go at kata-containers commit
 * 7c6ba40c54ea29b459b4997cff948caaba4e658b): storage root /run/vc,
 * <root>/sbs/<sandbox-id>/persist.json (persistapi.SandboxState, JSON with
 * Go's field names) and <root>/sbs/<sandbox-id>/<container-id>/persist.json
 * (persistapi.ContainerState). Fields used:
 *   SandboxState.State, .SandboxContainer (= the sandbox id: the pod's
 *   sandbox/pause container, persist.go dumpState), .AgentState.URL
 *   (kata_agent.go agentURL: "hvsock://<uds>:<port>" for cloud-hypervisor
 *   <root>/vm/<id>/clh.sock and Firecracker
 *   <root>/firecracker/<id>/root/kata.hvsock, "vsock://<cid>:<port>" for
 *   QEMU), .HypervisorState.{Type,UUID,Pid},
 *   .Config.ContainerConfigs[].{ID,Annotations};
 *   ContainerState.State ("ready" created, "running", "paused",
 *   "stopped": types/sandbox.go), .Process.StartTime.
 * Every file is opened below the root with O_NOFOLLOW | O_NONBLOCK, must be
 * a regular file and is read whole (at most 1 MiB). */
#include "stats/guest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define MAX_FILE (1u << 20)

/* Read dirfd/name (no symlink, regular, <= MAX_FILE) as JSON. *ino = its
 * inode. NULL with *err. */
static json_t *read_json_at(int dirfd, const char *name, uint64_t *ino, int *err)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		*err = errno == ELOOP ? -EPERM : -errno;
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE) {
		close(fd);
		*err = -EINVAL;
		return NULL;
	}
	if (ino)
		*ino = (uint64_t)st.st_ino;
	char *b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	json_error_t je;
	json_t *j = json_loadb(b, got, JSON_REJECT_DUPLICATES, &je);
	free(b);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		*err = -EINVAL;
		return NULL;
	}
	return j;
}

static void cpy(char *dst, size_t len, json_t *v)
{
	const char *s = json_string_value(v);
	snprintf(dst, len, "%s", s ? s : "");
}

static int id_ok(const char *id)
{
	size_t n = strlen(id);
	if (!n || n >= SL_GUEST_ID_LEN || id[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (id[i] == '/' || (unsigned char)id[i] < 0x20)
			return 0;
	return 1;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* The pod's sandbox container: containerd's and CRI-O's container-type
 * annotations say "sandbox" (the pause container). */
static int is_sandbox_container(json_t *ann)
{
	static const char *const keys[] = {"io.kubernetes.cri.container-type",
					   "io.kubernetes.cri-o.ContainerType", NULL};
	for (int i = 0; keys[i]; i++) {
		const char *v = json_string_value(json_object_get(ann, keys[i]));
		if (v && !strcmp(v, "sandbox"))
			return 1;
	}
	return 0;
}

int sl_kata_read(const char *root, const char *id, struct sl_kata_sandbox *sb)
{
	memset(sb, 0, sizeof(*sb));
	if (!id_ok(id))
		return -ENOENT;
	snprintf(sb->id, sizeof(sb->id), "%s", id);
	int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -ENOENT;
	int sbs = openat(rfd, "sbs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(rfd);
	if (sbs < 0)
		return -ENOENT;
	int dfd = openat(sbs, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(sbs);
	if (dfd < 0)
		return -ENOENT;
	int err = 0;
	uint64_t ino = 0;
	json_t *j = read_json_at(dfd, "persist.json", &ino, &err);
	if (!j) {
		close(dfd);
		return err == -EPERM ? -EINVAL : err;
	}
	cpy(sb->state, sizeof(sb->state), json_object_get(j, "State"));
	json_t *hv = json_object_get(j, "HypervisorState");
	cpy(sb->hv_type, sizeof(sb->hv_type), json_object_get(hv, "Type"));
	cpy(sb->hv_uuid, sizeof(sb->hv_uuid), json_object_get(hv, "UUID"));
	json_t *pid = json_object_get(hv, "Pid");
	sb->hv_pid = json_is_integer(pid) && json_integer_value(pid) > 0 &&
				     json_integer_value(pid) < (1 << 30)
			     ? (int)json_integer_value(pid)
			     : 0;
	cpy(sb->agent_url, sizeof(sb->agent_url), json_object_get(json_object_get(j, "AgentState"), "URL"));
	const char *sbc = json_string_value(json_object_get(j, "SandboxContainer"));
	uint64_t h = fnv(1469598103934665603ull, &ino, sizeof(ino));
	h = fnv(h, sb->hv_uuid, strlen(sb->hv_uuid));
	h = fnv(h, &sb->hv_pid, sizeof(sb->hv_pid));
	sb->ident = h;
	sb->state_ino = ino;

	json_t *cc = json_object_get(json_object_get(j, "Config"), "ContainerConfigs");
	size_t i;
	json_t *c;
	json_array_foreach(cc, i, c) {
		const char *cid = json_string_value(json_object_get(c, "ID"));
		if (!cid || !id_ok(cid) || sb->n >= SL_GUEST_MAX_MEMBERS)
			continue;
		struct sl_kata_member *m = &sb->m[sb->n++];
		snprintf(m->id, sizeof(m->id), "%s", cid);
		int cerr = 0;
		json_t *cj = NULL;
		int cfd = openat(dfd, cid, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd >= 0) {
			cj = read_json_at(cfd, "persist.json", NULL, &cerr);
			close(cfd);
		}
		if (cj) {
			cpy(m->state, sizeof(m->state), json_object_get(cj, "State"));
			cpy(m->start, sizeof(m->start),
			    json_object_get(json_object_get(cj, "Process"), "StartTime"));
			json_decref(cj);
		}
		/* carriers: the sandbox (pause) container, and a container that
		 * was created and never started (state "ready"/"creating"): it
		 * runs no process, its guest cgroup has nothing to add */
		int carrier = (sbc && !strcmp(sbc, cid)) ||
			      is_sandbox_container(json_object_get(c, "Annotations")) ||
			      !strcmp(m->state, "ready") || !strcmp(m->state, "creating");
		m->workload = !carrier;
	}
	json_decref(j);
	close(dfd);
	return 0;
}

/* Open rel (relative, '/'-separated) below dirfd with no symlink in any
 * component: an O_PATH descriptor of the last one. */
static int open_beneath(int dirfd, const char *rel)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", rel);
	int cur = dup(dirfd);
	if (cur < 0)
		return -errno;
	char *save = NULL, *tok = strtok_r(buf, "/", &save);
	while (tok) {
		char *next = strtok_r(NULL, "/", &save);
		if (!strcmp(tok, "..") || !strcmp(tok, ".")) {
			close(cur);
			return -EPERM;
		}
		int fd = openat(cur, tok, O_PATH | O_NOFOLLOW | O_CLOEXEC | (next ? O_DIRECTORY : 0));
		int e = errno;
		close(cur);
		if (fd < 0)
			return e == ENOTDIR || e == ELOOP ? -EPERM : -e;
		cur = fd;
		tok = next;
	}
	return cur;
}

int sl_kata_agent_addr(const char *root, const char *open_root, const struct sl_kata_sandbox *sb,
		       struct sl_guest_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->path_fd = -1;
	const char *u = sb->agent_url;
	if (!strncmp(u, "vsock://", 8)) {
		unsigned cid, port;
		char tail;
		if (sscanf(u + 8, "%u:%u%c", &cid, &port, &tail) != 2)
			return -EINVAL;
		a->kind = SL_GADDR_VSOCK;
		a->cid = cid;
		a->port = port;
		return 0;
	}
	if (strncmp(u, "hvsock://", 9))
		return -EINVAL;
	const char *path = u + 9, *colon = strrchr(path, ':');
	char *end;
	if (!colon || !colon[1])
		return -EINVAL;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (*end || port > UINT32_MAX)
		return -EINVAL;
	size_t rl = strlen(root), pl = (size_t)(colon - path);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (pl <= rl + 1 || strncmp(path, root, rl) || path[rl] != '/')
		return -EPERM;
	char rel[512];
	if (pl - rl - 1 >= sizeof(rel))
		return -EINVAL;
	memcpy(rel, path + rl + 1, pl - rl - 1);
	rel[pl - rl - 1] = 0;
	int rfd = open(open_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -ENOENT;
	int fd = open_beneath(rfd, rel);
	close(rfd);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode)) {
		close(fd);
		return -EPERM;
	}
	a->kind = SL_GADDR_HVSOCK;
	a->path_fd = fd;
	a->port = (uint32_t)port;
	return 0;
}
