#!/usr/bin/env bash
# Builds the iCEBreaker bitstream (pico core board top) with Yosys, nextpnr-ice40 and icepack, and prints its utilisation and Fmax.
# Usage: icebreaker_bitstream.sh SOURCE_DIR GENERATED_CONFIG_DIR OUT_DIR
#   GENERATED_CONFIG_DIR holds the board config's tessera_config.svh (build/generated/pico).
# Exits non-zero if synthesis, placement, routing or the 12 MHz timing fails (docs/fpga.md).
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 SOURCE_DIR GENERATED_CONFIG_DIR OUT_DIR" >&2
  exit 2
fi
src=$1
gen=$2
out=$3
clock_mhz=12
pcf="$src/scripts/fpga/icebreaker.pcf"

for tool in yosys nextpnr-ice40 icepack; do
  command -v "$tool" > /dev/null || { echo "$tool not on PATH: scripts/install-deps.sh installs it" >&2; exit 1; }
done
[[ -f "$gen/tessera_config.svh" ]] || { echo "$gen/tessera_config.svh: no generated config header (build target tessera_generated_headers)" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out/tessera_icebreaker.json" "$out/tessera_icebreaker.asc" "$out/tessera_icebreaker.bin"

shopt -s nullglob
sources=("$src"/rtl/pico/*.sv "$src"/rtl/board/*.sv)
# No -dsp: Yosys 0.23 mis-maps packed multiplies onto SB_MAC16 (docs/fpga.md). -abc9 maps the
# design to about 10% fewer LUT4s than the default ABC script. TESSERA_ICE40_SPRAM swaps the board
# memory's model for the UP5K's SB_SPRAM256KA.
echo "yosys: synth_ice40 (log $out/yosys.log)"
nice -n 15 yosys -q -l "$out/yosys.log" -p "read_verilog -sv -DTESSERA_ICE40_SPRAM -I$gen ${sources[*]};
  synth_ice40 -abc9 -top tessera_icebreaker_top -json $out/tessera_icebreaker.json;
  tee -o $out/yosys_stat.txt stat" > /dev/null

echo "nextpnr-ice40: place and route for the UP5K (sg48) at $clock_mhz MHz (log $out/nextpnr.log)"
# Without --timing-allow-fail, nextpnr fails when the clock constraint is not met.
nice -n 15 nextpnr-ice40 --up5k --package sg48 --json "$out/tessera_icebreaker.json" --pcf "$pcf" \
  --freq "$clock_mhz" --seed 1 --asc "$out/tessera_icebreaker.asc" --log "$out/nextpnr.log" > /dev/null 2>&1 || {
  echo "nextpnr-ice40 failed; the end of $out/nextpnr.log:" >&2
  tail -20 "$out/nextpnr.log" >&2
  exit 1
}

icepack "$out/tessera_icebreaker.asc" "$out/tessera_icebreaker.bin"

# The achieved Fmax is the last report of the clock (after routing).
fmax=$(grep -E "Max frequency for clock" "$out/nextpnr.log" | tail -1 | sed -E 's/.*: ([0-9.]+) MHz.*/\1/')
[[ -n $fmax ]] || { echo "no Fmax in $out/nextpnr.log" >&2; exit 1; }
cell() { awk -v c="$1" '$1 == c { n += $2 } END { print n + 0 }' "$out/yosys_stat.txt"; }
ffs=$(awk '$1 ~ /^SB_DFF/ { n += $2 } END { print n + 0 }' "$out/yosys_stat.txt")
util() { grep -E "^Info:[[:space:]]+$1:" "$out/nextpnr.log" | tail -1 | sed -E 's/^Info:[[:space:]]+//'; }
{
  echo "iCEBreaker bitstream: $out/tessera_icebreaker.bin"
  echo "Yosys synth_ice40: $(cell SB_LUT4) SB_LUT4, $ffs flip-flops, $(cell SB_CARRY) SB_CARRY, $(cell SB_RAM40_4K) SB_RAM40_4K (EBR), $(cell SB_SPRAM256KA) SB_SPRAM256KA, $(cell SB_MAC16) SB_MAC16"
  echo "nextpnr-ice40 (UP5K):"
  for c in ICESTORM_LC ICESTORM_RAM ICESTORM_SPRAM ICESTORM_DSP SB_IO SB_GB; do echo "  $(util $c)"; done
  echo "Fmax: $fmax MHz (constraint $clock_mhz MHz)"
} | tee "$out/report.txt"

awk -v f="$fmax" -v c="$clock_mhz" 'BEGIN { exit !(f >= c) }' || { echo "Fmax $fmax MHz is below $clock_mhz MHz" >&2; exit 1; }
