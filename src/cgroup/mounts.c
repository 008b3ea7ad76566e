/* Cgroup mount discovery from mountinfo (proc(5), "/proc/[pid]/mountinfo"):
 *   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
 *   (1)(2)(3)   (4)   (5)      (6)      (7)    (8) (9)   (10)         (11)
 * (7) is zero or more optional fields ended by "-"; (9) fstype, (11) super
 * options. Paths escape space, tab, newline and backslash as \ooo octal.
 * cgroup2 -> v2; the first "cgroup" mount whose super options contain the
 * controller as a whole comma-separated word -> v1; the same for each of
 * sl_cg_ctrl_names -> v1_ctrl[]. The v1 hierarchy id is
 * column 2 of /proc/cgroups ("#subsys_name hierarchy num_cgroups enabled").
 * Root ids are st_ino of the mount point (kernfs node id of the root cgroup).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup/attr.h"

/* In-place unescape of \ooo sequences. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

static bool has_word(const char *csv, const char *word)
{
	size_t wl = strlen(word);
	const char *p = csv;
	while (*p) {
		size_t l = strcspn(p, ",");
		if (l == wl && strncmp(p, word, wl) == 0)
			return true;
		p += l;
		if (*p == ',')
			p++;
	}
	return false;
}

static uint64_t root_ino(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (uint64_t)sb.st_ino : 0;
}

static int hierarchy_id(const char *cgroups_path, const char *controller)
{
	FILE *f = cgroups_path ? fopen(cgroups_path, "re") : NULL;
	if (!f)
		return -1;
	char line[256], name[64];
	int id = -1, hid;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%63s %d", name, &hid) == 2 && strcmp(name, controller) == 0) {
			id = hid;
			break;
		}
	}
	fclose(f);
	return id;
}

const char *const sl_cg_ctrl_names[SL_CG_NCTRL] = {"memory", "cpu", "cpuacct", "blkio", "pids"};

/* One mountinfo line (NUL-terminated, no newline; modified in place). */
static void mount_line(char *line, const char *v1_controller, struct sl_cg_mounts *out)
{
	/* fields 1..6, then optional fields up to " - " */
	char *save = NULL, *tok[6];
	char *sep = strstr(line, " - ");
	if (!sep)
		return;
	*sep = '\0';
	char *tail = sep + 3;
	int n = 0;
	for (char *t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	if (n < 6)
		return;
	char *fstype = strtok_r(tail, " ", &save);
	char *source = fstype ? strtok_r(NULL, " ", &save) : NULL;
	char *sopts = source ? strtok_r(NULL, " ", &save) : NULL;
	if (!fstype || !sopts)
		return;
	char *mnt = tok[4];
	unescape(mnt);
	if (strcmp(fstype, "cgroup2") == 0) {
		if (!out->v2[0])
			snprintf(out->v2, sizeof(out->v2), "%s", mnt);
	} else if (strcmp(fstype, "cgroup") == 0) {
		if (v1_controller && *v1_controller && !out->v1[0] && has_word(sopts, v1_controller))
			snprintf(out->v1, sizeof(out->v1), "%s", mnt);
		for (int i = 0; i < SL_CG_NCTRL; i++)
			if (!out->v1_ctrl[i][0] && has_word(sopts, sl_cg_ctrl_names[i]))
				snprintf(out->v1_ctrl[i], sizeof(out->v1_ctrl[i]), "%s", mnt);
	}
}

static void mounts_init(const char *v1_controller, struct sl_cg_mounts *out)
{
	memset(out, 0, sizeof(*out));
	out->v1_hierarchy_id = -1;
	if (v1_controller)
		snprintf(out->v1_controller, sizeof(out->v1_controller), "%s", v1_controller);
}

int sl_cg_mounts_parse(const char *text, size_t len, const char *v1_controller,
		       struct sl_cg_mounts *out)
{
	if (!text || !out)
		return -EINVAL;
	mounts_init(v1_controller, out);
	char *line = malloc(len + 1);
	if (!line)
		return -ENOMEM;
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - (text + off)) : len - off;
		memcpy(line, text + off, l);
		line[l] = '\0';
		mount_line(line, v1_controller, out);
		off += l + 1;
	}
	free(line);
	return 0;
}

int sl_cg_mounts_discover_ex(const char *mountinfo_path, const char *cgroups_path,
			     const char *v1_controller, struct sl_cg_mounts *out)
{
	if (!mountinfo_path || !out)
		return -EINVAL;
	mounts_init(v1_controller, out);

	FILE *f = fopen(mountinfo_path, "re");
	if (!f)
		return -errno;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		mount_line(line, v1_controller, out);
	}
	free(line);
	fclose(f);

	if (out->v2[0])
		out->v2_root_id = root_ino(out->v2);
	if (out->v1[0]) {
		out->v1_root_id = root_ino(out->v1);
		out->v1_hierarchy_id = hierarchy_id(cgroups_path, v1_controller);
	}
	return 0;
}

int sl_cg_mounts_discover(const char *mountinfo_path, const char *v1_controller,
			  struct sl_cg_mounts *out)
{
	return sl_cg_mounts_discover_ex(mountinfo_path, "/proc/cgroups", v1_controller, out);
}
