#!/bin/bash
# Whole-model CLI tests: compile, run and eval the shipped Fashion-MNIST model; every bad input a clear error.
# usage: model_cli_test.sh TESSERA_BINARY SOURCE_DIR [TSIM_CONFIGS]   (configs tsim was built for, comma-separated)
set -u
tessera=$1
src=$2
tsim_configs=${3:-}
model=$src/models/fashion_mnist/fashion_cnn.onnx
calib=$src/models/fashion_mnist/calib
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_ok NAME CMD...: the command succeeds; its output is in $work/out.
expect_ok() {
  local name=$1; shift
  if ! "$@" > "$work/out" 2>&1; then fail "$name: exit $?"; sed 's/^/    /' "$work/out" | tail -20; fi
}
# expect_error NAME PATTERN CMD...: the command fails (not a crash) and says PATTERN.
expect_error() {
  local name=$1 pattern=$2; shift 2
  "$@" > "$work/out" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then fail "$name: succeeded"; return; fi
  if [ $rc -ge 128 ]; then fail "$name: crashed with signal $((rc - 128))"; return; fi
  grep -q -- "$pattern" "$work/out" || { fail "$name: no '$pattern' in:"; sed 's/^/    /' "$work/out" | tail -5; }
}

expect_ok compile "$tessera" compile "$model" --calibrate "$calib" -o "$work/m.tsm"
grep -q "on the accelerator" "$work/out" || fail "compile: no summary"
expect_error "compile refuses to overwrite" "exists" "$tessera" compile "$model" --calibrate "$calib" -o "$work/m.tsm"
expect_ok "run npy" "$tessera" run "$work/m.tsm" --input "$src/models/fashion_mnist/sample_0.npy" --output-dir "$work/out-npy"
grep -q "top 5" "$work/out" || fail "run: no top-5"
grep -q "accelerator" "$work/out" || fail "run: no per-layer table"
grep -qE "host steps: [0-9]+ us, [0-9.]+% of the run's wall time; by op: [A-Za-z]+ [0-9]+ us" "$work/out" || fail "run: no host time by op"
[ -f "$work/out-npy/logits.npy" ] || fail "run: logits.npy not written"
expect_ok "run pgm" "$tessera" run "$work/m.tsm" --input "image=$src/models/fashion_mnist/sample_0.pgm"
expect_ok "run json" "$tessera" run "$work/m.tsm" --input "$src/models/fashion_mnist/sample_0.npy" --json --timeline "$work/trace.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['outputs']['logits']['top'][0]['label']=='Ankle boot', d; assert len(d['layers'])>=9" "$work/out" || fail "run --json: not the expected JSON"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['traceEvents'][0]['ph']=='M'; assert len(d['traceEvents'])>=10" "$work/trace.json" || fail "--timeline: not a trace-event file"
python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['otherData']; assert d['instruction_tracks'] is False and 'untimed' in d['instruction_tracks_note'], d" "$work/trace.json" \
  || fail "--timeline on fsim: does not say why there are no instruction tracks"
expect_error "timeline refuses to overwrite" "exists" "$tessera" run "$work/m.tsm" --input "$src/models/fashion_mnist/sample_0.npy" --timeline "$work/trace.json"
# On tsim the timeline has the instruction tracks: one process for the segment, a track per unit,
# every instruction on fetch and on one other unit, the last span ending with the segment's cycles.
if [[ ",$tsim_configs," == *,default,* ]]; then
  expect_ok "run tsim timeline" "$tessera" run "$work/m.tsm" --input "$src/models/fashion_mnist/sample_0.npy" --target tsim \
    --timeline "$work/trace-tsim.json"
  python3 - "$work/trace-tsim.json" <<'PY' || fail "--timeline on tsim: instruction tracks missing or wrong"
import collections, json, sys
d = json.load(open(sys.argv[1]))
seg = d['otherData']['segments']
assert d['otherData']['instruction_tracks'] is True and len(seg) == 1, d['otherData']
pid, cycles, n = seg[0]['pid'], seg[0]['cycles'], seg[0]['instructions']
names = {e['tid']: e['args']['name'] for e in d['traceEvents']
         if e['pid'] == pid and e['ph'] == 'M' and e['name'] == 'thread_name'}
want = ['fetch', 'load', 'compute', 'compute: GEMM pipe', 'compute: ALU pipe', 'store']
assert set(want) <= set(names.values()), names
spans = [e for e in d['traceEvents'] if e['pid'] == pid and e['ph'] == 'X']
assert all(names[e['tid']].startswith(e['args']['unit']) for e in spans)
per = collections.Counter(e['args']['unit'] for e in spans)
assert all(per[u] > 0 for u in want), per
assert per['fetch'] == n and len(spans) == 2 * n, (per, n)
assert max(e['args']['end_cycle'] for e in spans) == cycles, cycles
assert min(e['args']['begin_cycle'] for e in spans) >= 0
PY
else
  echo "note: tsim not built for default: the timeline's instruction tracks are not checked"
fi
expect_ok "run onnx directly" "$tessera" run "$model" --calibrate "$calib" --input "$src/models/fashion_mnist/sample_0.npy"
expect_ok "eval" "$tessera" eval "$model" --calibrate "$calib" --count 200 \
  --dataset /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz
grep -q "host float model" "$work/out" || fail "eval: no float comparison"
grep -q "Tessera (6 of 9 layers, 100.0% of MACs on the accelerator)" "$work/out" || fail "eval: the accelerator's row does not say where the layers ran"
# A float model is quantized or run in float on the host only when asked; each label says where it ran.
dataset=(/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz)
expect_error "float model without --calibrate" "pass --calibrate DIR|IDX" "$tessera" compile "$model" -o "$work/nocalib.tsm"
[ -e "$work/nocalib.tsm" ] && fail "float model without --calibrate: wrote a file"
expect_error "run a float model without --calibrate" "--host-float" "$tessera" run "$model" --input "$src/models/fashion_mnist/sample_0.npy"
expect_error "--host-float on a quantized file" "already quantized" "$tessera" compile "$src/models/fashion_mnist/fashion_cnn_qdq.onnx" --host-float
expect_error "--host-float with --calibrate" "cannot be combined" "$tessera" compile "$model" --host-float --calibrate "$calib"
expect_error "--calibrate on a compiled model" "compiled model" "$tessera" run "$work/m.tsm" --calibrate "$calib" --input "$src/models/fashion_mnist/sample_0.npy"
# bench --model: the whole network's cycles, GEMM utilization by layer kind and host time
expect_error "bench --model without --input" "needs --input FILE" "$tessera" bench --model "$model" --calibrate "$calib"
expect_ok "bench --model on fsim" "$tessera" bench --model "$model" --calibrate "$calib" --input "$src/models/fashion_mnist/sample_0.npy" --target fsim
grep -q "counts no cycles (an untimed target; .*); predicted [1-9][0-9,]*$" "$work/out" || fail "bench --model on fsim: does not say fsim counts no cycles, or no prediction"
grep -q "6 of 9 layers, 100.0% of MACs on the accelerator in 1 segment(s)" "$work/out" || fail "bench --model: no placement line"
if [[ ",$tsim_configs," == *,default,* ]]; then
  expect_ok "bench --model on tsim" "$tessera" bench --model "$model" --calibrate "$calib" --input "$src/models/fashion_mnist/sample_0.npy" --target tsim --json
  python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
assert d['cycles']>0 and 0<d['gemm_utilization']<=1 and d['bit_exact_with_host_reference'], d
assert d['predicted_cycles']>0 and abs(d['prediction_error'])<=0.05, (d['predicted_cycles'], d['cycles'])
assert d['by_kind']['conv2d']['layers']==5 and d['by_kind']['conv2d']['cycles_run_alone']>0, d['by_kind']
assert d['by_kind']['host']['layers']==3 and 'host_seconds' in d['by_kind']['host'], d['by_kind']
" "$work/out" || fail "bench --model --json on tsim: not the expected figures"
fi
# A model of which no layer fits the accelerator: calibrated or not, a warning and a label that say
# every layer runs in float on the host.
/usr/bin/python3 - "$work/host_only.onnx" <<'PY' || fail "could not build the host-only model"
import sys
from onnx import TensorProto, helper, save
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 28, 28])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 28, 28])
g = helper.make_graph([helper.make_node("Tanh", ["x"], ["t"]), helper.make_node("Softmax", ["t"], ["y"], axis=3)],
                      "host_only", [x], [y])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
expect_ok "compile a host-only model" "$tessera" compile "$work/host_only.onnx" --calibrate "$calib" -o "$work/host_only.tsm"
grep -q "warning: .*no layer runs on the accelerator" "$work/out" || fail "host-only model: no warning"
grep -q "float (host): no layer fits the accelerator" "$work/out" || fail "host-only model: the label claims int8"
expect_error "an unknown calibration method" "--calibration-method: unknown calibration method 'kl' (minmax, entropy, mse" "$tessera" compile "$model" --calibrate "$calib" --calibration-method kl -o "$work/bad.tsm"
expect_error "a percentile out of range" "must be a number above 0 and at most 100" "$tessera" run "$model" --host-float --calibration-method percentile:101 --input "$src/models/fashion_mnist/sample_0.npy"
expect_ok "compile with percentile calibration" "$tessera" compile "$model" --calibrate "$calib" --calibration-method percentile:99.9 -o "$work/p.tsm"
grep -q "calibration samples, percentile 99.9)" "$work/out" || fail "compile --calibration-method percentile: the summary does not name the method"
expect_ok "compile with entropy calibration" "$tessera" compile "$model" --calibrate "$calib" --calibration-method entropy -o "$work/e.tsm"
grep -q "calibration samples, entropy)" "$work/out" || fail "compile --calibration-method entropy: the summary does not name the method"
expect_ok "compile with MSE calibration" "$tessera" compile "$model" --calibrate "$calib" --calibration-method mse -o "$work/mse.tsm"
grep -q "calibration samples, mse)" "$work/out" || fail "compile --calibration-method mse: the summary does not name the method"
expect_ok "eval with entropy calibration" "$tessera" eval "$model" --calibrate "$calib" --calibration-method entropy --count 500 --json --dataset "${dataset[@]}"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['tessera']['top1'] >= d['host_float']['top1'] - 0.02, d" "$work/out" || fail "eval with entropy calibration: top-1 more than 2 points below the float model's"
expect_ok "run --host-float" "$tessera" run "$model" --host-float --input "$src/models/fashion_mnist/sample_0.npy"
grep -q "^total: all 12 layers on the host in 0 segment(s) (0 of 1,257,536 MACs)" "$work/out" || { fail "run --host-float: the total does not say everything ran on the host"; tail -3 "$work/out"; }
expect_ok "eval --host-float" "$tessera" eval "$model" --host-float --count 20 --dataset "${dataset[@]}"
grep -q "Tessera (all 12 layers on the host)" "$work/out" || fail "eval --host-float: not labelled as run on the host"
# eval without --calibrate calibrates on its own data set and says so on its first line.
"$tessera" eval "$model" --count 20 --dataset "${dataset[@]}" > "$work/out" 2>/dev/null || fail "eval without --calibrate: exit $?"
head -1 "$work/out" | grep -q "^calibrated on the first 64 images of .*t10k-images.*no --calibrate given" || { fail "eval without --calibrate: the first line does not say how it calibrated"; head -2 "$work/out"; }
grep -q "post-training int8 (64 calibration samples)" "$work/out" || fail "eval without --calibrate: not quantized"
expect_ok "eval json without --calibrate" "$tessera" eval "$model" --count 20 --json --calibration-count 8 --dataset "${dataset[@]}"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['calibration']['samples_from'].endswith('t10k-images-idx3-ubyte.gz') and d['quantization'].startswith('post-training int8 (8 '), d" "$work/out" || fail "eval --json without --calibrate: no calibration record"
# The QOperator file (uint8, MaxPool and Flatten on quantized tensors) compiles to one segment too,
# its residual add fused into the block's second convolution.
expect_ok "compile qop" "$tessera" compile "$src/models/fashion_mnist/fashion_cnn_qop.onnx"
grep -q "6 on the accelerator in 1 segment" "$work/out" || { fail "compile qop: not one segment of 6 layers"; cat "$work/out"; }
for kind in qdq qop; do
  expect_ok "eval $kind" "$tessera" eval "$src/models/fashion_mnist/fashion_cnn_$kind.onnx" --count 200 --json \
    --dataset /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); a=d['tessera']['top1']; f=d['host_file_semantics']; assert a>0.8 and f['top1_agreement']>0.95, d" "$work/out" \
    || fail "eval $kind: accuracy or agreement with the file's semantics too low"
  # Every output's distance from the file's semantics, in the output's quantization steps.
  want=0.99
  python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['output_steps_from_file_semantics']; assert s['outputs']==2000 and s['exact']+s['one']>=float(sys.argv[2]), s" "$work/out" "$want" \
    || fail "eval $kind: outputs too far from the file's semantics"
done
expect_ok "eval json" "$tessera" eval "$work/m.tsm" --count 50 --json \
  --dataset /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['images']==50 and d['tessera']['top1']>0.7 and d['tessera']['layers_on_accelerator']==6 and d['tessera']['accelerator_mac_share']==1.0" "$work/out" || fail "eval --json"

expect_ok "bench json" "$tessera" bench resnet18 --target fsim --json
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['segments']==1 and d['bit_exact_with_host_reference'] and d['layers_on_accelerator']==23, d" "$work/out" || fail "bench resnet18 --json"

# Bad input.
head -c 2000 "$model" > "$work/truncated.onnx"
expect_error "truncated onnx" "truncated.onnx" "$tessera" compile "$work/truncated.onnx" --calibrate "$calib"
head -c 4096 /dev/urandom > "$work/random.onnx"
expect_error "random onnx" "random.onnx" "$tessera" compile "$work/random.onnx"
expect_error "missing onnx" "nothere.onnx" "$tessera" compile "$work/nothere.onnx"
head -c 3000 "$work/m.tsm" > "$work/truncated.tsm"
expect_error "truncated tsm" "truncated.tsm" "$tessera" run "$work/truncated.tsm" --input "$src/models/fashion_mnist/sample_0.npy"
cp "$work/m.tsm" "$work/flipped.tsm"
printf '\x55' | dd of="$work/flipped.tsm" bs=1 seek=5000 conv=notrunc 2> /dev/null
expect_error "corrupt tsm" "checksum" "$tessera" run "$work/flipped.tsm" --input "$src/models/fashion_mnist/sample_0.npy"
expect_error "wrong config" "configuration" "$tessera" run "$work/m.tsm" --config small --input "$src/models/fashion_mnist/sample_0.npy"
# A float32 .npy of shape (1, 1, 14, 14): header padded to 64 bytes, then zeros.
write_npy() {
  local header="{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 14, 14), }"
  while [ $(( (10 + ${#header} + 1) % 64 )) -ne 0 ]; do header="$header "; done
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( ${#header} + 1 )))\\x00"; printf '%s\n' "$header"; head -c $((196 * 4)) /dev/zero; } > "$1"
}
write_npy "$work/small.npy"
expect_error "wrong input shape" "input 'image'" "$tessera" run "$work/m.tsm" --input "$work/small.npy"
# An int8 .npy for the float input: the dtype is named.
write_int8_npy() {
  local header="{'descr': '|i1', 'fortran_order': False, 'shape': (1, 1, 28, 28), }"
  while [ $(( (10 + ${#header} + 1) % 64 )) -ne 0 ]; do header="$header "; done
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( ${#header} + 1 )))\\x00"; printf '%s\n' "$header"; head -c 784 /dev/zero; } > "$1"
}
write_int8_npy "$work/int8.npy"
expect_error "wrong input dtype" "int8" "$tessera" run "$work/m.tsm" --input "$work/int8.npy"
expect_error "too many inputs" "1 input" "$tessera" run "$work/m.tsm" --input "$work/small.npy" --input "$work/small.npy"
expect_error "unknown input name" "no input named 'nope'" "$tessera" run "$work/m.tsm" --input "nope=$src/models/fashion_mnist/sample_0.npy"
expect_error "labels as calibration images" "not an IDX image file" "$tessera" compile "$model" --calibrate /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz
mkdir -p "$work/wrongcalib" && cp "$work/small.npy" "$work/wrongcalib/"
expect_error "calibration of the wrong shape" "takes" "$tessera" compile "$model" --calibrate "$work/wrongcalib"
mkdir -p "$work/emptycalib"
expect_error "empty calibration dir" "no .npy" "$tessera" compile "$model" --calibrate "$work/emptycalib"
sin=/usr/share/libonnx-testdata/data/node/test_sin/model.onnx
if [ -f "$sin" ]; then
  expect_error "unsupported op" "Sin" "$tessera" compile "$sin"
fi

# A generator: 16 stacked latents run one after another, their images tiled into a PNG.
gen=$src/models/fashion_mnist/dcgan
png_size() { python3 -c "import struct,sys; b=open(sys.argv[1],'rb').read(24); assert b[:8]==b'\x89PNG\r\n\x1a\n'; print('%dx%d' % struct.unpack('>II', b[16:24]))" "$1"; }
expect_ok "generator png" "$tessera" run "$gen/generator.onnx" --calibrate "$gen/calib" --input "$gen/reference_latents.npy" \
  --png "$work/grid.png" --output-dir "$work/gen-out"
grep -q "16 samples" "$work/out" || fail "generator: the 16 stacked latents did not run as 16 samples"
grep -q "image_range metadata" "$work/out" || fail "generator png: not drawn by the model's image_range"
[ "$(png_size "$work/grid.png")" = "118x118" ] || fail "generator png: $(png_size "$work/grid.png"), not 4x4 tiles of 28x28 with 2-pixel gaps"
python3 -c "import ast,sys; b=open(sys.argv[1],'rb').read(); h=ast.literal_eval(b[10:10+int.from_bytes(b[8:10],'little')].decode()); assert h['shape']==(16,1,28,28), h" "$work/gen-out/image.npy" || fail "generator: stacked output"
# Each stacked sample runs on its own input: latents 0 and 1 stacked give, second, what latent 1 alone gives.
python3 - "$gen/calib/latent_00.npy" "$gen/calib/latent_01.npy" "$work/two.npy" <<'PY'
import sys
def data(path):
    b = open(path, 'rb').read()
    return b[10 + int.from_bytes(b[8:10], 'little'):]
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 64, 1, 1), }"
header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
open(sys.argv[3], 'wb').write(b'\x93NUMPY\x01\x00' + len(header).to_bytes(2, 'little') + header.encode() + data(sys.argv[1]) + data(sys.argv[2]))
PY
expect_ok "two stacked latents" "$tessera" run "$gen/generator.onnx" --calibrate "$gen/calib" --input "$work/two.npy" --output-dir "$work/two-out"
expect_ok "latent 1 alone" "$tessera" run "$gen/generator.onnx" --calibrate "$gen/calib" --input "$gen/calib/latent_01.npy" --output-dir "$work/one-out"
python3 -c "
import sys
def data(p):
    b = open(p, 'rb').read(); return b[10 + int.from_bytes(b[8:10], 'little'):]
two, one = data(sys.argv[1]), data(sys.argv[2])
assert len(two) == 2 * len(one) and two[len(one):] == one and two[:len(one)] != one
" "$work/two-out/image.npy" "$work/one-out/image.npy" || fail "stacked samples: the second output is not latent 1's alone"
expect_error "png refuses to overwrite" "exists" "$tessera" run "$gen/generator.onnx" --calibrate "$gen/calib" --input "$gen/reference_latents.npy" --png "$work/grid.png"
expect_error "png of a classifier" "no output of the model is an image" "$tessera" run "$work/m.tsm" --input "$src/models/fashion_mnist/sample_0.npy" --png "$work/c.png"
expect_error "png range" "is not a range LO,HI" "$tessera" run "$gen/generator.onnx" --calibrate "$gen/calib" --input "$gen/reference_latents.npy" --png "$work/g2.png" --png-range 1,-1
# A detector: its boxes printed and drawn on the input image.
det=$src/models/shapes_detector
expect_ok "detector boxes" "$tessera" run "$det/detector.onnx" --calibrate "$det/calib.npy" --input "$det/sample_0.png" --png "$work/boxes.png" --json
python3 - "$work/out" "$det/sample_boxes.json" <<'PY' || fail "detector: the boxes are not the sample's objects"
import json, sys
got = json.load(open(sys.argv[1]))["boxes"]
truth = json.load(open(sys.argv[2]))
def iou(a, b):
    w = max(0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])); h = max(0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    return w * h / (a[2] * a[3] + b[2] * b[3] - w * h)
for label, *box in truth:
    assert any(g["label"] == label and iou([g["x"], g["y"], g["w"], g["h"]], box) > 0.5 for g in got), (label, box, got)
PY
[ "$(png_size "$work/boxes.png")" = "64x64" ] || fail "detector png: $(png_size "$work/boxes.png")"
expect_error "score threshold" "score-threshold" "$tessera" run "$det/detector.onnx" --calibrate "$det/calib.npy" --input "$det/sample_0.png" --score-threshold 2

if [ $failures -ne 0 ]; then echo "$failures model CLI check(s) failed"; exit 1; fi
echo "all model CLI checks passed"
