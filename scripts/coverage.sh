#!/usr/bin/env bash
# The standard coverage regression of the RTL (make coverage): random programs, the runtime suite and directed programs on tsim-cov, merged into one report; and the iCEBreaker board top on icebreaker-sim-cov, reported apart.
#
#   scripts/coverage.sh [BUILD_DIR] [OUT_DIR]      (defaults: build, BUILD_DIR/coverage)
#
# TESSERA_COVERAGE_PROGRAMS (default 300) scales the random part: that many small programs with
# the default DRAM timing, a third as many with a slow, one-burst DRAM (the AXI stalls), a fifth
# as many medium and a fifteenth as many large ones. Every step writes its counts to OUT_DIR/dat;
# `tessera coverage report` merges them, leaves out tests/coverage/exclusions.txt, writes the
# table, OUT_DIR/report/coverage.info and OUT_DIR/report/html, and fails unless closure holds:
# every cover point hit, line coverage at least 98%, toggle coverage at least 90%
# (docs/verification.md); a smaller TESSERA_COVERAGE_PROGRAMS than the standard 300 may fall
# short of it. The board top (a fifth as many pico programs on icebreaker-sim-cov, and the host
# link's tests) goes to OUT_DIR/board/dat and its own report, OUT_DIR/board/report, leaving out
# tests/coverage/board_exclusions.txt, and fails unless it reaches closure too (98% line, 90% toggle).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(realpath "${1:-$root/build}")"
out="$(realpath -m "${2:-$build/coverage}")"
tessera="$build/sw/tessera"
[ -x "$tessera" ] || { echo "coverage.sh: $tessera not built (make build)" >&2; exit 2; }
n="${TESSERA_COVERAGE_PROGRAMS:-300}"
case "$n" in '' | *[!0-9]*) echo "coverage.sh: TESSERA_COVERAGE_PROGRAMS='$n' is not a number" >&2; exit 2 ;; esac
[ "$n" -ge 15 ] || { echo "coverage.sh: TESSERA_COVERAGE_PROGRAMS must be at least 15" >&2; exit 2; }

rm -rf "$out"
mkdir -p "$out/dat" "$out/board/dat"
dat="$out/dat"
board_dat="$out/board/dat"
start=$(date +%s)
step() { echo "coverage: $*"; }

# Random programs, two processes at a time (each writes its own file).
slow="mem-outstanding=1:mem-bytes-per-cycle=1:mem-latency=40:mem-write-latency=30"
step "$n small programs and $((n / 3)) on a slow DRAM"
"$tessera" regress --quiet --no-reproducers --programs "$n" --seed 1 --coverage "$dat" &
a=$!
"$tessera" regress --quiet --no-reproducers --programs $((n / 3)) --seed 100001 --targets "fsim,tsim:$slow" --coverage "$dat"
wait $a
step "$((n / 5)) medium and $((n / 15)) large programs"
"$tessera" regress --quiet --no-reproducers --programs $((n / 5)) --size medium --seed 200001 --coverage "$dat" &
a=$!
"$tessera" regress --quiet --no-reproducers --programs $((n / 15)) --size large --seed 300001 --coverage "$dat"
wait $a

# VTA's hardware tests through the runtime (several runs a session, faults, register reads); beside
# them, the iCEBreaker board top (pico core, board modules) on icebreaker-sim-cov, counted apart.
board_n=$((n / 5))
step "the runtime suite on tsim-cov; $board_n programs on icebreaker-sim-cov (config pico)"
"$tessera" regress --quiet --no-reproducers --config pico --programs "$board_n" --seed 400001 \
  --targets fsim,icebreaker-sim --coverage "$board_dat" &
a=$!
TESSERA_TEST_TARGETS=tsim-cov TESSERA_TARGET_OPTIONS="coverage=$dat" \
  "$build/tests/runtime/tessera_runtime_tests" --gtest_brief=1 --gtest_filter='*/tsim_cov_*'
wait $a
# The host link's error paths, the resync rule and the core's faults, which the driver never sends.
TESSERA_TEST_COVERAGE_DIR="$board_dat" "$build/tests/icebreaker/tessera_icebreaker_coverage_tests" --gtest_brief=1

# What random programs do not reach: every register word, full queues, each fault cause.
step "directed tests"
TESSERA_TEST_COVERAGE_DIR="$dat" "$build/tests/coverage/tessera_coverage_register_tests" --gtest_brief=1
bash "$root/tests/coverage/directed.sh" "$tessera" "tsim-cov:coverage=$dat"

step "report ($(( $(date +%s) - start )) s of simulation)"
rc=0
"$tessera" coverage report "$dat" --out "$out/report" --exclusions "$root/tests/coverage/exclusions.txt" \
  --require-covers --require-line 98 --require-toggle 90 "${@:3}" || rc=$?
# The board top's own report, its exclusions reviewed as the accelerator's are, held to the same
# closure (it has no cover points of its own).
step "report of the iCEBreaker board top (pico core and board modules)"
"$tessera" coverage report "$board_dat" --out "$out/board/report" \
  --exclusions "$root/tests/coverage/board_exclusions.txt" --require-line 98 --require-toggle 90 "${@:3}" || rc=$?
exit "$rc"
