/* Each decoder's JSON output against its kind's declared schema (module
 * contract: struct sl_event_kind.fields): every field emitted is declared
 * with the right JSON type, every declared non-optional field is present.
 * Every kind of the registry must have a case here. Also the kind table
 * itself (sl_kinds_build over the registry: unique names, DETAILS checked)
 * and the schema route's body. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/kinds.h"
#include "modules/proc.h"
#include "modules/sched.h"
#include "modules/mem_decode.h"
#include "modules/stall_decode.h"

#include "modules/io_decode.h"
#include "modules/net_decode.h"
#include "modules/hw_decode.h"
#include "modules/gpu_xid.h"

static int type_ok(int t, const json_t *v)
{
	switch (t) {
	case SL_FT_INT: return json_is_integer(v);
	case SL_FT_UINT: return json_is_integer(v) && json_integer_value(v) >= 0;
	case SL_FT_REAL: return json_is_number(v);
	case SL_FT_BOOL: return json_is_boolean(v);
	case SL_FT_STR: return json_is_string(v);
	case SL_FT_OBJ: return json_is_object(v);
	case SL_FT_ARRAY: return json_is_array(v);
	}
	return 0;
}

/* fields against kind name; *present gets which declared fields were there */
static void check(const struct sl_kinds *ks, const char *name, json_t *o, unsigned *present)
{
	int i = sl_kinds_find(ks, name);
	const char *key;
	json_t *v;

	if (i < 0)
		fail_msg("no kind '%s'", name);
	assert_non_null(o);
	const struct sl_event_kind *k = ks->e[i].k;
	json_object_foreach(o, key, v)
	{
		unsigned f;
		for (f = 0; f < k->nfields && strcmp(k->fields[f].name, key); f++)
			;
		if (f == k->nfields)
			fail_msg("%s: field '%s' emitted but not declared", name, key);
		if (!type_ok(k->fields[f].type, v))
			fail_msg("%s: field '%s' is not a JSON %s", name, key, sl_field_type_name(k->fields[f].type));
		*present |= 1u << f;
	}
	for (unsigned f = 0; f < k->nfields; f++)
		if (!(k->fields[f].flags & SL_FF_OPTIONAL) && !(*present & (1u << f)))
			fail_msg("%s: declared field '%s' missing", name, k->fields[f].name);
	json_decref(o);
}

static struct sl_task_id task(uint32_t pid, const char *comm)
{
	struct sl_task_id t = {.pid = pid, .tid = pid, .ppid = 1, .cgroup_id = 42};
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	return t;
}

static void decoders_match_schema(void **state)
{
	(void)state;
	struct sl_kinds ks;
	char err[256];
	static const char *done[SL_MAX_KINDS];
	size_t nd = 0;
	unsigned present;

	assert_int_equal(sl_kinds_build(&ks, sl_registry, sl_registry_count, NULL, err, sizeof(err)), 0);

	{ /* exec, with a redacted argument (the optional args_redacted) */
		static struct sl_exec_event e;
		static const char pat[1][64] = {"password="};
		memset(&e, 0, sizeof(e));
		e.hdr.type = SL_EV_EXEC;
		e.task = task(10, "sh");
		snprintf(e.filename, sizeof(e.filename), "/bin/sh");
		memcpy(e.argv, "sh\0password=x\0", 15);
		e.argv_len = 15;
		e.truncated_count = 2;
		present = 0;
		check(&ks, "exec", sl_proc_exec_fields_redact(&e, sizeof(e), pat, 1), &present);
		present = 0;
		check(&ks, "exec", sl_proc_exec_fields(&e, sizeof(e)), &present);
		done[nd++] = "exec";
	}
	{
		struct sl_exit_event e = {.hdr.type = SL_EV_EXIT, .exit_code = -1, .signal = 9, .lifetime_ns = 5};
		e.task = task(11, "x");
		present = 0;
		check(&ks, "exit", sl_proc_exit_fields(&e, sizeof(e)), &present);
		done[nd++] = "exit";
	}
	{
		struct sl_signal_event e = {.hdr.type = SL_EV_SIGNAL, .signal = 11, .si_code = -6};
		e.sender = task(12, "kill");
		e.target = task(13, "victim");
		present = 0;
		check(&ks, "signal", sl_proc_signal_fields(NULL, &e, sizeof(e)), &present);
		done[nd++] = "signal";
	}
	{ /* memcg (with the optional limit) and global */
		struct sl_oom_event e = {.hdr.type = SL_EV_OOM, .constraint = SL_OOM_MEMCG, .memcg_limit_bytes = 1 << 25};
		e.actor = task(14, "hog");
		e.victim = task(14, "hog");
		present = 0;
		check(&ks, "oom", sl_proc_oom_fields(NULL, &e, sizeof(e)), &present);
		e.constraint = SL_OOM_GLOBAL;
		present = 0;
		check(&ks, "oom", sl_proc_oom_fields(NULL, &e, sizeof(e)), &present);
		done[nd++] = "oom";
	}
	{
		struct sl_sched_delay_event e = {.hdr.type = SL_EV_SCHED_DELAY, .hdr.cpu = 1, .wait_ns = 2000000};
		e.task = task(15, "spin");
		e.neighbour = task(16, "other");
		present = 0;
		check(&ks, "sched_delay", sl_sched_delay_fields(NULL, &e, sizeof(e)), &present);
		done[nd++] = "sched_delay";
	}
	{ /* memcg reclaim, then compaction (the optional compaction_status fields) */
		struct sl_mem_stall_event e = {.hdr.type = SL_EV_MEM_STALL, .duration_ns = 60000000, .nr_scanned = 64,
					       .nr_reclaimed = 32, .memcg_id = 77, .kind = SL_MEM_STALL_MEMCG_RECLAIM,
					       .memcg_src = SL_MEM_MEMCG_AT_MAX, .status = -1};
		e.task = task(17, "hog");
		present = 0;
		check(&ks, "mem_stall", sl_mem_stall_fields(&e, sizeof(e)), &present);
		e.kind = SL_MEM_STALL_COMPACTION;
		e.status = 5;
		present = 0;
		check(&ks, "mem_stall", sl_mem_stall_fields(&e, sizeof(e)), &present);
		done[nd++] = "mem_stall";
	}
	{ /* stall: hung_task with a stack and without (stack_error), cpu_stall,
	   the kernel-log kinds from decoded lines */
		uint64_t ips[2] = {0xffffffff81000010ull, 0xffffffff81000020ull};
		const char *err;
		present = 0;
		check(&ks, "hung_task", sl_stall_hung_fields("sandlens", 5, 11000000000ull, 10000000000ull, 2, 0, 1, 7,
							     sl_stall_stack_json(NULL, ips, 16, &err), err), &present);
		present = 0;
		check(&ks, "hung_task", sl_stall_hung_fields("kernel", 5, 120000000000ull, 120000000000ull, 0x102, 0, 0, 7,
							     sl_stall_stack_json(NULL, ips, -14, &err), err), &present);
		done[nd++] = "hung_task";
		struct sl_stall_cpu_event ce = {.hdr.type = SL_EV_STALL_CPU, .hdr.cpu = 1, .late_ns = 20000000,
						.gap_ns = 21000000, .period_ns = 1000000};
		present = 0;
		check(&ks, "cpu_stall", sl_stall_cpu_fields(&ce, sizeof(ce), 10000000, json_object(),
							    sl_stall_stack_json(NULL, ips, 0, &err), err), &present);
		done[nd++] = "cpu_stall";
		static const char *const lines[3] = {"watchdog: BUG: soft lockup - CPU#3 stuck for 23s! [kworker/3:1:123]",
						     "watchdog: Watchdog detected hard LOCKUP on cpu 5",
						     "rcu: INFO: rcu_sched self-detected stall on CPU"};
		static const char *const kinds[3] = {"soft_lockup", "hard_lockup", "rcu_stall"};
		for (int i = 0; i < 3; i++) {
			struct sl_stall_klog k;
			sl_stall_klog_decode(lines[i], &k);
			present = 0;
			check(&ks, kinds[i], sl_stall_klog_fields(&k, lines[i]), &present);
			done[nd++] = kinds[i];
		}
	}
	{ /* a read, then a flush (no sector) */
		struct sl_io_slow_event e = {.hdr.type = SL_EV_IO_SLOW, .key = {.blkcg_id = 9, .blkcg_hid = 7,
					     .dev = (7u << 20) | 3, .op = SL_IO_OP_READ}, .sector = 8, .bytes = 4096,
					     .device_ns = 200000000, .queued = 1};
		e.task = task(18, "dd");
		present = 0;
		check(&ks, "slow_io", io_slow_fields(&e, sizeof(e), "loop3"), &present);
		e.sector = (__u64)-1;
		e.key.op = SL_IO_OP_FLUSH;
		present = 0;
		check(&ks, "slow_io", io_slow_fields(&e, sizeof(e), NULL), &present);
		done[nd++] = "slow_io";
	}
	{ /* net: a drop (IPv4 TCP, with a stack) and a SYN-ACK retransmit (IPv6) */
		struct sl_net_event e = {.hdr.type = SL_EV_NET_DROP, .reason = 12, .family = 2, .protocol = 6, .state = 1,
					 .sport = 80, .dport = 4000, .netns = 4026531840u, .nstack = 2,
					 .stack = {0xffffffff81000000ull, 0xffffffff81000100ull}};
		present = 0;
		check(&ks, "net_drop", sl_net_drop_fields(&e, sizeof(e), NULL), &present);
		done[nd++] = "net_drop";
		memset(&e, 0, sizeof(e));
		e.hdr.type = SL_EV_NET_RETRANS;
		e.family = 10;
		e.protocol = 6;
		e.kind = 1;
		e.segs = 1;
		present = 0;
		check(&ks, "tcp_retransmit", sl_net_retrans_fields(&e, sizeof(e)), &present);
		done[nd++] = "tcp_retransmit";
	}
	{ /* hw: every RAS record type, the optional AER tlp_header and memory-failure page_type */
		static const char *const names[] = {"hw_mc_error", "hw_aer_error", "hw_nonstd_error", "hw_arm_error",
						    "hw_mem_failure", "hw_mce"};
		for (unsigned t = SL_EV_HW_MC; t < SL_EV_HW_END; t++) {
			struct sl_hw_ras_event e;
			unsigned kind;
			char subj[96];
			int cpu;
			memset(&e, 0, sizeof(e));
			e.hdr.type = t;
			e.u.aer.tlp_header_valid = t == SL_EV_HW_AER;
			json_t *o = hw_ras_fields(&e, sizeof(e), &kind, subj, sizeof(subj), &cpu);
			assert_non_null(o);
			if (t == SL_EV_HW_MEM_FAILURE)
				json_object_set_new(o, "page_type", json_string("MF_MSG_BUDDY"));
			present = 0;
			check(&ks, names[t - SL_EV_HW_MC], o, &present);
			done[nd++] = names[t - SL_EV_HW_MC];
		}
		present = 0;
		check(&ks, "hw_error_rate",
		      hw_rate_fields("edac_dimm", "mc0/dimm0", "DIMM_A1", 12, 40, 600000000000ULL, 10), &present);
		done[nd++] = "hw_error_rate";
		struct hw_link l = {.bdf = "0000:3b:00.0", .speed = 16, .max_speed = 16, .width = 4, .max_width = 16,
				    .degraded = 1};
		present = 0;
		check(&ks, "hw_pcie_link", hw_link_fields(&l, &l), &present);
		present = 0;
		check(&ks, "hw_pcie_link", hw_link_fields(&l, NULL), &present);
		done[nd++] = "hw_pcie_link";
	}
	{ /* gpu_xid from NVML (no line) and from the kernel log, and of an unknown bus */
		struct gpu_xid_line x;
		assert_int_equal(gpu_xid_parse("NVRM: Xid (PCI:0000:3b:00): 79, pid=12, name=python, fell off", &x), 0);
		present = 0;
		check(&ks, "gpu_xid", gpu_xid_fields(0, "GPU-1", "00000000:3B:00.0", 48, NULL), &present);
		present = 0;
		check(&ks, "gpu_xid", gpu_xid_fields(0, "GPU-1", "00000000:3B:00.0", 79, &x), &present);
		present = 0;
		check(&ks, "gpu_xid", gpu_xid_fields(-1, NULL, "00000000:99:00.0", 79, &x), &present);
		done[nd++] = "gpu_xid";
	}
	/* every kind of the registry has a case above */
	for (unsigned i = 0; i < ks.n; i++) {
		size_t j;
		for (j = 0; j < nd && strcmp(done[j], ks.e[i].k->name); j++)
			;
		if (j == nd)
			fail_msg("kind '%s' (module %s) has no decoder case in test_kind_schema", ks.e[i].k->name,
				 ks.e[i].mod->name);
	}
}

/* The start-up checks refuse what they should. */
static const struct sl_field f_ok[] = {{"a", SL_FT_UINT, 0, "a"}};
static const struct sl_field f_common[] = {{"container_id", SL_FT_STR, 0, "clash"}};
static const struct sl_event_kind k_ok[] = {{"k_one", SL_SEV_INFO, NULL, f_ok, 1, "{a} {comm}", "doc"}};
static const struct sl_event_kind k_dup[] = {{"exec", SL_SEV_INFO, NULL, f_ok, 1, "{a}", "doc"}};
static const struct sl_event_kind k_badtpl[] = {{"k_two", SL_SEV_INFO, NULL, f_ok, 1, "{nope}", "doc"}};
static const struct sl_event_kind k_unterm[] = {{"k_three", SL_SEV_INFO, NULL, f_ok, 1, "{a", "doc"}};
static const struct sl_event_kind k_common[] = {{"k_four", SL_SEV_INFO, NULL, f_common, 1, "x", "doc"}};
static const struct sl_event_kind k_name[] = {{"Bad-Name", SL_SEV_INFO, NULL, f_ok, 1, "x", "doc"}};

static void build_checks(void **state)
{
	(void)state;
	struct sl_kinds ks;
	char err[256];
	const struct sl_event_kind *cases[] = {k_dup, k_badtpl, k_unterm, k_common, k_name};
	const char *want[] = {"already used by module proc", "unknown field 'nope'", "DETAILS template",
			      "common field", "name is not"};
	struct sl_module_ops t = {.name = "t", .kinds = k_ok, .nkinds = 1};
	const struct sl_module_ops *list[2] = {&sl_proc_module, &t};
	unsigned base[2];

	assert_int_equal(sl_kinds_build(&ks, list, 2, base, err, sizeof(err)), 0);
	assert_int_equal(base[1], SL_PROC_NKINDS);
	assert_int_equal(sl_kinds_find(&ks, "k_one"), SL_PROC_NKINDS);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t.kinds = cases[i];
		err[0] = 0;
		assert_int_equal(sl_kinds_build(&ks, list, 2, base, err, sizeof(err)), -1);
		if (!strstr(err, want[i]))
			fail_msg("case %zu: '%s' lacks '%s'", i, err, want[i]);
	}
}

static void schema_body(void **state)
{
	(void)state;
	struct sl_kinds ks;
	char err[256];
	assert_int_equal(sl_kinds_build(&ks, sl_registry, sl_registry_count, NULL, err, sizeof(err)), 0);
	json_t *s = sl_kinds_schema_json(&ks);
	assert_non_null(s);
	json_t *kinds = json_object_get(s, "kinds");
	assert_int_equal(json_array_size(kinds), ks.n);
	json_t *exec = NULL, *k;
	size_t i;
	json_array_foreach(kinds, i, k) if (!strcmp(json_string_value(json_object_get(k, "name")), "exec")) exec = k;
	assert_non_null(exec);
	assert_string_equal(json_string_value(json_object_get(exec, "module")), "proc");
	assert_string_equal(json_string_value(json_object_get(exec, "severity")), "info");
	json_t *f, *argv = NULL;
	json_array_foreach(json_object_get(exec, "fields"), i, f) if (!strcmp(json_string_value(json_object_get(f, "name")), "argv")) argv = f;
	assert_non_null(argv);
	assert_string_equal(json_string_value(json_object_get(argv, "type")), "array");
	assert_true(json_is_true(json_object_get(argv, "admin")));
	assert_true(json_array_size(json_object_get(s, "common_fields")) == sl_ncommon_fields);
	/* withholding removes exactly the admin fields */
	json_t *evs = json_pack("[{s:s,s:[s],s:s},{s:s,s:i}]", "type", "exec", "argv", "a", "filename", "/a", "type",
				"exit", "exit_code", 1);
	assert_int_equal(sl_kinds_withhold(&ks, evs), 1);
	assert_null(json_object_get(json_array_get(evs, 0), "argv"));
	assert_true(json_is_true(json_object_get(json_array_get(evs, 0), "argv_withheld")));
	assert_non_null(json_object_get(json_array_get(evs, 0), "filename"));
	json_decref(evs);
	json_decref(s);
}

/* The CLI's fixture (tests/unit/cases/schema_events.json, read by
 * test_cli_format) is the schema route's body for the registry: a kind
 * declared, changed or removed without the fixture fails here.
 * SL_WRITE_SCHEMA_FIXTURE=1 rewrites it from the declarations instead. */
#define SCHEMA_FIXTURE "tests/unit/cases/schema_events.json"
static void schema_fixture_is_declarations(void **state)
{
	(void)state;
	struct sl_kinds ks;
	char err[256];
	json_error_t je;
	assert_int_equal(sl_kinds_build(&ks, sl_registry, sl_registry_count, NULL, err, sizeof(err)), 0);
	json_t *s = sl_kinds_schema_json(&ks);
	assert_non_null(s);
	const char *w = getenv("SL_WRITE_SCHEMA_FIXTURE");
	if (w && !strcmp(w, "1")) {
		assert_int_equal(json_dump_file(s, SCHEMA_FIXTURE, JSON_INDENT(1) | JSON_PRESERVE_ORDER), 0);
		json_decref(s);
		return;
	}
	json_t *fx = json_load_file(SCHEMA_FIXTURE, 0, &je);
	if (!fx)
		fail_msg("%s: %s (line %d)", SCHEMA_FIXTURE, je.text, je.line);
	if (!json_equal(fx, s)) {
		char *a = json_dumps(s, JSON_COMPACT);
		fail_msg("%s differs from the declarations; rerun with SL_WRITE_SCHEMA_FIXTURE=1 and review the diff. "
			 "Declared: %.400s", SCHEMA_FIXTURE, a ? a : "?");
	}
	json_decref(fx);
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decoders_match_schema),
		cmocka_unit_test(build_checks),
		cmocka_unit_test(schema_body),
		cmocka_unit_test(schema_fixture_is_declarations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
