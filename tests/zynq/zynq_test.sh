#!/usr/bin/env bash
# The zynq target against fake boards (tessera-fake-zynq: files for the registers and the DMA buffer, tsim's RTL in another process): runtime suite, regression, CLI, cache maintenance, timeouts, faults and bad devices.
# The HLS bitstream (bitstream=hls) likewise against tessera-fake-zynq --bitstream hls.
# Usage: zynq_test.sh PATH/TO/tessera PATH/TO/tessera-fake-zynq PATH/TO/tessera_runtime_tests [TSIM_CONFIGS]
# (TSIM_CONFIGS: the configs tsim's RTL was built for, comma-separated; default "default")
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../cli/checks.sh"
TESSERA=$(realpath "${1:?usage: zynq_test.sh TESSERA FAKE RUNTIME_TESTS}")
FAKE=$(realpath "${2:?}")
RUNTIME_TESTS=$(realpath "${3:?}")
TSIM_CONFIGS=${4:-default}
if [[ ",$TSIM_CONFIGS," != *,default,* ]]; then
  echo "zynq_test: skipped: tsim is not built for config default, which the fake boards here simulate"
  exit 77
fi
WORK=$(mktemp -d)
fakes=()
cleanup() {
  for pid in "${fakes[@]}"; do kill "$pid" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"


# start_fake NAME ARGS...: a fake board in $WORK/NAME, its pid in FAKE_PID once its files exist.
start_fake() {
  local name=$1
  shift
  "$FAKE" --dir "$WORK/$name" --quiet "$@" > "$WORK/$name.log" 2>&1 &
  FAKE_PID=$!
  fakes+=("$FAKE_PID")
  for _ in $(seq 1 300); do
    [ -e "$WORK/$name/ready" ] && return 0
    kill -0 "$FAKE_PID" 2>/dev/null || break
    sleep 0.1
  done
  bad "fake board $name did not start: $(cat "$WORK/$name.log")"
  return 1
}
# stop_fake PID NAME: SIGTERM, then its exit status in FAKE_STATUS and its summary in FAKE_SUMMARY.
stop_fake() {
  kill -TERM "$1"
  wait "$1"
  FAKE_STATUS=$?
  FAKE_SUMMARY=$(grep -E "runs, .* violations" "$WORK/$2.log")
}
opts() { echo "regs-file=$WORK/$1/regs,buffer=$WORK/$1/buffer,buffer-sysfs=$WORK/$1/sysfs"; }

# --- the runtime suite (VTA's hardware tests through the C API) on the board's config, bit-exact
# with the host reference. InstructionSpansOnTimedTargets is left out: a board counts cycles but
# has no instruction trace port (the Vivado flow leaves it unconnected).
start_fake board || exit 1
board_pid=$FAKE_PID
out=$(TESSERA_TEST_TARGETS=zynq TESSERA_TARGET_OPTIONS="$(opts board),config=default" "$RUNTIME_TESTS" \
  --gtest_filter='AllTargetsAndConfigs/*/zynq_default:-*InstructionSpansOnTimedTargets*' --gtest_brief=1 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -qE "PASSED.* 6 tests" <<<"$out"; then ok; else bad "runtime suite on zynq: $out"; fi

# The other configs tsim was built for, each on a board of its own (other element sizes and buses).
for c in ${TSIM_CONFIGS//,/ }; do
  [ "$c" = default ] && continue
  start_fake "board_$c" --config "$c" || exit 1
  pid=$FAKE_PID
  out=$(TESSERA_TEST_TARGETS=zynq TESSERA_TARGET_OPTIONS="$(opts "board_$c"),config=$c" "$RUNTIME_TESTS" \
    --gtest_filter="AllTargetsAndConfigs/*/zynq_$c:-*InstructionSpansOnTimedTargets*" --gtest_brief=1 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && grep -qE "PASSED.* 6 tests" <<<"$out"; then ok; else bad "runtime suite on zynq, config $c: $out"; fi
  stop_fake "$pid" "board_$c"
  [ "$FAKE_STATUS" -eq 0 ] && ok || bad "fake board of $c: exit $FAKE_STATUS, $FAKE_SUMMARY"
done

# --- random programs: every DRAM byte equal to fsim's, every cycle count equal to tsim's
Z="zynq:$(opts board | tr , :)"
out=$("$TESSERA" regress --config default --programs 40 --seed 77 --targets "fsim,tsim,$Z" 2>&1)
summary=$(tail -1 <<<"$out")
if grep -qE "0 mismatches$" <<<"$summary"; then ok; else bad "regress fsim,tsim,zynq: $summary"; fi
tsim_cycles=$(sed -nE 's/.*; tsim simulated ([0-9]+) cycles.*/\1/p' <<<"$summary")
zynq_cycles=$(sed -nE 's/.*; zynq:[^ ]* simulated ([0-9]+) cycles.*/\1/p' <<<"$summary")
if [ -n "$tsim_cycles" ] && [ "$tsim_cycles" = "$zynq_cycles" ]; then ok; else bad "cycles: tsim $tsim_cycles, zynq $zynq_cycles"; fi

# Two processes on one board: their runs take turns (a lock on the register file), or they would
# overwrite each other's buffer bytes and registers.
"$TESSERA" regress --config default --programs 30 --seed 100 --targets "fsim,$Z" --no-reproducers --quiet > conc1.txt 2>&1 &
conc_pid=$!
out2=$("$TESSERA" regress --config default --programs 30 --seed 300 --targets "fsim,$Z" --no-reproducers --quiet 2>&1)
wait "$conc_pid"
if grep -qE "30 programs.* 0 mismatches$" <<<"$(tail -1 <<<"$out2")" && grep -qE "30 programs.* 0 mismatches$" <<<"$(tail -1 conc1.txt)"; then ok; else
  bad "two processes on one board: $(tail -1 conc1.txt) / $(tail -1 <<<"$out2")"; fi

# --- tessera sim: the same dump as fsim
cp "$(dirname "${BASH_SOURCE[0]}")/../cli/add_imm.s" prog.s  # the small program the shell tests share
"$TESSERA" asm prog.s -o prog.bin -u prog.uops > /dev/null
head -c 64 /dev/urandom > acc.bin
simargs=(--load acc.bin@0x10000 --load prog.uops@0x20000 --insn prog.bin)
board_flags=(-o "regs-file=$WORK/board/regs" -o "buffer=$WORK/board/buffer" -o "buffer-sysfs=$WORK/board/sysfs")
expect 0 "ran 6 instructions on zynq" -- "$TESSERA" sim --target zynq "${board_flags[@]}" "${simargs[@]}" --dump 0x30000:16:zynq.out
"$TESSERA" sim "${simargs[@]}" --dump 0x30000:16:fsim.out > /dev/null
cmp -s zynq.out fsim.out && ok || bad "tessera sim --target zynq dumped other bytes than fsim"
expect 0 "cycles" -- env TESSERA_TARGET_OPTIONS="$(opts board)" "$TESSERA" sim --target zynq "${simargs[@]}" --stats

# --- faults: the RTL's fault registers reported in tsim's words
printf 'LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1\nGEMM deps=- uop_bgn=0 uop_end=1 iter_out=3 iter_in=1 dst_factor_out=2047\nFINISH\nUOP dst=0 src=0 wgt=0\n' > fault.s
"$TESSERA" asm fault.s -o fault.bin -u fault.uops > /dev/null
faultargs=(--load fault.uops@0x20000 --insn fault.bin)
tsim_err=$("$TESSERA" sim --target tsim "${faultargs[@]}" 2>&1 | sed -E 's/ \(the accelerator faulted after [0-9]+ cycles\)//')
zynq_err=$(env TESSERA_TARGET_OPTIONS="$(opts board)" "$TESSERA" sim --target zynq "${faultargs[@]}" 2>&1 |
  sed -E 's/ \(the accelerator faulted after [0-9]+ cycles\)//')
if grep -q "SRAM\|acc" <<<"$tsim_err" && [ "$tsim_err" = "$(sed 's/ on zynq/ on tsim/' <<<"$zynq_err")" ]; then ok; else
  bad "fault report differs: tsim '$tsim_err', zynq '$zynq_err'"; fi
# The device is usable after a fault: the next run completes.
expect 0 "ran 6 instructions on zynq" -- env TESSERA_TARGET_OPTIONS="$(opts board)" "$TESSERA" sim --target zynq "${simargs[@]}"

# --- a hung run: a program that deadlocks on the RTL never signals done; the timeout names every
# module's state from the status registers, and the wait_cycles bound reads CYCLES.
printf 'GEMM deps=pop_prev uop_bgn=0 uop_end=0 iter_out=1 iter_in=1\nFINISH\n' > dead.s
"$TESSERA" asm dead.s -o dead.bin > /dev/null
start_fake hung || exit 1
hung_pid=$FAKE_PID
start=$(date +%s%N)
expect 1 "run of 2 instructions on fake device .*hung/regs: no done or fault after 0.5 s \(target option timeout=\); CTRL reads 0x1, CYCLES [0-9]+; compute instruction 0 \(GEMM\) waits for a token on queue l2g \(load->compute\), which is empty" \
  -- env TESSERA_TARGET_OPTIONS="$(opts hung),timeout=0.5" "$TESSERA" sim --target zynq --insn dead.bin
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
[ "$elapsed_ms" -lt 5000 ] && ok || bad "a 0.5 s timeout took $elapsed_ms ms"
expect 1 "still running an earlier run \(CTRL reads 0x1\)" \
  -- env TESSERA_TARGET_OPTIONS="$(opts hung),timeout=0.5" "$TESSERA" sim --target zynq "${simargs[@]}"
kill "$hung_pid"
start_fake cycles || exit 1
expect 1 "exceeds wait_cycles=50: still running after [0-9]+ cycles; compute instruction 0 \(GEMM\) waits for a token" \
  -- env TESSERA_TARGET_OPTIONS="$(opts cycles),timeout=5" "$TESSERA" sim --target zynq --insn dead.bin --wait-cycles 50
kill "$FAKE_PID"
# A device that never answers a start.
start_fake deaf --ignore-start || exit 1
expect 1 "no done or fault after 0.3 s .*CTRL reads 0x1, CYCLES 0; fetch idle; load idle; compute idle; store idle" \
  -- env TESSERA_TARGET_OPTIONS="$(opts deaf),timeout=0.3" "$TESSERA" sim --target zynq "${simargs[@]}"
kill "$FAKE_PID"

# --- bad devices and options, each named
start_fake narrow --window 1024 || exit 1
expect 1 "narrow/regs: the register file holds 1024 bytes; the accelerator's register window is 4096 bytes" \
  -- env TESSERA_TARGET_OPTIONS="$(opts narrow)" "$TESSERA" sim --target zynq "${simargs[@]}"
kill "$FAKE_PID"
start_fake tiny --size 8192 || exit 1
expect 1 "the run needs [0-9]+ bytes of the DMA buffer .*tiny/buffer .* but the buffer holds 8192 bytes; give u-dma-buf a larger size" \
  -- env TESSERA_TARGET_OPTIONS="$(opts tiny)" "$TESSERA" sim --target zynq "${simargs[@]}"
kill "$FAKE_PID"
# A register window that is not the RTL's: an idle Vitis HLS block reads ap_idle (0x4) at 0x00.
start_fake hlsmap || exit 1
printf '\x04\x00\x00\x00' | dd of="$WORK/hlsmap/regs" bs=1 seek=0 conv=notrunc status=none
expect 1 "hlsmap/regs: CTRL reads 0x4 with FAULT_CAUSE 0x0, which the accelerator's host interface never shows .*HLS bitstream.*give the target option bitstream=hls" \
  -- env TESSERA_TARGET_OPTIONS="$(opts hlsmap)" "$TESSERA" sim --target zynq "${simargs[@]}"
kill "$FAKE_PID"
expect 1 "UIO device 'tessera' \(the default of target option uio=\): no UIO device of that name in /sys/class/uio" \
  -- "$TESSERA" sim --target zynq "${simargs[@]}"
expect 1 "--bogus: unknown argument" -- "$FAKE" --bogus
expect 1 "--dir: required" -- "$FAKE"
expect 1 "--size: must be a non-zero multiple of 4096" -- "$FAKE" --dir "$WORK/odd" --size 1000
expect 0 "usage: tessera-fake-zynq" -- "$FAKE" --help
expect 1 "uio=nosuch: no UIO device of that name in /sys/class/uio" -- "$TESSERA" sim --target zynq -o uio=nosuch "${simargs[@]}"
expect 1 "/nonexistent: cannot open the fake device's register file" \
  -- "$TESSERA" sim --target zynq -o regs-file="$WORK/nonexistent" "${simargs[@]}"
expect 1 "/nonexistent/buffer: cannot open the DMA buffer" \
  -- "$TESSERA" sim --target zynq -o regs-file="$WORK/board/regs" -o buffer=/nonexistent/buffer -o buffer-sysfs="$WORK/board/sysfs" "${simargs[@]}"
expect 1 "/dev/udmabuf7: no u-dma-buf attributes for it in /sys/class/u-dma-buf/udmabuf7" \
  -- "$TESSERA" sim --target zynq -o regs-file="$WORK/board/regs" -o buffer=/dev/udmabuf7 "${simargs[@]}"
expect 1 "give one of the options uio, devmem and regs-file, not several" \
  -- "$TESSERA" sim --target zynq -o uio=/dev/uio0 -o regs-file="$WORK/board/regs" "${simargs[@]}"
expect 1 "devmem=0x43c00010: the register window's physical address must be page aligned" \
  -- "$TESSERA" sim --target zynq -o devmem=0x43c00010 "${simargs[@]}"
expect 1 "timeout=soon: expected a number of seconds" -- env TESSERA_TARGET_OPTIONS="$(opts board),timeout=soon" "$TESSERA" sim --target zynq "${simargs[@]}"
expect 1 "the bitstream runs config default \(target option config=\), not small" \
  -- env TESSERA_TARGET_OPTIONS="$(opts board),config=default" "$TESSERA" sim --target zynq --config small "${simargs[@]}"
expect 1 "target option 'colour': unknown for target zynq" -- "$TESSERA" sim --target zynq -o colour=red "${simargs[@]}"

# --- the HLS bitstream (bitstream=hls): the four stage IPs by the generated register map, served
# by the HLS design's stage functions (tessera-fake-zynq --bitstream hls).
hopts() { echo "$(opts "$1"),bitstream=hls"; }
start_fake hlsboard --bitstream hls || exit 1
hls_pid=$FAKE_PID
out=$(TESSERA_TEST_TARGETS=zynq TESSERA_TARGET_OPTIONS="$(hopts hlsboard),config=default" "$RUNTIME_TESTS" \
  --gtest_filter='AllTargetsAndConfigs/*/zynq_default:-*InstructionSpansOnTimedTargets*' --gtest_brief=1 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -qE "PASSED.* 6 tests" <<<"$out"; then ok; else bad "runtime suite on zynq bitstream=hls: $out"; fi
ZH="zynq:$(hopts hlsboard | tr , :)"
out=$("$TESSERA" regress --config default --programs 40 --seed 91 --targets "fsim,hls,$ZH" 2>&1)
if grep -qE "40 programs.* 0 mismatches$" <<<"$(tail -1 <<<"$out")"; then ok; else bad "regress fsim,hls,zynq bitstream=hls: $(tail -3 <<<"$out")"; fi
hls_flags=(-o "regs-file=$WORK/hlsboard/regs" -o "buffer=$WORK/hlsboard/buffer" -o "buffer-sysfs=$WORK/hlsboard/sysfs" -o bitstream=hls)
expect 0 "ran 6 instructions on zynq" -- "$TESSERA" sim --target zynq "${hls_flags[@]}" "${simargs[@]}" --dump 0x30000:16:zynq_hls.out
cmp -s zynq_hls.out fsim.out && ok || bad "tessera sim --target zynq -o bitstream=hls dumped other bytes than fsim"
# A fault, then a deadlock, each in the hls target's words; the stream FIFOs they leave are drained
# before the next run, which completes (the fake counts undrained leftovers as violations).
hls_err=$("$TESSERA" sim --target hls "${faultargs[@]}" 2>&1 >/dev/null)
zynq_err=$("$TESSERA" sim --target zynq "${hls_flags[@]}" "${faultargs[@]}" 2>&1 >/dev/null)
if grep -q "accumulator (dst) index reaches" <<<"$hls_err" && [ "$hls_err" = "$zynq_err" ]; then ok; else
  bad "bitstream=hls fault report differs: hls '$hls_err', zynq '$zynq_err'"; fi
hls_err=$("$TESSERA" sim --target hls --insn dead.bin 2>&1 >/dev/null)
zynq_err=$("$TESSERA" sim --target zynq "${hls_flags[@]}" --insn dead.bin 2>&1 >/dev/null)
if grep -q "deadlock at instruction 0" <<<"$hls_err" && [ "$hls_err" = "$zynq_err" ]; then ok; else
  bad "bitstream=hls deadlock report differs: hls '$hls_err', zynq '$zynq_err'"; fi
expect 0 "ran 6 instructions on zynq" -- "$TESSERA" sim --target zynq "${hls_flags[@]}" "${simargs[@]}" --dump 0x30000:16:zynq_hls2.out
cmp -s zynq_hls2.out fsim.out && ok || bad "bitstream=hls after a fault and a deadlock: other bytes than fsim"
stop_fake "$hls_pid" hlsboard
if [ "$FAKE_STATUS" -eq 0 ] && [[ "$FAKE_SUMMARY" =~ ([0-9]+)\ runs,\ ([0-9]+)\ syncs\ for\ the\ device,\ ([0-9]+)\ for\ the\ CPU,\ 0\ violations ]] &&
  [ "${BASH_REMATCH[1]}" -gt 40 ] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[3]}" -gt 0 ]; then ok; else
  bad "fake HLS board: exit $FAKE_STATUS, '$FAKE_SUMMARY' $(grep violation "$WORK/hlsboard.log" | head -3)"; fi
# A block that never raises ap_done: the timeout names the block and its register.
start_fake hlsdeaf --bitstream hls --ignore-start || exit 1
start=$(date +%s%N)
expect 1 "run of 6 instructions on fake device .*hlsdeaf/regs: the HLS bitstream's block load never raised ap_done: load's AP_CTRL \(offset 0x0 of its window at 0x10000\) reads 0x1 after 0.3 s \(target option timeout=\)" \
  -- env TESSERA_TARGET_OPTIONS="$(hopts hlsdeaf),timeout=0.3" "$TESSERA" sim --target zynq "${simargs[@]}"
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
[ "$elapsed_ms" -lt 5000 ] && ok || bad "a 0.3 s timeout on bitstream=hls took $elapsed_ms ms"
# The block is left started: the next run refuses it rather than hanging.
expect 1 "hlsdeaf/regs: load's AP_CTRL \(offset 0x0 of its window at 0x10000\) reads 0x1, not an idle Vitis HLS block" \
  -- env TESSERA_TARGET_OPTIONS="$(hopts hlsdeaf),timeout=0.3" "$TESSERA" sim --target zynq "${simargs[@]}"
kill "$FAKE_PID"
# Bad options and mismatched bitstreams, each named.
expect 1 "target option bitstream=vhdl: expected rtl \(the RTL bitstream, the default\) or hls" \
  -- "$TESSERA" sim --target zynq "${board_flags[@]}" -o bitstream=vhdl "${simargs[@]}"
expect 1 "board/regs: the register file holds 4096 bytes; the HLS bitstream's register window \(its four stage IPs, bitstream=hls\) is 262144 bytes" \
  -- "$TESSERA" sim --target zynq "${board_flags[@]}" -o bitstream=hls "${simargs[@]}"
expect 1 "hlsboard/regs: the register file holds 262144 bytes; the accelerator's register window is 4096 bytes" \
  -- env TESSERA_TARGET_OPTIONS="$(opts hlsboard)" "$TESSERA" sim --target zynq "${simargs[@]}"
expect 1 "--window 4096: too small for the HLS bitstream's four stage IPs \(262144 bytes\)" -- "$FAKE" --dir "$WORK/odd" --bitstream hls --window 4096
expect 1 "--bitstream verilog: expected rtl or hls" -- "$FAKE" --dir "$WORK/odd" --bitstream verilog
expect 1 "--config small: the fake HLS bitstream is compiled for config default only" -- "$FAKE" --dir "$WORK/odd" --bitstream hls --config small

# --- tessera serve offering the board to remote:HOST:PORT/zynq clients
"$TESSERA" serve --port 0 --port-file port --target zynq --config default -q --target-option config=default \
  --target-option "regs-file=$WORK/board/regs" --target-option "buffer=$WORK/board/buffer" \
  --target-option "buffer-sysfs=$WORK/board/sysfs" > serve.log 2>&1 &
serve_pid=$!
fakes+=("$serve_pid")
for _ in $(seq 1 100); do [ -s port ] && break; sleep 0.1; done
expect 0 "all 1024 outputs match the host reference" -- "$TESSERA" demo --target "remote:127.0.0.1:$(cat port)/zynq" --m 32 --n 32 --k 32
expect 1 "this server's device runs config default only" -- "$TESSERA" demo --target "remote:127.0.0.1:$(cat port)/zynq" --config small
kill "$serve_pid"
wait "$serve_pid" 2>/dev/null

# --- cache maintenance: every run of the session synced its buffer for the device before the
# start and its results for the CPU after done, or the fake names the slip and exits 3.
stop_fake "$board_pid" board
if [ "$FAKE_STATUS" -eq 0 ] && [[ "$FAKE_SUMMARY" =~ ([0-9]+)\ runs,\ ([0-9]+)\ syncs\ for\ the\ device,\ ([0-9]+)\ for\ the\ CPU,\ 0\ violations ]] &&
  [ "${BASH_REMATCH[1]}" -gt 50 ] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[3]}" -gt 0 ]; then ok; else
  bad "fake board: exit $FAKE_STATUS, '$FAKE_SUMMARY'"; fi
# A driver that starts a run without syncing for the device: the fake reports it.
start_fake raw || exit 1
printf '\x01\x00\x00\x00' | dd of="$WORK/raw/regs" bs=1 seek=0 conv=notrunc status=none
sleep 0.5
stop_fake "$FAKE_PID" raw
if [ "$FAKE_STATUS" -eq 3 ] && grep -q "run 1 started without sync_for_device" "$WORK/raw.log"; then ok; else
  bad "a start without sync_for_device: exit $FAKE_STATUS, $(cat "$WORK/raw.log")"; fi

echo "zynq_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
