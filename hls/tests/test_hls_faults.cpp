// The hls target against fsim on faults and state: the same errors in the same words, counters, SRAM persistence.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tessera/hls/simulator.h"
#include "tessera/support/error.h"
#include "tessera/hw/fsim.h"
#include "tessera/hw/isa.h"

namespace {

using namespace tessera::hw;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "(no error)";
}

Insn mem(Opcode op, MemId type, uint32_t sram, uint32_t dram, uint32_t y, uint32_t x) {
  Insn in;
  in.opcode = op;
  in.memType = uint32_t(type);
  in.sramBase = sram;
  in.dramBase = dram;
  in.ySize = y;
  in.xSize = x;
  in.xStride = x;
  return in;
}

Insn loops(Opcode op, uint32_t bgn, uint32_t end, uint32_t iterOut, uint32_t iterIn) {
  Insn in;
  in.opcode = op;
  in.uopBgn = bgn;
  in.uopEnd = end;
  in.iterOut = iterOut;
  in.iterIn = iterIn;
  return in;
}

Insn finish() {
  Insn in;
  in.opcode = Opcode::kFinish;
  return in;
}

// One DRAM image per model, filled identically; programs at the same addresses in both.
struct Pair {
  Config cfg;
  Isa isa;
  Dram fd, hd;
  Fsim fsim;
  tessera::hls::Simulator hls;
  uint64_t insnPhys, uopPhys, dataPhys, outPhys;

  explicit Pair(const std::string& name)
      : cfg(Config::load(name)), isa(cfg), fd(cfg), hd(cfg), fsim(cfg, fd), hls(cfg, hd) {
    insnPhys = alloc(1 << 16);
    uopPhys = alloc(1 << 16);
    dataPhys = alloc(1 << 20);
    outPhys = alloc(1 << 16);
    std::vector<uint8_t> data(1 << 20);
    for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 37 + (i >> 8));
    fd.write(dataPhys, data.data(), data.size(), "test data");
    hd.write(dataPhys, data.data(), data.size(), "test data");
    const std::vector<uint8_t> unwritten(kOutBytes, kUnwritten);
    fd.write(outPhys, unwritten.data(), unwritten.size(), "unwritten output");
    hd.write(outPhys, unwritten.data(), unwritten.size(), "unwritten output");
  }
  uint64_t alloc(uint64_t bytes) {
    const uint64_t a = fd.alloc(bytes);
    EXPECT_EQ(a, hd.alloc(bytes));
    return a;
  }
  void uops(const std::vector<Uop>& u) {
    for (size_t i = 0; i < u.size(); ++i) {
      const uint32_t w = isa.encodeUop(u[i]);
      fd.write(uopPhys + 4 * i, &w, 4, "uop");
      hd.write(uopPhys + 4 * i, &w, 4, "uop");
    }
  }
  // Loads the program and runs it on both; returns (fsim error, hls error).
  std::pair<std::string, std::string> run(const std::vector<Insn>& prog, uint64_t waitCycles = 0) {
    for (size_t i = 0; i < prog.size(); ++i) {
      uint8_t bytes[16];
      Isa::rawToBytes(isa.encode(prog[i]), bytes);
      fd.write(insnPhys + 16 * i, bytes, 16, "insn");
      hd.write(insnPhys + 16 * i, bytes, 16, "insn");
    }
    const uint32_t n = uint32_t(prog.size());
    return {errorOf([&] { fsim.run(insnPhys, n, waitCycles); }), errorOf([&] { hls.run(insnPhys, n, waitCycles); })};
  }
  uint32_t uopElems() const { return uint32_t(uopPhys / 4); }
  uint32_t elems(MemId id) const { return uint32_t(dataPhys / cfg.dramElemBytes(id)); }
  // The output area on both, after a program whose STOREs wrote its first `storedBytes`: the same
  // bytes, those written (not all still the fill), nothing past them.
  void expectSameOutput(size_t storedBytes) {
    std::vector<uint8_t> a(kOutBytes), b(kOutBytes);
    fd.read(outPhys, a.data(), a.size(), "out");
    hd.read(outPhys, b.data(), b.size(), "out");
    EXPECT_EQ(a, b);
    ASSERT_LE(storedBytes, a.size());
    size_t stillFill = 0;
    for (size_t i = 0; i < storedBytes; ++i) stillFill += a[i] == kUnwritten;
    EXPECT_LT(stillFill, storedBytes) << "the STOREs wrote nothing to the output area";
    for (size_t i = storedBytes; i < a.size(); ++i)
      if (a[i] != kUnwritten) {
        ADD_FAILURE() << "byte " << i << " of the output area written past the STOREs' " << storedBytes;
        break;
      }
  }
  static constexpr size_t kOutBytes = 1 << 16;
  static constexpr uint8_t kUnwritten = 0xA5;
};

TEST(HlsTarget, GemmIndexOutOfRangeNamesInstructionMicroOpAndField) {
  Pair p("default");
  p.uops({{0, 0, 0}, {p.cfg.accDepth - 2, 0, 0}});
  Insn gemm = loops(Opcode::kGemm, 0, 2, 1, 4);
  gemm.dstFactorIn = 1;
  auto [f, h] = p.run({mem(Opcode::kLoad, MemId::kUop, 0, p.uopElems(), 1, 2), gemm, finish()});
  EXPECT_NE(h.find("instruction 1 (GEMM), micro-op 1 with field dst_factor_out/dst_factor_in"), std::string::npos) << h;
  EXPECT_EQ(f, h);
}

TEST(HlsTarget, AluSourceOutOfRangeIsCheckedEvenWithImmediate) {
  Pair p("small");
  p.uops({{0, p.cfg.accDepth - 1, 0}});
  Insn alu = loops(Opcode::kAlu, 0, 1, 2, 1);
  alu.srcFactorOut = 1;
  alu.aluOp = uint32_t(AluOp::kAdd);
  alu.useImm = true;
  alu.imm = 3;
  auto [f, h] = p.run({mem(Opcode::kLoad, MemId::kUop, 0, p.uopElems(), 1, 1), alu, finish()});
  EXPECT_NE(h.find("src_factor_out"), std::string::npos) << h;
  EXPECT_EQ(f, h);
}

TEST(HlsTarget, DeadlockNoFinishUnbalancedAndBudgetAsFsim) {
  Pair p("default");
  Insn popper = loops(Opcode::kGemm, 0, 0, 0, 0);
  popper.popPrev = true;  // waits for a token load never pushes
  auto r = p.run({popper, finish()});
  EXPECT_NE(r.second.find("deadlock at instruction 0"), std::string::npos) << r.second;
  EXPECT_EQ(r.first, r.second);

  r = p.run({mem(Opcode::kLoad, MemId::kInp, 0, p.elems(MemId::kInp), 1, 1)});
  EXPECT_NE(r.second.find("without a FINISH"), std::string::npos) << r.second;
  EXPECT_EQ(r.first, r.second);

  Insn pusher = mem(Opcode::kLoad, MemId::kInp, 0, p.elems(MemId::kInp), 1, 1);
  pusher.pushNext = true;  // a token nobody pops
  r = p.run({pusher, finish()});
  EXPECT_NE(r.second.find("not balanced at FINISH"), std::string::npos) << r.second;
  EXPECT_EQ(r.first, r.second);

  p.uops({{0, 0, 0}});
  r = p.run({mem(Opcode::kLoad, MemId::kUop, 0, p.uopElems(), 1, 1), loops(Opcode::kGemm, 0, 1, 10, 10), finish()}, 50);
  EXPECT_NE(r.second.find("wait_cycles=50"), std::string::npos) << r.second;
  EXPECT_EQ(r.first, r.second);
}

// A full instruction queue stalls fetch; the deadlock report names it exactly as fsim does.
TEST(HlsTarget, FetchStalledOnAFullInstructionQueue) {
  Pair p("small");
  Insn wait = mem(Opcode::kStore, MemId::kOut, 0, uint32_t(p.outPhys / p.cfg.outElemBytes), 1, 0);
  wait.popPrev = true;  // waits for compute, whose push comes after the queue overflows
  std::vector<Insn> prog{wait};
  for (int i = 0; i < p.cfg.insnQueueDepth + 5; ++i)
    prog.push_back(mem(Opcode::kStore, MemId::kOut, 0, uint32_t(p.outPhys / p.cfg.outElemBytes), 1, 0));
  Insn gemm = loops(Opcode::kGemm, 0, 0, 0, 0);
  gemm.pushNext = true;
  prog.push_back(gemm);
  prog.push_back(finish());
  auto [f, h] = p.run(prog);
  EXPECT_NE(h.find("fetch stalled at instruction"), std::string::npos) << h;
  EXPECT_EQ(f, h);
}

TEST(HlsTarget, SramsPersistAcrossRunsAndCountersMatchFsim) {
  for (const char* name : {"default", "small", "batch2"}) {
    Pair p(name);
    p.uops({{0, 0, 0}, {1, 1, 1}});
    // Run 1 fills the SRAMs; run 2 computes from them without loading anything.
    auto r = p.run({mem(Opcode::kLoad, MemId::kUop, 0, p.uopElems(), 1, 2),
                    mem(Opcode::kLoad, MemId::kAcc8, 0, p.elems(MemId::kAcc8), 1, 2), finish()});
    ASSERT_EQ(r.first, "(no error)");
    ASSERT_EQ(r.second, "(no error)");
    Insn ldInp = mem(Opcode::kLoad, MemId::kInp, 0, p.elems(MemId::kInp), 1, 2);
    ldInp.pushNext = true;
    Insn ldWgt = mem(Opcode::kLoad, MemId::kWgt, 0, p.elems(MemId::kWgt) + 3, 1, 2);
    Insn gemm = loops(Opcode::kGemm, 0, 2, 1, 1);
    gemm.popPrev = true;
    Insn shr = loops(Opcode::kAlu, 0, 2, 1, 1);
    shr.aluOp = uint32_t(AluOp::kShr);
    shr.useImm = true;
    shr.imm = -3;  // a negative amount shifts left
    shr.pushNext = true;
    Insn st = mem(Opcode::kStore, MemId::kOut, 0, uint32_t(p.outPhys / p.cfg.outElemBytes), 1, 2);
    st.popPrev = true;
    r = p.run({ldWgt, ldInp, gemm, shr, st, finish()});
    ASSERT_EQ(r.first, "(no error)") << name;
    ASSERT_EQ(r.second, "(no error)") << name;
    p.expectSameOutput(2 * size_t(p.cfg.outElemBytes));
    const Counters a = p.fsim.counters(), b = p.hls.counters();
    EXPECT_EQ(a.toJson(), b.toJson()) << name;
  }
}

TEST(HlsTarget, RefusesConfigsItWasNotBuiltFor) {
  Config cfg = Config::load("default");
  cfg.logAccBuffSize -= 1;  // input and accumulator depths must stay equal
  cfg.logInpBuffSize -= 1;
  cfg.derive("test");
  const std::string why = tessera::hls::Simulator::unsupportedReason(cfg);
  EXPECT_NE(why.find("not built for config"), std::string::npos) << why;
  EXPECT_EQ(tessera::hls::Simulator::unsupportedReason(Config::load("small")), "");
}

}  // namespace
