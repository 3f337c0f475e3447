// Internal to the operator compiler: the lowering interface both lowerings (GEMM, vector ALU) implement.
#pragma once

#include <memory>
#include <string>

#include "stream_assembler.h"
#include "tessera/compiler/op/compile.h"
#include "tessera/compiler/op/program.h"
#include "tessera/hw/config.h"

namespace tessera::compiler::op::detail {

// One operator's lowering: fills the stream assembler with kernels and calls for a chosen tiling, and
// describes what it did for the printed stages and the summary.
class OperatorLowering : public StreamAssembler {
 public:
  virtual ~OperatorLowering() = default;
  // Adds every kernel and call; the program's buffers already exist.
  virtual void run(Program& prog) = 0;
  // The tiled loop nest as pseudo-code with buffer scopes.
  virtual std::string loopNest() const = 0;
  // The tiling in one line (the summary's `tiling`).
  virtual std::string tilingText() const = 0;
  // Tiles, steps and SRAM entries in use.
  virtual void summarize(ProgramSummary& s) const = 0;
};

// conv2d and dense on the GEMM core (gemm_lowering.cpp); `t` must be legal.
std::unique_ptr<OperatorLowering> makeGemmLowering(const hw::Config& cfg, const Operator& op, const Tiling& t);
// add and the poolings on the vector ALU (vector_lowering.cpp); `t` must be legal.
std::unique_ptr<OperatorLowering> makeVectorLowering(const hw::Config& cfg, const Operator& op, const Tiling& t);

}  // namespace tessera::compiler::op::detail
