/* io module pure parts: /proc/diskstats rows, op names, slow_io decoding
 * (src/modules/io_decode.c) and the blkcg -> cgroup pair mapping
 * (src/modules/io_blkcg.c) on fixture trees: pure v2 (through the
 * attribution cache to a Kubernetes container) and a hybrid host whose
 * blkio hierarchy is not the attribution one (mapped by path). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup/attr.h"
#include "modules/io_blkcg.h"
#include "modules/io_decode.h"

#define SEC 1000000000ull
#define POD "0f4b6bb5-2a5c-4a3e-9c59-4b1b8d7f3e21"
#define CID "5d4c3b2a19081726354453627180919a8b7c6d5e4f30211203948576a6b5c4d3"
#define KPATH "/kubepods/burstable/pod" POD "/" CID

/* ---- diskstats ---- */

static void test_diskstats(void **state)
{
	struct io_diskstat d;
	(void)state;
	/* 6.x: 17 numbers (reads, writes, in flight.., discards, flush) */
	assert_int_equal(io_diskstat_parse("   7       3 loop3 503 11 7722 88 1830 1117 623592 2078 2 988 2687 4 5 6 7 531 519\n", &d), 0);
	assert_int_equal(d.major, 7);
	assert_int_equal(d.minor, 3);
	assert_string_equal(d.name, "loop3");
	assert_int_equal(d.ops[SL_IO_OP_READ], 503);
	assert_int_equal(d.merged[SL_IO_OP_READ], 11);
	assert_int_equal(d.sectors[SL_IO_OP_READ], 7722);
	assert_int_equal(d.ticks_ms[SL_IO_OP_READ], 88);
	assert_int_equal(d.ops[SL_IO_OP_WRITE], 1830);
	assert_int_equal(d.sectors[SL_IO_OP_WRITE], 623592);
	assert_int_equal(d.in_flight, 2);
	assert_int_equal(d.io_ticks_ms, 988);
	assert_int_equal(d.time_in_queue_ms, 2687);
	assert_int_equal(d.ops[SL_IO_OP_DISCARD], 4);
	assert_int_equal(d.sectors[SL_IO_OP_DISCARD], 6);
	assert_int_equal(d.ops[SL_IO_OP_FLUSH], 531);
	assert_int_equal(d.ticks_ms[SL_IO_OP_FLUSH], 519);
	assert_int_equal(d.nfields, 20);
	/* pre-4.18: 11 numbers, no discard/flush */
	assert_int_equal(io_diskstat_parse(" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11", &d), 0);
	assert_int_equal(d.ops[SL_IO_OP_WRITE], 5);
	assert_int_equal(d.time_in_queue_ms, 11);
	assert_int_equal(d.ops[SL_IO_OP_DISCARD], 0);
	assert_int_equal(d.ops[SL_IO_OP_FLUSH], 0);
	/* 4.18..5.4: 15 numbers (discards, no flush) */
	assert_int_equal(io_diskstat_parse("259 0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15", &d), 0);
	assert_int_equal(d.ops[SL_IO_OP_DISCARD], 12);
	assert_int_equal(d.ops[SL_IO_OP_FLUSH], 0);
	/* not rows */
	assert_int_equal(io_diskstat_parse("", &d), -EINVAL);
	assert_int_equal(io_diskstat_parse("7 0 loop0 1 2 3", &d), -EINVAL);
	assert_int_equal(io_diskstat_parse("7 0 loop0 1 2 3 4 5 6 7 8 9 10 x", &d), -EINVAL);
	assert_int_equal(io_diskstat_parse("a b loop0 1 2 3 4 5 6 7 8 9 10 11", &d), -EINVAL);
	assert_int_equal(io_diskstat_parse(NULL, &d), -EINVAL);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(io_op_name(SL_IO_OP_READ), "read");
	assert_string_equal(io_op_name(SL_IO_OP_WRITE), "write");
	assert_string_equal(io_op_name(SL_IO_OP_FLUSH), "flush");
	assert_string_equal(io_op_name(SL_IO_OP_DISCARD), "discard");
	assert_string_equal(io_op_name(SL_IO_OP_OTHER), "other");
	assert_string_equal(io_op_name(SL_IO_NOPS), "unknown");
	assert_int_equal(io_dev_major((259u << 20) | 7), 259);
	assert_int_equal(io_dev_minor((259u << 20) | 7), 7);
}

/* ---- slow_io ---- */

static struct sl_io_slow_event sample(void)
{
	struct sl_io_slow_event e;
	memset(&e, 0, sizeof(e));
	e.hdr.type = SL_EV_IO_SLOW;
	e.task.pid = 4242;
	e.task.tid = 4243;
	memcpy(e.task.comm, "dd", 2);
	e.key.blkcg_id = 5151;
	e.key.blkcg_hid = 7;
	e.key.dev = (7u << 20) | 3;
	e.key.op = SL_IO_OP_READ;
	e.sector = 2048;
	e.queue_ns = 12000;
	e.device_ns = 2310000;
	e.truncated_count = 3;
	e.bytes = 4096;
	e.cmd_flags = 0x800;
	e.queued = 1;
	return e;
}

static void test_slow(void **state)
{
	struct sl_io_slow_event e = sample();
	json_t *o;
	(void)state;

	o = io_slow_fields(&e, sizeof(e), "loop3");
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(o, "tid")), 4243);
	assert_string_equal(json_string_value(json_object_get(o, "disk")), "7:3");
	assert_string_equal(json_string_value(json_object_get(o, "disk_name")), "loop3");
	assert_int_equal(json_integer_value(json_object_get(o, "sector")), 2048);
	assert_int_equal(json_integer_value(json_object_get(o, "bytes")), 4096);
	assert_string_equal(json_string_value(json_object_get(o, "op")), "read");
	assert_int_equal(json_integer_value(json_object_get(o, "queue_ns")), 12000);
	assert_int_equal(json_integer_value(json_object_get(o, "device_ns")), 2310000);
	assert_int_equal(json_integer_value(json_object_get(o, "total_ns")), 2322000);
	assert_true(json_is_true(json_object_get(o, "queued")));
	assert_int_equal(json_integer_value(json_object_get(o, "truncated_count")), 3);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "blkcg"), "cgroup_id")), 5151);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "blkcg"), "hierarchy_id")), 7);
	json_decref(o);
	/* a flush: no sector; no name known */
	e.sector = (uint64_t)-1;
	e.key.op = SL_IO_OP_FLUSH;
	o = io_slow_fields(&e, sizeof(e), NULL);
	assert_non_null(o);
	assert_null(json_object_get(o, "sector"));
	assert_string_equal(json_string_value(json_object_get(o, "disk_name")), "");
	assert_string_equal(json_string_value(json_object_get(o, "op")), "flush");
	json_decref(o);
	/* short record, wrong type */
	assert_null(io_slow_fields(&e, sizeof(e) - 1, NULL));
	e.hdr.type = SL_EV_IO_SLOW + 1;
	assert_null(io_slow_fields(&e, sizeof(e), NULL));
}

/* ---- blkcg mapping on fixture trees ---- */

struct fx {
	char top[64];
	char v2[128], mem[128], blk[128];
};

static void xmkdir(const char *base, const char *rel)
{
	char p[PATH_MAX];
	size_t bl = strlen(base);
	snprintf(p, sizeof(p), "%s%s", base, rel);
	for (char *s = p + bl + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, 0755) && errno != EEXIST)
				fail_msg("mkdir %s: %s", p, strerror(errno));
			*s = '/';
		}
	if (mkdir(p, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", p, strerror(errno));
}

static uint64_t ino_of(const char *base, const char *rel)
{
	char p[PATH_MAX];
	struct stat sb;
	snprintf(p, sizeof(p), "%s%s", base, rel);
	assert_int_equal(stat(p, &sb), 0);
	return (uint64_t)sb.st_ino;
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	snprintf(f->top, sizeof(f->top), "/tmp/sl-io-XXXXXX");
	if (!mkdtemp(f->top))
		return -1;
	snprintf(f->v2, sizeof(f->v2), "%s/unified", f->top);
	snprintf(f->mem, sizeof(f->mem), "%s/memory", f->top);
	snprintf(f->blk, sizeof(f->blk), "%s/blkio", f->top);
	xmkdir(f->v2, "");
	xmkdir(f->mem, "");
	xmkdir(f->blk, "");
	xmkdir(f->v2, KPATH);
	xmkdir(f->mem, KPATH);
	xmkdir(f->blk, KPATH);
	xmkdir(f->blk, "/system.slice/only-blkio.service");
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[PATH_MAX];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->top);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

/* Pure v2: the blkcg is a v2 cgroup (hierarchy 0); the pair is {id, 0} and
 * the attribution cache over the fixture v2 mount names the container. */
static void test_blkcg_pure_v2(void **state)
{
	struct fx *f = *state;
	struct sl_cg_mounts m;
	struct sl_attr_cache_config cfg = {.capacity = 64, .positive_ttl_ns = 300 * SEC, .negative_ttl_ns = 30 * SEC,
					   .rewalk_interval_ns = SEC};
	struct sl_attr_cache *ac;
	struct io_blkcg_cache *c;
	struct sl_attr at;
	uint64_t v2, v1, id = ino_of(f->v2, KPATH);
	char path[512];
	int hier = -1;

	memset(&m, 0, sizeof(m));
	snprintf(m.v2, sizeof(m.v2), "%s", f->v2);
	m.v2_root_id = ino_of(f->v2, "");
	m.v1_hierarchy_id = -1;
	c = io_blkcg_new(&m, 16, SEC);
	assert_non_null(c);
	assert_int_equal(io_blkcg_pair(c, 0, id, SEC, &v2, &v1, NULL, 0), 1);
	assert_int_equal(v2, id);
	assert_int_equal(v1, 0);
	/* no v1 hierarchy on this host: a non-zero hierarchy id maps to nothing */
	assert_int_equal(io_blkcg_pair(c, 7, id, SEC, &v2, &v1, NULL, 0), 0);
	assert_int_equal(v2, 0);
	/* id 0 (no blkg): the host */
	assert_int_equal(io_blkcg_pair(c, 0, 0, SEC, &v2, &v1, NULL, 0), 0);
	assert_int_equal(io_blkcg_walks(c), 0);

	ac = sl_attr_cache_new(&cfg, &m);
	assert_non_null(ac);
	io_blkcg_pair(c, 0, id, SEC, &v2, &v1, NULL, 0);
	assert_int_equal(sl_attr_cache_resolve(ac, v2, v1, SEC, &at, path, sizeof(path), &hier), 1);
	assert_int_equal(at.is_container, SL_YES);
	assert_string_equal(at.container_id, CID);
	assert_string_equal(at.pod_uid, POD);
	assert_string_equal(path, KPATH);
	assert_int_equal(hier, SL_CG_V2);
	sl_attr_cache_free(ac);
	io_blkcg_free(c);
}

/* Hybrid: attribution on memory (hierarchy 4), the blkcg on blkio
 * (hierarchy 7): found by inode under the blkio mount, mapped by path. */
static void test_blkcg_hybrid(void **state)
{
	struct fx *f = *state;
	struct sl_cg_mounts m;
	struct io_blkcg_cache *c;
	uint64_t v2, v1, bid = ino_of(f->blk, KPATH);
	char rel[512];

	memset(&m, 0, sizeof(m));
	snprintf(m.v2, sizeof(m.v2), "%s", f->v2);
	snprintf(m.v1, sizeof(m.v1), "%s", f->mem);
	snprintf(m.v1_controller, sizeof(m.v1_controller), "memory");
	snprintf(m.v1_ctrl[SL_CG_MEMORY], sizeof(m.v1_ctrl[0]), "%s", f->mem);
	snprintf(m.v1_ctrl[SL_CG_BLKIO], sizeof(m.v1_ctrl[0]), "%s", f->blk);
	m.v1_hierarchy_id = 4;
	c = io_blkcg_new(&m, 16, 5 * SEC);
	assert_non_null(c);
	/* the attribution controller's own hierarchy: {0, id} without a walk */
	assert_int_equal(io_blkcg_pair(c, 4, 777, SEC, &v2, &v1, NULL, 0), 1);
	assert_int_equal(v2, 0);
	assert_int_equal(v1, 777);
	assert_int_equal(io_blkcg_walks(c), 0);
	/* blkio: both inodes of the same path */
	assert_int_equal(io_blkcg_pair(c, 7, bid, SEC, &v2, &v1, rel, sizeof(rel)), 1);
	assert_int_equal(v2, ino_of(f->v2, KPATH));
	assert_int_equal(v1, ino_of(f->mem, KPATH));
	assert_string_equal(rel, KPATH);
	assert_int_equal(io_blkcg_walks(c), 1);
	/* cached: no second walk */
	assert_int_equal(io_blkcg_pair(c, 7, bid, 2 * SEC, &v2, &v1, NULL, 0), 1);
	assert_int_equal(io_blkcg_walks(c), 1);
	/* the blkio root: "/" on every mount */
	assert_int_equal(io_blkcg_pair(c, 7, ino_of(f->blk, ""), SEC, &v2, &v1, rel, sizeof(rel)), 1);
	assert_int_equal(v2, ino_of(f->v2, ""));
	assert_string_equal(rel, "/");
	/* a blkio-only cgroup: nothing on the other hierarchies */
	assert_int_equal(io_blkcg_pair(c, 7, ino_of(f->blk, "/system.slice/only-blkio.service"), SEC, &v2, &v1, NULL, 0),
			 0);
	/* an unknown id: not found, retried only after retry_ns */
	uint64_t w = io_blkcg_walks(c);
	assert_int_equal(io_blkcg_pair(c, 7, 123456789, SEC, &v2, &v1, NULL, 0), 0);
	assert_int_equal(io_blkcg_walks(c), w + 1);
	assert_int_equal(io_blkcg_pair(c, 7, 123456789, 2 * SEC, &v2, &v1, NULL, 0), 0);
	assert_int_equal(io_blkcg_walks(c), w + 1);
	assert_int_equal(io_blkcg_pair(c, 7, 123456789, 7 * SEC, &v2, &v1, NULL, 0), 0);
	assert_int_equal(io_blkcg_walks(c), w + 2);
	io_blkcg_free(c);
	/* no blkio mount known: another hierarchy maps to nothing */
	m.v1_ctrl[SL_CG_BLKIO][0] = 0;
	c = io_blkcg_new(&m, 16, SEC);
	assert_int_equal(io_blkcg_pair(c, 7, bid, SEC, &v2, &v1, NULL, 0), 0);
	io_blkcg_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diskstats),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_slow),
		cmocka_unit_test_setup_teardown(test_blkcg_pure_v2, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_blkcg_hybrid, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
