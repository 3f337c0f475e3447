#!/usr/bin/env bash
# One calibrated model run whole on fsim and on another target: every output bit for bit the same, for each input given.
# usage: targets_agree_test.sh TESSERA_BINARY MODEL.onnx CALIB_DIR TARGET INPUT.npy...
set -u
tessera=$1 model=$2 calib=$3 target=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! "$tessera" compile "$model" --calibrate "$calib" -o "$work/model.tsm" > "$work/log" 2>&1; then
  echo "FAIL: tessera compile: $(tail -c 2000 "$work/log")"
  exit 1
fi
status=0
for input in "$@"; do
  name=$(basename "$input" .npy)
  for t in fsim "$target"; do
    if ! "$tessera" run "$work/model.tsm" --target "$t" --input "$input" --no-layer-cycles --output-dir "$work/$t-$name" \
      > "$work/$t-$name.log" 2>&1; then
      echo "FAIL: tessera run on $t ($name): $(tail -c 2000 "$work/$t-$name.log")"
      exit 1
    fi
  done
  outputs=$(cd "$work/fsim-$name" && ls *.npy)
  [ -n "$outputs" ] || { echo "FAIL: $name: no outputs written"; exit 1; }
  for o in $outputs; do
    if cmp -s "$work/fsim-$name/$o" "$work/$target-$name/$o"; then
      echo "ok: $name $o: $target == fsim"
    else
      echo "FAIL: $name $o: $target differs from fsim"
      status=1
    fi
  done
done
grep "^total" "$work/$target-$name.log"
exit $status
