# Tessera's entry points: `make demo` (the main job) and `make test` (the whole test suite).
# Both install missing Debian packages, configure and build as needed.
.PHONY: all deps configure build demo test bench fresh-check clean fpga-report

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

test: build
	@ctest --preset default

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

# Resource and logic-depth report of the RTL for a Xilinx family with Yosys (no Vivado; docs/fpga.md):
# make fpga-report [CONFIG=default] [FAMILY=xc7|xcup]; table on stdout, JSON and netlists in
# build/fpga-report/<config>-<family>/. Fails on a latch, an SRAM not in block RAM or a part overflow.
FAMILY ?= xc7
fpga-report: configure
	@cmake --build --preset default --target tessera_generated_headers > /dev/null
	@python3 scripts/fpga/yosys_report.py --gen build/generated/$(CONFIG) --rtl rtl \
	  --boards scripts/fpga/boards.tcl --family $(FAMILY) --work build/fpga-report/$(CONFIG)-$(FAMILY) \
	  --json build/fpga-report/$(CONFIG)-$(FAMILY)/report.json --check

# The README's two commands on a bare Debian 12 (debootstrap chroot; root, ~20+ minutes):
# scripts/fresh-check.sh, also `ctest -L fresh` (not part of `make test`).
fresh-check:
	@bash scripts/fresh-check.sh

clean:
	@rm -rf build
