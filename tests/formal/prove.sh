#!/usr/bin/env bash
# Runs the RTL's formal proofs (proofs.tsv) and their planted bugs (mutants.tsv) with Yosys and yosys-smtbmc.
#
#   prove.sh --proof NAME  [--build DIR]   BMC from reset, then k-induction, to the proof's depth
#   prove.sh --mutant NAME [--build DIR]   the planted bug must fail its proof on the named assertion
#   prove.sh --all         [--build DIR]   every proof and mutant, then a report table
#
# The properties live in the modules under `ifdef FORMAL` (docs/verification.md). DIR is the build
# tree (default build/): the RTL's included headers come from DIR/generated/default, and the work
# files go to DIR/formal/. The solver is z3 unless TESSERA_FORMAL_SOLVER names another smtbmc knows.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$root/build"
mode=""
name=""
while [ $# -gt 0 ]; do
  case "$1" in
    --proof|--mutant) mode="${1#--}"; name="${2:?$1 needs a name}"; shift 2 ;;
    --all) mode="all"; shift ;;
    --build) build="$(cd "${2:?--build needs a directory}" && pwd)"; shift 2 ;;
    *) echo "prove.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ -n "$mode" ] || { echo "prove.sh: say --proof NAME, --mutant NAME or --all" >&2; exit 2; }

solver="${TESSERA_FORMAL_SOLVER:-z3}"
for tool in yosys yosys-smtbmc "$solver"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "prove.sh: $tool not found: run scripts/install-deps.sh" >&2
    exit 77
  fi
done
include="$build/generated/default"
[ -f "$include/tessera_config.svh" ] || { echo "prove.sh: $include/tessera_config.svh missing: build the tree first" >&2; exit 2; }

# The row of a table whose first column is $2 (comments and blank lines skipped).
row() {
  awk -F'\t' -v n="$2" '!/^#/ && NF && $1 == n { print; found = 1 } END { exit !found }' "$1"
}

# Yosys reads the RTL (FORMAL and SYNTHESIS defined: the simulation-only SVA stays out), sets the
# parameters and writes the SMT-LIB model smtbmc checks. $1 top, $2 params, $3 RTL dir, $4 files, $5 out.
model() {
  local top="$1" params="$2" dir="$3" files="$4" out="$5" chparam="" f srcs=""
  if [ "$params" != "-" ]; then
    for p in $params; do chparam="$chparam -set ${p%%=*} ${p#*=}"; done
    chparam="chparam$chparam $top;"
  fi
  for f in $files; do srcs="$srcs $dir/$f"; done
  yosys -q -l "$out.yosys.log" -p "read_verilog -sv -formal -DFORMAL -DSYNTHESIS -I$include $srcs; $chparam
      prep -top $top; async2sync; dffunmap; write_smt2 -wires $out" >/dev/null
  if ! grep -q '^; yosys-smt2-assert ' "$out"; then
    echo "no assertion reached the model of $top: is its FORMAL block there?" >&2
    return 1
  fi
}

# One proof: prints a result line; fails when BMC finds a counterexample or an expected induction
# does not close.
proof() {
  local line top params files depth expect work
  line="$(row "$here/proofs.tsv" "$1")" || { echo "prove.sh: no proof '$1' in proofs.tsv" >&2; return 2; }
  IFS=$'\t' read -r _ top params files depth expect <<<"$line"
  work="$build/formal/$1"
  mkdir -p "$work"
  model "$top" "$params" "$root/rtl" "$files" "$work/model.smt2"
  local asserts
  asserts="$(grep -c '^; yosys-smt2-assert ' "$work/model.smt2")"
  if ! yosys-smtbmc -s "$solver" -t "$depth" "$work/model.smt2" >"$work/bmc.log" 2>&1; then
    echo "$1: FAILED: a counterexample from reset within $depth cycles ($top, $params):" >&2
    grep -E 'Assert failed|Status' "$work/bmc.log" >&2 || tail -5 "$work/bmc.log" >&2
    return 1
  fi
  if yosys-smtbmc -s "$solver" -i -t "$depth" "$work/model.smt2" >"$work/induction.log" 2>&1; then
    local last
    last="$(grep -oE 'Trying induction in step [0-9]+' "$work/induction.log" | tail -1 | grep -oE '[0-9]+$')"
    local how="k-induction, k = $((depth - last))"
    [ "$depth" -ne "$last" ] || how="every state and input, no induction needed"
    echo "$1: proved ($how; $asserts assertions; $top $params)"
  elif [ "$expect" = "proved" ]; then
    echo "$1: FAILED: induction at depth $depth did not close ($top, $params):" >&2
    grep -E 'Assert failed|Status' "$work/induction.log" >&2 || tail -5 "$work/induction.log" >&2
    return 1
  else
    echo "$1: no counterexample within $depth cycles of reset (bounded; $asserts assertions; $top $params)"
  fi
}

# One planted bug: the replaced text must be there exactly once, and BMC (going on past the first
# failure) must fail the expected assertion; a model that failed to build, or failures of other
# assertions only, do not count.
mutant() {
  local line proof file search replace expect pline top params files depth work
  line="$(row "$here/mutants.tsv" "$1")" || { echo "prove.sh: no mutant '$1' in mutants.tsv" >&2; return 2; }
  IFS=$'\t' read -r _ proof file search replace expect <<<"$line"
  pline="$(row "$here/proofs.tsv" "$proof")" || { echo "prove.sh: mutant $1 names no proof '$proof'" >&2; return 2; }
  IFS=$'\t' read -r _ top params files depth _ <<<"$pline"
  work="$build/formal/mutant_$1"
  rm -rf "$work" && mkdir -p "$work/rtl"
  for f in $files; do cp "$root/rtl/$f" "$work/rtl/"; done
  python3 - "$work/rtl/$file" "$search" "$replace" "$1" <<'EOF' || return 1
import sys
path, search, replace, name = sys.argv[1:]
search, replace = (s.replace("\\n", "\n") for s in (search, replace))
text = open(path).read()
count = text.count(search)
if count != 1:
    sys.exit(f"prove.sh: mutant {name}: the text to replace occurs {count} times in {path.split('/')[-1]} (must be once): update mutants.tsv")
open(path, "w").write(text.replace(search, replace))
EOF
  model "$top" "$params" "$work/rtl" "$files" "$work/model.smt2" || { echo "$1: FAILED: the mutant did not build" >&2; return 1; }
  if yosys-smtbmc -s "$solver" --keep-going -t "$depth" "$work/model.smt2" >"$work/bmc.log" 2>&1; then
    echo "$1: FAILED: the planted bug survived $depth cycles of BMC (expected $expect to fail)" >&2
    return 1
  fi
  if ! grep -Eq "Assert failed in [^:]*: $expect\$" "$work/bmc.log"; then
    echo "$1: FAILED: BMC failed, but not on $expect:" >&2
    grep -E 'Assert failed|ERROR|Status' "$work/bmc.log" >&2 || tail -5 "$work/bmc.log" >&2
    return 1
  fi
  local failed
  failed="$(grep -oE 'Assert failed in [^:]*: [A-Za-z_0-9]+' "$work/bmc.log" | sed 's/.*: //' | sort -u | paste -sd, -)"
  echo "$1: caught by $expect ($file, proof $proof; failing: $failed)"
}

names() { awk -F'\t' '!/^#/ && NF { print $1 }' "$1"; }

case "$mode" in
  proof) proof "$name" ;;
  mutant) mutant "$name" ;;
  all)
    failed=0
    echo "== proofs (solver $solver)"
    for n in $(names "$here/proofs.tsv"); do proof "$n" || failed=$((failed + 1)); done
    echo "== planted bugs"
    for n in $(names "$here/mutants.tsv"); do mutant "$n" || failed=$((failed + 1)); done
    echo "== $(names "$here/proofs.tsv" | wc -l) proofs, $(names "$here/mutants.tsv" | wc -l) planted bugs, $failed failed"
    [ "$failed" -eq 0 ]
    ;;
esac
