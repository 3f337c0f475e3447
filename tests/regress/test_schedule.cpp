// Validity means schedule independence: programs give the same DRAM under random legal stage interleavings.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/fsim.h"
#include "tessera/hw/isa.h"
#include "tessera/regress/check.h"
#include "tessera/regress/generator.h"
#include "tessera/regress/rng.h"
#include "tessera/regress/runner.h"

namespace {

using namespace tessera::regress;
using tessera::hw::Config;
using tessera::hw::Insn;
using tessera::hw::Opcode;

// Executes a stream in a random order the token protocol allows: at each step one stage whose
// next instruction has its tokens is picked at random, and that instruction runs alone on fsim
// (SRAM contents persist between fsim runs, as on the device). Queue capacities are not modelled,
// which only allows more orders. Test code only: the adversary of the validity checker.
class RandomOrderTarget : public tessera::runtime::Target {
 public:
  RandomOrderTarget(const Config& cfg, tessera::hw::Dram& dram, uint64_t seed)
      : cfg_(cfg), isa_(cfg), dram_(dram), sim_(cfg, dram), rng_(seed) {}
  std::string name() const override { return "random-order"; }
  tessera::hw::Counters counters() const override { return sim_.counters(); }
  void resetCounters() override { sim_.resetCounters(); }

  void run(uint64_t insnPhys, uint32_t count, uint32_t) override {
    std::deque<Insn> stage[3];
    for (uint32_t i = 0; i < count; ++i) {
      Insn in = isa_.decode(tessera::hw::Isa::rawFromBytes(dram_.at(insnPhys + 16ull * i, 16, "fetch")));
      stage[static_cast<int>(in.stage())].push_back(in);
    }
    int tokens[4] = {0, 0, 0, 0};  // l2g, g2l, g2s, s2g
    auto ready = [&](int s) {
      if (stage[s].empty()) return false;
      const Insn& in = stage[s].front();
      if (in.opcode == Opcode::kFinish) return stage[0].empty() && stage[2].empty() && !(in.popPrev && !tokens[0]) &&
                                               !(in.popNext && !tokens[3]);
      if (s == 0) return !(in.popNext && !tokens[1]);
      if (s == 1) return !(in.popPrev && !tokens[0]) && !(in.popNext && !tokens[3]);
      return !(in.popPrev && !tokens[2]);
    };
    for (;;) {
      std::vector<int> can;
      for (int s = 0; s < 3; ++s)
        if (ready(s)) can.push_back(s);
      if (can.empty()) {
        if (stage[0].empty() && stage[1].empty() && stage[2].empty()) return;
        throw tessera::Error("random-order run", "no stage can issue");
      }
      const int s = can[rng_.range(0, can.size() - 1)];
      const Insn in = stage[s].front();
      stage[s].pop_front();
      const int popPrev = s == 1 ? 0 : 2, popNext = s == 0 ? 1 : 3, pushPrev = s == 1 ? 1 : 3, pushNext = s == 0 ? 0 : 2;
      if (in.popPrev) --tokens[popPrev];
      if (in.popNext) --tokens[popNext];
      if (in.opcode == Opcode::kFinish) return;
      execute(in);
      if (in.pushPrev) ++tokens[pushPrev];
      if (in.pushNext) ++tokens[pushNext];
    }
  }

 private:
  // One instruction, without its flags, then FINISH, at 4 GiB: above every program's regions.
  void execute(Insn in) {
    in.popPrev = in.popNext = in.pushPrev = in.pushNext = false;
    Insn finish;
    finish.opcode = Opcode::kFinish;
    const uint64_t at = uint64_t(1) << 32;
    tessera::hw::Isa::rawToBytes(isa_.encode(in), dram_.at(at, 16, "scratch"));
    tessera::hw::Isa::rawToBytes(isa_.encode(finish), dram_.at(at + 16, 16, "scratch"));
    sim_.run(at, 2);
  }

  Config cfg_;
  tessera::hw::Isa isa_;
  tessera::hw::Dram& dram_;
  tessera::hw::Fsim sim_;
  Rng rng_;
};

// A fresh random order for every program (and every run of it).
TargetSpec randomOrder() {
  auto runs = std::make_shared<uint64_t>(0);
  return {"random-order", [runs](const Config& cfg, tessera::hw::Dram& dram) {
            return std::unique_ptr<tessera::runtime::Target>(new RandomOrderTarget(cfg, dram, ++*runs));
          }};
}

TEST(Schedule, ValidProgramsGiveTheSameResultInRandomStageOrders) {
  for (const char* c : {"default", "small", "batch2"}) {
    const Config cfg = Config::load(c);
    const std::vector<TargetSpec> targets = {parseTargetSpec("fsim"), randomOrder()};
    for (uint64_t seed = 1; seed <= 150; ++seed) {
      const Program p = generate(cfg, 9000000 + seed, seed % 4 ? Size::kSmall : Size::kMedium);
      const Trial t = runTrial(p, targets);
      ASSERT_FALSE(t.mismatch.has_value()) << c << " seed " << 9000000 + seed << ": " << t.mismatch->summary << "\n"
                                           << t.mismatch->detail << listing(p);
    }
  }
}

// The same property, the other way round: a program the checker rejects as racy really does
// depend on the order. A GEMM whose input load it does not wait for, stored through tokens.
TEST(Schedule, ARaceTheCheckerRejectsChangesTheResultUnderSomeOrder) {
  Program p;
  p.cfg = Config::load("default");
  const uint64_t inp = 0x10000, wgt = 0x20000, uop = 0x40000, out = 0x50000;
  auto region = [&](const char* name, RegionKind kind, uint64_t base, size_t bytes, uint8_t fill) {
    Region r;
    r.name = name;
    r.kind = kind;
    r.base = base;
    r.init.assign(bytes, fill);
    p.regions.push_back(r);
  };
  region("inp", RegionKind::kInp, inp, 4096, 3);
  region("wgt", RegionKind::kWgt, wgt, 4096, 5);
  region("uop", RegionKind::kUop, uop, 4096, 0);  // micro-op 0: dst 0, src 0, wgt 0
  region("out", RegionKind::kOut, out, 4096, 0);
  region("insn", RegionKind::kInsn, 0x60000, 16, 0);
  auto mem = [&](Opcode op, tessera::hw::MemId id, uint64_t addr) {
    Insn i;
    i.opcode = op;
    i.memType = static_cast<uint32_t>(id);
    i.dramBase = static_cast<uint32_t>(addr / p.cfg.dramElemBytes(id));
    i.ySize = i.xSize = i.xStride = 1;
    return i;
  };
  Insn loadUop = mem(Opcode::kLoad, tessera::hw::MemId::kUop, uop);
  Insn loadWgt = mem(Opcode::kLoad, tessera::hw::MemId::kWgt, wgt);
  Insn reset;
  reset.opcode = Opcode::kGemm;
  reset.reset = true;
  reset.uopEnd = reset.iterOut = reset.iterIn = 1;
  Insn loadInp = mem(Opcode::kLoad, tessera::hw::MemId::kInp, inp);
  loadInp.pushNext = true;  // the token FINISH waits for, popped too late to order the GEMM
  Insn gemm = reset;
  gemm.reset = false;
  gemm.pushNext = true;
  Insn store = mem(Opcode::kStore, tessera::hw::MemId::kOut, out);
  store.popPrev = store.pushPrev = true;
  Insn finish;
  finish.opcode = Opcode::kFinish;
  finish.popPrev = finish.popNext = true;
  // Input entry 0 is loaded twice in the load stage, with 5s (from the weight region) and then
  // with 3s; the GEMM may run before, between or after the two.
  Insn firstInp = mem(Opcode::kLoad, tessera::hw::MemId::kInp, wgt);
  p.insns = {firstInp, loadWgt, loadUop, reset, loadInp, gemm, store, finish};
  tessera::hw::Isa isa(p.cfg);
  p.insnOp.assign(p.insns.size(), -1);
  p.regions.back().init.assign(16 * p.insns.size(), 0);
  for (size_t i = 0; i < p.insns.size(); ++i)
    tessera::hw::Isa::rawToBytes(isa.encode(p.insns[i]), &p.regions.back().init[16 * i]);
  EXPECT_THROW(checkProgram(p), tessera::Error);

  const std::vector<TargetSpec> targets = {parseTargetSpec("fsim"), randomOrder()};
  int differing = 0;
  for (int k = 0; k < 40; ++k) differing += runTrial(p, targets).mismatch.has_value();
  EXPECT_GT(differing, 0) << "the GEMM never ran before the input load it races";
  EXPECT_LT(differing, 40) << "the GEMM never ran after the input load it races";
}

}  // namespace
