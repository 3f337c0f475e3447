// Decoding and static validation of a program in DRAM (fsim and tsim run the same checks).
#include "tessera/hw/program.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <new>

#include "fast_decode.h"
#include "tessera/support/error.h"
#include "tessera/hw/run_error.h"
#include "tessera/support/format.h"

namespace tessera::hw {

namespace {

}  // namespace

std::string insnName(size_t index, const Insn& insn) {
  std::string s = "instruction " + std::to_string(index) + " (" + opcodeName(insn.opcode);
  if (insn.isMem()) s += std::string(".") + memIdName(insn.memType);
  if (insn.opcode == Opcode::kAlu) s += std::string(".") + aluOpName(insn.aluOp);
  return s + ")";
}

DramRange dramRange(const Insn& in, const Config& cfg) {
  if (!in.isMem() || in.isNop() || in.ySize == 0) return {};
  const uint64_t eb = cfg.dramElemBytes(static_cast<MemId>(in.memType));
  const uint64_t first = uint64_t(in.dramBase) * eb;
  const uint64_t end = (uint64_t(in.dramBase) + uint64_t(in.ySize - 1) * in.xStride + in.xSize) * eb;
  return {first, end};
}

namespace detail {

namespace {

BitPos posOf(const std::vector<FieldPos>& format, Field f) {
  for (const auto& p : format)
    if (p.field == f) {
      BitPos b;
      b.word = static_cast<uint8_t>(p.lo / 64);
      b.shift = static_cast<uint8_t>(p.lo % 64);
      b.mask = lowBits(p.width);
      return b;
    }
  return BitPos{};  // absent: reads as 0
}

}  // namespace

FastDecoder::FastDecoder(const Isa& isa, const Dram& dram) : cfg_(isa.config()), dramSpan_(dram.span()) {
  const InsnLayout& l = isa.layout();
  const auto& m = l.memFormat();
  memType_ = posOf(m, Field::kMemType);
  sramBase_ = posOf(m, Field::kSramBase);
  dramBase_ = posOf(m, Field::kDramBase);
  ySize_ = posOf(m, Field::kYSize);
  xSize_ = posOf(m, Field::kXSize);
  xStride_ = posOf(m, Field::kXStride);
  yPad0_ = posOf(m, Field::kYPad0);
  yPad1_ = posOf(m, Field::kYPad1);
  xPad0_ = posOf(m, Field::kXPad0);
  xPad1_ = posOf(m, Field::kXPad1);
  auto loops = [](const std::vector<FieldPos>& f, LoopFormat* o) {
    o->reset = posOf(f, Field::kReset);
    o->uopBgn = posOf(f, Field::kUopBgn);
    o->uopEnd = posOf(f, Field::kUopEnd);
    o->iterOut = posOf(f, Field::kIterOut);
    o->iterIn = posOf(f, Field::kIterIn);
    o->dstOut = posOf(f, Field::kDstFactorOut);
    o->dstIn = posOf(f, Field::kDstFactorIn);
    o->srcOut = posOf(f, Field::kSrcFactorOut);
    o->srcIn = posOf(f, Field::kSrcFactorIn);
    o->wgtOut = posOf(f, Field::kWgtFactorOut);
    o->wgtIn = posOf(f, Field::kWgtFactorIn);
    o->aluOp = posOf(f, Field::kAluOpcode);
    o->useImm = posOf(f, Field::kUseImm);
    o->imm = posOf(f, Field::kImm);
    for (const auto& p : f)
      if (p.field == Field::kImm) o->immWidth = p.width;
  };
  loops(l.gemmFormat(), &gemm_);
  loops(l.aluFormat(), &alu_);
  // decode() reads the memory format at fixed positions.
  const BitPos fixed[] = {memType_, sramBase_, dramBase_, ySize_, xSize_, xStride_, yPad0_, yPad1_, xPad0_, xPad1_};
  const int want[][3] = {{0, mem::kMemType, kMemIdBits},      {0, mem::kSramBase, kMemSramBaseBits},
                         {0, mem::kDramBase, kMemDramBaseBits}, {1, mem::kYSize, kMemSizeBits},
                         {1, mem::kXSize, kMemSizeBits},        {1, mem::kXStride, kMemStrideBits},
                         {1, mem::kYPad0, kMemPadBits},         {1, mem::kYPad1, kMemPadBits},
                         {1, mem::kXPad0, kMemPadBits},         {1, mem::kXPad1, kMemPadBits}};
  for (size_t i = 0; i < std::size(fixed); ++i)
    if (fixed[i].word != want[i][0] || fixed[i].shift != want[i][1] || fixed[i].mask != lowBits(want[i][2]))
      throw Error("fast decoder", "the LOAD/STORE layout differs from VTA's fixed one");
  if (cfg_.insnBytes != kInsnBits / 8) throw Error("fast decoder", "instructions are not 128 bits");
  for (uint32_t id = 0; id < 6; ++id) elemBytes_[id] = static_cast<uint64_t>(cfg_.dramElemBytes(static_cast<MemId>(id)));
  for (uint32_t id = 0; id < 6; ++id) sramDepth_[id] = cfg_.sramDepth(static_cast<MemId>(id));
  aluLoopMask_[0] = aluLoopMask_[1] = ~uint64_t(0);
  aluLoopMask_[0] &= ~(lowBits(dep::kBits) << kOpcodeBits);  // dependency flags
  for (const BitPos& f : {alu_.aluOp, alu_.imm}) aluLoopMask_[f.word] &= ~(f.mask << f.shift);
}

}  // namespace detail

void validateOrThrow(const Isa& isa, const Dram& dram, const Insn& in, size_t index) {
  // The reference checks word the error; they must throw whenever the fast checks refuse.
  isa.validate(in, index);
  const DramRange r = dramRange(in, isa.config());
  if (r.end > r.first) dram.at(r.first, r.end - r.first, insnName(index, in) + ", field dram_base");
  throw Error(insnName(index, in), "internal error: the fast validation refuses what validate() accepts");
}

namespace detail {

CheckedProgram checkProgram(const Isa& isa, const Dram& dram, const FastDecoder& dec, uint64_t insnPhys,
                            uint32_t count) {
  if (count == 0) throw Error("run", "instruction count is 0: a program needs at least a FINISH");
  const uint64_t insnBytes = static_cast<uint64_t>(isa.config().insnBytes);
  CheckedProgram p;
  p.bytes = dram.at(insnPhys, count * insnBytes,
                    "instruction fetch of " + std::to_string(count) + " instructions at " + hex(insnPhys));
  const uint64_t insnEnd = insnPhys + count * insnBytes;
  const uint64_t outElemBytes = static_cast<uint64_t>(isa.config().outElemBytes);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* at = p.bytes + i * insnBytes;
    uint64_t w[2];
    loadWords(at, w);
    if (!dec.validWords(w)) validateOrThrow(isa, dram, isa.decode(Isa::rawFromBytes(at)), i);
    const uint32_t op = FastDecoder::opcode(w);
    p.hasFinish |= op == uint32_t(Opcode::kFinish);
    if (op == uint32_t(Opcode::kStore) && FastDecoder::xSize(w) && FastDecoder::ySize(w)) {
      // dramRange of the STORE (validation made it OUT), from the words.
      const uint64_t first = uint64_t(FastDecoder::dramBase(w)) * outElemBytes;
      const uint64_t end = (uint64_t(FastDecoder::dramBase(w)) + uint64_t(FastDecoder::ySize(w) - 1) * FastDecoder::xStride(w) +
                            FastDecoder::xSize(w)) * outElemBytes;
      p.storesIntoItself |= end > first && first < insnEnd && insnPhys < end;
    }
  }
  return p;
}

}  // namespace detail

// Streams longer than this are validated in place before being decoded into host memory.
constexpr uint32_t kPrescanInsns = 1u << 20;

std::vector<Insn> decodeProgram(const Isa& isa, const Dram& dram, uint64_t insnPhys, uint32_t count) {
  const detail::FastDecoder dec(isa, dram);
  // Every instruction is checked in place before any host memory is sized by the stream.
  const detail::CheckedProgram checked = detail::checkProgram(isa, dram, dec, insnPhys, count);
  // A long stream without FINISH is a count that runs into never-written DRAM (zero words decode
  // as valid empty LOADs): it ends in the missing-FINISH error the run would give, instead of
  // gigabytes of decoded instructions.
  if (count > kPrescanInsns && !checked.hasFinish) throw run_error::missingFinish(count);
  std::vector<Insn> prog;
  try {
    prog.resize(count);
  } catch (const std::bad_alloc&) {
    // Zero pages of simulated DRAM cost nothing, so a long stream can fit there and still not here.
    throw Error("instruction fetch of " + std::to_string(count) + " instructions at " + hex(insnPhys),
                "decoding them needs " + std::to_string(uint64_t(count) * sizeof(Insn)) +
                    " bytes of host memory, more than the host gives");
  }
  const uint64_t insnBytes = static_cast<uint64_t>(isa.config().insnBytes);
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t w[2];
    detail::loadWords(checked.bytes + i * insnBytes, w);
    dec.decode(w, &prog[i]);  // valid: opcode 0-4
  }
  return prog;
}

std::vector<Insn> decodeRunnableProgram(const Isa& isa, const Dram& dram, uint64_t insnPhys, uint32_t count) {
  std::vector<Insn> prog = decodeProgram(isa, dram, insnPhys, count);
  if (std::none_of(prog.begin(), prog.end(), [](const Insn& i) { return i.opcode == Opcode::kFinish; }))
    throw run_error::missingFinish(count);
  return prog;
}

// Instruction-level counters of a program that ran to completion, as fsim counts them.
Counters countProgram(const std::vector<Insn>& prog, const Config& cfg) {
  Counters c;
  for (const Insn& in : prog) {
    const uint64_t uops = uint64_t(in.iterOut) * in.iterIn * (in.uopEnd > in.uopBgn ? in.uopEnd - in.uopBgn : 0);
    switch (in.opcode) {
      case Opcode::kLoad:
        if (in.isNop()) { ++c.nops; break; }
        ++c.insns[0];
        c.loadBytes[in.memType] +=
            uint64_t(in.xSize) * in.ySize * cfg.dramElemBytes(static_cast<MemId>(in.memType));
        break;
      case Opcode::kStore:
        if (in.isNop()) { ++c.nops; break; }
        ++c.insns[1];
        c.storeBytes += uint64_t(in.xSize) * in.ySize * cfg.outElemBytes;
        break;
      case Opcode::kGemm:
        ++c.insns[2];
        if (in.reset) {
          c.gemmResetUops += uops;
        } else {
          c.gemmUops += uops;
          c.macs += uops * uint64_t(cfg.batch) * cfg.blockIn * cfg.blockOut;
        }
        break;
      case Opcode::kAlu:
        ++c.insns[4];
        c.aluUops += uops;
        c.aluElemOps += uops * uint64_t(cfg.batch) * cfg.blockOut;
        break;
      case Opcode::kFinish: ++c.insns[3]; break;
    }
  }
  return c;
}

}  // namespace tessera::hw
