#!/bin/bash
# The explored configuration space (hw/configs/space/explore.json, `tessera info --space`): every
# point with a config runs random programs bit-exact on fsim's two kernel sets and a whole network
# bit-exact with the host reference; and the RTL elaborates lint-clean for exactly the points its
# targets are not refused for (a refusal that stops being true fails too, so it gets lifted).
# With MODE tsim, the points tsim was built for (TESSERA_TSIM_CONFIGS) run random programs
# bit-exact on fsim, tsim and rtl-sc, and the whole network on tsim bit-exact with the reference,
# its cycles within 5% of the cost model's prediction.
# With MODE drawn, COUNT configs drawn at random from the space with SEED (tessera info --space
# --draw), buffers included, run random programs bit-exact on fsim's two kernel sets and the whole
# network bit-exact with the host reference, or are refused by the compiler up front, naming why.
# Usage: space_test.sh TESSERA SOURCE_DIR MODE [POINTS | COUNT SEED]   (MODE: fsim, rtl-lint, tsim
# or drawn; POINTS: for tsim, the comma-separated points tsim was built for)
set -u
tessera=$1
src=$2
mode=$3
built=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# network NAME CONFIG TARGET: the Fashion-MNIST CNN compiled for CONFIG and run whole on TARGET,
# bit-exact with the host reference; on tsim, the cost model's predicted cycles within 5% of the
# count (issue 32's bound).
network() {
  local out err
  refused=
  if ! out=$("$tessera" bench --model "$m/fashion_cnn.onnx" --calibrate "$m/calib" --input "$m/sample_0.npy" \
               --config "$2" --target "$3" 2>&1); then
    # The compiler refusing the config up front, naming the layer and why, is no failure.
    if [[ ${allow_refusal:-} == 1 ]] && grep -qE "error: .*: node '.*\): no tiling fits config $1 \(" <<<"$out"; then
      refused=$(grep -oE "no tiling fits config .*" <<<"$out" | head -1)
      return
    fi
    fail "$1: whole network on $3: $(echo "$out" | tail -3)"
  elif ! grep -q "check against the host reference: bit-exact" <<<"$out"; then
    fail "$1: whole network on $3 not bit-exact with the host reference"
  elif [[ $3 == tsim ]]; then
    err=$(sed -n 's/.*whole network: .*; predicted [0-9,]* (\([-+][0-9.]*\)%)$/\1/p' <<<"$out")
    if [[ -z $err ]]; then
      fail "$1: whole network on tsim: no predicted cycles in: $(grep 'whole network' <<<"$out")"
    elif ! awk -v e="$err" 'BEGIN { exit !(e >= -5 && e <= 5) }'; then
      fail "$1: whole network on tsim: predicted cycles off by $err% (bound 5%): $(grep 'whole network' <<<"$out")"
    fi
  fi
}

draw=()
[[ $mode == drawn ]] && draw=(--draw "${4:?COUNT}" --seed "${5:?SEED}")
"$tessera" info --space "${draw[@]}" --emit "$work/points" > "$work/space.txt" || { cat "$work/space.txt"; echo "FAIL: tessera info --space"; exit 1; }
tail -4 "$work/space.txt"
if [[ $mode == drawn ]]; then
  # Bad draws are refused naming the option.
  for args in "--space --draw 0|--draw 0: draws at least one config" "--draw 3|--draw: only with --space" \
              "--space --seed 3|--seed: only with --draw" "--space --draw x|--draw"; do
    out=$("$tessera" info ${args%%|*} 2>&1) && fail "info ${args%%|*} succeeded"
    grep -qF -- "${args#*|}" <<<"$out" || fail "info ${args%%|*} does not say '${args#*|}': $out"
  done
  # The same seed lists the same configs.
  cmp -s <("$tessera" info --space "${draw[@]}" | grep '^b[0-9]') <(grep '^b[0-9]' "$work/space.txt") ||
    fail "info --space ${draw[*]} listed other configs the second time"
fi
points=0
compiler_refused=0
m=$src/models/fashion_mnist
while IFS=$'\t' read -r name file refused _; do
  [[ $name == \#* || $file == - ]] && continue
  points=$((points + 1))
  cfg=$work/points/$file
  case $mode in
    drawn)
      if ! out=$("$tessera" regress --config "$cfg" -n 20 --seed "$points" --targets fsim,fsim:kernels=generic --quiet --no-reproducers 2>&1); then
        fail "$name: regress: $(echo "$out" | tail -3)"
      fi
      allow_refusal=1 network "$name" "$cfg" fsim
      if [[ -n $refused ]]; then
        compiler_refused=$((compiler_refused + 1))
        echo "$name: the network is refused up front: $refused"
      fi
      ;;
    fsim)
      if ! out=$("$tessera" regress --config "$cfg" -n 20 --seed "$points" --targets fsim,fsim:kernels=generic --quiet --no-reproducers 2>&1); then
        fail "$name: regress: $(echo "$out" | tail -3)"
      fi
      network "$name" "$cfg" fsim
      ;;
    tsim)
      [[ ,$built, == *,$name,* ]] || { points=$((points - 1)); continue; }
      if ! out=$("$tessera" regress --config "$name" -n 40 --seed "$points" --targets fsim,tsim,rtl-sc --quiet --no-reproducers 2>&1); then
        fail "$name: regress on tsim and rtl-sc: $(echo "$out" | tail -3)"
      fi
      # The point's config file, not its name: a config of the same parameters runs on the built model.
      network "$name" "$cfg" tsim
      ;;
    rtl-lint)
      mkdir -p "$work/gen/$name"
      "$tessera" info --config "$cfg" --format sv > "$work/gen/$name/tessera_config.svh" || { fail "$name: sv header"; continue; }
      if verilator --lint-only -Wall -I"$work/gen/$name" -I"$src/rtl" "$src"/rtl/tessera_*.sv --top-module tessera_top \
           > "$work/gen/$name/lint.txt" 2>&1; then
        [[ ,$refused, == *,tsim,* ]] && fail "$name: the RTL elaborates lint-clean, but the space refuses it for tsim (lift the TARGET_LIMITS entry)"
      else
        [[ ,$refused, == *,tsim,* ]] || fail "$name: lint fails on a point the space does not refuse for the RTL's targets: $(grep -m1 '%' "$work/gen/$name/lint.txt")"
      fi
      ;;
    *) echo "unknown mode $mode"; exit 2 ;;
  esac
done < "$work/points/points.tsv"
[[ $points -gt 0 ]] || fail "no point of the space ran (mode $mode${built:+, built: $built})"
echo "$mode: $points points, $failures failures${draw:+, the network refused up front on $compiler_refused}"
[[ $failures -eq 0 ]]
