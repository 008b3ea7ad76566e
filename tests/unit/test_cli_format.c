/* The `sandlens events` table (src/cli/format.c and src/cli/schema.c,
 * compiled into this test): DETAILS rendered from the kinds' templates in
 * the schema fixture tests/unit/cases/schema_events.json (the body of GET
 * /api/v1/schema/events), the same text as the hard-coded formatter it
 * replaces (tests/unit/legacy_details.h) over many events, the key=value
 * fallback for a kind the schema does not list and for an agent without a
 * schema, the TYPE column from the schema, and terminal escaping of every
 * cell. The end-to-end table through the built binary is in test_api.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/format.c"
#include "cli/http.c"
#include "cli/peer_check.c"
#include "cli/sock_diag.c"
#include "cli/schema.c"
#define num top_num /* top.c has its own static num() */
#include "cli/top.c"
#undef num
#include "legacy_details.h"

#define SCHEMA_FIXTURE "tests/unit/cases/schema_events.json"

static json_t *parse(const char *s)
{
	json_error_t je;
	json_t *o = json_loads(s, JSON_DECODE_ANY, &je);
	if (!o)
		fail_msg("bad fixture JSON: %s: %s", je.text, s);
	return o;
}

static struct cli_schema g_schema;

static int load_schema(void **state)
{
	(void)state;
	json_error_t je;
	char err[200];
	json_t *body = json_load_file(SCHEMA_FIXTURE, 0, &je);
	if (!body) {
		fprintf(stderr, "%s: %s (run from the project root)\n", SCHEMA_FIXTURE, je.text);
		return -1;
	}
	int rc = cli_schema_from_json(&g_schema, body, err, sizeof(err));
	json_decref(body);
	if (rc)
		fprintf(stderr, "%s: %s\n", SCHEMA_FIXTURE, err);
	return rc;
}

static int free_schema(void **state)
{
	(void)state;
	cli_schema_free(&g_schema);
	return 0;
}

#define COMMON                                                                               \
	"\"id\":7,\"time\":\"2024-05-01T12:00:00.123456789Z\",\"pid\":1234,\"ppid\":1,"      \
	"\"comm\":\"sh\",\"cgroup_id\":99,\"container_id\":\"4f3a2b1c0d9e8877665544\","    \
	"\"pod_uid\":\"\",\"runtime\":\"containerd\",\"qos\":\"burstable\""

/* One event of each kind the agent emits, as the pipeline shapes them. */
static const char *fixture(const char *type)
{
	if (!strcmp(type, "exec"))
		return "{" COMMON ",\"type\":\"exec\",\"filename\":\"/bin/sh\","
		       "\"argv\":[\"sh\",\"-c\",\"echo hi\"],\"truncated_count\":2}";
	if (!strcmp(type, "exit"))
		return "{" COMMON ",\"type\":\"exit\",\"exit_code\":3,\"signal\":0,"
		       "\"lifetime_ns\":2100000}";
	if (!strcmp(type, "signal"))
		return "{" COMMON ",\"type\":\"signal\",\"signal\":11,\"sender_pid\":1240,"
		       "\"sender_comm\":\"crash\",\"target_pid\":1240,\"target_comm\":\"crash\"}";
	if (!strcmp(type, "oom"))
		return "{" COMMON ",\"type\":\"oom\",\"constraint\":\"memcg\","
		       "\"victim\":{\"pid\":1250,\"comm\":\"hog\",\"container_id\":\"4f3a2b1c0d9e88\"},"
		       "\"actor\":{\"pid\":1250,\"comm\":\"hog\",\"container_id\":\"4f3a2b1c0d9e88\"}}";
	if (!strcmp(type, "sched_delay"))
		return "{" COMMON ",\"type\":\"sched_delay\",\"tid\":1235,\"wait_ns\":4567890,"
		       "\"cpu\":3,\"contention\":\"external\",\"enqueue\":\"preempted\","
		       "\"truncated_count\":9,\"neighbour\":{\"pid\":200,\"tid\":202,"
		       "\"comm\":\"stress\",\"cgroup_id\":77,"
		       "\"container_id\":\"deadbeef99887766\",\"pod_uid\":\"\","
		       "\"runtime\":\"containerd\"}}";
	if (!strcmp(type, "mem_stall")) /* a memcg subject: no pid/comm of its own */
		return "{\"id\":8,\"time\":\"2024-05-01T12:00:00.123456789Z\",\"type\":\"mem_stall\","
		       "\"subject_kind\":\"cgroup\",\"cgroup_id\":99,\"container_id\":\"4f3a2b1c0d9e8877665544\","
		       "\"pod_uid\":\"\",\"runtime\":\"runc\",\"qos\":\"\",\"tid\":1250,"
		       "\"kind\":\"memcg_reclaim\",\"duration_ns\":61000000,\"nr_scanned\":640,"
		       "\"nr_reclaimed\":512,\"order\":0,\"gfp_flags\":3264,\"truncated_count\":0,"
		       "\"memcg\":{\"cgroup_id\":99,\"hierarchy\":\"v2\",\"source\":\"at_max\","
		       "\"container_id\":\"4f3a2b1c0d9e8877665544\",\"pod_uid\":\"\",\"runtime\":\"runc\"},"
		       "\"task\":{\"pid\":1250,\"comm\":\"hog\",\"cgroup_id\":99,"
		       "\"container_id\":\"4f3a2b1c0d9e8877665544\",\"pod_uid\":\"\",\"runtime\":\"runc\"}}";
	if (!strcmp(type, "hung_task"))
		return "{" COMMON ",\"type\":\"hung_task\",\"tid\":1236,\"source\":\"sandlens\","
		       "\"blocked_ns\":11000000000,\"threshold_ns\":10000000000,\"state\":258,"
		       "\"killable\":true,\"kthread\":false,\"switches\":12,"
		       "\"kernel_stack\":[\"request_wait_answer+0x1a5 [fuse]\"]}";
	/* CPU subjects: no pid/comm */
	if (!strcmp(type, "cpu_stall"))
		return "{\"id\":9,\"time\":\"2024-05-01T12:00:00.123456789Z\",\"type\":\"cpu_stall\","
		       "\"subject_kind\":\"cpu\",\"cpu\":1,\"container_id\":\"\",\"pod_uid\":\"\","
		       "\"runtime\":\"host\",\"qos\":\"\",\"late_ns\":23100000,\"gap_ns\":24000000,"
		       "\"steal_ns\":0,\"threshold_ns\":10000000,\"period_ns\":1000000,"
		       "\"task\":{\"pid\":4242,\"comm\":\"stress\"},\"kernel_stack\":[]}";
	if (!strcmp(type, "soft_lockup"))
		return "{\"id\":10,\"time\":\"2024-05-01T12:00:00.123456789Z\",\"type\":\"soft_lockup\","
		       "\"subject_kind\":\"cpu\",\"cpu\":1,\"container_id\":\"\",\"pod_uid\":\"\","
		       "\"runtime\":\"host\",\"qos\":\"\",\"stuck_s\":23,\"lockup_pid\":4321,"
		       "\"lockup_comm\":\"kworker/1:2\",\"message\":\"watchdog: BUG: soft lockup\"}";
	if (!strcmp(type, "hard_lockup"))
		return "{\"id\":11,\"time\":\"2024-05-01T12:00:00.123456789Z\",\"type\":\"hard_lockup\","
		       "\"subject_kind\":\"cpu\",\"cpu\":0,\"container_id\":\"\",\"pod_uid\":\"\","
		       "\"runtime\":\"host\",\"qos\":\"\","
		       "\"message\":\"watchdog: Watchdog detected hard LOCKUP on cpu 0\"}";
	if (!strcmp(type, "rcu_stall"))
		return "{\"id\":12,\"time\":\"2024-05-01T12:00:00.123456789Z\",\"type\":\"rcu_stall\","
		       "\"subject_kind\":\"cpu\",\"cpu\":1,\"container_id\":\"\",\"pod_uid\":\"\","
		       "\"runtime\":\"host\",\"qos\":\"\",\"flavor\":\"rcu_sched\",\"how\":\"self_detected\","
		       "\"cpus\":[1],\"message\":\"rcu: INFO: rcu_sched self-detected stall on CPU\"}";

	if (!strcmp(type, "slow_io")) /* a blkcg subject: no pid/comm of its own */
		return "{\"id\":9,\"time\":\"2024-05-01T12:00:00.123456789Z\",\"type\":\"slow_io\","
		       "\"subject_kind\":\"cgroup\",\"cgroup_id\":99,\"container_id\":\"4f3a2b1c0d9e8877665544\","
		       "\"pod_uid\":\"\",\"runtime\":\"runc\",\"qos\":\"\",\"tid\":4243,\"disk\":\"7:3\","
		       "\"disk_name\":\"loop3\",\"sector\":2048,\"bytes\":4096,\"op\":\"read\",\"queue_ns\":12000,"
		       "\"device_ns\":2310000,\"total_ns\":2322000,\"queued\":true,\"error\":0,\"cmd_flags\":0,"
		       "\"truncated_count\":0,\"blkcg\":{\"cgroup_id\":5151,\"hierarchy_id\":7,"
		       "\"container_id\":\"4f3a2b1c0d9e8877665544\",\"pod_uid\":\"\",\"runtime\":\"runc\"},"
		       "\"task\":{\"pid\":4242,\"comm\":\"dd\",\"cgroup_id\":99,"
		       "\"container_id\":\"4f3a2b1c0d9e8877665544\",\"pod_uid\":\"\",\"runtime\":\"runc\"}}";
	if (!strcmp(type, "net_drop")) /* a netns subject */
		return "{\"id\":9,\"time\":\"2024-05-01T12:00:00.123456789Z\",\"type\":\"net_drop\","
		       "\"subject_kind\":\"netns\",\"netns_inode\":4026532323,\"container_id\":\"4f3a2b1c0d9e88\","
		       "\"pod_uid\":\"\",\"runtime\":\"runc\",\"reason\":\"NETFILTER_DROP\",\"reason_code\":12,"
		       "\"ifindex\":2,\"family\":\"ipv4\",\"protocol\":\"tcp\",\"saddr\":\"10.0.0.1\",\"sport\":4000,"
		       "\"daddr\":\"10.0.0.2\",\"dport\":80,\"state\":\"\",\"netns\":4026532323,"
		       "\"socket_cgroup_id\":0,\"truncated_count\":3,\"stack_withheld\":true}";
	if (!strcmp(type, "tcp_retransmit"))
		return "{" COMMON ",\"type\":\"tcp_retransmit\",\"kind\":\"data\",\"segs\":2,\"err\":0,"
		       "\"family\":\"ipv4\",\"protocol\":\"tcp\",\"saddr\":\"10.0.0.2\",\"sport\":80,"
		       "\"daddr\":\"10.0.0.1\",\"dport\":4000,\"state\":\"ESTABLISHED\",\"netns\":4026532323,"
		       "\"socket_cgroup_id\":77,\"truncated_count\":0}";
	/* hw and gpu: device or CPU subjects (no pid/comm), attributed to the host */
#define HOSTDEV(kind, dev)                                                                                           \
	"{\"id\":9,\"time\":\"2024-05-01T12:00:00.123456789Z\",\"type\":\"" kind "\",\"subject_kind\":\"device\","     \
	"\"device\":\"" dev "\",\"cgroup_id\":0,\"container_id\":\"\",\"pod_uid\":\"\",\"runtime\":\"host\",\"qos\":\"\","
	if (!strcmp(type, "hw_mc_error"))
		return HOSTDEV("hw_mc_error", "edac:mc0") "\"error_type\":\"corrected\",\"error_type_code\":0,"
		       "\"error_count\":1,\"mc_index\":0,\"top_layer\":0,\"middle_layer\":1,\"lower_layer\":-1,"
		       "\"address\":\"0x0000000012345000\",\"grain_bytes\":64,\"syndrome\":\"0x0000000000000000\","
		       "\"msg\":\"\",\"label\":\"CPU_SrcID#0_MC#0_Chan#1_DIMM#0\",\"driver_detail\":\"\"}";
	if (!strcmp(type, "hw_aer_error"))
		return HOSTDEV("hw_aer_error", "pci:0000:3b:00.0") "\"bdf\":\"0000:3b:00.0\","
		       "\"aer_severity\":\"corrected\",\"aer_severity_code\":2,\"status\":65,"
		       "\"status_bits\":[\"RxErr\",\"BadTLP\"]}";
	if (!strcmp(type, "hw_nonstd_error"))
		return HOSTDEV("hw_nonstd_error", "firmware") "\"sec_type\":\"e71254e8-c1b9-4940-ab76-909703a4320f\","
		       "\"fru_id\":\"00000000-0000-0000-0000-000000000000\",\"fru_text\":\"Slot 2\","
		       "\"cper_severity\":\"corrected\",\"cper_severity_code\":2,\"data_len\":64}";
	if (!strcmp(type, "hw_arm_error"))
		return "{\"id\":9,\"time\":\"2024-05-01T12:00:00.123456789Z\",\"type\":\"hw_arm_error\","
		       "\"subject_kind\":\"cpu\",\"cpu\":2,\"cgroup_id\":0,\"container_id\":\"\",\"pod_uid\":\"\","
		       "\"runtime\":\"host\",\"qos\":\"\",\"mpidr\":\"0x0000000081000200\",\"midr\":\"0x00000000410fd0c0\","
		       "\"running_state\":1,\"psci_state\":0,\"affinity\":0,\"cper_severity\":\"recoverable\","
		       "\"cper_severity_code\":0}";
	if (!strcmp(type, "hw_mem_failure"))
		return HOSTDEV("hw_mem_failure", "memory") "\"pfn\":\"0x0000000000123456\",\"page_type\":\"MF_MSG_BUDDY\","
		       "\"page_type_code\":16,\"result\":\"recovered\",\"result_code\":3}";
	if (!strcmp(type, "hw_mce"))
		return "{\"id\":9,\"time\":\"2024-05-01T12:00:00.123456789Z\",\"type\":\"hw_mce\","
		       "\"subject_kind\":\"cpu\",\"cpu\":5,\"cgroup_id\":0,\"container_id\":\"\",\"pod_uid\":\"\","
		       "\"runtime\":\"host\",\"qos\":\"\",\"bank\":7,\"status\":\"0xbc00000000010090\","
		       "\"addr\":\"0x0000000012345680\",\"misc\":\"0x0000000000000086\",\"synd\":\"0x0000000000000000\","
		       "\"ipid\":\"0x0000000000000000\",\"ip\":\"0x0000000000000000\",\"mcgstatus\":\"0x0000000000000000\","
		       "\"mcgcap\":\"0x0000000000000c14\",\"socket\":0,\"apicid\":5,\"cs\":0,\"cpuvendor\":0,"
		       "\"uncorrected\":true,\"pcc\":false,\"overflow\":false}";
	if (!strcmp(type, "hw_error_rate"))
		return HOSTDEV("hw_error_rate", "edac:mc0/dimm0") "\"source\":\"edac_dimm\",\"hw_device\":\"mc0/dimm0\","
		       "\"label\":\"DIMM_A1\",\"errors\":12,\"total\":40,\"window_seconds\":600,\"threshold\":10,"
		       "\"rate_per_second\":0.02}";
	if (!strcmp(type, "hw_pcie_link"))
		return HOSTDEV("hw_pcie_link", "pci:0000:3b:00.0") "\"bdf\":\"0000:3b:00.0\",\"degraded\":true,"
		       "\"speed_gts\":16,\"max_speed_gts\":16,\"width\":4,\"max_width\":16,\"previous_speed_gts\":16,"
		       "\"previous_width\":16}";
	if (!strcmp(type, "gpu_xid"))
		return "{" COMMON ",\"type\":\"gpu_xid\",\"subject_kind\":\"task\",\"gpu\":0,\"uuid\":\"GPU-5fd4\","
		       "\"pci_bus_id\":\"00000000:3B:00.0\",\"xid\":79,\"source\":\"kmsg\",\"reported_pid\":1234,"
		       "\"process_name\":\"python\",\"detail\":\"GPU has fallen off the bus.\"}";
#undef HOSTDEV
	return NULL;
}

static char *details_with(const struct cli_schema *s, const char *json)
{
	json_t *ev = parse(json);
	char *d = cli_event_details(s, ev);
	json_decref(ev);
	assert_non_null(d);
	return d;
}

static char *details(const char *json)
{
	return details_with(&g_schema, json);
}

static char *row_with(const struct cli_schema *s, const char *json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	json_t *ev = parse(json);
	cli_print_event_row(f, s, ev);
	json_decref(ev);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static char *row(const char *json)
{
	return row_with(&g_schema, json);
}

static char *header_with(const struct cli_schema *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	cli_print_event_header(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Start column of each of the first n whitespace-separated words. */
static void word_starts(const char *s, size_t *at, int n)
{
	int w = 0;
	for (size_t i = 0; s[i] && s[i] != '\n' && w < n; i++)
		if (s[i] != ' ' && (i == 0 || s[i - 1] == ' '))
			at[w++] = i;
	assert_int_equal(w, n);
}

/* The row's columns TIME TYPE CONTAINER PID(right-aligned) COMM DETAILS
 * start where the header's do. */
static void assert_aligned(const char *hdr, const char *r)
{
	size_t h[6], c[6];
	word_starts(hdr, h, 6);
	word_starts(r, c, 6);
	assert_int_equal(c[0], h[0]); /* TIME */
	assert_int_equal(c[1], h[1]); /* TYPE */
	assert_int_equal(c[2], h[2]); /* CONTAINER */
	assert_true(c[3] > h[2] + 12 && c[3] <= h[3] + 3); /* PID, right-aligned under "PID" */
	assert_int_equal(c[4], h[4]); /* COMM */
	assert_int_equal(c[5], h[5]); /* DETAILS */
}

/* An event whose subject has no task (a cgroup, a device): PID and COMM
 * say "-" (not a made-up 0), and the columns still line up. */
static void assert_aligned_no_task(const char *hdr, const char *r)
{
	assert_aligned(hdr, r);
	size_t c[6];
	word_starts(r, c, 6);
	assert_int_equal(r[c[3]], '-');
	assert_int_equal(r[c[3] + 1], ' ');
	assert_int_equal(r[c[4]], '-');
	assert_int_equal(r[c[4] + 1], ' ');
}

static void test_sched_delay_row(void **state)
{
	(void)state;
	char *d = details(fixture("sched_delay"));
	assert_string_equal(d, "wait 4.6ms cpu 3 external (preempted) neighbour 200(stress) "
			       "[deadbeef9988] (+9 delays suppressed)");
	free(d);

	char *h = header_with(&g_schema), *r = row(fixture("sched_delay"));
	/* TYPE is as wide as the longest kind (hw_nonstd_error, 15) */
	assert_string_equal(h, "TIME                     TYPE            CONTAINER        PID COMM"
			       "             DETAILS\n");
	assert_string_equal(r, "2024-05-01T12:00:00.123Z sched_delay     4f3a2b1c0d9e    1234 sh"
			       "               wait 4.6ms cpu 3 external (preempted) neighbour "
			       "200(stress) [deadbeef9988] (+9 delays suppressed)\n");
	assert_aligned(h, r);
	free(h);
	free(r);

	/* a host neighbour, a sub-millisecond wait, no suppressed events, a
	 * control character in the neighbour's comm */
	d = details("{\"type\":\"sched_delay\",\"wait_ns\":250000,\"cpu\":0,"
		    "\"contention\":\"internal\",\"enqueue\":\"wakeup\",\"truncated_count\":0,"
		    "\"neighbour\":{\"pid\":9,\"comm\":\"k\\u0001w\",\"container_id\":\"\","
		    "\"runtime\":\"host\"}}");
	assert_string_equal(d, "wait 250us cpu 0 internal (wakeup) neighbour 9(k\\x01w) [host]");
	free(d);
	/* attribution off: no neighbour container at all */
	d = details("{\"type\":\"sched_delay\",\"wait_ns\":1500000000,\"cpu\":1,"
		    "\"contention\":\"idle\",\"enqueue\":\"wakeup_new\","
		    "\"neighbour\":{\"pid\":0,\"comm\":\"swapper/1\"}}");
	assert_string_equal(d, "wait 1.50s cpu 1 idle (wakeup_new) neighbour 0(swapper/1)");
	free(d);
}

/* Every kind of the schema fixture has a template that parses, an event
 * fixture here, non-empty DETAILS from the template (not the key=value
 * fallback), and a row that lines up with the header; the TYPE column is
 * as wide as the longest kind. */
static void test_every_kind(void **state)
{
	(void)state;
	struct cli_schema none;
	cli_schema_fallback(&none);
	assert_true(g_schema.loaded);
	/* exec exit signal oom sched_delay mem_stall, hung_task cpu_stall soft_lockup hard_lockup
	 * rcu_stall, slow_io, net_drop tcp_retransmit, 8 hw kinds, gpu_xid */
	assert_int_equal(g_schema.nkinds, 23);
	char *h = header_with(&g_schema);
	size_t longest = 4;
	for (size_t k = 0; k < g_schema.nkinds; k++) {
		const struct cli_kind *ck = &g_schema.kinds[k];
		const char *j = fixture(ck->name);
		if (!ck->details)
			fail_msg("kind '%s' has no usable DETAILS template", ck->name);
		if (!j)
			fail_msg("no fixture for event kind '%s': add it and its expected DETAILS", ck->name);
		char *d = details(j), *kv = details_with(&none, j);
		if (!*d)
			fail_msg("empty DETAILS for '%s'", ck->name);
		if (!strcmp(d, kv))
			fail_msg("'%s' rendered as key=value: %s", ck->name, d);
		free(d);
		free(kv);
		char *r = row(j);
		json_t *ev = parse(j);
		if (json_object_get(ev, "comm"))
			assert_aligned(h, r);
		else
			assert_aligned_no_task(h, r);
		json_decref(ev);
		free(r);
		if (strlen(ck->name) > longest)
			longest = strlen(ck->name);
	}
	assert_int_equal(g_schema.type_width, (int)longest);
	free(h);
	cli_schema_free(&none);
}

static void test_known_details(void **state)
{
	(void)state;
	static const struct {
		const char *type, *want;
	} c[] = {
		{"exec", "sh -c echo hi (+2 execs suppressed)"},
		{"exit", "exit 3 after 2.1ms"},
		{"signal", "SIGSEGV 1240(crash) -> 1240(crash)"},
		{"oom", "victim 1250(hog) [4f3a2b1c0d9e] by 1250(hog) [4f3a2b1c0d9e] constraint=memcg"},
		{"hung_task", "sandlens tid=1236 blocked 11.00s (killable)"},
		{"cpu_stall", "timer interrupt 23.1ms late in 4242(stress)"},
		{"soft_lockup", "stuck 23s in kworker/1:2:4321"},
		{"rcu_stall", "rcu_sched self_detected"},

		{"slow_io", "read 4096B loop3(7:3) sector=2048 queue=12us device=2.3ms by 4242(dd)"},
		{"hw_mc_error", "1 corrected mc0 CPU_SrcID#0_MC#0_Chan#1_DIMM#0 addr=0x0000000012345000"},
		{"hw_aer_error", "corrected 0000:3b:00.0 status=65 RxErr BadTLP"},
		{"hw_nonstd_error", "corrected section e71254e8-c1b9-4940-ab76-909703a4320f fru Slot 2"},
		{"hw_arm_error", "recoverable mpidr=0x0000000081000200"},
		{"hw_mem_failure", "pfn 0x0000000000123456 MF_MSG_BUDDY recovered"},
		{"hw_mce", "bank 7 status=0xbc00000000010090 addr=0x0000000012345680 uncorrected"},
		{"hw_error_rate", "12 corrected errors on mc0/dimm0 (DIMM_A1) within 600s (threshold 10)"},
		{"hw_pcie_link", "0000:3b:00.0 x4 16 GT/s (max x16 16 GT/s) degraded"},
		{"gpu_xid", "Xid 79 on 00000000:3B:00.0 (kmsg) python: GPU has fallen off the bus."},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *d = details(fixture(c[i].type));
		assert_string_equal(d, c[i].want);
		free(d);
	}
}

/* Rate-limited exits and signals say what they carry. */
static void test_exit_signal_truncated(void **state)
{
	(void)state;
	char *d = details("{" COMMON ",\"type\":\"exit\",\"exit_code\":0,\"signal\":0,"
			  "\"truncated_count\":7,\"truncated_abnormal\":2}");
	assert_string_equal(d, "exit 0 (+7 exits suppressed, 2 abnormal)");
	free(d);
	d = details("{" COMMON ",\"type\":\"signal\",\"signal\":11,\"sender_pid\":5,\"sender_comm\":\"a\","
		    "\"target_pid\":5,\"target_comm\":\"a\",\"truncated_count\":3}");
	assert_string_equal(d, "SIGSEGV 5(a) -> 5(a) (+3 signals suppressed)");
	free(d);
	/* the OOM killer's SIGKILL (si_code SI_KERNEL): the kernel sent it, not
	 * the task that happened to run (the allocating one) */
	d = details("{" COMMON ",\"type\":\"signal\",\"signal\":9,\"si_code\":128,\"sender_kernel\":true,"
		    "\"sender_pid\":1250,\"sender_comm\":\"hog\",\"target_pid\":1250,\"target_comm\":\"hog\","
		    "\"truncated_count\":0}");
	assert_string_equal(d, "SIGKILL kernel -> 1250(hog)");
	free(d);
	d = details("{" COMMON ",\"type\":\"signal\",\"signal\":9,\"si_code\":0,\"sender_kernel\":false,"
		    "\"sender_pid\":7,\"sender_comm\":\"kill\",\"target_pid\":1250,\"target_comm\":\"hog\","
		    "\"truncated_count\":0}");
	assert_string_equal(d, "SIGKILL 7(kill) -> 1250(hog)");
	free(d);
}

/* The templates print what the old formatter printed, over the shapes the
 * agent emits: each combination below is one event. */
static int g_compared;

static void same_as_legacy(json_t *ev)
{
	char *want = legacy_details(ev), *got = cli_event_details(&g_schema, ev);
	assert_non_null(want);
	assert_non_null(got);
	if (strcmp(want, got)) {
		char *j = json_dumps(ev, JSON_COMPACT);
		fail_msg("event %s\n  template: '%s'\n  legacy:   '%s'", j, got, want);
	}
	g_compared++;
	free(want);
	free(got);
	json_decref(ev);
}

static void test_same_as_legacy(void **state)
{
	(void)state;
	static const char *const argvs[] = {NULL, "[]", "[\"sh\",\"-c\",\"echo hi\"]", "[\"a\"]",
					    "[\"x\\u0001y\",\"\"]", "\"one string\""};
	for (size_t a = 0; a < sizeof(argvs) / sizeof(argvs[0]); a++)
		for (int tr = 0; tr < 2; tr++)
			for (int tc = 0; tc < 3; tc += 2) {
				json_t *ev = json_pack("{s:s,s:s,s:b,s:i}", "type", "exec", "filename", "/bin/s\x02h",
						       "args_truncated", tr, "truncated_count", tc);
				if (argvs[a])
					json_object_set_new(ev, "argv", parse(argvs[a]));
				same_as_legacy(ev);
			}
	static const long long lifetimes[] = {-1, 0, 999, 250000, 999999, 1000000, 2100000, 999999999,
					      1000000000, 59990000000LL, 60000000000LL, 3599000000000LL,
					      3600000000000LL, 90000000000000LL};
	static const int sigs[] = {0, 6, 9, 11, 15, 34, 64, 99};
	for (size_t s = 0; s < sizeof(sigs) / sizeof(sigs[0]); s++)
		for (int core = 0; core < 2; core++)
			for (int code = 0; code < 256; code += 85)
				for (size_t l = 0; l < sizeof(lifetimes) / sizeof(lifetimes[0]); l++)
					for (int tc = 0; tc < 2; tc++) {
						json_t *ev = json_pack("{s:s,s:i,s:i,s:b,s:i,s:i}", "type", "exit",
								       "exit_code", code, "signal", sigs[s],
								       "core_dumped", core, "truncated_count", tc * 7,
								       "truncated_abnormal", tc * 2);
						if (lifetimes[l] >= 0)
							json_object_set_new(ev, "lifetime_ns",
									    json_integer(lifetimes[l]));
						same_as_legacy(ev);
					}
	for (size_t s = 0; s < sizeof(sigs) / sizeof(sigs[0]); s++)
		for (int tc = 0; tc < 2; tc++)
			for (int k = 0; k < 2; k++)
				same_as_legacy(json_pack("{s:s,s:i,s:i,s:s,s:i,s:s,s:i,s:b}", "type", "signal", "signal",
							 sigs[s], "sender_pid", 5, "sender_comm", "a\x1b[b", "target_pid",
							 6, "target_comm", "kworker/0:1", "truncated_count", tc * 3,
							 "sender_kernel", k));
	static const char *const cids[] = {"", "4f3a2b1c0d9e8877665544", "abc"};
	for (size_t v = 0; v < 3; v++)
		for (size_t a = 0; a < 3; a++)
			same_as_legacy(json_pack("{s:s,s:s,s:{s:i,s:s,s:s},s:{s:i,s:s,s:s}}", "type", "oom",
						 "constraint", a ? "memcg" : "global", "victim", "pid", 10, "comm",
						 "hog", "container_id", cids[v], "actor", "pid", 11, "comm", "",
						 "container_id", cids[a]));
	static const char *const nbs[] = {
		NULL,
		"{\"pid\":200,\"comm\":\"stress\",\"container_id\":\"deadbeef99887766\",\"runtime\":\"containerd\"}",
		"{\"pid\":9,\"comm\":\"k\\u0001w\",\"container_id\":\"\",\"runtime\":\"host\"}",
		"{\"pid\":0,\"comm\":\"swapper/1\"}",
		"{\"pid\":3,\"comm\":\"x\",\"container_id\":\"\",\"runtime\":\"\"}",
		"{\"pid\":3,\"comm\":\"x\",\"runtime\":\"runc\"}",
	};
	static const long long waits[] = {0, 1500, 250000, 4567890, 1500000000, 75000000000LL};
	for (size_t n = 0; n < sizeof(nbs) / sizeof(nbs[0]); n++)
		for (size_t w = 0; w < sizeof(waits) / sizeof(waits[0]); w++)
			for (int cpu = -1; cpu < 4; cpu += cpu ? 1 : 3) /* absent, 0, 3 */
				for (int ce = 0; ce < 4; ce++) {
					json_t *ev = json_pack("{s:s,s:I,s:s,s:s,s:i}", "type", "sched_delay", "wait_ns",
							       (json_int_t)waits[w], "contention",
							       ce & 1 ? "external" : "", "enqueue",
							       ce & 2 ? "preempted" : "", "truncated_count",
							       (ce == 3) * 9);
					if (cpu >= 0)
						json_object_set_new(ev, "cpu", json_integer(cpu));
					if (nbs[n])
						json_object_set_new(ev, "neighbour", parse(nbs[n]));
					same_as_legacy(ev);
				}
	assert_true(g_compared > 1000);
}

/* A kind the schema does not list (a module newer than the schema, or a
 * typo) gets its own scalar fields as DETAILS, escaped. */
static void test_unknown_type(void **state)
{
	(void)state;
	char *d = details("{" COMMON ",\"type\":\"future\",\"bytes\":42,\"path\":\"/x\\ny\","
			  "\"nested\":{\"a\":1},\"k\\u202ey\":true}");
	assert_string_equal(d, "bytes=42 path=/x\\x0ay k\\u{202e}y=true");
	free(d);
}

/* An agent without the schema route: every kind as key=value, the TYPE
 * column as wide as the types of the first page. */
static void test_no_schema(void **state)
{
	(void)state;
	struct cli_schema s;
	cli_schema_fallback(&s);
	assert_false(s.loaded);
	assert_int_equal(s.type_width, 4);
	char *d = details_with(&s, fixture("exec"));
	assert_string_equal(d, "filename=/bin/sh truncated_count=2");
	free(d);
	d = details_with(&s, fixture("exit"));
	assert_string_equal(d, "exit_code=3 signal=0 lifetime_ns=2100000");
	free(d);
	json_t *evs = parse("[{\"type\":\"exit\"},{\"type\":\"sched_delay\"},{\"type\":7}]");
	cli_schema_fit_types(&s, evs);
	json_decref(evs);
	assert_int_equal(s.type_width, 11);
	char *h = header_with(&s), *r = row_with(&s, fixture("exit"));
	assert_aligned(h, r);
	free(h);
	free(r);
	cli_schema_free(&s);
}

/* A schema not of the shape is refused (the fallback remains); a kind
 * whose template does not parse is kept, shown as key=value. */
static void test_bad_schema(void **state)
{
	(void)state;
	struct cli_schema s;
	char err[200];
	static const char *const bad[] = {"{}", "{\"kinds\":{}}", "{\"kinds\":[{\"details\":\"x\"}]}",
					  "{\"kinds\":[],\"common_fields\":3}", NULL};
	for (const char *const *b = bad; *b; b++) {
		json_t *body = parse(*b);
		if (cli_schema_from_json(&s, body, err, sizeof(err)) != -1)
			fail_msg("schema %s accepted", *b);
		assert_false(s.loaded);
		assert_true(cli_schema_is_common(&s, "container_id"));
		cli_schema_free(&s);
		json_decref(body);
	}
	json_t *body = parse("{\"kinds\":[{\"name\":\"a\",\"details\":\"{oops\"},"
			     "{\"name\":\"b\",\"details\":\"b={v}\"},{\"name\":\"c\"}],"
			     "\"common_fields\":[\"time\",{\"name\":\"type\"}]}");
	assert_int_equal(cli_schema_from_json(&s, body, err, sizeof(err)), 0);
	json_decref(body);
	assert_true(s.loaded);
	assert_int_equal(s.nkinds, 3);
	char *d = details_with(&s, "{\"type\":\"a\",\"time\":\"t\",\"v\":1}");
	assert_string_equal(d, "v=1");
	free(d);
	d = details_with(&s, "{\"type\":\"b\",\"v\":1}");
	assert_string_equal(d, "b=1");
	free(d);
	d = details_with(&s, "{\"type\":\"c\",\"v\":2,\"pid\":3}");
	assert_string_equal(d, "v=2 pid=3"); /* pid is not a common field of this schema */
	free(d);
	cli_schema_free(&s);
}

/* No byte that steers a terminal reaches the output: C0 (other than the
 * row's newline), DEL, C1 (UTF-8 c2 80..9f), bidi overrides, invalid UTF-8. */
static void assert_terminal_safe(const char *out)
{
	const unsigned char *u = (const unsigned char *)out;
	size_t n = strlen(out);
	for (size_t i = 0; i < n; i++) {
		if ((u[i] < 0x20 && !(u[i] == '\n' && i == n - 1)) || u[i] == 0x7f)
			fail_msg("raw control byte 0x%02x at %zu: %s", u[i], i, out);
		if (u[i] == 0xc2 && i + 1 < n && u[i + 1] >= 0x80 && u[i + 1] <= 0x9f)
			fail_msg("raw C1 at %zu: %s", i, out);
		if (u[i] == 0xe2 && i + 2 < n && u[i + 1] == 0x80 && u[i + 2] >= 0xaa && u[i + 2] <= 0xae)
			fail_msg("raw bidi override at %zu: %s", i, out);
		if (u[i] >= 0xf8 || (u[i] >= 0x80 && u[i] < 0xc0 && (i == 0 || u[i - 1] < 0x80)))
			fail_msg("invalid UTF-8 at %zu: %s", i, out);
	}
}

static void test_escape_cells(void **state)
{
	(void)state;
	/* hostile type, container id, comm, time and DETAILS values */
	const char *ev = "{\"id\":1,\"time\":\"2024\\u001b[2J\",\"type\":\"ex\\u009bec\","
			 "\"container_id\":\"\\u202eabc\\u0007\",\"pid\":1,\"comm\":\"\\u001b]0;x\\u0007\","
			 "\"argv\":[\"\\u001b[31mred\"],\"filename\":\"f\"}";
	char *r = row(ev);
	assert_terminal_safe(r);
	assert_non_null(strstr(r, "\\x1b]0;x\\x07"));
	assert_non_null(strstr(r, "\\u{202e}abc\\x07"));
	assert_non_null(strstr(r, "ex\\u{009b}ec"));
	free(r);
	r = row("{\"type\":\"exec\",\"comm\":\"\\u001b\",\"argv\":[\"\\u001b[31mred\",\"\\u2067x\"]}");
	assert_terminal_safe(r);
	assert_non_null(strstr(r, "\\x1b[31mred \\u{2067}x"));
	free(r);
	/* invalid UTF-8 cannot come through JSON text, but can through a
	 * string the CLI builds: cli_esc escapes it too */
	assert_string_equal(cli_esc("a\xff\xc3"), "a\\xff\\xc3");
	assert_string_equal(cli_esc(NULL), "");

	/* the other tables */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *cs = parse("[{\"container_id\":\"\\u001b[2Jabcdefghijklmnop\",\"runtime\":\"r\\u009b\","
			   "\"pod_uid\":\"\\u202e\",\"events\":1,\"by_type\":{},\"last_seen\":\"\\u0007\"}]");
	cli_print_containers(f, cs);
	json_t *h = parse("{\"status\":\"ok\\u001b\",\"modules\":[{\"name\":\"p\\u0007\",\"state\":\"x\\u009b\","
			  "\"error\":\"\\u202e\",\"hooks\":[{\"name\":\"\\u001b\",\"state\":\"\\u0008\","
			  "\"reason\":\"\\u2066\"}]}]}");
	cli_print_status(f, h, "sandlens_events_total{type=\"\x1b[2J\"} 3\n");
	assert_int_equal(fclose(f), 0);
	for (char *l = buf, *e; l && *l; l = e ? e + 1 : NULL) {
		e = strchr(l, '\n');
		char *line = strndup(l, e ? (size_t)(e - l + 1) : strlen(l));
		assert_terminal_safe(line);
		free(line);
	}
	assert_non_null(strstr(buf, "\\x1b[2J"));
	free(buf);
	json_decref(cs);
	json_decref(h);
}

/* status: counters at 0 are left out and counted (a status listed about a
 * hundred zero drop counters); non-zero counters and gauges at 0 are shown. */
static void test_status_hides_zero_counters(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *h = parse("{\"status\":\"ok\",\"modules\":[]}");
	cli_print_status(f, h,
			 "# HELP sandlens_events_dropped_total x\n"
			 "sandlens_events_dropped_total{type=\"exec\",reason=\"rate\"} 0\n"
			 "sandlens_events_dropped_total{type=\"exec\",reason=\"ringbuf\"} 7\n"
			 "sandlens_events_dropped_total{type=\"exit\",reason=\"rate\"} 0\n"
			 "sandlens_events_total{type=\"exec\"} 10\n"
			 "sandlens_events_total{type=\"oom\"} 0\n"
			 "sandlens_store_queue_depth 0\n"
			 "sandlens_ringbuf_fill_ratio{ringbuf=\"events\"} 0.0\n");
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(buf, "reason=\"ringbuf\"} 7"));
	assert_null(strstr(buf, "reason=\"rate\"} 0"));
	assert_null(strstr(buf, "type=\"oom\"} 0"));
	assert_non_null(strstr(buf, "sandlens_events_total{type=\"exec\"} 10"));
	assert_non_null(strstr(buf, "sandlens_store_queue_depth 0"));
	assert_non_null(strstr(buf, "sandlens_ringbuf_fill_ratio{ringbuf=\"events\"} 0.0"));
	assert_non_null(strstr(buf, "(3 counters at 0 not shown"));
	free(buf);
	json_decref(h);
}

/* cli_schema_fetch against a one-shot server answering a canned reply:
 * an old agent (404), a broken one, a good one, and nobody listening. */
struct canned {
	int fd;
	const char *reply;
};

static void *serve_once(void *arg)
{
	struct canned *c = arg;
	int s = accept(c->fd, NULL, NULL);
	if (s >= 0) {
		char req[4096];
		ssize_t n = recv(s, req, sizeof(req), 0); /* the request, whole in one read or not: answer anyway */
		(void)n;
		ssize_t w = send(s, c->reply, strlen(c->reply), MSG_NOSIGNAL);
		(void)w;
		close(s);
	}
	return NULL;
}

static int fetch_with(const char *body_status, const char *body, struct cli_schema *s)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	char reply[8192], base[64];
	snprintf(reply, sizeof(reply),
		 "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
		 body_status, strlen(body), body);
	struct canned c = {fd, reply};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, serve_once, &c), 0);
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", ntohs(a.sin_port));
	struct cli_conn conn;
	assert_int_equal(cli_http_init(&conn, base, NULL), 0);
	int rc = cli_schema_fetch(&conn, s);
	cli_http_close(&conn);
	pthread_join(th, NULL);
	close(fd);
	return rc;
}

static void test_schema_fetch(void **state)
{
	(void)state;
	struct cli_schema s;
	/* an agent older than the route: not an error, the fallback */
	assert_int_equal(fetch_with("404 Not Found", "{\"error\":{\"code\":\"NOT_FOUND\",\"message\":\"no route\"}}", &s),
			 CLI_OK);
	assert_false(s.loaded);
	assert_int_equal(s.nkinds, 0);
	assert_true(cli_schema_is_common(&s, "pid"));
	cli_schema_free(&s);
	/* a body that is not JSON, or not of the shape: the fallback too */
	assert_int_equal(fetch_with("200 OK", "<html>", &s), CLI_OK);
	assert_false(s.loaded);
	cli_schema_free(&s);
	assert_int_equal(fetch_with("200 OK", "{\"kinds\":7}", &s), CLI_OK);
	assert_false(s.loaded);
	cli_schema_free(&s);
	assert_int_equal(fetch_with("500 Internal Server Error", "{}", &s), CLI_OK);
	assert_false(s.loaded);
	cli_schema_free(&s);
	/* the schema */
	assert_int_equal(fetch_with("200 OK", "{\"kinds\":[{\"name\":\"mem_stall\",\"details\":\"stall {d:dur}\"}],"
					      "\"common_fields\":[{\"name\":\"time\"}]}", &s),
			 CLI_OK);
	assert_true(s.loaded);
	assert_int_equal(s.type_width, 9);
	char *d = details_with(&s, "{\"type\":\"mem_stall\",\"d\":52000000}");
	assert_string_equal(d, "stall 52.0ms");
	free(d);
	cli_schema_free(&s);
	/* nobody listening: the API is unreachable, an error (exit 1) */
	struct cli_conn conn;
	assert_int_equal(cli_http_init(&conn, "http://127.0.0.1:1", NULL), 0);
	assert_int_equal(cli_schema_fetch(&conn, &s), CLI_ERR);
	cli_http_close(&conn);
	cli_schema_free(&s);
}

/* Code points of UTF-8 text up to the first occurrence of mark. */
static size_t cps_before(const char *s, const char *mark)
{
	const char *e = strstr(s, mark);
	assert_non_null(e);
	size_t n = 0;
	for (; s < e; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Columns are padded by code points, not bytes (finding 3c): a multibyte
 * comm, container id or runtime leaves the next column where an ASCII one
 * does; an escaped cell counts as the escape's length. */
static void test_multibyte_alignment(void **state)
{
	(void)state;
	const char *fmt = "{\"id\":1,\"time\":\"2024-01-01T00:00:00.000000000Z\",\"type\":\"exec\","
			  "\"container_id\":\"%s\",\"pid\":1,\"comm\":\"%s\",\"argv\":[\"MARK\"],\"filename\":\"f\"}";
	char js[512];
	snprintf(js, sizeof(js), fmt, "abcdef", "cafexx");
	char *ascii = row(js);
	snprintf(js, sizeof(js), fmt, "\u00e9\u00e9\u00e9", "caf\u00e9\u65e5\u672c");
	char *multi = row(js);
	snprintf(js, sizeof(js), fmt, "x", "a\\u001bb");
	char *esc = row(js);
	assert_non_null(strstr(multi, "caf\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac"));
	assert_int_equal(cps_before(multi, "MARK"), cps_before(ascii, "MARK"));
	assert_int_equal(cps_before(esc, "MARK"), cps_before(ascii, "MARK"));
	free(ascii);
	free(multi);
	free(esc);
	/* containers: the runtime and pod cells */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *cs = parse("[{\"container_id\":\"abc\",\"runtime\":\"r\u00fcnc\",\"pod_uid\":\"p\u00f6d\","
			   "\"events\":1,\"by_type\":{\"exec\":1},\"last_seen\":\"t\"},"
			   "{\"container_id\":\"abc\",\"runtime\":\"runcc\",\"pod_uid\":\"podd\","
			   "\"events\":1,\"by_type\":{\"exec\":1},\"last_seen\":\"t\"}]");
	cli_print_containers(f, cs);
	assert_int_equal(fclose(f), 0);
	char *l2 = strchr(buf, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
	assert_int_equal(cps_before(l2, "exec="), cps_before(l3, "exec="));
	free(buf);
	json_decref(cs);
}

/* A hostile --api server (finding 2): every error text the CLI prints from
 * it (error.message, code, reason, a non-JSON body) is escaped. Runs fn
 * against a one-shot server answering status + body and returns what it
 * wrote to stderr. */
static char *stderr_of(const char *status, const char *body, int (*fn)(struct cli_conn *))
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	char reply[8192], base[64];
	snprintf(reply, sizeof(reply),
		 "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
		 status, strlen(body), body);
	struct canned c = {fd, reply};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, serve_once, &c), 0);
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", ntohs(a.sin_port));
	struct cli_conn conn;
	assert_int_equal(cli_http_init(&conn, base, NULL), 0);
	char path[] = "/tmp/sl-cli-stderr.XXXXXX";
	int tmp = mkstemp(path);
	assert_true(tmp >= 0);
	unlink(path);
	fflush(stderr);
	int saved = dup(2);
	dup2(tmp, 2);
	int rc = fn(&conn);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	assert_int_not_equal(rc, CLI_OK);
	cli_http_close(&conn);
	pthread_join(th, NULL);
	close(fd);
	off_t n = lseek(tmp, 0, SEEK_END);
	char *out = calloc(1, (size_t)n + 1);
	assert_non_null(out);
	assert_int_equal(pread(tmp, out, (size_t)n, 0), n);
	close(tmp);
	return out;
}

static int get_containers(struct cli_conn *c)
{
	json_t *o = NULL;
	int rc = cli_get_json(c, "/api/v1/containers", 0, &o, NULL);
	json_decref(o);
	return rc;
}

static int get_top(struct cli_conn *c)
{
	static volatile sig_atomic_t stop;
	return cli_top(c, 0, 0, &stop);
}

static void assert_lines_safe(char *buf)
{
	for (char *l = buf, *e; l && *l; l = e ? e + 1 : NULL) {
		e = strchr(l, '\n');
		char *line = strndup(l, e ? (size_t)(e - l + 1) : strlen(l));
		assert_terminal_safe(line);
		free(line);
	}
}

static void test_hostile_error_messages(void **state)
{
	(void)state;
	const char *hostile = "{\"error\":{\"code\":\"BAD\\u001b[2J\",\"message\":\"type: 'x\\u001b[2J' \\u009b1m"
			      "\\u202e\\u0007\",\"reason\":\"r\\u001b]0;t\\u0007\"}}";
	char *out = stderr_of("400 Bad Request", hostile, get_containers);
	assert_lines_safe(out);
	assert_non_null(strstr(out, "type: 'x\\x1b[2J' \\u{009b}1m\\u{202e}\\x07"));
	assert_non_null(strstr(out, "BAD\\x1b[2J"));
	assert_non_null(strstr(out, "r\\x1b]0;t\\x07"));
	free(out);
	/* not the JSON error shape: the body is printed, escaped */
	out = stderr_of("502 Bad Gateway", "<b>\x1b[2J\xc2\x9b</b>", get_containers);
	assert_lines_safe(out);
	assert_non_null(strstr(out, "<b>\\x1b[2J\\u{009b}</b>"));
	free(out);
	/* top has its own error path */
	out = stderr_of("500 Internal Server Error", hostile, get_top);
	assert_lines_safe(out);
	assert_non_null(strstr(out, "\\x1b[2J"));
	free(out);
}

/* `top` fits the width (cli_width): no line longer, the least important
 * columns dropped first, the never-dropped ones kept; without a width all
 * columns; the neighbours are the interval's (interval_wait_seconds), not
 * the cumulative total. */
static char *top_text(json_t *body, int width)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cli_width = width;
	cli_print_top(f, body);
	cli_width = 0;
	fclose(f);
	return buf;
}

static void test_top_fits_width(void **state)
{
	(void)state;
	json_t *body = parse(
		"{\"interval_seconds\":1.0,\"containers\":["
		"{\"container_id\":\"aaaaaaaaaaaa1111\",\"runtime\":\"runc\",\"host\":false,"
		"\"interval\":{\"waits_per_second\":120,\"wait_seconds\":0.5,\"p50_seconds\":0.001,"
		"\"p90_seconds\":0.002,\"p99_seconds\":0.004,\"max_seconds\":0.01,\"runnable_wait_share\":0.25,"
		"\"internal_seconds\":0.1,\"external_seconds\":0.4},\"throttling\":null,\"neighbours\":["
		"{\"container_id\":\"cccccccccccc\",\"host\":false,\"wait_seconds\":99,\"interval_wait_seconds\":0},"
		"{\"container_id\":\"bbbbbbbbbbbb\",\"host\":false,\"wait_seconds\":1,\"interval_wait_seconds\":0.3}]},"
		"{\"container_id\":\"\",\"runtime\":\"host\",\"host\":true,"
		"\"interval\":{\"waits_per_second\":5,\"wait_seconds\":0.01},\"neighbours\":[]}]}");
	char *all = top_text(body, 0);
	assert_non_null(strstr(all, "RUNTIME"));
	assert_non_null(strstr(all, "THROTTLED"));
	assert_non_null(strstr(all, "bbbbbbbbbbbb (300.00ms)")); /* the interval's wait */
	assert_null(strstr(all, "cccccccccccc")); /* caused none in the interval (99 s in total) */
	assert_non_null(strstr(all, "every figure is of this interval"));
	for (int w = 40; w <= 160; w += 20) {
		char *t = top_text(body, w);
		for (const char *p = t; *p;) {
			size_t ll = strcspn(p, "\n");
			if (ll > (size_t)w)
				fail_msg("width %d: a line of %zu: %.*s", w, ll, (int)ll, p);
			p += ll + (p[ll] == '\n');
		}
		assert_non_null(strstr(t, "aaaaaaaaaaaa"));
		if (w >= 80 && w < 140) { /* 139 columns hold them all */
			assert_non_null(strstr(t, "P99"));
			assert_non_null(strstr(t, "WAIT%"));
			assert_null(strstr(t, "RUNTIME")); /* the first to go */
		}
		if (w == 100)
			assert_non_null(strstr(t, "bbbbbbbbbbbb"));
		free(t);
	}
	free(all);
	json_decref(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sched_delay_row),
		cmocka_unit_test(test_exit_signal_truncated),
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_known_details),
		cmocka_unit_test(test_same_as_legacy),
		cmocka_unit_test(test_unknown_type),
		cmocka_unit_test(test_no_schema),
		cmocka_unit_test(test_bad_schema),
		cmocka_unit_test(test_escape_cells),
		cmocka_unit_test(test_schema_fetch),
		cmocka_unit_test(test_hostile_error_messages),
		cmocka_unit_test(test_multibyte_alignment),
		cmocka_unit_test(test_top_fits_width),
		cmocka_unit_test(test_status_hides_zero_counters),
	};
	return cmocka_run_group_tests(tests, load_schema, free_schema);
}
