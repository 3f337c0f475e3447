#!/usr/bin/env bash
# Whole-process time of `tessera sim` against another simulator on another toolchain's programs.
#
# usage: scripts/bench/programs-side-by-side.sh [--runs N] [--build DIR] [--tessera EXE]
#                                                [--kernels SET,...] ANCHOR DIR...
#   ANCHOR   a program that runs one program directory given its path and exits 0 only if its
#            output equals the directory's expected_out.bin (e.g. a harness around VTA's own
#            behavioral simulator that you built yourself; none ships here)
#   DIR      a program as standalone-vta's compiler writes it: memory_addresses.csv (TYPE,PHYS,
#            LOGICAL rows), instructions.bin, uop.bin, input.bin, weight.bin, accumulator.bin,
#            add_accumulator.bin and the reference expected_out.bin
#   --kernels  fsim kernel sets to time, each a row (default: auto); a set this CPU lacks is skipped
#   --tessera  the tessera executable to time (default: DIR/sw/tessera of --build)
# Each program is loaded at the addresses its compiler chose and run once per kernel set; its
# output must equal expected_out.bin before anything is timed. Then `tessera sim` and `ANCHOR DIR`
# are alternated (tessera_bench_side_by_side), printing median wall and CPU time (user + system,
# exec and exit included) and the ratio ANCHOR / tessera.
set -euo pipefail
runs=21
build=build
tessera=
kernels=auto
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --tessera) tessera=$2; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
die() { echo "programs-side-by-side: error: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "need ANCHOR and at least one program DIR (see --help)"
anchor=$(command -v "$1" || true)
[ -n "$anchor" ] && [ -x "$anchor" ] || die "ANCHOR '$1' is not an executable"
shift
[ -n "$tessera" ] || tessera=$build/sw/tessera
tessera=$(cd "$(dirname "$tessera")" && pwd)/$(basename "$tessera")
timer=$(cd "$build" && pwd)/tests/bench/tessera_bench_side_by_side
for f in "$tessera" "$timer"; do
  [ -x "$f" ] || die "$f is not built (cmake --build $build)"
done
IFS=, read -r -a sets <<<"$kernels"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The `tessera sim` arguments for program directory $1, its output written to $2.
sim_args() {
  local dir=$1 out=$2 type phys file insn= outPhys=
  args=(sim --config default)
  while IFS=, read -r type phys _; do
    case "$type" in
      INP) file=input.bin ;;
      WGT) file=weight.bin ;;
      ACC) file=accumulator.bin ;;
      ACC_BIS) file=add_accumulator.bin ;;
      UOP) file=uop.bin ;;
      INSN) file=instructions.bin; insn=$phys ;;
      OUT) outPhys=$phys; continue ;;
      *) die "$dir/memory_addresses.csv: unknown memory type '$type'" ;;
    esac
    [ -f "$dir/$file" ] || die "$dir/$file is missing (memory_addresses.csv lists $type)"
    [ -s "$dir/$file" ] && args+=(--load "$dir/$file@$phys")
  done <"$dir/memory_addresses.csv"
  [ -n "$insn" ] && [ -n "$outPhys" ] || die "$dir/memory_addresses.csv lacks an INSN or OUT row"
  count=$(($(stat -c %s "$dir/instructions.bin") / 16))
  args+=(--insn "$insn:$count" --dump "$outPhys:$(stat -c %s "$dir/expected_out.bin"):$out" --force)
}

printf '%-22s %7s %-12s %12s %12s %12s %12s %8s %8s\n' program insns kernels tessera-wall tessera-cpu \
  anchor-wall anchor-cpu wall-x cpu-x
for dir in "$@"; do
  dir=$(cd "$dir" && pwd)
  name=$(basename "$dir")
  [ -f "$dir/memory_addresses.csv" ] || die "$dir has no memory_addresses.csv"
  "$anchor" "$dir" >/dev/null || die "the anchor fails on $dir"
  for set in "${sets[@]}"; do
    sim_args "$dir" "$work/out.bin"
    args+=(--target-option "kernels=$set")
    if ! "$tessera" "${args[@]}" >"$work/log" 2>&1; then
      if grep -q "this CPU lacks" "$work/log"; then
        printf '%-22s %7s %-12s skipped: %s\n' "$name" "" "$set" "$(tail -1 "$work/log")"
        continue
      fi
      cat "$work/log" >&2
      die "tessera fails on $dir"
    fi
    cmp -s "$work/out.bin" "$dir/expected_out.bin" || die "tessera's output for $dir differs from expected_out.bin"
    "$timer" --runs "$runs" --dir "$work" --json -- "$tessera" "${args[@]}" -- "$anchor" "$dir" |
      sed 's/[{},:"]/ /g' | awk -v p="$name" -v n="$count" -v k="$set" '{
        printf "%-22s %7d %-12s %9.2f ms %9.2f ms %9.2f ms %9.2f ms %7.2fx %7.2fx\n", p, n, k, $5, $7, $10, $12, $10 / $5, $12 / $7 }'
  done
done
echo "medians of $runs alternated runs each; CPU = user + system from wait4 (exec and exit included)"
