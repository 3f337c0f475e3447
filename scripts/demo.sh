#!/usr/bin/env bash
# The main job (`make demo`): the shipped Fashion-MNIST model compiled, its test set classified on fsim
# next to the float model, and one image run on the RTL (tsim) with the per-layer table.
set -euo pipefail
build=${1:-build}
tessera=$build/sw/tessera
model=models/fashion_mnist/fashion_cnn.onnx
data=/usr/share/datasets/fashion-mnist

echo "== 1. compile $model (post-training int8, calibrated on models/fashion_mnist/calib)"
"$tessera" compile "$model" --calibrate models/fashion_mnist/calib -o "$build/fashion_cnn.tsm" --force
echo
echo "== 2. classify the 10,000 test images on fsim; the float model on the host alongside"
"$tessera" eval "$model" --calibrate models/fashion_mnist/calib --target fsim \
  --dataset "$data/t10k-images-idx3-ubyte.gz" "$data/t10k-labels-idx1-ubyte.gz"
echo
echo "== 3. one image on tsim (the Verilated RTL), cycle by cycle"
"$tessera" run "$build/fashion_cnn.tsm" --target tsim --input models/fashion_mnist/sample_0.pgm
