/* The agent's own cgroup (src/agent/pressure_cgroup.c) against fake
 * hierarchies: a temporary directory tree named by a fake mountinfo, with
 * the control files a real cgroupfs would create pre-made. Checks which
 * hierarchy is chosen (v2 with cpu+memory, else v1 cpu and memory), the
 * values written, the pid moved in, and going back at leave. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/config.h"
#include "agent/pressure_rt.h"

static char root[64];

static void touch(const char *dir, const char *file, const char *content)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void slurp(const char *dir, const char *file, char *out, size_t len)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	size_t n = fread(out, 1, len - 1, f);
	out[n] = 0;
	fclose(f);
}

static void mkdirs(const char *p)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	assert_int_equal(system(cmd), 0);
}

/* A fake hierarchy at root/<name> with the agent's "from" cgroup (the real
 * /proc/self/cgroup path) and the leaf's control files. */
static void hierarchy(const char *name, const char *leaf_files[], const char *from)
{
	char d[512];
	snprintf(d, sizeof(d), "%s/%s%s", root, name, from);
	mkdirs(d);
	touch(d, "cgroup.procs", "");
	snprintf(d, sizeof(d), "%s/%s/sl/agent", root, name);
	mkdirs(d);
	for (int i = 0; leaf_files[i]; i++)
		touch(d, leaf_files[i], "");
}

static int setup(void **state)
{
	(void)state;
	strcpy(root, "/tmp/sl-pcg-XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

/* The path of this process in a hierarchy, from /proc/self/cgroup. */
static void self_path(const char *ctrl, char *out, size_t len)
{
	char line[1024];
	FILE *f = fopen("/proc/self/cgroup", "r");
	strcpy(out, "/");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		char list[256];
		snprintf(list, sizeof(list), ",%s,", c1 + 1);
		char item[64];
		snprintf(item, sizeof(item), ",%s,", ctrl ? ctrl : "");
		int match = !ctrl ? c1[1] == 0 : strstr(list, item) != NULL;
		if (match) {
			snprintf(out, len, "%s", c2 + 1);
			break;
		}
	}
	fclose(f);
}

static void config(struct sl_config *c, double cpu, uint64_t mem)
{
	sl_config_defaults(c);
	c->pressure.cgroup.enabled = 1;
	snprintf(c->pressure.cgroup.name, sizeof(c->pressure.cgroup.name), "sl/agent");
	c->pressure.cgroup.cpu_limit = cpu;
	c->pressure.cgroup.memory_limit = mem;
}

static void v1_hybrid(void **state)
{
	(void)state;
	static const char *cpu_files[] = {"cpu.cfs_period_us", "cpu.cfs_quota_us", "cgroup.procs", NULL};
	static const char *mem_files[] = {"memory.limit_in_bytes", "cgroup.procs", NULL};
	char mi[600], from_cpu[512], from_mem[512], buf[256], d[600], pid[32];
	struct sl_config c;
	struct sl_pressure_cgroup cg;

	self_path("cpu", from_cpu, sizeof(from_cpu));
	self_path("memory", from_mem, sizeof(from_mem));
	hierarchy("cpu,cpuacct", cpu_files, from_cpu);
	hierarchy("memory", mem_files, from_mem);
	mkdirs(strcat(strcpy(d, root), "/unified"));
	touch(d, "cgroup.controllers", ""); /* empty v2, as on hybrid hosts */
	snprintf(mi, sizeof(mi), "%s/mountinfo", root);
	FILE *f = fopen(mi, "w");
	fprintf(f, "30 1 0:26 / %s/unified rw,nosuid - cgroup2 cgroup2 rw\n", root);
	fprintf(f, "31 1 0:27 / %s/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n", root);
	fprintf(f, "32 1 0:28 / %s/memory rw,nosuid - cgroup cgroup rw,memory\n", root);
	fprintf(f, "33 1 0:29 / %s/pids rw,nosuid - cgroup cgroup rw,pids\n", root);
	fclose(f);

	config(&c, 0.25, 64ull << 20);
	assert_int_equal(sl_pressure_cgroup_enter(&c, mi, &cg), 0);
	assert_string_equal(cg.state, "v1");
	snprintf(d, sizeof(d), "%s/cpu,cpuacct/sl/agent", root);
	assert_string_equal(cg.dir, d);
	slurp(d, "cpu.cfs_period_us", buf, sizeof(buf));
	assert_string_equal(buf, "100000");
	slurp(d, "cpu.cfs_quota_us", buf, sizeof(buf));
	assert_string_equal(buf, "25000");
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	slurp(d, "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, pid);
	snprintf(d, sizeof(d), "%s/memory/sl/agent", root);
	assert_string_equal(cg.mem_dir, d);
	slurp(d, "memory.limit_in_bytes", buf, sizeof(buf));
	assert_string_equal(buf, "67108864");
	slurp(d, "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, pid);

	/* leave: the pid goes back where it was */
	sl_pressure_cgroup_leave(&cg);
	assert_string_equal(cg.state, "off");
	snprintf(d, sizeof(d), "%s/cpu,cpuacct%s", root, strcmp(from_cpu, "/") ? from_cpu : "");
	slurp(d, "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, pid);
	snprintf(d, sizeof(d), "%s/memory%s", root, strcmp(from_mem, "/") ? from_mem : "");
	slurp(d, "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, pid);

	/* no limits: -1; a tiny CPU share: the kernel's 1 ms minimum quota */
	config(&c, 0, 0);
	assert_int_equal(sl_pressure_cgroup_enter(&c, mi, &cg), 0);
	slurp(cg.dir, "cpu.cfs_quota_us", buf, sizeof(buf));
	assert_string_equal(buf, "-1");
	slurp(cg.mem_dir, "memory.limit_in_bytes", buf, sizeof(buf));
	assert_string_equal(buf, "-1");
	config(&c, 0.001, 0);
	assert_int_equal(sl_pressure_cgroup_enter(&c, mi, &cg), 0);
	slurp(cg.dir, "cpu.cfs_quota_us", buf, sizeof(buf));
	assert_string_equal(buf, "1000");
}

static void v2_with_controllers(void **state)
{
	(void)state;
	static const char *files[] = {"cpu.max", "memory.max", "cgroup.procs", "cgroup.subtree_control", NULL};
	char mi[600], from[512], buf[256], d[600], pid[32];
	struct sl_config c;
	struct sl_pressure_cgroup cg;

	self_path(NULL, from, sizeof(from));
	hierarchy("v2", files, from);
	snprintf(d, sizeof(d), "%s/v2", root);
	touch(d, "cgroup.controllers", "cpuset cpu io memory pids\n");
	touch(d, "cgroup.subtree_control", "");
	snprintf(d, sizeof(d), "%s/v2/sl", root);
	touch(d, "cgroup.subtree_control", "");
	snprintf(mi, sizeof(mi), "%s/mountinfo", root);
	FILE *f = fopen(mi, "w");
	fprintf(f, "30 1 0:26 / %s/v2 rw,nosuid - cgroup2 cgroup2 rw\n", root);
	fprintf(f, "31 1 0:27 / %s/cpu rw,nosuid - cgroup cgroup rw,cpu\n", root); /* v2 wins */
	fclose(f);

	config(&c, 1.5, 128ull << 20);
	assert_int_equal(sl_pressure_cgroup_enter(&c, mi, &cg), 0);
	assert_string_equal(cg.state, "v2");
	snprintf(d, sizeof(d), "%s/v2/sl/agent", root);
	assert_string_equal(cg.dir, d);
	assert_string_equal(cg.mem_dir, "");
	slurp(d, "cpu.max", buf, sizeof(buf));
	assert_string_equal(buf, "150000 100000");
	slurp(d, "memory.max", buf, sizeof(buf));
	assert_string_equal(buf, "134217728");
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	slurp(d, "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, pid);
	/* every ancestor delegates cpu and memory */
	snprintf(d, sizeof(d), "%s/v2", root);
	slurp(d, "cgroup.subtree_control", buf, sizeof(buf));
	assert_string_equal(buf, "+cpu +memory");
	snprintf(d, sizeof(d), "%s/v2/sl", root);
	slurp(d, "cgroup.subtree_control", buf, sizeof(buf));
	assert_string_equal(buf, "+cpu +memory");
	config(&c, 0, 0);
	assert_int_equal(sl_pressure_cgroup_enter(&c, mi, &cg), 0);
	slurp(cg.dir, "cpu.max", buf, sizeof(buf));
	assert_string_equal(buf, "max 100000");
	slurp(cg.dir, "memory.max", buf, sizeof(buf));
	assert_string_equal(buf, "max");
}

static void failures_are_reported(void **state)
{
	(void)state;
	char mi[600];
	struct sl_config c;
	struct sl_pressure_cgroup cg;

	config(&c, 1, 0);
	assert_int_equal(sl_pressure_cgroup_enter(&c, "/nonexistent/mountinfo", &cg), -1);
	assert_string_equal(cg.state, "failed");
	assert_non_null(strstr(cg.error, "mountinfo"));

	snprintf(mi, sizeof(mi), "%s/mountinfo-none", root);
	FILE *f = fopen(mi, "w");
	fprintf(f, "30 1 0:26 / /proc rw - proc proc rw\n");
	fclose(f);
	assert_int_equal(sl_pressure_cgroup_enter(&c, mi, &cg), -1);
	assert_string_equal(cg.state, "failed");
	assert_non_null(strstr(cg.error, "no cgroup v2"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(v1_hybrid, setup, teardown),
		cmocka_unit_test_setup_teardown(v2_with_controllers, setup, teardown),
		cmocka_unit_test_setup_teardown(failures_are_reported, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
