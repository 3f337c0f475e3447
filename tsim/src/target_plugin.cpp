// The tsim target plugin: registers tsim, and rtl-sc and hls-sc where SystemC was built, with the runtime.
#include "tessera/runtime/target_plugin.h"
#include "tessera/tsim/simulator.h"

namespace {

using tessera::runtime::Target;
using tessera::runtime::TargetInfo;
using tessera::runtime::TargetOptions;
namespace tsim = tessera::tsim;

// The RTL under Verilator, cycle-accurate, for the configs the build verilated: clocked by tsim's
// own loop (tsim) or hosted in the SystemC testbench (rtl-sc), or the HLS design in that testbench
// (hls-sc); same run protocol and counters.
class TsimTarget : public Target {
 public:
  TsimTarget(const tessera::hw::Config& cfg, tessera::hw::Dram& dram, const TargetOptions& options, tsim::Engine engine)
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

std::string description(tsim::Engine engine) {
  std::string names;
  for (const auto& n : tsim::Simulator::builtConfigs(engine)) names += (names.empty() ? "" : ", ") + n;
  if (engine == tsim::Engine::kSystemC)
    return "RTL in the SystemC testbench (Verilator --sc, cycle-accurate, same cycles as tsim; configs " + names +
           "; one SystemC kernel per process)";
  if (engine == tsim::Engine::kHlsSystemC)
    return "HLS design as clocked SystemC processes in the same testbench (cycle-approximate; configs " + names +
           "; one SystemC kernel per process)";
  return "RTL simulator (Verilator, cycle-accurate; configs " + names + ")";
}

// rtl-sc and hls-sc take tsim's options but waveforms, which only tsim writes.
std::vector<std::pair<std::string, std::string>> optionKeys(tsim::Engine engine) {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& k : tsim::Options::keys())
    if (engine == tsim::Engine::kVerilator || (k.first != "trace" && k.first != "trace-force")) keys.push_back(k);
  return keys;
}

TargetInfo targetOf(tsim::Engine engine) {
  return {tsim::engineTarget(engine), description(engine),
          [engine](const tessera::hw::Config& cfg, tessera::hw::Dram& dram, const TargetOptions& options) {
            return std::unique_ptr<Target>(new TsimTarget(cfg, dram, options, engine));
          },
          optionKeys(engine),
          [engine](const tessera::hw::Config& cfg) { return tsim::Simulator::unsupportedReason(cfg, engine); },
          nullptr};
}

}  // namespace

TESSERA_TARGET_PLUGIN(registrar) {
  registrar.add(targetOf(tsim::Engine::kVerilator));
  // The SystemC engines only in builds that found SystemC (the manifest lists them then too).
  for (const tsim::Engine engine : {tsim::Engine::kSystemC, tsim::Engine::kHlsSystemC})
    if (!tsim::Simulator::builtConfigs(engine).empty()) registrar.add(targetOf(engine));
}
