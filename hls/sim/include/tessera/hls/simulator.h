// The hls target's simulator: the HLS design in C simulation behind the same run contract as fsim and tsim.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/counters.h"
#include "tessera/hw/dram.h"

namespace tessera::hls {

class Model;

// Runs programs on the HLS design (hls/design) compiled for this config. Programs are validated
// exactly as fsim and tsim validate them before anything executes; faults the design reports
// (index out of range, deadlock, unbalanced FINISH, work budget) become tessera::Error naming the
// instruction, micro-op, field or queue in fsim's words. Counters are instruction-level only.
class Simulator {
 public:
  Simulator(const hw::Config& cfg, hw::Dram& dram);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // `waitCycles` non-zero bounds the GEMM/ALU micro-ops of the run, as on fsim.
  void run(uint64_t insnPhys, uint32_t count, uint64_t waitCycles = 0);
  const hw::Counters& counters() const { return counters_; }
  void resetCounters() { counters_ = hw::Counters(); }

  // Shipped configs the design was compiled for in this build (TESSERA_HLS_CONFIGS).
  static std::vector<std::string> builtConfigs();
  // Empty if the design was compiled for `cfg` (same derived parameters); otherwise why not.
  static std::string unsupportedReason(const hw::Config& cfg);

 private:
  hw::Config cfg_;
  hw::Dram& dram_;
  hw::Counters counters_;
  std::unique_ptr<Model> model_;
};

}  // namespace tessera::hls
