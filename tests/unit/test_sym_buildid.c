/* Build-id frames (struct sl_raw_bid): symbolized with no process to look
 * at, from the build-id index (a file indexed by sl_symbolizer_index_file),
 * from <debug_root>/.build-id/, and from a debuginfod server (a local
 * python3 http.server); an unknown build-id; the raw form copied by
 * sl_raw_profile_add; and the bogus outer frames a frame-pointer walk reads
 * above glibc's start code in a static binary (build/helpers/sl-profprog,
 * built -static by the tests) dropped, a real chain of start functions
 * kept. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profile/profile_internal.h"
#include "profile/symbolize_proc.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define DEAD_PID 0x3ffffff0 /* above pid_max's limit (PID_MAX_LIMIT = 4M): never a live process */

static char exe[PATH_MAX], sprog[PATH_MAX], tdir[256];

struct elf_file {
	struct sl_elf_info e;
	uint8_t id[SL_BUILD_ID_MAX];
	size_t idlen;
};

static void load_elf(const char *path, struct elf_file *f)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(sl_elf_read_fd(fd, &f->e), 0);
	close(fd);
	f->idlen = strlen(f->e.build_id) / 2;
	assert_true(f->idlen >= 8 && f->idlen <= SL_BUILD_ID_MAX);
	for (size_t i = 0; i < f->idlen; i++) {
		unsigned v;
		sscanf(f->e.build_id + 2 * i, "%2x", &v);
		f->id[i] = (uint8_t)v;
	}
}

/* ELF address of function name in f (0 when absent). */
static uint64_t sym_addr(const struct elf_file *f, const char *name)
{
	for (size_t i = 0; i < f->e.nsyms; i++)
		if (!strcmp(f->e.names + f->e.syms[i].name, name))
			return f->e.syms[i].addr;
	return 0;
}

/* File offset of ELF address va (its PT_LOAD segment). */
static uint64_t file_off(const struct elf_file *f, uint64_t va)
{
	for (size_t i = 0; i < f->e.nload; i++)
		if (va >= f->e.load[i].vaddr && va - f->e.load[i].vaddr < f->e.load[i].filesz)
			return va - f->e.load[i].vaddr + f->e.load[i].offset;
	fail_msg("no PT_LOAD for 0x%" PRIx64, va);
	return 0;
}

static struct sl_raw_bid bid(const struct elf_file *f, uint64_t off)
{
	struct sl_raw_bid b = { .len = SL_BUILD_ID_MAX, .offset = off };
	memcpy(b.id, f->id, f->idlen); /* shorter build-ids: zero padded, as the kernel does */
	return b;
}

/* Symbolize one stack of n build-id/address frames (leaf first) of a
 * process that does not exist. */
static struct sl_profile *sym_stack(struct sl_symbolizer *s, const struct sl_raw_bid *b,
				    const uint64_t *ips, uint32_t n)
{
	struct sl_raw_profile *rp = sl_raw_profile_new(SL_PROF_ON_CPU, 1, 2, 3);
	struct sl_raw_stack st = { .pid = DEAD_PID, .comm = "gone", .user_ips = ips, .user_bid = b,
				   .n_user = n, .count = 7 };
	assert_int_equal(sl_raw_profile_add(rp, &st), 0);
	struct sl_profile *p = sl_symbolize(s, rp);
	sl_raw_profile_free(rp);
	assert_non_null(p);
	assert_int_equal(p->nsamples, 1);
	assert_int_equal(p->samples[0].count, 7);
	return p;
}

static const struct sl_frame *fr(const struct sl_profile *p, uint32_t i)
{
	return &p->frames[p->samples[0].frames[i]];
}

static struct sl_sym_config nodebug = { .debug_root = "/nonexistent-debug-root" };

/* The raw form is copied whole; a frame with neither a build-id nor an
 * address ends the stack. */
static void test_raw_copy(void **state)
{
	(void)state;
	struct sl_raw_bid b[4] = { { .len = 20, .offset = 0x10 }, { .len = 0 }, { .len = 20, .offset = 0x30 },
				   { .len = 0 } };
	uint64_t ips[4] = { 0, 0x7f0000001234, 0, 0 };
	b[0].id[0] = 0xab;
	struct sl_raw_profile *rp = sl_raw_profile_new(SL_PROF_ON_CPU, 1, 2, 3);
	struct sl_raw_stack st = { .pid = 1, .user_ips = ips, .user_bid = b, .n_user = 4, .count = 1 };
	assert_int_equal(sl_raw_profile_add(rp, &st), 0);
	const struct sl_raw_stack *c = &rp->stacks[0];
	assert_int_equal(c->n_user, 3);
	assert_ptr_not_equal(c->user_bid, b);
	assert_int_equal(c->user_bid[0].id[0], 0xab);
	assert_int_equal(c->user_bid[2].offset, 0x30);
	assert_int_equal(c->user_ips[1], 0x7f0000001234);
	/* without user_bid: as before, a zero ip ends the stack */
	struct sl_raw_stack st2 = { .pid = 1, .user_ips = ips + 1, .n_user = 3, .count = 1 };
	assert_int_equal(sl_raw_profile_add(rp, &st2), 0);
	assert_int_equal(rp->stacks[1].n_user, 1);
	assert_null(rp->stacks[1].user_bid);
	sl_raw_profile_free(rp);
}

/* A file indexed by path (as an exec event gives it) symbolizes build-id
 * frames of a process that never existed for the symbolizer; an unknown
 * build-id is a NOSYM frame that names it. */
static void test_index_file(void **state)
{
	(void)state;
	struct elf_file f;
	load_elf(sprog, &f);
	struct sl_symbolizer *s = sl_symbolizer_new(&nodebug);
	uint64_t fn = sym_addr(&f, "prof_spin_loop");
	assert_true(fn != 0);
	struct sl_raw_bid b[1] = { bid(&f, file_off(&f, fn) + 3) };
	uint64_t ip0 = 0;

	/* not indexed yet: named by its build-id */
	struct sl_profile *p = sym_stack(s, b, &ip0, 1);
	assert_int_equal(p->samples[0].nframes, 1);
	assert_true(fr(p, 0)->flags & SL_FRAME_NOSYM);
	char want[64];
	snprintf(want, sizeof(want), "[build-id:%.16s]+0x%" PRIx64, f.e.build_id, b[0].offset);
	assert_string_equal(fr(p, 0)->name, want);
	sl_profile_free(p);

	int pids[2] = { DEAD_PID, getpid() }; /* the first is gone: the second root is used */
	assert_int_equal(sl_symbolizer_index_file(s, pids, 2, "/nonexistent/file"), -ENOENT);
	assert_int_equal(sl_symbolizer_index_file(s, pids, 2, sprog), 0);
	p = sym_stack(s, b, &ip0, 1);
	assert_string_equal(fr(p, 0)->name, "prof_spin_loop");
	assert_string_equal(fr(p, 0)->module, sprog);
	assert_string_equal(fr(p, 0)->build_id, f.e.build_id);
	assert_int_equal(fr(p, 0)->sym_offset, 3);
	assert_int_equal(fr(p, 0)->module_offset, b[0].offset);
	sl_profile_free(p);
	sl_symbolizer_free(s);
	sl_elf_info_free(&f.e);
}

/* A symbol-less frame resolved through <debug_root>/.build-id/xx/rest.debug
 * with no process and nothing indexed. */
static void test_debug_root(void **state)
{
	(void)state;
	struct elf_file f;
	char cmd[1200], dr[300];
	load_elf(exe, &f);
	snprintf(dr, sizeof(dr), "%s/dbg", tdir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/.build-id/%.2s && cp %s %s/.build-id/%.2s/%s.debug", dr,
		 f.e.build_id, exe, dr, f.e.build_id, f.e.build_id + 2);
	assert_int_equal(system(cmd), 0);
	struct sl_sym_config c = { .debug_root = dr };
	struct sl_symbolizer *s = sl_symbolizer_new(&c);
	struct sl_raw_bid b[1] = { bid(&f, file_off(&f, sym_addr(&f, "main")) + 1) };
	uint64_t ip0 = 0;
	struct sl_profile *p = sym_stack(s, b, &ip0, 1);
	assert_string_equal(fr(p, 0)->name, "main");
	sl_profile_free(p);
	sl_symbolizer_free(s);
	sl_elf_info_free(&f.e);
}

/* Frames (leaf first) prof_spin_loop <- main <- __libc_start_call_main <-
 * then what a frame-pointer walk reads above glibc's start code in this
 * static binary: a "return address" at __do_global_dtors_aux (looked up
 * at ip - 1: register_tm_clones) and a canary-like garbage address. */
static void test_static_outer_frames(void **state)
{
	(void)state;
	struct elf_file f;
	load_elf(sprog, &f);
	struct sl_symbolizer *s = sl_symbolizer_new(&nodebug);
	int pids[1] = { getpid() };
	assert_int_equal(sl_symbolizer_index_file(s, pids, 1, sprog), 0);
	const char *names[3] = { "prof_spin_loop", "main", "__libc_start_call_main" };
	struct sl_raw_bid b[6];
	uint64_t ips[6] = { 0 };
	for (int i = 0; i < 3; i++) {
		uint64_t a = sym_addr(&f, names[i]);
		assert_true(a != 0);
		b[i] = bid(&f, file_off(&f, a) + 8);
	}
	uint64_t dtors = sym_addr(&f, "__do_global_dtors_aux");
	assert_true(dtors != 0);
	b[3] = bid(&f, file_off(&f, dtors));
	memset(&b[4], 0, sizeof(b[4]));
	ips[4] = 0xbe552274c0854800ull; /* not an address */
	struct sl_profile *p = sym_stack(s, b, ips, 5);
	assert_int_equal(p->samples[0].nframes, 3);
	for (int i = 0; i < 3; i++)
		assert_string_equal(fr(p, (uint32_t)i)->name, names[2 - i]); /* root first */
	sl_profile_free(p);

	/* a real chain of start functions is kept whole: ... <- __libc_start_main <- _start */
	uint64_t lsm = sym_addr(&f, "__libc_start_main"), st = sym_addr(&f, "_start");
	if (!lsm) /* aliases at one address: the symbol table keeps one name */
		lsm = sym_addr(&f, "__libc_start_main_impl");
	assert_true(lsm != 0);
	assert_true(st != 0);
	b[3] = bid(&f, file_off(&f, lsm) + 8);
	b[4] = bid(&f, file_off(&f, st) + 8);
	b[5] = bid(&f, file_off(&f, dtors)); /* garbage above _start */
	p = sym_stack(s, b, ips, 6);
	assert_int_equal(p->samples[0].nframes, 5);
	assert_string_equal(fr(p, 0)->name, "_start");
	assert_true(!strcmp(fr(p, 1)->name, "__libc_start_main") || !strcmp(fr(p, 1)->name, "__libc_start_main_impl"));
	assert_string_equal(fr(p, 4)->name, "prof_spin_loop");
	sl_profile_free(p);

	/* no start function on the stack (a walk from code in the exit path):
	 * the garbage caller at __do_global_dtors_aux+0 (ip - 1:
	 * register_tm_clones, which calls nothing) ends it */
	uint64_t cf = sym_addr(&f, "main");
	b[1] = bid(&f, file_off(&f, cf) + 8);
	b[2] = bid(&f, file_off(&f, dtors));
	p = sym_stack(s, b, ips, 5);
	assert_int_equal(p->samples[0].nframes, 2);
	assert_string_equal(fr(p, 0)->name, "main");
	sl_profile_free(p);
	/* an unknown frame (not a start function, not a never-caller): kept */
	p = sym_stack(s, b, ips + 3, 2);
	assert_int_equal(p->samples[0].nframes, 2);
	sl_profile_free(p);
	sl_symbolizer_free(s);
	sl_elf_info_free(&f.e);
	assert_true(sl_sym_is_entry_fn("_start"));
	assert_false(sl_sym_is_entry_fn("main"));
	assert_false(sl_sym_is_entry_fn(NULL));
	assert_true(sl_sym_is_never_caller("register_tm_clones"));
	assert_false(sl_sym_is_never_caller("__do_global_dtors_aux"));
}

/* A frame-pointer walk through code without frame pointers that reaches a
 * self-pointing structure in .data/.bss (glibc's malloc bins) repeats that
 * "return address" to the depth limit (seen: 126 frames of busybox+0x1e37f0,
 * a .bss offset, above a real leaf): a build-id frame whose offset is not in
 * an executable segment is [unknown], and the run of them one frame. */
static void test_not_text_callers(void **state)
{
	(void)state;
	struct elf_file f;
	load_elf(sprog, &f);
	uint64_t data_off = 0, text_off = 0;
	for (size_t i = 0; i < f.e.nload; i++) {
		if (!(f.e.load[i].flags & PF_X) && f.e.load[i].filesz > 64 && !data_off)
			data_off = f.e.load[i].offset + f.e.load[i].filesz - 16;
		if ((f.e.load[i].flags & PF_X) && !text_off)
			text_off = f.e.load[i].offset;
	}
	assert_true(data_off != 0 && text_off != 0);
	assert_int_equal(sl_elf_off_is_text(&f.e, data_off), 0);
	assert_int_equal(sl_elf_off_is_text(&f.e, text_off), 1);
	struct sl_elf_info none = { 0 };
	assert_int_equal(sl_elf_off_is_text(&none, 0x1000), -1);

	struct sl_symbolizer *s = sl_symbolizer_new(&nodebug);
	int pids[1] = { getpid() };
	assert_int_equal(sl_symbolizer_index_file(s, pids, 1, sprog), 0);
	enum { N = 127 };
	struct sl_raw_bid b[N];
	uint64_t ips[N] = { 0 };
	uint64_t leaf = sym_addr(&f, "prof_spin_loop");
	assert_true(leaf != 0);
	b[0] = bid(&f, file_off(&f, leaf) + 4);
	for (int i = 1; i < N; i++)
		b[i] = bid(&f, data_off);
	struct sl_profile *p = sym_stack(s, b, ips, N);
	assert_int_equal(p->samples[0].nframes, 2);
	assert_string_equal(fr(p, 0)->name, "[unknown]");
	assert_true(fr(p, 0)->flags & SL_FRAME_UNKNOWN);
	assert_string_equal(fr(p, 1)->name, "prof_spin_loop");
	sl_profile_free(p);
	/* the same offset as the leaf (the sampled ip itself) is kept as is:
	 * only callers are return addresses */
	b[0] = bid(&f, data_off);
	p = sym_stack(s, b, ips, 1);
	assert_int_equal(p->samples[0].nframes, 1);
	assert_false(fr(p, 0)->flags & SL_FRAME_UNKNOWN);
	sl_profile_free(p);
	sl_symbolizer_free(s);
	sl_elf_info_free(&f.e);
}

/* debuginfod: a local HTTP server with /buildid/<id>/debuginfo; the file
 * lands in the configured cache; a server that never answers costs at most
 * the timeout. */
static void test_debuginfod(void **state)
{
	(void)state;
	if (system("command -v python3 >/dev/null 2>&1")) {
		printf("SKIP: test_debuginfod: python3 not installed (the local debuginfod server)\n");
		skip();
	}
	struct elf_file f;
	char cmd[1500], srv[300], cache[300], port_file[300], urls[64];
	load_elf(sprog, &f);
	snprintf(srv, sizeof(srv), "%s/srv", tdir);
	snprintf(cache, sizeof(cache), "%s/cache", tdir);
	snprintf(port_file, sizeof(port_file), "%s/port", tdir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/buildid/%s && cp %s %s/buildid/%s/debuginfo", srv, f.e.build_id,
		 sprog, srv, f.e.build_id);
	assert_int_equal(system(cmd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* port 0: the kernel picks a free one; the server writes it */
		execlp("python3", "python3", "-c",
		       "import http.server,sys,os\n"
		       "os.chdir(sys.argv[1])\n"
		       "class H(http.server.SimpleHTTPRequestHandler):\n"
		       "    def log_message(self,*a): pass\n"
		       "s=http.server.HTTPServer(('127.0.0.1',0),H)\n"
		       "open(sys.argv[2]+'.tmp','w').write(str(s.server_address[1]))\n"
		       "os.rename(sys.argv[2]+'.tmp',sys.argv[2])\n"
		       "s.serve_forever()\n",
		       srv, port_file, (char *)NULL);
		_exit(127);
	}
	int port = 0;
	for (int i = 0; i < 200 && !port; i++) { /* bounded: 10 s */
		FILE *pf = fopen(port_file, "r");
		if (pf) {
			if (fscanf(pf, "%d", &port) != 1)
				port = 0;
			fclose(pf);
		}
		if (!port)
			usleep(50000);
	}
	assert_true(port > 0);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	struct sl_sym_config c = { .debug_root = "/nonexistent-debug-root", .debuginfod_urls = urls,
				   .debuginfod_cache = cache, .debuginfod_timeout_s = 5 };
	struct sl_symbolizer *s = sl_symbolizer_new(&c);
	struct sl_raw_bid b[1] = { bid(&f, file_off(&f, sym_addr(&f, "prof_spin_loop")) + 2) };
	uint64_t ip0 = 0;
	struct sl_profile *p = sym_stack(s, b, &ip0, 1);
	assert_string_equal(fr(p, 0)->name, "prof_spin_loop");
	sl_profile_free(p);
	snprintf(cmd, sizeof(cmd), "test -s %s/%s/debuginfo", cache, f.e.build_id);
	assert_int_equal(system(cmd), 0);
	sl_symbolizer_free(s);

	/* an unknown build-id: a 404, then not asked again (negative cache) */
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	s = sl_symbolizer_new(&c);
	b[0].id[0] ^= 0xff;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	p = sym_stack(s, b, &ip0, 1); /* server gone: connection refused at once */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(fr(p, 0)->flags & SL_FRAME_NOSYM);
	assert_true(t1.tv_sec - t0.tv_sec <= 6); /* the timeout bounds it */
	sl_profile_free(p);
	sl_symbolizer_free(s);
	unsetenv("DEBUGINFOD_URLS");
	sl_elf_info_free(&f.e);
}

/* A 20-byte build-id that ends in zero bytes (1 in 256 links): the kernel's
 * zero padding makes it look shorter in a stack frame. A copy of the static
 * helper with its build-id's last byte set to zero is symbolized once
 * indexed, and found as <debug_root>/.build-id/xx/<all 40 digits>.debug. */
static void test_trailing_zero_id(void **state)
{
	(void)state;
	struct elf_file f, z;
	char zprog[400], cmd[1400], dr[300];
	load_elf(sprog, &f);
	assert_int_equal((int)f.idlen, SL_BUILD_ID_MAX);
	FILE *in = fopen(sprog, "rb");
	assert_non_null(in);
	assert_int_equal(fseek(in, 0, SEEK_END), 0);
	long sz = ftell(in);
	assert_true(sz > 0);
	rewind(in);
	uint8_t *buf = malloc((size_t)sz);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)sz, in), (size_t)sz);
	fclose(in);
	uint8_t *at = memmem(buf, (size_t)sz, f.id, f.idlen);
	assert_non_null(at);
	at[f.idlen - 1] = 0;
	snprintf(zprog, sizeof(zprog), "%s/zprog", tdir);
	FILE *out = fopen(zprog, "wb");
	assert_non_null(out);
	assert_int_equal(fwrite(buf, 1, (size_t)sz, out), (size_t)sz);
	fclose(out);
	free(buf);
	load_elf(zprog, &z);
	assert_int_equal(strlen(z.e.build_id), 40);
	assert_string_equal(z.e.build_id + 38, "00");

	uint64_t fn = sym_addr(&z, "prof_spin_loop");
	struct sl_raw_bid b[1] = { bid(&z, file_off(&z, fn) + 1) };
	uint64_t ip0 = 0;
	struct sl_symbolizer *s = sl_symbolizer_new(&nodebug);
	int pids[1] = { getpid() };
	assert_int_equal(sl_symbolizer_index_file(s, pids, 1, zprog), 0);
	struct sl_profile *p = sym_stack(s, b, &ip0, 1);
	assert_string_equal(fr(p, 0)->name, "prof_spin_loop");
	assert_string_equal(fr(p, 0)->build_id, z.e.build_id);
	sl_profile_free(p);
	sl_symbolizer_free(s);

	snprintf(dr, sizeof(dr), "%s/zdbg", tdir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/.build-id/%.2s && cp %s %s/.build-id/%.2s/%s.debug", dr,
		 z.e.build_id, zprog, dr, z.e.build_id, z.e.build_id + 2);
	assert_int_equal(system(cmd), 0);
	struct sl_sym_config c = { .debug_root = dr };
	s = sl_symbolizer_new(&c);
	p = sym_stack(s, b, &ip0, 1);
	assert_string_equal(fr(p, 0)->name, "prof_spin_loop");
	sl_profile_free(p);
	sl_symbolizer_free(s);
	sl_elf_info_free(&z.e);
	sl_elf_info_free(&f.e);
}

/* The module cache's byte cap (max_module_bytes): a module that would pass
 * it is evicted when no snapshot uses it; under it, it is kept and counted. */
static void test_module_bytes_cap(void **state)
{
	(void)state;
	struct sl_sym_stats st;
	int pids[1] = { getpid() };
	struct sl_sym_config tiny = { .debug_root = "/nonexistent-debug-root", .max_module_bytes = 1 };
	struct sl_symbolizer *s = sl_symbolizer_new(&tiny);
	assert_int_equal(sl_symbolizer_index_file(s, pids, 1, sprog), 0);
	sl_symbolizer_stats(s, &st);
	assert_int_equal(st.modules_cached, 0);
	assert_int_equal(st.modules_bytes, 0);
	sl_symbolizer_free(s);

	struct elf_file f;
	load_elf(sprog, &f);
	s = sl_symbolizer_new(&nodebug);
	assert_int_equal(sl_symbolizer_index_file(s, pids, 1, sprog), 0);
	sl_symbolizer_stats(s, &st);
	assert_int_equal(st.modules_cached, 1);
	assert_true(st.modules_bytes >= f.e.nsyms * sizeof(*f.e.syms) + f.e.names_len);
	sl_symbolizer_free(s);
	sl_elf_info_free(&f.e);
}

int main(void)
{
	ssize_t r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (r <= 0)
		return 1;
	exe[r] = 0;
	/* build(-san)/tests/test_x -> build(-san)/helpers/sl-profprog (static, symbols) */
	char *sl = strrchr(exe, '/');
	snprintf(sprog, sizeof(sprog), "%.*s/../helpers/sl-profprog", (int)(sl - exe), exe);
	if (access(sprog, X_OK)) {
		/* helpers are built plain only (no sanitizers): the plain build's */
		snprintf(sprog, sizeof(sprog), "%.*s/../../build/helpers/sl-profprog", (int)(sl - exe), exe);
		if (access(sprog, X_OK)) {
			printf("SKIP: %s not built\n", sprog);
			return 77;
		}
	}
	char *rs = realpath(sprog, NULL);
	if (!rs)
		return 1;
	snprintf(sprog, sizeof(sprog), "%s", rs);
	free(rs);
	snprintf(tdir, sizeof(tdir), "/tmp/sl-bid-XXXXXX");
	if (!mkdtemp(tdir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_copy),
		cmocka_unit_test(test_index_file),
		cmocka_unit_test(test_debug_root),
		cmocka_unit_test(test_static_outer_frames),
		cmocka_unit_test(test_not_text_callers),
		cmocka_unit_test(test_debuginfod),
		cmocka_unit_test(test_trailing_zero_id),
		cmocka_unit_test(test_module_bytes_cap),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tdir);
	if (system(cmd))
		rc = rc ? rc : 1;
	return rc;
}
