/* Capture snapshots from /proc (snapshot.h). */
#include "auto/snapshot.h"
#include "common/json.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uthash.h>

#define MAX_DSTATE 64
#define MAX_FDS 4096

static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, len - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

char sl_snapshot_stat_state(const char *t)
{
	const char *p = t ? strrchr(t, ')') : NULL;
	if (!p || p[1] != ' ' || !p[2])
		return 0;
	return p[2];
}

struct file_acc {
	char *path;
	unsigned fds;
	long long size;
	UT_hash_handle hh;
};

static int cmp_files(const void *a, const void *b)
{
	const struct file_acc *x = *(struct file_acc *const *)a, *y = *(struct file_acc *const *)b;
	if (x->fds != y->fds)
		return x->fds > y->fds ? -1 : 1;
	return strcmp(x->path, y->path);
}

static json_t *cmdline_json(const char *root, int pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "%s/%d/cmdline", root, pid);
	ssize_t n = read_small(path, buf, sizeof(buf));
	json_t *arr = json_array();
	for (ssize_t i = 0; arr && n > 0 && i < n;) {
		size_t l = strnlen(buf + i, (size_t)(n - i));
		json_array_append_new(arr, sl_json_str_lossy(buf + i, l));
		i += (ssize_t)l + 1;
	}
	return arr;
}

static void scan_tasks(const char *root, int pid, const char *comm, int stacks, json_t *dstate)
{
	char path[96], buf[32768];
	snprintf(path, sizeof(path), "%s/%d/task", root, pid);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		int tid = atoi(de->d_name);
		snprintf(path, sizeof(path), "%s/%d/task/%d/stat", root, pid, tid);
		if (read_small(path, buf, sizeof(buf)) <= 0 || sl_snapshot_stat_state(buf) != 'D')
			continue;
		if (json_array_size(dstate) >= MAX_DSTATE)
			break;
		json_t *t = json_pack("{s:i, s:i, s:o}", "pid", pid, "tid", tid, "comm", sl_json_strz(comm));
		snprintf(path, sizeof(path), "%s/%d/task/%d/wchan", root, pid, tid);
		if (t && read_small(path, buf, 256) > 0)
			json_object_set_new(t, "wchan", sl_json_strz(buf));
		if (t && stacks) {
			snprintf(path, sizeof(path), "%s/%d/task/%d/stack", root, pid, tid);
			ssize_t n = read_small(path, buf, sizeof(buf));
			json_t *fr = json_array();
			/* "[<0>] folio_wait_bit_common+0x13e/0x330" per line */
			for (char *save = NULL, *l = n > 0 ? strtok_r(buf, "\n", &save) : NULL; fr && l;
			     l = strtok_r(NULL, "\n", &save)) {
				char *sp = strchr(l, ' ');
				json_array_append_new(fr, sl_json_strz(sp ? sp + 1 : l));
			}
			if (fr)
				json_object_set_new(t, "stack", fr);
			if (n < 0)
				json_object_set_new(t, "stack_error", json_string(strerror((int)-n)));
		}
		if (t)
			json_array_append_new(dstate, t);
	}
	if (d)
		closedir(d);
}

static void scan_fds(const char *root, int pid, struct file_acc **files, unsigned *nfds)
{
	char path[96], target[4096];
	snprintf(path, sizeof(path), "%s/%d/fd", root, pid);
	DIR *d = opendir(path);
	struct dirent *de;
	unsigned n = 0;
	while (d && (de = readdir(d)) && n < MAX_FDS) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		n++;
		ssize_t l = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
		if (l <= 0)
			continue;
		target[l] = 0;
		if (target[0] != '/') /* pipe:[..], socket:[..], anon_inode:..: not files */
			continue;
		struct file_acc *f;
		HASH_FIND_STR(*files, target, f);
		if (!f) {
			f = calloc(1, sizeof(*f));
			if (!f || !(f->path = strdup(target))) {
				free(f);
				continue;
			}
			struct stat st;
			/* stat through the fd's magic link: no open, no block */
			f->size = fstatat(dirfd(d), de->d_name, &st, 0) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size
												     : -1;
			HASH_ADD_KEYPTR(hh, *files, f->path, strlen(f->path), f);
		}
		f->fds++;
	}
	if (d)
		closedir(d);
	*nfds = n;
}

json_t *sl_snapshot_take(const char *procs_path, const struct sl_snapshot_opts *o)
{
	const char *root = o->proc_root ? o->proc_root : "/proc";
	json_t *out = json_object(), *procs = json_array(), *dstate = json_array(), *files_j = json_array();
	struct file_acc *files = NULL, *f, *tmp;
	if (!out || !procs || !dstate || !files_j) {
		json_decref(out);
		json_decref(procs);
		json_decref(dstate);
		json_decref(files_j);
		return NULL;
	}
	json_object_set_new(out, "processes", procs);
	json_object_set_new(out, "dstate_tasks", dstate);
	json_object_set_new(out, "open_files", files_j);
	FILE *pf = fopen(procs_path, "re");
	if (!pf) {
		json_object_set_new(out, "error", json_sprintf("%s: %s", procs_path, strerror(errno)));
		return out;
	}
	long page = sysconf(_SC_PAGESIZE);
	int pid;
	size_t total = 0;
	while (fscanf(pf, "%d", &pid) == 1) {
		char path[96], buf[4096];
		total++;
		/* D-state tasks of every process, listed or not */
		snprintf(path, sizeof(path), "%s/%d/stat", root, pid);
		if (read_small(path, buf, sizeof(buf)) <= 0)
			continue;
		char comm[32] = "";
		const char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
		if (lp && rp && rp > lp)
			snprintf(comm, sizeof(comm), "%.*s", (int)(rp - lp - 1), lp + 1);
		char state = sl_snapshot_stat_state(buf);
		scan_tasks(root, pid, comm, o->stacks, dstate);
		if (json_array_size(procs) >= o->max_procs)
			continue;
		long threads = 0;
		if (rp) { /* fields after ')': 3 state ... 20 num_threads */
			const char *p = rp + 2;
			for (int fld = 3; *p && fld < 20; p++)
				if (*p == ' ')
					fld++;
			threads = strtol(p, NULL, 10);
		}
		unsigned long long size = 0, resident = 0;
		snprintf(path, sizeof(path), "%s/%d/statm", root, pid);
		if (read_small(path, buf, sizeof(buf)) > 0)
			sscanf(buf, "%llu %llu", &size, &resident);
		unsigned nfds = 0;
		scan_fds(root, pid, &files, &nfds);
		json_t *p = json_pack("{s:i, s:o, s:s#, s:I, s:I, s:I}", "pid", pid, "comm", sl_json_strz(comm), "state",
				      state ? &state : "?", 1, "threads", (json_int_t)threads, "rss_bytes",
				      (json_int_t)(resident * (unsigned long long)page), "open_fds", (json_int_t)nfds);
		if (p) {
			json_object_set_new(p, "cmdline", cmdline_json(root, pid));
			json_array_append_new(procs, p);
		}
	}
	fclose(pf);
	json_object_set_new(out, "processes_total", json_integer((json_int_t)total));
	size_t nf = HASH_COUNT(files), i = 0;
	struct file_acc **v = calloc(nf ? nf : 1, sizeof(*v));
	HASH_ITER(hh, files, f, tmp) {
		if (v)
			v[i++] = f;
	}
	if (v) {
		qsort(v, i, sizeof(*v), cmp_files);
		for (size_t k = 0; k < i && k < o->top_files; k++) {
			json_t *fj = json_pack("{s:o, s:i}", "path", sl_json_strz(v[k]->path), "fds", (int)v[k]->fds);
			if (fj && v[k]->size >= 0)
				json_object_set_new(fj, "size_bytes", json_integer(v[k]->size));
			if (fj)
				json_array_append_new(files_j, fj);
		}
	}
	free(v);
	HASH_ITER(hh, files, f, tmp) {
		HASH_DEL(files, f);
		free(f->path);
		free(f);
	}
	return out;
}
