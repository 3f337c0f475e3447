// The gls plugin: registers gls (the generic gate-level netlist) and gls-ice40 (the iCE40-mapped one) with the runtime.
#include "tessera/runtime/target_plugin.h"
#include "tessera/tsim/simulator.h"

namespace {

using tessera::runtime::Target;
using tessera::runtime::TargetInfo;
using tessera::runtime::TargetOptions;
namespace tsim = tessera::tsim;

// A Yosys netlist of the RTL, verilated and clocked by tsim's harness: the same run protocol,
// registers and counters as tsim, so results and cycle counts compare with tsim's one for one.
class GlsTarget : public Target {
 public:
  GlsTarget(const tessera::hw::Config& cfg, tessera::hw::Dram& dram, const TargetOptions& options, tsim::Engine engine)
      : sim_(cfg, dram, tsim::Options::parse(options), engine), engine_(engine) {}
  std::string name() const override { return tsim::engineTarget(engine_); }
  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override { sim_.run(insnPhys, count, waitCycles); }
  tessera::hw::Counters counters() const override { return sim_.counters(); }
  void resetCounters() override { sim_.resetCounters(); }
  bool traceInstructions(bool on) override {
    sim_.traceInstructions(on);
    return true;
  }
  std::vector<tessera::hw::RunSpans> takeInstructionSpans() override { return sim_.takeSpans(); }

 private:
  tsim::Simulator sim_;
  const tsim::Engine engine_;
};

TargetInfo targetOf(tsim::Engine engine) {
  std::string names;
  for (const auto& n : tsim::Simulator::builtConfigs(engine)) names += (names.empty() ? "" : ", ") + n;
  const std::string what = engine == tsim::Engine::kGateLevel
                               ? "Yosys generic gate-level netlist of the RTL"
                               : "Yosys iCE40 netlist of the RTL (LUT4, carry, DFF and EBR cell models; multiplies in LUTs)";
  // tsim's options but waveforms: the netlists are verilated without trace support.
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& k : tsim::Options::keys())
    if (k.first != "trace" && k.first != "trace-force") keys.push_back(k);
  return {tsim::engineTarget(engine),
          what + " under Verilator, random power-up state (TESSERA_GLS_SEED), tsim's harness and cycles; configs " + names,
          [engine](const tessera::hw::Config& cfg, tessera::hw::Dram& dram, const TargetOptions& options) {
            return std::unique_ptr<Target>(new GlsTarget(cfg, dram, options, engine));
          },
          keys,
          [engine](const tessera::hw::Config& cfg) { return tsim::Simulator::unsupportedReason(cfg, engine); },
          nullptr};
}

}  // namespace

TESSERA_TARGET_PLUGIN(registrar) {
  for (const tsim::Engine engine : {tsim::Engine::kGateLevel, tsim::Engine::kGateLevelIce40})
    if (!tsim::Simulator::builtConfigs(engine).empty()) registrar.add(targetOf(engine));
}
