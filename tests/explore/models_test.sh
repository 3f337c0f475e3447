#!/bin/bash
# Models built on request (tessera build-models, docs/explore.md): configs drawn at random from the
# explored space (seeded) get their RTL and HLS models built into a model cache, and run random
# programs bit-exact on fsim, hls and hls-sc, and on tsim and rtl-sc where the space lets the RTL
# run them, and the Fashion-MNIST CNN whole on hls (and tsim) bit-exact with the host reference;
# tessera explore verifies on tsim a config this build has no model for, through the same cache; a
# second request is served from the cache; bad requests are refused naming why.
# Usage: models_test.sh TESSERA SOURCE_DIR CACHE_DIR SEED RTL_COUNT WIDE_COUNT
#   RTL_COUNT configs the RTL can run and WIDE_COUNT it refuses (HLS only), the first of 60 drawn,
#   beside the point explore verifies (RTL and HLS models), which runs as they do.
set -u
tessera=$1
src=$2
cache=$3
seed=$4
rtl_count=$5
wide_count=$6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
m=$src/models/fashion_mnist
# The point explore verifies: not in the default TESSERA_TSIM_CONFIGS, so its model comes from the cache.
explore_point=b1_i3_o3_w6

# Bad requests, before anything is built.
out=$("$tessera" build-models 2>&1) && fail "build-models with no config succeeded"
grep -q "needs at least one CONFIG" <<<"$out" || fail "build-models with no config: $out"
"$tessera" info --config default --format json | sed 's/"LOG_UOP_BUFF_SIZE": 15/"LOG_UOP_BUFF_SIZE": 12/; s/"NAME": "default"/"NAME": "odd"/' > "$work/odd.json"
out=$("$tessera" build-models "$work/odd.json" --model-cache "$cache" 2>&1) && fail "build-models of a config outside the space succeeded"
grep -q "config 'odd': is neither a shipped config nor a point of the explored space" <<<"$out" || fail "a config outside the space: $out"
out=$("$tessera" build-models default --model-cache "$cache" --source "$work" 2>&1) && fail "build-models from a directory that is no source tree succeeded"
grep -q -- "--source $work: building models needs Tessera's source tree" <<<"$out" || fail "not a source tree: $out"

# The draw: the first RTL_COUNT configs the RTL runs and WIDE_COUNT it refuses, among those the
# compiler takes the network for (on fsim; explore_space_drawn covers the refusals).
"$tessera" info --space --draw 60 --seed "$seed" > "$work/space.txt" || { cat "$work/space.txt"; exit 1; }
compiles() {
  "$tessera" bench --model "$m/fashion_cnn.onnx" --calibrate "$m/calib" --input "$m/sample_0.npy" --config "$1" --target fsim 2>&1 |
    grep -q "check against the host reference: bit-exact"
}
rtl="" wide=""
while read -r name refused; do
  if [[ $refused == - && $(wc -w <<<"$rtl") -lt $rtl_count ]]; then compiles "$name" && rtl="$rtl $name"
  elif [[ $refused != - && $(wc -w <<<"$wide") -lt $wide_count ]]; then compiles "$name" && wide="$wide $name"
  fi
done < <(awk '/^b[0-9]/ { print $1, $NF }' "$work/space.txt")
rtl=${rtl# } wide=${wide# }
[[ $(wc -w <<<"$rtl") -eq $rtl_count && $(wc -w <<<"$wide") -eq $wide_count ]] || fail "the draw gave RTL configs '$rtl', wide '$wide'"
echo "drawn: RTL $rtl; HLS only $wide; explore's point $explore_point"

start=$(date +%s)
out=$("$tessera" build-models $rtl $wide $explore_point --model-cache "$cache" -q 2>&1) || { echo "$out"; fail "build-models"; exit 1; }
echo "$out"
echo "build-models: $(( $(date +%s) - start )) s"
plugins=$(sed -n 's/^models in \(.*\) (.*$/\1/p' <<<"$out" | head -1)
[[ -d $plugins ]] || fail "build-models named no plugin directory: $out"
for c in $rtl $explore_point; do
  grep -qE "^  $c +tsim, rtl-sc, hls, hls-sc$" <<<"$out" || fail "$c: build-models does not list its RTL models"
done
for c in $wide; do
  grep -qE "^  $c +hls, hls-sc \(the RTL targets refuse it: LOG_BUS_WIDTH" <<<"$out" || fail "$c: build-models does not say the RTL refuses it"
done

run() { TESSERA_PLUGIN_PATH=$plugins "$tessera" "$@"; }
for c in $explore_point $rtl $wide; do
  targets=fsim,hls,hls-sc
  [[ " $explore_point $rtl " == *" $c "* ]] && targets=$targets,tsim,rtl-sc
  r=$(run regress --config "$c" -n 20 --seed 1 --targets "$targets" --quiet --no-reproducers 2>&1) || fail "$c: regress on $targets: $(tail -3 <<<"$r")"
  grep -q "targets $targets; .* 0 mismatches" <<<"$r" || fail "$c: regress on $targets: $(tail -1 <<<"$r")"
  for t in ${targets//,/ }; do
    [[ $t == fsim || $t == *-sc ]] && continue
    b=$(run bench --model "$m/fashion_cnn.onnx" --calibrate "$m/calib" --input "$m/sample_0.npy" --config "$c" --target "$t" 2>&1)
    if grep -q "no tiling fits config" <<<"$b"; then
      echo "$c: the network is refused up front: $(grep -o 'no tiling fits.*' <<<"$b")"
    elif ! grep -q "check against the host reference: bit-exact" <<<"$b"; then
      fail "$c: the network on $t: $(tail -3 <<<"$b")"
    fi
  done
  echo "ok: $c on $targets"
done
# This build's own tsim has no model for them (unless its TESSERA_TSIM_CONFIGS lists them), and
# says how to get one.
c=${rtl%% *}
c=${c:-$explore_point}
if ! out=$("$tessera" regress --config "$c" -n 1 --targets fsim,tsim 2>&1); then
  grep -q "or build its models on request: tessera build-models $c" <<<"$out" || fail "tsim without a model for $c: $out"
fi

# A second request is served from the cache.
out=$("$tessera" build-models $explore_point $rtl --model-cache "$cache" -q 2>&1) || fail "build-models again: $out"
grep -q "all cached, checked" <<<"$out" || fail "build-models again compiled something: $out"

# tessera explore verifies explore's point on tsim through the cache, as tsim counts it there.
if "$tessera" regress --config "$explore_point" -n 1 --targets fsim,tsim > /dev/null 2>&1; then
  fail "this build's tsim has a model for $explore_point: the test needs a point it lacks (change explore_point)"
fi
out=$("$tessera" explore "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part xczu7ev --points "$explore_point" --budget 1 --top 1 \
        --verify tsim --input "$m/sample_0.npy" --model-cache "$cache" --out "$work/ex" 2>&1) || fail "explore: $out"
echo "$out" | grep -A2 "tsim:"
cycles=$(python3 -c "import json,sys; c=[c for c in json.load(open(sys.argv[1]))['candidates'] if 'tsim_cycles' in c]; print(int(c[0]['tsim_cycles']) if c else '')" "$work/ex/explore.json")
grep -q "tsim's model built on request, from $plugins" <<<"$out" || fail "explore does not say tsim's model came from the cache: $out"
b=$(run bench --model "$work/ex/model.tsm" --config "$work/ex/chosen.json" --target tsim --input "$m/sample_0.npy" --json 2>&1)
want=$(python3 -c "import json,sys; print(int(json.loads(sys.stdin.read())['cycles']))" <<<"$b" 2>/dev/null)
if [[ -z $cycles || $cycles != "$want" ]]; then fail "explore verified '$cycles' cycles, tsim from the cache counts '$want'"; else echo "ok: explore verified $cycles cycles, as tsim counts them"; fi
# Without building, it says why the config stays unverified.
out=$("$tessera" explore "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part xczu7ev --points "$explore_point" --budget 1 --top 1 \
        --verify tsim --no-model-build 2>&1) || fail "explore --no-model-build: $out"
grep -q "tsim:  not run: this build's tsim has no model for it and --no-model-build was given" <<<"$out" || fail "explore --no-model-build: $out"

if [[ $failures -ne 0 ]]; then echo "$failures failure(s)"; exit 1; fi
echo "models: all passed"
