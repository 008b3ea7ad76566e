/* gpu module: NVRM Xid kernel-log line parser (gpu_xid.h). */
#include "modules/gpu_xid.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gpu_xid_parse(const char *msg, struct gpu_xid_line *out)
{
	const char *p = strstr(msg, "NVRM: Xid (");
	char *end;
	unsigned long v;

	if (!p)
		return -1;
	memset(out, 0, sizeof(*out));
	p += strlen("NVRM: Xid (");
	if (!strncmp(p, "PCI:", 4))
		p += 4;
	/* dddd:bb:dd */
	if (!isxdigit((unsigned char)*p))
		return -1;
	out->domain = (unsigned)strtoul(p, &end, 16);
	if (*end != ':')
		return -1;
	p = end + 1;
	if (!isxdigit((unsigned char)*p))
		return -1;
	out->bus = (unsigned)strtoul(p, &end, 16);
	if (*end != ':')
		return -1;
	p = end + 1;
	if (!isxdigit((unsigned char)*p))
		return -1;
	out->device = (unsigned)strtoul(p, &end, 16);
	if (out->bus > 0xff || out->device > 0x1f)
		return -1;
	if (*end == '.') /* a function, if a driver ever prints one */
		for (end++; isxdigit((unsigned char)*end); end++)
			;
	if (strncmp(end, "): ", 3))
		return -1;
	p = end + 3;
	if (!isdigit((unsigned char)*p))
		return -1;
	v = strtoul(p, &end, 10);
	if (v > 100000)
		return -1;
	out->xid = (unsigned)v;
	p = end;
	if (*p == ',')
		p++;
	while (*p == ' ')
		p++;
	if (!strncmp(p, "pid=", 4)) {
		p += 4;
		if (isdigit((unsigned char)*p)) {
			v = strtoul(p, &end, 10);
			out->pid = v <= 0x7fffffff ? (uint32_t)v : 0;
			p = end;
		} else {
			while (*p && *p != ',')
				p++;
		}
		if (*p == ',')
			p++;
		while (*p == ' ')
			p++;
	}
	if (!strncmp(p, "name=", 5)) {
		const char *q = p + 5, *c = strchr(q, ',');
		size_t n = c ? (size_t)(c - q) : strlen(q);
		if (n >= sizeof(out->name))
			n = sizeof(out->name) - 1;
		if (strncmp(q, "<unknown>", 9)) {
			memcpy(out->name, q, n);
			out->name[n] = 0;
		}
		p = c ? c + 1 : q + strlen(q);
		while (*p == ' ')
			p++;
	}
	snprintf(out->detail, sizeof(out->detail), "%s", p);
	return 0;
}

json_t *gpu_xid_fields(int gpu, const char *uuid, const char *bus_id, unsigned xid, const struct gpu_xid_line *line)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (gpu >= 0) {
		json_object_set_new(o, "gpu", json_integer(gpu));
		json_object_set_new(o, "uuid", json_string(uuid ? uuid : ""));
	}
	json_object_set_new(o, "pci_bus_id", json_string(bus_id ? bus_id : ""));
	json_object_set_new(o, "xid", json_integer(xid));
	json_object_set_new(o, "source", json_string(line ? "kmsg" : "nvml"));
	if (!line)
		return o;
	if (line->pid)
		json_object_set_new(o, "reported_pid", json_integer(line->pid));
	/* kernel-log bytes: json_string refuses invalid UTF-8 (left out then) */
	json_t *v;
	if (line->name[0] && (v = json_string(line->name)))
		json_object_set_new(o, "process_name", v);
	if (line->detail[0] && (v = json_string(line->detail)))
		json_object_set_new(o, "detail", v);
	return o;
}
