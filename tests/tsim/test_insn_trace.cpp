// Tests of tsim's instruction trace: every instruction once on fetch and once on its unit, pipes that overlap only when apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tessera/gen/host_interface.h"
#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/hw/insn_trace.h"
#include "tessera/tsim/simulator.h"
#include "span_checks.h"
#include "tsim_test_program.h"

namespace {

namespace host = tessera::host;
using tessera::hw::InsnSpan;
using tessera::hw::RunSpans;
using tessera::tsim::Simulator;
using namespace tessera::tsim::testing;

// One traced run of `program` on tsim (default config).
RunSpans traced(const std::string& program, uint64_t* cyclesUntraced = nullptr) {
  LoadedMachine m(program);
  Simulator sim(m.cfg, m.dram);
  if (cyclesUntraced) {
    sim.run(kInsnAddr, m.count);
    *cyclesUntraced = sim.lastRun().cycles;
    EXPECT_TRUE(sim.takeSpans().empty()) << "a run without tracing recorded spans";
  }
  sim.traceInstructions(true);
  sim.run(kInsnAddr, m.count);
  std::vector<RunSpans> runs = sim.takeSpans();
  EXPECT_EQ(runs.size(), 1u);
  EXPECT_TRUE(sim.takeSpans().empty()) << "takeSpans() did not forget what it handed over";
  if (runs.size() != 1) return RunSpans();
  EXPECT_EQ(runs[0].cycles, sim.lastRun().cycles);
  EXPECT_EQ(runs[0].insnCount, m.count);
  return runs[0];
}

TEST(TsimInsnTrace, GemmAndAluOverlapWhenTheirRowsAreApart) {
  uint64_t untraced = 0;
  const RunSpans r = traced(gemmAluProgram(1024), &untraced);
  ASSERT_EQ(r.insnCount, 8u);
  expectWellFormed(r);
  EXPECT_EQ(r.cycles, untraced) << "tracing changed the timing";
  // Each instruction where docs/rtl.md puts it.
  spanOf(r, kLoadInp, host::kTraceLoad);
  spanOf(r, kLoadWgt, host::kTraceLoad);
  spanOf(r, kLoadUop, host::kTraceCompute);
  spanOf(r, kResetGemm, host::kTraceAluPipe);
  const InsnSpan gemm = spanOf(r, kGemm, host::kTraceGemmPipe);
  const InsnSpan alu = spanOf(r, kAlu, host::kTraceAluPipe);
  spanOf(r, kStore, host::kTraceStore);
  const InsnSpan finish = spanOf(r, kFinish, host::kTraceCompute);
  // The GEMM writes one micro-op a cycle: 64 of them, and the pipeline's depth.
  EXPECT_GE(gemm.end - gemm.begin, 64u);
  EXPECT_LE(gemm.end - gemm.begin, 64u + 8);
  EXPECT_TRUE(overlap(gemm, alu)) << "GEMM [" << gemm.begin << ", " << gemm.end << ") and ALU [" << alu.begin << ", "
                                  << alu.end << ") on rows apart did not overlap";
  EXPECT_TRUE(overlap(gemm, spanOf(r, kResetGemm, host::kTraceAluPipe))) << "the reset GEMM on rows apart";
  // FINISH waits for the STORE, so it is the last to end, with the run's last counted cycle.
  EXPECT_EQ(finish.end, r.cycles);
  for (const InsnSpan& s : r.spans) EXPECT_LE(s.end, finish.end);
  EXPECT_GE(finish.begin, spanOf(r, kStore, host::kTraceStore).end);
}

TEST(TsimInsnTrace, GemmAndAluTakeTurnsWhenTheyShareRows) {
  const RunSpans r = traced(gemmAluProgram(0));
  ASSERT_EQ(r.insnCount, 8u);
  expectWellFormed(r);
  const InsnSpan reset = spanOf(r, kResetGemm, host::kTraceAluPipe);
  const InsnSpan gemm = spanOf(r, kGemm, host::kTraceGemmPipe);
  const InsnSpan alu = spanOf(r, kAlu, host::kTraceAluPipe);
  EXPECT_LE(reset.end, gemm.begin) << "the GEMM accumulates rows the reset GEMM zeroes";
  EXPECT_LE(gemm.end, alu.begin) << "the ALU instruction adds to rows the GEMM writes";
  EXPECT_EQ(spanOf(r, kFinish, host::kTraceCompute).end, r.cycles);
}

// Load keeps up to three instructions in flight; each span still belongs to its own instruction,
// ending in program order.
TEST(TsimInsnTrace, LoadsInFlightEndInOrder) {
  std::string program;
  for (int i = 0; i < 6; ++i)
    program += "LOAD.INP deps=- sram_base=" + std::to_string(4 * i) + " dram_base=0x100 y_size=2 x_size=2 x_stride=2\n";
  program += "LOAD.WGT deps=push_next sram_base=0 dram_base=0x100 y_size=1 x_size=1 x_stride=1\n"
             "LOAD.UOP deps=pop_prev sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1\nFINISH\n";
  const RunSpans r = traced(program);
  ASSERT_EQ(r.insnCount, 9u);
  expectWellFormed(r);
  bool inFlight = false;
  for (uint32_t i = 1; i < 7; ++i) {
    const InsnSpan a = spanOf(r, i - 1, host::kTraceLoad), b = spanOf(r, i, host::kTraceLoad);
    EXPECT_LT(a.end, b.end) << "loads " << i - 1 << " and " << i << " end out of order";
    EXPECT_LT(a.begin, b.begin);
    inFlight = inFlight || overlap(a, b);
  }
  EXPECT_TRUE(inFlight) << "no load's DRAM latency overlapped the previous one's";
}

TEST(TsimInsnTrace, OffByDefaultAndOffAgain) {
  LoadedMachine m(kAluProgram);
  Simulator sim(m.cfg, m.dram);
  sim.run(kInsnAddr, m.count);
  EXPECT_TRUE(sim.takeSpans().empty());
  sim.traceInstructions(true);
  sim.run(kInsnAddr, m.count);
  sim.run(kInsnAddr, m.count);
  sim.traceInstructions(false);
  sim.run(kInsnAddr, m.count);
  const std::vector<RunSpans> runs = sim.takeSpans();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].spans, runs[1].spans) << "the same program twice, timed differently";
  expectWellFormed(runs[0]);
}

// The pairing of a trace port's events names what is wrong with them.
TEST(InsnTraceEvents, PairedIntoSpansOrNamedAsAModelBug) {
  using tessera::hw::TraceEvent;
  using tessera::hw::spansFromEvents;
  const std::vector<TraceEvent> good = {{0, 0, host::kTraceFetch, false}, {0, 0, host::kTraceFetch, true},
                                        {0, 3, host::kTraceCompute, false}, {0, 5, host::kTraceCompute, true}};
  const RunSpans r = spansFromEvents(good, 1, 6, "m");
  ASSERT_EQ(r.spans.size(), 2u);
  EXPECT_EQ(r.spans[0], (InsnSpan{0, host::kTraceFetch, 0, 1}));
  EXPECT_EQ(r.spans[1], (InsnSpan{0, host::kTraceCompute, 3, 6}));
  auto why = [](std::vector<TraceEvent> e, uint32_t count) {
    try {
      tessera::hw::spansFromEvents(e, count, 10, "m");
    } catch (const tessera::Error& err) {
      return std::string(err.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(why({good[0], good[1]}, 1).find("instruction 0 never began on an executing unit"), std::string::npos);
  EXPECT_NE(why({good[0], good[1], good[2]}, 1).find("never ended on compute"), std::string::npos);
  EXPECT_NE(why(good, 2).find("instruction 1 was never dispatched by fetch"), std::string::npos);
  EXPECT_NE(why({good[0], good[1], good[2], {0, 4, host::kTraceStore, true}}, 1).find("ended on store after beginning on compute"),
            std::string::npos);
  EXPECT_NE(why({good[0], good[1], good[2], good[2]}, 1).find("began twice on compute"), std::string::npos);
  EXPECT_NE(why({good[0], good[1], {0, 3, host::kTraceLoad, true}}, 1).find("ended on load without beginning there"),
            std::string::npos);
  EXPECT_NE(why({{3, 0, host::kTraceFetch, false}}, 1).find("the run has 1 instructions"), std::string::npos);
  EXPECT_NE(why({{0, 0, 9, false}}, 1).find("unit 9"), std::string::npos);
}

}  // namespace
