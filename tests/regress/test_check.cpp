// The validity checker rejects races, uninitialised reads and broken token protocols; lowering adds the tokens needed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "tessera/regress/check.h"
#include "tessera/regress/generator.h"
#include "tessera/regress/rng.h"
#include "tessera/regress/runner.h"

namespace {

using namespace tessera::regress;
using tessera::hw::Config;
using tessera::hw::Insn;
using tessera::hw::MemId;
using tessera::hw::Opcode;

// Regions of a hand-made program on the default config (16-byte INP/OUT, 256-byte WGT and 64-byte
// ACC elements): element 0 of each sits at the region's base.
constexpr uint64_t kInp = 0x10000, kWgt = 0x20000, kAcc = 0x30000, kUop = 0x40000, kOut = 0x50000, kInsn = 0x60000;

Program skeleton() {
  Program p;
  p.cfg = Config::load("default");
  p.size = "hand-made";
  auto add = [&](const char* name, RegionKind kind, uint64_t base, size_t bytes) {
    Region r;
    r.name = name;
    r.kind = kind;
    r.base = base;
    r.init.assign(bytes, 0x11);
    p.regions.push_back(r);
  };
  add("inp", RegionKind::kInp, kInp, 4096);
  add("wgt", RegionKind::kWgt, kWgt, 4096);
  add("acc", RegionKind::kAcc, kAcc, 4096);
  add("uop", RegionKind::kUop, kUop, 4096);
  add("out", RegionKind::kOut, kOut, 4096);
  add("insn", RegionKind::kInsn, kInsn, 16);
  // Micro-op 0 at uop[0]: dst 0, src 0, wgt 0; micro-op 1: dst 1, src 5, wgt 0.
  tessera::hw::Isa isa(p.cfg);
  const uint32_t u0 = isa.encodeUop({0, 0, 0}), u1 = isa.encodeUop({1, 5, 0});
  for (int k = 0; k < 4; ++k) {
    p.regions[3].init[k] = static_cast<uint8_t>(u0 >> (8 * k));
    p.regions[3].init[4 + k] = static_cast<uint8_t>(u1 >> (8 * k));
  }
  return p;
}

// Installs a stream as the program's instructions, appending a FINISH without flags unless it
// ends with one.
void setStream(Program& p, std::vector<Insn> insns) {
  if (insns.empty() || insns.back().opcode != Opcode::kFinish) {
    Insn finish;
    finish.opcode = Opcode::kFinish;
    insns.push_back(finish);
  }
  tessera::hw::Isa isa(p.cfg);
  p.insns = insns;
  p.insnOp.assign(insns.size(), -1);
  p.regions.back().init.assign(16 * insns.size(), 0);
  for (size_t i = 0; i < insns.size(); ++i)
    tessera::hw::Isa::rawToBytes(isa.encode(insns[i]), &p.regions.back().init[16 * i]);
}

enum : int { kPopPrev = 1, kPopNext = 2, kPushPrev = 4, kPushNext = 8 };

Insn flags(Insn i, int f) {
  i.popPrev = f & kPopPrev;
  i.popNext = f & kPopNext;
  i.pushPrev = f & kPushPrev;
  i.pushNext = f & kPushNext;
  return i;
}

Insn mem(Opcode op, MemId id, uint32_t sram, uint64_t addr, uint32_t rows, uint32_t cols, int f = 0) {
  const Config cfg = Config::load("default");
  Insn i;
  i.opcode = op;
  i.memType = static_cast<uint32_t>(id);
  i.sramBase = sram;
  i.dramBase = static_cast<uint32_t>(addr / cfg.dramElemBytes(id));
  i.ySize = rows;
  i.xSize = cols;
  i.xStride = cols;
  return flags(i, f);
}
Insn load(MemId id, uint32_t sram, uint64_t addr, uint32_t n, int f = 0) { return mem(Opcode::kLoad, id, sram, addr, 1, n, f); }
Insn store(uint32_t sram, uint64_t addr, uint32_t n, int f = 0) { return mem(Opcode::kStore, MemId::kOut, sram, addr, 1, n, f); }

Insn gemm(uint32_t bgn, uint32_t end, uint32_t iterOut, int f = 0) {
  Insn i;
  i.opcode = Opcode::kGemm;
  i.uopBgn = bgn;
  i.uopEnd = end;
  i.iterOut = iterOut;
  i.iterIn = 1;
  i.dstFactorOut = 1;
  return flags(i, f);
}

std::string rejection(const Program& p) {
  try {
    checkProgram(p);
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "";
}

// micro-ops, accumulator 0, input 0 and weight 0 loaded; GEMM on entry 0.
std::vector<Insn> gemmProgram(int loadFlags, int gemmFlags) {
  return {load(MemId::kUop, 0, kUop, 2), load(MemId::kAcc, 0, kAcc, 1), load(MemId::kInp, 0, kInp, 1),
          load(MemId::kWgt, 0, kWgt, 1, loadFlags), gemm(0, 1, 1, gemmFlags)};
}

TEST(Check, AcceptsAProgramWhoseLoadsAreOrderedBeforeTheGemm) {
  Program p = skeleton();
  setStream(p, gemmProgram(kPushNext, kPopPrev));
  EXPECT_EQ(rejection(p), "");
}

TEST(Check, RejectsAGemmRacingTheLoadOfItsInput) {
  Program p = skeleton();
  // The load stage hands its token to FINISH only; the GEMM may read before the load wrote.
  auto s = gemmProgram(kPushNext, 0);
  Insn finishWaits = load(MemId::kUop, 0, 0, 0, kPopPrev);  // a compute NOP popping l2g at the end
  s.push_back(finishWaits);
  setStream(p, s);
  EXPECT_NE(rejection(p).find("no token ordering"), std::string::npos) << rejection(p);
}

TEST(Check, RejectsReadingAnEntryNothingWrote) {
  Program p = skeleton();
  auto s = gemmProgram(kPushNext, kPopPrev);
  s.back() = gemm(1, 2, 1, kPopPrev);  // micro-op 1 reads input entry 5, never loaded
  setStream(p, s);
  EXPECT_NE(rejection(p).find("INP entry 5 before any instruction wrote it"), std::string::npos) << rejection(p);
}

TEST(Check, RejectsAnIndexPastTheDepthAtTheLastIteration) {
  Program p = skeleton();
  auto s = gemmProgram(kPushNext, kPopPrev);
  s.back().iterOut = 2049;  // dst 0 + 2048 * 1 reaches the accumulator depth 2048
  s.back().reset = true;
  setStream(p, s);
  EXPECT_NE(rejection(p).find("index 2048 at iteration (2048, 0) is past the buffer depth 2048"), std::string::npos)
      << rejection(p);
}

TEST(Check, RejectsAnAluImmediateWhoseUnusedSourceLeavesTheBufferAsFsimDoes) {
  Program p = skeleton();
  Insn alu = gemm(0, 1, 2049);
  alu.opcode = Opcode::kAlu;
  alu.aluOp = static_cast<uint32_t>(tessera::hw::AluOp::kAdd);
  alu.useImm = true;
  alu.imm = 1;
  alu.dstFactorOut = 0;
  alu.srcFactorOut = 1;  // src reaches 2048 at the last iteration though the immediate replaces it
  setStream(p, {load(MemId::kUop, 0, kUop, 2), load(MemId::kAcc, 0, kAcc, 1), alu});
  EXPECT_NE(rejection(p).find("micro-op 0 field src: ACC index 2048"), std::string::npos) << rejection(p);
  const Outcome o = execute(p, parseTargetSpec("fsim"));
  EXPECT_TRUE(o.failed);
  EXPECT_NE(o.error.find("accumulator (src) index reaches 2048"), std::string::npos) << o.error;
}

TEST(Check, RejectsOverlappingStoresEvenInOrder) {
  Program p = skeleton();
  setStream(p, {load(MemId::kAcc, 0, kAcc, 2, kPushNext), store(0, kOut, 2, kPopPrev), store(1, kOut + 16, 1, kPushPrev),
                load(MemId::kUop, 0, 0, 0, kPopNext)});
  EXPECT_NE(rejection(p).find("stores must not overlap"), std::string::npos) << rejection(p);
}

TEST(Check, RejectsAStoreIntoAnInputRegion) {
  Program p = skeleton();
  setStream(p, {load(MemId::kAcc, 0, kAcc, 1, kPushNext), store(0, kInp, 1, kPopPrev | kPushPrev),
                load(MemId::kUop, 0, 0, 0, kPopNext)});
  EXPECT_NE(rejection(p).find("only OUT regions may be written"), std::string::npos) << rejection(p);
}

TEST(Check, DramRoundTripNeedsATokenFromStoreToLoad) {
  // STORE writes out[0..16); LOAD.ACC_8BIT (compute stage) reads them back.
  const Insn acc = load(MemId::kAcc, 0, kAcc, 1, kPushNext);
  Program ordered = skeleton();
  setStream(ordered, {acc, store(0, kOut, 1, kPopPrev | kPushPrev), load(MemId::kAcc8, 1, kOut, 1, kPopNext)});
  EXPECT_EQ(rejection(ordered), "");
  Program racing = skeleton();
  // The same, but the compute stage pops the store's token only after reading.
  setStream(racing, {acc, store(0, kOut, 1, kPopPrev | kPushPrev), load(MemId::kAcc8, 1, kOut, 1),
                     load(MemId::kUop, 0, 0, 0, kPopNext)});
  EXPECT_NE(rejection(racing).find("reads DRAM bytes that instruction 1 (STORE.OUT) writes"), std::string::npos)
      << rejection(racing);
  // And fsim agrees with the ordered version's meaning: the accumulator entry read back is the
  // sign-extended stored byte 0x11 everywhere.
  Outcome o = execute(ordered, parseTargetSpec("fsim"));
  EXPECT_FALSE(o.failed) << o.error;
}

TEST(Check, RejectsUnbalancedTokensDeadlocksAndAnEarlyFinish) {
  Program leftover = skeleton();
  setStream(leftover, {load(MemId::kAcc, 0, kAcc, 1, kPushNext | kPushPrev)});
  EXPECT_NE(rejection(leftover).find("token(s) left"), std::string::npos) << rejection(leftover);
  Program deadlock = skeleton();
  setStream(deadlock, {load(MemId::kAcc, 0, kAcc, 1, kPopNext)});
  EXPECT_NE(rejection(deadlock).find("deadlock"), std::string::npos) << rejection(deadlock);
  Program early = skeleton();
  setStream(early, {load(MemId::kAcc, 0, kAcc, 1, kPushNext), store(0, kOut, 1, kPopPrev)});
  EXPECT_NE(rejection(early).find("does not wait for every store instruction"), std::string::npos) << rejection(early);
}

TEST(Check, ClearingAnyOneDependencyFlagOfAGeneratedProgramIsRejected) {
  // Lowered programs pop exactly what they push, so one flag less leaves a queue unbalanced.
  int mutated = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Program p = generate(Config::load(seed % 2 ? "default" : "small"), seed, Size::kSmall);
    Rng rng(seed);
    std::vector<size_t> carriers;
    for (size_t i = 0; i < p.insns.size(); ++i)
      if (p.insns[i].popPrev || p.insns[i].popNext || p.insns[i].pushPrev || p.insns[i].pushNext) carriers.push_back(i);
    if (carriers.empty()) continue;
    const size_t i = carriers[rng.range(0, carriers.size() - 1)];
    std::vector<Insn> s = p.insns;
    Insn& in = s[i];
    if (in.popPrev) in.popPrev = false;
    else if (in.popNext) in.popNext = false;
    else if (in.pushPrev) in.pushPrev = false;
    else in.pushNext = false;
    setStream(p, s);
    EXPECT_NE(rejection(p), "") << "seed " << seed << " instruction " << i;
    ++mutated;
  }
  EXPECT_GT(mutated, 40);
}

// ---- lowering ----

Program fromOps(std::vector<Insn> ops) {
  Program p = skeleton();
  for (size_t i = 0; i < ops.size(); ++i) p.ops.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(i), ops[i]});
  lower(p);
  return p;
}

TEST(Lower, OrdersOnlyWhatConflicts) {
  // The INP/WGT loads feed the GEMM (tokens); the load of input entry 9 feeds nothing but FINISH.
  Program p = fromOps({load(MemId::kInp, 9, kInp, 1), load(MemId::kUop, 0, kUop, 2), load(MemId::kAcc, 0, kAcc, 1),
                       load(MemId::kInp, 0, kInp, 1), load(MemId::kWgt, 0, kWgt, 1), gemm(0, 1, 1),
                       store(0, kOut, 1)});
  ASSERT_EQ(rejection(p), "");
  ASSERT_EQ(p.insns.size(), 8u);
  EXPECT_FALSE(p.insns[0].pushNext);                       // LOAD.INP 9: nothing waits for it...
  EXPECT_TRUE(p.insns[4].pushNext);                        // ...but the GEMM waits for the WGT load,
  EXPECT_TRUE(p.insns[5].popPrev && p.insns[5].pushNext);  // and the store for the GEMM,
  EXPECT_TRUE(p.insns[6].popPrev && p.insns[6].pushPrev);
  EXPECT_TRUE(p.insns[7].popNext && !p.insns[7].popPrev);  // and FINISH for the store (the loads are
                                                           // behind the GEMM's token already).
}

TEST(Lower, StoreToLoadGoesThroughAComputeBridge) {
  // STORE out[0], then LOAD.INP of the same bytes: no queue links store and load directly.
  Program p = fromOps({load(MemId::kAcc, 0, kAcc, 1), store(0, kOut, 1), load(MemId::kInp, 3, kOut, 1)});
  ASSERT_EQ(rejection(p), "");
  bool bridge = false;
  for (size_t i = 0; i + 1 < p.insns.size(); ++i)
    if (p.insnOp[i] < 0 && p.insns[i].isNop() && p.insns[i].stage() == tessera::hw::Stage::kCompute &&
        p.insns[i].popNext && p.insns[i].pushPrev && p.insns[i + 1].opcode == Opcode::kLoad && p.insns[i + 1].popNext)
      bridge = true;
  EXPECT_TRUE(bridge) << listing(p);
  const HappensBefore hb(p);
  size_t st = 0, ld = 0;
  for (size_t i = 0; i < p.insns.size(); ++i) {
    if (p.insnOp[i] == 1) st = i;
    if (p.insnOp[i] == 2) ld = i;
  }
  EXPECT_TRUE(hb.before(st, ld));
}

TEST(Lower, ExtraTokensAreSeveralPopsBeforeOneInstruction) {
  // Every new push brings 1-3 more from earlier load-stage instructions; the GEMM pops them all,
  // through load-to-compute NOPs just before it.
  Program p = skeleton();
  const std::vector<Insn> ops = {load(MemId::kInp, 7, kInp, 1), load(MemId::kInp, 8, kInp, 1), load(MemId::kWgt, 9, kWgt, 1),
                                 load(MemId::kUop, 0, kUop, 2), load(MemId::kAcc, 0, kAcc, 1), load(MemId::kInp, 0, kInp, 1),
                                 load(MemId::kWgt, 0, kWgt, 1), gemm(0, 1, 1)};
  for (size_t i = 0; i < ops.size(); ++i) p.ops.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(i), ops[i]});
  p.extraTokenPercent = 100;
  lower(p);
  ASSERT_EQ(rejection(p), "");
  int pushes = 0, carriers = 0;
  for (size_t i = 0; i < p.insns.size(); ++i) {
    pushes += p.insns[i].pushNext && p.insns[i].stage() == tessera::hw::Stage::kLoad;
    carriers += p.insnOp[i] < 0 && p.insns[i].isNop() && p.insns[i].popPrev;
  }
  EXPECT_GE(pushes, 2) << listing(p);
  EXPECT_EQ(carriers, pushes - 1) << listing(p);
}

TEST(Lower, ExtraOrderEdgesBecomeTokens) {
  Program plain = fromOps({load(MemId::kInp, 0, kInp, 1), load(MemId::kAcc, 0, kAcc, 1)});
  Program edged = skeleton();
  edged.ops = {{0, 0, load(MemId::kInp, 0, kInp, 1)}, {1, 1, load(MemId::kAcc, 0, kAcc, 1)}};
  edged.edges = {{0, 1}};
  lower(edged);
  ASSERT_EQ(rejection(edged), "");
  EXPECT_FALSE(plain.insns[1].popPrev);
  EXPECT_TRUE(edged.insns[1].popPrev);
  edged.edges = {{1, 0}};
  EXPECT_THROW(lower(edged), tessera::Error);
}

}  // namespace
