# Tessera's entry points: `make demo` (the main job) and `make test` (the whole test suite).
# Both install missing Debian packages, configure and build as needed.
.PHONY: all deps configure configure-debug build demo test test-all test-release test-sanitize test-sanitize-core test-fuzz test-zoo test-full fuzz bench fresh-check clean fpga-report gls ice40-fit bitstream-icebreaker formal coverage mutate

FUZZ_SECONDS ?= 60
FUZZ_HARNESSES ?=

# Warnings are errors in CI only (.ci/run sets CI=true), never in a user's build; WERROR=ON forces it.
WERROR ?= $(if $(filter true,$(CI)),ON,OFF)

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake --preset default -DTESSERA_WERROR=$(WERROR) > build-configure.log 2>&1 || (cat build-configure.log; exit 1)
	@rm -f build-configure.log

build: configure
	@cmake --build --preset default

demo: build
	@bash scripts/demo.sh build

# The whole suite (CI runs this; 43.2 minutes from a fresh clone on the 2-core build machine,
# docs/user-guide.md): the release build's every test but the long runs of label full (each
# harness's seed corpus replayed included), then the clang build under ASan and UBSan (test-fuzz): every libFuzzer harness fuzzed
# briefly from its corpus, and the core unit suites (support, hw, streams; label core). Two builds.
# `make test-all` adds the long runs, the zoo, and every suite of the gcc debug preset under the
# sanitizers (test-sanitize).
test: test-release test-fuzz

test-all: test-release test-sanitize test-fuzz test-zoo test-full

# The long runs the default suite leaves out to bring `make test` toward its 35 minutes (label full;
# docs/user-guide.md lists them): the larger sizes of checks the default suite runs small, and
# checks whose every run is minutes of Yosys, Slurm or a cross build.
test-full: build
	@ctest --preset full

# The torchvision architectures the default suite leaves out (label zoo-full; docs/zoo.md): each
# exported by scripts/models/make_zoo.py, compiled from float with calibration and run whole.
test-zoo: build
	@ctest --preset zoo

test-release: build
	@ctest --preset default

# The RTL's formal proofs (k-induction with Yosys and yosys-smtbmc) and the planted bugs each must
# catch, with a report (tests/formal, docs/verification.md); ctest runs the same as label formal.
formal: build
	@bash tests/formal/prove.sh --all --build build

# The standard coverage regression of the RTL on tsim-cov and its report in build/coverage/report
# (scripts/coverage.sh, docs/verification.md); TESSERA_COVERAGE_PROGRAMS scales it.
coverage: build
	@bash scripts/coverage.sh build build/coverage

# Mutation testing: each mutant of tsim-mut (Yosys-planted, tsim/mutation) against 200 random
# programs and the directed programs, with the per-module score in build/mutation/default/report.md
# (tests/mutation/mutate.sh, docs/verification.md); ctest runs the same as label mutation-full.
# tsim-mut is built on request: here first.
mutate: build
	@cmake --build --preset default --target tessera_plugin_tsim-mut
	@bash tests/mutation/mutate.sh --build build

# Unit, runtime, regression, compiler, network, ONNX, CLI and fuzz-corpus tests again in the debug
# preset (build-debug/: -O1 -fsanitize=address,undefined, UBSan fatal), so a sanitizer finding fails
# the test. The preset leaves out eight labels: fresh (a debootstrapped Debian, as in the release
# run), slow (the ResNet-18 model files, already the release run's longest tests), sanitizer-heavy
# (the tsim run under extreme memory timings, past its 600 s timeout instrumented, and the ResNet-18
# layer suite on every simulator but fsim), fpga (Tcl flow checks on stubbed vendor tools), synth
# (Yosys on the RTL) and formal (Yosys and smtbmc proofs); the last three run no C++ of ours, so
# they would only repeat the release run;
# install (a consumer project built without the sanitizers cannot link the instrumented libraries);
# and cross (the armhf/arm64 builds use their toolchains' own flags: nothing of them is instrumented).
# -O1 rather than -O0, for the instrumented simulators' speed.
# The preset builds no tsim-cov (TESSERA_TSIM_COV_CONFIGS empty): a second, coverage-instrumented RTL
# model would lengthen the instrumented build, and tsim's tests run the harness it shares; the
# coverage files' code runs instrumented in tessera_regress_tests (test_coverage.cpp).
test-sanitize: configure-debug
	@cmake --build --preset debug
	@ctest --preset debug

# The same preset on the unit, runtime, kernel, regression and simulator (tsim, hls, hls-sc,
# rtl-sc) suites only, building only what they run (24 minutes on the 2-core build machine, so not
# part of `make test`). The fuzz corpora run instrumented in test-fuzz. Labels aot
# and cross are left out although their tests also carry a target's label: they need the CLI and
# the code generator, which this preset does not build.
test-sanitize-core: configure-debug
	@cmake --build --preset debug-core
	@ctest --preset debug-core

configure-debug: deps
	@cmake --preset debug > build-debug-configure.log 2>&1 || (cat build-debug-configure.log; exit 1)
	@rm -f build-debug-configure.log

# The libFuzzer harnesses (preset fuzz, build-fuzz/, clang-14, ASan and UBSan) built, then each
# fuzzed for TESSERA_FUZZ_CTEST_SECONDS (10) from its seed corpus by ctest (label fuzz); the same
# build runs the core unit suites (label core), whose libraries it has compiled anyway.
test-fuzz: deps
	@cmake --preset fuzz > build-fuzz-configure.log 2>&1 || (cat build-fuzz-configure.log; exit 1)
	@rm -f build-fuzz-configure.log
	@cmake --build --preset fuzz
	@ctest --preset fuzz

# Longer fuzzing, one harness at a time: make fuzz [FUZZ_SECONDS=60] [FUZZ_HARNESSES="asm_text ..."]
fuzz: deps
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_HARNESSES="$(FUZZ_HARNESSES)" bash scripts/fuzz.sh

bench: build
	@./build/tests/bench/tessera_bench_fsim
	@if [ -x ./build/tests/bench/tessera_bench_tsim ]; then ./build/tests/bench/tessera_bench_tsim; fi
	@./build/tests/aot/tessera_bench_host_codegen
	@./build/sw/tessera bench gemm --target tsim

# The iCEBreaker bitstream (pico core, board config pico; docs/fpga.md): Yosys synth_ice40,
# nextpnr-ice40 for the UP5K at 12 MHz and icepack to build/icebreaker/tessera_icebreaker.bin.
# Fails if placement, routing or timing fails; prints the utilisation and Fmax. Open tools only.
bitstream-icebreaker: configure
	@cmake --build --preset default --target tessera_generated_headers > /dev/null
	@bash scripts/fpga/icebreaker_bitstream.sh . build/generated/pico build/icebreaker

# FPGA bitstreams (needs AMD Vivado, and Vitis HLS for FLOW=hls; see scripts/README.md):
# make bitstream-<board> [FLOW=rtl|hls] [CONFIG=default] [JOBS=2]
# Boards are those of scripts/fpga/boards.tcl: pynq-z1, ultra96v2, zcu104.
FLOW ?= rtl
CONFIG ?= default
bitstream-%:
	@FLOW=$(FLOW) CONFIG=$(CONFIG) HLS_SOURCES="$(HLS_SOURCES)" JOBS=$(JOBS) \
	  bash scripts/fpga/build.sh $*

# Resource and logic-depth report of the RTL for a Xilinx family with Yosys (no Vivado; docs/fpga.md):
# make fpga-report [CONFIG=default] [FAMILY=xc7|xcup] [MAX_DEPTH=N]; table on stdout, JSON and netlists
# in build/fpga-report/<config>-<family>/. Fails on a latch, an SRAM not in block RAM or a part
# overflow, and with MAX_DEPTH on a register-to-register path deeper than N LUT levels.
FAMILY ?= xc7
MAX_DEPTH ?=
fpga-report: configure
	@cmake --build --preset default --target tessera_generated_headers > /dev/null
	@python3 scripts/fpga/yosys_report.py --gen build/generated/$(CONFIG) --rtl rtl \
	  --boards scripts/fpga/boards.tcl --parts hw/configs/space/parts.json --family $(FAMILY) --work build/fpga-report/$(CONFIG)-$(FAMILY) \
	  --json build/fpga-report/$(CONFIG)-$(FAMILY)/report.json --check $(if $(MAX_DEPTH),--max-depth $(MAX_DEPTH))

# Gate-level simulation (gls/README.md): turns TESSERA_BUILD_GLS on in build/, synthesizes and
# verilates the netlists of TESSERA_GLS_CONFIGS (default small; ~6 minutes on 2 cores), then runs the
# runtime tests and the random regression on gls and gls-ice40 (label gls: 100 s with 2 jobs here);
# also the iCEBreaker bitstream's netlist against fsim (TESSERA_BUILD_ICEBREAKER_GLS, docs/fpga.md).
gls: deps
	@cmake --preset default -DTESSERA_WERROR=$(WERROR) -DTESSERA_BUILD_GLS=ON -DTESSERA_BUILD_ICEBREAKER_GLS=ON > build-configure.log 2>&1 || (cat build-configure.log; exit 1)
	@rm -f build-configure.log
	@cmake --build --preset default
	@ctest --preset default -L gls

# Whether a config fits an iCE40 part with Yosys synth_ice40 (docs/fpga.md): make ice40-fit
# [CONFIG=default | CONFIG_JSON=path/to/config.json] [PART=up5k|up3k|hx8k]. Fails if it does not fit.
PART ?= up5k
ice40-fit: configure
	@cmake --build --preset default --target tessera-gen tessera_generated_headers > /dev/null
	@if [ -n "$(CONFIG_JSON)" ]; then \
	  name=$$(basename "$(CONFIG_JSON)" .json); gen=build/ice40-fit/gen/$$name; mkdir -p $$gen; \
	  build/hw/tessera-gen --config "$(CONFIG_JSON)" --sv $$gen/tessera_config.svh || exit 2; \
	else name=$(CONFIG); gen=build/generated/$(CONFIG); fi; \
	python3 scripts/fpga/ice40_fit.py --gen $$gen --rtl rtl --part $(PART) --work build/ice40-fit/$$name-$(PART) \
	  --json build/ice40-fit/$$name-$(PART)/fit.json

# The README's two commands on a bare Debian 12 (debootstrap chroot; root, ~20+ minutes):
# scripts/fresh-check.sh, also `ctest -L fresh` (not part of `make test`).
fresh-check:
	@bash scripts/fresh-check.sh

clean:
	@rm -rf build build-debug build-fuzz
