// The seam between the config-independent hls target and the design compiled once per config.
#pragma once

#include <cstdint>
#include <memory>

#include "tessera/hw/hls_outcome.h"

namespace tessera::hls {

using RunOutcome = hw::HlsRunOutcome;

// One accelerator instance of the design for one config, with its SRAMs (persistent across runs).
class Model {
 public:
  virtual ~Model() = default;
  // Runs tessera_hls_top over the DRAM image at `dramBase` (physical address 0).
  virtual RunOutcome run(uint8_t* dramBase, uint64_t insnPhys, uint32_t count, uint64_t workBudget) = 0;
};

using ModelFactory = std::unique_ptr<Model> (*)();
struct BuiltModel {
  const char* config;
  ModelFactory create;
};
extern const BuiltModel kBuiltModels[];
extern const int kBuiltModelCount;

}  // namespace tessera::hls
