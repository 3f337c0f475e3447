// Decoding and static validation of a program in DRAM (fsim and tsim run the same checks).
#include "tessera/hw/program.h"

#include <algorithm>
#include <cstdio>
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
      b.mask = p.width >= 64 ? ~uint64_t(0) : (uint64_t(1) << p.width) - 1;
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
  const int want[][3] = {{0, mem::kMemType, 3},  {0, mem::kSramBase, 16}, {0, mem::kDramBase, 32}, {1, mem::kYSize, 16},
                         {1, mem::kXSize, 16},   {1, mem::kXStride, 16},  {1, mem::kYPad0, 4},     {1, mem::kYPad1, 4},
                         {1, mem::kXPad0, 4},    {1, mem::kXPad1, 4}};
  for (int i = 0; i < 10; ++i)
    if (fixed[i].word != want[i][0] || fixed[i].shift != want[i][1] || fixed[i].mask != (uint64_t(1) << want[i][2]) - 1)
      throw Error("fast decoder", "the LOAD/STORE layout differs from VTA's fixed one");
  for (uint32_t id = 0; id < 6; ++id) elemBytes_[id] = static_cast<uint64_t>(cfg_.dramElemBytes(static_cast<MemId>(id)));
  for (uint32_t id = 0; id < 6; ++id) sramDepth_[id] = cfg_.sramDepth(static_cast<MemId>(id));
  aluLoopMask_[0] = aluLoopMask_[1] = ~uint64_t(0);
  aluLoopMask_[0] &= ~(uint64_t(15) << 3);  // dependency flags
  for (const BitPos& f : {alu_.aluOp, alu_.imm}) aluLoopMask_[f.word] &= ~(f.mask << f.shift);
}

bool FastDecoder::valid(const Insn& in) const {
  const uint32_t op = static_cast<uint32_t>(in.opcode);
  if (op > 4) return false;
  if (in.isMem()) {
    const bool isLoad = in.opcode == Opcode::kLoad;
    if (in.memType > 5) return false;
    const Stage st = in.stage();
    if (st == Stage::kLoad && (in.popPrev || in.pushPrev)) return false;
    if (st == Stage::kStore && (in.popNext || in.pushNext)) return false;
    if (in.isNop()) return true;
    const MemId id = static_cast<MemId>(in.memType);
    const bool padded = in.xPad0 || in.xPad1 || in.yPad0 || in.yPad1;
    if (isLoad ? id == MemId::kOut : id != MemId::kOut) return false;
    if (!isLoad && padded) return false;
    if (isLoad && id == MemId::kUop && (in.ySize != 1 || padded)) return false;
    const uint64_t rows = isLoad ? uint64_t(in.yPad0) + in.ySize + in.yPad1 : in.ySize;
    const uint64_t end = in.sramBase + (isLoad ? loadFootprint(in) : uint64_t(in.xSize) * in.ySize);
    if (rows > 0 && end > cfg_.sramDepth(id)) return false;
    if (in.ySize == 0) return true;
    // decodeProgram's Dram::at of [first, end): inside the address space and off page 0.
    const uint64_t eb = elemBytes_[in.memType];
    const uint64_t first = uint64_t(in.dramBase) * eb;
    const uint64_t last = (uint64_t(in.dramBase) + uint64_t(in.ySize - 1) * in.xStride + in.xSize) * eb;
    if (last <= first) return true;
    return first <= dramSpan_ && last - first <= dramSpan_ - first && first >= Dram::kPageBytes;
  }
  if (in.opcode == Opcode::kFinish) return true;
  if (in.uopEnd > cfg_.uopDepth || in.uopBgn > in.uopEnd) return false;
  return !(in.opcode == Opcode::kAlu && in.aluOp > 4);
}

}  // namespace detail

void validateOrThrow(const Isa& isa, const Dram& dram, const Insn& in, size_t index) {
  // The reference checks word the error; they must throw whenever the fast checks refuse.
  isa.validate(in, index);
  const DramRange r = dramRange(in, isa.config());
  if (r.end > r.first) dram.at(r.first, r.end - r.first, insnName(index, in) + ", field dram_base");
  throw Error(insnName(index, in), "internal error: the fast validation refuses what validate() accepts");
}

// Streams longer than this are validated in place before being decoded into host memory.
constexpr uint32_t kPrescanInsns = 1u << 20;

std::vector<Insn> decodeProgram(const Isa& isa, const Dram& dram, uint64_t insnPhys, uint32_t count) {
  if (count == 0) throw Error("run", "instruction count is 0: a program needs at least a FINISH");
  const uint8_t* bytes = dram.at(insnPhys, uint64_t(count) * 16, "instruction fetch of " + std::to_string(count) +
                                                                     " instructions at " + hex(insnPhys));
  const detail::FastDecoder dec(isa, dram);
  if (count > kPrescanInsns) {
    // A long stream is checked in place before any host memory is sized by it: a count that runs
    // into never-written DRAM (zero words decode as valid empty LOADs) ends in the missing-FINISH
    // error the run would give, instead of gigabytes of decoded instructions.
    bool finish = false;
    for (uint32_t i = 0; i < count; ++i) {
      uint64_t w[2];
      detail::loadWords(bytes + 16 * size_t(i), w);
      if (!dec.validWords(w)) validateOrThrow(isa, dram, isa.decode(Isa::rawFromBytes(bytes + 16 * size_t(i))), i);
      finish |= detail::FastDecoder::opcode(w) == uint32_t(Opcode::kFinish);
    }
    if (!finish) throw run_error::missingFinish(count);
  }
  std::vector<Insn> prog;
  try {
    prog.resize(count);
  } catch (const std::bad_alloc&) {
    // Zero pages of simulated DRAM cost nothing, so a long stream can fit there and still not here.
    throw Error("instruction fetch of " + std::to_string(count) + " instructions at " + hex(insnPhys),
                "decoding them needs " + std::to_string(uint64_t(count) * sizeof(Insn)) +
                    " bytes of host memory, more than the host gives");
  }
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t w[2];
    detail::loadWords(bytes + 16 * size_t(i), w);
    if (detail::FastDecoder::opcode(w) > 4) {
      prog[i] = isa.decode(Isa::rawFromBytes(bytes + 16 * size_t(i)));
    } else {
      dec.decode(w, &prog[i]);
    }
    if (!dec.valid(prog[i])) validateOrThrow(isa, dram, prog[i], i);
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
