# mbsbench: build, test, run.  `make run` and `make check` work on a fresh Debian 12
# machine (tools/install-deps.sh installs the packages).  O=DIR/ puts every
# generated file under DIR/ (several builds side by side, e.g. ASan).
O        ?=
BUILD    := $(O)build
LIBA     := $(O)lib/libmbsbench.a
BIN      := $(O)bin/mbsbench
TESTBIN  := $(O)bin/mbsbench-tests
BENCHBIN := $(O)bin/mbsbench-bench

PKGS     := gsl jansson inih
CC       ?= cc
CFLAGS   ?= -O2 -g
WARN     := -std=c11 -Wall -Wextra -Werror -Wpedantic -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wvla -Wwrite-strings -Wcast-qual -D_POSIX_C_SOURCE=200809L
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)
ALL_CFLAGS = $(WARN) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP
LDLIBS   := $(PKG_LIBS) -lm

LIB_SRC  := $(wildcard problems/*.c) $(wildcard methods/*.c) \
            $(filter-out harness/main.c,$(wildcard harness/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)

.PHONY: all run check check-asan check-valgrind bench deps clean install
all: $(BIN) $(LIBA)

deps:
	./tools/install-deps.sh

# Revision string, regenerated when it changes.
$(BUILD)/rev.h: FORCE
	@mkdir -p $(dir $@)
	@rev=$$(git describe --always --dirty 2>/dev/null || echo unknown); \
	 line="#define MBS_GIT_REV \"$$rev\""; \
	 flags="#define MBS_CFLAGS \"$(CC) $(CFLAGS)\""; \
	 if [ ! -f $@ ] || [ "$$(printf '%s\n%s' "$$line" "$$flags")" != "$$(cat $@)" ]; then \
	   printf '%s\n%s' "$$line" "$$flags" > $@; fi
FORCE:

$(BUILD)/harness/env.o: harness/env.c $(BUILD)/rev.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -include $(BUILD)/rev.h -c $< -o $@

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIBA): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BIN): $(BUILD)/harness/main.o $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(TESTBIN): $(TEST_OBJ) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

$(BENCHBIN): $(BENCH_OBJ) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# The main job: install what is missing, build, run the default suite.
run:
	./tools/install-deps.sh
	$(MAKE) all
	$(BIN) sweep suites/default.suite -j 2

check: $(BIN) $(TESTBIN)
	MBSBENCH=$(BIN) $(TESTBIN)

SAN := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
check-asan:
	$(MAKE) O=build-asan/ CFLAGS="$(SAN)" build-asan/bin/mbsbench build-asan/bin/mbsbench-tests
	CK_FORK=no ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  MBSBENCH=build-asan/bin/mbsbench build-asan/bin/mbsbench-tests

check-valgrind: $(BIN) $(TESTBIN)
	CK_FORK=no MBSBENCH=$(BIN) valgrind --error-exitcode=1 --leak-check=full \
	  --errors-for-leak-kinds=definite $(TESTBIN)

bench: $(BIN) $(BENCHBIN)
	$(BENCHBIN)

PREFIX ?= /usr/local
install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/mbsbench

clean:
	rm -rf $(O)build $(O)lib $(O)bin build-asan

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d) $(BUILD)/harness/main.d
