#!/bin/bash
# tessera run --export-sim: the shipped Fashion-MNIST model exported, each segment replayed by tessera sim bit for bit.
# usage: export_sim_test.sh TESSERA_BINARY SOURCE_DIR
set -u
tessera=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")  # absolute: replays run inside the export
src=$2
model=$src/models/fashion_mnist/fashion_cnn.onnx
calib=$src/models/fashion_mnist/calib
sample=$src/models/fashion_mnist/sample_0.npy
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

expect_ok() {
  local name=$1; shift
  if ! "$@" > "$work/out" 2>&1; then fail "$name: exit $?"; sed 's/^/    /' "$work/out" | tail -20; fi
}
expect_error() {
  local name=$1 pattern=$2; shift 2
  "$@" > "$work/out" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then fail "$name: succeeded"; return; fi
  if [ $rc -ge 128 ]; then fail "$name: crashed with signal $((rc - 128))"; return; fi
  grep -q -- "$pattern" "$work/out" || { fail "$name: no '$pattern' in:"; sed 's/^/    /' "$work/out" | tail -5; }
}

# replay DIR: runs every segment's command from the manifest in DIR with this build's tessera, then
# compares each output's dump with the bytes the exporting run produced. Prints "differs" lines.
replay() {
  local dir=$1 line
  while read -r line; do
    # shellcheck disable=SC2086  # the manifest's command is a plain word list without quoting
    (cd "$dir" && "$tessera" ${line#command tessera }) > "$work/replay.out" 2>&1 || { echo "replay failed: $line"; cat "$work/replay.out"; }
  done < <(grep '^command tessera sim ' "$dir/manifest.txt")
  while read -r _ _ _ expected dump _; do
    cmp -s "$dir/$expected" "$dir/$dump" || echo "differs: $dump from $expected"
  done < <(grep '^output ' "$dir/manifest.txt")
}

expect_ok "run with --export-sim" "$tessera" run "$model" --calibrate "$calib" --input "$sample" \
  --output-dir "$work/run" --export-sim "$work/export"
grep -q "segment(s) to replay" "$work/out" || fail "run --export-sim: no line naming the manifest"
manifest=$work/export/manifest.txt
[ -f "$manifest" ] || fail "no manifest.txt"
[ "$(grep -c '^segment ' "$manifest")" = "$(sed -n 's/^segments //p' "$manifest")" ] || fail "manifest: segment count"
grep -q '^command tessera sim --config config.json ' "$manifest" || fail "manifest: no tessera sim command line"
[ "$(grep -c '^output ' "$manifest")" -ge 1 ] || fail "manifest: no output range"

# The replay's dumps equal what the run produced...
[ -z "$(replay "$work/export")" ] || { fail "replay differs from the run:"; replay "$work/export"; }
# ...and those are the run's answer: the model's float logits are scale x the exported int8 logits.
python3 - "$work/run/logits.npy" "$work/export/$(awk '/^output /{print $4; exit}' "$manifest")" <<'EOF' || fail "expected bytes are not the run's logits"
import struct, sys
npy = open(sys.argv[1], 'rb').read()
hlen = struct.unpack('<H', npy[8:10])[0]
logits = struct.unpack('<10f', npy[10 + hlen:10 + hlen + 40])
q = struct.unpack('<10b', open(sys.argv[2], 'rb').read()[:10])
k = max(range(10), key=lambda i: abs(q[i]))
scale = logits[k] / q[k]
assert scale > 0 and all(abs(f - scale * v) <= 1e-5 * abs(scale) * 128 for f, v in zip(logits, q)), (logits, q)
EOF

# The check can fail: with every input byte of the arena changed, the replay must disagree.
cp -r "$work/export" "$work/broken"
python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); open(p,'wb').write(bytes(x ^ 0x55 for x in b))" \
  "$work/broken/segment0/arena.bin"
replay "$work/broken" | grep -q "^differs" || fail "a replay of changed inputs still matched: the comparison checks nothing"

# An export is never mixed into another one's directory without --force.
expect_error "refuses a non-empty directory" "not empty" "$tessera" run "$model" --calibrate "$calib" --input "$sample" \
  --export-sim "$work/export"
touch "$work/afile"
expect_error "refuses a file" "not a directory" "$tessera" run "$model" --calibrate "$calib" --input "$sample" \
  --export-sim "$work/afile"
expect_ok "--force replaces" "$tessera" run "$model" --calibrate "$calib" --input "$sample" --export-sim "$work/export" --force
[ -z "$(replay "$work/export")" ] || fail "replay after --force differs"
mkdir -p "$work/empty"
expect_ok "an empty directory is fine" "$tessera" run "$model" --calibrate "$calib" --input "$sample" --export-sim "$work/empty"

if [ $failures -ne 0 ]; then echo "$failures export-sim check(s) failed"; exit 1; fi
echo "all export-sim checks passed"
