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
  static uint32_t memType(const uint64_t* w) { return static_cast<uint32_t>((w[0] >> 7) & 7); }
  static uint32_t xSize(const uint64_t* w) { return static_cast<uint32_t>((w[1] >> 16) & 0xffff); }

  // Every field, as Isa::decode does, for opcodes 0-4 (others: Isa::decode); all of `in` is
  // written (fields of other formats as 0), so one Insn can be decoded into again and again.
  void decode(const uint64_t* w, Insn* in) const;
  // True iff Isa::validate accepts `in` and, for a LOAD/STORE that moves data, Dram::at accepts
  // its DRAM range (decodeProgram's checks).
  bool valid(const Insn& in) const;
  // The same for the instruction words, reading only the fields the checks need.
  bool validWords(const uint64_t* w) const;

  // ALU instructions whose words differ at most in dependency flags, ALU opcode and immediate:
  // the same loops over the same micro-ops (and the same use_imm).
  bool sameAluLoops(const uint64_t* a, const uint64_t* b) const {
    return ((a[0] ^ b[0]) & aluLoopMask_[0]) == 0 && ((a[1] ^ b[1]) & aluLoopMask_[1]) == 0;
  }
  bool aluUsesImm(const uint64_t* w) const { return alu_.useImm.get(w) != 0; }
  uint32_t aluOp(const uint64_t* w) const { return static_cast<uint32_t>(alu_.aluOp.get(w)); }
  int32_t aluImm(const uint64_t* w) const {
    const uint64_t v = alu_.imm.get(w), sign = uint64_t(1) << (alu_.immWidth - 1);
    return static_cast<int32_t>(static_cast<int64_t>((v ^ sign) - sign));
  }

 private:
  const Config& cfg_;
  uint64_t dramSpan_;
  BitPos memType_, sramBase_, dramBase_, ySize_, xSize_, xStride_, yPad0_, yPad1_, xPad0_, xPad1_;
  struct LoopFormat {
    BitPos reset, uopBgn, uopEnd, iterOut, iterIn, dstOut, dstIn, srcOut, srcIn, wgtOut, wgtIn, aluOp, useImm, imm;
    int immWidth = 0;
  } gemm_, alu_;
  uint64_t elemBytes_[8] = {};
  uint64_t sramDepth_[8] = {};  // by memory type, for validWords without a call into Config
  uint64_t aluLoopMask_[2] = {};  // every bit but the flags', the ALU opcode's and the immediate's
};

// The LOAD/STORE format does not depend on the config (VTA's VTAMemInsn); the constructor checks
// the layout agrees with these positions.
namespace mem {
constexpr int kMemType = 7, kSramBase = 10, kDramBase = 26;      // word 0
constexpr int kYSize = 0, kXSize = 16, kXStride = 32, kYPad0 = 48, kYPad1 = 52, kXPad0 = 56, kXPad1 = 60;  // word 1
}  // namespace mem

__attribute__((always_inline)) inline void FastDecoder::decode(const uint64_t* w, Insn* in) const {
  const uint64_t w0 = w[0], w1 = w[1];
  const uint32_t op = static_cast<uint32_t>(w0 & 7), f = static_cast<uint32_t>((w0 >> 3) & 15);
  // Every field is written, those of other formats as 0, so an Insn can be decoded into again.
  // Values are read into locals before anything is stored: the stores could otherwise alias the
  // decoder's own byte-sized positions and force them to be reloaded.
  if (op == uint32_t(Opcode::kLoad) || op == uint32_t(Opcode::kStore)) {
    Insn& i = *in;
    i.opcode = static_cast<Opcode>(op);
    i.popPrev = f & 1;
    i.popNext = (f >> 1) & 1;
    i.pushPrev = (f >> 2) & 1;
    i.pushNext = (f >> 3) & 1;
    i.memType = static_cast<uint32_t>((w0 >> mem::kMemType) & 7);
    i.sramBase = static_cast<uint32_t>((w0 >> mem::kSramBase) & 0xffff);
    i.dramBase = static_cast<uint32_t>((w0 >> mem::kDramBase) & 0xffffffffu);
    i.ySize = static_cast<uint32_t>((w1 >> mem::kYSize) & 0xffff);
    i.xSize = static_cast<uint32_t>((w1 >> mem::kXSize) & 0xffff);
    i.xStride = static_cast<uint32_t>((w1 >> mem::kXStride) & 0xffff);
    i.yPad0 = static_cast<uint32_t>((w1 >> mem::kYPad0) & 15);
    i.yPad1 = static_cast<uint32_t>((w1 >> mem::kYPad1) & 15);
    i.xPad0 = static_cast<uint32_t>((w1 >> mem::kXPad0) & 15);
    i.xPad1 = static_cast<uint32_t>((w1 >> mem::kXPad1) & 15);
    i.reset = false;
    i.uopBgn = i.uopEnd = i.iterOut = i.iterIn = 0;
    i.dstFactorOut = i.dstFactorIn = i.srcFactorOut = i.srcFactorIn = i.wgtFactorOut = i.wgtFactorIn = 0;
    i.aluOp = 0;
    i.useImm = false;
    i.imm = 0;
    return;
  }
  const bool alu = op == uint32_t(Opcode::kAlu);
  const LoopFormat& l = alu ? alu_ : gemm_;
  const bool reset = l.reset.get(w) != 0;
  const uint32_t uopBgn = static_cast<uint32_t>(l.uopBgn.get(w)), uopEnd = static_cast<uint32_t>(l.uopEnd.get(w)),
                 iterOut = static_cast<uint32_t>(l.iterOut.get(w)), iterIn = static_cast<uint32_t>(l.iterIn.get(w)),
                 dstOut = static_cast<uint32_t>(l.dstOut.get(w)), dstIn = static_cast<uint32_t>(l.dstIn.get(w)),
                 srcOut = static_cast<uint32_t>(l.srcOut.get(w)), srcIn = static_cast<uint32_t>(l.srcIn.get(w));
  const uint32_t wgtOut = alu ? 0 : static_cast<uint32_t>(l.wgtOut.get(w)),
                 wgtIn = alu ? 0 : static_cast<uint32_t>(l.wgtIn.get(w)),
                 aluOp = alu ? static_cast<uint32_t>(l.aluOp.get(w)) : 0;
  const bool useImm = alu && l.useImm.get(w) != 0;
  const int32_t imm = alu ? aluImm(w) : 0;
  Insn& i = *in;
  i.opcode = static_cast<Opcode>(op);
  i.popPrev = f & 1;
  i.popNext = (f >> 1) & 1;
  i.pushPrev = (f >> 2) & 1;
  i.pushNext = (f >> 3) & 1;
  i.memType = i.sramBase = i.dramBase = i.ySize = i.xSize = i.xStride = 0;
  i.yPad0 = i.yPad1 = i.xPad0 = i.xPad1 = 0;
  i.reset = reset;
  i.uopBgn = uopBgn;
  i.uopEnd = uopEnd;
  i.iterOut = iterOut;
  i.iterIn = iterIn;
  i.dstFactorOut = dstOut;
  i.dstFactorIn = dstIn;
  i.srcFactorOut = srcOut;
  i.srcFactorIn = srcIn;
  i.wgtFactorOut = wgtOut;
  i.wgtFactorIn = wgtIn;
  i.aluOp = aluOp;
  i.useImm = useImm;
  i.imm = imm;
}

// Inline: the simulators call it once per instruction of a stream before running it.
inline bool FastDecoder::validWords(const uint64_t* w) const {
  const uint32_t op = opcode(w);
  if (op > 4) return false;
  if (op == uint32_t(Opcode::kLoad) || op == uint32_t(Opcode::kStore)) {
    // valid()'s checks on the fields as read (the memory format's positions are fixed).
    const uint64_t w0 = w[0], w1 = w[1];
    const uint32_t f = flags(w), memType = static_cast<uint32_t>((w0 >> mem::kMemType) & 7);
    const bool isLoad = op == uint32_t(Opcode::kLoad);
    if (memType > 5) return false;
    const bool loadStage = isLoad && (memType == uint32_t(MemId::kInp) || memType == uint32_t(MemId::kWgt));
    if (loadStage && (f & 5)) return false;    // pop_prev, push_prev
    if (!isLoad && (f & 10)) return false;     // pop_next, push_next
    const uint64_t xSize = (w1 >> mem::kXSize) & 0xffff;
    if (xSize == 0) return true;  // a dependency carrier
    const MemId id = static_cast<MemId>(memType);
    const uint64_t ySize = (w1 >> mem::kYSize) & 0xffff, pads = w1 >> mem::kYPad0;  // the four pads, 16 bits
    if (isLoad ? id == MemId::kOut : id != MemId::kOut) return false;
    if (!isLoad && pads) return false;
    if (isLoad && id == MemId::kUop && (ySize != 1 || pads)) return false;
    const uint64_t yPad0 = pads & 15, yPad1 = (pads >> 4) & 15, xPad0 = (pads >> 8) & 15, xPad1 = (pads >> 12) & 15;
    const uint64_t sramBase = (w0 >> mem::kSramBase) & 0xffff;
    const uint64_t rows = isLoad ? yPad0 + ySize + yPad1 : ySize;
    const uint64_t end = sramBase + (isLoad ? (xPad0 + xSize + xPad1) * rows : xSize * ySize);
    if (rows > 0 && end > sramDepth_[memType]) return false;
    if (ySize == 0) return true;
    const uint64_t eb = elemBytes_[memType], dramBase = (w0 >> mem::kDramBase) & 0xffffffffu;
    const uint64_t xStride = (w1 >> mem::kXStride) & 0xffff;
    const uint64_t first = dramBase * eb, last = (dramBase + (ySize - 1) * xStride + xSize) * eb;
    if (last <= first) return true;
    return first <= dramSpan_ && last - first <= dramSpan_ - first && first >= Dram::kPageBytes;
  }
  if (op == uint32_t(Opcode::kFinish)) return true;
  const LoopFormat& l = op == uint32_t(Opcode::kAlu) ? alu_ : gemm_;
  const uint64_t bgn = l.uopBgn.get(w), end = l.uopEnd.get(w);
  if (end > cfg_.uopDepth || bgn > end) return false;
  return !(op == uint32_t(Opcode::kAlu) && l.aluOp.get(w) > 4);
}

}  // namespace tessera::hw::detail
