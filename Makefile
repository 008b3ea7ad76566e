# sandlens build. `make run` = run-time deps + build + run the agent in the foreground;
# `make test` = run-time and test deps + build + every test (plain, then ASan+UBSan).
# `make install` / `uninstall` / `deb`: docs/DEPLOY.md.
# SAN=1 builds everything with -fsanitize=address,undefined into build-san/.

SAN ?= 0
# BUILD_DIR overrides the output directory (e.g. a private one while others build).
ifeq ($(SAN),1)
B := $(or $(BUILD_DIR),build-san)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
B := $(or $(BUILD_DIR),build)
SANFLAGS :=
endif

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
PKGS := libbpf libmicrohttpd jansson sqlite3 yaml-0.1 libcurl liburcu-bp libdw libprotobuf-c
CFLAGS ?= -O2 -g
override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iinclude -Isrc -I$(B)/skel $(SANFLAGS) \
	$(shell pkg-config --cflags $(PKGS))
LDLIBS := $(shell pkg-config --libs $(PKGS)) -ldebuginfod -lelf -lz -lpthread -lm
override LDFLAGS += $(SANFLAGS)

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(B)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(B)/skel/%.skel.h,$(BPF_SRCS))

# src/common: what the agent and the CLI share (no daemon code, no module):
# libslcommon.a. Everything else but the mains: libsandlens.a.
COMMON_SRCS := $(wildcard src/common/*.c)
COMMON_OBJS := $(patsubst src/%.c,$(B)/obj/%.o,$(COMMON_SRCS))
LIB_SRCS := $(wildcard src/cgroup/*.c src/store/*.c src/cprof/*.c \
	src/modules/*.c src/api/*.c src/stats/*.c src/profile/*.c src/task/*.c src/auto/*.c) $(filter-out src/agent/main.c,$(wildcard src/agent/*.c)) \
	$(wildcard src/export/*.c src/opentelemetry/proto/*/v1/*.pb-c.c src/opentelemetry/proto/collector/*/v1/*.pb-c.c)
# the web UI's files (web/, docs/UI.md), embedded by scripts/gen-webui.sh
WEB_FILES := $(sort $(wildcard web/*.html web/*.js web/*.css))
LIB_OBJS := $(patsubst src/%.c,$(B)/obj/%.o,$(LIB_SRCS)) $(B)/obj/gen/webui_assets.o
# the HTML flame graph's script and style, with their CSP hashes (scripts/gen-flame-page.sh)
FLAME_PAGE := src/profile/flame_page.js src/profile/flame_page.css
LIB_OBJS += $(B)/obj/gen/flame_page.o
CLI_SRCS := $(wildcard src/cli/*.c)
CLI_OBJS := $(patsubst src/%.c,$(B)/obj/%.o,$(CLI_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS))
HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(patsubst tests/helpers/%.c,$(B)/helpers/%,$(HELPER_SRCS))
# the test NVML of the gpu module's tests (a shared object, rule below)
NVML_SHIM := $(B)/helpers/libnvidia-ml.so.1
# Floor programs of the benchmarks (bench/floor/X.bpf.c + X.c -> sl-X-floor style loaders).
BENCH_FLOORS := $(patsubst bench/floor/%.bpf.c,%,$(wildcard bench/floor/*.bpf.c))
BENCH_BINS := $(patsubst %,$(B)/bench/sl-%,$(subst _,-,$(BENCH_FLOORS)))

# Header dependencies: every compile writes a make fragment beside its
# output (-MMD: the headers it read, system ones excepted; -MP: an empty
# rule per header, so a deleted header is no error), included at the end.
# A header change rebuilds what includes it, and only that.
# An output that exists without its .d (a build directory from before the
# .d files) is rebuilt once (DEPS, at the end).
DEPFLAGS = -MMD -MP -MF $@.d -MT $@

.SECONDARY:
.PHONY: all deps deps-test run test check unit integration clean bench proto fuzz check-names install uninstall deb
all: $(B)/sandlensd $(B)/sandlens $(B)/doc/sandlens.1 $(B)/doc/sandlens.bash $(UNIT_BINS) $(HELPER_BINS) $(NVML_SHIM) $(BENCH_BINS) check-names

# The module contract: no file outside a module's own and the registry
# names a module (src/agent/module.h). After the objects: its symbol rule
# reads them (nm), so a violation only the linker sees fails the very
# build that adds it.
# Runs again only when a file it reads changed (the stamp): `make run`
# does not pay its ~40 s each time.
NAMES_INPUTS := $(shell find src bpf include -name '*.[ch]') Makefile \
	tests/check-module-names.sh tests/check-module-names.allow src/modules/registry.c
check-names: $(B)/names.ok
$(B)/names.ok: $(B)/sandlensd $(B)/sandlens $(NAMES_INPUTS)
	@tests/check-module-names.sh --build $(B)
	@touch $@

deps:
	@scripts/install-deps.sh

deps-test:
	@scripts/install-deps.sh --test

$(B)/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(B)/bpf/%.bpf.o: bpf/%.bpf.c $(B)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-I$(B) -Iinclude -Ibpf $(DEPFLAGS) -c $< -o $@

# The skeleton embeds the object in the agent's binary (read at load): its
# DWARF (~85 % of the object) stripped first; libbpf reads only the programs,
# maps, .BTF and .BTF.ext, which -g keeps (build/bpf/*.bpf.o keep the DWARF).
$(B)/skel/%.skel.h: $(B)/bpf/%.bpf.o
	@mkdir -p $(@D)
	$(LLVM_STRIP) -g $< -o $@.o
	$(BPFTOOL) gen skeleton $@.o name $*_bpf > $@.tmp && mv $@.tmp $@ && rm -f $@.o

$(B)/bench/floor/%.bpf.o: bench/floor/%.bpf.c $(B)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-I$(B) -Iinclude -Ibpf $(DEPFLAGS) -c $< -o $@

$(B)/bench/floor/%.skel.h: $(B)/bench/floor/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp && mv $@.tmp $@

$(B)/bench/sl-sched-floor: bench/floor/sched_floor.c $(B)/bench/floor/sched_floor.skel.h
	$(CC) $(CFLAGS) -I$(B)/bench/floor $(LDFLAGS) -o $@ $< -lbpf -lelf -lz

$(B)/bench/sl-exec-floor: bench/floor/exec_floor.c $(B)/bench/floor/exec_floor.skel.h
	$(CC) $(CFLAGS) -I$(B)/bench/floor $(LDFLAGS) -o $@ $< -lbpf -lelf -lz

# The skeletons are order-only: all of them exist before the first C compile
# (a fresh build has no .d files yet to say which object includes which);
# after that the .d files name the skeleton an object really includes.
$(B)/obj/%.o: src/%.c | $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(B)/gen/webui_assets.c: $(WEB_FILES) scripts/gen-webui.sh
	@mkdir -p $(@D)
	scripts/gen-webui.sh $@ $(WEB_FILES)

$(B)/obj/gen/webui_assets.o: $(B)/gen/webui_assets.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(B)/gen/flame_page.c: $(FLAME_PAGE) scripts/gen-flame-page.sh
	@mkdir -p $(@D)
	scripts/gen-flame-page.sh $@ $(FLAME_PAGE)

$(B)/obj/gen/flame_page.o: $(B)/gen/flame_page.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(B)/libsandlens.a: $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(B)/libslcommon.a: $(COMMON_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(B)/sandlensd: $(B)/obj/agent/main.o $(B)/libsandlens.a $(B)/libslcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The CLI: its objects, libslcommon.a and only the libraries it calls
# (tests/integration/t_cli_layer.sh checks both).
CLI_LDLIBS := $(shell pkg-config --libs libcurl jansson)
$(B)/sandlens: $(CLI_OBJS) $(B)/libslcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(CLI_LDLIBS)

# The man page and the bash completion, generated from the CLI's command
# table (src/cli/commands.c) by the CLI itself: one source for both.
$(B)/doc/sandlens.1: $(B)/sandlens
	@mkdir -p $(@D)
	$(B)/sandlens man > $@.tmp && mv $@.tmp $@
$(B)/doc/sandlens.bash: $(B)/sandlens
	@mkdir -p $(@D)
	$(B)/sandlens completion bash > $@.tmp && mv $@.tmp $@

$(B)/tests/%: tests/unit/%.c $(B)/libsandlens.a $(B)/libslcommon.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) $(DEPFLAGS) -o $@ $< $(B)/libsandlens.a $(B)/libslcommon.a $(LDLIBS) -lcmocka

# Test helper programs run inside runc containers: static, no sanitizers.
$(B)/helpers/%: tests/helpers/%.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -fno-inline -Wall -Wextra -Werror -static $(DEPFLAGS) -o $@ $<

# The test NVML (tests/helpers/nvml/): a shared object the gpu module's
# tests load through gpu.nvml_path; with the build's sanitizers so it
# loads into an ASan agent.
$(NVML_SHIM): tests/helpers/nvml/sl_fake_nvml.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -fPIC -shared -Wall -Wextra -Werror -Isrc $(SANFLAGS) $(DEPFLAGS) -o $@ $< -lpthread

# libFuzzer harnesses (tests/fuzz/fuzz_<name>.c), one per parser of outside
# input, into build-fuzz/ (clang -fsanitize=fuzzer,address,undefined). Each
# links only the sources of its parser: FUZZ_SRCS_<name>. Run them with
# tests/fuzz/run.sh; CI runs each briefly (tests/integration/t_fuzz_smoke.sh).
FUZZ_B := build-fuzz
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror -Iinclude -Isrc -Itests/fuzz \
	$(FUZZ_SAN) $(shell pkg-config --cflags $(PKGS))
# the whole profile library (a list by name went stale when it gained files)
# the profile objects whole, with what they call outside src/profile (the
# flame graph page is generated into $(B)/gen)
FUZZ_PROF_SRCS := $(wildcard src/profile/*.c) src/common/timefmt.c src/common/json.c $(B)/gen/flame_page.c
FUZZ_SRCS_cgpath := src/cgroup/cgpath.c
FUZZ_SRCS_cgstat := $(wildcard src/cgroup/cgstat*.c) src/cgroup/cgfd.c
FUZZ_SRCS_mounts := src/cgroup/mounts.c
FUZZ_SRCS_runc_state := src/cgroup/runc_state.c
FUZZ_SRCS_k8s_names := src/cgroup/k8s_names.c src/cgroup/runc_state.c src/profile/sym_open.c
# the registry and every module's objects whole (a module need not split
# its declarations into a <m>_decl.c: mem keeps them in mem.c), compiled
# against the plain build's skeleton headers; the agent services they call
# are never called by the loader and are stubs (config_stubs.c, generated
# from what the objects leave undefined: each an abort())
FUZZ_SRCS_config := src/agent/config.c src/auto/auto_config.c src/auto/detect.c src/auto/psi_trigger.c $(wildcard src/common/*.c) $(wildcard src/modules/*.c)
FUZZ_SRCS_api_params := src/api/api_params.c src/common/timefmt.c
FUZZ_SRCS_mcp := $(wildcard src/common/mcp*.c)
FUZZ_SRCS_task_spec := src/task/spec.c
FUZZ_SRCS_maps := src/profile/symbolize_maps.c
FUZZ_SRCS_kallsyms := src/profile/symbolize_kallsyms.c src/profile/sym_open.c
FUZZ_SRCS_perfmap := $(FUZZ_PROF_SRCS)
FUZZ_SRCS_elf := $(FUZZ_PROF_SRCS)
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(patsubst %,$(FUZZ_B)/fuzz_%,$(FUZZ_TARGETS))

fuzz: $(FUZZ_BINS)

$(FUZZ_B)/obj/%.o: src/%.c | $(SKELS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(B)/skel -fsanitize=fuzzer-no-link $(DEPFLAGS) -c $< -o $@

$(FUZZ_B)/obj/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(DEPFLAGS) -c $< -o $@


# objects of target $(1) (a function: a '%' in a pattern rule's
# prerequisites would be taken for the stem)
fuzz_objs = $(patsubst $(B)/gen/%.c,$(FUZZ_B)/obj/gen/%.o,$(patsubst src/%.c,$(FUZZ_B)/obj/%.o,$(FUZZ_SRCS_$(1))))
.SECONDEXPANSION:
$(FUZZ_B)/fuzz_%: tests/fuzz/fuzz_%.c $$(call fuzz_objs,$$*)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(DEPFLAGS) -o $@ $< $(filter %.o %_stubs.c,$^) $(LDLIBS)

# fuzz_config's stubs: every sl_* symbol its objects use and none defines
$(FUZZ_B)/config_stubs.c: $(call fuzz_objs,config) tests/fuzz/fuzz_config.c
	@mkdir -p $(@D)
	nm --defined-only --format=just-symbols $(filter %.o,$^) | sort -u > $@.def
	nm -u --format=just-symbols $(filter %.o,$^) | sort -u | comm -23 - $@.def | grep '^sl_' | \
		awk 'BEGIN { print "#include <stdlib.h>" } { print "void " $$1 "(void); void " $$1 "(void) { abort(); }" }' > $@.tmp
	mv $@.tmp $@
	rm -f $@.def
$(FUZZ_B)/fuzz_config: $(FUZZ_B)/config_stubs.c

# src/profile/profile.pb-c.{c,h} are committed; regenerate after editing proto/profile.proto.
# src/stats/kata_{ttrpc,agent}.pb-c.{c,h} are committed too (proto/kata: the ttrpc
# envelope and the Kata agent's StatsContainer messages, docs/STATS.md "Guest-agent source").
# src/opentelemetry/proto/**.pb-c.{c,h} are committed too, generated from the
# OpenTelemetry project's own files in proto/opentelemetry (copied unchanged).
# protoc-c 1.4 does not know proto3 `optional` (three fields of metrics.proto):
# it is dropped in a temporary copy, which changes presence only, not the wire
# format (docs/EXPORT.md).
OTLP_PROTOS := $(shell cd proto && find opentelemetry -name '*.proto' | sort)
proto:
	protoc-c --c_out=src/profile --proto_path=proto proto/profile.proto
	protoc-c --c_out=src/stats --proto_path=proto/kata proto/kata/kata_ttrpc.proto proto/kata/kata_agent.proto
	t=$$(mktemp -d) && cp -r proto/opentelemetry $$t/ && \
	sed -i 's/^\(\s*\)optional /\1/' $$t/opentelemetry/proto/metrics/v1/metrics.proto && \
	protoc-c --c_out=src --proto_path=$$t $(OTLP_PROTOS); rc=$$?; rm -rf $$t; exit $$rc

# run: only what running needs (no unit tests: cmocka is a test package)
run: deps
	$(MAKE) check-names $(B)/sandlensd $(B)/sandlens $(B)/doc/sandlens.1
	[ -n "$${SANDLENS_CONFIG:-}" ] || mkdir -p /var/lib/sandlens # the default config's state directory
	# the default config runs from a root-owned copy: the agent refuses a
	# config another user can write (a clone owned by the user who ran sudo)
	[ -n "$${SANDLENS_CONFIG:-}" ] || install -D -m 0644 deploy/sandlensd.yaml /run/sandlens/sandlensd.yaml
	./$(B)/sandlensd --config $${SANDLENS_CONFIG:-/run/sandlens/sandlensd.yaml}

unit: all
	tests/run-unit.sh $(B)

integration: all
	tests/run-integration.sh $(B)

check: unit integration

# Everything, as CI runs it: plain build, then ASan+UBSan build.
test: deps-test
	tests/run-all.sh

# Every benchmark of bench/ (bench/README.md); rewrites bench/RESULTS.md.
bench: all
	bench/run-all.sh $(B)

# Install (docs/DEPLOY.md). The BPF objects are inside the skeletons, so
# the two binaries, the unit and the config are all that running needs.
# The config is installed only when absent (never overwritten); uninstall
# leaves it (and the state under /var/lib/sandlens) in place.
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
SBINDIR ?= $(PREFIX)/sbin
BINDIR ?= $(PREFIX)/bin
DOCDIR ?= $(PREFIX)/share/doc/sandlens
DATADIR ?= $(PREFIX)/share/sandlens
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
VERSION := $(shell sed -n 's/^\#define SANDLENS_VERSION "\(.*\)"/\1/p' src/common/version.h)
DOCS := README.md $(wildcard docs/*.md)
install: $(B)/sandlensd $(B)/sandlens $(B)/doc/sandlens.1 $(B)/doc/sandlens.bash
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR) \
		$(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSCONFDIR)/sandlens $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR)
	install -m 0644 $(B)/doc/sandlens.1 $(DESTDIR)$(MANDIR)/man1/sandlens.1
	install -m 0644 $(B)/doc/sandlens.bash $(DESTDIR)$(BASHCOMPDIR)/sandlens
	install -m 0755 $(B)/sandlensd $(DESTDIR)$(SBINDIR)/sandlensd
	install -m 0755 $(B)/sandlens $(DESTDIR)$(BINDIR)/sandlens
	sed -e 's|^ExecStart=/usr/sbin/|ExecStart=$(SBINDIR)/|' -e 's|--config /etc/|--config $(SYSCONFDIR)/|' \
		deploy/systemd/sandlensd.service \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/sandlensd.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/sandlensd.service
	install -m 0644 deploy/sandlensd.yaml $(DESTDIR)$(DATADIR)/sandlensd.yaml
	[ -e $(DESTDIR)$(SYSCONFDIR)/sandlens/sandlensd.yaml ] || \
		install -m 0644 deploy/sandlensd.yaml $(DESTDIR)$(SYSCONFDIR)/sandlens/sandlensd.yaml
	install -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/sandlensd $(DESTDIR)$(BINDIR)/sandlens \
		$(DESTDIR)$(SYSTEMDUNITDIR)/sandlensd.service $(DESTDIR)$(DATADIR)/sandlensd.yaml \
		$(DESTDIR)$(MANDIR)/man1/sandlens.1 $(DESTDIR)$(BASHCOMPDIR)/sandlens
	rm -rf $(DESTDIR)$(DOCDIR)
	-rmdir $(DESTDIR)$(DATADIR) 2>/dev/null
	@echo "uninstall: $(DESTDIR)$(SYSCONFDIR)/sandlens/sandlensd.yaml and /var/lib/sandlens are left in place"

# A Debian package with Debian's tools (dpkg-shlibdeps for Depends,
# dpkg-deb to build): build/sandlens_<version>_<arch>.deb.
DEB_ARCH = $(shell dpkg --print-architecture)
DEB_STAGE = $(abspath $(B))/deb
DEB := $(B)/sandlens_$(VERSION)_$(DEB_ARCH).deb
deb: $(B)/sandlensd $(B)/sandlens $(B)/doc/sandlens.1 $(B)/doc/sandlens.bash
	rm -rf $(DEB_STAGE) && mkdir -p $(DEB_STAGE)/root/DEBIAN $(DEB_STAGE)/debian
	$(MAKE) --no-print-directory install DESTDIR=$(DEB_STAGE)/root PREFIX=/usr SYSCONFDIR=/etc \
		SYSTEMDUNITDIR=/lib/systemd/system
	printf 'Source: sandlens\n\nPackage: sandlens\nArchitecture: any\n' > $(DEB_STAGE)/debian/control
	cd $(DEB_STAGE) && dpkg-shlibdeps -O root/usr/sbin/sandlensd root/usr/bin/sandlens > substvars
	sed -n 's/^shlibs:Depends=//p' $(DEB_STAGE)/substvars > $(DEB_STAGE)/depends && test -s $(DEB_STAGE)/depends
	install -m 0755 deploy/debian/postinst deploy/debian/prerm deploy/debian/postrm $(DEB_STAGE)/root/DEBIAN/
	echo /etc/sandlens/sandlensd.yaml > $(DEB_STAGE)/root/DEBIAN/conffiles
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@ARCH@|$(DEB_ARCH)|' \
		-e "s|@DEPENDS@|$$(cat $(DEB_STAGE)/depends), passwd|" \
		-e "s|@SIZE@|$$(du -sk --exclude=DEBIAN $(DEB_STAGE)/root | cut -f1)|" \
		deploy/debian/control.in > $(DEB_STAGE)/root/DEBIAN/control
	dpkg-deb --root-owner-group --build $(DEB_STAGE)/root $(DEB)
	@echo "deb: $(DEB)"

clean:
	rm -rf build build-san build-fuzz

# the fragments written by DEPFLAGS (absent before the first build)
FUZZ_OBJS := $(sort $(foreach t,$(FUZZ_TARGETS),$(call fuzz_objs,$(t))))
DEP_OUTS := $(BPF_OBJS) $(LIB_OBJS) $(CLI_OBJS) $(B)/obj/agent/main.o $(UNIT_BINS) $(HELPER_BINS) $(NVML_SHIM) \
	$(FUZZ_OBJS) $(FUZZ_BINS)
DEPS := $(wildcard $(addsuffix .d,$(DEP_OUTS)))
-include $(DEPS)
# built before the .d files existed: no record of their headers
$(filter-out $(DEPS:.d=),$(wildcard $(DEP_OUTS))): FORCE
.PHONY: FORCE
FORCE:
