# Tessera's entry points: `make demo` (the main job) and `make test` (the whole test suite).
# Both install missing Debian packages, configure and build as needed.
.PHONY: all deps configure build demo test test-release test-sanitize test-fuzz fuzz bench fresh-check clean

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

# The whole suite: the release build's, the same suites under the sanitizers, and a short fuzzing
# run of every harness.
test: test-release test-sanitize test-fuzz

test-release: build
	@ctest --preset default

# Unit, runtime, regression, compiler, network, ONNX, CLI and fuzz-corpus tests again in the debug
# preset (build-debug/: -O1 -fsanitize=address,undefined, UBSan fatal), so a sanitizer finding fails
# the test. The preset leaves out five labels: fresh (a debootstrapped Debian, as in the release
# run), slow (the ResNet-18 model files, already the release run's longest tests), sanitizer-heavy
# (the tsim run under extreme memory timings, past its 600 s timeout instrumented, and the ResNet-18
# layer suite on every simulator but fsim), fpga (Tcl flow checks on stubbed vendor tools) and synth
# (Yosys on the RTL); the last two run no C++ of ours, so they would only repeat the release run.
# -O1 rather than -O0: at -O0 the instrumented RTL models ran ~30x slower than release.
test-sanitize: deps
	@cmake --preset debug > build-debug-configure.log 2>&1 || (cat build-debug-configure.log; exit 1)
	@rm -f build-debug-configure.log
	@cmake --build --preset debug
	@ctest --preset debug

# The libFuzzer harnesses (preset fuzz, build-fuzz/, clang-14) built, then each fuzzed for
# TESSERA_FUZZ_CTEST_SECONDS (10) from its seed corpus by ctest (label fuzz).
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
	@./build/sw/tessera bench gemm --target tsim

# FPGA bitstreams (needs AMD Vivado, and Vitis HLS for FLOW=hls; see scripts/README.md):
# make bitstream-<board> [FLOW=rtl|hls] [CONFIG=default] [JOBS=2]
# Boards are those of scripts/fpga/boards.tcl: pynq-z1, ultra96v2, zcu104.
FLOW ?= rtl
CONFIG ?= default
bitstream-%:
	@FLOW=$(FLOW) CONFIG=$(CONFIG) HLS_SOURCES="$(HLS_SOURCES)" JOBS=$(JOBS) \
	  bash scripts/fpga/build.sh $*

# The README's two commands on a bare Debian 12 (debootstrap chroot; root, ~20+ minutes):
# scripts/fresh-check.sh, also `ctest -L fresh` (not part of `make test`).
fresh-check:
	@bash scripts/fresh-check.sh

clean:
	@rm -rf build build-debug build-fuzz
