#!/usr/bin/env bash
# Proves a surviving mutant of tsim-mut equivalent with Yosys: its module (or a module holding it, flattened) against the same with the mutation planted.
#
#   equiv.sh BUILD_DIR MUTANT [SCOPE...]
#
# MUTANT is a number of BUILD_DIR's mutants.tsv (config default); its `mutate` command is taken
# from the netlist build's plant.ys. Each SCOPE is a module name (tessera_load: the module of that
# name, whatever its parameters; with several parameterizations, each must hold) in which the
# mutated module is flattened; without SCOPE the mutated module alone is checked, its inputs free.
# In each scope, the unmutated and the mutated design are matched on their ports and their
# registers (signals named *_q, the RTL's convention), and Yosys's equiv_simple and equiv_induct
# must prove every match: then no run from reset can tell the two apart at the scope's ports. A
# mutation can thus change wires inside one cycle, never a register or an output. Memories are
# kept whole: a mutation that changes what a memory stores cannot be proved here.
# Prints one line per scope and exits 0 only if every scope is proved.
set -euo pipefail
build=$(realpath "${1:?usage: equiv.sh BUILD_DIR MUTANT [SCOPE...]}")
k=${2:?usage: equiv.sh BUILD_DIR MUTANT [SCOPE...]}
shift 2
work_dir="$build/tsim/mutation/default/work"
design="$work_dir/design.il"
[ -f "$design" ] && [ -f "$work_dir/plant.ys" ] || { echo "equiv.sh: $work_dir has no design.il and plant.ys: tsim-mut is not built for config default" >&2; exit 2; }
case "$k" in '' | *[!0-9]*) echo "equiv.sh: mutant '$k' is not a number" >&2; exit 2 ;; esac
line=$(grep -E "^mutate -ctrl mutsel [0-9]+ $k " "$work_dir/plant.ys" || true)
[ -n "$line" ] || { echo "equiv.sh: no mutant $k in $work_dir/plant.ys" >&2; exit 2; }
# The mutation itself, applied unconditionally (no -ctrl), without its source locations.
mutation=$(sed -E 's/^mutate -ctrl mutsel [0-9]+ [0-9]+ //; s/ -src .*//' <<<"$line")
module=$(sed -E 's/.*-module ([^ ]+) .*/\1/' <<<"$mutation")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# scopes: the Yosys module names to check in.
scopes=()
if [ $# -eq 0 ]; then
  scopes=("$module")
else
  for s in "$@"; do
    found=$(grep -E "^module (\\\\$s|\\\$paramod.*\\\\$s(\\\\.*)?)$" "$design" | cut -d' ' -f2 || true)
    [ -n "$found" ] || { echo "equiv.sh: no module $s in $design" >&2; exit 2; }
    while read -r m; do scopes+=("$m"); done <<<"$found"
  done
fi

rc=0
for scope in "${scopes[@]}"; do
  # One side, flattened in the scope: read the netlist, optionally mutate, keep the scope's logic.
  side() {
    echo "design -reset"
    echo "read_rtlil $design"
    [ "$2" = gate ] && echo "mutate $mutation"
    echo "hierarchy -top $scope"
    echo "proc; flatten; memory -nomap; opt_clean"
    echo "rename $scope $2"
    echo "rename -hide w:* x:* %d w:*_q %d"
    echo "design -stash $2"
  }
  {
    side "$scope" gold
    side "$scope" gate
    echo "design -reset"
    echo "design -copy-from gold -as gold gold"
    echo "design -copy-from gate -as gate gate"
    echo "equiv_make gold gate equiv"
    echo "hierarchy -top equiv"
    echo "equiv_simple -seq 5"
    echo "equiv_induct -seq 5"
    echo "equiv_status -assert"
  } > "$tmp/check.ys"
  status=0
  timeout 600 yosys -q "$tmp/check.ys" > "$tmp/log" 2>&1 || status=$?
  if [ "$status" -eq 0 ]; then
    echo "mutant $k: equivalent in $scope"
  elif [ "$status" -eq 124 ]; then
    rc=1
    echo "mutant $k: not proved in $scope: no answer within 600 s"
  else
    rc=1
    echo "mutant $k: not proved in $scope: $(grep -m1 -E 'ERROR|unproven' "$tmp/log" || tail -1 "$tmp/log")"
  fi
done
exit "$rc"
