// The runtime target over one engine of tsim's harness, for the plugins that host it (tsim, gls).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/runtime/target.h"
#include "tessera/tsim/simulator.h"

namespace tessera::tsim {

// Every engine runs the same protocol over the harness, so one Target serves them all: results,
// counters and cycle counts of two engines compare one for one.
class SimulatorTarget final : public runtime::Target {
 public:
  SimulatorTarget(const hw::Config& cfg, hw::Dram& dram, const runtime::TargetOptions& options, Engine engine)
      : sim_(cfg, dram, Options::parse(options), engine), engine_(engine) {}
  std::string name() const override { return engineTarget(engine_); }
  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override { sim_.run(insnPhys, count, waitCycles); }
  hw::Counters counters() const override { return sim_.counters(); }
  void resetCounters() override { sim_.resetCounters(); }
  bool traceInstructions(bool on) override {
    sim_.traceInstructions(on);
    return true;
  }
  std::vector<hw::RunSpans> takeInstructionSpans() override { return sim_.takeSpans(); }

 private:
  Simulator sim_;
  const Engine engine_;
};

// The configs the build made `engine` for, as "a, b, c" for a target's description.
inline std::string builtConfigList(Engine engine) {
  std::string names;
  for (const auto& n : Simulator::builtConfigs(engine)) names += (names.empty() ? "" : ", ") + n;
  return names;
}

// `engine` as a registrable target. Only engines that write waveforms (`traces`) offer tsim's
// trace options, only tsim-cov its coverage directory and only tsim-mut its mutant.
inline runtime::TargetInfo simulatorTargetInfo(Engine engine, std::string description, bool traces) {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& k : Options::keys())
    if ((traces || (k.first != "trace" && k.first != "trace-force")) &&
        (engine == Engine::kCoverage || k.first != "coverage") && (engine == Engine::kMutant || k.first != "mutant"))
      keys.push_back(k);
  return {engineTarget(engine), std::move(description),
          [engine](const hw::Config& cfg, hw::Dram& dram, const runtime::TargetOptions& options) {
            return std::unique_ptr<runtime::Target>(new SimulatorTarget(cfg, dram, options, engine));
          },
          std::move(keys), [engine](const hw::Config& cfg) { return Simulator::unsupportedReason(cfg, engine); },
          nullptr};
}

}  // namespace tessera::tsim
