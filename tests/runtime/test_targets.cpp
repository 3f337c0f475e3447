// VTA's hardware tests through the runtime API, on every built-in target for every shipped or board config it supports.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <string>
#include <tuple>

#include "tessera/hw/config.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/target.h"
#include "tessera/runtime/tessera.h"
#include "tessera/sw/workloads.h"

namespace {

using tessera::sw::AluProblem;
using tessera::sw::ConvProblem;
using tessera::sw::GemmProblem;
using tessera::sw::WorkloadResult;

tessera::runtime::TargetOptions environmentOptions() {
  const char* env = std::getenv("TESSERA_TARGET_OPTIONS");
  return tessera::runtime::parseTargetOptions(env ? env : "", "TESSERA_TARGET_OPTIONS");
}

// (target, config): a new target joins every test here by being registered (a plugin and its manifest).
class OnTarget : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  void SetUp() override {
    // The whole suite runs again with options in the environment (ctest runtime_kernels_*: fsim
    // forced to one kernel set). A config those options cannot run is a visible skip, not a failure.
    const auto& info = tessera::runtime::findTarget(std::get<0>(GetParam()));
    if (info.optionsProblem) {
      const std::string why =
          info.optionsProblem(tessera::hw::Config::load(std::get<1>(GetParam())), environmentOptions());
      if (!why.empty()) GTEST_SKIP() << "TESSERA_TARGET_OPTIONS on " << info.name << ": " << why;
    }
    ASSERT_EQ(TesseraInit(std::get<0>(GetParam()).c_str(), std::get<1>(GetParam()).c_str()), 0)
        << (TesseraLastError() ? TesseraLastError() : "");
    cfg_ = tessera::hw::Config::load(std::get<1>(GetParam()));
  }
  void TearDown() override {
    // A forced fsim kernel set must be the one that ran: a silent fall back to the portable
    // kernels would pass every comparison above while testing nothing.
    const auto options = environmentOptions();
    const auto kernels = options.find("kernels");
    if (std::get<0>(GetParam()) != "fsim" || kernels == options.end() || IsSkipped()) return;
    EXPECT_EQ(tessera::runtime::Session::global().threadQueue().device().variant(), kernels->second)
        << "fsim did not run the kernel set forced by TESSERA_TARGET_OPTIONS";
  }
  void expectCorrect(const WorkloadResult& r, const std::string& what) {
    EXPECT_TRUE(r.correct) << what << ": " << r.mismatches << " mismatches, first " << r.firstMismatch;
  }
  tessera::hw::Config cfg_;
};

// Every (target, shipped or board config) pair the target supports: fsim runs every config, tsim
// those its RTL model was built for, the iCEBreaker targets only their board config (pico).
// $TESSERA_TEST_TARGETS (comma-separated names) replaces the built targets, so the suite runs on
// targets no registry lists, such as remote:HOST:PORT/T (tests/remote).
std::vector<std::tuple<std::string, std::string>> targetsAndConfigs() {
  std::vector<std::tuple<std::string, std::string>> pairs;
  std::vector<const tessera::runtime::TargetInfo*> targets;
  if (const char* env = std::getenv("TESSERA_TEST_TARGETS"); env && *env) {
    const std::string list = env;
    for (size_t pos = 0; pos <= list.size();) {
      size_t comma = list.find(',', pos);
      if (comma == std::string::npos) comma = list.size();
      if (comma > pos) targets.push_back(&tessera::runtime::findTarget(list.substr(pos, comma - pos)));
      pos = comma + 1;
    }
  } else {
    targets = tessera::runtime::availableTargets();
  }
  for (const auto* t : targets)
    for (const auto& names : {tessera::hw::shippedConfigNames(), tessera::hw::boardConfigNames()})
      for (const auto& c : names)
        if (t->supports(tessera::hw::Config::load(c))) pairs.emplace_back(t->name, c);
  return pairs;
}

const char* kOpNames[] = {"MIN", "MAX", "ADD", "SHR", "MUL"};

TEST_P(OnTarget, AluVectorOps) {
  for (uint32_t op = 0; op < 5; ++op)
    for (bool compressed : {true, false}) {
      AluProblem p;
      p.op = op;
      p.rows = 24;
      p.seed = 7 + op;
      p.uopCompression = compressed;
      expectCorrect(tessera::sw::runAluTest(p), std::string(kOpNames[op]) + (compressed ? " compressed" : " uncompressed"));
    }
}

TEST_P(OnTarget, AluImmediateOps) {
  // Immediates include negatives, zero, both shift directions and 16-bit extremes.
  const int32_t imms[5][4] = {{-32768, -5, 0, 32767}, {-32768, -1, 3, 32767}, {-32768, -77, 1, 32767},
                              {-31, -3, 0, 17}, {-32768, -7, 0, 255}};
  for (uint32_t op = 0; op < 5; ++op)
    for (int32_t imm : imms[op])
      for (bool compressed : {true, false}) {
        AluProblem p;
        p.op = op;
        p.useImm = true;
        p.imm = imm;
        p.rows = 16;
        p.seed = 100 + op;
        p.uopCompression = compressed;
        expectCorrect(tessera::sw::runAluTest(p), std::string(kOpNames[op]) + " imm " + std::to_string(imm) +
                                                       (compressed ? " compressed" : " uncompressed"));
      }
}

TEST_P(OnTarget, Gemm) {
  for (bool compressed : {true, false}) {
    GemmProblem p;
    p.m = cfg_.batch * 4;
    p.n = cfg_.blockOut * 4;
    p.k = cfg_.blockIn * 4;
    p.shift = 6;
    p.seed = 3;
    p.uopCompression = compressed;
    expectCorrect(tessera::sw::runBlockedGemm(p), compressed ? "compressed" : "uncompressed");
  }
}

TEST_P(OnTarget, BlockedGemmManyTiles) {
  for (bool doubleBuffer : {true, false}) {
    GemmProblem p;
    p.m = cfg_.batch * 256;
    p.n = cfg_.blockOut * 16;
    p.k = cfg_.blockIn * 16;
    p.shift = 9;
    p.seed = 11;
    p.doubleBuffer = doubleBuffer;
    auto r = tessera::sw::runBlockedGemm(p);
    expectCorrect(r, r.tiling);
    EXPECT_EQ(r.counters.macs, r.macs);
    EXPECT_GT(r.counters.insns[2], 2u) << "expected several GEMM tiles, got " << r.tiling;
  }
}

TEST_P(OnTarget, BlockedGemmUncompressedMicroOps) {
  GemmProblem p;
  p.m = cfg_.batch * 32;
  p.n = cfg_.blockOut * 4;
  p.k = cfg_.blockIn * 8;
  p.uopCompression = false;
  p.seed = 5;
  expectCorrect(tessera::sw::runBlockedGemm(p), "uncompressed blocked GEMM");
}

TEST_P(OnTarget, Conv3x3PaddedStridedLoads) {
  ConvProblem p;
  p.height = 8;
  p.width = 6;
  p.inChannels = cfg_.blockIn * 2;
  p.outChannels = cfg_.blockOut * 2;
  p.shift = 7;
  auto r = tessera::sw::runConv3x3(p);
  expectCorrect(r, r.tiling);
}

// Timed targets (those that count cycles) report per-instruction spans when asked; untimed ones
// decline and record nothing.
TEST_P(OnTarget, InstructionSpansOnTimedTargets) {
  tessera::runtime::Target& device = tessera::runtime::Session::global().threadQueue().device();
  const bool traces = device.traceInstructions(true);
  AluProblem p;
  p.rows = 8;
  const WorkloadResult r = tessera::sw::runAluTest(p);
  expectCorrect(r, "ALU test, traced");
  device.traceInstructions(false);
  const auto runs = device.takeInstructionSpans();
  EXPECT_EQ(traces, r.counters.cycles > 0) << "a target traces instructions exactly when it counts cycles";
  if (!traces) {
    EXPECT_TRUE(runs.empty());
    return;
  }
  ASSERT_EQ(runs.size(), r.counters.runs);
  uint64_t cycles = 0, insns = 0;
  for (const auto& run : runs) {
    EXPECT_EQ(run.spans.size(), 2u * run.insnCount) << "every instruction on fetch and on one unit";
    cycles += run.cycles;
    insns += run.insnCount;
  }
  EXPECT_EQ(cycles, r.counters.cycles);
  EXPECT_EQ(insns, r.counters.totalInsns());
}

INSTANTIATE_TEST_SUITE_P(AllTargetsAndConfigs, OnTarget, ::testing::ValuesIn(targetsAndConfigs()),
                         [](const auto& info) {
                           // Test names allow letters, digits and '_' only: rtl-sc runs as
                           // rtl_sc_<config>, remote:127.0.0.1:9095/fsim as remote_127_0_0_1_9095_fsim.
                           std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
