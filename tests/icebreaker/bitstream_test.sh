#!/usr/bin/env bash
# Builds the iCEBreaker bitstream and checks its outputs: the .bin, the utilisation report and an Fmax of at least 12 MHz.
# Usage: bitstream_test.sh SOURCE_DIR GENERATED_CONFIG_DIR OUT_DIR
set -u
src=$1
gen=$2
out=$3
bash "$src/scripts/fpga/icebreaker_bitstream.sh" "$src" "$gen" "$out" || { echo "FAIL: the bitstream build failed"; exit 1; }
[[ -s $out/tessera_icebreaker.bin ]] || { echo "FAIL: no $out/tessera_icebreaker.bin"; exit 1; }
grep -qE "ICESTORM_LC: +[0-9]+/ *5280" "$out/report.txt" || { echo "FAIL: no logic-cell utilisation in $out/report.txt"; exit 1; }
fmax=$(sed -nE 's/^Fmax: ([0-9.]+) MHz.*/\1/p' "$out/report.txt")
[[ -n $fmax ]] && awk -v f="$fmax" 'BEGIN { exit !(f >= 12) }' || { echo "FAIL: Fmax '$fmax' MHz, below 12 MHz"; exit 1; }
echo "icebreaker bitstream: $(wc -c < "$out/tessera_icebreaker.bin") bytes, Fmax $fmax MHz"
