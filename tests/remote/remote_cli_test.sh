#!/usr/bin/env bash
# Remote execution end to end on 127.0.0.1: tessera serve, then sim, demo, run, eval, regress and the runtime tests through remote: targets, bit-exact with local runs; killed clients, secrets, bad flags.
# Usage: remote_cli_test.sh PATH/TO/tessera PATH/TO/tessera_runtime_tests SOURCE_DIR [TSIM_CONFIGS]
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../cli/checks.sh"
TESSERA=$(realpath "${1:?usage: remote_cli_test.sh TESSERA RUNTIME_TESTS SOURCE_DIR [TSIM_CONFIGS]}")
RUNTIME_TESTS=$(realpath "${2:?}")
SRC=$(realpath "${3:?}")
TSIM_CONFIGS=${4:-}
WORK=$(mktemp -d)
servers=()
cleanup() {
  for pid in "${servers[@]}"; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"


# poll SECONDS CMD...: true as soon as CMD succeeds, false if it never does within SECONDS.
poll() {
  local deadline=$((SECONDS + $1))
  shift
  while [ "$SECONDS" -lt "$deadline" ]; do
    "$@" && return 0
    sleep 0.05
  done
  "$@"
}

# count_at_least FILE PATTERN N: FILE holds at least N lines matching PATTERN.
count_at_least() { [ "$(grep -c -- "$2" "$1")" -ge "$3" ]; }

# start_server NAME ARGS...: tessera serve on a port the system picks; sets PORT once it listens.
start_server() {
  local name=$1
  shift
  "$TESSERA" serve --port 0 --port-file "$name.port" "$@" >"$name.out" 2>"$name.log" &
  local pid=$!
  servers+=("$pid")
  if ! poll 30 test -s "$name.port"; then
    bad "server $name did not start: $(cat "$name.log")"
    return 1
  fi
  PORT=$(cat "$name.port")
}

# sim_args DIR TARGET: the tessera sim command line of a stream export, on TARGET.
sim_args() {
  grep '^command ' "$1/manifest.txt" | sed "s|^command tessera ||; s|--target fsim|--target $2|"
}

# --- Bad flags: each a clear error.
expect 1 "below the protocol's minimum" -- "$TESSERA" serve --port 0 --max-bytes 10
expect 1 "cannot serve another server's device" -- "$TESSERA" serve --port 0 --target remote:127.0.0.1:1/fsim
expect 1 "bind address nonsense: not an IP address" -- "$TESSERA" serve --port 0 --bind nonsense
expect 1 "target 'nosuch'" -- "$TESSERA" serve --port 0 --target nosuch
expect 1 "not a TCP port" -- "$TESSERA" serve --port 70000
start_server fsim || exit 1
FSIM=$PORT
expect 1 "cannot listen" -- "$TESSERA" serve --port "$FSIM"
grep -q "listening on 127.0.0.1:$FSIM (target fsim, config any)" fsim.out && ok || bad "serve did not say where it listens"
REMOTE=remote:127.0.0.1:$FSIM/fsim

# --- tessera sim: the same dump and counters as a local run.
"$TESSERA" stream eltwise-add -o ea >/dev/null 2>&1 || bad "stream eltwise-add"
(cd ea && "$TESSERA" $(sim_args . fsim) --stats >../local.txt 2>&1 && cp segment0/out-0.bin ../local.bin) || bad "local sim"
(cd ea && "$TESSERA" $(sim_args . "$REMOTE") --stats >../remote.txt 2>&1 && cp segment0/out-0.bin ../remote.bin) ||
  bad "remote sim: $(cat remote.txt)"
cmp -s local.bin remote.bin && ok || bad "remote sim dump differs from the local one"
cmp -s ea/segment0/expected-0.bin remote.bin && ok || bad "remote sim dump differs from the export's expected output"
diff <(grep -v "^ran \|^placed\|cycles simulated" local.txt) <(grep -v "^ran \|^placed\|cycles simulated" remote.txt) >/dev/null &&
  ok || bad "remote counters differ: $(diff local.txt remote.txt)"

# --- Runtime programs, models and a regression.
expect 0 "all [0-9]+ outputs match the host reference" -- "$TESSERA" demo --target "$REMOTE"
expect 0 "0 mismatches" -- "$TESSERA" regress --programs 60 --targets "fsim,$REMOTE"
expect 0 "0 mismatches" -- "$TESSERA" regress --programs 8 --size medium --config batch2 --targets "fsim,$REMOTE"
model=$SRC/models/fashion_mnist/fashion_cnn.onnx
if "$TESSERA" compile "$model" --calibrate "$SRC/models/fashion_mnist/calib" -o m.tsm >/dev/null 2>&1; then
  "$TESSERA" run m.tsm --input "$SRC/models/fashion_mnist/sample_0.npy" --output-dir out-local >/dev/null 2>&1
  expect 0 "" -- "$TESSERA" run m.tsm --input "$SRC/models/fashion_mnist/sample_0.npy" --output-dir out-remote --target "$REMOTE"
  diff -r out-local out-remote >/dev/null && ok || bad "tessera run outputs differ between local and remote"
  dataset=(/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz)
  if [ -f "${dataset[0]}" ]; then
    "$TESSERA" eval m.tsm --count 50 --dataset "${dataset[@]}" 2>&1 | grep "top-1.*top-5" >eval-local.txt
    "$TESSERA" eval m.tsm --count 50 --dataset "${dataset[@]}" --target "$REMOTE" 2>&1 | grep "top-1.*top-5" >eval-remote.txt
    [ -s eval-local.txt ] && diff eval-local.txt eval-remote.txt >/dev/null && ok || bad "tessera eval accuracy differs: $(cat eval-remote.txt)"
  fi
else
  bad "compile the Fashion-MNIST model"
fi
out=$(TESSERA_TEST_TARGETS=$REMOTE "$RUNTIME_TESTS" --gtest_filter='AllTargetsAndConfigs/*' --gtest_brief=1 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -qE "PASSED  \] [1-9][0-9]* tests" <<<"$out"; then ok; else bad "runtime tests through $REMOTE: $out"; fi

# --- A client killed mid-transfer does not wedge the server: the next client is served.
"$TESSERA" stream eltwise-add --scale 12 -o big >/dev/null 2>&1 || bad "stream eltwise-add --scale 12"
holds=$(($(grep -c "holds the device" fsim.log) + 1))
(cd big && exec "$TESSERA" $(sim_args . "$REMOTE") >/dev/null 2>&1) &
victim=$!
poll 30 count_at_least fsim.log "holds the device" "$holds" || bad "the big client never got the device"
kill -9 "$victim" 2>/dev/null
wait "$victim" 2>/dev/null
expect 0 "0 mismatches" -- "$TESSERA" regress --programs 5 --targets "fsim,$REMOTE"

# --- Shared secret: refused without it or with the wrong one, served with it.
printf 'open sesame\n' >secret && chmod 600 secret
printf 'wrong\n' >wrong && chmod 600 wrong
start_server auth --secret-file secret || exit 1
AUTH=remote:127.0.0.1:$PORT
expect 1 "requires authentication" -- "$TESSERA" demo --target "$AUTH"
expect 1 "authentication failed: wrong shared secret" -- env TESSERA_REMOTE_SECRET_FILE=wrong "$TESSERA" demo --target "$AUTH"
expect 0 "0 mismatches" -- env TESSERA_REMOTE_SECRET_FILE=secret "$TESSERA" regress --programs 5 --targets "fsim,$AUTH"
expect 0 "0 mismatches" -- "$TESSERA" regress --programs 5 --targets "fsim,$AUTH:remote.secret-file=secret"
chmod 644 wrong
start_server fixed --config small || exit 1
expect 1 "this server's device runs config small only" -- "$TESSERA" demo --target "remote:127.0.0.1:$PORT/fsim" --config default
expect 0 "0 mismatches" -- "$TESSERA" regress --programs 5 --config small --targets "fsim,remote:127.0.0.1:$PORT/fsim"
expect 1 "readable by group or others" -- "$TESSERA" serve --port 0 --secret-file wrong

# --- Another target's device: hls, and tsim (where built), with a client killed mid-run.
if grep -qx hls "$(dirname "$TESSERA")/../lib/tessera/tessera-hls.targets" 2>/dev/null; then
  start_server hls --target hls && expect 0 "0 mismatches" -- "$TESSERA" regress --programs 10 --targets "fsim,remote:127.0.0.1:$PORT/hls"
  expect 1 "serves target hls, not fsim" -- "$TESSERA" demo --target "remote:127.0.0.1:$PORT/fsim"
fi
if [[ ",$TSIM_CONFIGS," == *,default,* ]]; then
  start_server tsim --target tsim --verbose || exit 1
  TSIM=remote:127.0.0.1:$PORT/tsim
  "$TESSERA" stream eltwise-add --scale 3 -o mid >/dev/null 2>&1
  (cd mid && exec "$TESSERA" $(sim_args . "$TSIM") >/dev/null 2>&1) &
  victim=$!
  poll 60 grep -q "runs [0-9]* instructions" tsim.log || bad "the tsim client never ran"
  kill -9 "$victim" 2>/dev/null
  wait "$victim" 2>/dev/null
  # The next client queues behind the orphaned run, then gets the device and the same bytes as fsim.
  (cd ea && "$TESSERA" $(sim_args . "$TSIM") >../tsim.txt 2>&1 && cp segment0/out-0.bin ../tsim.bin) || bad "tsim after a kill: $(cat tsim.txt)"
  cmp -s local.bin tsim.bin && ok || bad "remote tsim dump differs from local fsim's"
fi

# The first server logged each client, and is still alive after all of it.
kill -0 "${servers[0]}" && ok || bad "the fsim server died"
grep -q "connection dropped\|disconnected" fsim.log && ok || bad "the server did not log the killed client"

echo "remote_cli_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
