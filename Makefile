# mbsbench: build, test, run.  `make run` and `make check` work on a fresh Debian 12
# machine (tools/install-deps.sh installs the packages).  O=DIR/ puts every
# generated file under DIR/ (several builds side by side, e.g. ASan).
O        ?=
BUILD    := $(O)build
LIBA     := $(O)lib/libmbsbench.a
BIN      := $(O)bin/mbsbench
TESTBIN  := $(O)bin/mbsbench-tests
BENCHBIN := $(O)bin/mbsbench-bench
ALLOCBIN := $(O)bin/mbsbench-allocfail

PKGS     := gsl jansson inih sqlite3
CC       ?= cc
CFLAGS   ?= -O2 -g -DHAVE_INLINE -DGSL_RANGE_CHECK_OFF
WARN     := -std=c11 -Wall -Wextra -Werror -Wpedantic -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wvla -Wwrite-strings -Wcast-qual -D_POSIX_C_SOURCE=200809L
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)
# SUNDIALS (optional, Debian libsundials-dev ships no .pc files): the peer
# methods (methods/peers/peer_sundials*.c) are built and registered only when present,
# with SUNLinSol_KLU (linsol=klu; KLU from SuiteSparse, libsuitesparse-dev).
ifneq ($(wildcard /usr/include/ida/ida.h),)
SUNDIALS_CFLAGS := -DMBS_HAVE_SUNDIALS
SUNDIALS_LIBS := -lsundials_ida -lsundials_cvode -lsundials_arkode -lsundials_sunlinsoldense \
                 -lsundials_sunmatrixdense -lsundials_sunlinsolklu -lsundials_sunmatrixsparse \
                 -lsundials_nvecserial -lklu
endif
# SuiteSparse (UMFPACK, CHOLMOD; methods/linsol/linsol.c): Debian 12 ships no .pc files.
SS_CFLAGS := -I/usr/include/suitesparse
SS_LIBS   := -lumfpack -lcholmod -lsuitesparseconfig
# OpenMP: the parallel assembly/disassembly passes of methods/recursions/dca_pass.c
# (libgomp ships with gcc).  OPENMP= builds without it: the passes then run
# sequentially (the code tests _OPENMP), as in the clang fuzz build.
OPENMP   ?= -fopenmp
ALL_CFLAGS = $(WARN) $(CFLAGS) $(OPENMP) $(PKG_CFLAGS) $(SUNDIALS_CFLAGS) $(SS_CFLAGS) -MMD -MP
LDLIBS   := $(PKG_LIBS) $(SUNDIALS_LIBS) $(SS_LIBS) -lm

LIB_SRC  := $(wildcard core/*.c) $(wildcard problems/*.c) $(wildcard methods/*.c) \
            $(wildcard methods/*/*.c) $(wildcard methods/*/*/*.c) \
            $(filter-out harness/main.c,$(wildcard harness/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)

# The library for other programs and plugins: libmbsbench.a, the shared
# libmbsbench.so.<API> (a second, position-independent object set: the objects of
# bin/mbsbench are unchanged), the public headers and mbsbench.pc.  The API version
# lives in core/version.h only.
API_VERSION := $(shell sed -n 's/^\#define MBS_API_VERSION \([0-9][0-9]*\).*/\1/p' core/version.h)
VERSION  := $(shell sed -n 's/^\#define MBS_VERSION "\(.*\)"/\1/p' harness/env.h)
LIBSO    := $(O)lib/libmbsbench.so.$(API_VERSION)
PIC_OBJ  := $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
# Public headers: these roots and every project header they include (found by
# the compiler, so a contract that includes a new header installs it too),
# installed with their folders (include/mbsbench/core/, problems/, methods/,
# harness/) so that their relative includes hold; include/mbsbench/mbsbench.h
# includes the roots.
PUBLIC_HDR := core/version.h core/param.h core/status.h problems/problem.h \
              problems/triplets.h methods/framework/method.h methods/linsol/linsol.h \
              methods/integrators/explicit/explicit.h methods/integrators/explicit/tableau.h \
              harness/run.h harness/plugin.h
HDR_STAGE := $(BUILD)/include
# Plugins built in-tree for the tests (make check): the two examples, compiled
# against the staged public headers exactly as out of tree, and tests/plugins/*.c
# (bad plugins: error paths).  They are not linked with the library: their
# symbols resolve against the executable, which exports its own (-rdynamic).
PLUGIN_DIR := $(BUILD)/plugins
TEST_PLUGINS := $(patsubst tests/plugins/%.c,$(PLUGIN_DIR)/%.so,$(wildcard tests/plugins/*.c)) \
                $(PLUGIN_DIR)/example-problem.so $(PLUGIN_DIR)/example-method.so

.PHONY: all lib headers test-plugins check-headers check-install install-headers run check check-asan check-valgrind check-report check-slurm bench deps clean install fuzz reproduce reproduce-robust nightly mutate battery iftomm
all: $(BIN) $(LIBA)

deps:
	./tools/install-deps.sh

# Revision string and the flags every object is compiled with (meta.json
# "cflags": warnings, optimisation, defines, include paths; not the link line
# and not the dependency flags), regenerated when they change.
$(BUILD)/rev.h: FORCE
	@mkdir -p $(dir $@)
	@rev=$$(git describe --always --dirty 2>/dev/null || echo unknown); \
	 printf '#define MBS_GIT_REV "%s"\n#define MBS_CFLAGS "%s"\n' "$$rev" "$(strip $(filter-out -MMD -MP,$(ALL_CFLAGS)))" > $@.new; \
	 if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
FORCE:

# Recompile everything when the compiler or its flags change.
$(BUILD)/flags.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(CC) $(ALL_CFLAGS)' > $@.new; if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
$(LIB_OBJ) $(TEST_OBJ) $(BENCH_OBJ) $(BUILD)/harness/main.o: $(BUILD)/flags.txt

$(BUILD)/harness/env.o: harness/env.c $(BUILD)/rev.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -include $(BUILD)/rev.h -c $< -o $@

$(PIC_OBJ): $(BUILD)/flags.txt
$(BUILD)/pic/harness/env.o: harness/env.c $(BUILD)/rev.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -include $(BUILD)/rev.h -c $< -o $@

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -c $< -o $@

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

$(LIBSO): $(PIC_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(OPENMP) -shared -Wl,-soname,libmbsbench.so.$(API_VERSION) -o $@ $^ $(LDLIBS)
	ln -sf libmbsbench.so.$(API_VERSION) $(O)lib/libmbsbench.so

lib: $(LIBA) $(LIBSO)

# -rdynamic: plugins (harness/plugin.h) resolve the library's symbols against the
# executable's own copy, so that they fill the registries the executable reads.
$(BIN): $(BUILD)/harness/main.o $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(OPENMP) -rdynamic -o $@ $^ $(LDLIBS)

$(TESTBIN): $(TEST_OBJ) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(OPENMP) -rdynamic -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

# The public headers, staged as they are installed (install-headers DIR=...).
HDR_DEPS := $(wildcard core/*.h core/*.def problems/*.h methods/*.h methods/*/*.h methods/*/*/*.h \
            methods/*/*/*.def harness/*.h)
$(HDR_STAGE)/mbsbench/mbsbench.h: $(HDR_DEPS) Makefile
	@rm -rf $(HDR_STAGE) && mkdir -p $(HDR_STAGE)
	@$(MAKE) --no-print-directory install-headers INCDIR=$(HDR_STAGE)
headers: $(HDR_STAGE)/mbsbench/mbsbench.h

INCDIR ?= $(DESTDIR)$(PREFIX)/include
install-headers:
	@set -e; files=$$(for h in $(PUBLIC_HDR); do \
	    $(CC) $(WARN) $(PKG_CFLAGS) -MM -MT x -x c $$h; done | \
	  tr ' \\' '\n\n' | grep -v -e '^x:$$' -e '^$$' | xargs realpath --relative-to=. | sort -u); \
	 for f in $$files; do install -D -m 644 $$f $(INCDIR)/mbsbench/$$f; done; \
	 { printf '/* mbsbench %s, API version %s: every public header (generated by make). */\n' \
	     '$(VERSION)' '$(API_VERSION)'; \
	   printf '#ifndef MBSBENCH_H\n#define MBSBENCH_H\n'; \
	   for h in $(PUBLIC_HDR); do printf '#include "%s"\n' $$h; done; \
	   printf '#endif\n'; } > $(INCDIR)/mbsbench/mbsbench.h; \
	 chmod 644 $(INCDIR)/mbsbench/mbsbench.h

# Every installed header compiles alone, in an otherwise empty translation unit (one
# typedef after it: ISO C forbids a translation unit without declarations, which a
# header of macros alone would leave).
HDR_CHECK_FLAGS := -std=c11 -Wall -Wextra -Werror -pedantic
check-headers: headers
	@set -e; n=0; for h in $$(cd $(HDR_STAGE) && find mbsbench -name '*.h' | sort); do \
	   printf '#include <%s>\ntypedef int mbs_header_check;\n' $$h | $(CC) $(HDR_CHECK_FLAGS) $$(pkg-config --cflags gsl) \
	     -I$(HDR_STAGE) -x c -fsyntax-only - || { echo "check-headers: $$h does not compile alone"; exit 1; }; \
	   n=$$((n + 1)); done; echo "check-headers: $$n public headers compile alone ($(HDR_CHECK_FLAGS))"

PLUGIN_CFLAGS = $(WARN) $(CFLAGS) $$(pkg-config --cflags gsl) -I$(HDR_STAGE) -fPIC -shared -MMD -MP
$(PLUGIN_DIR)/example-problem.so: $(wildcard examples/plugin-problem/*.c) $(HDR_STAGE)/mbsbench/mbsbench.h
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -o $@ $(filter %.c,$^)
$(PLUGIN_DIR)/example-method.so: $(wildcard examples/plugin-method/*.c) $(HDR_STAGE)/mbsbench/mbsbench.h
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -o $@ $(filter %.c,$^)
$(PLUGIN_DIR)/%.so: tests/plugins/%.c $(HDR_STAGE)/mbsbench/mbsbench.h
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -o $@ $<
test-plugins: $(TEST_PLUGINS)

# Allocation-failure injection replaces malloc: its own executable, no sanitizers.
$(ALLOCBIN): tests/alloc/allocfail.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -D_DEFAULT_SOURCE -o $@ $< $(LIBA) $(CHECK_LIBS) $(LDLIBS)

$(BENCHBIN): $(BENCH_OBJ) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(OPENMP) -o $@ $^ $(LDLIBS)

# The main job: install what is missing, build, run the default suite, draw the
# report (reports/default-<time>/index.html) and print the short verdict with its path.
RUN_STAMP := $(shell date -u +%Y%m%d-%H%M%S)
run:
	./tools/install-deps.sh
	$(MAKE) all
	@# exit status 1 = some runs failed numerically: those are results, not errors
	$(BIN) sweep suites/default.suite -j 2 --out results/default-$(RUN_STAMP) \
	  > results/default-$(RUN_STAMP).table.txt; st=$$?; [ $$st -le 1 ]
	@mv results/default-$(RUN_STAMP).table.txt results/default-$(RUN_STAMP)/table.txt
	$(BIN) report results/default-$(RUN_STAMP) --out reports/default-$(RUN_STAMP) > /dev/null
	@echo
	@$(BIN) summary results/default-$(RUN_STAMP) --brief \
	  --report reports/default-$(RUN_STAMP)/index.html

check: $(BIN) $(TESTBIN) $(ALLOCBIN) test-plugins
	./tools/check-includes
	$(MAKE) --no-print-directory check-headers
	MBS_PLUGIN_DIR=$(PLUGIN_DIR) MBSBENCH=$(BIN) $(TESTBIN)
	$(ALLOCBIN)

SAN := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
check-asan:
	$(MAKE) O=build-asan/ CFLAGS="$(SAN)" build-asan/bin/mbsbench build-asan/bin/mbsbench-tests \
	  test-plugins
	CK_FORK=no ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  MBS_PLUGIN_DIR=build-asan/build/plugins \
	  MBSBENCH=build-asan/bin/mbsbench build-asan/bin/mbsbench-tests

check-valgrind: $(BIN) $(TESTBIN) test-plugins
	CK_FORK=no MBS_PLUGIN_DIR=$(PLUGIN_DIR) MBSBENCH=$(BIN) valgrind --error-exitcode=1 --leak-check=full --child-silent-after-fork=yes \
	  --errors-for-leak-kinds=definite $(TESTBIN)

# SECTIONS="peers radau" runs only those sections (bench/sections.def, without mbs_bench_).
bench: $(BIN) $(BENCHBIN)
	$(BENCHBIN) $(SECTIONS)

# N-scaling of the index-1 right-hand side per backend: table, exponents,
# peak memory, results/scaling/scaling.{dat,gp,png}.  Not a test.
SCALEBIN := $(O)bin/mbsbench-scaling
$(SCALEBIN): $(BUILD)/bench/scaling/scaling.o $(BUILD)/bench/scaling/dcapar.o $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(OPENMP) -o $@ $^ $(LDLIBS)
.PHONY: bench-scaling
# OpenMP threads wait passively (futex, no spinning) unless the caller says otherwise:
# on a machine shared with other jobs a spinning thread takes the time slices the
# working one needs (bench/scaling/dcapar.c prints the policy and the load).
bench-scaling: $(SCALEBIN)
	OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-passive} $(SCALEBIN) $(O)results/scaling

# Stored reference solutions (harness/refgen.c): one `mbsbench reference` per line
# of problems/ref/references.list; fails if any pair of computations disagrees.
.PHONY: references
references: $(BIN)
	@st=0; grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$$' problems/ref/references.list | \
	 { while read -r line; do echo "mbsbench reference $$line"; \
	   $(BIN) reference $$line || st=1; done; exit $$st; }

# The battery (suites/battery.ini, docs/methods.md "Battery"): every method on every
# built-in problem, one standard five-level converge each, classified; niced, resumable
# (BATTERY_DIR keeps battery.jsonl; a pair already there is not run again).  Hours on two
# shared cores (about 2750 pairs); make check runs the data file's check pairs only.
BATTERY_DIR ?= results/battery
BATTERY_JOBS ?= 2
battery: $(BIN)
	nice -n 19 $(BIN) battery suites/battery.ini -j $(BATTERY_JOBS) --out $(BATTERY_DIR)

# docs/battery.md and the battery block of docs/methods.md, redrawn from the committed
# records docs/battery.jsonl (judged again by this build).  To add runs: copy it to
# DIR/battery.jsonl, make battery BATTERY_DIR=DIR (runs only the missing pairs; to rerun
# a pair, append its new record: a pair's last record counts), copy it back, commit.
.PHONY: battery-docs
battery-docs: $(BIN)
	./tools/battery-docs --data docs/battery.jsonl --bin $(BIN)

# Stored reference trajectories (problems/ref/*.traj, harness/refgen.h) from the lines of
# problems/ref/trajectories.list; fails if any pair of computations disagrees on the grid
# (entries marked --expect-horizon: if they agree).  About 4 minutes on one core.
.PHONY: reference-trajectories
reference-trajectories: $(BIN)
	@st=0; grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$$' problems/ref/trajectories.list | \
	 { while read -r line; do echo "mbsbench reference --trajectory $$line"; \
	   $(BIN) reference --trajectory $$line || st=1; done; exit $$st; }

# Paper reproductions (reproductions/*.expect): exit status 0 only when all reproduce.
reproduce: $(BIN)
	$(BIN) reproduce --all --page reports/reproduce-$(RUN_STAMP)

# The reproductions again at TOL x 0.9, 0.95, 1.05, 1.1 (tools/reproduce-robust): a
# verdict that flips under such a change is a draw, not a reproduction.  About 40 s.
reproduce-robust: $(BIN)
	@if command -v python3 >/dev/null 2>&1; then MBSBENCH=$(BIN) python3 tools/reproduce-robust; \
	 else echo "reproduce-robust: SKIP (needs python3: apt-get install python3)"; fi

# The IFToMM benchmark problems scored as the library scores them (suites/iftomm.suite,
# reproductions/iftomm.md): per problem and precision class each method's cheapest run
# that meets it, and the work-precision figure (page reports/iftomm-STAMP/iftomm.html).
# Long (the 2000 s pendulum, the N-four-bar of N = 40); niced.
IFTOMM_DIR ?= results/iftomm-$(NIGHTLY_STAMP)
iftomm: $(BIN)
	nice -n 19 $(BIN) reproduce iftomm --out $(IFTOMM_DIR) --page reports/$(notdir $(IFTOMM_DIR))

# Nightly regression: run suites/nightly.suite, write the report, compare with the
# committed baseline (exit status 1 on a regression).  Re-bless only explicitly:
#   $(BIN) baseline bless DIR -o baselines/nightly.json
NIGHTLY_STAMP := $(shell date -u +%Y%m%d-%H%M%S)
NIGHTLY_DIR   ?= results/nightly-$(NIGHTLY_STAMP)
NIGHTLY_BASELINE ?= baselines/nightly.json
# PLUGINS="a.so b.so": plugins the sweep loads (as --plugin; a suite can also name them
# with plugins = ...).
nightly: $(BIN)
	$(BIN) $(foreach p,$(PLUGINS),--plugin $(p)) sweep suites/nightly.suite --series -j 2 --baseline $(NIGHTLY_BASELINE) \
	  --out $(NIGHTLY_DIR) > /dev/null; \
	  st=$$?; [ $$st -lt 2 ] || exit $$st
	$(BIN) report $(NIGHTLY_DIR) --out reports/nightly-$(NIGHTLY_STAMP)
	$(BIN) compare $(NIGHTLY_BASELINE) $(NIGHTLY_DIR) > $(NIGHTLY_DIR)/compare.txt; \
	  st=$$?; [ $$st -lt 2 ] || exit $$st; \
	  if grep -q 'REGRESSION (slower' $(NIGHTLY_DIR)/compare.txt; then \
	    echo "nightly: CPU slow-downs flagged; sweeping again to confirm them ($(NIGHTLY_DIR)-again)"; \
	    $(BIN) $(foreach p,$(PLUGINS),--plugin $(p)) sweep suites/nightly.suite -j 2 --baseline $(NIGHTLY_BASELINE) \
	      --out $(NIGHTLY_DIR)-again --no-history > /dev/null; \
	    st=$$?; [ $$st -lt 2 ] || exit $$st; \
	    $(BIN) compare $(NIGHTLY_BASELINE) $(NIGHTLY_DIR) --confirm $(NIGHTLY_DIR)-again \
	      > $(NIGHTLY_DIR)/compare.txt; st=$$?; [ $$st -lt 2 ] || exit $$st; \
	  fi; \
	  r=reports/nightly-$(NIGHTLY_STAMP); cp $(NIGHTLY_DIR)/compare.txt $$r/; \
	  { printf '\n## Regression check against $(NIGHTLY_BASELINE)\n\n```\n'; \
	    cat $(NIGHTLY_DIR)/compare.txt; printf '```\n'; } >> $$r/index.md; \
	  cat $(NIGHTLY_DIR)/compare.txt; exit $$st

# The report as a browser sees it (tools/check-report): links, images, console
# messages in headless Chromium, screenshot.  Says SKIP (with the reason) without it.
check-report: $(BIN)
	MBSBENCH=$(BIN) ./tools/check-report

# A real single-node Slurm on localhost (tests/slurm/run.sh): a suite of
# 44 runs as a 4-task job array with one task requeued mid-run, merged and compared
# with a local sweep.  Needs root; installs slurm-wlm, munge and jq when missing;
# says SKIP (with the reason) when it cannot.
check-slurm: $(BIN)
	MBSBENCH=$(BIN) ./tests/slurm/run.sh

# The installed library and plugins (tests/install/run.sh): make install into
# a temporary prefix, both examples built out of tree with pkg-config and run through
# run, converge (observed orders of the plugin method), sweep -j 2 and check-problem;
# a program linked against libmbsbench.so and libmbsbench.a.
check-install:
	./tests/install/run.sh

# Mutation testing (tools/mutate): MUTANTS sampled mutations of the C files in
# FOLDERS (methods,problems: the measured code, judged by the nightly compare and
# make check; harness: the meter, judged by make check and the nightly) in a
# scratch copy of HEAD, niced; kill rates per folder and file in
# results/mutate-<time>/summary.md.  Long (harness: 60 mutants 6-10 h on 2 shared
# cores at load 8-11): not part of make check or CI.  MUTATE_FLAGS: more options of
# tools/mutate, e.g. --coverage (the meter's stages ordered by gcov coverage).
MUTANTS ?= 60
MINUTES ?= 0
FOLDERS ?= methods,problems
MUTATE_FLAGS ?=
mutate:
	python3 tools/mutate --count $(MUTANTS) --folders $(FOLDERS) --minutes $(MINUTES) $(MUTATE_FLAGS)

# Fuzzing (clang + libFuzzer): the suite parser, the spec parser and the mechanism-file
# reader, FUZZ_SECONDS each.
# Crashing inputs go to fuzz/regressions/, which the test suite replays.
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
fuzz:
	$(MAKE) O=build-fuzz/ CC=clang OPENMP= CFLAGS="$(FUZZ_FLAGS)" build-fuzz/lib/libmbsbench.a
	@mkdir -p build-fuzz/bin build-fuzz/corpus-suite build-fuzz/corpus-spec build-fuzz/corpus-mech
	cp suites/*.suite fuzz/regressions/* build-fuzz/corpus-suite/ 2>/dev/null || true
	cp fuzz/corpus-spec/* build-fuzz/corpus-spec/
	cp mechanisms/*.mech build-fuzz/corpus-mech/
	for t in suite spec mech; do \
	  clang $(WARN) -O1 -g -fsanitize=fuzzer,address,undefined fuzz/fuzz_$$t.c \
	    build-fuzz/lib/libmbsbench.a $(LDLIBS) -o build-fuzz/bin/fuzz_$$t || exit 1; done
	cd build-fuzz && ./bin/fuzz_suite -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=../fuzz/regressions/suite- \
	  -print_final_stats=1 corpus-suite
	cd build-fuzz && ./bin/fuzz_spec -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=../fuzz/regressions/spec- \
	  -print_final_stats=1 corpus-spec
	cd build-fuzz && ./bin/fuzz_mech -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=../fuzz/regressions/mech- \
	  -print_final_stats=1 corpus-mech

PREFIX ?= /usr/local
# The binary, its data (stored references, reproductions, suites: found through
# <bin>/../share/mbsbench, see harness/io.h), the man page and the docs.
SHARE = $(DESTDIR)$(PREFIX)/share/mbsbench
LIBDIR = $(DESTDIR)$(PREFIX)/lib
install: $(BIN) $(LIBA) $(LIBSO)
	install -d $(LIBDIR)/pkgconfig
	install -m 644 $(LIBA) $(LIBDIR)/libmbsbench.a
	install -m 755 $(LIBSO) $(LIBDIR)/libmbsbench.so.$(API_VERSION)
	ln -sf libmbsbench.so.$(API_VERSION) $(LIBDIR)/libmbsbench.so
	$(MAKE) --no-print-directory install-headers INCDIR=$(DESTDIR)$(PREFIX)/include
	{ printf 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\n' '$(PREFIX)'; \
	  printf 'Name: mbsbench\nDescription: %s\nVersion: %s\n' \
	    'benchmark library for constrained multibody DAE integrators (API $(API_VERSION))' '$(VERSION)'; \
	  printf 'Requires: gsl\nRequires.private: jansson inih sqlite3\n'; \
	  printf 'Cflags: -I$${includedir}\nLibs: -L$${libdir} -lmbsbench\n'; \
	  printf 'Libs.private: %s\n' '$(SUNDIALS_LIBS) $(SS_LIBS) $(OPENMP) -lm'; } > $(LIBDIR)/pkgconfig/mbsbench.pc
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE)/problems/ref $(SHARE)/reproductions \
	  $(SHARE)/suites $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/doc/mbsbench
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/mbsbench
	install -m 644 problems/ref/*.ref problems/ref/*.traj $(SHARE)/problems/ref/
	install -m 644 reproductions/*.expect reproductions/README.md $(SHARE)/reproductions/
	install -m 644 suites/*.suite suites/battery.ini $(SHARE)/suites/
	install -d $(SHARE)/mechanisms
	install -m 644 mechanisms/*.mech $(SHARE)/mechanisms/
	install -m 644 docs/mbsbench.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 README.md references.bib docs/*.md $(DESTDIR)$(PREFIX)/share/doc/mbsbench/
	install -m 644 docs/results-schema.md $(DESTDIR)$(PREFIX)/share/doc/mbsbench/results-schema.md

clean:
	rm -rf $(O)build $(O)lib $(O)bin build-asan build-fuzz

-include $(LIB_OBJ:.o=.d) $(PIC_OBJ:.o=.d) $(TEST_PLUGINS:.so=.d) $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d) $(BUILD)/harness/main.d $(BUILD)/bench/scaling/scaling.d $(BUILD)/bench/scaling/dcapar.d
