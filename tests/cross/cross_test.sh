#!/bin/bash
# Cross-builds the minimal runtime and an AOT-compiled model for ARCH, runs it under qemu-user, bit-exact with the x86-64 interpreter.
# usage: cross_test.sh ARCH TESSERA SOURCE_DIR BUILD_DIR   (ARCH: armhf or arm64)
set -u
arch=$1 tessera=$2 src=$3 build=$4
case $arch in
  armhf) triple=armv7a-linux-gnueabihf; prefix=arm-linux-gnueabihf; qemu=qemu-arm ;;
  # -R 16G: qemu-aarch64 otherwise takes ~20 s to map the simulated DRAM's terabyte-sized
  # reservation; within 16 GiB the DRAM reserves less (its allocations stay below 4 GiB) and fsim's
  # decoder checks every LOAD/STORE range against what it got.
  arm64) triple=aarch64-linux-gnu; prefix=aarch64-linux-gnu; qemu="qemu-aarch64 -R 16G" ;;
  *) echo "cross_test.sh: unknown ARCH '$arch' (armhf or arm64)" >&2; exit 2 ;;
esac
for tool in $prefix-g++ ${qemu%% *}; do
  command -v $tool > /dev/null || { echo "cross_test.sh: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
start=$(date +%s)
# The build tree persists between runs (an incremental rebuild is seconds); the model is emitted anew.
dir=$build/tests/cross/$arch
mkdir -p "$dir/model"
model=$src/models/fashion_mnist/fashion_cnn_qdq.onnx
"$tessera" compile "$model" --emit obj --triple $triple -o "$dir/model/fashion_cnn_qdq.o" --force > "$dir/emit.log" 2>&1 ||
  { cat "$dir/emit.log"; exit 1; }
cmake -S "$src/tests/cross" -B "$dir/build" -G Ninja --toolchain "$src/cmake/toolchains/$arch.cmake" \
  -DTESSERA_SOURCE_DIR="$src" -DTESSERA_GENERATED_DIR="$build/generated" \
  -DTESSERA_AOT_OBJECT="$dir/model/fashion_cnn_qdq.o" -DTESSERA_AOT_SYMBOL=fashion_cnn_qdq > "$dir/configure.log" 2>&1 ||
  { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir/build" -j2 > "$dir/build.log" 2>&1 || { tail -40 "$dir/build.log"; exit 1; }
built=$(date +%s)
file "$dir/build/aot_model" 2>/dev/null | sed 's/^/  /'
echo "cross build ($arch): $((built - start)) s"
# shellcheck disable=SC2086  # $qemu is the emulator and its options
bash "$src/tests/aot/aot_test.sh" link "$tessera" "$src" "$dir/build/aot_model" fsim $qemu -L /usr/$prefix
rc=$?
echo "cross test ($arch): $(( $(date +%s) - start )) s in all"
exit $rc
