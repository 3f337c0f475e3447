#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer harnesses (preset `fuzz`) and fuzzes each for FUZZ_SECONDS, one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
only=${FUZZ_HARNESSES:-}
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz: FUZZ_SECONDS must be a positive whole number of seconds, not '$seconds'" >&2
  exit 2
fi
cmake --preset fuzz > build-fuzz-configure.log 2>&1 || { cat build-fuzz-configure.log; exit 1; }
rm -f build-fuzz-configure.log
harnesses=$(sed -n 's/^set(tessera_fuzz_harnesses \(.*\))$/\1/p' tests/fuzz/CMakeLists.txt)
[ -n "$only" ] && harnesses=$only
targets=()
for h in $harnesses; do
  [ -d "tests/fuzz/corpus/$h" ] || { echo "fuzz: no harness '$h' (tests/fuzz/corpus/$h is missing)" >&2; exit 2; }
  targets+=("fuzz_$h")
done
cmake --build --preset fuzz --target "${targets[@]}"

# New inputs collect in build-fuzz/tests/fuzz/corpus/<harness>/ (the repository's seeds are only
# read); a crash leaves its input in build-fuzz/tests/fuzz/artifacts/ and stops that harness.
failed=()
for h in $harnesses; do
  scratch=build-fuzz/tests/fuzz/corpus/$h
  mkdir -p "$scratch" build-fuzz/tests/fuzz/artifacts
  echo "== fuzz_$h: $seconds s"
  if ! build-fuzz/tests/fuzz/fuzz_"$h" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="build-fuzz/tests/fuzz/artifacts/$h-" \
      "$scratch" "tests/fuzz/corpus/$h" 2> "build-fuzz/tests/fuzz/$h.log"; then
    failed+=("$h")
    tail -40 "build-fuzz/tests/fuzz/$h.log"
  fi
  grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' "build-fuzz/tests/fuzz/$h.log" | tr '\n' ' '
  echo
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: crashes in ${failed[*]}: inputs in build-fuzz/tests/fuzz/artifacts/ (add each to tests/fuzz/corpus/<harness>/ once fixed)" >&2
  exit 1
fi
echo "fuzz: ${seconds} s on each of: $harnesses; no crash"
