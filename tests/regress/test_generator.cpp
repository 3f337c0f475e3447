// Generator properties: determinism per seed, validity on every shipped config, coverage of the ISA.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "tessera/regress/check.h"
#include "tessera/regress/generator.h"
#include "tessera/regress/runner.h"

namespace {

using namespace tessera::regress;
using tessera::hw::Config;
using tessera::hw::Insn;
using tessera::hw::MemId;
using tessera::hw::Opcode;

bool sameProgram(const Program& a, const Program& b) {
  if (a.regions.size() != b.regions.size() || a.insns.size() != b.insns.size()) return false;
  for (size_t i = 0; i < a.regions.size(); ++i)
    if (a.regions[i].base != b.regions[i].base || a.regions[i].init != b.regions[i].init ||
        a.regions[i].kind != b.regions[i].kind)
      return false;
  for (size_t i = 0; i < a.insns.size(); ++i)
    if (a.insns[i] != b.insns[i]) return false;
  return true;
}

class PerConfig : public ::testing::TestWithParam<std::string> {
 protected:
  Config cfg_ = Config::load(GetParam());
};

TEST_P(PerConfig, SameSeedSameProgramOtherSeedOtherProgram) {
  for (Size size : {Size::kSmall, Size::kMedium, Size::kLarge})
    for (uint64_t seed : {1ull, 2ull, 77ull, 0xdeadbeefcafeull}) {
      const Program a = generate(cfg_, seed, size), b = generate(cfg_, seed, size);
      EXPECT_TRUE(sameProgram(a, b)) << "seed " << seed << " size " << sizeName(size);
      EXPECT_FALSE(sameProgram(a, generate(cfg_, seed + 1, size))) << "seed " << seed << " size " << sizeName(size);
    }
}

// Every program: each instruction of the encoded stream in DRAM decodes to what the program says
// and passes the ISA validator, the static check holds, and fsim runs it without error.
void expectValid(const Config& cfg, uint64_t seed, Size size) {
  const Program p = generate(cfg, seed, size);
  const std::string what = std::string("config ") + cfg.name + " seed " + std::to_string(seed) + " size " + sizeName(size);
  tessera::hw::Isa isa(cfg);
  ASSERT_EQ(p.insnRegion().init.size(), 16 * p.insns.size()) << what;
  for (size_t i = 0; i < p.insns.size(); ++i) {
    const Insn in = isa.decode(tessera::hw::Isa::rawFromBytes(&p.insnRegion().init[16 * i]));
    ASSERT_EQ(in, p.insns[i]) << what << " instruction " << i;
    ASSERT_NO_THROW(isa.validate(in, i)) << what << " instruction " << i;
  }
  ASSERT_NO_THROW(checkProgram(p)) << what;
  const Outcome o = execute(p, parseTargetSpec("fsim"));
  ASSERT_FALSE(o.failed) << what << ": " << o.error;
}

TEST_P(PerConfig, ThousandsOfProgramsAreValidAndRunOnFsim) {
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    expectValid(cfg_, seed, Size::kSmall);
    if (HasFatalFailure()) return;
  }
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    expectValid(cfg_, 100000 + seed, Size::kMedium);
    if (HasFatalFailure()) return;
  }
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    expectValid(cfg_, 200000 + seed, Size::kLarge);
    if (HasFatalFailure()) return;
  }
}

TEST_P(PerConfig, SmallProgramsStaySmall) {
  // A few thousand to a few tens of thousands of cycles: what a cycle-accurate RTL simulation
  // runs in a fraction of a second.
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Program p = generate(cfg_, seed, Size::kSmall);
    const uint64_t cycles = estimateCycles(cfg_, p.insns);
    EXPECT_GT(cycles, 500u) << "seed " << seed;
    EXPECT_LT(cycles, 30000u) << "seed " << seed;
  }
}

// What the generated programs exercise, counted over many seeds.
struct Coverage {
  std::map<std::string, int> seen;
  void add(const std::string& what) { ++seen[what]; }
};

Coverage measure(const Config& cfg, uint64_t seeds) {
  Coverage c;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    const Program p = generate(cfg, seed, seed % 5 == 0 ? Size::kMedium : Size::kSmall);
    const HappensBefore hb(p);
    std::map<uint32_t, int> stageOps;  // op block -> presence
    for (const auto& r : p.regions)
      if (r.base >= (uint64_t(1) << 31)) c.add("region above 2 GiB");
    size_t firstOutLoad = 0;
    for (size_t i = 0; i < p.insns.size(); ++i) {
      const Insn& in = p.insns[i];
      const std::string mem = in.isMem() ? tessera::hw::memIdName(in.memType) : "";
      c.add(std::string("opcode ") + tessera::hw::opcodeName(in.opcode));
      if (in.popPrev) c.add("flag pop_prev");
      if (in.popNext) c.add("flag pop_next");
      if (in.pushPrev) c.add("flag push_prev");
      if (in.pushNext) c.add("flag push_next");
      if (in.isNop()) {
        c.add(std::string("nop ") + tessera::hw::stageName(in.stage()));
        if (p.insnOp[i] < 0 && (in.popPrev || in.popNext || in.pushPrev || in.pushNext))
          c.add(std::string("token carrier ") + tessera::hw::stageName(in.stage()));
        continue;
      }
      if (in.opcode == Opcode::kLoad) {
        c.add("load " + mem);
        if (in.yPad0) c.add("load " + mem + " y_pad_0");
        if (in.yPad1) c.add("load " + mem + " y_pad_1");
        if (in.xPad0) c.add("load " + mem + " x_pad_0");
        if (in.xPad1) c.add("load " + mem + " x_pad_1");
        if (in.ySize > 1 && in.xStride > in.xSize) c.add("load " + mem + " strided");
        if (in.ySize > 1 && in.xStride < in.xSize) c.add("load overlapping rows");
        if (in.ySize == 0) c.add("load of padding rows only");
        if (in.sramBase + tessera::hw::loadFootprint(in) == p.cfg.sramDepth(static_cast<MemId>(in.memType)))
          c.add("load " + mem + " to the last entry");
        const uint64_t addr = uint64_t(in.dramBase) * p.cfg.dramElemBytes(static_cast<MemId>(in.memType));
        for (const auto& r : p.regions)
          if (r.kind == RegionKind::kOut && addr >= r.base && addr < r.end()) {
            c.add("load " + mem + " from stored data");
            firstOutLoad = i;
          }
      } else if (in.opcode == Opcode::kStore) {
        c.add("store");
        if (in.ySize > 1 && in.xStride > in.xSize) c.add("store strided");
        if (in.ySize == 0) c.add("store of no rows");
      } else if (in.opcode == Opcode::kGemm || in.opcode == Opcode::kAlu) {
        const std::string op = in.opcode == Opcode::kGemm ? std::string(in.reset ? "gemm reset" : "gemm")
                                                          : std::string("alu ") + tessera::hw::aluOpName(in.aluOp);
        c.add(op);
        if (in.opcode == Opcode::kAlu) {
          c.add(op + (in.useImm ? " imm" : " vector"));
          if (in.useImm && in.imm < 0) c.add(op + " negative imm");
          if (in.useImm && (in.imm >= 32 || in.imm <= -32)) c.add(op + " imm beyond 31");
        }
        if (in.iterOut == 0 || in.iterIn == 0 || in.uopBgn == in.uopEnd) c.add("empty loop");
        if (in.iterOut > 1) c.add("iter_out > 1");
        if (in.iterIn > 1) c.add("iter_in > 1");
        if (in.iterOut > 1 && in.dstFactorOut) c.add("dst_factor_out");
        if (in.iterIn > 1 && in.dstFactorIn) c.add("dst_factor_in");
        if (in.iterOut > 1 && in.srcFactorOut) c.add("src_factor_out");
        if (in.iterIn > 1 && in.srcFactorIn) c.add("src_factor_in");
        if (in.opcode == Opcode::kGemm && !in.reset && in.iterOut > 1 && in.wgtFactorOut) c.add("wgt_factor_out");
        if (in.opcode == Opcode::kGemm && !in.reset && in.iterIn > 1 && in.wgtFactorIn) c.add("wgt_factor_in");
        if (in.uopBgn > 0) c.add("uop_bgn > 0");
        if (in.uopEnd == p.cfg.uopDepth) c.add("uop_end at the buffer depth");
        if (in.uopEnd > in.uopBgn + 1) c.add("kernel of several micro-ops");
        // A requantization-like chain: the same loops again with another immediate op.
        const Insn* prev = i > 0 ? &p.insns[i - 1] : nullptr;
        if (in.opcode == Opcode::kAlu && in.useImm && prev && prev->opcode == Opcode::kAlu && prev->useImm &&
            prev->aluOp != in.aluOp && prev->uopBgn == in.uopBgn && prev->uopEnd == in.uopEnd &&
            prev->iterOut == in.iterOut && prev->iterIn == in.iterIn && prev->dstFactorOut == in.dstFactorOut &&
            prev->dstFactorIn == in.dstFactorIn && prev->srcFactorOut == in.srcFactorOut &&
            prev->srcFactorIn == in.srcFactorIn)
          c.add("immediate ALU ops of one loop nest in a row");
      }
    }
    (void)firstOutLoad;
    // Stages that genuinely overlap: an INP/WGT load not ordered with an earlier GEMM/ALU, and a
    // STORE not ordered with a later GEMM/ALU (double buffering, pipelining).
    for (size_t a = 0; a < p.insns.size(); ++a) {
      const Insn& x = p.insns[a];
      if (x.opcode != Opcode::kGemm && x.opcode != Opcode::kAlu) continue;
      for (size_t b = 0; b < p.insns.size(); ++b) {
        const Insn& y = p.insns[b];
        if (y.isNop() || !y.isMem() || hb.ordered(a, b)) continue;
        if (y.stage() == tessera::hw::Stage::kLoad && b > a) c.add("load overlaps earlier compute");
        if (y.opcode == Opcode::kStore && b < a) c.add("store overlaps later compute");
      }
    }
  }
  return c;
}

TEST_P(PerConfig, CoversEveryOpcodeMemoryTypeAluOpPaddingAndOverlap) {
  const Coverage c = measure(cfg_, 300);
  std::vector<std::string> want = {
      "opcode LOAD", "opcode STORE", "opcode GEMM", "opcode ALU", "opcode FINISH",
      "flag pop_prev", "flag pop_next", "flag push_prev", "flag push_next",
      "nop load", "nop compute", "nop store", "token carrier load", "token carrier compute", "token carrier store",
      "gemm", "gemm reset", "empty loop", "iter_out > 1", "iter_in > 1",
      "dst_factor_out", "dst_factor_in", "src_factor_out", "src_factor_in", "wgt_factor_out", "wgt_factor_in",
      "uop_bgn > 0", "uop_end at the buffer depth", "kernel of several micro-ops",
      "store", "store strided", "store of no rows",
      "load overlapping rows", "load of padding rows only",
      "load overlaps earlier compute", "store overlaps later compute", "region above 2 GiB",
      "immediate ALU ops of one loop nest in a row"};
  for (const char* m : {"UOP", "WGT", "INP", "ACC", "ACC8"}) {
    want.push_back(std::string("load ") + m);
    want.push_back(std::string("load ") + m + " to the last entry");
  }
  for (const char* m : {"WGT", "INP", "ACC", "ACC8"}) {
    for (const char* pad : {" y_pad_0", " y_pad_1", " x_pad_0", " x_pad_1", " strided"})
      want.push_back(std::string("load ") + m + pad);
  }
  for (const char* m : {"INP", "ACC8"}) want.push_back(std::string("load ") + m + " from stored data");
  for (const char* op : {"MIN", "MAX", "ADD", "SHR", "MUL"}) {
    const std::string a = std::string("alu ") + op;
    want.insert(want.end(), {a + " imm", a + " vector", a + " negative imm"});
  }
  want.push_back("alu SHR imm beyond 31");
  for (const auto& w : want) EXPECT_GT(c.seen.count(w) ? c.seen.at(w) : 0, 0) << "never generated: " << w;
}

INSTANTIATE_TEST_SUITE_P(Shipped, PerConfig, ::testing::ValuesIn(tessera::hw::shippedConfigNames()),
                         [](const auto& info) { return info.param; });

TEST(Generator, ValidOnAnUnshippedConfigWithTinyQueues) {
  // Two-entry instruction and token queues (lowering must pop before a push would find a queue
  // full) and a 2x32x32 core with 4 KiB weight elements.
  const Config cfg = Config::fromJson(R"({"NAME": "tinyq", "LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5,
      "LOG_BATCH": 1, "LOG_BLOCK_IN": 5, "LOG_BLOCK_OUT": 5, "LOG_UOP_BUFF_SIZE": 10, "LOG_INP_BUFF_SIZE": 13,
      "LOG_WGT_BUFF_SIZE": 16, "LOG_ACC_BUFF_SIZE": 15, "LOG_BUS_WIDTH": 6, "INSN_QUEUE_DEPTH": 2,
      "DEP_QUEUE_DEPTH": 2})",
                                      "tinyq.json");
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    expectValid(cfg, seed, seed % 10 ? Size::kSmall : Size::kMedium);
    if (HasFatalFailure()) return;
  }
}

TEST(Size, ParsesTheThreeNamesAndRejectsOthers) {
  EXPECT_EQ(parseSize("small"), Size::kSmall);
  EXPECT_EQ(parseSize("medium"), Size::kMedium);
  EXPECT_EQ(parseSize("large"), Size::kLarge);
  EXPECT_THROW(parseSize("huge"), tessera::Error);
  const Config cfg = Config::load("default");
  uint64_t small = 0, large = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    small += estimateCycles(cfg, generate(cfg, seed, Size::kSmall).insns);
    large += estimateCycles(cfg, generate(cfg, seed, Size::kLarge).insns);
  }
  EXPECT_GT(large, 5 * small);
}

}  // namespace
