/* gpu module: the NVRM Xid kernel-log line parser against the published
 * formats (NVIDIA "XID Errors": current drivers with pid=/name=, the
 * '<unknown>' forms, older drivers without PCI: and pid), the kmsg record
 * layer on top (a fixture record as src/common/kmsg.h reads it), and lines
 * that must not parse. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "common/kmsg.h"
#include "modules/gpu_xid.h"

static void current_format(void **state)
{
	(void)state;
	struct gpu_xid_line x;

	assert_int_equal(gpu_xid_parse("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
				       &x),
			 0);
	assert_int_equal(x.domain, 0);
	assert_int_equal(x.bus, 0x3b);
	assert_int_equal(x.device, 0);
	assert_int_equal(x.xid, 79);
	assert_int_equal(x.pid, 1234);
	assert_string_equal(x.name, "python");
	assert_string_equal(x.detail, "GPU has fallen off the bus.");
	assert_int_equal(gpu_xid_parse("NVRM: Xid (PCI:0001:b3:1f): 31, pid=2975, name=python3, Ch 00000010, intr "
				       "10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f_00000000.",
				       &x),
			 0);
	assert_int_equal(x.domain, 1);
	assert_int_equal(x.bus, 0xb3);
	assert_int_equal(x.device, 0x1f);
	assert_int_equal(x.xid, 31);
	assert_string_equal(x.name, "python3");
	assert_true(!strncmp(x.detail, "Ch 00000010", 11));
}

static void unknown_and_old(void **state)
{
	(void)state;
	struct gpu_xid_line x;

	assert_int_equal(gpu_xid_parse("NVRM: Xid (PCI:0000:02:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: "
				       "ESR 0x404490=0x80000001",
				       &x),
			 0);
	assert_int_equal(x.xid, 13);
	assert_int_equal(x.pid, 0);
	assert_string_equal(x.name, "");
	assert_true(!strncmp(x.detail, "Graphics Exception", 18));
	assert_int_equal(gpu_xid_parse("NVRM: Xid (0000:03:00): 14, Channel 00000001", &x), 0);
	assert_int_equal(x.bus, 3);
	assert_int_equal(x.xid, 14);
	assert_int_equal(x.pid, 0);
	assert_string_equal(x.detail, "Channel 00000001");
	/* a name longer than the field: cut, the rest still parsed */
	char line[400];
	snprintf(line, sizeof(line), "NVRM: Xid (PCI:0000:3b:00): 48, pid=9, name=%0200d, DBE", 7);
	assert_int_equal(gpu_xid_parse(line, &x), 0);
	assert_int_equal(strlen(x.name), sizeof(x.name) - 1);
	assert_string_equal(x.detail, "DBE");
}

static void not_xid(void **state)
{
	(void)state;
	struct gpu_xid_line x;
	const char *bad[] = {
		"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05",
		"NVRM: Xid (PCI:0000:3b:00) 79",
		"NVRM: Xid (PCI:zz:3b:00): 79, x",
		"NVRM: Xid (PCI:0000:3b): 79",
		"NVRM: Xid (PCI:0000:1ff:00): 79",
		"NVRM: Xid (PCI:0000:3b:00): , pid=1",
		"NVRM: Xid (PCI:0000:3b:00): 99999999999, pid=1",
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (gpu_xid_parse(bad[i], &x) == 0)
			fail_msg("parsed: '%s'", bad[i]);
}

static void through_kmsg(void **state)
{
	(void)state;
	struct sl_kmsg_rec r;
	struct gpu_xid_line x;
	const char *rec = "3,5123,987654321,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=train, GPU has fallen off the bus.";

	assert_int_equal(sl_kmsg_parse(rec, strlen(rec), &r), 0);
	assert_int_equal(r.level, 3);
	assert_int_equal(gpu_xid_parse(r.msg, &x), 0);
	assert_int_equal(x.pid, 4242);
	assert_string_equal(x.name, "train");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(current_format),
		cmocka_unit_test(unknown_and_old),
		cmocka_unit_test(not_xid),
		cmocka_unit_test(through_kmsg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
