#!/usr/bin/env bash
# Regenerates the seed corpora made with the CLI (fsim_exec, program_file, tsm_file): tests/fuzz/make_corpus.sh TESSERA_BINARY.
set -euo pipefail
tessera=$(realpath "${1:?usage: make_corpus.sh TESSERA_BINARY}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# fsim_exec: a count byte (instructions - 1), the instructions, then the data region (micro-ops
# first), as tests/fuzz/fsim_exec.cpp splits its input; from the assembler seeds that assemble.
mkdir -p "$here/corpus/fsim_exec"
for s in "$here"/corpus/asm_text/*.s; do
  name=$(basename "$s" .s)
  "$tessera" asm "$s" -o p.bin -u p.uops --force > /dev/null 2>&1 || continue
  n=$(( $(stat -c %s p.bin) / 16 ))
  [ "$n" -ge 1 ] && [ "$n" -le 64 ] || continue
  { printf "\\x$(printf %02x $((n - 1)))"; cat p.bin; cat p.uops 2>/dev/null || true; head -c 64 /dev/zero | tr '\0' '\003'; } \
    > "$here/corpus/fsim_exec/$name"
done

# program_file and tsm_file: files the compiler writes, without their 8-byte checksum (the harnesses
# append it), for small operators and the shipped QOperator model on the small config.
strip() { head -c $(( $(stat -c %s "$1") - 8 )) "$1" > "$2"; }
mkdir -p "$here/corpus/program_file" "$here/corpus/tsm_file"
i=0
for spec in "conv2d cin=16 h=4 w=4 cout=16 kernel=3 pad=1 relu=1" "dense cin=32 cout=16" \
            "add c=16 h=2 w=2 shift=1 round=1 relu=1" "maxpool c=16 h=4 w=4 kernel=2 stride=2" \
            "avgpool c=16 h=4 w=4 kernel=2 stride=2"; do
  "$tessera" compile "$spec" --config small -o op.bin --force > /dev/null
  strip op.bin "$here/corpus/program_file/$(echo "$spec" | cut -d' ' -f1)_$i"
  i=$((i + 1))
done
"$tessera" compile "$root/models/fashion_mnist/fashion_cnn_qop.onnx" --config small -o m.tsm --force > /dev/null
strip m.tsm "$here/corpus/tsm_file/fashion_cnn_qop_small"
ls "$here"/corpus/fsim_exec "$here"/corpus/program_file "$here"/corpus/tsm_file | wc -l
