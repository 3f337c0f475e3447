#!/bin/bash
# Generated host code against the interpreter, bit for bit: the JIT on a target, or a linked AOT executable.
# usage: aot_test.sh jit TESSERA SOURCE_DIR TARGET
#        aot_test.sh link TESSERA SOURCE_DIR EXECUTABLE TARGET [RUNNER...]   (RUNNER: e.g. qemu-arm -L /usr/arm-linux-gnueabihf)
set -u
mode=$1 tessera=$2 src=$3
shift 3
fm=$src/models/fashion_mnist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$src/tests/cli/checks.sh"
# run CMD...: the command succeeds (its output in $work/log, shown on failure).
run() { if "$@" > "$work/log" 2>&1; then ok; return 0; fi; bad "exit $?: $*"; sed 's/^/    /' "$work/log" | tail -15; return 1; }
fail() { bad "$@"; }
pass() { ok; echo "ok: $*"; }

if [ "$mode" = jit ]; then
  target=$1
  # The three shipped files (post-training int8, QDQ, QOperator: quantize, fold, dequantize and a
  # float bias add on the host), and the float file with --host-float (every layer on the host:
  # convolutions, max pooling, the residual add, Gemm), and the vision transformer (LayerNorm's
  # Pow, Sqrt and Div, GELU's Erf, softmax, the attention's crop and padding around its
  # segments), two inputs each (the float sample, the PGM image).
  run "$tessera" compile "$fm/fashion_cnn.onnx" --calibrate "$fm/calib" -o "$work/ptq.tsm"
  run "$tessera" compile "$fm/fashion_cnn_qdq.onnx" -o "$work/qdq.tsm"
  run "$tessera" compile "$fm/fashion_cnn_qop.onnx" -o "$work/qop.tsm"
  run "$tessera" compile "$fm/fashion_cnn.onnx" --host-float -o "$work/float.tsm"
  run "$tessera" compile "$fm/vit/vit.onnx" --calibrate "$fm/calib" -o "$work/vit.tsm"
  for m in ptq qdq qop float vit; do
    for input in sample_0.npy sample_0.pgm; do
      for codegen in interp jit; do
        run "$tessera" run "$work/$m.tsm" --target "$target" --input "$fm/$input" --host-codegen "$codegen" \
          --no-layer-cycles --output-dir "$work/$m-$input-$codegen" || continue
      done
      if cmp -s "$work/$m-$input-interp/logits.npy" "$work/$m-$input-jit/logits.npy"; then
        pass "$m $input on $target: JIT == interpreter"
      else
        fail "$m $input on $target: the JIT's logits differ from the interpreter's"
      fi
    done
  done
  grep -q "ORC JIT" "$work/log" || fail "run --host-codegen jit does not say the JIT ran"
  # Bad input named.
  expect 1 "--host-codegen llvm" -- "$tessera" run "$work/qdq.tsm" --input "$fm/sample_0.npy" --host-codegen llvm
  expect 1 "--timeline and --export-sim need" -- "$tessera" run "$work/qdq.tsm" --input "$fm/sample_0.npy" --host-codegen jit --timeline "$work/t.json"
  expect 1 "--triple riscv64-linux-gnu: is not a supported target triple" -- "$tessera" compile "$work/qdq.tsm" --emit obj --triple riscv64-linux-gnu -o "$work/x.o"
  expect 1 "--emit asm" -- "$tessera" compile "$work/qdq.tsm" --emit asm -o "$work/x.s"
  expect 1 "give -o FILE" -- "$tessera" compile "$work/qdq.tsm" --emit obj
  expect 1 "--name 9lives: is not a C identifier" -- "$tessera" compile "$work/qdq.tsm" --emit ll --name 9lives
  # An integer MatMul (an ONNX node test's model) stays on the host, where nothing lowers it.
  matmulinteger=/usr/share/libonnx-testdata/data/node/test_matmulinteger/model.onnx
  expect 1 "MatMulInteger 'MatMulInteger_0' \\(opset 11\\): host operator MatMulInteger has no LLVM code generation" -- \
    "$tessera" compile "$matmulinteger" --emit ll
  run "$tessera" compile "$work/qdq.tsm" --emit ll -o "$work/qdq.ll"
  grep -q "define i32 @qdq_run" "$work/qdq.ll" || fail "--emit ll: no qdq_run in the IR"
  # Optimized: a different module (LLVM's O2 pipeline ran on it).
  run "$tessera" compile "$work/qdq.tsm" --emit ll --optimized -o "$work/qdq-opt.ll"
  grep -q "define i32 @qdq_run" "$work/qdq-opt.ll" || fail "--emit ll --optimized: no qdq_run in the IR"
  cmp -s "$work/qdq.ll" "$work/qdq-opt.ll" && fail "--emit ll --optimized: the same IR as unoptimized"
  expect 1 "--optimized: applies to --emit ll only" -- "$tessera" compile "$work/qdq.tsm" --emit obj --optimized -o "$work/y.o"
  # Shared libraries per triple: linked by its compiler driver, exporting the descriptor and the run
  # function, leaving the runtime's entry points to the program that loads them; the header beside.
  for triple in x86_64-linux-gnu aarch64-linux-gnu armv7a-linux-gnueabihf; do
    mkdir -p "$work/$triple"
    run "$tessera" compile "$work/qdq.tsm" --emit shared --triple $triple --name fm -o "$work/$triple/fm.so" || continue
    readelf -h "$work/$triple/fm.so" | grep -q "DYN" || fail "--emit shared --triple $triple: not a shared object"
    readelf -h "$work/$triple/fm.so" | grep -q "Machine:.*$(case $triple in x86*) echo X86-64;; aarch64*) echo AArch64;; arm*) echo ARM;; esac)" ||
      fail "--emit shared --triple $triple: wrong machine"
    nm -D "$work/$triple/fm.so" | grep -q " [TR] fm_run$" || fail "--emit shared --triple $triple: fm_run not exported"
    nm -D "$work/$triple/fm.so" | grep -q " [DR] fm_model$" || fail "--emit shared --triple $triple: fm_model not exported"
    nm -D "$work/$triple/fm.so" | grep -q " U tessera_aot_run_segment$" || fail "--emit shared --triple $triple: no runtime reference"
    grep -q "int fm_run(TesseraAotSession" "$work/$triple/fm.h" || fail "--emit shared --triple $triple: no header"
  done
elif [ "$mode" = link ]; then
  exe=$1 target=$2
  shift 2
  # The reference is the x86-64 interpreter on fsim: every target and architecture must match it.
  run "$tessera" run "$fm/fashion_cnn_qdq.onnx" --input "$fm/sample_0.npy" --no-layer-cycles --output-dir "$work/ref"
  if run "$@" "$exe" "$target" "$work/aot.raw" "$fm/sample_0.npy"; then
    cat "$work/log"
    bytes=$(stat -c %s "$work/aot.raw")
    if [ "$bytes" -gt 0 ] && tail -c "$bytes" "$work/ref/logits.npy" | cmp -s - "$work/aot.raw"; then
      pass "${*:+$* }$exe on $target: logits == tessera run's (interpreter, x86-64, fsim)"
    else
      fail "$exe: logits differ from tessera run's"
    fi
  fi
  expect 1 "the model's input takes 3136" -- "$@" "$exe" "$target" "$work/x.raw" "$work/ref/logits.npy"
  expect 1 "nosuchtarget" -- "$@" "$exe" nosuchtarget "$work/x.raw" "$fm/sample_0.npy"
else
  echo "usage: aot_test.sh jit|link ..." >&2
  exit 2
fi
echo "aot_test $mode: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
