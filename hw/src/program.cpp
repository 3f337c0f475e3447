// Decoding and static validation of a program in DRAM (fsim and tsim run the same checks).
#include "tessera/hw/program.h"

#include <cstdio>

#include "tessera/hw/error.h"

namespace tessera::hw {

namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

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

std::vector<Insn> decodeProgram(const Isa& isa, const Dram& dram, uint64_t insnPhys, uint32_t count) {
  if (count == 0) throw Error("run", "instruction count is 0: a program needs at least a FINISH");
  const uint8_t* bytes = dram.at(insnPhys, uint64_t(count) * 16, "instruction fetch of " + std::to_string(count) +
                                                                     " instructions at " + hex(insnPhys));
  std::vector<Insn> prog(count);
  for (uint32_t i = 0; i < count; ++i) {
    prog[i] = isa.decode(Isa::rawFromBytes(bytes + 16 * size_t(i)));
    isa.validate(prog[i], i);
    const DramRange r = dramRange(prog[i], isa.config());
    if (r.end > r.first) dram.at(r.first, r.end - r.first, insnName(i, prog[i]) + ", field dram_base");
  }
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
