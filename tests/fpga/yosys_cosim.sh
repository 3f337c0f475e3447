#!/usr/bin/env bash
# Yosys' reading of the RTL against Verilator's: a tsim run's waveform replayed into Yosys' own simulation of the elaborated RTL, every signal compared.
#
# usage: yosys_cosim.sh TESSERA YOSYS CONFIG GEN_DIR RTL_DIR WORK_DIR
# Runs `tessera demo` (a blocked 16x16x16 GEMM with its requantization on the vector ALU: on `small`
# four double-buffered tiles, 1,430 cycles, every module busy; Yosys' simulator pays per cycle) on tsim for CONFIG,
# recording an FST waveform, then has Yosys read rtl/*.sv, elaborate (proc, flatten) and simulate
# it with the waveform's inputs (`sim -r ... -sim-cmp`): any signal whose value differs from
# Verilator's at any cycle fails the test and is named. This is what synthesis starts from, so a
# construct Yosys reads differently (it once dropped the ~ of ~33'(x)) shows here in seconds, before
# any netlist is simulated.
set -euo pipefail
tessera=$1 yosys=$2 config=$3 gen=$4 rtl=$5 work=$6
mkdir -p "$work"
fst="$work/demo.fst"
rm -f "$fst"
TESSERA_TARGET_OPTIONS="trace=$fst" "$tessera" demo --target tsim --config "$config" --m 16 --n 16 --k 16 > "$work/demo.log" 2>&1 ||
  { cat "$work/demo.log"; echo "yosys_cosim: the tsim run failed"; exit 1; }
sources=$(ls "$rtl"/*.sv | tr '\n' ' ')
status=0
"$yosys" -q -l "$work/yosys.log" -p "read_verilog -sv -I$gen -I$rtl $sources; hierarchy -check -top tessera_top; \
  proc; flatten; opt_clean; sim -r $fst -scope TOP.tessera_top -clock clk_i -zinit -sim-cmp -q" > /dev/null 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  grep -E "^Warning: Signal|ERROR" "$work/yosys.log" | head -20
  echo "yosys_cosim: Yosys' simulation of the RTL differs from tsim's for config $config (log: $work/yosys.log)"
  exit 1
fi
echo "yosys_cosim: Yosys' elaboration of the RTL matches tsim signal for signal on every cycle ($config)"
