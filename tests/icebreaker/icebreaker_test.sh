#!/usr/bin/env bash
# The icebreaker target's serial path: tessera-fake-icebreaker serves the simulated board on a pseudo-terminal; the CLI runs programs through it and its errors are checked.
# Usage: icebreaker_test.sh PATH/TO/tessera PATH/TO/tessera-fake-icebreaker PATH/TO/tessera_runtime_tests
set -u
TESSERA=$1
FAKE=$2
RUNTIME_TESTS=$3
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d)
fails=0
ok() { :; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect RC TEXT -- COMMAND...: the command exits RC and prints TEXT (stdout or stderr).
expect() {
  local rc=$1 text=$2; shift 3
  local out got
  out=$("$@" 2>&1); got=$?
  if [[ $got -ne $rc ]] || ! grep -qF -- "$text" <<<"$out"; then
    bad "'$*' exited $got (wanted $rc) and printed: $out (wanted '$text')"
  fi
}
board_pid=
cleanup() {
  if [[ -n $board_pid ]]; then kill "$board_pid" 2>/dev/null; wait "$board_pid" 2>/dev/null; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK" || exit 1

"$FAKE" --seconds 100 > board.txt 2> board.err &
board_pid=$!
for _ in $(seq 100); do [[ -s board.txt ]] && break; sleep 0.05; done
PTY=$(head -1 board.txt)
[[ -e $PTY ]] || { echo "FAIL: tessera-fake-icebreaker printed no pseudo-terminal: $(cat board.txt board.err)"; exit 1; }

# --- a program through the serial port, dumped as fsim dumps it
"$TESSERA" asm --config pico "$HERE/add_imm_pico.s" -o prog.bin -u prog.uops > /dev/null
head -c 64 /dev/urandom > acc.bin
simargs=(--config pico --load acc.bin@0x2000 --load prog.uops@0x4000 --insn prog.bin)
expect 0 "ran 6 instructions on icebreaker" -- "$TESSERA" sim --target icebreaker -o "device=$PTY" "${simargs[@]}" --dump 0x8000:16:board.out
"$TESSERA" sim "${simargs[@]}" --dump 0x8000:16:fsim.out > /dev/null
cmp -s board.out fsim.out && ok || bad "tessera sim --target icebreaker dumped other bytes than fsim"
# The same through icebreaker-sim (in-process channel).
expect 0 "ran 6 instructions on icebreaker-sim" -- "$TESSERA" sim --target icebreaker-sim "${simargs[@]}" --dump 0x8000:16:sim.out
cmp -s sim.out fsim.out && ok || bad "tessera sim --target icebreaker-sim dumped other bytes than fsim"

# --- a short regression over the serial port, bit-exact against fsim
out=$("$TESSERA" regress --config pico --programs 4 --seed 9 --targets "fsim,icebreaker:device=$PTY:baud=115200" 2>&1)
grep -qE "4 programs.* 0 mismatches" <<<"$(tail -1 <<<"$out")" && ok || bad "regress over the pty: $out"

# --- the runtime suite over the serial port (TESSERA_TEST_TARGETS names a target the listings leave out)
out=$(TESSERA_TEST_TARGETS=icebreaker TESSERA_TARGET_OPTIONS="device=$PTY" "$RUNTIME_TESTS" \
  --gtest_filter='AllTargetsAndConfigs/*/icebreaker_pico' --gtest_brief=1 2>&1)
rc=$?
if [[ $rc -eq 0 ]] && grep -qE "PASSED.* 7 tests" <<<"$out"; then ok; else bad "runtime suite over the pty: $out"; fi

# --- errors name what is wrong
expect 1 "give the board's serial port with --target-option device=" -- "$TESSERA" sim --target icebreaker "${simargs[@]}"
expect 1 "$WORK/nope: cannot open the serial port" -- "$TESSERA" sim --target icebreaker -o "device=$WORK/nope" "${simargs[@]}"
expect 1 "not a serial port" -- "$TESSERA" sim --target icebreaker -o "device=$WORK/acc.bin" "${simargs[@]}"
# A second driver on a port another process holds (flock(1) here) is refused, not interleaved.
expect 1 "$PTY: the serial port is in use by another process" -- flock "$PTY" "$TESSERA" sim --target icebreaker -o "device=$PTY" "${simargs[@]}"
expect 1 "target option baud=12345" -- "$TESSERA" sim --target icebreaker -o "device=$PTY" -o baud=12345 "${simargs[@]}"
expect 1 "built for config pico only, not default" -- "$TESSERA" sim --target icebreaker-sim --load acc.bin@0x2000 --insn prog.bin
# A LOAD spanning 256 KiB cannot be packed into the 128 KiB board memory.
cat > big.s <<'ASM'
LOAD.ACC deps=- sram_base=0 dram_base=0x100 y_size=64 x_size=1 x_stride=256
FINISH
ASM
"$TESSERA" asm --config pico big.s -o big.bin > /dev/null
expect 1 "but the board memory window is [0x0, 0x20000), 128 KiB" -- "$TESSERA" sim --target icebreaker-sim --config pico --insn big.bin
expect 1 "but the board memory window is [0x0, 0x20000), 128 KiB" -- "$TESSERA" sim --target icebreaker -o "device=$PTY" --config pico --insn big.bin

# --- a deadlock and an unbalanced FINISH are reported as fsim reports them, long before the timeout
cat > deadlock.s <<'ASM'
GEMM deps=pop_prev reset=1 uop_bgn=0 uop_end=1 iter_out=1 iter_in=1
FINISH
ASM
"$TESSERA" asm --config pico deadlock.s -o deadlock.bin > /dev/null
msg="deadlock at instruction 0: no stage can make progress: compute stage: instruction 0 (GEMM) waits for a token on queue l2g"
expect 1 "$msg" -- "$TESSERA" sim --config pico --insn deadlock.bin
expect 1 "$msg" -- "$TESSERA" sim --target icebreaker-sim -o timeout=5 --config pico --insn deadlock.bin
expect 1 "$msg" -- "$TESSERA" sim --target icebreaker -o "device=$PTY" -o timeout=20 --config pico --insn deadlock.bin
cat > unbalanced.s <<'ASM'
LOAD.INP deps=pop_next sram_base=3 dram_base=0x900 y_size=1 x_size=1 x_stride=1
FINISH
ASM
"$TESSERA" asm --config pico unbalanced.s -o unbalanced.bin > /dev/null
msg="load instruction 0 (LOAD.INP) never executed (waits for a token on queue g2l (compute->load), which is empty)"
expect 1 "$msg" -- "$TESSERA" sim --config pico --insn unbalanced.bin
expect 1 "$msg" -- "$TESSERA" sim --target icebreaker-sim -o timeout=5 --config pico --insn unbalanced.bin

kill -0 "$board_pid" 2>/dev/null || bad "tessera-fake-icebreaker died: $(cat board.err)"
if [[ $fails -ne 0 ]]; then echo "$fails check(s) failed"; exit 1; fi
echo "icebreaker serial path: all checks passed"
