// Internal to the operator compiler: micro-op kernels, VTA runtime calls, and their assembly into an instruction stream.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/compiler/op/compile.h"
#include "tessera/compiler/op/program.h"
#include "tessera/hw/isa.h"

namespace tessera::compiler::op::detail {

// A micro-op kernel: its micro-ops and the two loops of the GEMM/ALU instructions that run it.
struct Kernel {
  std::string name;
  std::vector<hw::Uop> uops;
  uint32_t iterOut = 1, iterIn = 1;
  uint32_t dstOut = 0, dstIn = 0, srcOut = 0, srcIn = 0, wgtOut = 0, wgtIn = 0;
  uint32_t begin = 0;  // index in the micro-op buffer, set by StreamAssembler::placeKernels
};

// One call of VTA's runtime API as a lowering issues it. LOAD/STORE/GEMM/ALU calls carry the
// instruction they become (without dependency flags, dram_base relative to `buffer`).
struct Call {
  enum Kind { kInsn, kPush, kPop } kind = kInsn;
  hw::Insn insn;
  int buffer = -1;
  int kernel = -1;
  hw::Stage from = hw::Stage::kLoad, to = hw::Stage::kLoad;  // of a push or pop
  bool allUops = false;  // LOAD UOP of the whole micro-op buffer, sized when the kernels are placed
};

hw::Insn memInsn(hw::Opcode op, hw::MemId mem, uint32_t sram, uint32_t dram, uint32_t y, uint32_t x, uint32_t stride);

// Collects kernels and runtime calls, then turns them into a program's micro-ops and instructions.
class StreamAssembler {
 public:
  // Adds a kernel and returns its index; an identical kernel already added is reused.
  int kernel(Kernel k);
  void add(const hw::Insn& in, int buffer);
  // LOAD UOP of every placed micro-op from `buffer` (the program's "uops") into the buffer's start.
  void loadUops(int buffer);
  void push(hw::Stage from, hw::Stage to);
  void pop(hw::Stage from, hw::Stage to);
  void gemm(int kernel, bool reset);
  void alu(int kernel, hw::AluOp op, bool useImm, int32_t imm);
  // Places every kernel's micro-ops in `prog.uops`, storing identical sequences once.
  void placeKernels(Program& prog);
  // The instruction stream, the way VTA's runtime builds it: pops wait on the next instruction of
  // the popping stage, pushes fold into the previous instruction of the pushing stage, and
  // zero-width LOAD/STORE instructions carry what cannot be folded; FINISH drains the queues.
  void assemble(Program& prog) const;
  // Kernel definitions (finit bodies) and the call sequence as VTA runtime API calls.
  std::string runtimeCalls(const Program& prog) const;
  const std::vector<Kernel>& kernels() const { return kernels_; }

 private:
  void token(Call::Kind kind, hw::Stage from, hw::Stage to);  // a push or a pop
  // A GEMM or ALU call running `kernel`: its micro-op loops (iterations, destination and source factors).
  Call kernelCall(hw::Opcode opcode, int kernel) const;

  std::vector<Kernel> kernels_;
  std::vector<Call> calls_;
};

}  // namespace tessera::compiler::op::detail
