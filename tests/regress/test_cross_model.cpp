// The cross-model regression: random programs on fsim and tsim (configs tsim runs), fsim, tsim and rtl-sc, fsim, tsim and the gate-level netlists, fsim, hls and hls-sc, batch2 on two fsim kernel sets.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "tessera/hw/config.h"
#include "tessera/hw/fsim.h"
#include "tessera/regress/runner.h"
#include "tessera/runtime/target.h"

namespace {

using namespace tessera::regress;
using tessera::hw::Config;

// Whether tsim is built and was verilated for this config.
bool tsimRuns(const Config& cfg) {
  for (const auto* t : tessera::runtime::availableTargets())
    if (t->name == "tsim") return t->supports(cfg);
  return false;
}

// TESSERA_REGRESS_PROGRAMS (default 1000) scales every run, e.g. 20000 for a nightly job; the
// default keeps the label to well under a minute.
uint64_t programs(uint64_t fallback) {
  const char* v = std::getenv("TESSERA_REGRESS_PROGRAMS");
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

void crossRun(const std::string& config, const std::string& targets, Size size, uint64_t seed, uint64_t count) {
  RegressOptions o;
  o.cfg = Config::load(config);
  o.seed = seed;
  o.programs = count;
  o.size = size;
  o.targets = parseTargetList(targets);
  o.keepGoing = true;
  o.maxShrinkCandidates = 1500;
  o.reproduce = "tessera regress --config " + config + " --size " + sizeName(size) + " --targets " + targets;
  std::ostringstream out;
  const RegressSummary s = runRegression(o, out);
  const std::string text = out.str();
  EXPECT_EQ(s.failures, 0u) << text;
  EXPECT_EQ(s.programs, count);
  std::printf("%s", text.substr(text.rfind("regress:")).c_str());
}

TEST(CrossModel, FsimAgainstTsimOnDefault) {
  const Config cfg = Config::load("default");
  if (!tsimRuns(cfg)) GTEST_SKIP() << "tsim is not built for config default";
  crossRun("default", "fsim,tsim", Size::kSmall, 1000001, programs(1000));
  crossRun("default", "fsim,tsim", Size::kMedium, 2000001, programs(1000) / 10);
}

TEST(CrossModel, FsimAgainstTsimOnSmall) {
  const Config cfg = Config::load("small");
  if (!tsimRuns(cfg)) GTEST_SKIP() << "tsim is not built for config small";
  crossRun("small", "fsim,tsim", Size::kSmall, 3000001, programs(1000));
  crossRun("small", "fsim,tsim", Size::kMedium, 4000001, programs(1000) / 10);
}

// rtl-sc (the same RTL in the SystemC testbench) on random programs: fsim's DRAM, and program by
// program exactly tsim's counters, cycles included (counters=exact). A modest count: rtl-sc simulates about a third as fast as tsim.
TEST(CrossModel, FsimTsimAndRtlSc) {
  for (const char* config : {"default", "small"}) {
    bool rtlSc = false;
    for (const auto* t : tessera::runtime::availableTargets())
      if (t->name == "rtl-sc") rtlSc = t->supports(Config::load(config));
    if (!rtlSc || !tsimRuns(Config::load(config))) GTEST_SKIP() << "rtl-sc or tsim is not built for config " << config;
    RegressOptions o;
    o.cfg = Config::load(config);
    o.seed = std::string(config) == "default" ? 9000001 : 9500001;
    o.programs = programs(1000) / 5;
    o.size = Size::kSmall;
    o.targets = parseTargetList("fsim,tsim,rtl-sc:counters=exact");
    o.keepGoing = true;
    o.maxShrinkCandidates = 1500;
    o.reproduce = std::string("tessera regress --config ") + config + " --size small --targets fsim,tsim,rtl-sc:counters=exact";
    std::ostringstream out;
    const RegressSummary s = runRegression(o, out);
    const std::string text = out.str();
    EXPECT_EQ(s.failures, 0u) << text;
    EXPECT_EQ(s.programs, o.programs);
    ASSERT_EQ(s.cycles.size(), 3u);
    EXPECT_GT(s.cycles[1], 0u);
    EXPECT_EQ(s.cycles[1], s.cycles[2]) << config << ": tsim and rtl-sc simulated different cycle totals";
    std::printf("%s", text.substr(text.rfind("regress:")).c_str());
  }
}

// The gate-level netlists (gls: Yosys' generic gates; gls-ice40: its iCE40 cells) on random
// programs: fsim's DRAM, and program by program exactly tsim's counters (counters=exact), from
// random power-up state. A short run:
// a netlist simulates far slower than the RTL.
TEST(CrossModel, FsimTsimAndGateLevel) {
  const Config cfg = Config::load("small");
  std::string targets = "fsim,tsim";
  int gateLevel = 0;
  for (const char* name : {"gls", "gls-ice40"})
    for (const auto* t : tessera::runtime::availableTargets())
      if (t->name == name && t->supports(cfg)) {
        targets += std::string(",") + name + ":counters=exact";
        ++gateLevel;
      }
  if (gateLevel == 0 || !tsimRuns(cfg)) GTEST_SKIP() << "gls, gls-ice40 or tsim is not built for config small";
  RegressOptions o;
  o.cfg = cfg;
  o.seed = 9700001;
  o.programs = programs(1000) / 20;
  o.size = Size::kSmall;
  o.targets = parseTargetList(targets);
  o.keepGoing = true;
  o.maxShrinkCandidates = 200;
  o.reproduce = "tessera regress --config small --size small --targets " + targets;
  std::ostringstream out;
  const RegressSummary s = runRegression(o, out);
  const std::string text = out.str();
  EXPECT_EQ(s.failures, 0u) << text;
  EXPECT_EQ(s.programs, o.programs);
  ASSERT_EQ(s.cycles.size(), 2u + gateLevel);
  EXPECT_GT(s.cycles[1], 0u);
  for (int i = 0; i < gateLevel; ++i)
    EXPECT_EQ(s.cycles[1], s.cycles[2 + i]) << o.targets[2 + i].label << " and tsim simulated different cycle totals";
  std::printf("%s", text.substr(text.rfind("regress:")).c_str());
}

// The same programs against DRAM much faster and much slower than the default model: overlap
// between stages, burst interleaving and token timing all change, results must not.
TEST(CrossModel, FsimAgainstTsimUnderExtremeMemoryTimings) {
  for (const char* config : {"default", "small"}) {
    if (!tsimRuns(Config::load(config))) GTEST_SKIP() << "tsim is not built for config " << config;
    crossRun(config, "fsim,tsim:mem-latency=1:mem-write-latency=1:mem-bytes-per-cycle=64", Size::kSmall, 7000001,
             programs(1000) / 4);
    crossRun(config, "fsim,tsim:mem-latency=300:mem-write-latency=200:mem-bytes-per-cycle=0.5:mem-outstanding=1",
             Size::kSmall, 8000001, programs(1000) / 10);
  }
}

// The HLS design in C simulation, on every config the build compiled it for (all shipped by
// default). Slower per program than fsim, hence a quarter of the count.
TEST(CrossModel, FsimAgainstHls) {
  bool any = false;
  for (const char* config : {"default", "small", "batch2"}) {
    const Config cfg = Config::load(config);
    bool built = false;
    for (const auto* t : tessera::runtime::availableTargets())
      if (t->name == "hls") built = t->supports(cfg);
    if (!built) continue;
    any = true;
    crossRun(config, "fsim,hls", Size::kSmall, 9000001, programs(1000) / 4);
    crossRun(config, "fsim,hls", Size::kMedium, 9500001, programs(1000) / 40);
  }
  if (!any) GTEST_SKIP() << "hls is not built";  // ran nothing: a skip, not a pass
}

// hls-sc (the HLS stages timed in the SystemC testbench) on every config it was built for: fsim's
// DRAM after every program; its cycles are its own (an annotation, not the RTL's).
TEST(CrossModel, FsimAgainstHlsSc) {
  bool any = false;
  for (const char* config : {"default", "small", "batch2"}) {
    const Config cfg = Config::load(config);
    bool built = false;
    for (const auto* t : tessera::runtime::availableTargets())
      if (t->name == "hls-sc") built = t->supports(cfg);
    if (!built) continue;
    any = true;
    crossRun(config, "fsim,hls-sc", Size::kSmall, 9700001, programs(1000) / 5);
    crossRun(config, "fsim,hls-sc", Size::kMedium, 9800001, programs(1000) / 20);
  }
  if (!any) GTEST_SKIP() << "hls-sc is not built";
}

// batch2 (BATCH 2, BLOCK_IN != BLOCK_OUT) also holds fsim's vector kernels against the portable
// ones; the tsim runs above keep to default and small to bound the label's time.
TEST(CrossModel, FsimKernelSetsOnBatch2) {
  crossRun("batch2", "fsim,fsim:kernels=generic", Size::kSmall, 5000001, programs(1000));
  crossRun("batch2", "fsim,fsim:kernels=generic", Size::kMedium, 6000001, programs(1000) / 5);
}

// default (one 16-lane accumulator entry per register) holds each vector set this CPU has
// against the portable one: its single-micro-op ALU walk is the elementwise streams' fast path.
TEST(CrossModel, FsimKernelSetsOnDefault) {
  std::string targets = "fsim:kernels=generic";
  for (const char* set : {"avx2", "avx512bw"})
    if (tessera::hw::Fsim::kernelSetCpuProblem(set).empty()) targets += std::string(",fsim:kernels=") + set;
  if (targets == "fsim:kernels=generic") GTEST_SKIP() << "this CPU has no vector kernel set";
  crossRun("default", targets, Size::kSmall, 5100001, programs(1000));
  crossRun("default", targets, Size::kMedium, 6100001, programs(1000) / 5);
}

}  // namespace
