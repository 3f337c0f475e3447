// The hls target's run protocol: validate as fsim does, run the design's C-simulation driver, explain its outcome.
#include "tessera/hls/simulator.h"

#include "model.h"
#include "tessera/hw/built_configs.h"
#include "tessera/support/error.h"
#include "tessera/hw/hls_outcome.h"
#include "tessera/hw/isa.h"
#include "tessera/hw/program.h"

namespace tessera::hls {

namespace {

const hw::BuiltConfigs& built() {
  static const hw::BuiltConfigs kBuilt = [] {
    std::vector<std::string> names;
    for (int i = 0; i < kBuiltModelCount; ++i) names.push_back(kBuiltModels[i].config);
    return hw::BuiltConfigs(names);
  }();
  return kBuilt;
}

}  // namespace

Simulator::Simulator(const hw::Config& cfg, hw::Dram& dram) : cfg_(cfg), dram_(dram) {
  const std::string why = unsupportedReason(cfg);
  if (!why.empty()) throw Error("target hls", why);
  model_ = kBuiltModels[built().indexOf(cfg)].create();
}

Simulator::~Simulator() = default;

void Simulator::run(uint64_t insnPhys, uint32_t count, uint64_t waitCycles) {
  counters_.runs += 1;
  const hw::Isa isa(cfg_);
  // The same checks, in the same order and words, as fsim and tsim, before anything executes.
  const std::vector<hw::Insn> prog = hw::decodeProgram(isa, dram_, insnPhys, count);

  const hw::HlsRunOutcome r = model_->run(dram_.raw(0), insnPhys, count, waitCycles);
  hw::explainHlsOutcome(cfg_, prog, r, waitCycles);
  hw::Counters c = hw::countProgram(prog, cfg_);
  c.runs = 0;  // counted above, also for failed runs
  counters_ += c;
}

std::vector<std::string> Simulator::builtConfigs() { return built().names(); }

std::string Simulator::unsupportedReason(const hw::Config& cfg) {
  return built().unsupportedReason(cfg, "hls", "HLS design", "TESSERA_HLS_CONFIGS");
}

}  // namespace tessera::hls
