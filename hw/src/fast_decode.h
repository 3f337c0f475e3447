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
  static_assert(kInsnBits == 2 * 64, "an instruction is two 64-bit words");
  std::memcpy(w, bytes, kInsnBits / 8);
}

// The dependency flags as bits of FastDecoder::flags (VTA's pop_prev, pop_next, push_prev,
// push_next, in that order from bit 0).
namespace dep {
constexpr int kBits = 4;  // the field's width, right above the opcode
constexpr uint32_t kPopPrev = 1, kPopNext = 2, kPushPrev = 4, kPushNext = 8;
constexpr uint32_t kPrev = kPopPrev | kPushPrev, kNext = kPopNext | kPushNext;
}  // namespace dep

// The LOAD/STORE format does not depend on the config (VTA's VTAMemInsn); the constructor checks
// the layout agrees with these positions.
namespace mem {
constexpr int kMemType = 7, kSramBase = 10, kDramBase = 26;      // word 0
constexpr int kYSize = 0, kXSize = 16, kXStride = 32, kYPad0 = 48, kYPad1 = 52, kXPad0 = 56, kXPad1 = 60;  // word 1
}  // namespace mem

// The low `bits` bits set.
constexpr uint64_t lowBits(int bits) { return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1; }

class FastDecoder {
 public:
  FastDecoder(const Isa& isa, const Dram& dram);

  // Fields every format has at the same place (opcode, flags), and those of the LOAD/STORE format.
  static uint32_t opcode(const uint64_t* w) { return static_cast<uint32_t>(w[0] & lowBits(kOpcodeBits)); }
  static uint32_t flags(const uint64_t* w) { return static_cast<uint32_t>((w[0] >> kOpcodeBits) & lowBits(dep::kBits)); }
  static uint32_t memType(const uint64_t* w) { return static_cast<uint32_t>((w[0] >> mem::kMemType) & lowBits(kMemIdBits)); }
  static uint32_t sramBase(const uint64_t* w) {
    return static_cast<uint32_t>((w[0] >> mem::kSramBase) & lowBits(kMemSramBaseBits));
  }
  static uint32_t dramBase(const uint64_t* w) {
    return static_cast<uint32_t>((w[0] >> mem::kDramBase) & lowBits(kMemDramBaseBits));
  }
  static uint32_t ySize(const uint64_t* w) { return static_cast<uint32_t>((w[1] >> mem::kYSize) & lowBits(kMemSizeBits)); }
  static uint32_t xSize(const uint64_t* w) { return static_cast<uint32_t>((w[1] >> mem::kXSize) & lowBits(kMemSizeBits)); }
  static uint32_t xStride(const uint64_t* w) {
    return static_cast<uint32_t>((w[1] >> mem::kXStride) & lowBits(kMemStrideBits));
  }

  // Every field, as Isa::decode does, for opcodes 0-4 (others: Isa::decode); all of `in` is
  // written (fields of other formats as 0), so one Insn can be decoded into again and again.
  void decode(const uint64_t* w, Insn* in) const;
  // True iff Isa::validate accepts the instruction and, for a LOAD/STORE that moves data,
  // Dram::at accepts its DRAM range, reading only the fields the checks need.
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

__attribute__((always_inline)) inline void FastDecoder::decode(const uint64_t* w, Insn* in) const {
  const uint64_t w1 = w[1];
  const uint32_t op = opcode(w), f = flags(w);
  // Every field is written, those of other formats as 0, so an Insn can be decoded into again.
  // Values are read into locals before anything is stored: the stores could otherwise alias the
  // decoder's own byte-sized positions and force them to be reloaded.
  if (op == uint32_t(Opcode::kLoad) || op == uint32_t(Opcode::kStore)) {
    Insn& i = *in;
    i.opcode = static_cast<Opcode>(op);
    i.popPrev = f & dep::kPopPrev;
    i.popNext = f & dep::kPopNext;
    i.pushPrev = f & dep::kPushPrev;
    i.pushNext = f & dep::kPushNext;
    i.memType = memType(w);
    i.sramBase = sramBase(w);
    i.dramBase = dramBase(w);
    i.ySize = ySize(w);
    i.xSize = xSize(w);
    i.xStride = xStride(w);
    i.yPad0 = static_cast<uint32_t>((w1 >> mem::kYPad0) & lowBits(kMemPadBits));
    i.yPad1 = static_cast<uint32_t>((w1 >> mem::kYPad1) & lowBits(kMemPadBits));
    i.xPad0 = static_cast<uint32_t>((w1 >> mem::kXPad0) & lowBits(kMemPadBits));
    i.xPad1 = static_cast<uint32_t>((w1 >> mem::kXPad1) & lowBits(kMemPadBits));
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
  i.popPrev = f & dep::kPopPrev;
  i.popNext = f & dep::kPopNext;
  i.pushPrev = f & dep::kPushPrev;
  i.pushNext = f & dep::kPushNext;
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

// The checks every model runs on a program before any of it executes, with the errors
// decodeProgram documents: at least one instruction, the stream inside DRAM, each instruction
// valid (the first invalid one is reported by validateOrThrow). Returns what the models need to
// know of the stream besides.
struct CheckedProgram {
  const uint8_t* bytes = nullptr;  // the instructions, in DRAM
  bool hasFinish = false;
  bool storesIntoItself = false;   // some STORE writes DRAM the stream occupies
};
CheckedProgram checkProgram(const Isa& isa, const Dram& dram, const FastDecoder& dec, uint64_t insnPhys,
                            uint32_t count);

// Inline: the simulators call it once per instruction of a stream before running it.
inline bool FastDecoder::validWords(const uint64_t* w) const {
  const uint32_t op = opcode(w);
  if (op > uint32_t(Opcode::kAlu)) return false;
  if (op == uint32_t(Opcode::kLoad) || op == uint32_t(Opcode::kStore)) {
    // Isa::validate's checks on the fields as read (the memory format's positions are fixed).
    const uint64_t w1 = w[1];
    const uint32_t f = flags(w), memType = FastDecoder::memType(w);
    const bool isLoad = op == uint32_t(Opcode::kLoad);
    if (memType > uint32_t(MemId::kAcc8)) return false;
    const bool loadStage = isLoad && (memType == uint32_t(MemId::kInp) || memType == uint32_t(MemId::kWgt));
    if (loadStage && (f & dep::kPrev)) return false;  // the load stage has no previous stage
    if (!isLoad && (f & dep::kNext)) return false;    // the store stage has no next stage
    const uint64_t xSize = FastDecoder::xSize(w);
    if (xSize == 0) return true;  // a dependency carrier
    const MemId id = static_cast<MemId>(memType);
    const uint64_t ySize = FastDecoder::ySize(w), pads = w1 >> mem::kYPad0;  // the four pads
    if (isLoad ? id == MemId::kOut : id != MemId::kOut) return false;
    if (!isLoad && pads) return false;
    if (isLoad && id == MemId::kUop && (ySize != 1 || pads)) return false;
    constexpr uint64_t kPad = lowBits(kMemPadBits);
    const uint64_t yPad0 = pads & kPad, yPad1 = (pads >> (mem::kYPad1 - mem::kYPad0)) & kPad,
                   xPad0 = (pads >> (mem::kXPad0 - mem::kYPad0)) & kPad, xPad1 = (pads >> (mem::kXPad1 - mem::kYPad0)) & kPad;
    const uint64_t sramBase = FastDecoder::sramBase(w);
    const uint64_t rows = isLoad ? yPad0 + ySize + yPad1 : ySize;
    const uint64_t end = sramBase + (isLoad ? (xPad0 + xSize + xPad1) * rows : xSize * ySize);
    if (rows > 0 && end > sramDepth_[memType]) return false;
    if (ySize == 0) return true;
    const uint64_t eb = elemBytes_[memType], dramBase = FastDecoder::dramBase(w);
    const uint64_t xStride = FastDecoder::xStride(w);
    const uint64_t first = dramBase * eb, last = (dramBase + (ySize - 1) * xStride + xSize) * eb;
    if (last <= first) return true;
    return first <= dramSpan_ && last - first <= dramSpan_ - first && first >= Dram::kPageBytes;
  }
  if (op == uint32_t(Opcode::kFinish)) return true;
  const LoopFormat& l = op == uint32_t(Opcode::kAlu) ? alu_ : gemm_;
  const uint64_t bgn = l.uopBgn.get(w), end = l.uopEnd.get(w);
  if (end > cfg_.uopDepth || bgn > end) return false;
  return !(op == uint32_t(Opcode::kAlu) && l.aluOp.get(w) > uint32_t(AluOp::kMul));
}

}  // namespace tessera::hw::detail
