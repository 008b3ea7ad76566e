# sandlens build. `make run` = deps + build + run the agent in the foreground;
# `make test` = deps + build + every test (plain, then ASan+UBSan).
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
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
PKGS := libbpf libmicrohttpd jansson sqlite3 yaml-0.1 libcurl liburcu-bp libdw libprotobuf-c
CFLAGS ?= -O2 -g
override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iinclude -Isrc -I$(B)/skel $(SANFLAGS) \
	$(shell pkg-config --cflags $(PKGS))
LDLIBS := $(shell pkg-config --libs $(PKGS)) -lelf -lz -lpthread -lm
override LDFLAGS += $(SANFLAGS)

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(B)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(B)/skel/%.skel.h,$(BPF_SRCS))

LIB_SRCS := $(wildcard src/common/*.c src/cgroup/*.c src/pipeline/*.c src/store/*.c \
	src/modules/*.c src/api/*.c src/stats/*.c src/profile/*.c src/task/*.c) $(filter-out src/agent/main.c,$(wildcard src/agent/*.c))
LIB_OBJS := $(patsubst src/%.c,$(B)/obj/%.o,$(LIB_SRCS))
CLI_SRCS := $(wildcard src/cli/*.c)
CLI_OBJS := $(patsubst src/%.c,$(B)/obj/%.o,$(CLI_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS))
HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(patsubst tests/helpers/%.c,$(B)/helpers/%,$(HELPER_SRCS))

.SECONDARY:
.PHONY: all deps run test check unit integration clean bench proto
all: $(B)/sandlensd $(B)/sandlens $(UNIT_BINS) $(HELPER_BINS)

deps:
	@scripts/install-deps.sh

$(B)/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(B)/bpf/%.bpf.o: bpf/%.bpf.c bpf/*.h include/sandlens/*.h $(B)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-I$(B) -Iinclude -Ibpf -c $< -o $@

$(B)/skel/%.skel.h: $(B)/bpf/%.bpf.o
	@mkdir -p $(@D)
	$(BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp && mv $@.tmp $@

$(B)/obj/%.o: src/%.c $(SKELS) $(wildcard src/*/*.h include/sandlens/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/libsandlens.a: $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(B)/sandlensd: $(B)/obj/agent/main.o $(B)/libsandlens.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/sandlens: $(CLI_OBJS) $(B)/libsandlens.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(B)/libsandlens.a $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(B)/libsandlens.a $(LDLIBS) -lcmocka

# Test helper programs run inside runc containers: static, no sanitizers.
$(B)/helpers/%: tests/helpers/%.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -fno-inline -Wall -Wextra -Werror -static -o $@ $<

# src/profile/profile.pb-c.{c,h} are committed; regenerate after editing proto/profile.proto.
proto:
	protoc-c --c_out=src/profile --proto_path=proto proto/profile.proto

run: deps
	$(MAKE) all
	mkdir -p /var/lib/sandlens
	./$(B)/sandlensd --config $${SANDLENS_CONFIG:-deploy/sandlensd.yaml}

unit: all
	tests/run-unit.sh $(B)

integration: all
	tests/run-integration.sh $(B)

check: unit integration

# Everything, as CI runs it: plain build, then ASan+UBSan build.
test: deps
	tests/run-all.sh

bench: all
	bench/exec-storm.sh $(B)

clean:
	rm -rf build build-san
