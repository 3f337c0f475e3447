// Inner loops of the behavioral simulator, selected once per shape and host CPU (internal header).
#pragma once

#include <cstdint>

#include "tessera/hw/fsim.h"
#include "tessera/hw/isa.h"

namespace tessera::hw::kernels {

// Shape (declared in fsim.h): SRAM geometry in the simulator's widened layouts: BATCH, int16
// (k, k+1) pairs per input row, BLOCK_OUT, and the lanes per accumulator, input and weight entry.

// The loop structure of one GEMM or ALU instruction, indices already bounds-checked.
struct Loops {
  uint32_t iterOut, iterIn, uopBgn, uopEnd;
  uint64_t dstOut, dstIn, srcOut, srcIn, wgtOut, wgtIn;
};


GemmFn selectGemm(const Shape& shape);
AluFn selectAlu(uint32_t aluOp, int lanes);

// VTA's shift: amount modulo 32, negative amounts shift left.
inline int32_t shiftRight(int32_t a, int32_t b) {
  if (b >= 0) return a >> (b & 31);
  uint32_t s = static_cast<uint32_t>(-static_cast<int64_t>(b)) & 31;
  return static_cast<int32_t>(static_cast<uint32_t>(a) << s);
}

}  // namespace tessera::hw::kernels
