# tpsim: a discrete-event simulator of one tensor-parallel LLM decode step.
#   make            build build/tpsim
#   make run        the main job on the bundled data
#   make check      the fast loop for every edit: the plain build, every unit test (cmocka) and
#                   every CLI test once, one test per core; prints its CPU and wall time
#   make test       what CI runs: make check, then one sanitizer build (clang's ASan + UBSan
#                   with float-cast-overflow) running every unit test and every CLI test that
#                   runs tpsim; prints its CPU and wall time
#   make bench      events/s, rank-ops/s and steps/s of the engine on TP-8 70B steps with
#                   jitter (fast path and event engine), peak RSS at 10^6 steps; trace writer
#                   speed (before/after) and trace import MB/s; validate --jobs 1 vs 2 on
#                   eager-straggler (scripts/bench-jobs.sh); the CPU seconds of make run
#                   (budget 3 s); tpsim plan's full default search on one core (budget 10 s;
#                   make bench-plan runs that line alone)
#   make test-slurm scripts/slurm-sweep.sh on a real single-node Slurm (root; installs it)
#   make test-viewer a tpsim trace in a real trace viewer: speedscope (npm) in Debian's
#                   headless Chromium; fails on any console warning or a nesting too deep
#   make bench-peer tpsim side by side with ../shared/peer/ (SimPy model, max-plus floor as
#                   written and like for like, with tpsim's normal draw): CPU time per
#                   rank-op, 7 interleaved rounds, median and min, load printed
#   make calibrate  build the GPU calibration tools (needs CUDA and NCCL; skips otherwise)
#   make fuzz       run each libFuzzer harness (tests/fuzz/) FUZZ_SECONDS, default 60 (clang)
#   make validation-engines  docs/validation-engines.md: every eager hypothesis under each
#                   vLLM engine and calibration set, four protocols (~14 CPU s)
#   make predictions the pre-registered predictions (docs/predictions*.csv), byte for byte
#   make docs       the generated tables of docs/results.md (scripts/docs-tables.sh: the
#                   validation table, the what-if table, the engines digest, the atlas)
#   make atlas      the what-if atlas: {8B, 70B, 405B, Mixtral-8x7B} x {H100, H200, A100} x TP
#                   {1,2,4,8} x {eager, graphs} to build/atlas/atlas.csv and atlas.png
#   make install    PREFIX=/usr/local (and DESTDIR): tpsim, models, scenarios, grids, the atlas
#                   script (share/tpsim/scripts/atlas.sh), man page;
#                   make uninstall removes them
#   make deps       install missing Debian packages (DEB_PKGS below)

CC      ?= cc
BUILD   := build
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
CFLAGS  ?= -O2 -g
CFLAGS  += $(CSTD) $(WARN) -MMD -MP
# yaml, jansson, zlib and sqlite3 are linked statically where their archives are installed (the
# Debian -dev packages ship them): with four shared objects fewer to map and relocate, tpsim
# starts about 1 ms sooner, and the tests start it 1,700 times. Without the archives, dynamically.
LIBS_A  := $(foreach l,yaml jansson z sqlite3,$(shell $(CC) -print-file-name=lib$(l).a 2>/dev/null))
ifeq ($(words $(filter /%,$(LIBS_A))),4)
LDLIBS  := -Wl,-Bstatic -lyaml -ljansson -lz -lsqlite3 -Wl,-Bdynamic -lm -pthread
else
LDLIBS  := -lyaml -ljansson -lz -lsqlite3 -lm -pthread
endif
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# The tpsim binary is five folders, one layer each, bottom to top (docs/DESIGN.md):
#   base/       the ground every job uses: errors, files and atomic outputs, YAML, JSON, CSV,
#               the flag parser, number parsing, the parallel map, where shared files live
#   sim/        the step model: its inputs (scenario, model, hardware, calibrations) and engine
#   calibrate/  measurements into sim/'s inputs (fits, trace readers; the GPU tools there are
#   validate/   built by calibrate/calibrate.mk, not into tpsim) | judging: grids, fitter,
#               validation core, intervals, figures (the two are siblings: neither includes
#               the other)
#   cmd/        the commands, their flags and reports, the command table and main()
# Each folder compiles with the include paths of its own layer and those below it, so an
# upward #include does not build (tests/cli/layers.sh says which line); tests and fuzzers see
# every layer.
CAL_GPU_SRC := calibrate/cal_common.c calibrate/nccl_sweep.c calibrate/probe.c calibrate/probe_gemv.c
LAYERS   := base sim calibrate validate cmd
SIM_SRC  := $(sort $(filter-out $(CAL_GPU_SRC),$(foreach d,$(LAYERS),$(wildcard $(d)/*.c))))
LIB_SRC  := $(filter-out cmd/main.c,$(SIM_SRC))
INC_base      := -Ibase
INC_sim       := -Ibase -Isim
INC_calibrate := -Ibase -Isim -Icalibrate
INC_validate  := -Ibase -Isim -Ivalidate
INC_cmd       := -Ibase -Isim -Icalibrate -Ivalidate -Icmd
INC           := $(INC_cmd)
layer_inc = $(or $(INC_$(firstword $(subst /, ,$(1)))),$(INC))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TESTS    := $(patsubst tests/%.c,%,$(TEST_SRC))

OBJ      := $(patsubst %.c,$(BUILD)/obj/%.o,$(SIM_SRC))
LIB_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC))
SOBJ     := $(patsubst %.c,$(BUILD)/san/%.o,$(SIM_SRC))
SLIB_OBJ := $(patsubst %.c,$(BUILD)/san/%.o,$(LIB_SRC))

# Where a build finds models/, scenarios/ and validate/ when a scenario or the command line
# names a file by name (base/locate.h): this source tree; `make install` builds its own tpsim
# with $(PREFIX)/share/tpsim instead.
SHARE_SRC := $(CURDIR)
$(BUILD)/obj/base/locate.o: CFLAGS += -DTPSIM_SHARE='"$(SHARE_SRC)"'
$(BUILD)/san/base/locate.o: SANFLAGS += -DTPSIM_SHARE='"$(SHARE_SRC)"'

# python3-pandas: tests/cli/csv_pandas.sh reads every CSV with pandas' defaults (skipped without)
DEB_PKGS := libyaml-dev libcmocka-dev gnuplot-nox libjansson-dev zlib1g-dev libsqlite3-dev python3 \
  python3-pandas

.PHONY: all run test check bench calibrate deps clean install uninstall fuzz fuzz-deps atlas predictions
# keep test objects between builds (they are intermediates of the test binaries)
.SECONDARY:

all: $(BUILD)/tpsim

# Before the first compile: every library header the build includes, or one line naming the
# Debian package that is missing and how to install it (instead of a bare compiler error).
# header:package pairs; cmocka only for the tests.
HDR_PKGS := yaml.h:libyaml-dev jansson.h:libjansson-dev zlib.h:zlib1g-dev sqlite3.h:libsqlite3-dev
define hdr_check
	@missing=""; for hp in $(1); do h=$${hp%%:*}; p=$${hp#*:}; \
	  printf '#include <%s>\n' "$$h" | $(CC) -E -x c - >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "tpsim: cannot build: missing the Debian package(s)$$missing (their headers are not found);" \
	       "install them with 'make deps' (or: sudo apt-get install$$missing)" >&2; exit 1; fi
	@mkdir -p $(dir $@) && touch $@
endef
$(BUILD)/.headers-ok:
	$(call hdr_check,$(HDR_PKGS))
$(BUILD)/.cmocka-ok:
	$(call hdr_check,cmocka.h:libcmocka-dev)

$(BUILD)/obj/%.o: %.c | $(BUILD)/.headers-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(call layer_inc,$<) -c $< -o $@

$(BUILD)/tpsim: $(OBJ)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# (explicit targets: a recipe-less pattern rule would cancel the compile rule)
$(patsubst tests/%.c,$(BUILD)/obj/tests/%.o,$(TEST_SRC)) $(patsubst tests/%.c,$(BUILD)/san/tests/%.o,$(TEST_SRC)): | $(BUILD)/.cmocka-ok
$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS) -lcmocka

$(BUILD)/bench: $(BUILD)/obj/tests/bench.o $(LIB_OBJ)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# the trace writer's and trace importer's speed (tests/bench_trace.c)
$(BUILD)/bench-trace: $(BUILD)/obj/tests/bench_trace.o $(LIB_OBJ)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# Installs only what is missing; apt-get needs root (CI and the dev machines run as root).
# $(call deb_install,PKGS): install those of the Debian packages PKGS that are missing (one
# dpkg -s for all first: make run and make test pass here every time, nearly always with
# nothing missing, and a dpkg per package cost ~0.2 CPU s of make run's 3).
define deb_install
	@missing=""; dpkg -s $(1) >/dev/null 2>&1 || \
	  for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

deps:
	$(call deb_install,$(DEB_PKGS))

# The main job: the study reproduced (its additive model fails TP-4), the headline
# protocol (fit on TP-2, predict TP-4) for the mechanism with its intervals and objective
# map, every hypothesis under within / transfer 2:4 / transfer 4:2 beside the null baselines
# (validate/table.sh), and the TP-8 / CUDA-graph what-ifs, with figures. `make bench` times it.
FIG := $(BUILD)/figures
run: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/tpsim validate scenarios/paper-additive.yaml --plot $(FIG)/paper-additive
	$(BUILD)/tpsim validate scenarios/eager-host-dispatch.yaml --transfer 2:4 --plot $(FIG)/eager-host-dispatch --scan $(FIG)/eager-host-dispatch
	@echo "validation table: every hypothesis, three protocols (validate/table.sh)"
	@validate/table.sh $(BUILD)/tpsim $(BUILD)/validation >$(BUILD)/validation.md
	@cat $(BUILD)/validation.md
	$(BUILD)/tpsim sweep scenarios/eager-host-dispatch.yaml --tp 2,4,8 --batch 1,8 --mode eager,graphs -o $(BUILD)/what-if.csv
	@scripts/csv-columns.sh $(BUILD)/what-if.csv mode tp batch step_ms_mean host_ms compute_ms \
	  allreduce_ms gpu_idle_ms in_domain domain_marks
	@echo "figures: $(FIG)/*/  validation table: $(BUILD)/validation.md  what-if grid: $(BUILD)/what-if.csv"

# The pre-registered predictions (scripts/predictions.sh): docs/predictions.csv, byte for byte
# (tests/cli/predictions.sh checks the committed file is what this writes); the serving ones;
# and the 2026-12-03 registrations on the measured GPU models under each engine
# (scripts/predictions-engines.sh: docs/predictions-2026-12-03-{engines,tp8}.csv).
predictions: deps
	@$(MAKE) --no-print-directory all
	scripts/predictions.sh $(BUILD)/tpsim docs/predictions.csv
	scripts/predictions-serving.sh $(BUILD)/tpsim docs/predictions-serving.csv
	scripts/predictions-engines.sh $(BUILD)/tpsim docs

# The study's grid under each vLLM engine and calibration set (scripts/validation-engines.sh):
# docs/validation-engines.md, byte for byte (tests/cli/validation_engines.sh checks a sample).
# About 14 CPU s: too slow for make run, whose table shows the scenarios as written.
.PHONY: validation-engines
validation-engines: deps
	@$(MAKE) --no-print-directory all
	scripts/validation-engines.sh $(BUILD)/tpsim docs/validation-engines.md

# Every registered serving prediction regenerated and compared byte for byte (about 3 CPU
# minutes: CI runs it; tests/cli/serve.sh checks a sample on every make check).
.PHONY: predictions-check
predictions-check: deps
	@$(MAKE) --no-print-directory all
	@tmp=$$(mktemp) && scripts/predictions-serving.sh $(BUILD)/tpsim $$tmp && \
	  if cmp -s $$tmp docs/predictions-serving.csv; then echo "predictions-check: docs/predictions-serving.csv regenerates byte for byte"; rm -f $$tmp; \
	  else echo "predictions-check: docs/predictions-serving.csv differs from what the model writes now (register a new dated file)"; diff $$tmp docs/predictions-serving.csv | head; rm -f $$tmp; exit 1; fi

# The tables of docs/results.md that scripts make (scripts/docs-tables.sh), each rewritten
# between its markers from its source: run it after a change that moves them, and after make
# validation-engines or make atlas (tests/cli/docs_commands.sh checks the two that need no run).
.PHONY: docs
docs: deps
	@$(MAKE) --no-print-directory all
	scripts/docs-tables.sh $(BUILD)/tpsim

# The golden outputs (tests/data/golden/README.md): rewrite them from this build, for a change
# meant to change run, sweep, validate or plan output (its commit says which and why).
.PHONY: golden
golden: all
	scripts/golden.sh $(BUILD)/tpsim tests/data/golden

# The what-if atlas (scripts/atlas.sh): every cell that fits in HBM, CSV and figure.
atlas: deps
	@$(MAKE) --no-print-directory all
	scripts/atlas.sh $(BUILD)/tpsim $(BUILD)/atlas

# Tests. Each test is a target, so `make -jN` runs N at once: a test's output goes to its log
# (build/check/...), and only a failure prints it (scripts/run-test.sh). check and test print
# their CPU and wall time at the end (scripts/cpu-seconds.sh), so the budget is watched:
# check under 90 s of CPU on a built tree, test under 600 s from a fresh clone.
NPROC ?= $(shell nproc 2>/dev/null || echo 2)
CHK := $(BUILD)/check
CLI_TESTS := $(patsubst tests/cli/%.sh,%,$(filter-out tests/cli/lib.sh,$(sort $(wildcard tests/cli/*.sh))))
# CLI tests that never run tpsim (source, build and history checks): once, in check only
CLI_NOBIN := calibrate_tools commits design engine_fields install layers style
CLI_BIN := $(filter-out $(CLI_NOBIN),$(CLI_TESTS))
CHECK_RUNS := $(addprefix $(CHK)/unit/,$(TESTS)) $(addprefix $(CHK)/cli/,$(CLI_TESTS))
SAN_RUNS := $(addprefix $(CHK)/san-unit/,$(TESTS)) $(addprefix $(CHK)/san-cli/,$(CLI_BIN))
.PHONY: FORCE check-runs san-runs
FORCE:

$(CHK)/unit/%: $(BUILD)/tests/% FORCE
	@scripts/run-test.sh $@ "$*" $<
$(CHK)/cli/%: tests/cli/%.sh $(BUILD)/tpsim FORCE
	@scripts/run-test.sh $@ "tests/cli/$*.sh" env TPSIM=$(BUILD)/tpsim bash $<
$(CHK)/san-unit/%: $(BUILD)/san/tests/% FORCE
	@scripts/run-test.sh $@ "$* (sanitizers)" env ASAN_OPTIONS=detect_leaks=1 $<
$(CHK)/san-cli/%: tests/cli/%.sh $(BUILD)/san/tpsim FORCE
	@scripts/run-test.sh $@ "tests/cli/$*.sh (sanitizers)" \
	  env TPSIM=$(BUILD)/san/tpsim ASAN_OPTIONS=detect_leaks=1 bash $<
check-runs: $(CHECK_RUNS)
san-runs: $(SAN_RUNS)

check: deps
	@scripts/cpu-seconds.sh --tee "make check" 90 $(CHK)/check.log \
	  $(MAKE) --no-print-directory -k -j$(NPROC) check-runs

test: deps san-deps
	@scripts/cpu-seconds.sh --tee "make test" 600 $(CHK)/test.log \
	  $(MAKE) --no-print-directory -k -j$(NPROC) check-runs san-runs

# One sanitizer build, clang's: AddressSanitizer, UndefinedBehaviorSanitizer and
# float-cast-overflow, which only clang has (a double converted to an integer type it does not
# fit: `"pid": 1e300` in a trace was one). Not float-divide-by-zero: IEEE division by zero is
# defined, gives inf, and the writers rely on it where a rate has no time.
SAN_PKGS := clang libclang-rt-dev
SAN_CC ?= clang
SANFLAGS := -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
  -fno-sanitize-recover=all
.PHONY: san-deps
san-deps:
	$(call deb_install,$(SAN_PKGS))

$(BUILD)/san/%.o: %.c | $(BUILD)/.headers-ok
	@mkdir -p $(dir $@)
	$(SAN_CC) $(CSTD) $(WARN) -MMD -MP $(SANFLAGS) $(call layer_inc,$<) -c $< -o $@

$(BUILD)/san/tpsim: $(SOBJ)
	$(SAN_CC) $(SANFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/san/tests/%: $(BUILD)/san/tests/%.o $(SLIB_OBJ)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SANFLAGS) $^ -o $@ $(LDLIBS) -lcmocka

# Brings up munge + slurmctld + slurmd on localhost (packages installed by the test itself),
# runs a 3-task array sweep and its merge, stops everything; bounded in time.
.PHONY: test-slurm bench-peer
test-slurm: deps
	@$(MAKE) --no-print-directory $(BUILD)/tpsim
	timeout 900 bash tests/slurm/run.sh

# A trace viewer nobody here wrote draws tpsim's trace: speedscope (npm, pinned in
# tests/viewer/package.json, with puppeteer-core to drive the browser) in Debian's Chromium,
# headless, on TP-4 eager and graphs traces with launch jitter. tests/viewer/check.js fails on
# any warning or error the viewer logs while importing (speedscope warns for every slice that
# overlaps the next in its ts + dur arithmetic; the old three-decimal trace gave 12,162 and a
# staircase), a profile that does not load, or nesting deeper than the real 2 (a step and its
# host slices). Needs the network once (apt, npm); the browser runs offline on 127.0.0.1.
VIEWER_PKGS := chromium
VIEWER := $(BUILD)/viewer
.PHONY: test-viewer
test-viewer: deps
	$(call deb_install,$(VIEWER_PKGS))
	@# Node and npm: Debian's, unless a node with its npm is on PATH already (NodeSource's)
	@command -v npm >/dev/null || $(MAKE) --no-print-directory VIEWER_NODE=1 viewer-node
	@$(MAKE) --no-print-directory all
	@mkdir -p $(VIEWER)
	@cmp -s tests/viewer/package.json $(VIEWER)/package.json && [ -d $(VIEWER)/node_modules/speedscope ] || \
	  { cp tests/viewer/package.json $(VIEWER)/ && cd $(VIEWER) && npm install --no-audit --no-fund --silent; }
	@set -e; for mode in eager graphs; do \
	  $(BUILD)/tpsim run scenarios/eager-host-dispatch.yaml --tp 4 --steps 3 --mode $$mode \
	    --set host.launch.dist=lognormal --set host.launch.cv=0.3 --trace $(VIEWER)/tp4-$$mode.json >/dev/null; \
	  NODE_PATH=$(CURDIR)/$(VIEWER)/node_modules timeout 300 node tests/viewer/check.js \
	    $(VIEWER)/node_modules/speedscope/dist/release $(VIEWER)/tp4-$$mode.json 2; \
	done

.PHONY: viewer-node
viewer-node:
	$(call deb_install,nodejs npm)

# The man page's COMMAND USAGE section from every command's --help (scripts/gen-man.sh: the
# dispatch table's commands, so a new command is picked up); conventions.sh fails when stale.
.PHONY: man
man: $(BUILD)/tpsim
	scripts/gen-man.sh $(BUILD)/tpsim <docs/tpsim.1 >$(BUILD)/tpsim.1.new
	mv $(BUILD)/tpsim.1.new docs/tpsim.1
	scripts/gen-completion.sh $(BUILD)/tpsim >$(BUILD)/tpsim.bash.new
	mv $(BUILD)/tpsim.bash.new docs/tpsim.bash

# bash completion from the command and flag tables (also written by `make man`)
.PHONY: completion
completion: $(BUILD)/tpsim
	scripts/gen-completion.sh $(BUILD)/tpsim >$(BUILD)/tpsim.bash.new
	mv $(BUILD)/tpsim.bash.new docs/tpsim.bash

# The fast path (max-plus), the event engine, then a 10^6-step TP-8 run for its peak RSS
# (about 2.5 minutes: 7.8e9 rank-ops, peak RSS 3.5 MB).
bench: deps
	@$(MAKE) --no-print-directory $(BUILD)/bench $(BUILD)/bench-trace
	$(BUILD)/bench
	$(BUILD)/bench --method events --steps 300
	$(BUILD)/bench --scenario tests/bench/peer-tp8.yaml --steps 1000000 --reps 1
	$(BUILD)/bench-trace
	@$(MAKE) --no-print-directory all
	scripts/bench-jobs.sh $(BUILD)/tpsim
	@# CPU seconds, not wall: on shared cores the wall time is mostly the wait for a core
	@scripts/cpu-seconds.sh make_run_cpu_s 3 $(BUILD)/bench-run.log $(MAKE) --no-print-directory run
	@$(MAKE) --no-print-directory bench-plan
	@# serve: 1,000 requests of 1,024 + 1,024 tokens at concurrency 64, 70B TP-4 (budget 5 s)
	@scripts/cpu-seconds.sh serve_1000_cpu_s 5 $(BUILD)/bench-serve.log $(BUILD)/tpsim serve \
	  serve-h100 --concurrency 64 --requests 1000 --isl 1024 --osl 1024 --quiet

# tpsim plan's full default search on one core (issue 20's budget: under 10 s): 3 GPUs x TP
# {1,2,4,8} x {eager, graphs} x batch 1..256 x 5 contexts, every cell whose KV cache fits
# simulated, then the fit, the intervals of the rows shown and the answer. H200 borrows the
# H100 all-reduce calibrations (it has none of its own), hence --allow-foreign-calib.
PLAN_BENCH := plan scenarios/eager-host-dispatch.yaml --gpus 8 --tpot-ms 30 --hardware h100,h200,a100 \
  --ctx-range 512..8192 --allow-foreign-calib --jobs 1 --quiet
.PHONY: bench-plan
bench-plan: all
	@bash -c 'TIMEFORMAT="%R %U %S"; { time $(BUILD)/tpsim $(PLAN_BENCH) >$(BUILD)/bench-plan.txt; } 2>$(BUILD)/bench-plan.time' || \
	  { echo "tpsim plan failed, see $(BUILD)/bench-plan.txt"; exit 1; }; \
	  cells=$$(sed -n 's/^searched: .*configurations, \([0-9]*\) cells.*/\1/p' $(BUILD)/bench-plan.txt); \
	  awk -v n=$$cells '{ cpu = $$2 + $$3; printf "plan_search_s: %.2f CPU, %.2f wall (%s cells of 3 GPUs x TP 1,2,4,8 x 2 modes x batch 1..256 x 5 ctx, one thread; budget 10 s CPU: %s)\n", cpu, $$1, n, cpu < 10 ? "within" : "OVER" }' $(BUILD)/bench-plan.time

# The peers are measured where they live (../shared/peer/); SimPy is Debian's python3-simpy3,
# installed here so that make test does not need it.
PEER := ../shared/peer
PEER_PKGS := python3 python3-simpy3
bench-peer: deps
	$(call deb_install,$(PEER_PKGS))
	@$(MAKE) --no-print-directory $(BUILD)/bench $(BUILD)/peer/floor $(BUILD)/peer/floor-like
	/usr/bin/python3 scripts/bench-peer.py --peer $(PEER)

$(BUILD)/peer/floor: $(PEER)/floor.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -o $@ $< -lm

# The like-for-like floor: the same floor.c with tpsim's normal draw in place of its polar
# method (tests/bench/floor_like.h says how and why), built as the floor is, at -O2.
FLOOR_LIKE_SED := s/std_normal(&rng\[r\])/floor_like_normal(\&rng[r].state, rng[r].inc)/; \
                  s/\<pcg32(/floor_pcg32(/g
FLOOR_LIKE_SRC := tests/bench/floor_like.h sim/zig.h sim/pcg32.h sim/pcg32.c sim/zig.c sim/zig_tab.c
$(BUILD)/peer/floor-like.c: $(PEER)/floor.c Makefile
	@mkdir -p $(dir $@)
	sed '$(FLOOR_LIKE_SED)' $< >$@.tmp
	@test "$$(grep -c 'floor_like_normal(' $@.tmp)" = 1 || \
	  { echo "bench-peer: $< has no one 'std_normal(&rng[r])' to replace" >&2; exit 1; }
	mv $@.tmp $@
$(BUILD)/peer/floor-like: $(BUILD)/peer/floor-like.c $(FLOOR_LIKE_SRC)
	$(CC) -O2 -D_POSIX_C_SOURCE=199309L -Isim -include tests/bench/floor_like.h -o $@ $< \
	  sim/pcg32.c sim/zig.c sim/zig_tab.c -lm

# Fuzzing: one libFuzzer harness per parser (tests/fuzz/fuzz_NAME.c, seeds in
# tests/fuzz/corpus/NAME/; see tests/fuzz/README.md), each run FUZZ_SECONDS with ASan+UBSan;
# any crash, leak, hang (> 10 s on one input) or trap fails the target. Needs clang and its
# fuzzer runtime, installed here only (make test does not need clang).
FUZZ_SECONDS ?= 60
FUZZ_PKGS := clang libclang-rt-dev
FUZZ_CC ?= clang
# 0: libFuzzer picks a new seed each run (explores more over time); CI passes a fixed one so a
# red run is reproducible and a green landing cannot turn red on a roll of the dice
FUZZ_SEED ?= 0
FUZZ_FLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZERS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
FOBJ := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(LIB_SRC))

$(BUILD)/fuzz/obj/base/locate.o: FUZZ_FLAGS += -DTPSIM_SHARE='"$(SHARE_SRC)"'
$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) $(WARN) -MMD -MP $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(call layer_inc,$<) -c $< -o $@

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_file.h $(FOBJ)
	$(FUZZ_CC) $(CSTD) $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer $(INC) $< $(FOBJ) -o $@ $(LDLIBS)

fuzz-deps: deps
	$(call deb_install,$(FUZZ_PKGS))

fuzz: fuzz-deps
	@$(MAKE) --no-print-directory $(FUZZERS)
	@set -e; for f in $(FUZZERS); do \
	  n=$${f##*/fuzz_}; mkdir -p $(BUILD)/fuzz/found/$$n; \
	  echo "== fuzz $$n: $(FUZZ_SECONDS) s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -seed=$(FUZZ_SEED) -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
	      -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/$$n- \
	      $(BUILD)/fuzz/found/$$n tests/fuzz/corpus/$$n 2>$(BUILD)/fuzz/$$n.log \
	    || { tail -n 60 $(BUILD)/fuzz/$$n.log; echo "fuzz $$n: FAILED (reproduce: $$f $(BUILD)/fuzz/$$n-*)"; exit 1; }; \
	  grep -E '^stat::number_of_executed_units|^Done' $(BUILD)/fuzz/$$n.log | tr '\n' ' '; echo; \
	done

-include calibrate/calibrate.mk

# make install [PREFIX=/usr/local] [DESTDIR=staging]: tpsim (and the GPU tools when `make
# calibrate` built them) in bin/; models/, scenarios/ and the validate/ grids in share/tpsim/;
# the manual page in share/man/man1/. The installed tpsim is linked with $(PREFIX)/share/tpsim
# as its share folder (base/locate.h), so scenarios and models are found by name from anywhere.
# make uninstall removes exactly those files and share/tpsim, then the folders that install
# created (listed in share/tpsim/.made-dirs) where they are left empty.
PREFIX    ?= /usr/local
INST_BIN  := $(PREFIX)/bin
INST_SHARE := $(PREFIX)/share/tpsim
INST_MAN  := $(PREFIX)/share/man/man1
GPU_TOOLS := tpsim-nccl-sweep tpsim-probe

# The installed binary: locate.c compiled with this PREFIX's share folder, linked with the other
# objects. $(BUILD)/install/share holds the share folder it was built for and changes only when
# that does, so a second install to the same PREFIX links nothing (an install compiled and
# linked every time: tests/cli/install.sh installs four times).
$(BUILD)/install/share: FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = '$(INST_SHARE)' ] || printf '%s\n' '$(INST_SHARE)' >$@
$(BUILD)/install/locate.o: base/locate.c $(BUILD)/install/share | $(BUILD)/.headers-ok
	$(CC) $(CFLAGS) $(INC_base) -DTPSIM_SHARE='"$(INST_SHARE)"' -c base/locate.c -o $@
$(BUILD)/install/tpsim: $(filter-out $(BUILD)/obj/base/locate.o,$(OBJ)) $(BUILD)/install/locate.o
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

install: $(BUILD)/install/tpsim
	@# folders this install creates are listed, so uninstall removes those and never a
	@# standard folder (an empty /usr/local/bin) that was there before
	@made=""; for d in $(PREFIX) $(PREFIX)/bin $(PREFIX)/share $(PREFIX)/share/man $(INST_MAN) \
	  $(PREFIX)/share/bash-completion $(PREFIX)/share/bash-completion/completions; do \
	  [ -d "$(DESTDIR)$$d" ] || made="$$d $$made"; done; \
	install -d $(DESTDIR)$(INST_BIN) $(DESTDIR)$(INST_SHARE)/validate $(DESTDIR)$(INST_MAN); \
	[ ! -f $(DESTDIR)$(INST_SHARE)/.made-dirs ] || made="$$made $$(cat $(DESTDIR)$(INST_SHARE)/.made-dirs)"; \
	printf '%s\n' $$made > $(DESTDIR)$(INST_SHARE)/.made-dirs
	install -m 755 $(BUILD)/install/tpsim $(DESTDIR)$(INST_BIN)/tpsim
	@for t in $(GPU_TOOLS); do if [ -x $(BUILD)/$$t ]; then \
	  echo "install -m 755 $(BUILD)/$$t $(DESTDIR)$(INST_BIN)/$$t"; \
	  install -m 755 $(BUILD)/$$t $(DESTDIR)$(INST_BIN)/$$t; fi; done
	rm -rf $(DESTDIR)$(INST_SHARE)/models $(DESTDIR)$(INST_SHARE)/scenarios
	cp -R models scenarios $(DESTDIR)$(INST_SHARE)/
	chmod -R u=rwX,go=rX $(DESTDIR)$(INST_SHARE)/models $(DESTDIR)$(INST_SHARE)/scenarios
	install -m 644 validate/*.csv validate/*.md $(DESTDIR)$(INST_SHARE)/validate/
	install -d $(DESTDIR)$(INST_SHARE)/scripts
	install -m 755 scripts/atlas.sh $(DESTDIR)$(INST_SHARE)/scripts/atlas.sh
	install -m 644 scripts/atlas.gp $(DESTDIR)$(INST_SHARE)/scripts/atlas.gp
	install -m 644 docs/tpsim.1 $(DESTDIR)$(INST_MAN)/tpsim.1
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 docs/tpsim.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/tpsim

uninstall:
	rm -f $(DESTDIR)$(INST_BIN)/tpsim $(addprefix $(DESTDIR)$(INST_BIN)/,$(GPU_TOOLS))
	rm -f $(DESTDIR)$(INST_MAN)/tpsim.1
	rm -f $(DESTDIR)$(PREFIX)/share/bash-completion/completions/tpsim
	@# the folders install made (deepest first), where nothing else is left in them
	@made=$$(cat $(DESTDIR)$(INST_SHARE)/.made-dirs 2>/dev/null); \
	rm -rf $(DESTDIR)$(INST_SHARE); \
	for d in $$made; do rmdir $(DESTDIR)$$d 2>/dev/null || true; done

clean:
	rm -rf $(BUILD)

# header dependencies of every object, tests and bench included (a stale test object built
# against an old struct layout corrupts memory rather than failing to link)
-include $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/san/*/*.d $(BUILD)/fuzz/obj/*/*.d $(BUILD)/install/*.d)

# CONTRIBUTING.md's commit-message rule as a git commit-msg hook (tests/cli/commits.sh checks
# the history since the rule was first checked).
.PHONY: hooks
hooks:
	@hooks=$$(git rev-parse --git-path hooks) && mkdir -p "$$hooks" && \
	  printf '#!/bin/sh\n# the checker of the work tree committing (worktrees share this hook)\nexec "$$(git rev-parse --show-toplevel)/scripts/check-commits.sh" --msg "$$1"\n' >"$$hooks/commit-msg" && \
	  chmod +x "$$hooks/commit-msg" && echo "installed $$hooks/commit-msg"
