#!/usr/bin/env bash
# Whole-process time of `tessera sim` against another simulator on the same generated streams.
#
# usage: scripts/bench/streams-side-by-side.sh [--runs N] [--build DIR] ANCHOR [SHAPE...]
#   ANCHOR  a program that replays a `tessera stream` export given its directory (e.g. a harness
#           around VTA's own behavioral simulator that you built yourself; none ships here)
#   SHAPE   shapes of `tessera stream --list` (default: all of them)
# For each shape: generates the export once, then alternates the manifest's `tessera sim` line and
# `ANCHOR DIR` (tessera_bench_side_by_side), printing median wall and CPU time (user + system,
# exec and exit included) and the ratio ANCHOR / tessera.
set -euo pipefail
runs=21
build=build
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "streams-side-by-side: error: no ANCHOR program given (see --help)" >&2; exit 2; }
anchor=$(command -v "$1" || true)
[ -n "$anchor" ] && [ -x "$anchor" ] || { echo "streams-side-by-side: error: ANCHOR '$1' is not an executable" >&2; exit 2; }
shift
tessera=$(cd "$build" && pwd)/sw/tessera
timer=$(cd "$build" && pwd)/tests/bench/tessera_bench_side_by_side
for f in "$tessera" "$timer"; do
  [ -x "$f" ] || { echo "streams-side-by-side: error: $f is not built (cmake --build $build)" >&2; exit 2; }
done
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || mapfile -t shapes < <("$tessera" stream --list | awk 'NF {print $1}')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-12s %12s %12s %12s %12s %8s %8s\n' shape tessera-wall tessera-cpu anchor-wall anchor-cpu wall-x cpu-x
for shape in "${shapes[@]}"; do
  dir=$work/$shape
  "$tessera" stream "$shape" -o "$dir" >/dev/null
  read -r -a cmd < <(sed -n 's/^command tessera //p' "$dir/manifest.txt")
  [ ${#cmd[@]} -gt 0 ] || { echo "streams-side-by-side: error: $dir/manifest.txt has no command line" >&2; exit 1; }
  "$timer" --runs "$runs" --dir "$dir" --json -- "$tessera" "${cmd[@]}" -- "$anchor" . |
    sed 's/[{},:"]/ /g' | awk -v s="$shape" '{
      printf "%-12s %9.2f ms %9.2f ms %9.2f ms %9.2f ms %7.2fx %7.2fx\n", s, $5, $7, $10, $12, $10 / $5, $12 / $7 }'
done
echo "medians of $runs alternated runs each; CPU = user + system from wait4 (exec and exit included)"
