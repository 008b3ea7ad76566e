/* Symbolization benchmark (issue 5, "Symbolizing a profile with >= 10,000
 * distinct frames: time"). Builds a raw profile whose user ips are random
 * addresses inside the executable mappings of every ELF this process has
 * loaded (libc, libcurl, libcrypto, libsqlite3, ...) and whose kernel ips
 * are random addresses inside /proc/kallsyms text symbols, then times
 *   cold:  new symbolizer + sl_symbolize (maps snapshot, ELF parsing of
 *          every module, kallsyms parsing, frame dedup)
 *   warm:  sl_symbolize again with the caches filled
 *   and each writer.
 * Usage: symbolize_bench [STACKS] [DEPTH]   (defaults 4000 x 24) */
#include "profile/profile.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct range {
	uint64_t a, b;
};

int main(int argc, char **argv)
{
	int nstacks = argc > 1 ? atoi(argv[1]) : 4000;
	int depth = argc > 2 ? atoi(argv[2]) : 24;
	struct range ur[512], kr[1];
	size_t nur = 0;
	char line[1024];
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f) && nur < 512) {
		unsigned long long a, b;
		char perms[8], path[900] = "";
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %899s", &a, &b, perms, path) >= 3 && perms[2] == 'x' &&
		    path[0] == '/')
			ur[nur++] = (struct range){ a, b };
	}
	if (f)
		fclose(f);
	/* kernel: all text symbol addresses */
	uint64_t *kaddr = NULL;
	size_t nk = 0, capk = 0;
	f = fopen("/proc/kallsyms", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char t;
		if (sscanf(line, "%llx %c", &a, &t) == 2 && a && (t == 't' || t == 'T')) {
			if (nk == capk)
				kaddr = realloc(kaddr, (capk = capk ? capk * 2 : 4096) * sizeof(*kaddr));
			kaddr[nk++] = a;
		}
	}
	if (f)
		fclose(f);
	(void)kr;
	struct sl_raw_profile *rp = sl_raw_profile_new(SL_PROF_ON_CPU, 0, 30000000000ull, 10101010);
	uint64_t u[SL_PROF_MAX_DEPTH], k[8];
	for (int i = 0; i < nstacks; i++) {
		int du = depth < SL_PROF_MAX_DEPTH ? depth : SL_PROF_MAX_DEPTH;
		for (int d = 0; d < du; d++) {
			const struct range *r = &ur[rnd() % nur];
			u[d] = r->a + rnd() % (r->b - r->a);
		}
		int dk = nk ? 6 : 0;
		for (int d = 0; d < dk; d++)
			k[d] = kaddr[rnd() % nk] + rnd() % 16;
		struct sl_raw_stack s = { .pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(), .comm = "bench",
					  .user_ips = u, .n_user = (uint32_t)du, .kernel_ips = k,
					  .n_kernel = (uint32_t)dk, .count = 1 + rnd() % 50 };
		s.value_ns = s.count * 10101010;
		sl_raw_profile_add(rp, &s);
	}
	double t0 = now(), c0 = cpu();
	struct sl_symbolizer *sy = sl_symbolizer_new(NULL);
	struct sl_profile *p = sl_symbolize(sy, rp);
	double t1 = now(), c1 = cpu();
	struct sl_profile *p2 = sl_symbolize(sy, rp);
	double t2 = now(), c2 = cpu();
	if (!p || !p2) {
		fprintf(stderr, "symbolize failed\n");
		return 1;
	}
	struct sl_sym_stats st;
	sl_symbolizer_stats(sy, &st);
	size_t ips = 0;
	for (size_t i = 0; i < rp->n_stacks; i++)
		ips += rp->stacks[i].n_user + rp->stacks[i].n_kernel;
	printf("stacks %zu, ips %zu, distinct frames %zu, modules %" PRIu64 ", kernel symbols %s\n",
	       rp->n_stacks, ips, p->nframes, st.modules_cached,
	       st.kallsyms_state == 1 ? "visible" : "hidden");
	printf("resolved %.1f%% of ips (cold+warm counters: %" PRIu64 " resolved, %" PRIu64 " unresolved)\n",
	       100.0 * (double)st.frames_resolved / (double)(st.frames_resolved + st.frames_unresolved),
	       st.frames_resolved, st.frames_unresolved);
	printf("cold symbolize: %.1f ms CPU (%.1f ms wall)\n", (c1 - c0) * 1e3, (t1 - t0) * 1e3);
	printf("warm symbolize: %.1f ms CPU (%.1f ms wall), %.0f ns CPU per ip\n", (c2 - c1) * 1e3, (t2 - t1) * 1e3,
	       (c2 - c1) * 1e9 / (double)ips);
	const char *names[] = { "pprof", "folded", "svg", "json" };
	for (int fmt = 0; fmt < 4; fmt++) {
		FILE *o = fopen("/dev/null", "w");
		double a = now(), ca = cpu();
		sl_profile_write(p, fmt, 1, o);
		double b = now(), cb = cpu();
		fclose(o);
		printf("write %-6s: %.1f ms CPU (%.1f ms wall)\n", names[fmt], (cb - ca) * 1e3, (b - a) * 1e3);
	}
	size_t nframes = p->nframes;
	sl_profile_free(p);
	sl_profile_free(p2);
	sl_symbolizer_free(sy);
	sl_raw_profile_free(rp);
	free(kaddr);
	return nframes >= 10000 ? 0 : 2;
}
