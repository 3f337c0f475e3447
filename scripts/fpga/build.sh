#!/usr/bin/env bash
# Runs one board's bitstream flow (make bitstream-<board>): checks the Xilinx tools, generates the config's headers, runs the Tcl flows.
# Usage: scripts/fpga/build.sh <board>   (environment: FLOW=hls|rtl CONFIG=<name>|<file.json>
#        HLS_SOURCES="hls/design/*.cpp" JOBS=<n> BUILD_DIR=build OUT_DIR=build/fpga/<board>-<flow>-<config>)
# FLOW=hls synthesizes the design's four stage functions (fetch, load, compute, store) as four IPs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
board="${1:?usage: build.sh <board>}"
flow="${FLOW:-rtl}"
config="${CONFIG:-default}"
jobs="${JOBS:-2}"
build_dir="${BUILD_DIR:-$root/build}"
out_dir="${OUT_DIR:-$build_dir/fpga/$board-$flow-$config}"

case "$flow" in
  rtl) tools=(vivado) ;;
  hls) tools=(vitis_hls vivado) ;;
  *) echo "tessera: FLOW must be hls or rtl, not '$flow'" >&2; exit 2 ;;
esac
missing=()
for t in "${tools[@]}"; do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "tessera: bitstream-$board (FLOW=$flow) cannot run: not on PATH: ${missing[*]}" >&2
  echo "tessera: install AMD Vivado (and Vitis HLS for FLOW=hls) 2022.2 and source its settings64.sh first." >&2
  exit 127
fi
if command -v tclsh >/dev/null 2>&1; then
  echo "source $here/common.tcl; ::tessera::board $board" | tclsh >/dev/null
fi
if [ "$flow" = hls ]; then
  if [ -n "${HLS_TOP:-}" ]; then
    echo "tessera: HLS_TOP is no longer used: FLOW=hls synthesizes fetch, load, compute and store as four IPs" >&2
    exit 2
  fi
  sources="${HLS_SOURCES:-$(ls "$root"/hls/design/*.cpp 2>/dev/null | tr '\n' ' ')}"
  [ -n "$sources" ] || { echo "tessera: no HLS sources (hls/design/*.cpp or HLS_SOURCES)" >&2; exit 2; }
fi

# The flows read build/generated/<config>/, which the normal build writes; a config given as a JSON
# file (tessera explore's chosen.json) gets its headers generated into the output directory.
make -C "$root" --no-print-directory configure
if [[ "$config" == *.json ]]; then
  [ -f "$config" ] || { echo "tessera: CONFIG=$config: no such file" >&2; exit 2; }
  config_file="$(cd "$(dirname "$config")" && pwd)/$(basename "$config")"
  config="$(basename "$config" .json)"
  out_dir="${OUT_DIR:-$build_dir/fpga/$board-$flow-$config}"
  cmake --build "$build_dir" --target tessera-gen
  gen_dir="$out_dir/generated"
  mkdir -p "$gen_dir"
  "$build_dir/hw/tessera-gen" --config "$config_file" --cpp "$gen_dir/tessera_config.h" --hls "$gen_dir/hls_config.h" \
    --sv "$gen_dir/tessera_config.svh" --tcl "$gen_dir/tessera_config.tcl"
else
  cmake --build "$build_dir" --target tessera_generated_headers
  gen_dir="$build_dir/generated/$config"
fi
[ -f "$gen_dir/tessera_config.tcl" ] || { echo "tessera: no config '$config' (hw/configs/$config.json)" >&2; exit 2; }

mkdir -p "$out_dir"
cd "$out_dir"
if [ "$flow" = hls ]; then
  vitis_hls -f "$here/hls.tcl" -tclargs board="$board" gen_dir="$gen_dir" \
    sources="$sources" out_dir="$out_dir"
  # One exported IP per stage: <out_dir>/hls_<stage>/<board>/impl/ip.
  ip_repo="$(ls -d "$out_dir"/hls_*/"$board"/impl/ip | tr '\n' ' ')"
else
  vivado -mode batch -nojournal -source "$here/package_rtl.tcl" -tclargs board="$board" \
    gen_dir="$gen_dir" rtl_dir="$root/rtl" out_dir="$out_dir"
  ip_repo="$out_dir/ip"
fi
vivado -mode batch -nojournal -source "$here/bitstream.tcl" -tclargs board="$board" flow="$flow" \
  gen_dir="$gen_dir" ip_repo="$ip_repo" out_dir="$out_dir" jobs="$jobs"
