// Inner loops and SRAM layouts of the behavioral simulator, chosen once per shape and host CPU.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/hw/fsim.h"
#include "tessera/hw/isa.h"

namespace tessera::hw::kernels {

// The loop structure of one GEMM or ALU instruction, indices already bounds-checked.
struct Loops {
  uint32_t iterOut, iterIn, uopBgn, uopEnd;
  uint64_t dstOut, dstIn, srcOut, srcIn, wgtOut, wgtIn;
};

// Selects the GEMM backend for the shape on this CPU: its SRAM layouts for inputs and weights
// (entry sizes in bytes, packing functions from DRAM's int8 layout) and its GEMM loop.
// `want` is "auto" (the fastest) or the name of one kernel set (fsim's `kernels` option), so tests
// can hold every kernel set against the portable one. A named set the CPU or shape cannot run
// throws tessera::Error saying why: a forced set never falls back silently.
Backend selectBackend(int batch, int blockIn, int blockOut, const std::string& want);
// Why `want` cannot run on this CPU (unknown name, missing instruction set); empty if it can.
std::string cpuProblem(const std::string& want);
// Why `want` cannot run on this CPU for this shape; empty if it can.
std::string unavailableReason(int batch, int blockIn, int blockOut, const std::string& want);
AluFn selectAlu(uint32_t aluOp, int lanes, const std::string& want);
// The chained form of the same ALU loops, from the same instruction set as selectAlu's.
AluChainFn selectAluChain(int lanes, const std::string& want);

// ACC_8BIT loads widen int8 lanes to int32; STOREs narrow int32 lanes to int8 (low bits).
using WidenFn = void (*)(int32_t* d, const int8_t* s, uint64_t n);
using NarrowFn = void (*)(int8_t* d, const int32_t* s, uint64_t n);
WidenFn selectWiden(const std::string& want);
NarrowFn selectNarrow(const std::string& want);

// VTA's shift: amount modulo 32, negative amounts shift left.
inline int32_t shiftRight(int32_t a, int32_t b) {
  if (b >= 0) return a >> (b & 31);
  uint32_t s = static_cast<uint32_t>(-static_cast<int64_t>(b)) & 31;
  return static_cast<int32_t>(static_cast<uint32_t>(a) << s);
}

}  // namespace tessera::hw::kernels
