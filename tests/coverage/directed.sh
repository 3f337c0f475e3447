#!/usr/bin/env bash
# Directed programs for what random programs cannot reach: full instruction and token queues, each fault cause, deadlocks.
# Usage: directed.sh PATH/TO/tessera TARGET[:KEY=VALUE...] [COUNTER_REFERENCE]
# e.g. tsim-cov:coverage=DIR (scripts/coverage.sh) or tsim-mut:mutant=N tsim (tests/mutation/mutate.sh).
# Each program is written as text, assembled and run on the target; every run must end as the
# program intends (a clean finish, or the fault it plants) and, where fsim can run it too, leave
# the same DRAM as fsim. With COUNTER_REFERENCE (a target cycle-exact with TARGET, such as tsim for
# tsim-mut), each finished run's counters, cycles included, must also equal that target's.
set -euo pipefail
TESSERA=$(realpath "${1:?usage: directed.sh PATH/TO/tessera TARGET[:KEY=VALUE...]}")
SPEC=${2:?usage: directed.sh PATH/TO/tessera TARGET[:KEY=VALUE...] [COUNTER_REFERENCE]}
COUNTER_REF=${3:-}
IFS=: read -r -a spec_parts <<<"$SPEC"
TARGET=${spec_parts[0]}
TARGET_OPTS=()
for kv in "${spec_parts[@]:1}"; do
  case "$kv" in
    coverage=*) TARGET_OPTS+=(-o "coverage=$(realpath -m "${kv#coverage=}")") ;;
    *=*) TARGET_OPTS+=(-o "$kv") ;;
    *) echo "directed.sh: '$kv' in $SPEC is not KEY=VALUE" >&2; exit 2 ;;
  esac
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
N=600  # more than the queues' 512 entries (INSN_QUEUE_DEPTH, DEP_QUEUE_DEPTH of config default)
# A bound on each run, so that a target which keeps making progress without ending (a livelocked
# mutant) fails instead of hanging: the longest program takes about 3.1 million cycles.
WAIT=${TESSERA_DIRECTED_WAIT_CYCLES:-10000000}
case "$WAIT" in '' | *[!0-9]*) echo "directed.sh: TESSERA_DIRECTED_WAIT_CYCLES='$WAIT' is not a number" >&2; exit 2 ;; esac

uop='LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1'
tiny_gemm() { echo "GEMM deps=$1 reset=1 uop_bgn=0 uop_end=1 iter_out=1 iter_in=1"; }
long_gemm='GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=1000 iter_in=60'
small_load() { echo "LOAD.INP deps=$1 sram_base=0 dram_base=0x1000 y_size=1 x_size=1 x_stride=1"; }
small_store() { echo "STORE.OUT deps=$1 sram_base=0 dram_base=0x10000 y_size=1 x_size=1 x_stride=1"; }

# The DRAM the programs store to (STORE.OUT at OUT element 0x10000, byte 0x100000: up to 128 x 16
# rows of 16 bytes), and data some load (2047 accumulator rows of 64 bytes at byte 0x200000, ACC
# element 0x8000).
STORE_DUMP=0x100000:0x8000
{ yes 'Tessera directed-test accumulator data, 0123456789.' || true; } | head -c $((2047 * 64)) > acc.bin
DATA=(--load "$WORK/acc.bin@0x200000")
# assemble NAME: NAME.s to NAME.bin (and NAME.uops); sets `uops` to the options that place them.
assemble() {
  local name=$1
  uops=()
  if grep -q '^UOP' "$name.s"; then
    "$TESSERA" asm "$name.s" -o "$name.bin" -u "$name.uops" > /dev/null
    uops=(--load "$name.uops@0x20000")
  else
    "$TESSERA" asm "$name.s" -o "$name.bin" > /dev/null
  fi
}

# run NAME EXPECT_EXIT PATTERN [target options...]: assemble NAME.s and run it on the target; a
# program that finishes must leave the stored DRAM as fsim does (fsim runs it without the options,
# which set DRAM timing or faults it does not model).
run() {
  local name=$1 code=$2 pattern=$3
  shift 3
  assemble "$name"
  local out rc=0
  out=$("$TESSERA" sim --target "$TARGET" "${TARGET_OPTS[@]}" --wait-cycles "$WAIT" "$@" "${uops[@]}" "${DATA[@]}" --insn "$name.bin" \
        --dump "$STORE_DUMP:$name.dram" --stats 2>&1) || rc=$?
  if [ "$rc" -ne "$code" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "directed program $name: exit $rc (expected $code), output: ${out:0:2000}" >&2
    exit 1
  fi
  # A fault's report (instruction, micro-op, field, cycle) must be the reference's word for word:
  # fsim names the micro-op its static check finds, the RTL the one its walk faulted at.
  if [ "$code" -ne 0 ] && [ -n "$COUNTER_REF" ]; then
    local ref_error
    ref_error=$("$TESSERA" sim --target "$COUNTER_REF" "$@" "${uops[@]}" "${DATA[@]}" --insn "$name.bin" 2>&1 | grep 'error:' || true)
    if [ "$(grep 'error:' <<<"$out")" != "$ref_error" ]; then
      echo "directed program $name: the report differs from $COUNTER_REF's: $(grep 'error:' <<<"$out") / $ref_error" >&2
      exit 1
    fi
  fi
  if [ "$code" -eq 0 ]; then
    "$TESSERA" sim --target fsim "${uops[@]}" "${DATA[@]}" --insn "$name.bin" --dump "$STORE_DUMP:$name.fsim.dram" > /dev/null
    if ! cmp -s "$name.dram" "$name.fsim.dram"; then
      echo "directed program $name: the stored DRAM differs from fsim's ($(cmp "$name.dram" "$name.fsim.dram" 2>&1 | head -1))" >&2
      exit 1
    fi
    if [ -n "$COUNTER_REF" ]; then
      local ref
      ref=$("$TESSERA" sim --target "$COUNTER_REF" "$@" "${uops[@]}" "${DATA[@]}" --insn "$name.bin" --stats 2>&1)
      # The counter block: from "instructions:" to the end.
      if ! diff <(sed -n '/^instructions:$/,$p' <<<"$ref") <(sed -n '/^instructions:$/,$p' <<<"$out") > "$name.counters.diff"; then
        echo "directed program $name: the counters differ from $COUNTER_REF's: $(grep -m2 '^[<>]' "$name.counters.diff" | tr '\n' ' ')" >&2
        exit 1
      fi
    fi
  fi
  echo "directed program $name: $(grep -m1 -E -- "$pattern" <<<"$out")"
}

# Each module's wait in a deadlock report, one per line, sorted: "load instruction 1 (LOAD.INP)
# waits for ..." (fsim writes "load stage: instruction ..."). Fetch's stall is left out: when compute
# waits to push to store, the RTL's fetch stalls one instruction later than fsim reports, a
# difference not yet explained (docs/verification.md).
waits() { grep -oE '(load|compute|store)( stage:)? instruction [0-9]+ \([A-Z.]+\) waits for [^;]*' | sed 's/ stage:/ /; s/  */ /g' | sort; }

# deadlock NAME [target options...]: NAME.s is balanced but deadlocks; the target must report the
# deadlock (its watchdog set short) naming, module by module, the same waits as fsim: the RTL's
# status registers say what each module waits for.
deadlock() {
  local name=$1 out ref rc=0
  shift
  assemble "$name"
  out=$("$TESSERA" sim --target "$TARGET" "${TARGET_OPTS[@]}" -o watchdog-cycles=3000 --wait-cycles "$WAIT" "$@" "${uops[@]}" --insn "$name.bin" 2>&1) || rc=$?
  if [ "$rc" -ne 1 ] || ! grep -q 'deadlock after' <<<"$out"; then
    echo "directed program $name: exit $rc (expected 1 and a deadlock report), output: ${out:0:2000}" >&2
    exit 1
  fi
  ref=$("$TESSERA" sim --target fsim "${uops[@]}" --insn "$name.bin" 2>&1 || true)
  grep -q 'deadlock at' <<<"$ref" || { echo "directed program $name: fsim does not deadlock: ${ref:0:1000}" >&2; exit 1; }
  if [ "$(waits <<<"$out")" != "$(waits <<<"$ref")" ] || [ -z "$(waits <<<"$ref")" ]; then
    echo "directed program $name: the deadlock report names other waits than fsim's" >&2
    echo "  $TARGET: $(waits <<<"$out" | tr '\n' ';')" >&2
    echo "  fsim: $(waits <<<"$ref" | tr '\n' ';')" >&2
    exit 1
  fi
  echo "directed program $name: deadlock, $(waits <<<"$out" | tr '\n' ';')"
}

# snapshot NAME CYCLES...: NAME.s runs longer than each CYCLES; stopped there by --wait-cycles, the
# target must say so, and with COUNTER_REFERENCE its report (each module's state and instruction,
# the bursts in flight) must be the reference's word for word: it shows the status registers while
# the modules are busy, which a finished or deadlocked run never does.
snapshot() {
  local name=$1 cycles out ref rc
  shift
  assemble "$name"
  for cycles in "$@"; do
    rc=0
    out=$("$TESSERA" sim --target "$TARGET" "${TARGET_OPTS[@]}" --wait-cycles "$cycles" "${uops[@]}" "${DATA[@]}" --insn "$name.bin" 2>&1) || rc=$?
    if [ "$rc" -ne 1 ] || ! grep -q "exceeds wait_cycles=$cycles" <<<"$out"; then
      echo "directed program $name: exit $rc (expected 1 and a stop at $cycles cycles), output: ${out:0:2000}" >&2
      exit 1
    fi
    if [ -n "$COUNTER_REF" ]; then
      ref=$("$TESSERA" sim --target "$COUNTER_REF" --wait-cycles "$cycles" "${uops[@]}" "${DATA[@]}" --insn "$name.bin" 2>&1 | grep 'error:' || true)
      if [ "$(grep 'error:' <<<"$out")" != "$ref" ]; then
        echo "directed program $name: the report at $cycles cycles differs from $COUNTER_REF's: $(grep 'error:' <<<"$out") / $ref" >&2
        exit 1
      fi
    fi
    echo "directed program $name: stopped at $cycles cycles, $(grep -oE 'fetch [^;]*' <<<"$out")"
  done
}

# TESSERA_DIRECTED_SET=index22 runs only this program, nothing else: a deadlock behind 2^22
# instructions (no-op loads and stores and empty GEMMs, fetched at the bus's rate: 8.4 million
# cycles), so that the report names compute's waiting GEMM as instruction 4,194,305 and the index
# path carries bit 22. It takes about two minutes on the mutant model: mutation testing runs it for
# the mutants of tessera_compute that survive everything else (tests/mutation/mutate.sh).
case "${TESSERA_DIRECTED_SET:-all}" in
  all) ;;
  index22)
    {
      echo "$uop"
      block=$(echo "LOAD.INP deps=- sram_base=0 dram_base=0 y_size=0 x_size=0 x_stride=0"
              echo "STORE.OUT deps=- sram_base=0 dram_base=0 y_size=0 x_size=0 x_stride=0"
              echo "GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=0 iter_in=1")
      yes "$block" | head -n $((1 << 22)) || true
      echo "GEMM deps=pop_next|push_next reset=1 uop_bgn=0 uop_end=1 iter_out=1 iter_in=1"
      echo "STORE.OUT deps=pop_prev|push_prev sram_base=0 dram_base=0x10000 y_size=1 x_size=1 x_stride=1"
      echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
    } > deadlock_index22.s
    WAIT=20000000 deadlock deadlock_index22 -o mem-latency=1
    exit 0 ;;
  *) echo "directed.sh: TESSERA_DIRECTED_SET='$TESSERA_DIRECTED_SET' is not all or index22" >&2; exit 2 ;;
esac

# Every module busy: loads feeding GEMMs feeding stores, and a long load (about 9,500 cycles in
# all), stopped at several points.
{
  echo "$uop"
  for _ in $(seq 200); do
    small_load push_next
    echo "GEMM deps=pop_prev|push_next reset=1 uop_bgn=0 uop_end=1 iter_out=40 iter_in=1"
    small_store pop_prev
  done
  echo "LOAD.INP deps=- sram_base=0 dram_base=0x1000 y_size=64 x_size=16 x_stride=16"
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
} > busy.s
snapshot busy 300 1000 3000 6000 9000

# Compute busy on a long GEMM: load fills l2g (its $N pushes wait for compute's pops), then fetch
# fills compute's instruction queue with the GEMMs that pop them.
{
  echo "$uop"; echo "$long_gemm"
  for _ in $(seq $N); do small_load push_next; done
  for _ in $(seq $N); do tiny_gemm pop_prev; done
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
} > compute_queue_l2g.s
run compute_queue_l2g 0 "ran"

# Load busy on a long, slow load: compute fills g2l with the tokens of the loads that follow.
{
  echo "$uop"
  echo "LOAD.INP deps=- sram_base=0 dram_base=0x1000 y_size=128 x_size=16 x_stride=16"
  for _ in $(seq $N); do tiny_gemm push_prev; done
  for _ in $(seq $N); do small_load pop_next; done
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
} > g2l.s
run g2l 0 "ran" -o mem-bytes-per-cycle=1

# Load's first instruction waits for a token compute gives only after a long GEMM: fetch fills
# load's queue with the loads behind it.
{
  echo "$uop"; echo "$long_gemm"; tiny_gemm push_prev
  small_load pop_next
  for _ in $(seq $N); do small_load -; done
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
} > load_queue.s
run load_queue 0 "ran"

# Store busy on a long, slow store: compute fills g2s, fetch fills store's queue; then compute
# works on a long GEMM while store's pushes fill s2g, and pops them afterwards.
# The first store writes data, not zeros, so that the comparison with fsim sees the values: rows 1
# to 2047 of the accumulator loaded from a text pattern, 3 added by the ALU (written to OUT too).
{
  echo "LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=2 x_stride=2"
  echo "LOAD.ACC deps=- sram_base=1 dram_base=0x8000 y_size=1 x_size=2047 x_stride=2047"
  echo "ALU.ADD deps=push_next uop_bgn=1 uop_end=2 iter_out=2047 iter_in=1 dst_factor_out=1 src_factor_out=1 use_imm=1 imm=3"
  echo "STORE.OUT deps=pop_prev sram_base=0 dram_base=0x10000 y_size=128 x_size=16 x_stride=16"
  for _ in $(seq $N); do tiny_gemm push_next; done
  for _ in $(seq $N); do small_store "pop_prev|push_prev"; done
  echo "$long_gemm"
  for _ in $(seq $N); do tiny_gemm pop_next; done
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"; echo "UOP dst=1 src=1 wgt=0"
} > store_queue_g2s_s2g.s
run store_queue_g2s_s2g 0 "ran" -o mem-bytes-per-cycle=1

# Strides at and near their field's limit (16 bits), which random programs keep to their regions'
# sizes: accumulator rows 2047 and 65535 elements apart, then stores 65535 and 4095 OUT elements
# apart (rows of one store 1 MiB apart, inside this program's wider dump window).
{
  echo "LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=2 x_stride=2"
  echo "LOAD.ACC deps=- sram_base=0 dram_base=0x8000 y_size=3 x_size=2 x_stride=0x7ff"
  echo "LOAD.ACC deps=- sram_base=6 dram_base=0x8001 y_size=2 x_size=1 x_stride=0xffff"
  echo "ALU.ADD deps=push_next uop_bgn=1 uop_end=2 iter_out=8 iter_in=1 dst_factor_out=1 src_factor_out=1 use_imm=1 imm=3"
  echo "STORE.OUT deps=pop_prev sram_base=0 dram_base=0x10000 y_size=2 x_size=3 x_stride=0xffff"
  echo "STORE.OUT deps=- sram_base=2 dram_base=0x10801 y_size=3 x_size=2 x_stride=0x0fff"
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"; echo "UOP dst=0 src=0 wgt=0"
} > long_strides.s
STORE_DUMP=0x100000:0x100000 run long_strides 0 "ran"

# A GEMM whose third outer iteration writes past the accumulator: the SRAM index fault.
{
  echo "$uop"
  echo "GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=3 iter_in=1 dst_factor_out=2000"
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
} > sram_index_fault.s
run sram_index_fault 1 "accumulator \\(dst\\) index goes past the buffer depth"

# Fields at their widths' limits, which random programs keep inside their buffers: index faults on
# each field of each pipe, at micro-ops high in the micro-op buffer, after loops with the largest
# counts and factors (the footprints' sums reach their widest values); and a clean run whose
# unchecked operands (a reset GEMM's source and weight) walk far past their buffers, and whose
# GEMMs count their loops to the largest counts.
far_fault() {  # far_fault NAME FIELD_PATTERN UOP_BASE INSTRUCTION UOPS...
  local name=$1 pattern=$2 base=$3 insn=$4
  shift 4
  {
    echo "LOAD.UOP deps=- sram_base=$base dram_base=0x8000 y_size=1 x_size=$# x_stride=$#"
    echo "$insn"
    echo "FINISH deps=-"
    printf 'UOP %s\n' "$@"
  } > "$name.s"
  run "$name" 1 "$pattern"
}
far_fault far_gemm_dst_fault "accumulator \\(dst\\) index goes past" 0x1554 \
  "GEMM deps=- reset=0 uop_bgn=0x1554 uop_end=0x1558 iter_out=0x3fff iter_in=0x2aab dst_factor_out=0x7ff dst_factor_in=0x2aa src_factor_out=0x555 src_factor_in=0x1 wgt_factor_out=0x3ff wgt_factor_in=0x1" \
  "dst=0x7fe src=0 wgt=0" "dst=0 src=0x7ff wgt=0x3ff" "dst=0x555 src=0x2aa wgt=0x155" "dst=0x2aa src=0x555 wgt=0x2aa"
far_fault far_gemm_src_fault "\\(src\\) index goes past" 0x0aa8 \
  "GEMM deps=- reset=0 uop_bgn=0x0aa8 uop_end=0x0aac iter_out=0x2aab iter_in=0x1555 dst_factor_out=0x0 dst_factor_in=0x0 src_factor_out=0x2aa src_factor_in=0x7ff wgt_factor_out=0x155 wgt_factor_in=0x0" \
  "dst=0x7ff src=0 wgt=0x3ff" "dst=0x555 src=0 wgt=0" "dst=0x2aa src=0 wgt=0x155" "dst=0x1 src=0x7ff wgt=0x2aa"
far_fault far_gemm_wgt_fault "\\(wgt\\) index goes past" 0x1ffc \
  "GEMM deps=- reset=0 uop_bgn=0x1ffc uop_end=0x2000 iter_out=0x3fff iter_in=0x3fff dst_factor_out=0x0 dst_factor_in=0x0 src_factor_out=0x0 src_factor_in=0x0 wgt_factor_out=0x3ff wgt_factor_in=0x2aa" \
  "dst=0 src=0 wgt=0" "dst=0 src=0 wgt=0" "dst=0 src=0 wgt=0" "dst=0x7ff src=0x7ff wgt=0x3ff"
far_fault far_alu_src_fault "\\(src\\) index goes past" 0x1555 \
  "ALU.ADD deps=- uop_bgn=0x1555 uop_end=0x1557 iter_out=0x3fff iter_in=0x2aab dst_factor_out=0x0 dst_factor_in=0x0 src_factor_out=0x555 src_factor_in=0x7ff use_imm=0 imm=0" \
  "dst=0x555 src=0x2aa wgt=0" "dst=0x7ff src=0x7ff wgt=0"
far_fault far_alu_dst_fault "accumulator \\(dst\\) index goes past" 0x0aaa \
  "ALU.MAX deps=- uop_bgn=0x0aaa uop_end=0x0aac iter_out=0x2aab iter_in=0x3fff dst_factor_out=0x555 dst_factor_in=0x7ff src_factor_out=0x2aa src_factor_in=0x7ff use_imm=1 imm=-21846" \
  "dst=0x2aa src=0x555 wgt=0" "dst=0x7ff src=0 wgt=0"
{
  echo "LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1"
  echo "GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=0x3fff iter_in=1 dst_factor_out=0 dst_factor_in=0 src_factor_out=0x7ff src_factor_in=0 wgt_factor_out=0x3ff wgt_factor_in=0"
  echo "GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=1 iter_in=0x3fff dst_factor_out=0 dst_factor_in=0 src_factor_out=0 src_factor_in=0x7ff wgt_factor_out=0 wgt_factor_in=0x3ff"
  # GEMMs on data (the text pattern at 0x200000) whose loops run to the largest counts in place.
  echo "LOAD.INP deps=- sram_base=0 dram_base=0x20000 y_size=1 x_size=1 x_stride=1"
  echo "LOAD.WGT deps=- sram_base=0 dram_base=0x2000 y_size=1 x_size=1 x_stride=1"
  echo "GEMM deps=- reset=0 uop_bgn=0 uop_end=1 iter_out=0x3fff iter_in=1 dst_factor_out=0 dst_factor_in=0 src_factor_out=0 src_factor_in=0 wgt_factor_out=0 wgt_factor_in=0"
  echo "GEMM deps=- reset=0 uop_bgn=0 uop_end=1 iter_out=2 iter_in=0x3fff dst_factor_out=0 dst_factor_in=0 src_factor_out=0 src_factor_in=0 wgt_factor_out=0 wgt_factor_in=0"
  echo "ALU.ADD deps=push_next uop_bgn=0 uop_end=1 iter_out=0x3fff iter_in=1 dst_factor_out=0 dst_factor_in=0 src_factor_out=0 src_factor_in=0 use_imm=1 imm=3"
  echo "STORE.OUT deps=pop_prev sram_base=0 dram_base=0x10000 y_size=1 x_size=1 x_stride=1"
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
} > far_operands.s
run far_operands 0 "ran [0-9]+ instructions"

# Loop factors at the bits random programs leave low, on data: the GEMM's second outer iteration
# reads input rows from 1,024 on (source factor 1,024) and weight rows from 256 on (weight factor
# 256; offsets 0-63 and 256-319), with an ALU instruction on other rows of the same accumulator
# bank behind it; every result is stored and compared with fsim.
{
  echo "LOAD.INP deps=- sram_base=0 dram_base=0x20000 y_size=1 x_size=1100 x_stride=1100"
  echo "LOAD.WGT deps=push_next sram_base=0 dram_base=0x2000 y_size=1 x_size=320 x_stride=320"
  echo "LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=2 x_stride=2"
  echo "LOAD.ACC deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1024 x_stride=1024"
  echo "GEMM deps=pop_prev reset=0 uop_bgn=0 uop_end=1 iter_out=2 iter_in=64 dst_factor_out=64 dst_factor_in=1 src_factor_out=1024 src_factor_in=1 wgt_factor_out=256 wgt_factor_in=1"
  echo "ALU.ADD deps=push_next uop_bgn=1 uop_end=2 iter_out=512 iter_in=1 dst_factor_out=1 dst_factor_in=0 src_factor_out=1 src_factor_in=0 use_imm=1 imm=7"
  echo "STORE.OUT deps=pop_prev sram_base=0 dram_base=0x10000 y_size=1 x_size=128 x_stride=128"
  echo "STORE.OUT deps=- sram_base=500 dram_base=0x10080 y_size=1 x_size=512 x_stride=512"
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"; echo "UOP dst=500 src=500 wgt=0"
} > far_factors.s
run far_factors 0 "ran [0-9]+ instructions"

# The load module's strides with high bits set, on data: input rows 0x1001 and weight blocks 0x101
# elements apart (random programs keep strides to their tiles), used by a GEMM and stored.
{
  echo "LOAD.INP deps=- sram_base=0 dram_base=0x20000 y_size=2 x_size=4 x_stride=0x1001"
  echo "LOAD.WGT deps=push_next sram_base=0 dram_base=0x2000 y_size=2 x_size=2 x_stride=0x101"
  echo "LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1"
  echo "GEMM deps=pop_prev|push_next reset=0 uop_bgn=0 uop_end=1 iter_out=8 iter_in=4 dst_factor_out=4 dst_factor_in=1 src_factor_out=1 src_factor_in=0 wgt_factor_out=0 wgt_factor_in=1"
  echo "STORE.OUT deps=pop_prev sram_base=0 dram_base=0x10000 y_size=1 x_size=32 x_stride=32"
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
} > load_strides.s
run load_strides 0 "ran [0-9]+ instructions"

# Whole buffers in one row and in one column: loads and stores at the sizes that fill each SRAM
# (the longest bursts, the largest beat and row counts; sizes of all ones and bases at the top of
# the SRAMs), which random programs keep small.
{
  echo "LOAD.UOP deps=- sram_base=1 dram_base=0x8000 y_size=1 x_size=8191 x_stride=8191"
  echo "LOAD.UOP deps=- sram_base=0x1fff dram_base=0x8000 y_size=1 x_size=1 x_stride=1"
  echo "LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=8192 x_stride=8192"
  echo "LOAD.WGT deps=- sram_base=1 dram_base=0x100 y_size=1 x_size=1023 x_stride=1023"
  echo "LOAD.WGT deps=- sram_base=1 dram_base=0x100 y_size=1023 x_size=1 x_stride=0x3ff"
  echo "LOAD.INP deps=- sram_base=1 dram_base=0x1000 y_size=1 x_size=2047 x_stride=2047"
  echo "LOAD.INP deps=- sram_base=1 dram_base=0x1000 y_size=2047 x_size=1 x_stride=0x7ff"
  echo "LOAD.INP deps=- sram_base=0x7ff dram_base=0x1000 y_size=1 x_size=1 x_stride=1"
  echo "LOAD.INP deps=- sram_base=0 dram_base=0x1000 y_size=2047 x_size=1 x_stride=1 y_pad_0=1"
  echo "LOAD.INP deps=- sram_base=0 dram_base=0x1000 y_size=2 x_size=1 x_stride=0xffff"
  echo "LOAD.INP deps=- sram_base=0 dram_base=0x1000 y_size=1 x_size=2048 x_stride=2048"
  echo "LOAD.ACC deps=- sram_base=0 dram_base=0x8000 y_size=2048 x_size=1 x_stride=1"
  echo "LOAD.ACC deps=- sram_base=1 dram_base=0x8000 y_size=1 x_size=2047 x_stride=2047"
  echo "LOAD.ACC deps=- sram_base=1 dram_base=0x8000 y_size=2047 x_size=1 x_stride=1"
  echo "LOAD.ACC deps=- sram_base=0x7ff dram_base=0x8000 y_size=1 x_size=1 x_stride=1"
  echo "ALU.ADD deps=push_next uop_bgn=1 uop_end=2 iter_out=2048 iter_in=1 dst_factor_out=1 src_factor_out=1 use_imm=1 imm=5"
  echo "STORE.OUT deps=pop_prev sram_base=1 dram_base=0x10000 y_size=1 x_size=2047 x_stride=2047"
  echo "STORE.OUT deps=- sram_base=1 dram_base=0x10000 y_size=2047 x_size=1 x_stride=1"
  echo "STORE.OUT deps=- sram_base=0x7ff dram_base=0x107ff y_size=1 x_size=1 x_stride=1"
  echo "STORE.OUT deps=- sram_base=0 dram_base=0x10000 y_size=1 x_size=2048 x_stride=2048"
  echo "STORE.OUT deps=push_prev sram_base=0 dram_base=0x10000 y_size=2048 x_size=1 x_stride=1"
  echo "FINISH deps=pop_next"; echo "UOP dst=0 src=0 wgt=0"
} > full_buffers.s
run full_buffers 0 "ran [0-9]+ instructions"

# A program of 2^20 + 1 instructions (16 MiB of them: micro-op-free GEMMs and, one in eight,
# one-element loads and stores) whose instruction before FINISH faults, so that every module's
# instruction indices, the instruction count, the cycle counter and FAULT_INSN carry bits 11 to 19,
# as random programs of a few thousand instructions never do; a one-cycle DRAM latency lets fetch
# stream them at the bus's rate. TESSERA_DIRECTED_LONG_LOG2 (default 20) sets the size: mutation
# testing runs 2^14, as its mutant model is too slow for 3 million cycles a mutant.
long_log2=${TESSERA_DIRECTED_LONG_LOG2:-20}
case "$long_log2" in [4-9] | 1[0-9] | 2[0-4]) ;; *) echo "directed.sh: TESSERA_DIRECTED_LONG_LOG2='$long_log2' is not 4 to 24" >&2; exit 2 ;; esac
{
  echo "$uop"
  empty_gemm="GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=0 iter_in=1"
  block=$(small_load -; small_store -; for _ in $(seq 14); do echo "$empty_gemm"; done)
  yes "$block" | head -n $(((1 << long_log2) - 2)) || true
  echo "GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=3 iter_in=1 dst_factor_out=2000"
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
} > long_program.s
run long_program 1 "instruction $(((1 << long_log2) - 1)) \\(GEMM\\), micro-op 0 with field dst_factor_out/dst_factor_in" -o mem-latency=1

# A one-micro-op GEMM scanned behind an ALU instruction: a load's token holds the GEMM back until
# 17 to 22 cycles into the ALU's run (ALU.ADD of N iterations, then one of one), so that across the
# sweep the ALU finishes in the cycles between the scan's last micro-op leaving S0 and the pipe
# draining, where the scanned GEMM's wait and go are decided cycle by cycle.
for n in 17 18 19 20 21 22; do
  {
    echo "LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=2 x_stride=2"
    echo "LOAD.INP deps=push_next sram_base=0 dram_base=0x1000 y_size=4 x_size=4 x_stride=4"
    echo "ALU.ADD deps=- uop_bgn=1 uop_end=2 iter_out=$n iter_in=1 dst_factor_out=0 src_factor_out=0 use_imm=1 imm=3"
    echo "ALU.ADD deps=- uop_bgn=1 uop_end=2 iter_out=1 iter_in=1 dst_factor_out=0 src_factor_out=0 use_imm=1 imm=3"
    echo "GEMM deps=pop_prev reset=0 uop_bgn=1 uop_end=2 iter_out=1 iter_in=1"
    echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"; echo "UOP dst=100 src=100 wgt=0"
  } > "scan_window_$n.s"
  run "scan_window_$n" 0 "ran"
done

# Loop reaches that decide whether a GEMM may overlap an older ALU instruction on accumulator
# row 40 (300 iterations): a GEMM on rows 0-19 whose outer count (40, multiplier 39) walks the
# reach's serial multiplier through its middle bits; GEMMs on row 0 whose weight index passes the
# buffer (1,024 rows) at its last outer (9 x 128) or inner (6 x 205, an odd factor) iteration, so
# they must wait for the ALU, then fault.
{
  echo "LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=2 x_stride=2"
  echo "ALU.ADD deps=- uop_bgn=1 uop_end=2 iter_out=300 iter_in=1 dst_factor_out=0 src_factor_out=0 use_imm=1 imm=3"
  echo "GEMM deps=push_next reset=0 uop_bgn=0 uop_end=1 iter_out=40 iter_in=20 dst_factor_out=0 dst_factor_in=1"
  echo "STORE.OUT deps=pop_prev sram_base=0 dram_base=0x10000 y_size=1 x_size=64 x_stride=64"
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"; echo "UOP dst=40 src=40 wgt=0"
} > reach_overlap.s
run reach_overlap 0 "ran"
reach_fault() {  # reach_fault NAME GEMM_LOOPS
  {
    echo "LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=2 x_stride=2"
    echo "ALU.ADD deps=- uop_bgn=1 uop_end=2 iter_out=300 iter_in=1 dst_factor_out=0 src_factor_out=0 use_imm=1 imm=3"
    echo "GEMM deps=- reset=0 uop_bgn=0 uop_end=1 $2"
    echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"; echo "UOP dst=40 src=40 wgt=0"
  } > "$1.s"
  run "$1" 1 "instruction 2 \\(GEMM\\), micro-op 0 with field wgt_factor_out/wgt_factor_in"
}
reach_fault reach_wgt_out_fault "iter_out=9 iter_in=1 dst_factor_out=1 src_factor_out=1 wgt_factor_out=128"
reach_fault reach_wgt_in_fault "iter_out=1 iter_in=6 dst_factor_in=1 src_factor_in=1 wgt_factor_in=205"

# DRAM error responses: on a load's page, then on a store's (FINISH waits for each, so the
# accelerator faults while it runs).
{
  echo "LOAD.INP deps=push_next sram_base=0 dram_base=0x1000 y_size=1 x_size=1 x_stride=1"
  echo "FINISH deps=pop_prev"
} > read_fault.s
run read_fault 1 "DRAM read error response" -o mem-fault-page=0x10000
{
  echo "STORE.OUT deps=push_prev sram_base=0 dram_base=0x10000 y_size=1 x_size=1 x_stride=1"
  echo "FINISH deps=pop_next"
} > write_fault.s
run write_fault 1 "DRAM write error response" -o mem-fault-page=0x100000

# Deadlocks of balanced programs, each module waiting on each queue it pops or pushes: circular
# pops between load and compute and between compute and store, and each pair's two queues full
# (N > 512 tokens pushed each way before the pops).
gemm_tok() { echo "GEMM deps=$1 reset=1 uop_bgn=0 uop_end=1 iter_out=1 iter_in=1"; }
# pair_program NAME UPSTREAM DOWNSTREAM BODY: NAME.s holding the micro-op load, BODY's instructions
# of the two modules (each an instruction maker taking its dependency flags), FINISH and the
# micro-op; then the deadlock check on it.
pair_program() {
  local name=$1 up=$2 down=$3 body=$4
  {
    echo "$uop"
    "$body" "$up" "$down"
    echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
  } > "$name.s"
  deadlock "$name"
}
# Each module pops the other's token before pushing its own.
circular_pops() { "$1" "pop_next|push_next"; "$2" "pop_prev|push_prev"; }
# 513 tokens pushed each way, one more than a queue holds, before the pops.
both_queues_full() {
  for _ in $(seq 513); do "$1" push_next; "$2" push_prev; done
  for _ in $(seq 513); do "$1" pop_next; "$2" pop_prev; done
}
pair_program deadlock_pop_load_compute small_load gemm_tok circular_pops
pair_program deadlock_pop_compute_store gemm_tok small_store circular_pops
pair_program deadlock_full_load_compute small_load gemm_tok both_queues_full
pair_program deadlock_full_compute_store gemm_tok small_store both_queues_full
# The circular pops between compute and store after 8,192 empty GEMMs: the waiting GEMM is
# instruction 8,193, so the report's instruction index carries into bit 13.
behind_long_prefix() { yes "GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=0 iter_in=1" | head -n 8192 || true; circular_pops "$@"; }
pair_program deadlock_after_8192 gemm_tok small_store behind_long_prefix
# A GEMM that waits to push while its other queue is full too, or while the token it pops is
# there: the report must name the queue it waits on, not another it does not use at that moment.
# (Fetch then fills compute's queue behind it, so the pops that would free it are never fetched.)
compute_queue_behind() { yes "GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=1 iter_in=1" | head -n "$N" || true; }
{
  echo "$uop"
  for _ in $(seq 512); do gemm_tok push_prev; done
  for _ in $(seq 513); do gemm_tok push_next; done
  compute_queue_behind
  for _ in $(seq 512); do small_load pop_next; done
  for _ in $(seq 513); do small_store pop_prev; done
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
} > deadlock_push_next_both_full.s
deadlock deadlock_push_next_both_full
{
  echo "$uop"
  small_store push_prev
  for _ in $(seq 512); do gemm_tok push_next; done
  gemm_tok "pop_next|push_next"
  compute_queue_behind
  for _ in $(seq 513); do small_store pop_prev; done
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
} > deadlock_push_with_token.s
deadlock deadlock_push_with_token
# And between load and compute after 8,448: the waiting LOAD is instruction 8,449 (bits 8 and 13).
behind_longer_prefix() { yes "GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=0 iter_in=1" | head -n 8448 || true; circular_pops "$@"; }
pair_program deadlock_load_compute_late small_load gemm_tok behind_longer_prefix
