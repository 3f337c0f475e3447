// Tests of rtl-sc, the RTL in the SystemC testbench: tsim's errors word for word, the per-run timing report, the kernel's rules.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "tessera/hw/asm.h"
#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/tsim/simulator.h"
#include "tsim_test_program.h"
#include "testbench.h"

namespace {

using tessera::Error;
using tessera::hw::Config;
using tessera::hw::Dram;
using tessera::tsim::Engine;
using tessera::tsim::Options;
using tessera::tsim::Simulator;
using namespace tessera::tsim::testing;
using Machine = LoadedMachine;

bool rtlScBuilt() { return !Simulator::builtConfigs(Engine::kSystemC).empty(); }

// The error a run throws on each engine; they must be the same but for the target's name.
std::string errorOn(Engine engine, const std::string& program, const Options& o) {
  Machine m(program);
  Simulator sim(m.cfg, m.dram, o, engine);
  try {
    sim.run(kInsnAddr, m.count);
  } catch (const Error& e) {
    std::string s = e.what();
    for (const char* name : {"rtl-sc", "tsim"})
      for (size_t at = s.find(name); at != std::string::npos; at = s.find(name))
        s.replace(at, std::string(name).size(), "TARGET");
    return s;
  }
  ADD_FAILURE() << "no error on " << tessera::tsim::engineTarget(engine);
  return "";
}

TEST(RtlSc, FaultsAndDeadlocksAreReportedAsOnTsimAtTheSameCycle) {
  if (!rtlScBuilt()) GTEST_SKIP() << "rtl-sc not built";
  Options fault;
  fault.memory.faultPage = kAccAddr;
  EXPECT_EQ(errorOn(Engine::kVerilator, kAluProgram, fault), errorOn(Engine::kSystemC, kAluProgram, fault));
  Options quick;
  quick.watchdogCycles = 20000;
  const char* deadlock = "GEMM deps=pop_prev uop_bgn=0 uop_end=0 iter_out=1 iter_in=1\nFINISH\n";
  const std::string e = errorOn(Engine::kSystemC, deadlock, quick);
  EXPECT_EQ(errorOn(Engine::kVerilator, deadlock, quick), e);
  EXPECT_NE(e.find("waits for a token on queue l2g"), std::string::npos) << e;
  const char* unbalanced = "ALU.ADD deps=push_next uop_bgn=0 uop_end=1 iter_out=1 iter_in=1 use_imm=1 imm=1\nFINISH\n"
                           "UOP dst=0 src=0 wgt=0\n";
  const std::string u = errorOn(Engine::kSystemC, unbalanced, Options());
  EXPECT_EQ(errorOn(Engine::kVerilator, unbalanced, Options()), u);
  EXPECT_NE(u.find("not balanced at FINISH"), std::string::npos) << u;
}

TEST(RtlSc, AFullInstructionQueueDeadlocksAsOnTsimAtTheSameCycle) {
  if (!rtlScBuilt()) GTEST_SKIP() << "rtl-sc not built";
  // A blocked load at the head of the load stage and more loads behind it than its queue holds.
  std::string program = "LOAD.INP deps=pop_next sram_base=0 dram_base=0x100 y_size=1 x_size=1 x_stride=1\n";
  for (int i = 0; i < Config::load("default").insnQueueDepth + 8; ++i)
    program += "LOAD.INP deps=- sram_base=0 dram_base=0x100 y_size=1 x_size=1 x_stride=1\n";
  program += "LOAD.UOP deps=push_prev sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1\nFINISH\n";
  Options quick;
  quick.watchdogCycles = 20000;
  const std::string e = errorOn(Engine::kSystemC, program, quick);
  EXPECT_EQ(errorOn(Engine::kVerilator, program, quick), e);
  EXPECT_NE(e.find("the load instruction queue is full"), std::string::npos) << e;
}

TEST(RtlSc, LastRunReportsEachRunsCyclesAndCountersSumThem) {
  if (!rtlScBuilt()) GTEST_SKIP() << "rtl-sc not built";
  Machine a(kAluProgram), b(kAluProgram);
  Simulator tsim(a.cfg, a.dram);
  Simulator sc(b.cfg, b.dram, Options(), Engine::kSystemC);
  for (int i = 0; i < 2; ++i) {
    tsim.run(kInsnAddr, a.count);
    sc.run(kInsnAddr, b.count);
    EXPECT_GT(sc.lastRun().cycles, 0u);
    EXPECT_EQ(sc.lastRun().cycles, tsim.lastRun().cycles);
    EXPECT_EQ(sc.lastRun().runs, 1u);
  }
  EXPECT_EQ(sc.counters().cycles, 2 * sc.lastRun().cycles);
  EXPECT_EQ(sc.counters().runs, 2u);
  // Same DRAM afterwards, where the STORE wrote: the tile worked out from the data, on both.
  EXPECT_EQ(a.aluStoredTile(), aluExpectedTile(a.cfg));
  EXPECT_EQ(b.aluStoredTile(), aluExpectedTile(b.cfg));
}

// The same RTL clocked the same way: the trace port gives the same spans as under tsim, run by run.
TEST(RtlSc, InstructionSpansAreTsims) {
  if (!rtlScBuilt()) GTEST_SKIP() << "rtl-sc not built";
  for (const std::string& program : {gemmAluProgram(1024), gemmAluProgram(0), std::string(kAluProgram)}) {
    std::vector<tessera::hw::RunSpans> runs[2];
    for (const Engine engine : {Engine::kVerilator, Engine::kSystemC}) {
      Machine m(program);
      Simulator sim(m.cfg, m.dram, Options(), engine);
      sim.traceInstructions(true);
      sim.run(kInsnAddr, m.count);
      sim.run(kInsnAddr, m.count);
      runs[engine == Engine::kSystemC] = sim.takeSpans();
    }
    ASSERT_EQ(runs[0].size(), 2u);
    ASSERT_EQ(runs[1].size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(runs[1][i].cycles, runs[0][i].cycles);
      EXPECT_EQ(runs[1][i].spans, runs[0][i].spans) << program;
      EXPECT_EQ(runs[1][i].spans.size(), 2u * runs[1][i].insnCount);
    }
  }
}

TEST(RtlSc, RefusesTracesAndConfigsItWasNotBuiltFor) {
  if (!rtlScBuilt()) GTEST_SKIP() << "rtl-sc not built";
  Machine m(kAluProgram);
  Options o;
  o.trace = "never.fst";
  try {
    Simulator sim(m.cfg, m.dram, o, Engine::kSystemC);
    ADD_FAILURE() << "trace accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rtl-sc writes no waveforms"), std::string::npos) << e.what();
  }
  const std::string why = Simulator::unsupportedReason(unbuiltConfig(), Engine::kSystemC);
  EXPECT_EQ(why.rfind("rtl-sc is not built for config 'not-built'", 0), 0u) << why;
}

TEST(RtlSc, KernelRules) {
  if (!rtlScBuilt()) GTEST_SKIP() << "rtl-sc not built";
  {
    Machine m(kAluProgram);
    Simulator sim(m.cfg, m.dram, Options(), Engine::kSystemC);  // elaborates, if nothing did yet
  }
  // No model can join after elaboration.
  try {
    tessera::tsim::sc::Kernel::registerModel("late", "default", 8, nullptr);
    ADD_FAILURE() << "registered after elaboration";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("after the SystemC kernel elaborated"), std::string::npos) << e.what();
  }
  // The kernel stays on its thread.
  std::string other;
  std::thread t([&] {
    try {
      Machine m(kAluProgram);
      Simulator sim(m.cfg, m.dram, Options(), Engine::kSystemC);
    } catch (const Error& e) {
      other = e.what();
    }
  });
  t.join();
  EXPECT_NE(other.find("must be used from that thread"), std::string::npos) << other;
}

}  // namespace
