// Decoding and validation of raw instructions without composing messages: the simulators' fast
// path. Isa::decode/validate and Dram::at remain the reference and word every error.
#pragma once

#include <cstdint>
#include <cstring>

#include "tessera/hw/dram.h"
#include "tessera/hw/isa.h"

namespace tessera::hw::detail {

// Where one field sits in the two 64-bit words of an instruction.
struct BitPos {
  uint8_t word = 0, shift = 0;
  uint64_t mask = 0;
  uint64_t get(const uint64_t* w) const { return (w[word] >> shift) & mask; }
};

// The two little-endian 64-bit words of the instruction at `bytes`.
inline void loadWords(const uint8_t* bytes, uint64_t* w) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "instruction words are little endian");
  std::memcpy(w, bytes, 16);
}

class FastDecoder {
 public:
  FastDecoder(const Isa& isa, const Dram& dram);

  static uint32_t opcode(const uint64_t* w) { return static_cast<uint32_t>(w[0] & 7); }
  // The dependency flags as bits: pop_prev 1, pop_next 2, push_prev 4, push_next 8.
  static uint32_t flags(const uint64_t* w) { return static_cast<uint32_t>((w[0] >> 3) & 15); }
  uint32_t memType(const uint64_t* w) const { return static_cast<uint32_t>(memType_.get(w)); }
  uint32_t xSize(const uint64_t* w) const { return static_cast<uint32_t>(xSize_.get(w)); }

  // Every field, as Isa::decode does, for opcodes 0-4 (others: Isa::decode).
  void decode(const uint64_t* w, Insn* in) const;
  // True iff Isa::validate accepts `in` and, for a LOAD/STORE that moves data, Dram::at accepts
  // its DRAM range (decodeProgram's checks).
  bool valid(const Insn& in) const;

 private:
  const Config& cfg_;
  uint64_t dramSpan_;
  BitPos memType_, sramBase_, dramBase_, ySize_, xSize_, xStride_, yPad0_, yPad1_, xPad0_, xPad1_;
  struct LoopFormat {
    BitPos reset, uopBgn, uopEnd, iterOut, iterIn, dstOut, dstIn, srcOut, srcIn, wgtOut, wgtIn, aluOp, useImm, imm;
    int immWidth = 0;
  } gemm_, alu_;
  uint64_t elemBytes_[8] = {};
};

}  // namespace tessera::hw::detail
