// Tests of the tsim harness on the verilated RTL: registers, run protocol, errors, watchdog, trace.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "tessera/hw/asm.h"
#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/hw/fsim.h"
#include "tessera/tsim/simulator.h"
#include "tsim_test_program.h"

namespace {

using tessera::Error;
using tessera::hw::Config;
using tessera::hw::Dram;
using tessera::hw::Fsim;
using tessera::tsim::Options;
using tessera::tsim::Simulator;
namespace reg = tessera::tsim::reg;
using tessera::tsim::testing::kAccAddr;
using tessera::tsim::testing::kAluProgram;
using tessera::tsim::testing::kInsnAddr;
using tessera::tsim::testing::kUopAddr;

// The Error a call throws; a test failure if none.
template <typename F>
Error errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no tessera::Error thrown";
  return Error("", "");
}

std::string tempPath(const std::string& name) {
  return ::testing::TempDir() + "tsim_" + std::to_string(::getpid()) + "_" + name;
}

// A config and a DRAM with a program (assembler text, UOP lines included) placed in it.
struct Machine {
  explicit Machine(const std::string& config = "default") : cfg(Config::load(config)), dram(cfg) {
    for (int i = 0; i < 64; ++i) {
      int32_t v = i - 20;
      dram.write(kAccAddr + 4 * i, &v, 4, "test data");
    }
  }
  uint32_t place(const std::string& text, uint64_t at = kInsnAddr) {
    return tessera::tsim::testing::placeProgram(cfg, dram, text, at);
  }
  Config cfg;
  Dram dram;
};

// A fast watchdog keeps the deadlock tests short.
Options quickWatchdog() {
  Options o;
  o.watchdogCycles = 20000;
  return o;
}

TEST(Tsim, HostRegistersReadBackOverAxiLite) {
  Machine s;
  Simulator sim(s.cfg, s.dram);
  EXPECT_EQ(sim.readRegister(reg::kCtrl), 0u) << "idle after reset: not running, done or faulted";
  sim.writeRegister(reg::kInsnCount, 0x1234);
  sim.writeRegister(reg::kInsnAddr, 0x5670);
  EXPECT_EQ(sim.readRegister(reg::kInsnCount), 0x1234u);
  EXPECT_EQ(sim.readRegister(reg::kInsnAddr), 0x5670u);
  EXPECT_EQ(sim.readRegister(reg::kInsnAddrHi), 0u);
  EXPECT_EQ(sim.readRegister(reg::kCntRetired), 0u);
  const uint64_t before = sim.cycle();
  sim.readRegister(reg::kStatus);
  EXPECT_GT(sim.cycle(), before) << "a register access takes clock cycles";
  EXPECT_LT(sim.cycle(), before + 10) << "but only a few";
}

TEST(Tsim, StartIsIgnoredWhileRunningAndDoneClearsAtTheNextStart) {
  Machine s;
  const uint32_t n = s.place("GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=100 iter_in=100\nFINISH\n");
  Simulator sim(s.cfg, s.dram);
  sim.writeRegister(reg::kInsnAddr, kInsnAddr);
  sim.writeRegister(reg::kInsnCount, n);
  sim.writeRegister(reg::kCtrl, 1);
  for (int i = 0; i < 1000; ++i) sim.readRegister(reg::kStatus);  // a few thousand cycles in
  EXPECT_EQ(sim.readRegister(reg::kCtrl), 1u) << "running";
  const uint32_t before = sim.readRegister(reg::kCycles);
  sim.writeRegister(reg::kCtrl, 1);  // ignored: the run goes on
  EXPECT_GT(sim.readRegister(reg::kCycles), before);
  uint32_t ctrl = 0;
  for (int i = 0; i < 20000 && !(ctrl & 2); ++i) ctrl = sim.readRegister(reg::kCtrl);
  EXPECT_EQ(ctrl, 2u) << "done, not running";
  EXPECT_GE(sim.readRegister(reg::kCycles), 10000u) << "one run of 10,000 micro-ops, never restarted";
  EXPECT_EQ(sim.readRegister(reg::kCntGemmUops), 10000u);
  // run() starts the next run; done clears at its start and rises again at its end.
  sim.run(kInsnAddr, n);
  EXPECT_EQ(sim.readRegister(reg::kCtrl), 2u);
  EXPECT_EQ(sim.counters().gemmResetUops, 10000u);
}

TEST(Tsim, RefusesToStartWhileARunStartedThroughRegistersIsGoing) {
  Machine s;
  const uint32_t n = s.place("GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=100 iter_in=100\nFINISH\n");
  Simulator sim(s.cfg, s.dram);
  sim.writeRegister(reg::kInsnAddr, kInsnAddr);
  sim.writeRegister(reg::kInsnCount, n);
  sim.writeRegister(reg::kCtrl, 1);
  const Error e = errorOf([&] { sim.run(kInsnAddr, n); });
  EXPECT_NE(e.reason().find("still running"), std::string::npos) << e.what();
}

TEST(Tsim, RunsAProgramAndCountsLikeFsim) {
  Machine a, b;
  const uint32_t n = a.place(kAluProgram);
  b.place(kAluProgram);
  Simulator tsim(a.cfg, a.dram);
  Fsim fsim(b.cfg, b.dram);
  tsim.run(kInsnAddr, n);
  fsim.run(kInsnAddr, n);
  int8_t out[16];
  a.dram.read(0x30000, out, 16, "result");
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], static_cast<int8_t>(i - 20 - 3)) << "lane " << i;
  const auto& t = tsim.counters();
  const auto& f = fsim.counters();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(t.insns[i], f.insns[i]) << "opcode " << i;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.loadBytes[i], f.loadBytes[i]) << "memory type " << i;
  EXPECT_EQ(t.nops, f.nops);
  EXPECT_EQ(t.storeBytes, f.storeBytes);
  EXPECT_EQ(t.aluUops, f.aluUops);
  EXPECT_EQ(t.aluElemOps, f.aluElemOps);
  EXPECT_EQ(t.runs, 1u);
  EXPECT_GT(t.cycles, 40u) << "at least one DRAM round trip";
  EXPECT_GT(t.busyCycles[2], 0u);
  EXPECT_GT(t.busyCycles[3], 0u);
  EXPECT_EQ(t.dramWriteBeats, 2u) << "16 bytes on a 64-bit bus";
  EXPECT_GE(t.dramReadBeats, 6u * 2 + 1 + 8) << "instructions, a micro-op and 64 bytes of accumulators";
  tsim.resetCounters();
  EXPECT_EQ(tsim.counters().cycles, 0u);
  tsim.run(kInsnAddr, n);  // runs again on the same device
  EXPECT_EQ(tsim.counters().runs, 1u);
}

TEST(Tsim, MemoryLatencyShowsInCycles) {
  Machine a, b;
  const uint32_t n = a.place(kAluProgram);
  b.place(kAluProgram);
  Options slow;
  slow.memory.readLatency = 200;
  Simulator fast(a.cfg, a.dram), slowSim(b.cfg, b.dram, slow);
  fast.run(kInsnAddr, n);
  slowSim.run(kInsnAddr, n);
  // Fetch, then the micro-op and accumulator loads, then the store's B response wait on DRAM.
  EXPECT_GE(slowSim.counters().cycles, fast.counters().cycles + 2 * 160);
}

TEST(Tsim, ValidationErrorsAreFsims) {
  const char* programs[] = {
      "LOAD.INP deps=- sram_base=2040 dram_base=0x100 y_size=1 x_size=16 x_stride=16\nFINISH\n",
      "LOAD.INP deps=- sram_base=0 dram_base=0 y_size=1 x_size=1 x_stride=1\nFINISH\n",
      "LOAD.INP deps=pop_prev sram_base=0 dram_base=0x100 y_size=1 x_size=1 x_stride=1\nFINISH\n",
  };
  for (const char* text : programs) {
    Machine a, b;
    const uint32_t n = a.place(text);
    b.place(text);
    Simulator tsim(a.cfg, a.dram);
    Fsim fsim(b.cfg, b.dram);
    const std::string want = errorOf([&] { fsim.run(kInsnAddr, n); }).what();
    EXPECT_EQ(errorOf([&] { tsim.run(kInsnAddr, n); }).what(), want) << text;
  }
}

TEST(Tsim, RefusesWhatThe32BitRtlCannotAddress) {
  Machine s;
  const uint32_t n = s.place("FINISH\n", 0x41008);
  Simulator sim(s.cfg, s.dram);
  EXPECT_NE(std::string(errorOf([&] { sim.run(0x41008, n); }).what()).find("not 16-byte aligned"), std::string::npos);
  // INP elements are 16 bytes: index 0x10000000 is byte 4 GiB, inside the simulated DRAM.
  const uint32_t m = s.place("LOAD.INP deps=- sram_base=0 dram_base=0x10000000 y_size=1 x_size=1 x_stride=1\nFINISH\n");
  const Error e = errorOf([&] { sim.run(kInsnAddr, m); });
  EXPECT_EQ(e.where(), "instruction 0 (LOAD.INP), field dram_base");
  EXPECT_NE(e.reason().find("reaches past 4 GiB"), std::string::npos) << e.what();
  const uint32_t k = s.place("LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1\n");
  EXPECT_NE(std::string(errorOf([&] { sim.run(kInsnAddr, k); }).what()).find("without a FINISH"), std::string::npos);
}

TEST(Tsim, UnbalancedProgramFailsAtFinishLikeFsim) {
  // The ALU pushes a token to store that no STORE pops.
  const char* text = R"(
LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1
ALU.ADD deps=push_next uop_bgn=0 uop_end=1 iter_out=1 iter_in=1 use_imm=1 imm=1
FINISH
UOP dst=0 src=0 wgt=0
)";
  Machine a, b;
  const uint32_t n = a.place(text);
  b.place(text);
  Simulator tsim(a.cfg, a.dram);
  Fsim fsim(b.cfg, b.dram);
  const std::string want = errorOf([&] { fsim.run(kInsnAddr, n); }).what();
  EXPECT_EQ(errorOf([&] { tsim.run(kInsnAddr, n); }).what(), want);
  // The device was reset: the next, balanced program runs.
  const uint32_t m = a.place(kAluProgram);
  tsim.run(kInsnAddr, m);
}

TEST(Tsim, SramIndexFaultNamesInstructionMicroOpAndField) {
  // The accumulator index reaches 2047 + 1 = 2048, the depth of the default accumulator.
  const char* text = R"(
LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1
GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=2 iter_in=1 dst_factor_out=1
FINISH
UOP dst=2047 src=0 wgt=0
)";
  Machine a, b;
  const uint32_t n = a.place(text);
  b.place(text);
  Simulator tsim(a.cfg, a.dram);
  Fsim fsim(b.cfg, b.dram);
  const Error want = errorOf([&] { fsim.run(kInsnAddr, n); });
  const Error got = errorOf([&] { tsim.run(kInsnAddr, n); });
  EXPECT_EQ(got.where(), want.where()) << "fsim: " << want.what() << "\ntsim: " << got.what();
  EXPECT_NE(got.reason().find("accumulator (dst) index goes past the buffer depth 2048"), std::string::npos) << got.what();
}

TEST(Tsim, DramErrorResponsesFaultWithInstructionAndAddress) {
  struct Case {
    uint64_t page;
    const char* where;
    const char* what;
  } cases[] = {
      {kAccAddr, "instruction 1 (LOAD.ACC)", "DRAM read error response"},
      {0x30000, "instruction 3 (STORE.OUT)", "DRAM write error response"},
      {kInsnAddr, "instruction fetch of instruction 0 (LOAD.UOP)", "DRAM read error response"},
  };
  for (const auto& c : cases) {
    Machine s;
    const uint32_t n = s.place(kAluProgram);
    Options o;
    o.memory.faultPage = c.page;
    Simulator sim(s.cfg, s.dram, o);
    const Error e = errorOf([&] { sim.run(kInsnAddr, n); });
    EXPECT_EQ(e.where(), c.where) << e.what();
    EXPECT_NE(e.reason().find(c.what), std::string::npos) << e.what();
    char at[32];
    std::snprintf(at, sizeof at, "burst at 0x%llx", static_cast<unsigned long long>(c.page));
    EXPECT_NE(e.reason().find(at), std::string::npos) << e.what();
    EXPECT_NE(e.reason().find("mem-fault-page"), std::string::npos) << e.what();
  }
}

// A load FINISH does not wait for still runs after the host registers saw done, which then take no
// fault: an error response to it must fail the run all the same, not pass with bad data.
TEST(Tsim, DramErrorAfterFinishFailsTheRun) {
  Machine s;
  const uint32_t n = s.place("LOAD.INP deps=- sram_base=0 dram_base=0x3000 y_size=1 x_size=1 x_stride=1\nFINISH\n");
  Options o;
  o.memory.faultPage = 0x30000;  // the load's bytes: 0x3000 inputs of 16 bytes
  Simulator sim(s.cfg, s.dram, o);
  const Error e = errorOf([&] { sim.run(kInsnAddr, n); });
  EXPECT_NE(e.reason().find("DRAM error response after FINISH"), std::string::npos) << e.what();
  EXPECT_NE(e.reason().find("read burst at 0x30000"), std::string::npos) << e.what();
  // Without the injected error the same program passes.
  Machine clean;
  clean.place("LOAD.INP deps=- sram_base=0 dram_base=0x3000 y_size=1 x_size=1 x_stride=1\nFINISH\n");
  Simulator ok(clean.cfg, clean.dram);
  EXPECT_NO_THROW(ok.run(kInsnAddr, n));
}

TEST(Tsim, WatchdogNamesTheWaitingModuleAndQueue) {
  Machine s;
  const uint32_t n = s.place("GEMM deps=pop_prev uop_bgn=0 uop_end=0 iter_out=1 iter_in=1\nFINISH\n");
  Simulator sim(s.cfg, s.dram, quickWatchdog());
  const Error e = errorOf([&] { sim.run(kInsnAddr, n); });
  EXPECT_EQ(e.where().rfind("deadlock after ", 0), 0u) << e.what();
  EXPECT_NE(e.reason().find("compute instruction 0 (GEMM) waits for a token on queue l2g (load->compute), which is empty"),
            std::string::npos)
      << e.what();
  EXPECT_NE(e.reason().find("load idle"), std::string::npos) << e.what();
  EXPECT_NE(e.reason().find("store idle"), std::string::npos) << e.what();
  EXPECT_LT(sim.cycle(), 30000u + 20000u) << "stopped soon after the watchdog period";
}

// A blocked LOAD.INP at the head of the load stage and more loads behind it than its instruction
// queue holds: fetch fills the queue and stalls; the compute instruction that would unblock the
// load never gets dispatched.
std::string fullLoadQueueDeadlock(const Config& cfg) {
  std::string text = "LOAD.INP deps=pop_next sram_base=0 dram_base=0x100 y_size=1 x_size=1 x_stride=1\n";
  for (int i = 0; i < cfg.insnQueueDepth + 8; ++i) text += "LOAD.INP deps=- sram_base=0 dram_base=0x100 y_size=1 x_size=1 x_stride=1\n";
  return text + "LOAD.UOP deps=push_prev sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1\nFINISH\nUOP dst=0 src=0 wgt=0\n";
}

TEST(Tsim, FullInstructionQueueDeadlockNamesFetchAndTheQueueLikeFsim) {
  Machine a, b;
  const std::string text = fullLoadQueueDeadlock(a.cfg);
  const uint32_t n = a.place(text);
  b.place(text);
  Simulator tsim(a.cfg, a.dram, quickWatchdog());
  Fsim fsim(b.cfg, b.dram);
  const Error want = errorOf([&] { fsim.run(kInsnAddr, n); });
  const Error got = errorOf([&] { tsim.run(kInsnAddr, n); });
  // fsim names the instruction fetch could not dispatch; tsim adds how many entries the queue holds.
  const std::string depth = std::to_string(a.cfg.insnQueueDepth);
  const size_t at = want.reason().find("fetch stalled at ");
  ASSERT_NE(at, std::string::npos) << want.what();
  std::string stalled = want.reason().substr(at, want.reason().find(" entries)", at) - at);
  stalled.replace(stalled.rfind("(" + depth), depth.size() + 1, "(" + depth + " of " + depth);
  EXPECT_NE(got.reason().find(stalled), std::string::npos) << "fsim: " << want.what() << "\ntsim: " << got.what();
  EXPECT_NE(got.reason().find("the load instruction queue is full"), std::string::npos) << got.what();
  EXPECT_NE(got.reason().find("load instruction 0 (LOAD.INP) waits for a token on queue g2l"), std::string::npos)
      << got.what();
  // The device was reset: the next program runs.
  const uint32_t m = a.place(kAluProgram);
  tsim.run(kInsnAddr, m);
}

TEST(Tsim, WaitCyclesBoundsARun) {
  Machine s;
  const uint32_t n = s.place("GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=16383 iter_in=16383\nFINISH\n");
  Simulator sim(s.cfg, s.dram);
  const Error e = errorOf([&] { sim.run(kInsnAddr, n, 5000); });
  EXPECT_NE(e.reason().find("exceeds wait_cycles=5000"), std::string::npos) << e.what();
  EXPECT_NE(e.reason().find("compute busy with instruction 0 (GEMM)"), std::string::npos) << e.what();
  EXPECT_LT(sim.cycle(), 7000u);
}

TEST(Tsim, TraceWritesAnFstAndNeverOverwrites) {
  const std::string path = tempPath("trace.fst");
  std::remove(path.c_str());
  {
    Machine s;
    const uint32_t n = s.place(kAluProgram);
    Options o;
    o.trace = path;
    Simulator sim(s.cfg, s.dram, o);
    sim.run(kInsnAddr, n);
  }
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0) << "trace file written";
  EXPECT_GT(st.st_size, 1000) << "a waveform of a few hundred cycles";
  Machine s;
  Options o;
  o.trace = path;
  const Error e = errorOf([&] { Simulator sim(s.cfg, s.dram, o); });
  EXPECT_EQ(e.where(), "trace " + path);
  EXPECT_NE(e.reason().find("refusing to overwrite"), std::string::npos) << e.what();
  struct stat again;
  ASSERT_EQ(::stat(path.c_str(), &again), 0);
  EXPECT_EQ(again.st_size, st.st_size) << "the existing file was left alone";
  o.traceForce = true;
  { Simulator sim(s.cfg, s.dram, o); }
  std::remove(path.c_str());
}

TEST(Tsim, RefusesConfigsItWasNotBuiltFor) {
  Config custom = Config::load("default");
  custom.name = "custom";
  custom.logUopBuffSize = 14;
  custom.derive("test");
  Dram dram(custom);
  const Error e = errorOf([&] { Simulator sim(custom, dram); });
  EXPECT_NE(e.reason().find("tsim is not built for config 'custom'"), std::string::npos) << e.what();
  std::string built;
  for (const auto& c : Simulator::builtConfigs()) built += (built.empty() ? "" : ", ") + c;
  EXPECT_NE(e.reason().find(built), std::string::npos) << e.what();
  EXPECT_NE(e.reason().find("LOG_UOP_BUFF_SIZE is 14"), std::string::npos) << e.what();

  // Parameters decide, not names: the default config under another name runs.
  Config renamed = Config::load("default");
  renamed.name = "renamed";
  EXPECT_EQ(Simulator::unsupportedReason(renamed), "");
  const auto names = Simulator::builtConfigs();
  EXPECT_EQ(Simulator::unsupportedReason(Config::load("batch2")).empty(),
            std::find(names.begin(), names.end(), "batch2") != names.end());
}

TEST(Tsim, OptionsNameBadKeysAndValues) {
  EXPECT_EQ(Options::parse({{"mem-latency", "100"}}).memory.readLatency, 100u);
  EXPECT_EQ(Options::parse({{"mem-bytes-per-cycle", "2.5"}}).memory.bytesPerCycle, 2.5);
  EXPECT_TRUE(Options::parse({{"trace-force", "1"}}).traceForce);
  EXPECT_EQ(Options::parse({{"watchdog-cycles", "0"}}).watchdogCycles, 0u);
  EXPECT_EQ(Options::parse({{"mem-fault-page", "0x30000"}}).memory.faultPage, 0x30000u);
  EXPECT_EQ(errorOf([] { Options::parse({{"mem-fault-page", "0"}}); }).where(), "target option mem-fault-page=0");
  const Error unknown = errorOf([] { Options::parse({{"mem-latncy", "3"}}); });
  EXPECT_EQ(unknown.where(), "target option 'mem-latncy'");
  EXPECT_NE(unknown.reason().find("mem-latency"), std::string::npos) << "lists the known keys";
  EXPECT_EQ(errorOf([] { Options::parse({{"mem-latency", "fast"}}); }).where(), "target option mem-latency=fast");
  EXPECT_EQ(errorOf([] { Options::parse({{"mem-latency", "0"}}); }).where(), "target option mem-latency=0");
  EXPECT_EQ(errorOf([] { Options::parse({{"mem-bytes-per-cycle", "-1"}}); }).where(),
            "target option mem-bytes-per-cycle=-1");
  EXPECT_EQ(errorOf([] { Options::parse({{"trace-force", "maybe"}}); }).where(), "target option trace-force=maybe");
  EXPECT_EQ(Options::parse({}).mutant, -1) << "no mutant unless asked";
  EXPECT_EQ(Options::parse({{"mutant", "7"}}).mutant, 7);
  EXPECT_EQ(errorOf([] { Options::parse({{"mutant", "65536"}}); }).where(), "target option mutant=65536");
  EXPECT_EQ(errorOf([] { Options::parse({{"mutant", "-1"}}); }).where(), "target option mutant=-1");
}

TEST(Tsim, OnlyTsimMutTakesAMutant) {
  Machine m("default");
  Options o;
  o.mutant = 1;
  const Error e = errorOf([&] { Simulator sim(m.cfg, m.dram, o); });
  EXPECT_EQ(e.where(), "target option mutant=1");
  EXPECT_NE(e.reason().find("the tsim-mut target does"), std::string::npos) << e.what();
}

TEST(Tsim, SmallConfigRunsWithANarrowBus) {
  Machine s("small");
  // Small: ACC elements are 16 bytes (4 int32), so ACC index 0x1000 is byte 0x10000.
  const uint32_t n = s.place(R"(
LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1
LOAD.ACC deps=- sram_base=0 dram_base=0x1000 y_size=1 x_size=4 x_stride=4
ALU.MAX deps=push_next uop_bgn=0 uop_end=1 iter_out=4 iter_in=1 dst_factor_out=1 src_factor_out=1 use_imm=1 imm=-18
STORE.OUT deps=pop_prev|push_prev sram_base=0 dram_base=0x3000 y_size=1 x_size=4 x_stride=4
LOAD.UOP deps=pop_next
FINISH
UOP dst=0 src=0 wgt=0
)");
  Simulator sim(s.cfg, s.dram);
  EXPECT_EQ(sim.modelConfig(), "small");
  sim.run(kInsnAddr, n);
  int8_t out[16];
  s.dram.read(0x3000 * 4, out, 16, "result");
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], std::max(i - 20, -18)) << "lane " << i;
  EXPECT_EQ(sim.counters().aluUops, 4u);
}

}  // namespace
