// Tests of hls-sc, the HLS stages in the SystemC testbench: tsim's errors in tsim's words, same DRAM traffic, refusals.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tessera/hw/asm.h"
#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/tsim/simulator.h"
#include "span_checks.h"
#include "tsim_test_program.h"

namespace {

using tessera::Error;
using tessera::hw::Config;
using tessera::hw::Dram;
using tessera::tsim::Engine;
using tessera::tsim::Options;
using tessera::tsim::Simulator;
using namespace tessera::tsim::testing;
using Machine = LoadedMachine;

bool hlsScBuilt() { return !Simulator::builtConfigs(Engine::kHlsSystemC).empty(); }

// The error a run throws on `engine`, with the target's name and cycle figures taken out: hls-sc
// times the design differently from the RTL, but must explain a failure in the same words.
std::string errorOn(Engine engine, const std::string& program, const Options& o) {
  Machine m(program);
  Simulator sim(m.cfg, m.dram, o, engine);
  try {
    sim.run(kInsnAddr, m.count);
  } catch (const Error& e) {
    std::string s = e.what();
    for (const char* name : {"hls-sc", "tsim"})
      for (size_t at = s.find(name); at != std::string::npos; at = s.find(name))
        s.replace(at, std::string(name).size(), "TARGET");
    s = std::regex_replace(s, std::regex("[0-9]+ cycles"), "N cycles");
    return std::regex_replace(s, std::regex("at cycle [0-9]+"), "at cycle N");
  }
  ADD_FAILURE() << "no error on " << tessera::tsim::engineTarget(engine);
  return "";
}

// The stage threads report each instruction's span as the RTL's trace port does; compute runs one
// instruction at a time, GEMMs on the GEMM pipe's track, ALU instructions and reset GEMMs on the ALU
// pipe's, the rest on compute's.
TEST(HlsSc, InstructionSpansNameTheUnitsTheRtlWould) {
  if (!hlsScBuilt()) GTEST_SKIP() << "hls-sc not built";
  namespace host = tessera::host;
  Machine m(gemmAluProgram(1024));
  Simulator sim(m.cfg, m.dram, Options(), Engine::kHlsSystemC);
  sim.traceInstructions(true);
  sim.run(kInsnAddr, m.count);
  const std::vector<tessera::hw::RunSpans> runs = sim.takeSpans();
  ASSERT_EQ(runs.size(), 1u);
  const tessera::hw::RunSpans& r = runs[0];
  EXPECT_EQ(r.cycles, sim.lastRun().cycles);
  ASSERT_EQ(r.insnCount, m.count);
  expectWellFormed(r);
  spanOf(r, kLoadInp, host::kTraceLoad);
  spanOf(r, kLoadUop, host::kTraceCompute);
  spanOf(r, kResetGemm, host::kTraceAluPipe);
  const auto gemm = spanOf(r, kGemm, host::kTraceGemmPipe);
  EXPECT_GE(gemm.end - gemm.begin, 64u);
  spanOf(r, kAlu, host::kTraceAluPipe);
  spanOf(r, kStore, host::kTraceStore);
  EXPECT_EQ(spanOf(r, kFinish, host::kTraceCompute).end, r.cycles);
}

TEST(HlsSc, FaultsAreReportedInTsimsWords) {
  if (!hlsScBuilt()) GTEST_SKIP() << "hls-sc not built";
  Options fault;
  fault.memory.faultPage = kAccAddr;
  const std::string e = errorOn(Engine::kHlsSystemC, kAluProgram, fault);
  EXPECT_EQ(errorOn(Engine::kVerilator, kAluProgram, fault), e);
  EXPECT_NE(e.find("DRAM read error response"), std::string::npos) << e;
  // A micro-op whose accumulator index is past the buffer.
  const std::string outOfRange = "LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1\n"
                                 "ALU.ADD deps=- uop_bgn=0 uop_end=1 iter_out=2 iter_in=1 dst_factor_out=2047 use_imm=1 imm=1\n"
                                 "FINISH\nUOP dst=1 src=0 wgt=0\n";
  Options quick;
  quick.watchdogCycles = 20000;
  const std::string r = errorOn(Engine::kHlsSystemC, outOfRange, quick);
  EXPECT_EQ(errorOn(Engine::kVerilator, outOfRange, quick), r);
  EXPECT_NE(r.find("index goes past the buffer depth"), std::string::npos) << r;
}

TEST(HlsSc, DeadlocksAndUnbalancedProgramsAreReportedInTsimsWords) {
  if (!hlsScBuilt()) GTEST_SKIP() << "hls-sc not built";
  Options quick;
  quick.watchdogCycles = 20000;
  const char* deadlock = "GEMM deps=pop_prev uop_bgn=0 uop_end=0 iter_out=1 iter_in=1\nFINISH\n";
  const std::string e = errorOn(Engine::kHlsSystemC, deadlock, quick);
  EXPECT_EQ(errorOn(Engine::kVerilator, deadlock, quick), e);
  EXPECT_NE(e.find("waits for a token on queue l2g"), std::string::npos) << e;
  const char* unbalanced = "ALU.ADD deps=push_next uop_bgn=0 uop_end=1 iter_out=1 iter_in=1 use_imm=1 imm=1\nFINISH\n"
                           "UOP dst=0 src=0 wgt=0\n";
  const std::string u = errorOn(Engine::kHlsSystemC, unbalanced, Options());
  EXPECT_EQ(errorOn(Engine::kVerilator, unbalanced, Options()), u);
  EXPECT_NE(u.find("not balanced at FINISH"), std::string::npos) << u;
}

TEST(HlsSc, SameResultAndDramTrafficAsTheRtl) {
  if (!hlsScBuilt()) GTEST_SKIP() << "hls-sc not built";
  Machine a(kAluProgram), b(kAluProgram);
  Simulator tsim(a.cfg, a.dram);
  Simulator hls(b.cfg, b.dram, Options(), Engine::kHlsSystemC);
  for (int i = 0; i < 2; ++i) {
    tsim.run(kInsnAddr, a.count);
    hls.run(kInsnAddr, b.count);
    EXPECT_GT(hls.lastRun().cycles, 0u);
    EXPECT_EQ(hls.lastRun().runs, 1u);
    EXPECT_EQ(hls.lastRun().dramReadBeats, tsim.lastRun().dramReadBeats);
    EXPECT_EQ(hls.lastRun().dramWriteBeats, tsim.lastRun().dramWriteBeats);
    EXPECT_EQ(hls.lastRun().totalInsns(), tsim.lastRun().totalInsns());
    EXPECT_EQ(hls.lastRun().storeBytes, tsim.lastRun().storeBytes);
  }
  EXPECT_EQ(hls.counters().cycles, 2 * hls.lastRun().cycles);
  // Same DRAM afterwards, where the STORE wrote: the tile worked out from the data, on both.
  EXPECT_EQ(a.aluStoredTile(), aluExpectedTile(a.cfg));
  EXPECT_EQ(b.aluStoredTile(), aluExpectedTile(b.cfg));
}

TEST(HlsSc, RefusesTracesAndConfigsItWasNotBuiltFor) {
  if (!hlsScBuilt()) GTEST_SKIP() << "hls-sc not built";
  Machine m(kAluProgram);
  Options o;
  o.trace = "never.fst";
  try {
    Simulator sim(m.cfg, m.dram, o, Engine::kHlsSystemC);
    ADD_FAILURE() << "trace accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hls-sc writes no waveforms"), std::string::npos) << e.what();
  }
  const std::string why = Simulator::unsupportedReason(unbuiltConfig(), Engine::kHlsSystemC);
  EXPECT_EQ(why.rfind("hls-sc is not built for config 'not-built'", 0), 0u) << why;
}

}  // namespace
