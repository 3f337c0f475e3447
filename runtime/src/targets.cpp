// The targets built into the runtime, and creation by name.
#include "tessera/runtime/target.h"

#include "tessera/hw/error.h"
#include "tessera/hw/fsim.h"

namespace tessera::runtime {

namespace {

// The behavioral simulator as a driver target: untimed, bit-exact reference.
class FsimTarget : public Target {
 public:
  FsimTarget(const hw::Config& cfg, hw::Dram& dram) : sim_(cfg, dram) {}
  std::string name() const override { return "fsim"; }
  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override { sim_.run(insnPhys, count, waitCycles); }
  hw::Counters counters() const override { return sim_.counters(); }
  void resetCounters() override { sim_.resetCounters(); }

 private:
  hw::Fsim sim_;
};

}  // namespace

const std::vector<TargetInfo>& builtinTargets() {
  static const std::vector<TargetInfo> kTargets = {
      {"fsim", "behavioral simulator (untimed executable specification)",
       [](const hw::Config& cfg, hw::Dram& dram) { return std::unique_ptr<Target>(new FsimTarget(cfg, dram)); }},
  };
  return kTargets;
}

std::string availableTargetNames() {
  std::string s;
  for (const auto& t : builtinTargets()) s += (s.empty() ? "" : ",") + t.name;
  return s;
}

std::unique_ptr<Target> createTarget(const std::string& name, const hw::Config& cfg, hw::Dram& dram) {
  for (const auto& t : builtinTargets())
    if (t.name == name) return t.create(cfg, dram);
  throw Error("target '" + name + "'", "unknown or not built into this build (available: " + availableTargetNames() + ")");
}

}  // namespace tessera::runtime
