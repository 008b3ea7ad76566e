/* hw module decoders: the sysfs parsers (u64, link speed, aer_dev_* files,
 * BDF), a scan of the checked-in fixture tree (tests/fixtures/hw/sys) with
 * its exact values, attribute hygiene (FIFO, symlink, directory as an
 * attribute, hw.max_entries), the corrected-error rate detector (once per
 * crossing, re-arm, counter reset, window), and the RAS record decoders. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/module.h"
#include "modules/hw_decode.h"
#include "modules/hw_rate.h"
#include "modules/hw_sysfs.h"

#define FIX "tests/fixtures/hw/sys"

static void parsers(void **state)
{
	(void)state;
	uint64_t v;
	double g;

	assert_int_equal(hw_parse_u64("123\n", &v), 0);
	assert_int_equal(v, 123);
	assert_int_equal(hw_parse_u64("18446744073709551615", &v), 0);
	assert_int_equal(hw_parse_u64("18446744073709551616", &v), -EINVAL);
	assert_int_equal(hw_parse_u64("-1", &v), -EINVAL);
	assert_int_equal(hw_parse_u64("12x", &v), -EINVAL);
	assert_int_equal(hw_parse_u64("", &v), -EINVAL);
	/* drivers/pci/pci.h pci_speed_string() and older kernels' forms */
	assert_int_equal(hw_parse_link_speed("16.0 GT/s PCIe", &g), 0);
	assert_true(g == 16.0);
	assert_int_equal(hw_parse_link_speed("2.5 GT/s PCIe", &g), 0);
	assert_true(g == 2.5);
	assert_int_equal(hw_parse_link_speed("5 GT/s", &g), 0);
	assert_true(g == 5.0);
	assert_int_equal(hw_parse_link_speed("Unknown", &g), -EINVAL);
	assert_int_equal(hw_parse_link_speed("8.0 MB/s", &g), -EINVAL);
	assert_int_equal(hw_parse_link_speed("", &g), -EINVAL);
	assert_true(hw_is_bdf("0000:3b:00.0"));
	assert_true(hw_is_bdf("10000:3b:00.0") == 0);
	assert_true(hw_is_bdf("0000:3b:00") == 0);
	assert_true(hw_is_bdf("../../etc") == 0);
}

struct lines {
	int n;
	char name[32][32];
	uint64_t v[32];
};

static void line_cb(const char *name, uint64_t v, void *arg)
{
	struct lines *l = arg;
	if (l->n < 32) {
		snprintf(l->name[l->n], 32, "%s", name);
		l->v[l->n++] = v;
	}
}

static void aer_file(void **state)
{
	(void)state;
	struct lines l = {0};
	/* Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats example */
	const char *txt = "RxErr 0\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\n"
			  "HeaderOF 0\nTOTAL_ERR_COR 2\n";
	assert_int_equal(hw_parse_aer(txt, line_cb, &l), 9);
	assert_string_equal(l.name[8], "TOTAL_ERR_COR");
	assert_int_equal(l.v[8], 2);
	memset(&l, 0, sizeof(l));
	assert_int_equal(hw_parse_aer("RxErr 1\nbad line here\n", line_cb, &l), -EINVAL);
	assert_int_equal(l.n, 1); /* the line before was delivered */
	assert_int_equal(hw_parse_aer("Rx\"Err 1\n", line_cb, &l), -EINVAL);
	assert_int_equal(hw_parse_aer("", line_cb, &l), 0);
}

static void fixture_scan(void **state)
{
	(void)state;
	struct hw_scan s;

	assert_int_equal(hw_scan_run(FIX, 65536, 1, &s), 0);
	assert_int_equal(s.nmc, 1);
	assert_string_equal(s.mc[0].controller, "0");
	assert_string_equal(s.mc[0].name, "Skylake Socket#0 IMC#0");
	/* the controller has dimm<K>: those, not the csrows */
	assert_int_equal(s.nrows, 2);
	assert_true(s.rows[0].is_dimm && s.rows[1].is_dimm);
	assert_string_equal(s.rows[1].row, "1");
	assert_string_equal(s.rows[1].label, "CPU_SrcID#0_MC#0_Chan#1_DIMM#0");
	/* 9 correctable + 2 x 19 uncorrectable lines of 0000:3b:00.0 */
	assert_int_equal(s.naer, 9 + 19 + 19);
	assert_int_equal(s.aer_devs, 1);
	assert_int_equal(s.pci_dirs, 2);
	assert_int_equal(s.nlinks, 1);
	assert_string_equal(s.links[0].bdf, "0000:3b:00.0");
	assert_int_equal(s.links[0].width, 16);
	assert_true(s.links[0].speed == 16.0 && !s.links[0].degraded);
	assert_int_equal(s.ib_ports, 1);
	int rcv = 0, lifespan = 0;
	for (size_t i = 0; i < s.nib; i++) {
		if (!s.ib[i].hw && !strcmp(s.ib[i].name, "port_rcv_data")) {
			rcv = 1;
			assert_int_equal(s.ib[i].v, 2512);
		}
		lifespan |= !strcmp(s.ib[i].name, "lifespan");
	}
	assert_true(rcv && !lifespan);
	assert_int_equal(s.errors, 0);
	hw_scan_free(&s);
	/* the bound: entries past max_entries are counted, not kept */
	assert_int_equal(hw_scan_run(FIX, 20, 1, &s), 0);
	assert_int_equal(s.nmc + s.nrows + s.naer + s.nlinks + s.nib, 20);
	assert_true(s.cut > 0);
	hw_scan_free(&s);
	/* a missing root is an empty scan */
	assert_int_equal(hw_scan_run("/nonexistent-sl-hw", 100, 1, &s), 0);
	assert_int_equal(s.nmc + s.naer + s.nib, 0);
	hw_scan_free(&s);
}

static void hostile_attrs(void **state)
{
	(void)state;
	char d[] = "/tmp/sl-hw-unit.XXXXXX", p[256], buf[64];
	assert_non_null(mkdtemp(d));
	int fd = open(d, O_RDONLY | O_DIRECTORY);
	snprintf(p, sizeof(p), "%s/fifo", d);
	assert_int_equal(mkfifo(p, 0600), 0);
	snprintf(p, sizeof(p), "%s/link", d);
	assert_int_equal(symlink("/proc/self/status", p), 0);
	snprintf(p, sizeof(p), "%s/dir", d);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/ok", d);
	FILE *f = fopen(p, "w");
	fputs("42\n", f);
	fclose(f);
	assert_int_equal(hw_read_attr(fd, "fifo", buf, sizeof(buf)), -EINVAL); /* opened non-blocking: no hang */
	assert_true(hw_read_attr(fd, "link", buf, sizeof(buf)) < 0);          /* O_NOFOLLOW */
	assert_true(hw_read_attr(fd, "dir", buf, sizeof(buf)) < 0);
	assert_int_equal(hw_read_attr(fd, "ok", buf, sizeof(buf)), 2);
	assert_string_equal(buf, "42");
	assert_int_equal(hw_read_attr(fd, "missing", buf, sizeof(buf)), -ENOENT);
	close(fd);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
}

#define S 1000000000ULL

static void rate(void **state)
{
	(void)state;
	struct hw_rate *r = hw_rate_new();
	uint64_t w;
	int crossings = 0;

	assert_non_null(r);
	/* +2 per second, threshold 5 in a 10 s window: one crossing at 6 */
	for (uint64_t t = 0; t <= 20; t++)
		crossings += hw_rate_update(r, "k", t * S, t * 2, 10 * S, 5, &w);
	assert_int_equal(crossings, 1);
	assert_int_equal(w, 20); /* 40 - 20 (the sample 10 s ago) */
	/* flat: the windowed count falls under the threshold and re-arms */
	for (uint64_t t = 21; t <= 40; t++)
		crossings += hw_rate_update(r, "k", t * S, 40, 10 * S, 5, &w);
	assert_int_equal(w, 0);
	assert_int_equal(crossings, 1);
	/* a burst crosses again: the second crossing */
	crossings += hw_rate_update(r, "k", 41 * S, 50, 10 * S, 5, &w);
	assert_int_equal(crossings, 2);
	assert_int_equal(w, 10);
	/* counter reset (driver reload): history restarts, no crossing */
	crossings += hw_rate_update(r, "k", 42 * S, 3, 10 * S, 5, &w);
	assert_int_equal(w, 0);
	assert_int_equal(crossings, 2);
	/* errors before the first sample do not count */
	assert_int_equal(hw_rate_update(r, "new", 0, 1000, 10 * S, 5, &w), 0);
	assert_int_equal(w, 0);
	/* threshold 0 = off */
	assert_int_equal(hw_rate_update(r, "off", 0, 0, 10 * S, 0, &w), 0);
	assert_int_equal(hw_rate_update(r, "off", S, 100, 10 * S, 0, &w), 0);
	/* fast samples (more than 64 per window) stay bounded and exact */
	for (uint64_t t = 0; t < 10000; t++)
		hw_rate_update(r, "fast", t * (S / 100), t, 10 * S, 1000000, &w);
	/* the baseline is the newest sample at least a window old, samples a
	 * window/64 apart: the counted span is window .. window x 65/64 */
	assert_true(w >= 1000 && w <= 1016);
	assert_int_equal(hw_rate_count(r), 4);
	assert_int_equal(hw_rate_expire(r, 50 * S), 3); /* only "fast" (t up to 99.99 s) stays */
	hw_rate_free(r);
}

static void ras_decode(void **state)
{
	(void)state;
	struct sl_hw_ras_event e;
	unsigned kind;
	char subj[96];
	int cpu;
	json_t *o;

	memset(&e, 0, sizeof(e));
	e.hdr.type = SL_EV_HW_MC;
	e.hdr.cpu = 1;
	e.u.mc.error_type = 1;
	e.u.mc.error_count = 1;
	e.u.mc.mc_index = 2;
	e.u.mc.top_layer = 0;
	e.u.mc.middle_layer = 3;
	e.u.mc.lower_layer = -1;
	e.u.mc.address = 0x1234000;
	e.u.mc.grain_bits = 6;
	snprintf(e.u.mc.label, sizeof(e.u.mc.label), "CPU_SrcID#0_MC#2_Chan#3_DIMM#0");
	memset(e.u.mc.msg, 'x', sizeof(e.u.mc.msg)); /* not NUL-terminated by the record */
	o = hw_ras_fields(&e, sizeof(e), &kind, subj, sizeof(subj), &cpu);
	assert_non_null(o);
	assert_int_equal(kind, HW_K_MC);
	assert_string_equal(subj, "edac:mc2");
	assert_string_equal(json_string_value(json_object_get(o, "error_type")), "uncorrected");
	assert_string_equal(json_string_value(json_object_get(o, "address")), "0x0000000001234000");
	assert_int_equal(json_integer_value(json_object_get(o, "grain_bytes")), 64);
	assert_int_equal(strlen(json_string_value(json_object_get(o, "msg"))), SL_HW_STR);
	assert_int_equal(hw_mc_severity(o), SL_SEV_ERROR);
	json_decref(o);

	memset(&e, 0, sizeof(e));
	e.hdr.type = SL_EV_HW_AER;
	e.u.aer.severity = 2;
	e.u.aer.status = 0x1 | 0x40 | 0x80000000u;
	snprintf(e.u.aer.dev_name, sizeof(e.u.aer.dev_name), "0000:3b:00.0");
	o = hw_ras_fields(&e, sizeof(e), &kind, subj, sizeof(subj), &cpu);
	assert_int_equal(kind, HW_K_AER);
	assert_string_equal(subj, "pci:0000:3b:00.0");
	json_t *bits = json_object_get(o, "status_bits");
	assert_int_equal(json_array_size(bits), 3);
	assert_string_equal(json_string_value(json_array_get(bits, 0)), "RxErr");
	assert_string_equal(json_string_value(json_array_get(bits, 1)), "BadTLP");
	assert_string_equal(json_string_value(json_array_get(bits, 2)), "bit31");
	assert_null(json_object_get(o, "tlp_header"));
	assert_int_equal(hw_aer_severity(o), SL_SEV_WARNING);
	json_decref(o);

	memset(&e, 0, sizeof(e));
	e.hdr.type = SL_EV_HW_MCE;
	e.u.mce.cpu = 3;
	e.u.mce.status = (1ULL << 63) | (1ULL << 61) | (1ULL << 57);
	o = hw_ras_fields(&e, sizeof(e), &kind, subj, sizeof(subj), &cpu);
	assert_int_equal(kind, HW_K_MCE);
	assert_string_equal(subj, "");
	assert_int_equal(cpu, 3);
	assert_int_equal(hw_mce_severity(o), SL_SEV_CRITICAL);
	json_decref(o);

	/* short records and unknown types are refused */
	assert_null(hw_ras_fields(&e, sizeof(e) - 1, &kind, subj, sizeof(subj), &cpu));
	e.hdr.type = 5;
	assert_null(hw_ras_fields(&e, sizeof(e), &kind, subj, sizeof(subj), &cpu));

	struct hw_link now = {.bdf = "0000:3b:00.0", .speed = 16, .max_speed = 16, .width = 4, .max_width = 16,
			      .degraded = 1},
		       prev = now;
	prev.width = 16;
	prev.degraded = 0;
	o = hw_link_fields(&now, &prev);
	assert_int_equal(json_integer_value(json_object_get(o, "previous_width")), 16);
	assert_int_equal(hw_link_severity(o), SL_SEV_WARNING);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parsers),      cmocka_unit_test(aer_file), cmocka_unit_test(fixture_scan),
		cmocka_unit_test(hostile_attrs), cmocka_unit_test(rate),    cmocka_unit_test(ras_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
