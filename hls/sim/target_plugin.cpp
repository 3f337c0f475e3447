// The hls target plugin: registers the HLS design in C simulation with the runtime.
#include "tessera/hls/simulator.h"
#include "tessera/runtime/target_plugin.h"

namespace {

using tessera::runtime::Target;
using tessera::runtime::TargetOptions;

// The HLS design (hls/design) in C simulation: untimed, for the configs the build compiled it for.
class HlsTarget : public Target {
 public:
  HlsTarget(const tessera::hw::Config& cfg, tessera::hw::Dram& dram) : sim_(cfg, dram) {}
  std::string name() const override { return "hls"; }
  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override { sim_.run(insnPhys, count, waitCycles); }
  tessera::hw::Counters counters() const override { return sim_.counters(); }
  void resetCounters() override { sim_.resetCounters(); }

 private:
  tessera::hls::Simulator sim_;
};

std::string description() {
  std::string names;
  for (const auto& n : tessera::hls::Simulator::builtConfigs()) names += (names.empty() ? "" : ", ") + n;
  return "HLS C++ design in C simulation (untimed; configs " + names + ")";
}

}  // namespace

TESSERA_TARGET_PLUGIN(registrar) {
  registrar.add({"hls", description(),
                 [](const tessera::hw::Config& cfg, tessera::hw::Dram& dram, const TargetOptions&) {
                   return std::unique_ptr<Target>(new HlsTarget(cfg, dram));
                 },
                 {},
                 [](const tessera::hw::Config& cfg) { return tessera::hls::Simulator::unsupportedReason(cfg); },
                 nullptr});
}
