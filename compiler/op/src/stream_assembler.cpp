// Micro-op kernels and VTA runtime calls turned into a program's micro-ops and instruction stream.
#include "stream_assembler.h"

#include <sstream>

#include "tessera/hw/dep_stream.h"

namespace tessera::compiler::op::detail {

using hw::Insn;
using hw::MemId;
using hw::Opcode;
using hw::Stage;

namespace {

// VTA runtime's name of a stage in VTADepPush/VTADepPop calls.
const char* stageMacro(Stage s) {
  switch (s) {
    case Stage::kLoad: return "VTA_STAGE_LOAD";
    case Stage::kCompute: return "VTA_STAGE_COMPUTE";
    case Stage::kStore: return "VTA_STAGE_STORE";
  }
  return "?";
}

bool sameLoops(const Kernel& a, const Kernel& b) {
  return a.iterOut == b.iterOut && a.iterIn == b.iterIn && a.dstOut == b.dstOut && a.dstIn == b.dstIn &&
         a.srcOut == b.srcOut && a.srcIn == b.srcIn && a.wgtOut == b.wgtOut && a.wgtIn == b.wgtIn;
}

bool sameUops(const std::vector<hw::Uop>& a, const std::vector<hw::Uop>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].dst != b[i].dst || a[i].src != b[i].src || a[i].wgt != b[i].wgt) return false;
  return true;
}

// The instruction stream with its dependency flags (hw::DependencyStream), and the program
// buffer each instruction moves (-1 for compute instructions and carriers).
class FlaggedStream {
 public:
  void insn(const Insn& in, int buffer) {
    Insn& added = stream_.append(in.stage());
    const bool popPrev = added.popPrev, popNext = added.popNext;
    added = in;
    added.popPrev = popPrev;
    added.popNext = popNext;
    bufferCarriers();
    buffers_.back() = buffer;
  }
  void pop(Stage from, Stage to) {
    stream_.pop(from, to);
    bufferCarriers();
  }
  void push(Stage from, Stage to) {
    stream_.push(from, to);
    bufferCarriers();
  }
  // Compute must see the last store and the last load before FINISH drains the queues.
  void finish() {
    push(Stage::kStore, Stage::kCompute);
    push(Stage::kLoad, Stage::kCompute);
    pop(Stage::kStore, Stage::kCompute);
    pop(Stage::kLoad, Stage::kCompute);
    Insn fin;
    fin.opcode = Opcode::kFinish;
    insn(fin, -1);
  }
  std::vector<Insn>& insns() { return stream_.insns(); }
  std::vector<int32_t>& buffers() { return buffers_; }

 private:
  void bufferCarriers() { buffers_.resize(stream_.insns().size(), -1); }

  hw::DependencyStream stream_{hw::DependencyStream::Folding::kIntoCarriers};
  std::vector<int32_t> buffers_;
};

}  // namespace

Insn memInsn(Opcode op, MemId mem, uint32_t sram, uint32_t dram, uint32_t y, uint32_t x, uint32_t stride) {
  Insn in;
  in.opcode = op;
  in.memType = static_cast<uint32_t>(mem);
  in.sramBase = sram;
  in.dramBase = dram;
  in.ySize = y;
  in.xSize = x;
  in.xStride = stride;
  return in;
}

int StreamAssembler::kernel(Kernel k) {
  for (size_t i = 0; i < kernels_.size(); ++i)
    if (sameLoops(kernels_[i], k) && sameUops(kernels_[i].uops, k.uops)) return static_cast<int>(i);
  kernels_.push_back(std::move(k));
  return static_cast<int>(kernels_.size() - 1);
}

void StreamAssembler::add(const Insn& in, int buffer) {
  Call c;
  c.insn = in;
  c.buffer = buffer;
  calls_.push_back(c);
}

void StreamAssembler::loadUops(int buffer) {
  Call c;
  c.insn = memInsn(Opcode::kLoad, MemId::kUop, 0, 0, 1, 0, 0);
  c.buffer = buffer;
  c.allUops = true;
  calls_.push_back(c);
}

void StreamAssembler::push(Stage from, Stage to) { token(Call::kPush, from, to); }

void StreamAssembler::pop(Stage from, Stage to) { token(Call::kPop, from, to); }

void StreamAssembler::token(Call::Kind kind, Stage from, Stage to) {
  Call c;
  c.kind = kind;
  c.from = from;
  c.to = to;
  calls_.push_back(c);
}

Call StreamAssembler::kernelCall(Opcode opcode, int kernel) const {
  const Kernel& k = kernels_[size_t(kernel)];
  Call c;
  c.insn.opcode = opcode;
  c.insn.iterOut = k.iterOut;
  c.insn.iterIn = k.iterIn;
  c.insn.dstFactorOut = k.dstOut;
  c.insn.dstFactorIn = k.dstIn;
  c.insn.srcFactorOut = k.srcOut;
  c.insn.srcFactorIn = k.srcIn;
  c.kernel = kernel;
  return c;
}

void StreamAssembler::gemm(int kernel, bool reset) {
  Call c = kernelCall(Opcode::kGemm, kernel);
  const Kernel& k = kernels_[size_t(kernel)];
  c.insn.reset = reset;
  c.insn.wgtFactorOut = k.wgtOut;  // ALU instructions have no weight loops
  c.insn.wgtFactorIn = k.wgtIn;
  calls_.push_back(c);
}

void StreamAssembler::alu(int kernel, hw::AluOp op, bool useImm, int32_t imm) {
  Call c = kernelCall(Opcode::kAlu, kernel);
  c.insn.aluOp = static_cast<uint32_t>(op);
  c.insn.useImm = useImm;
  c.insn.imm = imm;
  calls_.push_back(c);
}

void StreamAssembler::placeKernels(Program& prog) {
  prog.uops.clear();
  for (size_t i = 0; i < kernels_.size(); ++i) {
    Kernel& k = kernels_[i];
    bool shared = false;
    for (size_t j = 0; j < i && !shared; ++j)
      if (sameUops(kernels_[j].uops, k.uops)) {
        k.begin = kernels_[j].begin;
        shared = true;
      }
    if (shared) continue;
    k.begin = static_cast<uint32_t>(prog.uops.size());
    prog.uops.insert(prog.uops.end(), k.uops.begin(), k.uops.end());
  }
}

void StreamAssembler::assemble(Program& prog) const {
  FlaggedStream a;
  for (const Call& c : calls_) {
    if (c.kind == Call::kPush) {
      a.push(c.from, c.to);
    } else if (c.kind == Call::kPop) {
      a.pop(c.from, c.to);
    } else if (c.kernel >= 0) {
      Insn in = c.insn;
      const Kernel& k = kernels_[size_t(c.kernel)];
      in.uopBgn = k.begin;
      in.uopEnd = k.begin + static_cast<uint32_t>(k.uops.size());
      a.insn(in, c.buffer);
    } else if (c.allUops) {
      Insn in = c.insn;
      in.xSize = in.xStride = static_cast<uint32_t>(prog.uops.size());
      a.insn(in, c.buffer);
    } else {
      a.insn(c.insn, c.buffer);
    }
  }
  a.finish();
  prog.insns = std::move(a.insns());
  prog.insnBuffer = std::move(a.buffers());
}

std::string StreamAssembler::runtimeCalls(const Program& prog) const {
  std::ostringstream os;
  for (const Kernel& k : kernels_) {
    os << "finit " << k.name << " (micro-ops " << k.begin << ".." << k.begin + k.uops.size() << "):\n";
    os << "  VTAUopLoopBegin(" << k.iterOut << ", " << k.dstOut << ", " << k.srcOut << ", " << k.wgtOut << ");\n";
    os << "  VTAUopLoopBegin(" << k.iterIn << ", " << k.dstIn << ", " << k.srcIn << ", " << k.wgtIn << ");\n";
    for (const auto& u : k.uops) os << "  VTAUopPush(" << u.dst << ", " << u.src << ", " << u.wgt << ");\n";
    os << "  VTAUopLoopEnd(); VTAUopLoopEnd();\n";
  }
  for (const Call& c : calls_) {
    if (c.kind != Call::kInsn) {
      os << (c.kind == Call::kPush ? "VTADepPush" : "VTADepPop") << "(cmd, " << stageMacro(c.from) << ", "
         << stageMacro(c.to) << ");\n";
      continue;
    }
    Insn in = c.insn;
    if (c.allUops) in.xSize = in.xStride = static_cast<uint32_t>(prog.uops.size());
    const std::string buf = c.buffer >= 0 ? prog.buffers[size_t(c.buffer)].name : "?";
    if (in.opcode == Opcode::kLoad)
      os << "VTALoadBuffer2D(cmd, " << buf << ", " << in.dramBase << ", " << in.xSize << ", " << in.ySize << ", "
         << in.xStride << ", " << in.xPad0 << ", " << in.yPad0 << ", " << in.xPad1 << ", " << in.yPad1 << ", "
         << in.sramBase << ", " << hw::memIdName(in.memType) << ");\n";
    else if (in.opcode == Opcode::kStore)
      os << "VTAStoreBuffer2D(cmd, " << in.sramBase << ", OUT, " << buf << ", " << in.dramBase << ", " << in.xSize
         << ", " << in.ySize << ", " << in.xStride << ");\n";
    else if (in.opcode == Opcode::kGemm)
      os << "VTAPushGEMMOp(" << kernels_[size_t(c.kernel)].name << (in.reset ? ", reset" : "") << ");\n";
    else
      os << "VTAPushALUOp(" << kernels_[size_t(c.kernel)].name << ", " << hw::aluOpName(in.aluOp)
         << (in.useImm ? ", imm=" + std::to_string(in.imm) : std::string(", vector")) << ");\n";
  }
  os << "VTASynchronize(cmd, ...);\n";
  return os.str();
}

}  // namespace tessera::compiler::op::detail
