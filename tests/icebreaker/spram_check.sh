#!/usr/bin/env bash
# Checks the board memory's RAM as the bitstream builds it (SB_SPRAM256KA, Yosys' simulation model) and as icebreaker-sim models it, with one random read/write test.
# Usage: spram_check.sh SOURCE_DIR WORK_DIR YOSYS_ICE40_CELLS_SIM_V
set -u
src=$(cd "$1" && pwd)
mkdir -p "$2"; work=$(cd "$2" && pwd)
cells=$3
[[ -f $cells ]] || { echo "FAIL: no Yosys iCE40 cell models at $cells"; exit 1; }
mkdir -p "$work"
# Only SB_SPRAM256KA: Verilator does not parse the rest of the cell library.
awk '/^module SB_SPRAM256KA/,/^endmodule/' "$cells" > "$work/sb_spram256ka.v"
grep -q "^endmodule" "$work/sb_spram256ka.v" || { echo "FAIL: no SB_SPRAM256KA in $cells"; exit 1; }
fails=0
for variant in spram model; do
  defs=()
  extra=()
  if [[ $variant == spram ]]; then defs=(-DTESSERA_ICE40_SPRAM); extra=("$work/sb_spram256ka.v"); fi
  if ! nice -n 15 verilator --cc --exe --build -j 1 -O1 -Wno-fatal "${defs[@]}" --top-module tessera_board_spram \
      --Mdir "$work/$variant" -o spram_check "$src/rtl/board/tessera_board_spram.sv" "${extra[@]}" \
      "$src/tests/icebreaker/spram_check.cpp" > "$work/$variant.log" 2>&1; then
    echo "FAIL: building the $variant variant (log $work/$variant.log):"; tail -20 "$work/$variant.log"; exit 1
  fi
  out=$("$work/$variant/spram_check")
  rc=$?
  echo "$variant: $out"
  [[ $rc -eq 0 ]] || fails=$((fails + 1))
done
[[ $fails -eq 0 ]] || { echo "FAIL: $fails variant(s) disagree with the reference memory"; exit 1; }
