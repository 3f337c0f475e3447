// Instruction and micro-op encoding, decoding and static validation.
#include "tessera/hw/isa.h"

#include <sstream>
#include <string>
#include <vector>

#include "tessera/support/error.h"
#include "tessera/hw/host_interface.h"

namespace tessera::hw {

const char* opcodeName(Opcode op) {
  switch (op) {
    case Opcode::kLoad: return "LOAD";
    case Opcode::kStore: return "STORE";
    case Opcode::kGemm: return "GEMM";
    case Opcode::kFinish: return "FINISH";
    case Opcode::kAlu: return "ALU";
  }
  return "INVALID";
}

const char* aluOpName(uint32_t op) {
  static const char* names[] = {"MIN", "MAX", "ADD", "SHR", "MUL"};
  return op < 5 ? names[op] : "INVALID";
}

const char* memIdName(uint32_t id) {
  static const char* names[] = {"UOP", "WGT", "INP", "ACC", "OUT", "ACC8"};
  return id < 6 ? names[id] : "INVALID";
}

const char* stageName(Stage s) {
  switch (s) {
    case Stage::kLoad: return "load";
    case Stage::kCompute: return "compute";
    case Stage::kStore: return "store";
  }
  return "?";
}

const char* tokenQueueName(TokenQueue q) {
  // The host-interface contract names the queues for registers, RTL, docs and messages alike.
  static const std::vector<std::string> kLabels = [] {
    std::vector<std::string> l;
    for (int i = 0; i < 4; ++i) l.push_back(tokenQueueLabel(i));
    return l;
  }();
  const int index = static_cast<int>(q);
  return index >= 0 && index < 4 ? kLabels[static_cast<size_t>(index)].c_str() : "?";
}

const char* fieldName(Field f) {
  static const char* names[] = {
      "opcode", "pop_prev", "pop_next", "push_prev", "push_next",
      "memory_type", "sram_base", "dram_base", "y_size", "x_size", "x_stride",
      "y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1",
      "reset", "uop_bgn", "uop_end", "iter_out", "iter_in",
      "dst_factor_out", "dst_factor_in", "src_factor_out", "src_factor_in",
      "wgt_factor_out", "wgt_factor_in", "alu_opcode", "use_imm", "imm"};
  int i = static_cast<int>(f);
  return i >= 0 && i < static_cast<int>(Field::kCount) ? names[i] : "?";
}

int64_t Insn::get(Field f) const {
  switch (f) {
    case Field::kOpcode: return static_cast<int64_t>(opcode);
    case Field::kPopPrev: return popPrev;
    case Field::kPopNext: return popNext;
    case Field::kPushPrev: return pushPrev;
    case Field::kPushNext: return pushNext;
    case Field::kMemType: return memType;
    case Field::kSramBase: return sramBase;
    case Field::kDramBase: return dramBase;
    case Field::kYSize: return ySize;
    case Field::kXSize: return xSize;
    case Field::kXStride: return xStride;
    case Field::kYPad0: return yPad0;
    case Field::kYPad1: return yPad1;
    case Field::kXPad0: return xPad0;
    case Field::kXPad1: return xPad1;
    case Field::kReset: return reset;
    case Field::kUopBgn: return uopBgn;
    case Field::kUopEnd: return uopEnd;
    case Field::kIterOut: return iterOut;
    case Field::kIterIn: return iterIn;
    case Field::kDstFactorOut: return dstFactorOut;
    case Field::kDstFactorIn: return dstFactorIn;
    case Field::kSrcFactorOut: return srcFactorOut;
    case Field::kSrcFactorIn: return srcFactorIn;
    case Field::kWgtFactorOut: return wgtFactorOut;
    case Field::kWgtFactorIn: return wgtFactorIn;
    case Field::kAluOpcode: return aluOp;
    case Field::kUseImm: return useImm;
    case Field::kImm: return imm;
    case Field::kCount: break;
  }
  return 0;
}

void Insn::set(Field f, int64_t v) {
  uint32_t u = static_cast<uint32_t>(v);
  switch (f) {
    case Field::kOpcode: opcode = static_cast<Opcode>(u); break;
    case Field::kPopPrev: popPrev = v != 0; break;
    case Field::kPopNext: popNext = v != 0; break;
    case Field::kPushPrev: pushPrev = v != 0; break;
    case Field::kPushNext: pushNext = v != 0; break;
    case Field::kMemType: memType = u; break;
    case Field::kSramBase: sramBase = u; break;
    case Field::kDramBase: dramBase = u; break;
    case Field::kYSize: ySize = u; break;
    case Field::kXSize: xSize = u; break;
    case Field::kXStride: xStride = u; break;
    case Field::kYPad0: yPad0 = u; break;
    case Field::kYPad1: yPad1 = u; break;
    case Field::kXPad0: xPad0 = u; break;
    case Field::kXPad1: xPad1 = u; break;
    case Field::kReset: reset = v != 0; break;
    case Field::kUopBgn: uopBgn = u; break;
    case Field::kUopEnd: uopEnd = u; break;
    case Field::kIterOut: iterOut = u; break;
    case Field::kIterIn: iterIn = u; break;
    case Field::kDstFactorOut: dstFactorOut = u; break;
    case Field::kDstFactorIn: dstFactorIn = u; break;
    case Field::kSrcFactorOut: srcFactorOut = u; break;
    case Field::kSrcFactorIn: srcFactorIn = u; break;
    case Field::kWgtFactorOut: wgtFactorOut = u; break;
    case Field::kWgtFactorIn: wgtFactorIn = u; break;
    case Field::kAluOpcode: aluOp = u; break;
    case Field::kUseImm: useImm = v != 0; break;
    case Field::kImm: imm = static_cast<int32_t>(v); break;
    case Field::kCount: break;
  }
}

bool Insn::operator==(const Insn& o) const {
  for (int f = 0; f < static_cast<int>(Field::kCount); ++f)
    if (get(static_cast<Field>(f)) != o.get(static_cast<Field>(f))) return false;
  return true;
}

Stage Insn::stage() const {
  switch (opcode) {
    case Opcode::kStore: return Stage::kStore;
    case Opcode::kLoad:
      return (memType == static_cast<uint32_t>(MemId::kInp) || memType == static_cast<uint32_t>(MemId::kWgt))
                 ? Stage::kLoad
                 : Stage::kCompute;
    default: return Stage::kCompute;
  }
}

uint64_t loadFootprint(const Insn& i) {
  return (uint64_t(i.xPad0) + i.xSize + i.xPad1) * (uint64_t(i.yPad0) + i.ySize + i.yPad1);
}

namespace {

struct FieldSpec {
  Field field;
  int width;
  bool isSigned;
};

// Allocates fields like a C compiler allocates bit-fields of one storage type: in order, moving
// to the next storage unit when a field would straddle the current one. Returns the total bits.
int place(const std::vector<FieldSpec>& specs, int unitBits, std::vector<FieldPos>* out) {
  int pos = 0;
  for (const auto& s : specs) {
    if ((pos % unitBits) + s.width > unitBits) pos = (pos / unitBits + 1) * unitBits;
    if (out) out->push_back({s.field, pos, s.width, s.isSigned});
    pos += s.width;
  }
  return pos;
}

std::vector<FieldSpec> commonSpecs() {
  return {{Field::kOpcode, kOpcodeBits, false}, {Field::kPopPrev, 1, false}, {Field::kPopNext, 1, false},
          {Field::kPushPrev, 1, false}, {Field::kPushNext, 1, false}};
}

std::vector<FieldSpec> memSpecs() {
  auto s = commonSpecs();
  s.insert(s.end(), {{Field::kMemType, kMemIdBits, false}, {Field::kSramBase, kMemSramBaseBits, false},
                     {Field::kDramBase, kMemDramBaseBits, false}, {Field::kYSize, kMemSizeBits, false},
                     {Field::kXSize, kMemSizeBits, false}, {Field::kXStride, kMemStrideBits, false},
                     {Field::kYPad0, kMemPadBits, false}, {Field::kYPad1, kMemPadBits, false},
                     {Field::kXPad0, kMemPadBits, false}, {Field::kXPad1, kMemPadBits, false}});
  return s;
}

std::vector<FieldSpec> loopSpecs(const Config& c) {
  auto s = commonSpecs();
  s.insert(s.end(), {{Field::kReset, 1, false}, {Field::kUopBgn, c.logUopDepth, false},
                     {Field::kUopEnd, c.logUopDepth + 1, false}, {Field::kIterOut, kLoopIterBits, false},
                     {Field::kIterIn, kLoopIterBits, false}});
  return s;
}

std::vector<FieldSpec> gemmSpecs(const Config& c) {
  auto s = loopSpecs(c);
  s.insert(s.end(), {{Field::kDstFactorOut, c.logAccDepth, false}, {Field::kDstFactorIn, c.logAccDepth, false},
                     {Field::kSrcFactorOut, c.logInpDepth, false}, {Field::kSrcFactorIn, c.logInpDepth, false},
                     {Field::kWgtFactorOut, c.logWgtDepth, false}, {Field::kWgtFactorIn, c.logWgtDepth, false}});
  return s;
}

std::vector<FieldSpec> aluSpecs(const Config& c) {
  auto s = loopSpecs(c);
  s.insert(s.end(), {{Field::kDstFactorOut, c.logAccDepth, false}, {Field::kDstFactorIn, c.logAccDepth, false},
                     {Field::kSrcFactorOut, c.logAccDepth, false}, {Field::kSrcFactorIn, c.logAccDepth, false},
                     {Field::kAluOpcode, kAluOpcodeBits, false}, {Field::kUseImm, 1, false},
                     {Field::kImm, kAluImmBits, true}});
  return s;
}

uint64_t mask(int width) { return width >= 64 ? ~uint64_t(0) : ((uint64_t(1) << width) - 1); }

// Reads `width` bits at `lo` of the 128-bit value (a field never straddles the two words).
uint64_t extract(const RawInsn& r, int lo, int width) {
  uint64_t word = lo < 64 ? r.lo : r.hi;
  return (word >> (lo % 64)) & mask(width);
}

void deposit(RawInsn* r, int lo, int width, uint64_t v) {
  uint64_t& word = lo < 64 ? r->lo : r->hi;
  word &= ~(mask(width) << (lo % 64));
  word |= (v & mask(width)) << (lo % 64);
}

}  // namespace

InsnLayout::InsnLayout(const Config& cfg) {
  place(memSpecs(), 64, &mem_);
  place(gemmSpecs(cfg), 64, &gemm_);
  place(aluSpecs(cfg), 64, &alu_);
  std::vector<FieldPos> u;
  place({{Field::kCount, cfg.logAccDepth, false}, {Field::kCount, cfg.logAccDepth, false},
         {Field::kCount, cfg.logWgtDepth, false}},
        32, &u);
  for (int i = 0; i < 3; ++i) uop_[i] = u[i];
}

const std::vector<FieldPos>& InsnLayout::format(Opcode op) const {
  switch (op) {
    case Opcode::kLoad:
    case Opcode::kStore: return mem_;
    case Opcode::kAlu: return alu_;
    default: return gemm_;
  }
}

int InsnLayout::width(Opcode op, Field f) const {
  for (const auto& p : format(op))
    if (p.field == f) return p.width;
  return 0;
}

std::string InsnLayout::overflowReason(const Config& cfg) {
  struct { const char* name; std::vector<FieldSpec> specs; } formats[] = {
      {"LOAD/STORE", memSpecs()}, {"GEMM", gemmSpecs(cfg)}, {"ALU", aluSpecs(cfg)}};
  for (const auto& f : formats) {
    int bits = place(f.specs, 64, nullptr);
    if (bits > kInsnBits)
      return std::string("the ") + f.name + " instruction needs " + std::to_string(bits) +
             " bits with these buffer index widths; it no longer fits the 128-bit instruction";
  }
  return "";
}

Isa::Isa(const Config& cfg) : cfg_(cfg), layout_(cfg) {}

RawInsn Isa::encode(const Insn& insn, const std::string& where) const {
  uint32_t op = static_cast<uint32_t>(insn.opcode);
  if (op > 4)
    throw Error(where.empty() ? "opcode" : where + ": opcode", "invalid opcode " + std::to_string(op));
  RawInsn raw;
  for (const auto& p : layout_.format(insn.opcode)) {
    int64_t v = insn.get(p.field);
    bool fits = p.isSigned ? (v >= -(int64_t(1) << (p.width - 1)) && v < (int64_t(1) << (p.width - 1)))
                           : (v >= 0 && uint64_t(v) <= mask(p.width));
    if (!fits) {
      std::string range = p.isSigned ? "[" + std::to_string(-(int64_t(1) << (p.width - 1))) + ", " +
                                           std::to_string((int64_t(1) << (p.width - 1)) - 1) + "]"
                                     : "[0, " + std::to_string(mask(p.width)) + "]";
      throw Error((where.empty() ? "" : where + ": ") + "field " + fieldName(p.field),
                  "value " + std::to_string(v) + " does not fit its " + std::to_string(p.width) +
                      "-bit field " + range);
    }
    deposit(&raw, p.lo, p.width, static_cast<uint64_t>(v));
  }
  return raw;
}

Insn Isa::decode(const RawInsn& raw) const {
  Insn insn;
  uint32_t op = static_cast<uint32_t>(extract(raw, 0, kOpcodeBits));
  insn.opcode = static_cast<Opcode>(op);
  if (op > 4) {
    // Keep the generic fields so the validator and disassembler can report them.
    for (const auto& p : layout_.gemmFormat()) {
      if (p.field == Field::kReset) break;
      insn.set(p.field, static_cast<int64_t>(extract(raw, p.lo, p.width)));
    }
    return insn;
  }
  for (const auto& p : layout_.format(insn.opcode)) {
    uint64_t v = extract(raw, p.lo, p.width);
    if (p.isSigned && (v >> (p.width - 1)) & 1) {
      insn.set(p.field, static_cast<int64_t>(v | ~mask(p.width)));
    } else {
      insn.set(p.field, static_cast<int64_t>(v));
    }
  }
  return insn;
}

uint32_t Isa::encodeUop(const Uop& u, const std::string& where) const {
  const uint32_t vals[3] = {u.dst, u.src, u.wgt};
  static const char* names[3] = {"dst_idx", "src_idx", "wgt_idx"};
  uint32_t raw = 0;
  for (int i = 0; i < 3; ++i) {
    const auto& p = layout_.uopFormat()[i];
    if (vals[i] > mask(p.width))
      throw Error((where.empty() ? "" : where + ": ") + "micro-op field " + names[i],
                  "value " + std::to_string(vals[i]) + " does not fit its " + std::to_string(p.width) + "-bit field");
    raw |= vals[i] << p.lo;
  }
  return raw;
}

Uop Isa::decodeUop(uint32_t raw) const {
  const auto& f = layout_.uopFormat();
  Uop u;
  u.dst = static_cast<uint32_t>((raw >> f[0].lo) & mask(f[0].width));
  u.src = static_cast<uint32_t>((raw >> f[1].lo) & mask(f[1].width));
  u.wgt = static_cast<uint32_t>((raw >> f[2].lo) & mask(f[2].width));
  return u;
}

void Isa::validate(const Insn& insn, size_t index) const {
  const uint32_t op = static_cast<uint32_t>(insn.opcode);
  const std::string at = "instruction " + std::to_string(index);
  auto fail = [&](Field f, const std::string& why) {
    throw Error(at + " (" + opcodeName(insn.opcode) + "), field " + fieldName(f), why);
  };
  if (op > 4) throw Error(at + ", field opcode", "invalid opcode " + std::to_string(op) + " (valid: 0-4)");

  Stage st = insn.stage();
  if (insn.isMem()) {
    bool isLoad = insn.opcode == Opcode::kLoad;
    if (insn.memType > 5) fail(Field::kMemType, "invalid memory type " + std::to_string(insn.memType));
    if (st == Stage::kLoad && (insn.popPrev || insn.pushPrev))
      fail(insn.popPrev ? Field::kPopPrev : Field::kPushPrev,
           "the load stage has no previous stage; only pop_next/push_next are allowed");
    if (st == Stage::kStore && (insn.popNext || insn.pushNext))
      fail(insn.popNext ? Field::kPopNext : Field::kPushNext,
           "the store stage has no next stage; only pop_prev/push_prev are allowed");
    if (insn.isNop()) return;  // a zero-width transfer only carries dependency flags
    MemId id = static_cast<MemId>(insn.memType);
    if (isLoad && id == MemId::kOut) fail(Field::kMemType, "LOAD cannot target the OUT memory");
    if (!isLoad && id != MemId::kOut)
      fail(Field::kMemType, std::string("STORE reads the accumulator through memory type OUT (4), not ") +
                                memIdName(insn.memType));
    if (!isLoad && (insn.xPad0 || insn.xPad1 || insn.yPad0 || insn.yPad1))
      fail(insn.yPad0 ? Field::kYPad0 : insn.yPad1 ? Field::kYPad1 : insn.xPad0 ? Field::kXPad0 : Field::kXPad1,
           "STORE does not support padding");
    if (isLoad && id == MemId::kUop) {
      if (insn.ySize != 1) fail(Field::kYSize, "micro-op loads are one row (y_size must be 1)");
      if (insn.xPad0 || insn.xPad1 || insn.yPad0 || insn.yPad1)
        fail(insn.yPad0 ? Field::kYPad0 : insn.yPad1 ? Field::kYPad1 : insn.xPad0 ? Field::kXPad0 : Field::kXPad1,
             "micro-op loads cannot be padded");
    }
    uint64_t depth = cfg_.sramDepth(id);
    uint64_t rows = isLoad ? uint64_t(insn.yPad0) + insn.ySize + insn.yPad1 : insn.ySize;
    uint64_t end = insn.sramBase + (isLoad ? loadFootprint(insn) : uint64_t(insn.xSize) * insn.ySize);
    if (rows > 0 && end > depth)
      fail(Field::kSramBase, std::string(memIdName(insn.memType)) + " SRAM range [" + std::to_string(insn.sramBase) +
                                 ", " + std::to_string(end) + ") exceeds the buffer depth " + std::to_string(depth));
    return;
  }
  if (insn.opcode == Opcode::kFinish) return;
  if (insn.uopEnd > cfg_.uopDepth)
    fail(Field::kUopEnd, "uop_end " + std::to_string(insn.uopEnd) + " exceeds the micro-op buffer depth " +
                             std::to_string(cfg_.uopDepth));
  if (insn.uopBgn > insn.uopEnd)
    fail(Field::kUopBgn, "uop_bgn " + std::to_string(insn.uopBgn) + " is past uop_end " + std::to_string(insn.uopEnd));
  if (insn.opcode == Opcode::kAlu && insn.aluOp > 4)
    fail(Field::kAluOpcode, "invalid ALU opcode " + std::to_string(insn.aluOp) + " (valid: 0-4)");
}

RawInsn Isa::rawFromBytes(const uint8_t* b) {
  RawInsn r;
  for (int i = 7; i >= 0; --i) r.lo = (r.lo << 8) | b[i];
  for (int i = 15; i >= 8; --i) r.hi = (r.hi << 8) | b[i];
  return r;
}

void Isa::rawToBytes(const RawInsn& r, uint8_t* b) {
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(r.lo >> (8 * i));
  for (int i = 0; i < 8; ++i) b[8 + i] = static_cast<uint8_t>(r.hi >> (8 * i));
}

}  // namespace tessera::hw
