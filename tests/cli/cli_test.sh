#!/usr/bin/env bash
# End-to-end tests of the tessera CLI: every verb, its outputs, and its errors on bad input.
# Usage: cli_test.sh PATH/TO/tessera [TSIM_CONFIGS]   (configs tsim was built for, comma-separated)
set -u
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
TESSERA=$(realpath "${1:?usage: cli_test.sh PATH/TO/tessera [TSIM_CONFIGS]}")
TSIM_CONFIGS=${2:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

# Checks that need a model the build left out are counted and make the whole test a skip (exit
# 77, ctest SKIP_RETURN_CODE) rather than a pass that silently ran less.
skipped=()
tsim_built_for() {  # tsim_built_for CONFIG|any
  if [ "$1" = any ] && [ -n "$TSIM_CONFIGS" ]; then return 0; fi
  if [[ ",$TSIM_CONFIGS," == *,$1,* ]]; then return 0; fi
  skipped+=("tsim checks on $1 (line ${BASH_LINENO[0]})")
  return 1
}


# --- dispatch and help
expect 0 "commands:" -- "$TESSERA" --help
expect 2 "unknown command 'frobnicate'" -- "$TESSERA" frobnicate
expect 2 "usage" -- "$TESSERA"
for verb in info disasm asm sim demo run eval; do
  expect 0 "usage: tessera $verb" -- "$TESSERA" "$verb" --help
done
expect 2 "unrecognised option|unknown option" -- "$TESSERA" info --bogus

# --- info
expect 0 "GEMM core 1x16x16" -- "$TESSERA" info
expect 0 "GEMM core 1x4x4" -- "$TESSERA" info --config small
expect 0 "GEMM core 2x16x8" -- "$TESSERA" info -c batch2
expect 0 "INP_BUFF_DEPTH +2048" -- "$TESSERA" info
expect 0 "64\.\.79 +y_size" -- "$TESSERA" info
expect 0 '"LOG_BLOCK_IN": 4' -- "$TESSERA" info --format json
expect 0 "define VTA_BATCH 1" -- "$TESSERA" info --format cpp
expect 0 "localparam int unsigned BLOCK_OUT = 4;" -- "$TESSERA" info --format sv --config small
expect 0 "small" -- "$TESSERA" info --list
expect 0 "pico +\(board config\) The iCEBreaker" -- "$TESSERA" info --list
expect 1 "no such config file" -- "$TESSERA" info --config /nonexistent.json
printf '{\n  "LOG_INP_WIDTH": 3,\n  "LOG_BATCH": \n}\n' > broken.json
expect 1 "broken.json:4:1: invalid JSON" -- "$TESSERA" info --config broken.json
printf '{"LOG_INP_WIDTH":4,"LOG_WGT_WIDTH":3,"LOG_ACC_WIDTH":5,"LOG_BATCH":0,"LOG_BLOCK":4,"LOG_UOP_BUFF_SIZE":15,"LOG_INP_BUFF_SIZE":15,"LOG_WGT_BUFF_SIZE":18,"LOG_ACC_BUFF_SIZE":17}' > wide.json
expect 1 "key LOG_INP_WIDTH: unsupported width" -- "$TESSERA" info --config wide.json
expect 1 "unknown format" -- "$TESSERA" info --format yaml
# TESSERA_CONFIG is every config-taking verb's default; an empty one means unset; --config wins.
expect 0 "GEMM core 1x4x4" -- env TESSERA_CONFIG=small "$TESSERA" info
expect 0 "GEMM core 1x16x16" -- env TESSERA_CONFIG= "$TESSERA" info
expect 0 "GEMM core 2x16x8" -- env TESSERA_CONFIG=small "$TESSERA" info -c batch2
for verb in info disasm asm sim demo regress compile run-op bench run eval; do
  expect 0 "\\(=small\\)" -- env TESSERA_CONFIG=small "$TESSERA" "$verb" --help
done
for verb in sim demo run-op bench run eval; do
  expect 0 "\\(=hls\\)" -- env TESSERA_TARGET=hls "$TESSERA" "$verb" --help
done

# --- asm / disasm round trip
cp "$(dirname "${BASH_SOURCE[0]}")/add_imm.s" prog.s  # the small program the shell tests share
expect 0 "assembled 6 instructions and 1 micro-ops" -- "$TESSERA" asm prog.s -o prog.bin -u prog.uops
[ "$(stat -c %s prog.bin)" = 96 ] && ok || bad "prog.bin is not 96 bytes"
expect 0 "2: ALU.ADD deps=push_next" -- "$TESSERA" disasm prog.bin
"$TESSERA" disasm prog.bin > listing.s 2>&1
expect 0 "assembled 6" -- "$TESSERA" asm listing.s -o again.bin
cmp -s prog.bin again.bin && ok || bad "disassembly does not assemble back to the same bytes"
expect 0 "UOP dst=0 src=0 wgt=0" -- "$TESSERA" disasm --uops prog.uops
expect 1 "refusing to overwrite" -- "$TESSERA" asm prog.s -o prog.bin -u prog.uops
expect 0 "assembled" -- "$TESSERA" asm prog.s -o prog.bin -u prog.uops --force
expect 1 "needs.*--uop-output|give --uop-output" -- "$TESSERA" asm prog.s -o other.bin
printf 'GEMM deps=- uop_bgn=0 iter_out=99999\n' > overflow.s
expect 1 "overflow.s:1:1: .*iter_out" -- "$TESSERA" asm overflow.s -o o.bin
printf 'LOAD.INP deps=- sram_base=0\nALU.FOO deps=-\n' > badop.s
expect 1 "badop.s:2:1: unknown ALU operation 'FOO'" -- "$TESSERA" asm badop.s -o o.bin
head -c 40 prog.bin > truncated.bin
expect 1 "truncated" -- "$TESSERA" disasm truncated.bin
expect 1 "nosuch: no such config file" -- env TESSERA_CONFIG=nosuch "$TESSERA" disasm prog.bin
expect 1 "nosuch: no such config file" -- env TESSERA_CONFIG=nosuch "$TESSERA" asm prog.s -o never.bin

# --- sim: the program above on hand-made data
# 16 int32 accumulators 0, 1, ..., 15 at 0x400*64 = 0x10000; the micro-op at 0x8000*4 = 0x20000.
python3 -c "import struct,sys; sys.stdout.buffer.write(struct.pack('<16i', *range(16)))" > acc.bin
expect 0 "ran 6 instructions on fsim" -- "$TESSERA" sim --load acc.bin@0x10000 --load prog.uops@0x20000 --insn prog.bin --dump 0x30000:16:out.bin --stats
python3 -c "import sys; d=open('out.bin','rb').read(); sys.exit(0 if list(d)==[(i-3)&255 for i in range(16)] else 1)" && ok || bad "sim output is not acc-3 narrowed"
expect 0 "ALU element ops +16" -- "$TESSERA" sim --load acc.bin@0x10000 --load prog.uops@0x20000 --insn prog.bin --stats
"$TESSERA" asm prog.s -o prog.bin -u prog.uops --force > /dev/null
printf 'original' > keep.bin
expect 1 "refusing to overwrite" -- "$TESSERA" sim --load acc.bin@0x10000 --load prog.uops@0x20000 --insn prog.bin --dump 0x30000:16:keep.bin
[ "$(cat keep.bin)" = original ] && ok || bad "an existing dump file was modified"
expect 1 "overlaps acc.bin" -- "$TESSERA" sim --load acc.bin@0x10000 --load prog.uops@0x10010 --insn prog.bin
expect 1 "--load acc.bin@0xZZ: address: '0xZZ' is not" -- "$TESSERA" sim --load acc.bin@0xZZ --insn prog.bin
expect 1 "page 0" -- "$TESSERA" sim --load acc.bin@0x10 --insn prog.bin
expect 1 "truncated" -- "$TESSERA" sim --insn truncated.bin
expect 1 "unknown or not built" -- "$TESSERA" sim --target warp --insn prog.bin
printf 'GEMM deps=pop_prev uop_bgn=0 uop_end=0 iter_out=1 iter_in=1\nFINISH\n' > dead.s
"$TESSERA" asm dead.s -o dead.bin > /dev/null
expect 1 "deadlock at instruction 0.*l2g" -- "$TESSERA" sim --insn dead.bin
# An error raised inside a target plugin reaches the CLI's handler (the executable carries the C++
# runtime the plugins bind to; two copies would abort the process instead).
expect 1 "tessera sim: error: .*deadlock at instruction 0" -- "$TESSERA" sim --target hls --insn dead.bin
printf 'LOAD.INP deps=- sram_base=2040 dram_base=0x100 y_size=1 x_size=16 x_stride=16\nFINISH\n' > oob.s
"$TESSERA" asm oob.s -o oob.bin > /dev/null
expect 1 "instruction 0 .LOAD.*sram_base.*exceeds the buffer depth 2048" -- "$TESSERA" sim --insn oob.bin
expect 2 "--insn" -- "$TESSERA" sim
# Address and range arguments past what any target can address: an error naming the argument and
# the limit, before anything is sized by them (these once ended in std::bad_alloc).
expect 1 "--insn 0x10000:4294967295: the instruction stream \[0x10000, 0x100000fff0\) reaches past 0x100000000 .*at most 268431360 instructions fit" \
  -- "$TESSERA" sim --insn 0x10000:4294967295
expect 1 "--insn 0x100000000:1: .*reaches past 0x100000000" -- "$TESSERA" sim --insn 0x100000000:1
expect 1 "--insn 0xffffffffffffffff:1: .*at most 0 instructions fit" -- "$TESSERA" sim --insn 0xffffffffffffffff:1
expect 1 "--insn 0x10000:0x100000000: count must be in \[1, 2\^32\)" -- "$TESSERA" sim --insn 0x10000:0x100000000
expect 1 "--insn 0x10000:99999999999999999999: count: '99999999999999999999' is too large" \
  -- "$TESSERA" sim --insn 0x10000:99999999999999999999
expect 1 "--load acc.bin@0xffffffffffffffff: DRAM range .* lies outside" -- "$TESSERA" sim --load acc.bin@0xffffffffffffffff --insn prog.bin
expect 1 "--dump 0xfffffffffffffff0:0x20:x.bin: the range's end lies past 2\^64" \
  -- "$TESSERA" sim --insn prog.bin --dump 0xfffffffffffffff0:0x20:x.bin
expect 1 "--dump 0x1000:0xffffffffffff:x.bin: DRAM range .* lies outside" -- "$TESSERA" sim --insn prog.bin --dump 0x1000:0xffffffffffff:x.bin
[ ! -e x.bin ] && ok || bad "a refused --dump wrote its file"
# A long stream into never-written DRAM fails as a run without FINISH, not by decoding it into host
# memory first (the decoding targets once sized a vector by COUNT).
if [[ ",$TSIM_CONFIGS," == *,default,* ]]; then
  expect 1 "run of 20000000 instructions: the program ended without a FINISH" -- "$TESSERA" sim --target tsim --insn 0x10000:20000000
fi
printf 'GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=16383 iter_in=16383\nFINISH\n' > long.s
"$TESSERA" asm long.s -o long.bin > /dev/null
expect 1 "exceeds wait_cycles=5000" -- "$TESSERA" sim --insn long.bin --wait-cycles 5000

# --- target plugins: loaded only when one of their targets is named, errors naming what failed
# --help and an fsim run load no plugin (so no Verilator or SystemC code); a named target loads its own.
simargs=(--load acc.bin@0x10000 --load prog.uops@0x20000 --insn prog.bin)
loaded_plugins() { LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -oE 'tessera-[a-z0-9_-]+\.so|libsystemc[^ ]*\.so' | sort -u | tr '\n' ' '; }
[ -z "$(loaded_plugins "$TESSERA" --help)" ] && ok || bad "tessera --help loads: $(loaded_plugins "$TESSERA" --help)"
[ -z "$(loaded_plugins "$TESSERA" sim "${simargs[@]}")" ] && ok || bad "an fsim run loads: $(loaded_plugins "$TESSERA" sim "${simargs[@]}")"
[ "$(loaded_plugins "$TESSERA" sim --target hls "${simargs[@]}")" = "tessera-hls.so " ] && ok \
  || bad "an hls run loads: $(loaded_plugins "$TESSERA" sim --target hls "${simargs[@]}")"
expect 0 "ran 6 instructions on fsim" -- "$TESSERA" sim "${simargs[@]}" -o kernels=generic
expect 1 "target option 'kernels': unknown for target hls" -- "$TESSERA" sim --target hls "${simargs[@]}" -o kernels=generic
expect 1 "kernels=avx2: no avx2 kernels for BATCH=1 BLOCK_IN=4 BLOCK_OUT=4" \
  -- "$TESSERA" sim --config small --insn prog.bin -o kernels=avx2
expect 1 "kernels=sse9: unknown kernel set" -- "$TESSERA" sim "${simargs[@]}" -o kernels=sse9
# A manifest whose plugin is missing, and one whose plugin is not a shared object: named, with the loader's error.
mkdir -p plugins
printf '# test\nghost\n' > plugins/tessera-ghost.targets
printf 'broken\n' > plugins/tessera-broken.targets
echo 'not an ELF file' > plugins/tessera-broken.so
expect 1 "target 'ghost': plugin $WORK/plugins/tessera-ghost.so \(listed by $WORK/plugins/tessera-ghost.targets\) cannot be loaded: .*No such file" \
  -- env TESSERA_PLUGIN_PATH="$WORK/plugins" "$TESSERA" sim --target ghost "${simargs[@]}"
# A plugin built on request only (its manifest says how), not built yet: the error gives the command.
printf '# test\n# build: make the-lazy-one\nlazy device\n' > plugins/tessera-lazy.targets
expect 1 "target 'lazy': plugin $WORK/plugins/tessera-lazy.so \(listed by $WORK/plugins/tessera-lazy.targets\) is not built: the build makes it on request only \(make the-lazy-one\)" \
  -- env TESSERA_PLUGIN_PATH="$WORK/plugins" "$TESSERA" sim --target lazy "${simargs[@]}"
expect 1 "target 'broken': plugin $WORK/plugins/tessera-broken.so .* cannot be loaded: .*(invalid ELF header|file too short)" \
  -- env TESSERA_PLUGIN_PATH="$WORK/plugins" "$TESSERA" sim --target broken "${simargs[@]}"
expect 1 "target 'warp': unknown or not built \(available: fsim,.*ghost.*\); no plugin manifest .* in $WORK/plugins, " \
  -- env TESSERA_PLUGIN_PATH="$WORK/plugins" "$TESSERA" sim --target warp "${simargs[@]}"
# A plugin registering a target its manifest does not list (listing would not show it).
cp "$(dirname "$TESSERA")/../lib/tessera/tessera-hls.so" plugins/tessera-fake.so
printf 'fake\n' > plugins/tessera-fake.targets
expect 1 "target 'fake': plugin $WORK/plugins/tessera-fake.so registered target 'hls', which its manifest $WORK/plugins/tessera-fake.targets does not list" \
  -- env TESSERA_PLUGIN_PATH="$WORK/plugins" "$TESSERA" sim --target fake "${simargs[@]}"
# Manifest attributes: a target that needs a device is found by name but never listed; a line the
# runtime cannot read is skipped and named; a name prefix the plugin does not register is an error.
mkdir -p plugins2
printf 'spectre device\n' > plugins2/tessera-spectre.targets
printf 'odd shiny\n' > plugins2/tessera-odd.targets
cp "$(dirname "$TESSERA")/../lib/tessera/tessera-hls.so" plugins2/tessera-family.so
printf 'hls\nfamily:*\n' > plugins2/tessera-family.targets
expect 1 "target 'spectre': plugin $WORK/plugins2/tessera-spectre.so \(listed by .*\) cannot be loaded" \
  -- env TESSERA_PLUGIN_PATH="$WORK/plugins2" "$TESSERA" sim --target spectre "${simargs[@]}"
out=$(env TESSERA_PLUGIN_PATH="$WORK/plugins2" "$TESSERA" sim --target warp "${simargs[@]}" 2>&1)
[[ "$out" == *"available: fsim,"* && "$out" != *spectre* && "$out" != *family* ]] && ok || bad "a device target or a prefix is listed: $out"
[[ "$out" == *"manifest lines skipped: $WORK/plugins2/tessera-odd.targets:1: unknown attribute 'shiny'"* ]] && ok \
  || bad "a manifest line with an unknown attribute: $out"
expect 1 "target 'family:x': plugin $WORK/plugins2/tessera-family.so is listed by $WORK/plugins2/tessera-family.targets as providing the names family:\* but did not register that prefix" \
  -- env TESSERA_PLUGIN_PATH="$WORK/plugins2" "$TESSERA" sim --target family:x "${simargs[@]}"
# A copy of the CLI elsewhere still finds this build's plugins (the build's plugin directory ends the search path).
cp "$TESSERA" ./tessera-copy
expect 0 "ran 6 instructions on hls" -- ./tessera-copy sim --target hls "${simargs[@]}"

# --- start-up: the executable maps no protobuf, ONNX, libpng, zlib or libcrypto; the model commands and serve load their modules
loaded_libs() { LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -oE 'lib(protobuf|onnx_proto|png16|z|crypto)\.so[.0-9]*|tessera-cli-(model|serve)\.so' | sort -u | tr '\n' ' '; }
[ -z "$(loaded_libs "$TESSERA" --help)" ] && ok || bad "tessera --help loads: $(loaded_libs "$TESSERA" --help)"
[ -z "$(loaded_libs "$TESSERA" sim "${simargs[@]}")" ] && ok || bad "an fsim run loads: $(loaded_libs "$TESSERA" sim "${simargs[@]}")"
[[ "$(loaded_libs "$TESSERA" run --help)" == *tessera-cli-model.so*libprotobuf* || "$(loaded_libs "$TESSERA" run --help)" == *libprotobuf*tessera-cli-model.so* ]] \
  && ok || bad "tessera run --help loads: $(loaded_libs "$TESSERA" run --help)"
[[ "$(loaded_libs "$TESSERA" serve --help)" == *libcrypto*tessera-cli-serve.so* ]] \
  && ok || bad "tessera serve --help loads: $(loaded_libs "$TESSERA" serve --help)"
expect 1 "tessera run: error: nope.tsm" -- "$TESSERA" run nope.tsm
expect 2 "see 'tessera run --help'" -- "$TESSERA" run --bogus
# A copy of the CLI elsewhere still finds the module (the build's plugin directory ends the search path).
mkdir -p elsewhere && cp "$TESSERA" elsewhere/tessera
expect 1 "tessera run: error: nope.tsm: cannot open" -- elsewhere/tessera run nope.tsm

# --- stream: generated streams in other toolchains' shapes, exported and replayed byte for byte
expect 0 "pool-rows .*268,000|pool-rows" -- "$TESSERA" stream --list
expect 1 "stream shape 'nope': unknown \(shapes: matmul, lenet" -- "$TESSERA" stream nope
expect 2 "a SHAPE is required" -- "$TESSERA" stream
expect 0 "15 instructions .* ran on fsim" -- bash -c "'$TESSERA' stream matmul | tr '\n' ' '"
expect 0 "wrote s1/manifest.txt" -- "$TESSERA" stream matmul -o s1
expect 1 "is not empty" -- "$TESSERA" stream matmul -o s1
expect 0 "wrote s1/manifest.txt" -- "$TESSERA" stream matmul -o s1 --force
replay() {  # replay DIR [TARGET]: the manifest's command line (on TARGET), then every dump against its expected bytes
  local dir=$1 target=${2:-fsim} cmd f
  cmd=$(grep '^command ' "$dir/manifest.txt" | sed -e 's/^command tessera //' -e "s/--target fsim/--target $target/")
  (cd "$dir" && "$TESSERA" $cmd > /dev/null) || return 1
  for f in "$dir"/segment0/expected-*.bin; do cmp -s "$f" "${f/expected-/out-}" || return 1; done
}
replay s1 && ok || bad "the matmul stream's replay differs from its expected bytes"
# Inputs past 64 KiB are mapped rather than copied; the bytes are the same.
expect 0 "wrote s2/manifest.txt" -- "$TESSERA" stream eltwise-add --scale 0.1 --seed 3 -o s2
replay s2 && ok || bad "the eltwise-add stream's replay differs from its expected bytes"
replay s2 && ok || bad "a second replay (dumps replaced) differs"
# Another simulator of the instruction set leaves the same bytes (the HLS design, config small).
expect 0 "wrote s3/manifest.txt" -- "$TESSERA" stream lenet --config small -o s3
replay s3 hls && ok || bad "the lenet stream on hls differs from fsim's bytes"

# --- sim on tsim, the RTL under Verilator (when the build has it)
if tsim_built_for any; then
  simargs=(--load acc.bin@0x10000 --load prog.uops@0x20000 --insn prog.bin)
  expect 0 "ran 6 instructions on tsim" -- "$TESSERA" sim --target tsim "${simargs[@]}" --dump 0x30000:16:tout.bin
  cmp -s out.bin tout.bin && ok || bad "tsim and fsim outputs differ"
  expect 0 "ALU element ops +16" -- "$TESSERA" sim --target tsim "${simargs[@]}" --stats
  expect 0 "DRAM write beats +2$" -- "$TESSERA" sim --target tsim "${simargs[@]}" --stats
  expect 0 "compute busy +[1-9]" -- "$TESSERA" sim --target tsim "${simargs[@]}" --stats
  expect 0 "[1-9][0-9]* cycles simulated at [0-9]+ cycles/s" -- "$TESSERA" sim --target tsim "${simargs[@]}"
  expect 0 "ran 6 instructions on tsim" -- "$TESSERA" sim --target tsim "${simargs[@]}" --trace wave.fst
  [ -s wave.fst ] && ok || bad "--trace wrote no waveform"
  size=$(stat -c %s wave.fst)
  expect 1 "trace wave.fst: refusing to overwrite" -- "$TESSERA" sim --target tsim "${simargs[@]}" --trace wave.fst
  [ "$(stat -c %s wave.fst)" = "$size" ] && ok || bad "an existing trace file was modified"
  expect 0 "ran 6" -- "$TESSERA" sim --target tsim "${simargs[@]}" --trace wave.fst --force
  expect 0 "ran 6" -- "$TESSERA" sim --target tsim "${simargs[@]}" --target-option trace=wave2.fst
  [ -s wave2.fst ] && ok || bad "--target-option trace= wrote no waveform"
  expect 1 "writes no waveforms" -- "$TESSERA" sim "${simargs[@]}" --trace nowave.fst
  [ ! -e nowave.fst ] && ok || bad "fsim created a trace file"
  # The C API's global session (demo) still holds tsim, with its waveform open, when the process
  # exits: it must close before the plugin's static objects end (it once died with SIGBUS there).
  expect 0 "all 256 outputs match" -- env TESSERA_TARGET_OPTIONS=trace=demo.fst "$TESSERA" demo --target tsim --config small --m 16 --n 16 --k 16
  [ -s demo.fst ] && ok || bad "demo with trace= wrote no waveform"
  expect 1 "target option 'bogus': unknown for target tsim" -- "$TESSERA" sim --target tsim "${simargs[@]}" -o bogus=1
  expect 1 "target option 'mem-latency': unknown for target fsim" -- "$TESSERA" sim "${simargs[@]}" -o mem-latency=9
  expect 1 "target option mem-latency=soon: expected" -- "$TESSERA" sim --target tsim "${simargs[@]}" -o mem-latency=soon
  expect 1 "TESSERA_TARGET_OPTIONS: entry 'oops' is not KEY=VALUE" -- env TESSERA_TARGET_OPTIONS=oops "$TESSERA" sim --target tsim "${simargs[@]}"
  expect 0 "ran 6" -- env TESSERA_TARGET_OPTIONS=mem-latency=300,mem-bytes-per-cycle=2 "$TESSERA" sim --target tsim "${simargs[@]}"
  for c in default small batch2; do
    case ",$TSIM_CONFIGS," in
      *",$c,"*) ;;
      *) expect 1 "tsim is not built for config '$c'" -- "$TESSERA" sim --target tsim --config "$c" --insn prog.bin ;;
    esac
  done
  expect 1 "deadlock after [0-9]+ cycles: .*compute instruction 0 \(GEMM\) waits for a token on queue l2g \(load->compute\), which is empty" \
    -- "$TESSERA" sim --target tsim --insn dead.bin -o watchdog-cycles=20000
  expect 1 "exceeds wait_cycles=5000" -- "$TESSERA" sim --target tsim --insn long.bin --wait-cycles 5000
  expect 1 "instruction 3 \(STORE.OUT\): DRAM write error response .*write burst at 0x30000" \
    -- "$TESSERA" sim --target tsim "${simargs[@]}" -o mem-fault-page=0x30000
  expect 1 "instruction 0 .LOAD.*sram_base.*exceeds the buffer depth 2048" -- "$TESSERA" sim --target tsim --insn oob.bin
fi

# --- regress: random programs on two targets, compared byte for byte
expect 0 "usage: tessera regress" -- "$TESSERA" regress --help
expect 0 "regress: 5 programs in .* 0 mismatches$" -- "$TESSERA" regress --programs 5 --targets fsim,fsim --config small
expect 0 "^\[1/1\] seed 42: [0-9]+ insns .*\| ok$" -- "$TESSERA" regress --programs 1 --seed 42 --targets fsim,fsim:kernels=generic
"$TESSERA" regress --programs 1 --seed 9 --print-program --targets fsim,fsim > p1.txt 2>&1
"$TESSERA" regress --programs 1 --seed 9 --print-program --targets fsim,fsim:kernels=generic > p2.txt 2>&1
grep -q "stream at 0x" p1.txt && diff <(grep -E '^[0-9]+: ' p1.txt) <(grep -E '^[0-9]+: ' p2.txt) > /dev/null && ok ||
  bad "regress --print-program: seed 9 does not list the same program twice"
expect 2 "unknown or not built" -- "$TESSERA" regress --targets fsim,warp
expect 2 "at least two targets" -- "$TESSERA" regress --targets fsim
expect 2 "expected small, medium or large" -- "$TESSERA" regress --size huge
expect 2 "--programs must be at least 1" -- "$TESSERA" regress --programs 0
expect 2 "no such config file" -- "$TESSERA" regress --config /nonexistent.json
expect 2 "unknown for target fsim" -- "$TESSERA" regress --targets fsim,fsim:color=red
if tsim_built_for small; then
  expect 0 "regress: 3 programs .*tsim simulated [0-9]+ cycles .* 0 mismatches$" -- "$TESSERA" regress --programs 3 --config small --targets fsim,tsim
  # DRAM error responses on the page of the instruction stream make tsim fail where fsim does not:
  # a mismatch (exit status 1), which shrinks to the bare FINISH still fetched from that page.
  page=$("$TESSERA" regress --programs 1 --seed 1 --config small --print-program --targets fsim,fsim |
    sed -n 's/^stream at \(0x[0-9a-f]*\):$/\1/p')
  expect 1 "MISMATCH seed 1, config small .*tsim:mem-fault-page=$page failed where fsim completed" \
    -- "$TESSERA" regress --programs 1 --seed 1 --config small --targets "fsim,tsim:mem-fault-page=$page"
  expect 1 "shrunk seed 1 from [0-9]+ to 1 instructions" \
    -- "$TESSERA" regress --programs 1 --seed 1 --config small --targets "fsim,tsim:mem-fault-page=$page"
  expect 0 "targets fsim,tsim; .* 0 mismatches$" -- "$TESSERA" regress --programs 2 --config small
fi
# A config tsim was not verilated for is refused by name.
cat >"$WORK/unbuilt.json" <<'JSON'
{ "NAME": "unbuilt", "TARGET": "sim", "HW_VER": "0.0.2", "LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3,
  "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0, "LOG_BLOCK": 4, "LOG_UOP_BUFF_SIZE": 14, "LOG_INP_BUFF_SIZE": 15,
  "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17, "LOG_BUS_WIDTH": 6 }
JSON
expect 2 "tsim is not built for config 'unbuilt'" -- "$TESSERA" regress --config "$WORK/unbuilt.json" --targets fsim,tsim
# Without tsim for a config, regress compares fsim's kernel sets instead.
if [[ ",$TSIM_CONFIGS," == *,batch2,* ]]; then
  expect 0 "targets fsim,tsim; .* 0 mismatches$" -- "$TESSERA" regress --programs 2 --config batch2
else
  expect 2 "tsim is not built for config" -- "$TESSERA" regress --config batch2 --targets fsim,tsim
  expect 0 "targets fsim,fsim:kernels=generic; 0 mismatches$" -- "$TESSERA" regress --programs 2 --config batch2
fi

# --- bench: the GEMM/conv suite, and the same programs on a second target side by side
expect 0 "usage: tessera bench" -- "$TESSERA" bench --help
expect 0 "gemm 32x32x32 \\+requant .* ok$" -- "$TESSERA" bench gemm --config small --m 32 --n 32 --k 32
expect 1 "--compare nope: .*unknown or not built|target 'nope': unknown or not built" \
  -- "$TESSERA" bench gemm --config small --m 32 --n 32 --k 32 --compare nope
available=$("$TESSERA" bench gemm --config small --m 32 --n 32 --k 32 --compare nope 2>&1)
# --compare replaces the session whose config the rows are printed with (a use-after-free the
# sanitizer build caught); the second table must still show the first config's ideal cycles.
expect 0 "the same programs on target fsim" \
  -- "$TESSERA" bench gemm --config small --m 32 --n 32 --k 32 --target fsim --compare fsim
if [[ "$available" != *hls-sc* ]]; then skipped+=("hls-sc --compare rtl-sc (hls-sc not built)"); fi
if [[ "$available" == *hls-sc* ]] && tsim_built_for small; then
  expect 0 "^gemm 32x32x32 +[0-9,]+ +[0-9,]+ +[0-9]+\.[0-9]{3}$" \
    -- "$TESSERA" bench gemm --config small --m 32 --n 32 --k 32 --target hls-sc --compare rtl-sc
  expect 0 "workload +hls-sc cyc +rtl-sc cyc +ratio" \
    -- "$TESSERA" bench gemm --config small --m 32 --n 32 --k 32 --target hls-sc --compare rtl-sc
fi
if [[ ",$TSIM_CONFIGS," != *,batch2,* ]]; then
  expect 1 "--compare tsim: tsim is not built for config 'batch2'" \
    -- "$TESSERA" bench gemm --config batch2 --m 32 --n 32 --k 32 --target fsim --compare tsim
fi

# --- compile / run-op: one operator, every stage printable, checked against the reference
conv="conv2d cin=20 h=9 w=7 cout=24 kernel=3 stride=2 pad=1 relu=1"
expect 0 "usage: tessera compile" -- "$TESSERA" compile --help
expect 0 "usage: tessera run-op" -- "$TESSERA" run-op --help
# compile's usage line names every option its help lists (by long or short name, or in capitals
# when positional), but --help itself.
help=$("$TESSERA" compile --help 2>&1)
usage=$(head -n 1 <<<"$help")
while read -r short long; do
  [ "$long" = --help ] && continue
  positional=$(tr a-z A-Z <<<"${long#--}")
  if grep -qF -- "$long" <<<"$usage" || grep -qw -- "$positional" <<<"$usage" ||
    { [ "$short" != - ] && grep -qF -- "$short " <<<"$usage"; }; then ok
  else bad "compile's usage line lacks $long: $usage"; fi
done < <(sed -nE 's/^ +(-[a-z]) \[ (--[a-z-]+) \].*/\1 \2/p; s/^ +(--[a-z-]+).*/- \1/p' <<<"$help")
expect 0 "^SRAM occupancy +inp " -- "$TESSERA" compile "$conv" --config small
for stage in "after operator" "after tiling search" "after loop nest" "after runtime calls" \
  "after instruction selection" "after summary" "VTALoadBuffer2D\(" "VTAUopPush\(" "VTADepPop\(" "FINISH"; do
  expect 0 "$stage" -- "$TESSERA" compile "$conv" --print-after-all
done
expect 0 "all 480 outputs match the reference" -- "$TESSERA" run-op "$conv" --config batch2
expect 0 "all 1000 outputs match the reference" -- "$TESSERA" run-op "dense cin=512 cout=1000"
expect 0 "wrote conv.tprog" -- "$TESSERA" compile "$conv" --config small -o conv.tprog
expect 1 "conv.tprog: file exists; refusing to overwrite" -- "$TESSERA" compile "$conv" --config small -o conv.tprog
expect 0 "all 480 outputs match" -- "$TESSERA" run-op --program conv.tprog --config small
expect 1 "was compiled for config 'small', not 'default'" -- "$TESSERA" run-op --program conv.tprog
head -c 100 conv.tprog > cut.tprog
expect 1 "cut.tprog: checksum mismatch" -- "$TESSERA" run-op --program cut.tprog --config small
expect 1 "unknown key 'colour'" -- "$TESSERA" compile "conv2d cin=4 h=4 w=4 cout=4 colour=3"
expect 1 "unknown operator 'pool'" -- "$TESSERA" compile "pool cin=4"
expect 1 "padding 3x3 must be smaller than the kernel" -- "$TESSERA" compile "conv2d cin=4 h=4 w=4 cout=4 kernel=3 pad=3"
expect 1 "requested tiling: tco=3 does not divide" -- "$TESSERA" compile "$conv" --tiling 3,1,1,1
expect 1 "expected four numbers" -- "$TESSERA" compile "$conv" --tiling 1,1
expect 1 "target 'warp': unknown" -- "$TESSERA" run-op "$conv" --target warp
expect 1 "no operator given" -- "$TESSERA" compile
if tsim_built_for small; then
  expect 0 "ran on tsim: .* cycles .*utilization" -- "$TESSERA" run-op "$conv" --config small --target tsim
fi
expect 0 "all 700 outputs match the reference" -- "$TESSERA" run-op "add c=20 h=5 w=7 shift=1 round=1 mul_a=3 mul_b=-2 relu=1"
expect 0 "all 400 outputs match the reference" -- "$TESSERA" run-op "maxpool c=16 h=9 w=9 kernel=3 stride=2 pad=1" --config batch2
expect 0 "all 512 outputs match the reference" -- "$TESSERA" run-op "avgpool c=32 h=7 w=7 kernel=7 n=16" --config small
expect 0 "padding never wins" -- "$TESSERA" compile "maxpool c=16 h=9 w=9 kernel=3 stride=2 pad=1" --print-after-all
expect 1 "maxpool has no requantization" -- "$TESSERA" compile "maxpool c=16 h=8 w=8 kernel=2 shift=3"
expect 0 "to the output's scale" -- "$TESSERA" compile "avgpool c=32 h=7 w=7 kernel=7 mul=3000 shift=15 round=1"
expect 0 "all 512 outputs match the reference" -- "$TESSERA" run-op "avgpool c=32 h=7 w=7 kernel=7 n=16 mul=3000 shift=15 round=1"
expect 1 "rescale needs mul in" -- "$TESSERA" compile "avgpool c=32 h=7 w=7 kernel=7 mul=3000 shift=15"
expect 0 "outputs match the reference" -- "$TESSERA" run-op "conv2d cin=20 h=7 w=7 cout=40 kernel=3 pad=1 mul=channel clip=channel shift=9 relu=1"
expect 1 "clip takes only" -- "$TESSERA" compile "conv2d cin=16 h=4 w=4 cout=16 kernel=1 clip=7"
expect 1 "belong to conv2d and dense" -- "$TESSERA" compile "add c=16 h=4 w=4 clip=channel"
expect 1 "tci must be 1" -- "$TESSERA" compile "add c=16 h=4 w=4" --tiling 1,1,1,2
if tsim_built_for small; then
  expect 0 "ran on tsim: .* cycles \\(estimate" -- "$TESSERA" run-op "add c=16 h=6 w=6 shift=1" --config small --target tsim
fi
expect 0 "^GAP .* ok" -- "$TESSERA" bench resnet18 --target fsim --config small
expect 0 "^C2-11 .* ok|^total ResNet-18" -- "$TESSERA" bench resnet18 --target fsim --config small
expect 1 "takes only --target, --config and --json" -- "$TESSERA" bench resnet18 --m 4

# --- demo on the small config
expect 0 "all 4096 outputs match" -- "$TESSERA" demo --config small --m 64 --n 64 --k 64
expect 1 "multiples of" -- "$TESSERA" demo --k 10

echo "cli: $passed passed, $failed failed, ${#skipped[@]} groups skipped"
for what in "${skipped[@]}"; do echo "SKIPPED: $what"; done
[ "$failed" -eq 0 ] || exit 1
[ "${#skipped[@]}" -eq 0 ] || exit 77
