/* libFuzzer: cgroup path attribution (src/cgroup/cgpath.c). The input is
 * one bare cgroup path and, as a whole, a /proc/<pid>/cgroup file; the path
 * is also tried with runc parents configured. Seeds: cgroup_path cases. */
#include "fuzz_util.h"

#include "cgroup/attr.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = sl_fuzz_cstr(data, size);
	if (!s)
		return 0;
	struct sl_attr a;
	sl_cgproc_parse(s, &a);
	sl_cgpath_parse(s, &a);
	struct sl_cgpath_opts o = {.n_runc_parents = 2};
	snprintf(o.runc_parents[0], sizeof(o.runc_parents[0]), "/sandlens-test");
	snprintf(o.runc_parents[1], sizeof(o.runc_parents[1]), "/mytest");
	sl_cgpath_parse_opts(s, &o, &a);
	/* every line of a /proc/<pid>/cgroup file as a bare path too */
	for (char *line = s, *nl; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		char *colon = strrchr(line, ':');
		sl_cgpath_parse_opts(colon ? colon + 1 : line, &o, &a);
	}
	free(s);
	return 0;
}
