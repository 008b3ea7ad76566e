/* mem module record decoding; see mem_decode.h. */
#include "modules/mem_decode.h"

const char *sl_mem_stall_kind_name(unsigned kind)
{
	static const char *const n[] = {"direct_reclaim", "memcg_reclaim", "compaction"};
	return kind < 3 ? n[kind] : "unknown";
}

const char *sl_mem_memcg_src_name(unsigned src)
{
	static const char *const n[] = {"task", "at_max", "over_high", "guess"};
	return src < 4 ? n[src] : "unknown";
}

const char *sl_mem_compact_status_name(int status)
{
	static const char *const n[] = {"not_suitable_zone", "skipped", "deferred", "no_suitable_page", "continue",
					"complete", "partial_skipped", "contended", "success"};
	return status >= 0 && status < 9 ? n[status] : "unknown";
}

const char *sl_mem_hist_kind_name(unsigned kind)
{
	static const char *const n[] = {"direct_reclaim", "memcg_reclaim", "compaction", "throttle"};
	return kind < SL_MEM_H_KINDS ? n[kind] : "unknown";
}

json_t *sl_mem_stall_fields(const struct sl_mem_stall_event *e, size_t size)
{
	json_t *o, *mc;

	if (!e || size < sizeof(*e) || e->hdr.type != SL_EV_MEM_STALL)
		return NULL;
	o = json_object();
	mc = json_object();
	if (!o || !mc) {
		json_decref(o);
		json_decref(mc);
		return NULL;
	}
	json_object_set_new(o, "tid", json_integer(e->task.tid));
	json_object_set_new(o, "kind", json_string(sl_mem_stall_kind_name(e->kind)));
	json_object_set_new(o, "duration_ns", json_integer((json_int_t)e->duration_ns));
	json_object_set_new(o, "nr_scanned", json_integer((json_int_t)e->nr_scanned));
	json_object_set_new(o, "nr_reclaimed", json_integer((json_int_t)e->nr_reclaimed));
	json_object_set_new(o, "order", json_integer(e->order));
	json_object_set_new(o, "gfp_flags", json_integer((json_int_t)e->gfp_flags));
	json_object_set_new(o, "truncated_count", json_integer((json_int_t)e->truncated_count));
	json_object_set_new(mc, "cgroup_id", json_integer((json_int_t)e->memcg_id));
	json_object_set_new(mc, "hierarchy", json_string(e->memcg_v1 ? "v1" : "v2"));
	json_object_set_new(mc, "source", json_string(sl_mem_memcg_src_name(e->memcg_src)));
	json_object_set_new(o, "memcg", mc);
	if (e->kind == SL_MEM_STALL_COMPACTION) {
		json_object_set_new(o, "compaction_status", json_string(sl_mem_compact_status_name(e->status)));
		json_object_set_new(o, "compaction_status_code", json_integer(e->status));
	}
	return o;
}
