// Unit tests of tessera::hw::Fsim: LOAD/STORE/GEMM/ALU semantics, dependency tokens, faults, counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tessera/hw/asm.h"
#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/hw/fsim.h"
#include "tessera/hw/isa.h"

namespace {

using namespace tessera::hw;
using tessera::Error;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// Dependency flags for dep().
enum : int { kPopPrev = 1, kPopNext = 2, kPushPrev = 4, kPushNext = 8 };

Insn dep(Insn i, int flags) {
  i.popPrev = flags & kPopPrev;
  i.popNext = flags & kPopNext;
  i.pushPrev = flags & kPushPrev;
  i.pushNext = flags & kPushNext;
  return i;
}

Insn load(MemId id, uint32_t sram, uint32_t dramBase, uint32_t y, uint32_t x, uint32_t stride) {
  Insn i;
  i.opcode = Opcode::kLoad;
  i.memType = static_cast<uint32_t>(id);
  i.sramBase = sram;
  i.dramBase = dramBase;
  i.ySize = y;
  i.xSize = x;
  i.xStride = stride;
  return i;
}

Insn store(uint32_t sram, uint32_t dramBase, uint32_t y, uint32_t x, uint32_t stride) {
  Insn i = load(MemId::kOut, sram, dramBase, y, x, stride);
  i.opcode = Opcode::kStore;
  return i;
}

struct Loops {
  uint32_t bgn = 0, end = 1, iterOut = 1, iterIn = 1;
  uint32_t dstOut = 0, dstIn = 0, srcOut = 0, srcIn = 0, wgtOut = 0, wgtIn = 0;
};

Insn gemm(bool reset, const Loops& l) {
  Insn i;
  i.opcode = Opcode::kGemm;
  i.reset = reset;
  i.uopBgn = l.bgn;
  i.uopEnd = l.end;
  i.iterOut = l.iterOut;
  i.iterIn = l.iterIn;
  i.dstFactorOut = l.dstOut;
  i.dstFactorIn = l.dstIn;
  i.srcFactorOut = l.srcOut;
  i.srcFactorIn = l.srcIn;
  i.wgtFactorOut = l.wgtOut;
  i.wgtFactorIn = l.wgtIn;
  return i;
}

Insn alu(AluOp op, const Loops& l, bool useImm = false, int32_t imm = 0) {
  Insn i = gemm(false, l);
  i.opcode = Opcode::kAlu;
  i.wgtFactorOut = i.wgtFactorIn = 0;
  i.aluOp = static_cast<uint32_t>(op);
  i.useImm = useImm;
  i.imm = imm;
  return i;
}

Insn finish(int flags = 0) {
  Insn i;
  i.opcode = Opcode::kFinish;
  return dep(i, flags);
}

// One configuration with its DRAM and simulator, plus helpers to place data and run programs.
struct Machine {
  explicit Machine(const std::string& name) : Machine(Config::load(name)) {}
  explicit Machine(const Config& c, const std::string& kernels = "auto")
      : cfg(c), isa(cfg), dram(cfg), sim(cfg, dram, kernels) {}

  Config cfg;
  Isa isa;
  Dram dram;
  Fsim sim;

  // Copies `v` into a fresh allocation and returns its physical address (page aligned, so a whole
  // number of elements of any memory type).
  template <typename T>
  uint64_t put(const std::vector<T>& v) {
    uint64_t a = dram.alloc(v.size() * sizeof(T));
    EXPECT_NE(a, 0u);
    dram.write(a, v.data(), v.size() * sizeof(T), "test data");
    return a;
  }
  template <typename T>
  std::vector<T> get(uint64_t phys, size_t n) const {
    std::vector<T> v(n);
    dram.read(phys, v.data(), n * sizeof(T), "test read");
    return v;
  }
  // dram_base (an element index) of a physical address for memory type `id`.
  uint32_t base(uint64_t phys, MemId id) const { return static_cast<uint32_t>(phys / cfg.dramElemBytes(id)); }

  // Writes the micro-ops and returns the LOAD.UOP that fills uop SRAM [sram, sram + n).
  Insn loadUops(const std::vector<Uop>& uops, uint32_t sram = 0) {
    std::vector<uint32_t> words;
    for (const auto& u : uops) words.push_back(isa.encodeUop(u));
    uint64_t a = put(words);
    uint32_t n = static_cast<uint32_t>(uops.size());
    return load(MemId::kUop, sram, base(a, MemId::kUop), 1, n, n);
  }

  // Encodes the program into DRAM and runs it.
  void run(const std::vector<Insn>& prog, uint64_t waitCycles = 0) {
    std::vector<RawInsn> raws;
    for (size_t i = 0; i < prog.size(); ++i) raws.push_back(isa.encode(prog[i], "instruction " + std::to_string(i)));
    uint64_t at = put(programBytes(raws));
    sim.run(at, static_cast<uint32_t>(prog.size()), waitCycles);
  }

  std::vector<int32_t> accRow(uint32_t index) const {
    std::vector<int32_t> v;
    for (int l = 0; l < cfg.batch * cfg.blockOut; ++l) v.push_back(sim.acc(index, l));
    return v;
  }
};

// Message of the tessera::Error `m.run(prog)` throws (with a failure if none).
std::string runError(Machine& m, const std::vector<Insn>& prog, uint64_t waitCycles = 0) {
  try {
    m.run(prog, waitCycles);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "run did not throw";
  return "";
}

using V = std::vector<int32_t>;
using B = std::vector<int8_t>;

// ---------------------------------------------------------------------------------------------
// LOAD

TEST(FsimLoad, InpWithPaddingOnEverySideAndStride) {
  Machine m("small");  // input element: 1 x 4 int8 = 4 bytes
  // 26 elements in DRAM; element e, lane k holds 4e + k + 1.
  B bytes;
  for (int i = 0; i < 26 * 4; ++i) bytes.push_back(static_cast<int8_t>(i + 1));
  uint32_t d = m.base(m.put(bytes), MemId::kInp);

  // First fill SRAM 0..25 with non-zero data, so the padding is seen to write zeros.
  Insn fill = load(MemId::kInp, 0, d, 1, 26, 26);
  // Then a 2x2 window starting at element 1 with row stride 5, padded y_pad_0=2, y_pad_1=1,
  // x_pad_0=1, x_pad_1=2: rows are 1+2+2 = 5 wide, 2+2+1 = 5 rows, SRAM 0..24.
  Insn pad = load(MemId::kInp, 0, d + 1, 2, 2, 5);
  pad.yPad0 = 2;
  pad.yPad1 = 1;
  pad.xPad0 = 1;
  pad.xPad1 = 2;
  m.run({fill, dep(pad, kPushNext), finish(kPopPrev)});

  // Row 2 (first data row), columns 1-2 = SRAM 11, 12 <- elements 1, 2;
  // row 3, columns 1-2 = SRAM 16, 17 <- elements 1+5 = 6, 7. SRAM 25 keeps element 25.
  const std::vector<std::pair<uint32_t, int>> data = {{11, 5}, {12, 9}, {16, 25}, {17, 29}, {25, 101}};
  for (uint32_t idx = 0; idx < 26; ++idx) {
    int first = 0;
    for (const auto& e : data)
      if (e.first == idx) first = e.second;
    for (int k = 0; k < 4; ++k) EXPECT_EQ(m.sim.inp(idx, 0, k), first ? first + k : 0) << "SRAM " << idx << " k " << k;
  }
  const Counters& c = m.sim.counters();
  EXPECT_EQ(c.insns[0], 2u);
  EXPECT_EQ(c.insns[3], 1u);
  EXPECT_EQ(c.loadBytes[static_cast<int>(MemId::kInp)], 26u * 4 + 2 * 2 * 4);  // padding is not read
}

TEST(FsimLoad, Wgt2DStrided) {
  Machine m("small");  // weight element: 4 x 4 int8, row-major by output = 16 bytes
  // Element e, byte o*4 + k holds e*16 + o*4 + k - 64.
  B bytes;
  for (int i = 0; i < 5 * 16; ++i) bytes.push_back(static_cast<int8_t>(i - 64));
  uint32_t d = m.base(m.put(bytes), MemId::kWgt);
  // 2 rows of 2 elements, stride 3: SRAM 3,4 <- elements 0,1; SRAM 5,6 <- elements 3,4.
  m.run({dep(load(MemId::kWgt, 3, d, 2, 2, 3), kPushNext), finish(kPopPrev)});
  EXPECT_EQ(m.sim.wgt(3, 0, 0), -64);
  EXPECT_EQ(m.sim.wgt(4, 3, 2), -34);  // 16 + 12 + 2 - 64
  EXPECT_EQ(m.sim.wgt(5, 1, 3), -9);   // 48 + 4 + 3 - 64
  EXPECT_EQ(m.sim.wgt(6, 3, 3), 15);   // 64 + 12 + 3 - 64
  const int elemOf[] = {0, 1, 3, 4};
  for (int s = 0; s < 4; ++s)
    for (int o = 0; o < 4; ++o)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(m.sim.wgt(3 + s, o, k), elemOf[s] * 16 + o * 4 + k - 64);
  EXPECT_EQ(m.sim.wgt(2, 0, 0), 0);
  EXPECT_EQ(m.sim.wgt(7, 0, 0), 0);
  EXPECT_EQ(m.sim.counters().loadBytes[static_cast<int>(MemId::kWgt)], 64u);
}

TEST(FsimLoad, ReloadsOfOneSramEntryAlwaysTakeTheNewData) {
  // fsim keeps each input/weight entry's DRAM bytes to skip re-widening identical reloads; every
  // sequence of different, equal, padded and all-zero reloads must still leave the new data.
  for (const auto& name : shippedConfigNames()) {
    SCOPED_TRACE(name);
    Machine m(name);
    const int bi = m.cfg.blockIn, bo = m.cfg.blockOut, batch = m.cfg.batch;
    const int ie = m.cfg.inpElemBytes, we = m.cfg.wgtElemBytes;
    // Elements X (bytes i+1), Y (bytes -(i+1)), Z (zeros), for inputs and weights.
    B x, y, z;
    for (int i = 0; i < we; ++i) {
      x.push_back(static_cast<int8_t>(i % 100 + 1));
      y.push_back(static_cast<int8_t>(-(i % 100 + 1)));
      z.push_back(0);
    }
    B all = x;
    all.insert(all.end(), y.begin(), y.end());
    all.insert(all.end(), z.begin(), z.end());
    uint64_t at = m.put(all);
    // Element indices of X, Y, Z for each memory type (the three blocks are we bytes apart).
    auto inpIdx = [&](int which) { return m.base(at, MemId::kInp) + uint32_t(which * we / ie); };
    auto wgtIdx = [&](int which) { return m.base(at, MemId::kWgt) + uint32_t(which); };
    auto checkInp = [&](uint32_t sram, int which) {
      for (int b = 0; b < batch; ++b)
        for (int k = 0; k < bi; ++k) {
          int i = b * bi + k;
          int v = which == 0 ? i % 100 + 1 : which == 1 ? -(i % 100 + 1) : 0;
          ASSERT_EQ(m.sim.inp(sram, b, k), v) << "sram " << sram << " b " << b << " k " << k;
        }
    };
    auto checkWgt = [&](uint32_t sram, int which) {
      for (int o = 0; o < bo; ++o)
        for (int k = 0; k < bi; ++k) {
          int i = o * bi + k;
          int v = which == 0 ? i % 100 + 1 : which == 1 ? -(i % 100 + 1) : 0;
          ASSERT_EQ(m.sim.wgt(sram, o, k), v) << "sram " << sram << " o " << o << " k " << k;
        }
    };
    // Sequence: X, X again, Y, X, padding over it, X, Z, X.
    const int seq[] = {0, 0, 1, 0, -1, 0, 2, 0};
    for (int which : seq) {
      Insn li = load(MemId::kInp, 0, which < 0 ? inpIdx(0) : inpIdx(which), 1, 1, 1);
      Insn lw = load(MemId::kWgt, 0, which < 0 ? wgtIdx(0) : wgtIdx(which), 1, 1, 1);
      if (which < 0) {  // entry 0 becomes x_pad_0 padding, X goes to entry 1
        li.xPad0 = 1;
        lw.xPad0 = 1;
      }
      m.run({li, lw, finish()});
      checkInp(0, which < 0 ? 2 : which);
      checkWgt(0, which < 0 ? 2 : which);
      if (which < 0) {
        checkInp(1, 0);
        checkWgt(1, 0);
      }
    }
  }
}

TEST(FsimLoad, AccWithPadding) {
  Machine m("small");  // accumulator element: 4 int32 = 16 bytes
  V vals = {1, -2, INT32_MAX, INT32_MIN,  100000, -100000, 0, 7,  5, 6, 7, 8,
            9, 9, 9, 9,                   -9, -9, -9, -9};
  uint32_t d = m.base(m.put(vals), MemId::kAcc);
  Insn fill = load(MemId::kAcc, 10, d, 1, 5, 5);  // SRAM 10..14 <- elements 0..4
  Insn pad = load(MemId::kAcc, 10, d, 1, 3, 3);   // SRAM 10 = 0, 11..13 <- 0..2, 14 = 0
  pad.xPad0 = 1;
  pad.xPad1 = 1;
  m.run({fill, pad, finish()});
  EXPECT_EQ(m.accRow(10), (V{0, 0, 0, 0}));
  EXPECT_EQ(m.accRow(11), (V{1, -2, INT32_MAX, INT32_MIN}));
  EXPECT_EQ(m.accRow(12), (V{100000, -100000, 0, 7}));
  EXPECT_EQ(m.accRow(13), (V{5, 6, 7, 8}));
  EXPECT_EQ(m.accRow(14), (V{0, 0, 0, 0}));
  EXPECT_EQ(m.sim.counters().loadBytes[static_cast<int>(MemId::kAcc)], 5u * 16 + 3 * 16);
}

TEST(FsimLoad, Acc8SignExtends) {
  Machine m("small");  // ACC8 element: 4 int8
  // Pre-fill with 0x12345678 so a partial write of the low byte would show.
  uint32_t big = m.base(m.put(V(8, 0x12345678)), MemId::kAcc);
  B bytes = {int8_t(0x80), int8_t(0xFF), int8_t(0x7F), int8_t(0x01), int8_t(0x00), int8_t(0xFE), int8_t(0x81),
             int8_t(0x40)};
  uint32_t d = m.base(m.put(bytes), MemId::kAcc8);
  m.run({load(MemId::kAcc, 2, big, 1, 2, 2), load(MemId::kAcc8, 2, d, 2, 1, 1), finish()});
  EXPECT_EQ(m.accRow(2), (V{-128, -1, 127, 1}));
  EXPECT_EQ(m.accRow(3), (V{0, -2, -127, 64}));
  EXPECT_EQ(m.sim.counters().loadBytes[static_cast<int>(MemId::kAcc8)], 8u);
}

TEST(FsimLoad, UopLoad) {
  Machine m("small");
  Insn lu = m.loadUops({{1, 2, 3}, {1023, 1023, 255}}, 5);
  m.run({lu, finish()});
  EXPECT_EQ(m.sim.uop(5), (Uop{1, 2, 3}));
  EXPECT_EQ(m.sim.uop(6), (Uop{1023, 1023, 255}));
  EXPECT_EQ(m.sim.counters().loadBytes[static_cast<int>(MemId::kUop)], 8u);
}

// ---------------------------------------------------------------------------------------------
// STORE

TEST(FsimStore, NarrowsByTruncationWithStrides) {
  Machine m("small");  // output element: 4 int8
  V acc = {300, -129, 255, 128,  -1, 127, -128, 65536 + 5,  256, -256, 1000, -1000,  7, 8, 9, 10};
  uint32_t a = m.base(m.put(acc), MemId::kAcc);
  uint64_t out = m.put(B(6 * 4, 0x5A));  // sentinel bytes
  // 2 rows of 2 elements from SRAM 0..3, DRAM row stride 3: elements 0,1 and 3,4.
  m.run({dep(load(MemId::kAcc, 0, a, 1, 4, 4), kPushNext),
         dep(store(0, m.base(out, MemId::kOut), 2, 2, 3), kPopPrev | kPushPrev), finish(kPopNext)});
  B got = m.get<int8_t>(out, 24);
  // 300 = 0x12C -> 0x2C = 44; -129 = 0x..FF7F -> 0x7F = 127; 255 -> -1; 128 -> -128;
  // 65541 -> 5; 256, -256 -> 0; 1000 = 0x3E8 -> 0xE8 = -24; -1000 = 0x..FC18 -> 0x18 = 24.
  B expect = {44, 127, -1, -128,  -1, 127, -128, 5,  0x5A, 0x5A, 0x5A, 0x5A,
              0, 0, -24, 24,      7, 8, 9, 10,       0x5A, 0x5A, 0x5A, 0x5A};
  EXPECT_EQ(got, expect);
  const Counters& c = m.sim.counters();
  EXPECT_EQ(c.insns[1], 1u);
  EXPECT_EQ(c.storeBytes, 16u);
}

// ---------------------------------------------------------------------------------------------
// GEMM

TEST(FsimGemm, AccumulateThenResetSmall) {
  Machine m("small");
  // Input 0 = [1, -2, 3, 4]; input 1 = [-128] * 4.
  uint32_t inp = m.base(m.put(B{1, -2, 3, 4, -128, -128, -128, -128}), MemId::kInp);
  // Weight 0 rows (one per output): [1,1,1,1] [1,0,0,0] [0,-1,0,0] [2,3,-1,5];
  // weight 1 rows: [-128]*4, [127]*4, [-128,127,0,1], [0]*4.
  uint32_t wgt = m.base(m.put(B{1, 1, 1, 1,  1, 0, 0, 0,  0, -1, 0, 0,  2, 3, -1, 5,
                                -128, -128, -128, -128,  127, 127, 127, 127,  -128, 127, 0, 1,  0, 0, 0, 0}),
                        MemId::kWgt);
  uint32_t acc = m.base(m.put(V{100, 200, 300, 400, 1, 2, 3, 4}), MemId::kAcc);
  uint64_t out = m.put(B(8, 0x5A));
  Loops l;
  l.end = 2;
  m.run({load(MemId::kInp, 0, inp, 1, 2, 2), dep(load(MemId::kWgt, 0, wgt, 1, 2, 2), kPushNext),
         m.loadUops({{0, 0, 0}, {1, 1, 1}}), load(MemId::kAcc, 0, acc, 1, 2, 2),
         dep(gemm(false, l), kPopPrev | kPushNext), dep(store(0, m.base(out, MemId::kOut), 1, 2, 2), kPopPrev | kPushPrev),
         finish(kPopNext)});
  // acc0 += [1-2+3+4, 1, 2, 2-6-3+20] = [6, 1, 2, 13].
  EXPECT_EQ(m.accRow(0), (V{106, 201, 302, 413}));
  // acc1 += [4*16384, 4*(-16256), 16384-16256-128, 0].
  EXPECT_EQ(m.accRow(1), (V{65537, -65022, 3, 4}));
  // Stored low bytes: 201-256, 302-256, 413-512; 65537 -> 1, -65022 = -65536+514 -> 514-512 = 2.
  EXPECT_EQ(m.get<int8_t>(out, 8), (B{106, -55, 46, -99, 1, 2, 3, 4}));

  const Counters& c = m.sim.counters();
  EXPECT_EQ(c.insns[0], 4u);  // INP, WGT, UOP, ACC
  EXPECT_EQ(c.insns[1], 1u);
  EXPECT_EQ(c.insns[2], 1u);
  EXPECT_EQ(c.insns[3], 1u);
  EXPECT_EQ(c.insns[4], 0u);
  EXPECT_EQ(c.nops, 0u);
  EXPECT_EQ(c.totalInsns(), 7u);
  EXPECT_EQ(c.loadBytes[0], 8u);   // 2 uops
  EXPECT_EQ(c.loadBytes[1], 32u);  // 2 weights of 16 B
  EXPECT_EQ(c.loadBytes[2], 8u);   // 2 inputs of 4 B
  EXPECT_EQ(c.loadBytes[3], 32u);  // 2 accumulators of 16 B
  EXPECT_EQ(c.loadBytes[5], 0u);
  EXPECT_EQ(c.totalLoadBytes(), 80u);
  EXPECT_EQ(c.storeBytes, 8u);
  EXPECT_EQ(c.gemmUops, 2u);
  EXPECT_EQ(c.gemmResetUops, 0u);
  EXPECT_EQ(c.macs, 32u);  // 2 uops * 1 * 4 * 4
  EXPECT_EQ(c.runs, 1u);

  // SRAM persists across runs: reset only accumulator 1 (micro-op 1).
  m.sim.resetCounters();
  EXPECT_EQ(m.sim.counters().totalInsns(), 0u);
  Loops r;
  r.bgn = 1;
  r.end = 2;
  m.run({gemm(true, r), finish()});
  EXPECT_EQ(m.accRow(0), (V{106, 201, 302, 413}));
  EXPECT_EQ(m.accRow(1), (V{0, 0, 0, 0}));
  EXPECT_EQ(m.sim.counters().gemmResetUops, 1u);
  EXPECT_EQ(m.sim.counters().gemmUops, 0u);
  EXPECT_EQ(m.sim.counters().macs, 0u);
  EXPECT_EQ(m.sim.counters().insns[2], 1u);
  EXPECT_EQ(m.sim.counters().runs, 1u);
}

// A reset GEMM clears exactly the entries its loops reach: a tile's back-to-back rows, rows with
// gaps between outer iterations, and an inner stride of 2.
TEST(FsimGemm, ResetClearsOnlyTheEntriesItsLoopsReach) {
  Machine m("small");
  V rows;
  for (int32_t r = 0; r < 24; ++r)
    for (int32_t lane = 0; lane < 4; ++lane) rows.push_back(100 * (r + 1) + lane);
  const uint32_t acc = m.base(m.put(rows), MemId::kAcc);
  Loops tile, gaps, strided;
  tile.iterOut = 2, tile.iterIn = 3, tile.dstOut = 3, tile.dstIn = 1;                 // rows 1-6
  gaps.bgn = 1, gaps.end = 2, gaps.iterOut = 2, gaps.iterIn = 2, gaps.dstOut = 5, gaps.dstIn = 1;  // 9, 10, 14, 15
  strided.bgn = 2, strided.end = 3, strided.iterOut = 1, strided.iterIn = 2, strided.dstIn = 2;     // 18, 20
  m.run({load(MemId::kAcc, 0, acc, 1, 24, 24), m.loadUops({{1, 0, 0}, {9, 0, 0}, {18, 0, 0}}), gemm(true, tile),
         gemm(true, gaps), gemm(true, strided), finish()});
  const std::set<uint32_t> cleared = {1, 2, 3, 4, 5, 6, 9, 10, 14, 15, 18, 20};
  for (uint32_t r = 0; r < 24; ++r) {
    const int32_t b = cleared.count(r) ? 0 : 100 * int32_t(r + 1);
    EXPECT_EQ(m.accRow(r), cleared.count(r) ? (V{0, 0, 0, 0}) : (V{b, b + 1, b + 2, b + 3})) << "accumulator row " << r;
  }
  EXPECT_EQ(m.sim.counters().gemmResetUops, 12u);
}

TEST(FsimGemm, MicroOpLoopsWithAllSixFactors) {
  // On every shipped config: small (portable kernel), batch2 (AVX2), default (AVX-512 where present).
  for (const auto& name : shippedConfigNames()) {
    SCOPED_TRACE(name);
    Machine m(name);
    const int batch = m.cfg.batch, bi = m.cfg.blockIn, bo = m.cfg.blockOut, lanes = batch * bo;
    // Input s, batch b = [s + b + k for k < BLOCK_IN] for s = 0..12 (at most 12 + 1 + 15 = 28).
    B inp;
    for (int s = 0; s < 13; ++s)
      for (int b = 0; b < batch; ++b)
        for (int k = 0; k < bi; ++k) inp.push_back(static_cast<int8_t>(s + b + k));
    // Weight w = (w+1) on the diagonal o == k, for w = 0..9, so acc[b][o] += (w+1) * (s + b + o).
    B wgt;
    for (int w = 0; w < 10; ++w)
      for (int o = 0; o < bo; ++o)
        for (int k = 0; k < bi; ++k) wgt.push_back(static_cast<int8_t>(o == k ? w + 1 : 0));
    uint32_t di = m.base(m.put(inp), MemId::kInp);
    uint32_t dw = m.base(m.put(wgt), MemId::kWgt);
    uint32_t da = m.base(m.put(V(18 * lanes, 999)), MemId::kAcc);
    Loops l;
    l.end = 2;
    l.iterOut = 2;
    l.iterIn = 3;
    l.dstOut = 10;
    l.dstIn = 3;
    l.srcOut = 7;
    l.srcIn = 2;
    l.wgtOut = 5;
    l.wgtIn = 1;
    // Reset the same indices first, then accumulate.
    m.run({load(MemId::kInp, 0, di, 1, 13, 13), dep(load(MemId::kWgt, 0, dw, 1, 10, 10), kPushNext),
           m.loadUops({{0, 0, 0}, {1, 1, 2}}), load(MemId::kAcc, 0, da, 1, 18, 18), dep(gemm(true, l), kPopPrev),
           gemm(false, l), finish()});
    // (i, j, uop) -> dst = uop.dst + 10i + 3j, src = uop.src + 7i + 2j, wgt = uop.wgt + 5i + j:
    //   i=0 j=0: (0,0,0) (1,1,2)    i=0 j=1: (3,2,1) (4,3,3)      i=0 j=2: (6,4,2) (7,5,4)
    //   i=1 j=0: (10,7,5) (11,8,7)  i=1 j=1: (13,9,6) (14,10,8)   i=1 j=2: (16,11,7) (17,12,9)
    struct Hit { uint32_t dst, src, wgt; };
    const Hit hits[] = {{0, 0, 0},  {1, 1, 2},  {3, 2, 1},  {4, 3, 3},   {6, 4, 2},   {7, 5, 4},
                        {10, 7, 5}, {11, 8, 7}, {13, 9, 6}, {14, 10, 8}, {16, 11, 7}, {17, 12, 9}};
    for (const auto& h : hits) {
      V expect;
      for (int b = 0; b < batch; ++b)
        for (int o = 0; o < bo; ++o) expect.push_back(int32_t(h.wgt + 1) * int32_t(h.src + b + o));
      EXPECT_EQ(m.accRow(h.dst), expect) << "acc " << h.dst;
    }
    // Spot checks on lane 0: acc 17 = 10 * 12, acc 4 = 4 * 3, acc 10 = 6 * 7.
    EXPECT_EQ(m.sim.acc(17, 0), 120);
    EXPECT_EQ(m.sim.acc(4, 0), 12);
    EXPECT_EQ(m.sim.acc(10, 0), 42);
    for (uint32_t untouched : {2u, 5u, 8u, 9u, 12u, 15u}) EXPECT_EQ(m.accRow(untouched), V(lanes, 999)) << untouched;
    const Counters& c = m.sim.counters();
    EXPECT_EQ(c.insns[2], 2u);
    EXPECT_EQ(c.gemmResetUops, 12u);  // 2 * 3 * 2
    EXPECT_EQ(c.gemmUops, 12u);
    EXPECT_EQ(c.macs, 12u * batch * bi * bo);
  }
}

TEST(FsimGemm, Batch2) {
  Machine m("batch2");  // BATCH 2, BLOCK_IN 16, BLOCK_OUT 8
  ASSERT_EQ(m.cfg.batch, 2);
  // Pre-fill accumulator 0 with 77 through ACC8 (16 int8 lanes), to see the reset clear it.
  uint32_t d8 = m.base(m.put(B(16, 77)), MemId::kAcc8);
  m.run({load(MemId::kAcc8, 0, d8, 1, 1, 1), finish()});
  EXPECT_EQ(m.accRow(0), V(16, 77));

  // Input: batch 0 all ones; batch 1 x[k] = k - 8.
  B inp;
  for (int k = 0; k < 16; ++k) inp.push_back(1);
  for (int k = 0; k < 16; ++k) inp.push_back(static_cast<int8_t>(k - 8));
  // Weight rows o < 7: 1 at k = o, 2 at k = o + 8; row 7: all -128.
  B wgt;
  for (int o = 0; o < 8; ++o)
    for (int k = 0; k < 16; ++k) wgt.push_back(static_cast<int8_t>(o == 7 ? -128 : (k == o) + 2 * (k == o + 8)));
  uint32_t di = m.base(m.put(inp), MemId::kInp);
  uint32_t dw = m.base(m.put(wgt), MemId::kWgt);
  uint64_t out = m.put(B(16, 0x5A));
  Loops l;
  m.run({load(MemId::kInp, 0, di, 1, 1, 1), dep(load(MemId::kWgt, 0, dw, 1, 1, 1), kPushNext),
         m.loadUops({{0, 0, 0}}), dep(gemm(true, l), kPopPrev), dep(gemm(false, l), kPushNext),
         dep(store(0, m.base(out, MemId::kOut), 1, 1, 1), kPopPrev | kPushPrev), finish(kPopNext)});
  // Batch 0: 1 + 2 = 3 for o < 7, 16 * -128 = -2048 for o = 7.
  // Batch 1: (o - 8) + 2 * o = 3o - 8 for o < 7; -128 * sum(k - 8) = -128 * -8 = 1024 for o = 7.
  EXPECT_EQ(m.accRow(0), (V{3, 3, 3, 3, 3, 3, 3, -2048, -8, -5, -2, 1, 4, 7, 10, 1024}));
  // -2048 and 1024 are multiples of 256: their low bytes are 0.
  EXPECT_EQ(m.get<int8_t>(out, 16), (B{3, 3, 3, 3, 3, 3, 3, 0, -8, -5, -2, 1, 4, 7, 10, 0}));
  const Counters& c = m.sim.counters();
  EXPECT_EQ(c.macs, 256u);  // 2 * 16 * 8
  EXPECT_EQ(c.loadBytes[2], 32u);
  EXPECT_EQ(c.loadBytes[1], 128u);
  EXPECT_EQ(c.loadBytes[5], 16u);
  EXPECT_EQ(c.storeBytes, 16u);
  EXPECT_EQ(c.runs, 2u);
}

TEST(FsimGemm, DefaultConfigWithOuterLoop) {
  Machine m("default");  // 1 x 16 x 16
  // Input 0: x[k] = k - 8; input 1: all -128.
  B inp;
  for (int k = 0; k < 16; ++k) inp.push_back(static_cast<int8_t>(k - 8));
  for (int k = 0; k < 16; ++k) inp.push_back(-128);
  // Weight 0: lower triangle, W[o][k] = (k <= o); weight 1: all -128.
  B wgt;
  for (int o = 0; o < 16; ++o)
    for (int k = 0; k < 16; ++k) wgt.push_back(k <= o ? 1 : 0);
  for (int i = 0; i < 256; ++i) wgt.push_back(-128);
  uint32_t di = m.base(m.put(inp), MemId::kInp);
  uint32_t dw = m.base(m.put(wgt), MemId::kWgt);
  uint64_t out = m.put(B(16, 0x5A));
  Loops l;
  l.iterOut = 2;
  l.dstOut = 1;
  l.srcOut = 1;
  l.wgtOut = 1;
  m.run({load(MemId::kInp, 0, di, 1, 2, 2), dep(load(MemId::kWgt, 0, dw, 1, 2, 2), kPushNext),
         m.loadUops({{0, 0, 0}}), dep(gemm(true, l), kPopPrev), dep(gemm(false, l), kPushNext),
         dep(store(0, m.base(out, MemId::kOut), 1, 1, 1), kPopPrev | kPushPrev), finish(kPopNext)});
  // acc0[o] = sum_{k<=o} (k - 8) = (o+1)(o-16)/2.
  const V tri = {-8, -15, -21, -26, -30, -33, -35, -36, -36, -35, -33, -30, -26, -21, -15, -8};
  EXPECT_EQ(m.accRow(0), tri);
  // acc1[o] = 16 * (-128 * -128) = 262144.
  EXPECT_EQ(m.accRow(1), V(16, 262144));
  B triBytes(tri.begin(), tri.end());
  EXPECT_EQ(m.get<int8_t>(out, 16), triBytes);
  EXPECT_EQ(m.sim.counters().macs, 512u);  // 2 uops * 16 * 16
  EXPECT_EQ(m.sim.counters().gemmResetUops, 2u);
}

// ---------------------------------------------------------------------------------------------
// ALU

// Runs ALU `op` with micro-op dst=0, src=1 on accumulators 0 (a) and 1 (b) on every shipped config
// (4 lanes on small: the portable loop; 16 lanes on default and batch2: the AVX2 loop where the host
// has it), with the 4-lane patterns a and b repeated across the lanes, and expects `expect` repeated.
void expectAlu(const V& expect, AluOp op, const V& a, const V& b, bool useImm = false, int32_t imm = 0) {
  for (const auto& name : shippedConfigNames()) {
    SCOPED_TRACE(name + " " + aluOpName(static_cast<uint32_t>(op)) + (useImm ? " imm " + std::to_string(imm) : ""));
    Machine m(name);
    const int lanes = m.cfg.batch * m.cfg.blockOut;
    ASSERT_EQ(lanes % 4, 0);
    V ta, tb, te;
    for (int r = 0; r < lanes / 4; ++r) {
      ta.insert(ta.end(), a.begin(), a.end());
      tb.insert(tb.end(), b.begin(), b.end());
      te.insert(te.end(), expect.begin(), expect.end());
    }
    V both = ta;
    both.insert(both.end(), tb.begin(), tb.end());
    uint32_t d = m.base(m.put(both), MemId::kAcc);
    Loops l;
    m.run({m.loadUops({{0, 1, 0}}), load(MemId::kAcc, 0, d, 1, 2, 2), alu(op, l, useImm, imm), finish()});
    EXPECT_EQ(m.accRow(0), te);
    EXPECT_EQ(m.accRow(1), tb) << "the source must not change";
    EXPECT_EQ(m.sim.counters().insns[4], 1u);
    EXPECT_EQ(m.sim.counters().aluUops, 1u);
    EXPECT_EQ(m.sim.counters().aluElemOps, uint64_t(lanes));
  }
}

const V kA = {5, -7, INT32_MAX, INT32_MIN};
const V kB = {3, -9, 1, -1};

TEST(FsimAlu, VectorMinMaxAddMul) {
  expectAlu(V{3, -9, 1, INT32_MIN}, AluOp::kMin, kA, kB);
  expectAlu(V{5, -7, INT32_MAX, -1}, AluOp::kMax, kA, kB);
  // INT32_MAX + 1 and INT32_MIN + -1 wrap.
  expectAlu(V{8, -16, INT32_MIN, INT32_MAX}, AluOp::kAdd, kA, kB);
  // INT32_MIN * -1 wraps to INT32_MIN.
  expectAlu(V{15, 63, INT32_MAX, INT32_MIN}, AluOp::kMul, kA, kB);
  // 65536 * 65536 = 2^32 wraps to 0; 65537 * 65537 = 2^32 + 2^17 + 1 -> 131073; 46341^2 = 2147488281 -> -2147479015.
  expectAlu(V{0, 131073, -2147479015, -15}, AluOp::kMul, V{65536, 65537, 46341, -3}, V{65536, 65537, 46341, 5});
}

TEST(FsimAlu, VectorShrPositiveAndNegativeAmounts) {
  // -7 >> 1 = -4 (arithmetic); 1000 >> (33 mod 32 = 1) = 500; -1000 << 2 = -4000; 12345 << (33 mod 32 = 1) = 24690.
  expectAlu(V{-4, 500, -4000, 24690}, AluOp::kShr, V{-7, 1000, -1000, 12345}, V{1, 33, -2, -33});
  // INT32_MIN >> 31 = -1; -1 >> 31 = -1; 0x40000000 << 1 = INT32_MIN; 3 >> (32 mod 32 = 0) = 3.
  expectAlu(V{-1, -1, INT32_MIN, 3}, AluOp::kShr, V{INT32_MIN, -1, 0x40000000, 3}, V{31, 31, -1, 32});
  // Shift left by 32 is a shift by 0; 1 << 31 = INT32_MIN; 5 << 30: low bits 0x40000000.
  expectAlu(V{9, INT32_MIN, 0x40000000, -9}, AluOp::kShr, V{9, 1, 5, -9}, V{-32, -31, -30, 0});
}

TEST(FsimAlu, Immediate) {
  const V junk = {11, 22, 33, 44};  // the source is ignored with use_imm
  expectAlu(V{-5, -7, -5, INT32_MIN}, AluOp::kMin, kA, junk, true, -5);
  expectAlu(V{5, -5, INT32_MAX, -5}, AluOp::kMax, kA, junk, true, -5);
  expectAlu(V{6, -6, INT32_MIN, INT32_MIN + 1}, AluOp::kAdd, kA, junk, true, 1);
  // -32768 is the most negative 16-bit immediate: sign-extended, not 32768.
  expectAlu(V{-32763, -32775, 2147450879, 2147450880}, AluOp::kAdd, kA, junk, true, -32768);
  // INT32_MAX * -2 = -2^32 + 2 -> 2; INT32_MIN * -2 = 2^32 -> 0.
  expectAlu(V{-10, 14, 2, 0}, AluOp::kMul, kA, junk, true, -2);
  // 100000 * 32767 = 3276700000 = 2^32 - 1018267296 -> -1018267296.
  expectAlu(V{65534, -98301, -1018267296, 0}, AluOp::kMul, V{2, -3, 100000, 0}, junk, true, 32767);
}

TEST(FsimAlu, ImmediateShifts) {
  const V junk = {11, 22, 33, 44};
  // >> 2: 5 -> 1, -7 -> -2 (floor), INT32_MAX -> 536870911, INT32_MIN -> -536870912.
  expectAlu(V{1, -2, 536870911, -536870912}, AluOp::kShr, kA, junk, true, 2);
  // << 3: 40, -56, 0x7FFFFFFF << 3 = 0xFFFFFFF8 = -8, 0x80000000 << 3 = 0.
  expectAlu(V{40, -56, -8, 0}, AluOp::kShr, kA, junk, true, -3);
  expectAlu(kA, AluOp::kShr, kA, junk, true, 0);
  // 35 mod 32 = 3: 5 >> 3 = 0, -7 >> 3 = -1, INT32_MAX >> 3 = 268435455, INT32_MIN >> 3 = -268435456.
  expectAlu(V{0, -1, 268435455, -268435456}, AluOp::kShr, kA, junk, true, 35);
}

// A row of `lanes` values f(l).
template <typename F>
V rowOf(int lanes, F f) {
  V v;
  for (int l = 0; l < lanes; ++l) v.push_back(f(l));
  return v;
}

TEST(FsimAlu, LoopsFactorsAndUopRange) {
  for (const auto& name : shippedConfigNames()) {
    SCOPED_TRACE(name);
    Machine m(name);
    const int lanes = m.cfg.batch * m.cfg.blockOut;
    // Accumulator e, lane l = 100e + l, for e = 0..8.
    V acc;
    for (int e = 0; e < 9; ++e)
      for (int l = 0; l < lanes; ++l) acc.push_back(100 * e + l);
    uint32_t d = m.base(m.put(acc), MemId::kAcc);
    // Micro-op 0 would corrupt accumulator 8; only micro-op 1 (dst 0, src 4) runs.
    Loops l;
    l.bgn = 1;
    l.end = 2;
    l.iterOut = 2;
    l.iterIn = 2;
    l.dstOut = 2;
    l.dstIn = 1;
    l.srcOut = 1;
    l.srcIn = 2;
    m.run({m.loadUops({{8, 0, 0}, {0, 4, 0}}), load(MemId::kAcc, 0, d, 1, 9, 9), alu(AluOp::kAdd, l), finish()});
    // (i, j): dst = 2i + j, src = 4 + i + 2j: (0,0) 0 += 4, (0,1) 1 += 6, (1,0) 2 += 5, (1,1) 3 += 7.
    EXPECT_EQ(m.accRow(0), rowOf(lanes, [](int x) { return 400 + 2 * x; }));   // 0 + 400
    EXPECT_EQ(m.accRow(1), rowOf(lanes, [](int x) { return 700 + 2 * x; }));   // 100 + 600
    EXPECT_EQ(m.accRow(2), rowOf(lanes, [](int x) { return 700 + 2 * x; }));   // 200 + 500
    EXPECT_EQ(m.accRow(3), rowOf(lanes, [](int x) { return 1000 + 2 * x; }));  // 300 + 700
    for (int e = 4; e < 9; ++e) EXPECT_EQ(m.accRow(e), rowOf(lanes, [e](int x) { return 100 * e + x; })) << e;
    EXPECT_EQ(m.sim.counters().aluUops, 4u);
    EXPECT_EQ(m.sim.counters().aluElemOps, 4u * lanes);

    // Immediate over an inner loop: accumulators 0..3 = max(x, 701).
    Loops inner;
    inner.bgn = 1;
    inner.end = 2;
    inner.iterIn = 4;
    inner.dstIn = 1;
    m.run({alu(AluOp::kMax, inner, true, 701), finish()});
    EXPECT_EQ(m.accRow(0), V(lanes, 701));
    EXPECT_EQ(m.accRow(1), rowOf(lanes, [](int x) { return x == 0 ? 701 : 700 + 2 * x; }));
    EXPECT_EQ(m.accRow(2), rowOf(lanes, [](int x) { return x == 0 ? 701 : 700 + 2 * x; }));
    EXPECT_EQ(m.accRow(3), rowOf(lanes, [](int x) { return 1000 + 2 * x; }));
    EXPECT_EQ(m.sim.counters().aluUops, 8u);
    EXPECT_EQ(m.sim.counters().runs, 2u);
  }
}

// ---------------------------------------------------------------------------------------------
// Chains of immediate ALU instructions over the same loops (fsim runs them as one pass)

// VTA's ALU on one value with an immediate, written out here as the reference.
int32_t aluRef(AluOp op, int32_t a, int32_t imm) {
  switch (op) {
    case AluOp::kMin: return std::min(a, imm);
    case AluOp::kMax: return std::max(a, imm);
    case AluOp::kAdd: return static_cast<int32_t>(uint32_t(a) + uint32_t(imm));
    case AluOp::kMul: return static_cast<int32_t>(uint32_t(a) * uint32_t(imm));
    case AluOp::kShr:
      if (imm >= 0) return a >> (imm & 31);
      return static_cast<int32_t>(uint32_t(a) << (uint32_t(-int64_t(imm)) & 31));
  }
  return 0;
}

struct Step {
  AluOp op;
  int32_t imm;
};

// Accumulator contents: entry e, lane l, with large, negative and small values mixed.
V chainInput(int entries, int lanes) {
  V v;
  uint32_t x = 12345;
  for (int e = 0; e < entries; ++e)
    for (int l = 0; l < lanes; ++l) {
      x = x * 1103515245u + 12345u;
      const int32_t r = static_cast<int32_t>(x);
      v.push_back((e + l) % 3 == 0 ? r : (e + l) % 3 == 1 ? r >> 12 : (r >> 24));
    }
  return v;
}

// The accumulator after running `steps` as one instruction each over loops `l` with micro-op
// {dst, 0, 0}: every visit of an entry applies one instruction, instruction by instruction.
V chainReference(V acc, int lanes, uint32_t dst, const Loops& l, const std::vector<Step>& steps) {
  for (const Step& st : steps)
    for (uint32_t i = 0; i < l.iterOut; ++i)
      for (uint32_t j = 0; j < l.iterIn; ++j) {
        const uint32_t e = dst + i * l.dstOut + j * l.dstIn;
        for (int x = 0; x < lanes; ++x) acc[size_t(e) * lanes + x] = aluRef(st.op, acc[size_t(e) * lanes + x], st.imm);
      }
  return acc;
}

// Accumulator entries [0, entries) against `want` (entry after entry, all lanes of each).
::testing::AssertionResult AccEquals(const Machine& m, const V& want, uint32_t entries) {
  const size_t lanes = size_t(m.cfg.batch) * m.cfg.blockOut;
  for (uint32_t e = 0; e < entries; ++e) {
    const V expected(want.begin() + e * lanes, want.begin() + (e + 1) * lanes), got = m.accRow(e);
    if (got != expected) return ::testing::AssertionFailure() << "accumulator " << e << " differs";
  }
  return ::testing::AssertionSuccess();
}

TEST(FsimAluChain, ImmediateChainsEqualTheirInstructionsOneByOne) {
  const int kEntries = 48;
  struct Case {
    const char* name;
    uint32_t dst;
    Loops l;
    std::vector<Step> steps;
  };
  auto loops = [](uint32_t iterOut, uint32_t iterIn, uint32_t dstOut, uint32_t dstIn) {
    Loops l;
    l.iterOut = iterOut, l.iterIn = iterIn, l.dstOut = dstOut, l.dstIn = dstIn;
    l.srcOut = 1, l.srcIn = 2;  // ignored with use_imm, but the same in every member
    return l;
  };
  const std::vector<Step> requant = {{AluOp::kMul, 77}, {AluOp::kShr, 6}, {AluOp::kMax, -128}, {AluOp::kMin, 127}};
  const std::vector<Step> shifts = {{AluOp::kAdd, -32768}, {AluOp::kShr, -3}, {AluOp::kMul, -2}, {AluOp::kShr, 35},
                                    {AluOp::kShr, -33},    {AluOp::kShr, 0},  {AluOp::kMin, 32767}};
  std::vector<Step> longChain;  // longer than one pass takes: split into passes in order
  for (int k = 0; k < 21; ++k) longChain.push_back(k % 2 ? Step{AluOp::kMul, 3} : Step{AluOp::kAdd, k - 10});
  const std::vector<Case> cases = {
      {"a tile of back-to-back rows", 2, loops(3, 5, 5, 1), requant},
      {"rows with gaps", 1, loops(2, 3, 7, 1), shifts},
      {"a strided inner loop", 0, loops(2, 4, 9, 2), requant},
      {"one entry per row", 3, loops(6, 1, 4, 0), shifts},
      {"one long chain", 5, loops(2, 9, 12, 1), longChain},
      // Loops that reach entries more than once: a pass per chain would apply the steps in another
      // order (MUL, ADD, MUL, ADD instead of MUL, MUL, ADD, ADD), so these run one by one.
      {"an entry reached three times", 4, loops(1, 3, 0, 0), {{AluOp::kMul, 3}, {AluOp::kAdd, 1}}},
      {"overlapping rows", 4, loops(3, 4, 2, 1), {{AluOp::kMul, 3}, {AluOp::kAdd, 1}, {AluOp::kShr, 1}}},
  };
  for (const auto& name : shippedConfigNames())
    for (const char* kernels : {"generic", "avx2", "avx512bw", "avx512-vnni"}) {
      const Config cfg = Config::load(name);
      if (!Fsim::kernelSetProblem(cfg, kernels).empty()) continue;
      for (const Case& c : cases) {
        SCOPED_TRACE(name + std::string(", kernels=") + kernels + ", " + c.name);
        Machine m(cfg, kernels);
        const int lanes = m.cfg.batch * m.cfg.blockOut;
        const V input = chainInput(kEntries, lanes);
        const uint32_t d = m.base(m.put(input), MemId::kAcc);
        std::vector<Insn> prog = {m.loadUops({{c.dst, 0, 0}}), load(MemId::kAcc, 0, d, 1, kEntries, kEntries)};
        for (const Step& st : c.steps) prog.push_back(alu(st.op, c.l, true, st.imm));
        prog.push_back(finish());
        m.run(prog);
        const V want = chainReference(input, lanes, c.dst, c.l, c.steps);
        ASSERT_TRUE(AccEquals(m, want, kEntries));
        const uint64_t uops = uint64_t(c.l.iterOut) * c.l.iterIn * c.steps.size();
        EXPECT_EQ(m.sim.counters().insns[4], c.steps.size());
        EXPECT_EQ(m.sim.counters().aluUops, uops);
        EXPECT_EQ(m.sim.counters().aluElemOps, uops * lanes);
      }
    }
}

// A member that pops ends the chain before it: the instructions before it have run, and what its
// token waits for runs next, as when the instructions issue one by one.
TEST(FsimAluChain, AMemberThatPopsWaitsForItsToken) {
  for (const auto& name : shippedConfigNames()) {
    SCOPED_TRACE(name);
    Machine m(name);
    const int lanes = m.cfg.batch * m.cfg.blockOut;
    const V input = chainInput(4, lanes);
    const uint32_t d = m.base(m.put(input), MemId::kAcc);
    const uint64_t out = m.dram.alloc(4096);
    Loops l;
    l.iterIn = 4, l.dstIn = 1;
    // MUL tells store it may go; ADD runs before store does; MAX waits for store's token.
    m.run({m.loadUops({{0, 0, 0}}), load(MemId::kAcc, 0, d, 1, 4, 4), dep(alu(AluOp::kMul, l, true, 5), kPushNext),
           dep(store(0, m.base(out, MemId::kOut), 1, 4, 4), kPopPrev | kPushPrev), alu(AluOp::kAdd, l, true, -7),
           dep(alu(AluOp::kMax, l, true, -100), kPopNext), alu(AluOp::kMin, l, true, 100), finish()});
    const V stored = chainReference(input, lanes, 0, l, {{AluOp::kMul, 5}, {AluOp::kAdd, -7}});
    const V final = chainReference(stored, lanes, 0, l, {{AluOp::kMax, -100}, {AluOp::kMin, 100}});
    const B got = m.get<int8_t>(out, size_t(4) * lanes);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], static_cast<int8_t>(stored[i])) << "stored lane " << i;
    EXPECT_TRUE(AccEquals(m, final, 4));
    EXPECT_EQ(m.sim.counters().insns[4], 4u);
  }
}

// A member that pushes ends the chain with it, and a member whose push would find its queue full
// is not in it. With token queues of depth 1, MUL and ADD run before the first STORE takes its
// token and SHR after, whichever of the two pushes first.
TEST(FsimAluChain, AMemberThatPushesEndsTheChain) {
  std::string json = shippedConfigJson("small");
  json = json.substr(0, json.rfind('}')) + ", \"DEP_QUEUE_DEPTH\": 1}";
  for (const int firstPush : {1, 0}) {
    SCOPED_TRACE(firstPush ? "MUL pushes" : "ADD pushes");
    Machine m(Config::fromJson(json, "small-dep1.json"));
    const int lanes = m.cfg.batch * m.cfg.blockOut;
    const V input = chainInput(4, lanes);
    const uint32_t d = m.base(m.put(input), MemId::kAcc);
    const uint64_t out = m.dram.alloc(8192);
    const uint32_t o = m.base(out, MemId::kOut), o2 = m.base(out + 4096, MemId::kOut);
    Loops l;
    l.iterIn = 4, l.dstIn = 1;
    m.run({m.loadUops({{0, 0, 0}}), load(MemId::kAcc, 0, d, 1, 4, 4),
           dep(alu(AluOp::kMul, l, true, 3), firstPush ? kPushNext : 0),
           dep(alu(AluOp::kAdd, l, true, 1), firstPush ? 0 : kPushNext), dep(alu(AluOp::kShr, l, true, 2), kPushNext),
           dep(store(0, o, 1, 4, 4), kPopPrev), dep(store(0, o2, 1, 4, 4), kPopPrev), finish()});
    const V first = chainReference(input, lanes, 0, l, {{AluOp::kMul, 3}, {AluOp::kAdd, 1}});
    const V all = chainReference(first, lanes, 0, l, {{AluOp::kShr, 2}});
    const B got = m.get<int8_t>(out, size_t(4) * lanes), got2 = m.get<int8_t>(out + 4096, size_t(4) * lanes);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], static_cast<int8_t>(first[i])) << "first STORE, lane " << i;
      ASSERT_EQ(got2[i], static_cast<int8_t>(all[i])) << "second STORE, lane " << i;
    }
  }
}

// Only instructions with the same loops, micro-ops and use_imm form a chain; each of these differs
// from the one before in one of them.
TEST(FsimAluChain, InstructionsWithOtherLoopsRunOnTheirOwn) {
  Machine m("default");
  const int lanes = m.cfg.batch * m.cfg.blockOut;
  const V input = chainInput(12, lanes);
  const uint32_t d = m.base(m.put(input), MemId::kAcc);
  Loops a;
  a.iterIn = 4, a.dstIn = 1;
  Loops shorter = a, shifted = a, twice = a, otherSrc = a, otherUop = a;
  shorter.iterIn = 3;
  shifted.iterOut = 2, shifted.dstOut = 4;
  twice.dstIn = 2;
  otherSrc.srcIn = 1;  // the immediate ignores it, but it is part of the instruction
  otherUop.bgn = 1, otherUop.end = 2, otherUop.srcIn = 1;
  m.run({m.loadUops({{0, 0, 0}, {6, 6, 0}}), load(MemId::kAcc, 0, d, 1, 12, 12), alu(AluOp::kMul, a, true, 3),
         alu(AluOp::kAdd, shorter, true, 1), alu(AluOp::kMul, shifted, true, 5), alu(AluOp::kAdd, twice, true, -9),
         alu(AluOp::kShr, otherSrc, true, 1), alu(AluOp::kMul, otherUop, true, 7), alu(AluOp::kAdd, otherUop),
         alu(AluOp::kMul, otherUop, true, -1), finish()});
  V want = chainReference(input, lanes, 0, a, {{AluOp::kMul, 3}});
  want = chainReference(want, lanes, 0, shorter, {{AluOp::kAdd, 1}});
  want = chainReference(want, lanes, 0, shifted, {{AluOp::kMul, 5}});
  want = chainReference(want, lanes, 0, twice, {{AluOp::kAdd, -9}});
  want = chainReference(want, lanes, 0, otherSrc, {{AluOp::kShr, 1}});
  want = chainReference(want, lanes, 6, a, {{AluOp::kMul, 7}});
  for (size_t i = size_t(6) * lanes; i < size_t(10) * lanes; ++i)  // ADD without use_imm: each entry to itself
    want[i] = static_cast<int32_t>(uint32_t(want[i]) * 2);
  want = chainReference(want, lanes, 6, a, {{AluOp::kMul, -1}});
  EXPECT_TRUE(AccEquals(m, want, 12));
}

// wait_cycles crossed inside a chain stops at the member that crosses it, with the members before
// it run; an index past the accumulator is reported at the chain's first member, before any runs.
TEST(FsimAluChain, FaultsNameTheMemberAsOneByOne) {
  Machine m("default");
  const int lanes = m.cfg.batch * m.cfg.blockOut;
  const V input = chainInput(16, lanes);
  const uint32_t d = m.base(m.put(input), MemId::kAcc);
  Loops l;
  l.iterOut = 3, l.iterIn = 5, l.dstOut = 5, l.dstIn = 1;  // 15 micro-ops each
  const std::vector<Insn> prog = {m.loadUops({{0, 0, 0}}), load(MemId::kAcc, 0, d, 1, 16, 16),
                                  alu(AluOp::kAdd, l, true, 1),  alu(AluOp::kMul, l, true, 3),
                                  alu(AluOp::kAdd, l, true, 2),  alu(AluOp::kMin, l, true, 9), finish()};
  EXPECT_TRUE(Contains(runError(m, prog, 40), "instruction 4 (ALU.ADD)"));
  EXPECT_TRUE(Contains(runError(m, prog, 40), "at least 45 cycles"));
  const V want = chainReference(input, lanes, 0, l, {{AluOp::kAdd, 1}, {AluOp::kMul, 3}});
  EXPECT_TRUE(AccEquals(m, want, 16));

  Machine past("default");
  Loops far = l;
  far.dstOut = past.cfg.accDepth - 3;  // the second row runs past the last entry
  const std::string error = runError(past, {past.loadUops({{0, 0, 0}}), alu(AluOp::kAdd, far, true, 1),
                                            alu(AluOp::kMul, far, true, 3), finish()});
  EXPECT_TRUE(Contains(error, "instruction 1 (ALU.ADD)")) << error;
  EXPECT_EQ(past.sim.counters().aluUops, 0u);
}

// ---------------------------------------------------------------------------------------------
// Dependency tokens and queues

TEST(FsimTokens, QueuesOfDepthOneStillDrain) {
  std::string json = shippedConfigJson("small");
  json = json.substr(0, json.rfind('}')) + ", \"INSN_QUEUE_DEPTH\": 1, \"DEP_QUEUE_DEPTH\": 1}";
  Machine m(Config::fromJson(json, "small1.json"));
  ASSERT_EQ(m.cfg.depQueueDepth, 1);
  uint32_t di = m.base(m.put(B{1, 2, 3, 4, 5, 6, 7, 8}), MemId::kInp);
  Loops none;
  none.end = 0;  // no micro-ops: the GEMMs only consume tokens
  m.run({dep(load(MemId::kInp, 0, di, 1, 1, 1), kPushNext), dep(load(MemId::kInp, 1, di + 1, 1, 1, 1), kPushNext),
         dep(gemm(false, none), kPopPrev), dep(gemm(false, none), kPopPrev), finish()});
  EXPECT_EQ(m.sim.inp(1, 0, 0), 5);
  EXPECT_EQ(m.sim.counters().insns[2], 2u);
}

TEST(FsimTokens, ZeroWidthLoadsAndStoresAreCountedAsNops) {
  Machine m("small");
  m.run({dep(load(MemId::kInp, 0, 0, 0, 0, 0), kPushNext), dep(load(MemId::kAcc, 0, 0, 0, 0, 0), kPopPrev | kPushNext),
         dep(store(0, 0, 0, 0, 0), kPopPrev | kPushPrev), finish(kPopNext)});
  const Counters& c = m.sim.counters();
  EXPECT_EQ(c.nops, 3u);
  EXPECT_EQ(c.insns[0], 0u);
  EXPECT_EQ(c.insns[1], 0u);
  EXPECT_EQ(c.insns[3], 1u);
  EXPECT_EQ(c.totalInsns(), 4u);
  EXPECT_EQ(c.totalLoadBytes(), 0u);
}

TEST(FsimTokens, LoadWaitsForComputeToken) {
  // The second LOAD.INP overwrites input 0 only after the GEMM has used it (pop_next on g2l).
  Machine m("small");
  uint32_t di = m.base(m.put(B{1, 1, 1, 1, 2, 2, 2, 2}), MemId::kInp);
  uint32_t dw = m.base(m.put(B{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}), MemId::kWgt);  // identity
  Loops l;
  m.run({load(MemId::kWgt, 0, dw, 1, 1, 1), dep(load(MemId::kInp, 0, di, 1, 1, 1), kPushNext),
         dep(load(MemId::kInp, 0, di + 1, 1, 1, 1), kPopNext | kPushNext),  // waits for the GEMM
         m.loadUops({{0, 0, 0}}), dep(gemm(true, l), 0), dep(gemm(false, l), kPopPrev | kPushPrev),
         dep(gemm(false, l), kPopPrev), finish()});
  // First GEMM sees input [1]*4, the second [2]*4: 1 + 2 = 3 per lane.
  EXPECT_EQ(m.accRow(0), (V{3, 3, 3, 3}));
}

// ---------------------------------------------------------------------------------------------
// Faults

TEST(FsimFaults, DeadlockNamesInstructionAndQueue) {
  Machine m("small");
  Loops l;
  // Instruction 1 pops l2g, but no load-stage instruction ever pushes it.
  std::string msg = runError(m, {m.loadUops({{0, 0, 0}}), dep(gemm(false, l), kPopPrev), finish()});
  EXPECT_TRUE(Contains(msg, "deadlock"));
  EXPECT_TRUE(Contains(msg, "instruction 1"));
  EXPECT_TRUE(Contains(msg, "l2g"));
  EXPECT_EQ(m.sim.counters().insns[2], 0u);
  // Popping s2g with no store pushing.
  Machine m2("small");
  msg = runError(m2, {dep(gemm(false, l), kPopNext), finish()});
  EXPECT_TRUE(Contains(msg, "deadlock at instruction 0"));
  EXPECT_TRUE(Contains(msg, "s2g"));
}

TEST(FsimFaults, TokensLeftAtFinishNameTheQueue) {
  Machine m("small");
  uint32_t di = m.base(m.put(B{1, 2, 3, 4}), MemId::kInp);
  std::string msg = runError(m, {dep(load(MemId::kInp, 0, di, 1, 1, 1), kPushNext), finish()});
  EXPECT_TRUE(Contains(msg, "FINISH at instruction 1"));
  EXPECT_TRUE(Contains(msg, "1 token(s) left on queue l2g (load->compute)"));
  Machine m2("small");
  Loops none;
  none.end = 0;
  msg = runError(m2, {dep(gemm(false, none), kPushNext | kPushPrev), finish()});
  EXPECT_TRUE(Contains(msg, "g2s (compute->store)"));
  EXPECT_TRUE(Contains(msg, "g2l (compute->load)"));
}

TEST(FsimFaults, InstructionNeverExecutedAtFinish) {
  Machine m("small");
  std::string msg = runError(m, {dep(store(0, 0, 0, 0, 0), kPopPrev), finish()});
  EXPECT_TRUE(Contains(msg, "never executed"));
  EXPECT_TRUE(Contains(msg, "instruction 0 (STORE.OUT)"));
}

TEST(FsimFaults, SramIndexOutOfRangeThroughLoops) {
  Loops l;
  l.iterOut = 2;
  l.dstOut = 30;  // dst 1000 + 30 = 1030 >= 1024
  {
    Machine m("small");
    std::string msg = runError(m, {m.loadUops({{1000, 0, 0}}), alu(AluOp::kAdd, l), finish()});
    EXPECT_TRUE(Contains(msg, "instruction 1 (ALU.ADD)"));
    EXPECT_TRUE(Contains(msg, "dst_factor_out"));
    EXPECT_TRUE(Contains(msg, "1030"));
  }
  {
    Machine m("small");
    l.dstOut = 23;  // 1023: the last entry, in range
    EXPECT_NO_THROW(m.run({m.loadUops({{1000, 0, 0}}), alu(AluOp::kAdd, l), finish()}));
  }
  {
    Machine m("small");
    Loops s;
    s.iterIn = 30;
    s.srcIn = 1;  // src 1000 + 29 = 1029 >= 1024 input entries
    std::string msg = runError(m, {m.loadUops({{0, 1000, 0}}), gemm(false, s), finish()});
    EXPECT_TRUE(Contains(msg, "instruction 1 (GEMM)"));
    EXPECT_TRUE(Contains(msg, "src_factor_out/src_factor_in"));
    EXPECT_TRUE(Contains(msg, "1029"));
  }
  {
    Machine m("small");
    Loops w;
    w.iterOut = 2;
    w.wgtOut = 1;  // wgt 255 + 1 = 256 >= 256 weight entries
    std::string msg = runError(m, {m.loadUops({{0, 0, 255}}), gemm(false, w), finish()});
    EXPECT_TRUE(Contains(msg, "wgt_factor_out"));
    EXPECT_TRUE(Contains(msg, "256"));
  }
  {
    Machine m("small");
    Loops a;
    a.iterIn = 2;
    a.srcIn = 1;  // ALU src indexes the accumulator: 1023 + 1 = 1024
    std::string msg = runError(m, {m.loadUops({{0, 1023, 0}}), alu(AluOp::kMax, a), finish()});
    EXPECT_TRUE(Contains(msg, "instruction 1 (ALU.MAX)"));
    EXPECT_TRUE(Contains(msg, "src_factor_out"));
  }
}

TEST(FsimFaults, DramAccessToPageZero) {
  Machine m("small");
  // Input element 4 B: dram_base 1023 covers bytes [4092, 4096), inside page 0.
  std::string msg = runError(m, {load(MemId::kInp, 0, 1023, 1, 1, 1), finish()});
  EXPECT_TRUE(Contains(msg, "instruction 0 (LOAD.INP)"));
  EXPECT_TRUE(Contains(msg, "dram_base"));
  EXPECT_TRUE(Contains(msg, "page 0"));
  EXPECT_NO_THROW(m.run({load(MemId::kInp, 0, 1024, 1, 1, 1), finish()}));
  msg = runError(m, {store(0, 0, 1, 1, 1), finish()});
  EXPECT_TRUE(Contains(msg, "instruction 0 (STORE.OUT)"));
  EXPECT_TRUE(Contains(msg, "page 0"));
  // Instruction fetch from page 0.
  try {
    m.sim.run(0, 1);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "page 0"));
  }
}

TEST(FsimFaults, DramAccessBeyondSpan) {
  Machine m("small");
  try {
    m.sim.run(m.dram.span() - 16, 2);  // the second instruction lies past the address space
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "outside"));
    EXPECT_TRUE(Contains(e.what(), "instruction fetch"));
  }
  try {
    m.sim.run(m.dram.span(), 1);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "outside"));
  }
}

TEST(FsimFaults, ProgramWithoutFinish) {
  Machine m("small");
  std::string msg = runError(m, {m.loadUops({{0, 0, 0}})});
  EXPECT_TRUE(Contains(msg, "without a FINISH"));
  uint64_t at = m.put(B(16, 0));
  try {
    m.sim.run(at, 0);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "count is 0"));
  }
}

TEST(FsimFaults, InvalidProgramIsRejectedBeforeAnythingRuns) {
  Machine m2("small");
  Insn bad = store(0, 1024, 1, 1, 1);
  bad.memType = static_cast<uint32_t>(MemId::kAcc);  // STORE must use memory type OUT
  std::string msg = runError(m2, {load(MemId::kAcc, 0, m2.base(m2.put(V{5, 5, 5, 5}), MemId::kAcc), 1, 1, 1), bad, finish()});
  EXPECT_TRUE(Contains(msg, "instruction 1"));
  EXPECT_TRUE(Contains(msg, "memory_type"));
  EXPECT_EQ(m2.accRow(0), (V{0, 0, 0, 0}));  // the valid LOAD before it did not run
  EXPECT_EQ(m2.sim.counters().totalInsns(), 0u);
}

}  // namespace
