// The operator compiler: tiling search under a cycle cost model, lowering to instructions, printing.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "tessera/compiler/op/operator.h"
#include "tessera/compiler/op/program.h"
#include "tessera/hw/config.h"
#include "tessera/hw/dram_timing.h"

namespace tessera::compiler::op {

// Tile sizes in blocks: output-channel blocks (tco), output rows (th), output columns (tw) per
// output tile, and input-channel blocks (tci) per reduction step. Each step loads one half of the
// input and weight buffers while the GEMM core works on the other half. For add and the poolings
// tco counts planes (batch block x channel block) and tci is 1.
struct Tiling {
  int tco = 0, th = 0, tw = 0, tci = 0;
  bool operator==(const Tiling& o) const { return tco == o.tco && th == o.th && tw == o.tw && tci == o.tci; }
};

// The memory and pipeline timing the cost model assumes: the timed targets' default DRAM model and
// per-instruction costs measured on tsim (docs/compiler.md shows the calibration).
struct CostParams {
  hw::DramTiming dram;
  double loadInsnCycles = 8;     // issue and completion of one LOAD beyond its data
  double computeInsnCycles = 6;  // issue and micro-op pipeline drain of one GEMM/ALU instruction
  double storeInsnCycles = 8;
};

struct CostEstimate {
  double cycles = 0;
  double computeCycles = 0, loadCycles = 0, storeCycles = 0, epilogueCycles = 0;
};

// Why `t` cannot run `op` on `cfg` (SRAM capacity, field widths, micro-op buffer), or empty if it can.
std::string tilingProblem(const hw::Config& cfg, const Operator& op, const Tiling& t);
CostEstimate estimateCycles(const hw::Config& cfg, const Operator& op, const Tiling& t,
                            const CostParams& params = CostParams());
// The legal tiling with the fewest estimated cycles. Throws tessera::Error naming the operator if
// none fits. `legal` receives how many tilings were legal.
Tiling chooseTiling(const hw::Config& cfg, const Operator& op, uint64_t* legal = nullptr,
                    const CostParams& params = CostParams());

struct CompileOptions {
  // Where to print each stage (operator, schedule and loop nest, runtime calls, disassembly,
  // summary) after it runs; nullptr prints nothing.
  std::ostream* printAfterAll = nullptr;
  Tiling tiling;  // all zero: chosen by chooseTiling
};

// Compiles `op` with its constant operands (weights, bias; `data.input` is not used) into a
// program for `cfg`. Throws tessera::Error naming the operator and the reason if it cannot.
Program compile(const hw::Config& cfg, const Operator& op, const OperatorData& data,
                const CompileOptions& options = CompileOptions());

// The per-operator summary as text (tiles, SRAM occupancy, instructions, micro-ops, DRAM bytes).
std::string formatSummary(const hw::Config& cfg, const Program& program);

}  // namespace tessera::compiler::op
