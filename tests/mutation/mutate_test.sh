#!/usr/bin/env bash
# The mutation machinery end to end (ctest mutation_machinery): tsim-mut's mutant option, the
# unmutated netlist against the RTL, and mutate.sh's verdicts, score and review of survivors.
# Usage: mutate_test.sh BUILD_DIR
set -euo pipefail
build=$(realpath "${1:?usage: mutate_test.sh BUILD_DIR}")
root=$(cd "$(dirname "$0")/../.." && pwd)
tessera="$build/sw/tessera"
table="$build/tsim/mutation/default/mutants.tsv"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# Without the slow set (two minutes of mutant 0 on 2^22 instructions): make mutate runs it.
export TESSERA_MUTATE_SLOW=0
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect CODE PATTERN CMD...: CMD exits with CODE and prints PATTERN.
expect() {
  local code=$1 pattern=$2 out rc=0
  shift 2
  out=$("$@" 2>&1) || rc=$?
  [ "$rc" -eq "$code" ] || fail "$* exited $rc (expected $code): ${out:0:1500}"
  grep -qE -- "$pattern" <<<"$out" || fail "$* printed no '$pattern': ${out:0:1500}"
}
count=$(($(wc -l < "$table") - 1))
[ "$count" -ge 300 ] || fail "$table lists $count mutants (the sample asks for at least 300)"

# The option: required, in range, and on tsim-mut only.
printf 'LOAD.INP deps=- sram_base=0 dram_base=0x1000 y_size=1 x_size=4 x_stride=4\nSTORE.OUT deps=- sram_base=0 dram_base=0x2000 y_size=1 x_size=1 x_stride=1\nFINISH deps=-\n' > p.s
"$tessera" asm p.s -o p.bin > /dev/null
expect 1 "needs the mutation to activate: target option mutant=N, 1 to $count" "$tessera" sim --target tsim-mut --insn p.bin
expect 1 "carries mutations 1 to $count" "$tessera" sim --target tsim-mut -o "mutant=$((count + 1))" --insn p.bin
expect 1 "target option .mutant.: unknown for target tsim" "$tessera" sim --target tsim -o mutant=1 --insn p.bin
expect 1 "writes no waveforms" "$tessera" sim --target tsim-mut -o mutant=0 --trace t.fst --insn p.bin

# Mutant 0 is the RTL: the same counters, cycle for cycle, as tsim.
"$tessera" sim --target tsim --stats --insn p.bin > rtl.txt
"$tessera" sim --target tsim-mut -o mutant=0 --stats --insn p.bin > mut0.txt
stats() { grep -v -e '^ran ' -e 'cycles simulated at' "$1"; }
diff <(stats rtl.txt) <(stats mut0.txt) > /dev/null ||
  fail "mutant 0 and tsim differ: $(diff rtl.txt mut0.txt | head -10)"
grep -qE '^  cycles +[1-9]' rtl.txt || fail "tsim --stats printed no cycles: $(cat rtl.txt)"

# A killed mutant: the first of the table's that 20 programs catch.
killed=""
for k in $(seq 1 30); do
  rc=0
  "$tessera" regress --programs 20 --quiet --no-reproducers --no-shrink --targets "fsim,tsim-mut:mutant=$k" > r.log 2>&1 || rc=$?
  if [ "$rc" -eq 1 ] && grep -q '^MISMATCH' r.log; then killed=$k; break; fi
done
[ -n "$killed" ] || fail "none of mutants 1-30 is caught by 20 programs"
desc() { awk -F'\t' -v k="$1" '$1 == k { print $3 " " $4 " " $5 "[" $6 "] at " $7 }' "$table"; }
printf '# none\n' > none.tsv
expect 0 "score 100.00%" bash "$root/tests/mutation/mutate.sh" --build "$build" --mutants "$killed" --programs 20 \
  --survivors none.tsv --out out1
awk -F'\t' -v k="$killed" '$1 == k && $3 == "killed"' out1/results.tsv | grep -q . || fail "mutant $killed not reported killed"
# Listed as equivalent although killed: a stale entry fails the run. The review reuses out1's
# verdicts (--resume: nothing is simulated again).
printf '%s\t%s\tequivalent\tstale on purpose\n' "$killed" "$(desc "$killed")" > stale.tsv
cp -r out1 out2
expect 1 "mutant $killed is listed as equivalent .* but was killed" bash "$root/tests/mutation/mutate.sh" --build "$build" \
  --mutants "$killed" --programs 20 --survivors stale.tsv --out out2 --resume
grep -q "(0 to run)" <(bash "$root/tests/mutation/mutate.sh" --build "$build" --mutants "$killed" --programs 20 \
  --survivors none.tsv --out out2 --resume 2>&1) || fail "--resume ran mutant $killed again"
# Verdicts of another run are never mixed in.
expect 2 "holds verdicts of another run" bash "$root/tests/mutation/mutate.sh" --build "$build" \
  --mutants "$killed" --programs 21 --survivors none.tsv --out out2 --resume

# A survivor: the first mutant listed as equivalent (run once, resuming out1: mutant 0 is not run
# again). Listed it counts as equivalent; unlisted it fails the run; listed under another
# mutation's description it asks for review.
survivor=$(awk -F'\t' '!/^#/ && NF == 4 { print $1; exit }' "$root/tests/mutation/survivors.tsv")
[ -n "$survivor" ] || fail "tests/mutation/survivors.tsv lists no equivalent mutant"
expect 0 "score 100.00%" bash "$root/tests/mutation/mutate.sh" --build "$build" --mutants "$survivor" --programs 20 \
  --out out1 --resume
awk -F'\t' -v k="$survivor" '$1 == k && $3 == "equivalent"' out1/results.tsv | grep -q . || fail "mutant $survivor not reported equivalent"
cp -r out1 out3
expect 1 "mutant $survivor .* survives and is not in" bash "$root/tests/mutation/mutate.sh" --build "$build" \
  --mutants "$survivor" --programs 20 --survivors none.tsv --out out3 --resume
printf '%s\tinv $nothing A[0] at nowhere.sv:1\tequivalent\twrong on purpose\n' "$survivor" > wrong.tsv
expect 1 "mutant $survivor is now .*: review the entry" bash "$root/tests/mutation/mutate.sh" --build "$build" \
  --mutants "$survivor" --programs 20 --survivors wrong.tsv --out out3 --resume
# Listed as invalid-only it leaves the score's denominator but counts against the strict score;
# a verdict of another name is refused.
printf '%s\t%s\tinvalid-only\ton purpose\n' "$survivor" "$(desc "$survivor")" > invalid.tsv
expect 0 "score 100.00%" bash "$root/tests/mutation/mutate.sh" --build "$build" \
  --mutants "$survivor" --programs 20 --survivors invalid.tsv --out out3 --resume
awk -F'\t' -v k="$survivor" '$1 == k && $3 == "invalid-only"' out3/results.tsv | grep -q . || fail "mutant $survivor not reported invalid-only"
grep -qF '| **100.0%** | 0.0% |' out3/report.md || fail "the strict score does not count the invalid-only mutant: $(tail -1 out3/report.md)"
printf '%s\t%s\tunreachable\ton purpose\n' "$survivor" "$(desc "$survivor")" > verdict.tsv
expect 1 "expected MUTANT<TAB>MUTATION<TAB>equivalent\\|invalid-only<TAB>REASON" bash "$root/tests/mutation/mutate.sh" \
  --build "$build" --mutants "$survivor" --programs 20 --survivors verdict.tsv --out out3 --resume

# Bad arguments name what is wrong.
expect 2 "'0' is outside 1-$count" bash "$root/tests/mutation/mutate.sh" --build "$build" --mutants 0
expect 2 "'x' is not a number or a range" bash "$root/tests/mutation/mutate.sh" --build "$build" --mutants 3,x
echo "mutation machinery: mutant $killed killed, mutant $survivor equivalent, options and review checked"
