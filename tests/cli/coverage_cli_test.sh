#!/usr/bin/env bash
# End-to-end tests of RTL coverage: tessera regress --coverage on tsim-cov, shards against one process, tessera coverage report.
# Usage: coverage_cli_test.sh PATH/TO/tessera
set -u
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
TESSERA=$(realpath "${1:?usage: coverage_cli_test.sh PATH/TO/tessera}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

# --- counts: two shards merged equal one process over the same seeds, byte for byte; both agree
# with Verilator's own merge (verilator_coverage)
expect 0 "0 mismatches" -- "$TESSERA" regress --programs 12 --seed 40 --coverage one --quiet
for i in 0 1; do
  expect 0 "shard $i/2" -- "$TESSERA" regress --programs 12 --seed 40 --shard $i/2 --coverage shards --quiet
done
[ "$(ls one/*.dat | wc -l)" -eq 1 ] && [ "$(ls shards/*.dat | wc -l)" -eq 2 ] && ok \
  || bad "expected one coverage file per process: $(ls one shards)"
expect 0 "coverage of 1 file" -- "$TESSERA" coverage report one --no-html
expect 0 "coverage of 2 file" -- "$TESSERA" coverage report shards --no-html
cmp -s one/report/coverage.dat shards/report/coverage.dat && ok || bad "the shards' merged coverage differs from one process's"
if command -v verilator_coverage >/dev/null; then
  verilator_coverage --write vc.dat shards/*.dat >/dev/null 2>&1
  sort vc.dat > vc.sorted && sort shards/report/coverage.dat > ours.sorted
  cmp -s vc.sorted ours.sorted && ok || bad "tessera's merge differs from verilator_coverage's"
fi

# --- the report: a table with every module and a total, an lcov tracefile, an HTML report
expect 0 "^tessera_compute +[0-9]+/[0-9]+ " -- "$TESSERA" coverage report one -o rep
grep -q "^total " <("$TESSERA" coverage report one --no-html -o rep2) && ok || bad "no total row"
grep -q "^SF:.*tessera_fifo.sv$" rep/coverage.info && grep -q "^DA:" rep/coverage.info && ok || bad "lcov tracefile lacks sources or lines"
if command -v genhtml >/dev/null; then
  [ -s rep/html/index.html ] && ok || bad "no HTML report"
fi
# A random regression this short hits some points and misses others; the thresholds say so.
expect 1 "line coverage .* is below the required 100.0%" -- "$TESSERA" coverage report one --no-html --require-line 100
expect 0 "" -- "$TESSERA" coverage report one --no-html --require-line 1
expect 0 "not hit:" -- "$TESSERA" coverage report one --no-html --uncovered

# --- bad input: named, never a crash
expect 2 "no tsim, icebreaker-sim or their coverage builds" -- "$TESSERA" regress --programs 1 --targets fsim,fsim --coverage x
expect 2 "empty directory name" -- "$TESSERA" regress --programs 1 --coverage ""
expect 2 "say the same twice" -- "$TESSERA" regress --programs 1 --targets fsim,tsim-cov:coverage=a --coverage b
expect 2 "needs the directory its coverage goes to" -- "$TESSERA" regress --programs 1 --targets fsim,tsim-cov
expect 2 "coverage.: unknown for target tsim" -- "$TESSERA" regress --programs 1 --targets fsim,tsim:coverage=x
expect 2 "not a shipped config|coverage model" -- "$TESSERA" regress --programs 1 --config small --coverage small_cov
touch afile
expect 2 "cannot create|not a writable directory" -- "$TESSERA" regress --programs 1 --coverage afile/sub
mkdir empty
expect 1 "holds no coverage file" -- "$TESSERA" coverage report empty
expect 1 "cannot be read|no such|No such" -- "$TESSERA" coverage report missing-dir
printf '# SystemC::Coverage-3\nC broken\n' > empty/bad.dat
expect 1 "empty/bad.dat:2" -- "$TESSERA" coverage report empty
printf 'toggle tessera_fifo count_q[0]\n' > excl.txt
expect 1 "excl.txt:1: .*REASON" -- "$TESSERA" coverage report one --exclusions excl.txt
expect 2 "the one action is report" -- "$TESSERA" coverage merge one

echo "coverage cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
