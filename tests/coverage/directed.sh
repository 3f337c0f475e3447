#!/usr/bin/env bash
# Directed programs for the cover points random programs cannot reach: full instruction and token queues, each fault cause.
# Usage: directed.sh PATH/TO/tessera COVERAGE_DIR
# Each program is written as text, assembled and run on tsim-cov (coverage=COVERAGE_DIR); every run
# must end as the program intends (a clean finish, or the fault it plants).
set -euo pipefail
TESSERA=$(realpath "${1:?usage: directed.sh PATH/TO/tessera COVERAGE_DIR}")
COV=$(realpath -m "${2:?usage: directed.sh PATH/TO/tessera COVERAGE_DIR}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
N=600  # more than the queues' 512 entries (INSN_QUEUE_DEPTH, DEP_QUEUE_DEPTH of config default)

uop='LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1'
tiny_gemm() { echo "GEMM deps=$1 reset=1 uop_bgn=0 uop_end=1 iter_out=1 iter_in=1"; }
long_gemm='GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=1000 iter_in=60'
small_load() { echo "LOAD.INP deps=$1 sram_base=0 dram_base=0x1000 y_size=1 x_size=1 x_stride=1"; }
small_store() { echo "STORE.OUT deps=$1 sram_base=0 dram_base=0x10000 y_size=1 x_size=1 x_stride=1"; }

# run NAME EXPECT_EXIT PATTERN [target options...]: assemble NAME.s and run it on tsim-cov.
run() {
  local name=$1 code=$2 pattern=$3
  shift 3
  local uops=()
  if grep -q '^UOP' "$name.s"; then
    "$TESSERA" asm "$name.s" -o "$name.bin" -u "$name.uops" > /dev/null
    uops=(--load "$name.uops@0x20000")
  else
    "$TESSERA" asm "$name.s" -o "$name.bin" > /dev/null
  fi
  local out rc=0
  out=$("$TESSERA" sim --target tsim-cov -o "coverage=$COV" "$@" "${uops[@]}" --insn "$name.bin" 2>&1) || rc=$?
  if [ "$rc" -ne "$code" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "directed program $name: exit $rc (expected $code), output: ${out:0:2000}" >&2
    exit 1
  fi
  echo "directed program $name: $(tail -1 <<<"$out")"
}

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
{
  echo "$uop"
  echo "STORE.OUT deps=- sram_base=0 dram_base=0x10000 y_size=128 x_size=16 x_stride=16"
  for _ in $(seq $N); do tiny_gemm push_next; done
  for _ in $(seq $N); do small_store "pop_prev|push_prev"; done
  echo "$long_gemm"
  for _ in $(seq $N); do tiny_gemm pop_next; done
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
} > store_queue_g2s_s2g.s
run store_queue_g2s_s2g 0 "ran" -o mem-bytes-per-cycle=1

# A GEMM whose third outer iteration writes past the accumulator: the SRAM index fault.
{
  echo "$uop"
  echo "GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=3 iter_in=1 dst_factor_out=2000"
  echo "FINISH deps=-"; echo "UOP dst=0 src=0 wgt=0"
} > sram_index_fault.s
run sram_index_fault 1 "accumulator \\(dst\\) index goes past the buffer depth"

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
