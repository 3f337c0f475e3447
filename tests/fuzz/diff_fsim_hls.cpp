// Differential fuzz harness: valid programs shaped by the input (generator seed, config, data) must leave the same DRAM on fsim and the HLS design.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tessera/hls/simulator.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/fsim.h"
#include "tessera/regress/generator.h"
#include "tessera/regress/runner.h"
#include "tessera/runtime/target.h"

namespace {

using namespace tessera;

// The two simulators as runtime targets, constructed directly: no plugin loading inside the fuzzer.
class FsimUnderTest : public runtime::Target {
 public:
  FsimUnderTest(const hw::Config& cfg, hw::Dram& dram) : sim_(cfg, dram, "generic") {}
  std::string name() const override { return "fsim"; }
  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override { sim_.run(insnPhys, count, waitCycles); }
  hw::Counters counters() const override { return sim_.counters(); }
  void resetCounters() override { sim_.resetCounters(); }

 private:
  hw::Fsim sim_;
};

class HlsUnderTest : public runtime::Target {
 public:
  HlsUnderTest(const hw::Config& cfg, hw::Dram& dram) : sim_(cfg, dram) {}
  std::string name() const override { return "hls"; }
  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override { sim_.run(insnPhys, count, waitCycles); }
  hw::Counters counters() const override { return sim_.counters(); }
  void resetCounters() override { sim_.resetCounters(); }

 private:
  hls::Simulator sim_;
};

const std::vector<regress::TargetSpec>& targets() {
  static const std::vector<regress::TargetSpec> specs = {
      {"fsim", [](const hw::Config& c, hw::Dram& d) { return std::unique_ptr<runtime::Target>(new FsimUnderTest(c, d)); }},
      {"hls", [](const hw::Config& c, hw::Dram& d) { return std::unique_ptr<runtime::Target>(new HlsUnderTest(c, d)); }},
  };
  return specs;
}

// Every shipped config the HLS design is built for; small first, as the cheapest to run.
const std::vector<hw::Config>& configs() {
  static const std::vector<hw::Config> all = [] {
    std::vector<hw::Config> v;
    for (const char* name : {"small", "default", "batch2"}) {
      hw::Config cfg = hw::Config::load(name);
      if (hls::Simulator::unsupportedReason(cfg).empty()) v.push_back(cfg);
    }
    return v;
  }();
  return all;
}

bool isInputData(regress::RegionKind k) {
  return k == regress::RegionKind::kInp || k == regress::RegionKind::kWgt || k == regress::RegionKind::kAcc ||
         k == regress::RegionKind::kAcc8;
}

}  // namespace

// Input: 8 bytes of generator seed, one byte choosing the config, then bytes written over the
// program's input data (tensors and accumulators, repeated to fill them). Instructions and
// micro-ops stay the generator's, so every program is valid and race-free by construction.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 9 || configs().empty()) return 0;
  uint64_t seed = 0;
  for (int i = 0; i < 8; ++i) seed |= uint64_t(data[i]) << (8 * i);
  const hw::Config& cfg = configs()[data[8] % configs().size()];
  regress::Program p = regress::generate(cfg, seed, regress::Size::kSmall);
  const uint8_t* fill = data + 9;
  const size_t fillSize = size - 9;
  if (fillSize) {
    size_t at = 0;
    for (auto& r : p.regions)
      if (isInputData(r.kind))
        for (auto& b : r.init) b = fill[at++ % fillSize];
  }
  const regress::Trial t = regress::runTrial(p, targets());
  for (size_t i = 0; i < t.outcomes.size(); ++i)
    if (t.outcomes[i].failed) {
      std::fprintf(stderr, "diff_fsim_hls: seed %llu config %s: a valid program failed on %s: %s\n",
                   static_cast<unsigned long long>(seed), cfg.name.c_str(), targets()[i].label.c_str(),
                   t.outcomes[i].error.c_str());
      std::abort();
    }
  if (t.mismatch) {
    std::fprintf(stderr, "diff_fsim_hls: seed %llu config %s: %s\n%s\n", static_cast<unsigned long long>(seed),
                 cfg.name.c_str(), t.mismatch->summary.c_str(), t.mismatch->detail.c_str());
    std::abort();
  }
  return 0;
}
