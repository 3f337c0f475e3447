// rtl-sc against tsim: the same RTL and memory model must give the same cycles and per-module counters, run by run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/runtime/command_queue.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/target.h"
#include "tessera/runtime/tessera.h"
#include "tessera/sw/workloads.h"

namespace {

using tessera::hw::Config;
using tessera::hw::Counters;
using tessera::sw::WorkloadResult;

bool built(const std::string& target, const Config& cfg) {
  for (const auto* t : tessera::runtime::availableTargets())
    if (t->name == target) return t->supports(cfg);
  return false;
}

// Runs `workload` on tsim and on rtl-sc for `config` under the memory timing `options`
// (TESSERA_TARGET_OPTIONS) and expects identical results, timed counters and instruction spans.
void expectSameTiming(const std::string& config, const std::string& options, const std::string& what,
                      const std::function<WorkloadResult()>& workload) {
  if (!options.empty()) ::setenv("TESSERA_TARGET_OPTIONS", options.c_str(), 1);
  Counters c[2];
  std::vector<tessera::hw::RunSpans> spans[2];
  const char* targets[2] = {"tsim", "rtl-sc"};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(TesseraInit(targets[i], config.c_str()), 0) << (TesseraLastError() ? TesseraLastError() : "");
    tessera::runtime::Target& device = tessera::runtime::Session::global().threadQueue().device();
    EXPECT_TRUE(device.traceInstructions(true)) << targets[i];
    const WorkloadResult r = workload();
    EXPECT_TRUE(r.correct) << targets[i] << " " << what << ": " << r.firstMismatch;
    c[i] = r.counters;
    spans[i] = device.takeInstructionSpans();
    device.traceInstructions(false);
  }
  ::unsetenv("TESSERA_TARGET_OPTIONS");
  const std::string at = config + " " + what + (options.empty() ? "" : " with " + options);
  EXPECT_GT(c[0].cycles, 0u) << at;
  EXPECT_EQ(c[0].cycles, c[1].cycles) << at;
  EXPECT_EQ(c[0].runs, c[1].runs) << at;
  for (int m = 0; m < 4; ++m) {
    EXPECT_EQ(c[0].busyCycles[m], c[1].busyCycles[m]) << at << ", module " << m;
    EXPECT_EQ(c[0].stallCycles[m], c[1].stallCycles[m]) << at << ", module " << m;
  }
  EXPECT_EQ(c[0].dramReadBeats, c[1].dramReadBeats) << at;
  EXPECT_EQ(c[0].dramWriteBeats, c[1].dramWriteBeats) << at;
  EXPECT_EQ(c[0].totalInsns(), c[1].totalInsns()) << at;
  ASSERT_EQ(spans[0].size(), c[0].runs) << at;
  ASSERT_EQ(spans[1].size(), spans[0].size()) << at;
  for (size_t run = 0; run < spans[0].size(); ++run) {
    EXPECT_EQ(spans[0][run].cycles, spans[1][run].cycles) << at << ", run " << run;
    EXPECT_TRUE(spans[0][run].spans == spans[1][run].spans) << at << ", run " << run << ": the spans differ";
  }
}

class RtlScTiming : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cfg_ = Config::load(GetParam());
    if (!built("rtl-sc", cfg_) || !built("tsim", cfg_)) GTEST_SKIP() << "rtl-sc or tsim not built for " << GetParam();
  }
  Config cfg_;
};

TEST_P(RtlScTiming, SameCyclesAsTsim) {
  const std::string timings[] = {"", "mem-latency=1,mem-write-latency=1,mem-bytes-per-cycle=64",
                                 "mem-latency=300,mem-write-latency=200,mem-bytes-per-cycle=0.5,mem-outstanding=1"};
  for (const std::string& timing : timings) {
    expectSameTiming(GetParam(), timing, "blocked GEMM", [&] {
      tessera::sw::GemmProblem p;
      p.m = cfg_.batch * 32;
      p.n = cfg_.blockOut * 8;
      p.k = cfg_.blockIn * 8;
      p.shift = 7;
      p.seed = 21;
      return tessera::sw::runBlockedGemm(p);
    });
    expectSameTiming(GetParam(), timing, "3x3 convolution", [&] {
      tessera::sw::ConvProblem p;
      p.height = 6;
      p.width = 6;
      p.inChannels = cfg_.blockIn * 2;
      p.outChannels = cfg_.blockOut * 2;
      p.shift = 7;
      return tessera::sw::runConv3x3(p);
    });
    expectSameTiming(GetParam(), timing, "ALU MUL with immediate", [&] {
      tessera::sw::AluProblem p;
      p.op = 4;
      p.useImm = true;
      p.imm = -7;
      p.rows = 16;
      p.seed = 5;
      return tessera::sw::runAluTest(p);
    });
  }
}

// SystemC elaborates once per process: devices of one config share the testbench and take turns,
// each taking it over with a reset, so two live devices still give correct, equal results.
TEST_P(RtlScTiming, DevicesOfOneConfigTakeTurns) {
  tessera::hw::Dram dramA(cfg_), dramB(cfg_);
  auto a = tessera::runtime::createTarget("rtl-sc", cfg_, dramA);
  auto b = tessera::runtime::createTarget("rtl-sc", cfg_, dramB);
  EXPECT_EQ(a->name(), "rtl-sc");
  EXPECT_EQ(b->name(), "rtl-sc");
  a.reset();
  ASSERT_EQ(TesseraInit("rtl-sc", GetParam().c_str()), 0);
  tessera::sw::AluProblem p;
  p.rows = 8;
  EXPECT_TRUE(tessera::sw::runAluTest(p).correct);
  b.reset();
}

TEST(RtlScOptions, NoWaveforms) {
  const Config cfg = Config::load("default");
  if (!built("rtl-sc", cfg)) GTEST_SKIP() << "rtl-sc not built";
  try {
    tessera::runtime::checkTarget(tessera::runtime::findTarget("rtl-sc"), cfg, {{"trace", "x.fst"}});
    FAIL() << "trace accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown for target rtl-sc"), std::string::npos) << e.what();
  }
}

// Every shipped config; one rtl-sc or tsim was not built for is reported as skipped.
INSTANTIATE_TEST_SUITE_P(Configs, RtlScTiming, ::testing::ValuesIn(tessera::hw::shippedConfigNames()));

}  // namespace
