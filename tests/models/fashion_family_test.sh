#!/usr/bin/env bash
# One trained Fashion-MNIST model (models/fashion_mnist/): the first COUNT (all 10,000) test images on a target, Tessera's int8 top-1 within MAX_GAP points of the float model's, at least MIN_MAC_SHARE of the MACs on the accelerator.
# usage: fashion_family_test.sh TESSERA_BINARY MODEL.onnx CALIB_DIR MAX_GAP_POINTS [TARGET] [MIN_MAC_SHARE] [COUNT]
set -u
tessera=$1 model=$2 calib=$3 gap=$4 target=${5:-fsim} share=${6:-0} count=${7:-10000}
data=/usr/share/datasets/fashion-mnist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ! -f "$data/t10k-images-idx3-ubyte.gz" ]; then
  echo "FAIL: $data has no test set (install dataset-fashion-mnist)"
  exit 1
fi
if ! "$tessera" eval "$model" --calibrate "$calib" --target "$target" --json --count "$count" \
  --dataset "$data/t10k-images-idx3-ubyte.gz" "$data/t10k-labels-idx1-ubyte.gz" > "$work/eval.json" 2> "$work/err"; then
  echo "FAIL: tessera eval exited non-zero: $(head -c 3000 "$work/err")"
  exit 1
fi
python3 - "$work/eval.json" "$gap" "$model" "$share" "$count" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
gap, model, share, count = float(sys.argv[2]), sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
t, f = d["tessera"], d["host_float"]
print(f"{model}: {t['layers_on_accelerator']} of {t['layers']} layers, {100 * t['accelerator_mac_share']:.1f}% of MACs "
      f"on the accelerator; Tessera top-1 {100 * t['top1']:.2f}%, float {100 * f['top1']:.2f}% "
      f"(gap {100 * (f['top1'] - t['top1']):.2f} points) on {d['images']} images in {d['seconds']:.1f} s")
if d["images"] != count:
    sys.exit(f"FAIL: {d['images']} images evaluated, not {count}")
if f["top1"] - t["top1"] > gap / 100:
    sys.exit(f"FAIL: the int8 top-1 is more than {gap} points below the float model's")
if t["accelerator_mac_share"] < share:
    sys.exit(f"FAIL: {100 * t['accelerator_mac_share']:.1f}% of MACs on the accelerator, below {100 * share:.0f}%")
PY
