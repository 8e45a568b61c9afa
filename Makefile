# Makefile -- build, test, install ktile (GNU make).
#
#   make            build/ktile, build/examples/*, build/test/*, build/bench/*
#   make test       everything that needs no GPU; ends with "N passed, M failed"
#   make sanitize   the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make valgrind   the tests under valgrind (leaks and memory errors fail)
#   make clang-check every source through clang's warnings (CHECK_CC, no build)
#   make demo       conversion costs, zoo plans (an SVG of tiles), SOYBEAN 2.2
#   make bench      run the benchmarks
#   make race       the executors' tests (worker threads) and the
#                   program fuzzer's seeds under ThreadSanitizer
#   make fuzz       libFuzzer on the text parsers and the executor's
#                   programs, FUZZ_SECONDS (60) each; needs clang (FUZZ_CC),
#                   not part of all or test
#   make install    PREFIX=/usr/local: headers to $(PREFIX)/include/ktile/,
#                   the ktile tool to $(PREFIX)/bin/
#   make clean
#
# The repository root is never on the include path (no -I.): sched.h would
# shadow the POSIX <sched.h> that <pthread.h> includes (DESIGN.md "Include
# hazard").  Sources include the headers by relative path ("../tiling.h").

MAKEFLAGS += --no-builtin-rules
.SUFFIXES:

CC      ?= cc
# With CC=clang the C++ include test is built by the matching clang++.
ifeq ($(origin CXX),default)
  ifneq ($(findstring clang,$(CC)),)
    CXX := $(subst clang,clang++,$(CC))
  endif
endif
WARN     = -Wall -Wextra -Wpedantic -Werror
CFLAGS   = -std=c99 $(WARN) -O2 -g
CXXFLAGS = -std=c++11 $(WARN) -O2 -g
LDLIBS   = -lm -lpthread
SAN      = -fsanitize=address,undefined -fno-omit-frame-pointer \
           -fno-sanitize-recover=all
SAN_CFLAGS   = -std=c99 $(WARN) -O1 -g $(SAN)
SAN_CXXFLAGS = -std=c++11 $(WARN) -O1 -g $(SAN)
TSAN_CFLAGS  = -std=c99 $(WARN) -O1 -g -fsanitize=thread
VALGRIND = valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect \
           --error-exitcode=99 -q
PREFIX  ?= /usr/local
DESTDIR ?=

# Headers in dependency order; those that exist are installed.
HEADERS         := $(wildcard *.h)
INSTALL_HEADERS := $(wildcard tiling.h sched.h swap.h backend_cpu.h backend_cuda.h)
TEST_DEPS       := $(HEADERS) test/kt_test.h test/kt_testlib.h test/kt_test_alloc.h \
                   test/kt_test_pairs.h test/kt_test_staged.h

# New files are picked up by these wildcards.  GPU tests (test_cuda*) are
# built and run by their own rules, not by `make test`.
EXAMPLES     := $(filter-out examples/ktile.c,$(wildcard examples/*.c))
TESTS_C      := $(filter-out test/test_cuda%,$(wildcard test/test_*.c))
TESTS_CXX    := $(filter-out test/test_cuda%,$(wildcard test/test_*.cpp))
TEST_SCRIPTS := $(filter-out test/test_cuda%,$(wildcard test/test_*.sh))
BENCHES      := $(wildcard bench/*.c)

KTILE        := build/ktile
EXAMPLE_BINS := $(patsubst examples/%.c,build/examples/%,$(EXAMPLES))
TEST_BINS    := $(patsubst test/%.c,build/test/%,$(TESTS_C)) \
                $(patsubst test/%.cpp,build/test/%,$(TESTS_CXX))
BENCH_BINS   := $(patsubst bench/%.c,build/bench/%,$(BENCHES))
SAN_BINS     := $(patsubst build/test/%,build/sanitize/%,$(TEST_BINS))

# Scripts under test/ find the programs and tools through these.
MAKE_PROG := $(MAKE)
TEST_ENV = KT_CC="$(CC)" KT_CXX="$(CXX)" KT_MAKE="$(MAKE_PROG)"
RUNNER   = sh test/run.sh

.PHONY: all test sanitize valgrind race cxx-check clang-check demo bench fuzz \
        install uninstall \
        clean

all: $(KTILE) $(EXAMPLE_BINS) $(TEST_BINS) $(BENCH_BINS)

$(KTILE): examples/ktile.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

build/examples/%: examples/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

build/test/%: test/%.c $(TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

build/test/%: test/%.cpp $(TEST_DEPS)
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -o $@ $< $(LDLIBS)

build/bench/%: bench/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

build/sanitize/ktile: examples/ktile.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) -o $@ $< $(LDLIBS)

build/sanitize/%: test/%.c $(TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) -o $@ $< $(LDLIBS)

build/sanitize/%: test/%.cpp $(TEST_DEPS)
	@mkdir -p $(@D)
	$(CXX) $(SAN_CXXFLAGS) -o $@ $< $(LDLIBS)

test: all
	@$(TEST_ENV) KTILE=$(KTILE) $(RUNNER) $(TEST_BINS) $(TEST_SCRIPTS)

# (bench_sync: test_readme.sh checks README's sync table against it)
sanitize: $(SAN_BINS) build/sanitize/ktile build/bench/bench_sync
	@$(TEST_ENV) KTILE=build/sanitize/ktile $(RUNNER) $(SAN_BINS) $(TEST_SCRIPTS)

valgrind: all
	@$(TEST_ENV) KTILE=$(KTILE) KT_WRAP="$(VALGRIND)" \
	    $(RUNNER) $(TEST_BINS) $(TEST_SCRIPTS)

# ThreadSanitizer on what runs threads: backend_cpu.h's executors (worker
# threads, barriers between stages; test_cpu's random plans run 1, 2, 3, 5
# and one per device) through their tests, and
# programs the executor did not lower (test/fuzz/fuzz_program.c's seeds,
# replayed by test/fuzz/fuzz_replay.c: libFuzzer's own counters would
# race under TSan).  A race stops the test (halt_on_error).  KT_WRAP
# (here a harmless `env` in front of each test) makes the two tests take
# the share they take under valgrind: in full they need 5 and 10 minutes
# under TSan on the 2-core machine (test_swap_exec 4.4 GB; both measured
# before the worker threads of 2026-12-07), this way 88 and 14 s (48 and
# 16 s before: test_cpu now also runs each random plan with 1, 2, 3, 5
# and one thread per device, test_swap_exec fails every thread start).
RACE_TESTS := build/race/test_cpu build/race/test_swap_exec
RACE_ENV    = TSAN_OPTIONS="halt_on_error=1 $${TSAN_OPTIONS:-}"

build/race/fuzz_program: test/fuzz/fuzz_program.c test/fuzz/fuzz_replay.c \
                         test/fuzz/fuzz_common.h $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(TSAN_CFLAGS) -o $@ test/fuzz/fuzz_program.c \
	    test/fuzz/fuzz_replay.c $(LDLIBS)

build/race/%: test/%.c $(TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TSAN_CFLAGS) -o $@ $< $(LDLIBS)

race: $(RACE_TESTS) build/race/fuzz_program
	@$(RACE_ENV) KT_WRAP=env $(RUNNER) $(RACE_TESTS)
	@echo "== build/race/fuzz_program test/fuzz/seeds/program"
	@$(RACE_ENV) build/race/fuzz_program test/fuzz/seeds/program

# The headers compile as C++ (DESIGN.md "Conventions"); `make test` runs it.
cxx-check: build/test/test_include_cpp
	build/test/test_include_cpp

# Every C and C++ source through clang's warnings, -Werror, compiling
# nothing (clang warns where gcc does not: -Wstring-concatenation, say).
CHECK_CC  ?= clang
CHECK_CXX ?= clang++
clang-check:
	@for f in examples/*.c test/*.c test/fuzz/*.c bench/*.c; do \
	    $(CHECK_CC) -std=c99 $(WARN) -fsyntax-only $$f || exit 1; done
	@for f in test/*.cpp; do \
	    $(CHECK_CXX) -std=c++11 $(WARN) -fsyntax-only $$f || exit 1; done
	@echo "clang-check: every source compiles without a warning"

demo: all
	build/examples/conversion_table
	$(KTILE) cost --shape 8x6 --factors 2,2 --from S0.S1 --to R.S0
	$(KTILE) cost --shape 300x400 --devices 4 --from P.S0 --to R.R --json
	$(KTILE) cost --shape 13x11x7x9 --devices 16 --from S0.S1.S2.S3 \
	    --to S3.R.S1.S0 --json
	$(KTILE) plan --model mlp:layers=5,hidden=300,batch=400 --devices 16
	$(KTILE) plan --model wresnet:depth=50,widen=4,batch=8 --devices 8 \
	    --svg build/demo_wresnet.svg >build/demo_wresnet.txt
	@head -n 9 build/demo_wresnet.txt
	@echo "(every tensor and operator: build/demo_wresnet.txt;" \
	    "the tiles, drawn: build/demo_wresnet.svg)"
	build/examples/soybean_mlp

bench: $(BENCH_BINS)
	@set -e; for b in $(BENCH_BINS); do echo "== $$b"; $$b; done

# libFuzzer harnesses (test/fuzz/, one per parser, one for the executor's
# checks of a program, one comparing the evaluator's fast paths with its
# reference; seeds in
# test/fuzz/seeds/NAME/, tokens in test/fuzz/NAME.dict).  Each runs FUZZ_SECONDS on a working corpus in
# build/fuzz/corpus/NAME, one at a time; a crash, leak, hang (over 5 s)
# or a run past 2 GB stops `make fuzz` with the input in
# build/fuzz/artifacts/.  Needs a clang with -fsanitize=fuzzer.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS    = -std=c99 -Wall -Wextra -O1 -g -fno-omit-frame-pointer \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_SRCS    := $(filter-out test/fuzz/fuzz_replay.c,$(wildcard test/fuzz/fuzz_*.c))
FUZZ_BINS    := $(patsubst test/fuzz/%.c,build/fuzz/%,$(FUZZ_SRCS))

build/fuzz/fuzz_plan_json: test/fuzz/fuzz_plan_json.c test/fuzz/fuzz_common.h \
                           examples/ktile.c $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Wno-unused-function -o $@ $< $(LDLIBS)

build/fuzz/%: test/fuzz/%.c test/fuzz/fuzz_common.h $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(LDLIBS)

fuzz: $(FUZZ_BINS)
	@set -e; for b in $(FUZZ_BINS); do \
	    n=$${b#build/fuzz/fuzz_}; \
	    mkdir -p build/fuzz/corpus/$$n build/fuzz/artifacts; \
	    echo "== $$b ($(FUZZ_SECONDS) s, log build/fuzz/$$n.log)"; \
	    if $$b -max_total_time=$(FUZZ_SECONDS) -timeout=5 \
	        -rss_limit_mb=2048 -print_final_stats=1 \
	        -artifact_prefix=build/fuzz/artifacts/$$n- \
	        $$(test -f test/fuzz/$$n.dict && echo -dict=test/fuzz/$$n.dict) \
	        build/fuzz/corpus/$$n test/fuzz/seeds/$$n \
	        >build/fuzz/$$n.log 2>&1; then \
	        grep -E '^#[0-9]+[[:space:]]+DONE' build/fuzz/$$n.log || true; \
	    else \
	        tail -n 40 build/fuzz/$$n.log; exit 1; \
	    fi; \
	done

install: $(KTILE)
	install -d $(DESTDIR)$(PREFIX)/include/ktile $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(INSTALL_HEADERS) $(DESTDIR)$(PREFIX)/include/ktile/
	install -m 755 $(KTILE) $(DESTDIR)$(PREFIX)/bin/ktile

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/include/ktile/,$(notdir $(INSTALL_HEADERS)))
	-rmdir $(DESTDIR)$(PREFIX)/include/ktile
	rm -f $(DESTDIR)$(PREFIX)/bin/ktile

clean:
	rm -rf build
