// The runner finds disagreements and shrinks them: fault-injecting targets (test-only) against fsim.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "tessera/regress/check.h"
#include "tessera/regress/generator.h"
#include "tessera/regress/runner.h"
#include "tessera/runtime/target.h"

namespace {

using namespace tessera::regress;
using tessera::hw::Config;
using tessera::hw::Insn;
using tessera::hw::Opcode;

// The ways the test target breaks a run.
enum class Fault {
  kCorruptStoredByte,  // flips a bit of the first byte the first STORE wrote
  kDropMul,            // removes the first ALU.MUL from the stream it is given
  kSkipVectorShr,      // runs the first vector ALU.SHR as a NOP with the same dependency flags
  kDropTokenPush,      // removes the first load-stage instruction that pushes a token
};

// fsim with one injected fault: what the runner must catch. Test code only, never a product target.
class FaultyTarget : public tessera::runtime::Target {
 public:
  FaultyTarget(const Config& cfg, tessera::hw::Dram& dram, Fault fault)
      : cfg_(cfg), isa_(cfg), dram_(dram), inner_(tessera::runtime::createTarget("fsim", cfg, dram)), fault_(fault) {}
  std::string name() const override { return "faulty"; }
  tessera::hw::Counters counters() const override { return inner_->counters(); }
  void resetCounters() override { inner_->resetCounters(); }

  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override {
    std::vector<Insn> s(count);
    for (uint32_t i = 0; i < count; ++i)
      s[i] = isa_.decode(tessera::hw::Isa::rawFromBytes(dram_.at(insnPhys + 16ull * i, 16, "faulty fetch")));
    auto find = [&](auto pred) {
      for (uint32_t i = 0; i < count; ++i)
        if (pred(s[i])) return static_cast<int>(i);
      return -1;
    };
    switch (fault_) {
      case Fault::kCorruptStoredByte: {
        inner_->run(insnPhys, count, waitCycles);
        const int k = find([](const Insn& in) { return in.opcode == Opcode::kStore && !in.isNop() && in.ySize > 0; });
        if (k >= 0) *dram_.at(uint64_t(s[k].dramBase) * cfg_.outElemBytes, 1, "corruption") ^= 0x40;
        return;
      }
      case Fault::kDropMul:
        return runEdited(insnPhys, s, find([](const Insn& in) {
                           return in.opcode == Opcode::kAlu && in.aluOp == uint32_t(tessera::hw::AluOp::kMul);
                         }), false, waitCycles);
      case Fault::kSkipVectorShr:
        return runEdited(insnPhys, s, find([](const Insn& in) {
                           return in.opcode == Opcode::kAlu && in.aluOp == uint32_t(tessera::hw::AluOp::kShr) && !in.useImm;
                         }), true, waitCycles);
      case Fault::kDropTokenPush:
        return runEdited(insnPhys, s, find([](const Insn& in) {
                           return in.stage() == tessera::hw::Stage::kLoad && in.pushNext;
                         }), false, waitCycles);
    }
  }

 private:
  // Runs the stream with instruction k removed (or turned into a NOP keeping its flags), then puts
  // the original bytes back so only the effect of the fault remains.
  void runEdited(uint64_t insnPhys, std::vector<Insn> s, int k, bool keepFlags, uint32_t waitCycles) {
    const uint32_t count = static_cast<uint32_t>(s.size());
    if (k < 0) return inner_->run(insnPhys, count, waitCycles);
    if (keepFlags) {
      Insn nop;
      nop.opcode = Opcode::kLoad;
      nop.memType = static_cast<uint32_t>(tessera::hw::MemId::kUop);
      nop.popPrev = s[k].popPrev, nop.popNext = s[k].popNext, nop.pushPrev = s[k].pushPrev, nop.pushNext = s[k].pushNext;
      s[k] = nop;
    } else {
      s.erase(s.begin() + k);
    }
    std::vector<uint8_t> saved(16ull * count);
    dram_.read(insnPhys, saved.data(), saved.size(), "faulty save");
    for (size_t i = 0; i < s.size(); ++i)
      tessera::hw::Isa::rawToBytes(isa_.encode(s[i]), dram_.at(insnPhys + 16 * i, 16, "faulty write"));
    try {
      inner_->run(insnPhys, static_cast<uint32_t>(s.size()), waitCycles);
    } catch (...) {
      dram_.write(insnPhys, saved.data(), saved.size(), "faulty restore");
      throw;
    }
    dram_.write(insnPhys, saved.data(), saved.size(), "faulty restore");
  }

  Config cfg_;
  tessera::hw::Isa isa_;
  tessera::hw::Dram& dram_;
  std::unique_ptr<tessera::runtime::Target> inner_;
  Fault fault_;
};

TargetSpec faulty(Fault f, const char* label) {
  return {label, [f](const Config& cfg, tessera::hw::Dram& dram) {
            return std::unique_ptr<tessera::runtime::Target>(new FaultyTarget(cfg, dram, f));
          }};
}

// The first seed whose program the two targets disagree on.
uint64_t firstFailingSeed(const Config& cfg, const std::vector<TargetSpec>& targets, Program* out) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Program p = generate(cfg, seed, Size::kSmall);
    if (runTrial(p, targets).mismatch) {
      *out = p;
      return seed;
    }
  }
  return 0;
}

// Shrinks and checks the result: valid, still failing, and at most `maxWork` instructions that do
// something (plus NOPs and FINISH).
void expectShrinks(const Program& p, const std::vector<TargetSpec>& targets, size_t maxWork, const char* expect) {
  const ShrinkResult s = shrink(p, targets);
  EXPECT_NO_THROW(checkProgram(s.program));
  const Trial again = runTrial(s.program, targets);
  ASSERT_TRUE(again.mismatch.has_value()) << listing(s.program);
  EXPECT_NE(again.mismatch->summary.find(expect), std::string::npos) << again.mismatch->summary;
  EXPECT_LE(workInstructions(s.program), maxWork) << listing(s.program);
  EXPECT_LT(s.program.insns.size(), p.insns.size());
  EXPECT_GT(s.accepted, 0u);
  // The shrunk case, as a developer would read it in the log.
  std::printf("shrunk in %zu runs: %s\n%s%s", s.candidates, s.mismatch.summary.c_str(), s.mismatch.detail.c_str(),
              listing(s.program).c_str());
}

TEST(Runner, IdenticalTargetsAgree) {
  for (const char* c : {"default", "small", "batch2"}) {
    const Config cfg = Config::load(c);
    const auto targets = parseTargetList("fsim,fsim:kernels=generic");
    for (uint64_t seed = 1; seed <= 100; ++seed) {
      const Trial t = runTrial(generate(cfg, seed, Size::kSmall), targets);
      ASSERT_FALSE(t.mismatch.has_value()) << c << " seed " << seed << ": " << t.mismatch->summary << "\n"
                                           << t.mismatch->detail;
      ASSERT_FALSE(t.outcomes[0].failed) << t.outcomes[0].error;
    }
  }
}

TEST(Runner, CatchesACorruptedStoreByteAndNamesTheElement) {
  const Config cfg = Config::load("default");
  const std::vector<TargetSpec> targets = {parseTargetSpec("fsim"), faulty(Fault::kCorruptStoredByte, "faulty")};
  Program p;
  ASSERT_NE(firstFailingSeed(cfg, targets, &p), 0u);
  const Trial t = runTrial(p, targets);
  ASSERT_TRUE(t.mismatch);
  EXPECT_NE(t.mismatch->summary.find("fsim and faulty leave different DRAM: 1 byte(s) differ"), std::string::npos)
      << t.mismatch->summary;
  // The corrupted byte is the first of the first STORE's first row: element 0, lane 0.
  EXPECT_NE(t.mismatch->detail.find("(STORE) row 0, element 0, lane 0 (batch 0, output 0)"), std::string::npos)
      << t.mismatch->detail;
  expectShrinks(p, targets, 3, "1 byte(s) differ");
}

TEST(Runner, CatchesADroppedInstructionAndShrinksToIt) {
  const Config cfg = Config::load("small");
  const std::vector<TargetSpec> targets = {parseTargetSpec("fsim"), faulty(Fault::kDropMul, "faulty")};
  Program p;
  ASSERT_NE(firstFailingSeed(cfg, targets, &p), 0u);
  // At least: micro-ops, accumulator initialisation, the MUL and a STORE of its result.
  expectShrinks(p, targets, 5, "");
}

TEST(Runner, CatchesASkippedVectorShiftOnBatch2) {
  const Config cfg = Config::load("batch2");
  const std::vector<TargetSpec> targets = {parseTargetSpec("fsim"), faulty(Fault::kSkipVectorShr, "faulty")};
  Program p;
  ASSERT_NE(firstFailingSeed(cfg, targets, &p), 0u);
  expectShrinks(p, targets, 5, "byte(s) differ");
}

TEST(Runner, AnErrorOnOneTargetOnlyIsAMismatch) {
  const Config cfg = Config::load("default");
  const std::vector<TargetSpec> targets = {parseTargetSpec("fsim"), faulty(Fault::kDropTokenPush, "faulty")};
  Program p;
  ASSERT_NE(firstFailingSeed(cfg, targets, &p), 0u);
  const Trial t = runTrial(p, targets);
  ASSERT_TRUE(t.mismatch);
  EXPECT_EQ(t.mismatch->summary, "faulty failed where fsim completed");
  EXPECT_NE(t.mismatch->detail.find(t.outcomes[1].error), std::string::npos);
  // One load-stage instruction pushing a token FINISH waits for is enough to fail.
  expectShrinks(p, targets, 2, "faulty failed where fsim completed");
}

TEST(Runner, ReportsFirstDifferenceByStoreRowElementAndLane) {
  const Config cfg = Config::load("default");
  const std::vector<TargetSpec> targets = parseTargetList("fsim,fsim");
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const Program p = generate(cfg, seed, Size::kSmall);
    int k = -1;
    for (size_t i = 0; i < p.insns.size() && k < 0; ++i)
      if (p.insns[i].opcode == Opcode::kStore && p.insns[i].ySize >= 2 && p.insns[i].xSize >= 3) k = static_cast<int>(i);
    if (k < 0) continue;
    std::vector<Outcome> o = {execute(p, targets[0]), execute(p, targets[1])};
    ASSERT_FALSE(compare(p, targets, o).has_value());
    const Insn& st = p.insns[k];
    const uint64_t addr = (uint64_t(st.dramBase) + st.xStride + 2) * cfg.outElemBytes + 3;  // row 1, element 2, lane 3
    for (size_t r = 0; r < p.regions.size(); ++r)
      if (addr >= p.regions[r].base && addr < p.regions[r].end()) o[1].regions[r][addr - p.regions[r].base] ^= 1;
    auto m = compare(p, targets, o);
    ASSERT_TRUE(m.has_value());
    const std::string want = "instruction " + std::to_string(k) + " (STORE) row 1, element 2, lane 3 (batch 0, output 3) "
                             "from accumulator entry " + std::to_string(st.sramBase + st.xSize + 2);
    EXPECT_NE(m->detail.find(want), std::string::npos) << m->detail;
    // A byte no STORE writes (the instruction region) is reported as such.
    o[1] = o[0];
    o[1].regions.back()[5] ^= 0x80;
    m = compare(p, targets, o);
    ASSERT_TRUE(m.has_value());
    EXPECT_NE(m->detail.find("no STORE of the program writes this byte"), std::string::npos) << m->detail;
    // One failing target is a mismatch naming its error; all failing is reported as such.
    o[1] = o[0];
    o[1].failed = true;
    o[1].error = "boom";
    m = compare(p, targets, o);
    ASSERT_TRUE(m.has_value());
    EXPECT_NE(m->detail.find("boom"), std::string::npos);
    o[0].failed = true;
    m = compare(p, targets, o);
    ASSERT_TRUE(m.has_value());
    EXPECT_TRUE(m->allFailed);
    return;
  }
  FAIL() << "no program with a STORE of at least 2 rows and 3 columns";
}

TEST(Runner, RegressionLoopReportsAndShrinksAndCounts) {
  RegressOptions o;
  o.cfg = Config::load("small");
  o.seed = 1;
  o.programs = 30;
  o.targets = {parseTargetSpec("fsim"), faulty(Fault::kCorruptStoredByte, "faulty")};
  o.keepGoing = false;
  o.reproduce = "tessera regress --config small";
  std::ostringstream out;
  const RegressSummary s = runRegression(o, out);
  EXPECT_EQ(s.failures, 1u);
  ASSERT_EQ(s.failingSeeds.size(), 1u);
  const std::string text = out.str();
  EXPECT_NE(text.find("MISMATCH seed " + std::to_string(s.failingSeeds[0])), std::string::npos) << text;
  EXPECT_NE(text.find("reproduce: tessera regress --config small --seed " + std::to_string(s.failingSeeds[0]) +
                      " --programs 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("shrunk seed"), std::string::npos) << text;
  EXPECT_NE(text.find("stream at"), std::string::npos) << text;
  EXPECT_NE(text.find("1 mismatch (seeds " + std::to_string(s.failingSeeds[0]) + ")"), std::string::npos) << text;
  // With --keep-going every program runs.
  o.keepGoing = true;
  o.shrink = false;
  std::ostringstream all;
  const RegressSummary k = runRegression(o, all);
  EXPECT_EQ(k.programs, 30u);
  EXPECT_GE(k.failures, 10u);
}

TEST(TargetSpecs, ParseNamesAndOptions) {
  const Config cfg = Config::load("default");
  tessera::hw::Dram dram(cfg);
  EXPECT_EQ(parseTargetSpec("fsim").label, "fsim");
  EXPECT_NE(parseTargetSpec("fsim:kernels=generic").create(cfg, dram), nullptr);
  EXPECT_THROW(parseTargetSpec("warp"), tessera::Error);
  EXPECT_THROW(parseTargetSpec("fsim:kernels"), tessera::Error);
  EXPECT_THROW(parseTargetSpec("fsim:color=red").create(cfg, dram), tessera::Error);  // fsim takes no options
  EXPECT_THROW(parseTargetList("fsim"), tessera::Error);
  EXPECT_THROW(parseTargetList("fsim,,fsim"), tessera::Error);
  EXPECT_EQ(parseTargetList("fsim,fsim,fsim:kernels=avx2").size(), 3u);
}

TEST(TargetSpecs, CountersExactIsTheRegressionsOwnKey) {
  EXPECT_FALSE(parseTargetSpec("fsim").exactCounters);
  EXPECT_TRUE(parseTargetSpec("fsim:counters=exact").exactCounters);
  EXPECT_THROW(parseTargetSpec("fsim:counters=close"), tessera::Error);
  // Nothing before the first target to compare its counters with.
  EXPECT_THROW(parseTargetList("fsim:counters=exact,fsim"), tessera::Error);
}

// Outcomes made by hand: the comparison of counters, apart from any simulator.
TEST(Runner, CountersExactComparesWithTheNearestEarlierTimedTarget) {
  const Config cfg = Config::load("default");
  const Program p = generate(cfg, 1, Size::kSmall);
  Outcome untimed, timed;
  for (const auto& r : p.regions) untimed.regions.push_back(r.init);
  untimed.counters.insns[0] = 3;
  timed = untimed;
  timed.counters.cycles = 1000;
  timed.counters.busyCycles[tessera::hw::Counters::kCompute] = 400;
  const auto targets = parseTargetList("fsim,fsim,fsim:counters=exact");

  EXPECT_FALSE(compare(p, targets, {untimed, timed, timed}).has_value());
  // Compared with the timed second target, not the untimed first.
  Outcome slower = timed;
  slower.counters.cycles = 1006;
  auto m = compare(p, targets, {untimed, timed, slower});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->target, "fsim:counters=exact");
  EXPECT_NE(m->summary.find("report different counters (timing): cycles 1000 against cycles 1006"), std::string::npos)
      << m->summary;
  Outcome busier = timed;
  busier.counters.busyCycles[tessera::hw::Counters::kCompute] = 401;
  m = compare(p, targets, {untimed, timed, busier});
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->summary.find("compute busy 400 against compute busy 401"), std::string::npos) << m->summary;
  // Without the key, counters are not compared.
  EXPECT_FALSE(compare(p, parseTargetList("fsim,fsim,fsim"), {untimed, timed, slower}).has_value());
  // Equal counters, different instruction spans: compared where both targets recorded them.
  Outcome tracedA = timed, tracedB = timed;
  tracedA.traced = tracedB.traced = true;
  tessera::hw::RunSpans run;
  run.cycles = 1000;
  run.insnCount = 1;
  run.spans = {{0, 0, 0, 40}, {0, 1, 3, 20}};
  tracedA.spans = {run};
  run.spans[1].end = 21;
  tracedB.spans = {run};
  m = compare(p, targets, {untimed, tracedA, tracedB});
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->summary.find("different instruction spans: instruction 0 on trace unit 1 cycles [3, 20) against "
                            "instruction 0 on trace unit 1 cycles [3, 21)"),
            std::string::npos)
      << m->summary;
  EXPECT_FALSE(compare(p, targets, {untimed, tracedA, tracedA}).has_value());
  tracedB.traced = false;  // one side without spans (a target that cannot trace): counters only
  EXPECT_FALSE(compare(p, targets, {untimed, tracedA, tracedB}).has_value());
  // No earlier target counted cycles: said, not passed.
  m = compare(p, parseTargetList("fsim,fsim:counters=exact"), {untimed, timed});
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->summary.find("no earlier target counted cycles"), std::string::npos) << m->summary;
}

}  // namespace
