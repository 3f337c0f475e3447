#!/usr/bin/env bash
# Plants tsim-mut's mutations: Yosys' mutate pass samples single-bit mutations per RTL module and
# writes one netlist carrying them all, each active only when the top's `mutsel` input selects it.
#
#   plant.sh --yosys YOSYS --include DIR --sample sample.tsv --seed N --out DIR RTL.sv...
#
# Writes DIR/mutants.v (tessera_top with a 16-bit input mutsel; 0 selects no mutation),
# DIR/mutant_count.h (their number, for the harness) and DIR/mutants.tsv (one line per mutation:
# its number, module, Yosys mode, cell, port and bit, and the source line of the cell). The RTL is read as synthesis reads it (SYNTHESIS defined: no
# assertions, no cover points); the mutations are Yosys' kinds (mcy's): a bit of a cell's port
# inverted (inv), stuck at 0 or 1 (const0, const1), or replaced by another bit of the same port,
# plain or inverted (cnot1, cnot0).
set -euo pipefail

yosys=yosys include="" sample="" seed=1 out=""
sources=()
while [ $# -gt 0 ]; do
  case "$1" in
    --yosys) yosys=$2; shift 2 ;;
    --include) include=$2; shift 2 ;;
    --sample) sample=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -*) echo "plant.sh: unknown option $1" >&2; exit 2 ;;
    *) sources+=("$1"); shift ;;
  esac
done
if [ -z "$include" ] || [ -z "$sample" ] || [ -z "$out" ] || [ ${#sources[@]} -eq 0 ]; then
  echo "usage: plant.sh --yosys YOSYS --include DIR --sample sample.tsv --seed N --out DIR RTL.sv..." >&2
  exit 2
fi
[ -f "$sample" ] || { echo "plant.sh: $sample: no such file" >&2; exit 2; }
sample=$(realpath "$sample")
case "$seed" in ''|*[!0-9]*) echo "plant.sh: --seed $seed: expected a non-negative integer" >&2; exit 2 ;; esac

mkdir -p "$out"
out=$(realpath "$out")
include=$(realpath "$include")
work="$out/work"
rm -rf "$work"
mkdir -p "$work"
# Yosys reads the sources by their names alone from their directory, so that cell names and source
# attributes, and with them the sampling, do not depend on where the tree is checked out.
rtl_dir=$(dirname "$(realpath "${sources[0]}")")
names=()
for f in "${sources[@]}"; do
  [ "$(dirname "$(realpath "$f")")" = "$rtl_dir" ] || { echo "plant.sh: $f is not in $rtl_dir with the others" >&2; exit 2; }
  names+=("$(basename "$f")")
done
cd "$rtl_dir"

# 1. Elaborate as synthesis does, keep the hierarchy (a mutation is a bug in a module's code, so it
#    is in every instance of it), and list the sample per module.
{
  echo "read_verilog -sv -DSYNTHESIS -I$include ${names[*]}"
  echo "hierarchy -check -top tessera_top"
  echo "proc"
  echo "opt_clean"
  echo "write_rtlil $work/design.il"
  line=0
  while IFS=$'\t' read -r module count rest; do
    line=$((line + 1))
    case "$module" in ''|'#'*) continue ;; esac
    case "$count" in ''|*[!0-9]*) echo "plant.sh: $sample:$line: '$count' is not a mutation count" >&2; exit 2 ;; esac
    [ -z "$rest" ] || { echo "plant.sh: $sample:$line: expected two columns, module and count" >&2; exit 2; }
    # The module itself and each of its parameterizations ($paramod...\module...).
    echo "mutate -list $count -seed $seed -o $work/list_$module.txt $module *\\$module *\\$module\\\\*"
    echo "$module" >> "$work/modules.txt"
  done < "$sample"
} > "$work/list.ys"
[ -s "$work/modules.txt" ] || { echo "plant.sh: $sample lists no module" >&2; exit 2; }
"$yosys" -q -l "$work/list.log" -s "$work/list.ys" > /dev/null 2>&1 || {
  echo "plant.sh: Yosys failed to list mutations (log: $work/list.log)" >&2
  tail -5 "$work/list.log" >&2
  exit 1
}

# 2. Number them in sample order, plant each behind its mutsel value, route mutsel to every
#    module from the top, flatten, and write the netlist.
printf 'mutant\tmodule\tmode\tcell\tport\tbit\tsource\n' > "$work/mutants.tsv"
{
  echo "read_rtlil $work/design.il"
  n=0
  while read -r module; do
    list="$work/list_$module.txt"
    if [ ! -s "$list" ]; then
      echo "plant.sh: Yosys found nothing to mutate in $module (is it in the design?)" >&2
      exit 1
    fi
    while read -r cmd; do
      n=$((n + 1))
      echo "${cmd/mutate /mutate -ctrl mutsel 16 $n }"
      # The fields for the table: mode, cell, port, bit, and the first source position in the
      # module's own file.
      read -r -a words <<< "$cmd"
      mode="" cell="" port="" bit="" src=""
      for ((i = 1; i < ${#words[@]}; i++)); do
        case "${words[$i]}" in
          -mode) mode=${words[$((i + 1))]} ;;
          -cell) cell=${words[$((i + 1))]} ;;
          -port) port=${words[$((i + 1))]} ;;
          -portbit) bit=${words[$((i + 1))]} ;;
          -src)
            s=${words[$((i + 1))]}
            if [ -z "$src" ] && [ "$(basename "${s%%:*}")" = "$module.sv" ]; then
              pos=${s#*:}
              src="$module.sv:${pos%%.*}"
            fi ;;
        esac
      done
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$module" "$mode" "$cell" "$port" "$bit" "${src:-$module.sv}" >> "$work/mutants.tsv"
    done < "$list"
  done < "$work/modules.txt"
  if [ "$n" -gt 65535 ]; then
    echo "plant.sh: $n mutations do not fit the 16-bit mutsel" >&2
    exit 1
  fi
  echo "add -global_input mutsel 16"
  echo "flatten"
  echo "opt_clean"
  echo "check -assert"
  echo "write_verilog -noattr $work/mutants.v"
} > "$work/plant.ys"
"$yosys" -q -l "$work/plant.log" -s "$work/plant.ys" > /dev/null 2>&1 || {
  echo "plant.sh: Yosys failed to plant the mutations (log: $work/plant.log)" >&2
  tail -5 "$work/plant.log" >&2
  exit 1
}
grep -q 'input \[15:0\] mutsel;' "$work/mutants.v" || {
  echo "plant.sh: the netlist has no mutsel input (log: $work/plant.log)" >&2
  exit 1
}
count=$(($(wc -l < "$work/mutants.tsv") - 1))
{
  echo "// How many mutations mutants.v carries (written by tsim/mutation/plant.sh)."
  echo "#pragma once"
  echo "constexpr int kMutantCount = $count;"
} > "$work/mutant_count.h"
mv "$work/mutant_count.h" "$out/mutant_count.h"
mv "$work/mutants.tsv" "$out/mutants.tsv"
mv "$work/mutants.v" "$out/mutants.v"
echo "plant.sh: $count mutations in $out/mutants.v"
