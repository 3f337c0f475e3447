// Unit tests of tessera::hw::Isa and InsnLayout: VTA bit layouts, encode/decode, micro-ops, validation.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "test_util.h"

namespace {

using namespace tessera::hw;
using tessera::Error;
using tessera::hw::testing::errorOf;
using tessera::hw::testing::randomInsn;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// Position of `f` in `format`, or {kCount, -1, -1} if absent.
FieldPos posOf(const std::vector<FieldPos>& format, Field f) {
  for (const auto& p : format)
    if (p.field == f) return p;
  return {Field::kCount, -1, -1, false};
}

#define EXPECT_POS(format, fieldEnum, expLo, expWidth)           \
  do {                                                           \
    FieldPos p_ = posOf(format, fieldEnum);                      \
    EXPECT_EQ(p_.lo, expLo) << fieldName(fieldEnum);             \
    EXPECT_EQ(p_.width, expWidth) << fieldName(fieldEnum);       \
  } while (0)


Insn memInsn(Opcode op, MemId id, uint32_t sram, uint32_t dram, uint32_t y, uint32_t x) {
  Insn i;
  i.opcode = op;
  i.memType = static_cast<uint32_t>(id);
  i.sramBase = sram;
  i.dramBase = dram;
  i.ySize = y;
  i.xSize = x;
  i.xStride = x;
  return i;
}

const Opcode kAllOpcodes[] = {Opcode::kLoad, Opcode::kStore, Opcode::kGemm, Opcode::kFinish, Opcode::kAlu};

TEST(IsaLayout, DefaultMemoryFormatMatchesVtaBitfields) {
  Isa isa(Config::load("default"));
  const auto& m = isa.layout().memFormat();
  // uint64_t bit-fields: opcode 0-2, four dep flags 3-6, memory_type 7-9, sram_base 10-25,
  // dram_base 26-57; y_size (16) would end at 74 > 64 so it starts the second word at 64.
  EXPECT_POS(m, Field::kOpcode, 0, 3);
  EXPECT_POS(m, Field::kPopPrev, 3, 1);
  EXPECT_POS(m, Field::kPopNext, 4, 1);
  EXPECT_POS(m, Field::kPushPrev, 5, 1);
  EXPECT_POS(m, Field::kPushNext, 6, 1);
  EXPECT_POS(m, Field::kMemType, 7, 3);
  EXPECT_POS(m, Field::kSramBase, 10, 16);
  EXPECT_POS(m, Field::kDramBase, 26, 32);
  EXPECT_POS(m, Field::kYSize, 64, 16);
  EXPECT_POS(m, Field::kXSize, 80, 16);
  EXPECT_POS(m, Field::kXStride, 96, 16);
  EXPECT_POS(m, Field::kYPad0, 112, 4);
  EXPECT_POS(m, Field::kYPad1, 116, 4);
  EXPECT_POS(m, Field::kXPad0, 120, 4);
  EXPECT_POS(m, Field::kXPad1, 124, 4);
  EXPECT_EQ(m.size(), 15u);
}

TEST(IsaLayout, DefaultGemmFormatMatchesVtaBitfields) {
  Isa isa(Config::load("default"));
  const auto& g = isa.layout().gemmFormat();
  // reset 7, uop_bgn 8-20 (log uop depth 13), uop_end 21-34 (14), iter_out 35-48, iter_in 49-62;
  // dst_factor_out (11) would end at 74 so it starts at 64; then 75, 86, 97 (11 each),
  // wgt_factor_out 108-117 and wgt_factor_in 118-127 (10 each): exactly 128 bits.
  EXPECT_POS(g, Field::kReset, 7, 1);
  EXPECT_POS(g, Field::kUopBgn, 8, 13);
  EXPECT_POS(g, Field::kUopEnd, 21, 14);
  EXPECT_POS(g, Field::kIterOut, 35, 14);
  EXPECT_POS(g, Field::kIterIn, 49, 14);
  EXPECT_POS(g, Field::kDstFactorOut, 64, 11);
  EXPECT_POS(g, Field::kDstFactorIn, 75, 11);
  EXPECT_POS(g, Field::kSrcFactorOut, 86, 11);
  EXPECT_POS(g, Field::kSrcFactorIn, 97, 11);
  EXPECT_POS(g, Field::kWgtFactorOut, 108, 10);
  EXPECT_POS(g, Field::kWgtFactorIn, 118, 10);
  EXPECT_EQ(posOf(g, Field::kImm).lo, -1);
  // FINISH uses the GEMM format.
  EXPECT_EQ(&isa.layout().format(Opcode::kFinish), &g);
}

TEST(IsaLayout, DefaultAluFormatMatchesVtaBitfields) {
  Isa isa(Config::load("default"));
  const auto& a = isa.layout().aluFormat();
  // Same first word as GEMM; dst/src factors 64, 75, 86, 97 (11 bits each, src indexes the
  // accumulator), alu_opcode 108-110, use_imm 111, imm 112-127 (signed).
  EXPECT_POS(a, Field::kIterIn, 49, 14);
  EXPECT_POS(a, Field::kDstFactorOut, 64, 11);
  EXPECT_POS(a, Field::kDstFactorIn, 75, 11);
  EXPECT_POS(a, Field::kSrcFactorOut, 86, 11);
  EXPECT_POS(a, Field::kSrcFactorIn, 97, 11);
  EXPECT_POS(a, Field::kAluOpcode, 108, 3);
  EXPECT_POS(a, Field::kUseImm, 111, 1);
  EXPECT_POS(a, Field::kImm, 112, 16);
  EXPECT_TRUE(posOf(a, Field::kImm).isSigned);
  EXPECT_EQ(posOf(a, Field::kWgtFactorOut).lo, -1);
  EXPECT_EQ(isa.layout().width(Opcode::kAlu, Field::kImm), 16);
  EXPECT_EQ(isa.layout().width(Opcode::kGemm, Field::kImm), 0);
  EXPECT_EQ(isa.layout().width(Opcode::kLoad, Field::kXStride), 16);
}

TEST(IsaLayout, DefaultUopFormat) {
  Isa isa(Config::load("default"));
  const auto& u = isa.layout().uopFormat();
  // dst 0-10 (acc depth 11), src 11-21, wgt 22-31 (wgt depth 10).
  EXPECT_EQ(u[0].lo, 0);
  EXPECT_EQ(u[0].width, 11);
  EXPECT_EQ(u[1].lo, 11);
  EXPECT_EQ(u[1].width, 11);
  EXPECT_EQ(u[2].lo, 22);
  EXPECT_EQ(u[2].width, 10);
}

TEST(IsaLayout, SmallConfigLayout) {
  Isa isa(Config::load("small"));
  // small: log depths uop 10, inp 10, wgt 8, acc 10. Word 0: reset 7, uop_bgn 8-17, uop_end 18-28,
  // iter_out 29-42, iter_in 43-56; dst_factor_out (10) would end at 67 so it starts at 64.
  const auto& g = isa.layout().gemmFormat();
  EXPECT_POS(g, Field::kUopEnd, 18, 11);
  EXPECT_POS(g, Field::kIterIn, 43, 14);
  EXPECT_POS(g, Field::kDstFactorOut, 64, 10);
  EXPECT_POS(g, Field::kSrcFactorIn, 94, 10);
  EXPECT_POS(g, Field::kWgtFactorOut, 104, 8);
  EXPECT_POS(g, Field::kWgtFactorIn, 112, 8);
  const auto& a = isa.layout().aluFormat();
  EXPECT_POS(a, Field::kAluOpcode, 104, 3);
  EXPECT_POS(a, Field::kUseImm, 107, 1);
  EXPECT_POS(a, Field::kImm, 108, 16);
  const auto& u = isa.layout().uopFormat();
  EXPECT_EQ(u[1].lo, 10);
  EXPECT_EQ(u[2].lo, 20);
  EXPECT_EQ(u[2].width, 8);
}

TEST(IsaEncode, DefaultLoadBitsByHand) {
  Isa isa(Config::load("default"));
  Insn i = memInsn(Opcode::kLoad, MemId::kInp, 5, 0x1234, 3, 4);
  i.popNext = true;
  i.xStride = 7;
  i.yPad0 = 1;
  i.xPad1 = 2;
  RawInsn r = isa.encode(i);
  // lo: pop_next bit 4 (0x10) | memory_type 2 << 7 (0x100) | sram_base 5 << 10 (0x1400) |
  //     dram_base 0x1234 << 26 (0x48D0000000).
  EXPECT_EQ(r.lo, 0x00000048D0001510ull);
  // hi: y_size 3 | x_size 4 << 16 | x_stride 7 << 32 | y_pad_0 1 << 48 | x_pad_1 2 << 60.
  EXPECT_EQ(r.hi, 0x2001000700040003ull);
  EXPECT_EQ(isa.decode(r), i);
  // In memory: little-endian, low word first.
  uint8_t bytes[16];
  Isa::rawToBytes(r, bytes);
  EXPECT_EQ(bytes[0], 0x10);
  EXPECT_EQ(bytes[1], 0x15);
  EXPECT_EQ(bytes[4], 0x48);
  EXPECT_EQ(bytes[8], 0x03);
  EXPECT_EQ(bytes[15], 0x20);
  EXPECT_EQ(Isa::rawFromBytes(bytes), r);
}

TEST(IsaEncode, DefaultAluBitsByHand) {
  Isa isa(Config::load("default"));
  Insn i;
  i.opcode = Opcode::kAlu;
  i.aluOp = static_cast<uint32_t>(AluOp::kMul);
  i.useImm = true;
  i.imm = -1;
  i.uopEnd = 1;
  i.iterOut = 1;
  i.iterIn = 1;
  i.dstFactorOut = 3;
  RawInsn r = isa.encode(i);
  // lo: opcode 4 | uop_end 1 << 21 | iter_out 1 << 35 | iter_in 1 << 49.
  EXPECT_EQ(r.lo, 4ull | (1ull << 21) | (1ull << 35) | (1ull << 49));
  // hi: dst_factor_out 3 at bit 0, alu_opcode 4 at 108-64 = 44, use_imm at 47, imm 0xFFFF at 48.
  EXPECT_EQ(r.hi, 3ull | (4ull << 44) | (1ull << 47) | (0xFFFFull << 48));
  EXPECT_EQ(isa.decode(r), i);
}

TEST(IsaEncode, RandomRoundTripEveryOpcodeEveryShippedConfig) {
  std::mt19937 rng(20240611);
  for (const auto& name : shippedConfigNames()) {
    SCOPED_TRACE(name);
    Isa isa(Config::load(name));
    for (Opcode op : kAllOpcodes) {
      SCOPED_TRACE(opcodeName(op));
      for (int n = 0; n < 300; ++n) {
        Insn insn = randomInsn(isa.layout(), op, rng);
        RawInsn raw = isa.encode(insn);
        EXPECT_EQ(static_cast<uint32_t>(raw.lo & 7), static_cast<uint32_t>(op));
        Insn back = isa.decode(raw);
        ASSERT_EQ(back, insn) << "iteration " << n;
        ASSERT_EQ(isa.encode(back), raw);
        uint8_t bytes[16];
        Isa::rawToBytes(raw, bytes);
        ASSERT_EQ(Isa::rawFromBytes(bytes), raw);
      }
    }
  }
}

TEST(IsaEncode, MaxValuesSetEveryFormatBit) {
  // Every field at its maximum: the set bits are exactly the union of the fields.
  for (const auto& name : shippedConfigNames()) {
    SCOPED_TRACE(name);
    Isa isa(Config::load(name));
    for (Opcode op : kAllOpcodes) {
      Insn insn;
      insn.opcode = op;
      RawInsn expect;
      expect.lo = static_cast<uint64_t>(op);
      for (const auto& p : isa.layout().format(op)) {
        if (p.field == Field::kOpcode) continue;
        insn.set(p.field, p.isSigned ? -1 : static_cast<int64_t>((uint64_t(1) << p.width) - 1));
        uint64_t bits = (p.width == 64 ? ~0ull : ((1ull << p.width) - 1)) << (p.lo % 64);
        (p.lo < 64 ? expect.lo : expect.hi) |= bits;
        // No field straddles a 64-bit word.
        EXPECT_LE(p.lo % 64 + p.width, 64) << fieldName(p.field);
      }
      EXPECT_EQ(isa.encode(insn), expect) << opcodeName(op);
    }
  }
}

TEST(IsaEncode, FieldOverflowNamesTheField) {
  Isa isa(Config::load("default"));
  Insn load = memInsn(Opcode::kLoad, MemId::kInp, 0, 0, 1, 65536);
  std::string msg = errorOf([&] { isa.encode(load, "instruction 7"); });
  EXPECT_TRUE(Contains(msg, "instruction 7: field x_size"));
  EXPECT_TRUE(Contains(msg, "65536"));
  load = memInsn(Opcode::kLoad, MemId::kInp, 0, 0, 1, 1);
  load.yPad1 = 16;
  EXPECT_TRUE(Contains(errorOf([&] { isa.encode(load); }), "field y_pad_1"));
  load = memInsn(Opcode::kStore, MemId::kOut, 65536, 0, 1, 1);
  EXPECT_TRUE(Contains(errorOf([&] { isa.encode(load); }), "field sram_base"));
  load = memInsn(Opcode::kLoad, MemId::kUop, 0, 0, 1, 1);
  load.memType = 8;  // 3-bit field
  EXPECT_TRUE(Contains(errorOf([&] { isa.encode(load); }), "field memory_type"));

  Insn gemm;
  gemm.opcode = Opcode::kGemm;
  gemm.uopBgn = 8192;  // 13 bits: max 8191
  EXPECT_TRUE(Contains(errorOf([&] { isa.encode(gemm); }), "field uop_bgn"));
  gemm.uopBgn = 8191;
  gemm.uopEnd = 16384;  // 14 bits
  EXPECT_TRUE(Contains(errorOf([&] { isa.encode(gemm); }), "field uop_end"));
  gemm.uopEnd = 16383;
  EXPECT_NO_THROW(isa.encode(gemm));
  gemm.iterIn = 16384;
  EXPECT_TRUE(Contains(errorOf([&] { isa.encode(gemm); }), "field iter_in"));
  gemm.iterIn = 0;
  gemm.wgtFactorIn = 1024;  // 10 bits
  EXPECT_TRUE(Contains(errorOf([&] { isa.encode(gemm); }), "field wgt_factor_in"));

  Insn alu;
  alu.opcode = Opcode::kAlu;
  alu.imm = 32768;
  EXPECT_TRUE(Contains(errorOf([&] { isa.encode(alu); }), "field imm"));
  alu.imm = -32769;
  EXPECT_TRUE(Contains(errorOf([&] { isa.encode(alu); }), "field imm"));
  alu.imm = -32768;
  EXPECT_NO_THROW(isa.encode(alu));
  alu.imm = 32767;
  EXPECT_NO_THROW(isa.encode(alu));
  alu.aluOp = 8;
  EXPECT_TRUE(Contains(errorOf([&] { isa.encode(alu); }), "field alu_opcode"));
}

TEST(IsaEncode, InvalidOpcodeIsRejected) {
  Isa isa(Config::load("default"));
  Insn i;
  i.opcode = static_cast<Opcode>(5);
  EXPECT_TRUE(Contains(errorOf([&] { isa.encode(i); }), "opcode"));
}

TEST(IsaEncode, NegativeImmediateIsSignExtended) {
  Isa isa(Config::load("default"));
  Insn alu;
  alu.opcode = Opcode::kAlu;
  alu.imm = -2;
  RawInsn r = isa.encode(alu);
  EXPECT_EQ(r.hi >> 48, 0xFFFEull);
  EXPECT_EQ(isa.decode(r).imm, -2);
  // Raw bit patterns: 0x8000 is -32768, 0x7FFF is 32767, 0xFFFF is -1.
  RawInsn raw;
  raw.lo = 4;
  raw.hi = 0x8000ull << 48;
  EXPECT_EQ(isa.decode(raw).imm, -32768);
  raw.hi = 0x7FFFull << 48;
  EXPECT_EQ(isa.decode(raw).imm, 32767);
  raw.hi = 0xFFFFull << 48;
  EXPECT_EQ(isa.decode(raw).imm, -1);
  // small: imm at 108-123, i.e. hi bits 44-59.
  Isa small(Config::load("small"));
  raw.hi = 0x8001ull << 44;
  EXPECT_EQ(small.decode(raw).imm, -32767);
}

TEST(IsaEncode, DecodeOfInvalidOpcodeKeepsGenericFields) {
  Isa isa(Config::load("default"));
  RawInsn raw;
  raw.lo = 6 | (1u << 3) | (1u << 6);  // opcode 6, pop_prev, push_next
  Insn i = isa.decode(raw);
  EXPECT_EQ(static_cast<uint32_t>(i.opcode), 6u);
  EXPECT_TRUE(i.popPrev);
  EXPECT_FALSE(i.popNext);
  EXPECT_TRUE(i.pushNext);
}

TEST(IsaUop, RoundTripAndBitsByHand) {
  Isa isa(Config::load("default"));
  Uop u{1, 2, 3};
  // 1 | 2 << 11 | 3 << 22
  EXPECT_EQ(isa.encodeUop(u), 0x00C01001u);
  EXPECT_EQ(isa.decodeUop(0x00C01001u), u);
  EXPECT_EQ(isa.encodeUop(Uop{2047, 2047, 1023}), 0xFFFFFFFFu);
  EXPECT_EQ(isa.decodeUop(0xFFFFFFFFu), (Uop{2047, 2047, 1023}));

  std::mt19937 rng(7);
  for (const auto& name : shippedConfigNames()) {
    SCOPED_TRACE(name);
    Isa is(Config::load(name));
    const auto& f = is.layout().uopFormat();
    for (int n = 0; n < 500; ++n) {
      Uop r;
      r.dst = std::uniform_int_distribution<uint32_t>(0, (1u << f[0].width) - 1)(rng);
      r.src = std::uniform_int_distribution<uint32_t>(0, (1u << f[1].width) - 1)(rng);
      r.wgt = std::uniform_int_distribution<uint32_t>(0, (1u << f[2].width) - 1)(rng);
      ASSERT_EQ(is.decodeUop(is.encodeUop(r)), r);
    }
  }
}

TEST(IsaUop, OverflowNamesTheField) {
  Isa isa(Config::load("default"));
  EXPECT_TRUE(Contains(errorOf([&] { isa.encodeUop(Uop{2048, 0, 0}, "uop 3"); }), "uop 3: micro-op field dst_idx"));
  EXPECT_TRUE(Contains(errorOf([&] { isa.encodeUop(Uop{0, 2048, 0}); }), "src_idx"));
  EXPECT_TRUE(Contains(errorOf([&] { isa.encodeUop(Uop{0, 0, 1024}); }), "wgt_idx"));
  Isa small(Config::load("small"));
  EXPECT_TRUE(Contains(errorOf([&] { small.encodeUop(Uop{0, 0, 256}); }), "wgt_idx"));
  EXPECT_NO_THROW(small.encodeUop(Uop{1023, 1023, 255}));
}

TEST(IsaStage, FetchDispatchRules) {
  EXPECT_EQ(memInsn(Opcode::kLoad, MemId::kInp, 0, 0, 1, 1).stage(), Stage::kLoad);
  EXPECT_EQ(memInsn(Opcode::kLoad, MemId::kWgt, 0, 0, 1, 1).stage(), Stage::kLoad);
  EXPECT_EQ(memInsn(Opcode::kLoad, MemId::kUop, 0, 0, 1, 1).stage(), Stage::kCompute);
  EXPECT_EQ(memInsn(Opcode::kLoad, MemId::kAcc, 0, 0, 1, 1).stage(), Stage::kCompute);
  EXPECT_EQ(memInsn(Opcode::kLoad, MemId::kAcc8, 0, 0, 1, 1).stage(), Stage::kCompute);
  EXPECT_EQ(memInsn(Opcode::kStore, MemId::kOut, 0, 0, 1, 1).stage(), Stage::kStore);
  Insn i;
  i.opcode = Opcode::kGemm;
  EXPECT_EQ(i.stage(), Stage::kCompute);
  i.opcode = Opcode::kAlu;
  EXPECT_EQ(i.stage(), Stage::kCompute);
  i.opcode = Opcode::kFinish;
  EXPECT_EQ(i.stage(), Stage::kCompute);
  EXPECT_STREQ(tokenQueueName(TokenQueue::kLoadToCompute), "l2g (load->compute)");
}

TEST(IsaMisc, LoadFootprintAndNames) {
  Insn i = memInsn(Opcode::kLoad, MemId::kInp, 0, 0, 2, 2);
  i.yPad0 = 1;
  i.yPad1 = 1;
  i.xPad0 = 1;
  i.xPad1 = 2;
  EXPECT_EQ(loadFootprint(i), 20u);  // (1+2+2) * (1+2+1)
  EXPECT_STREQ(fieldName(Field::kXStride), "x_stride");
  EXPECT_STREQ(fieldName(Field::kDstFactorOut), "dst_factor_out");
  EXPECT_STREQ(memIdName(5), "ACC8");
  EXPECT_STREQ(aluOpName(3), "SHR");
  EXPECT_STREQ(opcodeName(Opcode::kFinish), "FINISH");
  Insn nop = memInsn(Opcode::kStore, MemId::kOut, 0, 0, 1, 0);
  EXPECT_TRUE(nop.isNop());
}

class IsaValidate : public ::testing::Test {
 protected:
  Isa isa{Config::load("default")};
  std::string fails(const Insn& i, size_t index = 7) {
    return errorOf([&] { isa.validate(i, index); });
  }
};

TEST_F(IsaValidate, AcceptsWellFormedInstructions) {
  EXPECT_NO_THROW(isa.validate(memInsn(Opcode::kLoad, MemId::kInp, 0, 1, 1, 2048), 0));
  EXPECT_NO_THROW(isa.validate(memInsn(Opcode::kStore, MemId::kOut, 2047, 1, 1, 1), 0));
  Insn acc = memInsn(Opcode::kLoad, MemId::kAcc, 0, 1, 1, 1);
  acc.popPrev = true;  // LOAD.ACC runs on the compute stage, which has a previous stage
  acc.pushNext = true;
  EXPECT_NO_THROW(isa.validate(acc, 0));
  Insn gemm;
  gemm.opcode = Opcode::kGemm;
  gemm.uopBgn = 0;
  gemm.uopEnd = 8192;
  EXPECT_NO_THROW(isa.validate(gemm, 0));
  Insn fin;
  fin.opcode = Opcode::kFinish;
  EXPECT_NO_THROW(isa.validate(fin, 0));
  // A zero-width STORE carries only dependency flags; its memory type is not checked.
  Insn nop = memInsn(Opcode::kStore, MemId::kAcc, 0, 0, 0, 0);
  nop.popPrev = true;
  EXPECT_NO_THROW(isa.validate(nop, 0));
}

TEST_F(IsaValidate, InvalidOpcode) {
  Insn i;
  i.opcode = static_cast<Opcode>(7);
  std::string msg = fails(i, 3);
  EXPECT_TRUE(Contains(msg, "instruction 3"));
  EXPECT_TRUE(Contains(msg, "opcode"));
}

TEST_F(IsaValidate, BadMemoryType) {
  Insn i = memInsn(Opcode::kLoad, MemId::kInp, 0, 1, 1, 1);
  i.memType = 6;
  std::string msg = fails(i);
  EXPECT_TRUE(Contains(msg, "instruction 7"));
  EXPECT_TRUE(Contains(msg, "memory_type"));
  EXPECT_TRUE(Contains(fails(memInsn(Opcode::kLoad, MemId::kOut, 0, 1, 1, 1)), "memory_type"));
}

TEST_F(IsaValidate, StoreMustUseOut) {
  std::string msg = fails(memInsn(Opcode::kStore, MemId::kAcc, 0, 1, 1, 1));
  EXPECT_TRUE(Contains(msg, "memory_type"));
  EXPECT_TRUE(Contains(msg, "OUT"));
  Insn padded = memInsn(Opcode::kStore, MemId::kOut, 0, 1, 1, 1);
  padded.xPad0 = 1;
  EXPECT_TRUE(Contains(fails(padded), "x_pad_0"));
}

TEST_F(IsaValidate, DependencyFlagsLegalForStage) {
  Insn i = memInsn(Opcode::kLoad, MemId::kInp, 0, 1, 1, 1);
  i.popPrev = true;
  std::string msg = fails(i);
  EXPECT_TRUE(Contains(msg, "pop_prev"));
  EXPECT_TRUE(Contains(msg, "LOAD"));
  i = memInsn(Opcode::kLoad, MemId::kWgt, 0, 1, 1, 1);
  i.pushPrev = true;
  EXPECT_TRUE(Contains(fails(i), "push_prev"));
  i = memInsn(Opcode::kStore, MemId::kOut, 0, 1, 1, 1);
  i.popNext = true;
  EXPECT_TRUE(Contains(fails(i), "pop_next"));
  i = memInsn(Opcode::kStore, MemId::kOut, 0, 1, 1, 1);
  i.pushNext = true;
  EXPECT_TRUE(Contains(fails(i), "push_next"));
  // Also checked for zero-width (dependency-only) loads.
  i = memInsn(Opcode::kLoad, MemId::kInp, 0, 0, 0, 0);
  i.popPrev = true;
  EXPECT_TRUE(Contains(fails(i), "pop_prev"));
}

TEST_F(IsaValidate, SramRangePastDepth) {
  // default inp depth 2048: [2047, 2049) is out of range, [2046, 2048) is not.
  std::string msg = fails(memInsn(Opcode::kLoad, MemId::kInp, 2047, 1, 1, 2));
  EXPECT_TRUE(Contains(msg, "sram_base"));
  EXPECT_TRUE(Contains(msg, "2049"));
  EXPECT_NO_THROW(isa.validate(memInsn(Opcode::kLoad, MemId::kInp, 2046, 1, 1, 2), 0));
  // Padding counts: 2040 + (4+1+4)*1 = 2049 > 2048, with x_pad_1 3 it is exactly 2048.
  Insn p = memInsn(Opcode::kLoad, MemId::kInp, 2040, 1, 1, 1);
  p.xPad0 = 4;
  p.xPad1 = 4;
  EXPECT_TRUE(Contains(fails(p), "sram_base"));
  p.xPad1 = 3;
  EXPECT_NO_THROW(isa.validate(p, 0));
  // wgt depth 1024.
  EXPECT_TRUE(Contains(fails(memInsn(Opcode::kLoad, MemId::kWgt, 1000, 1, 5, 5)), "sram_base"));
  // STORE: acc depth 2048, 2000 + 7*7 = 2049.
  EXPECT_TRUE(Contains(fails(memInsn(Opcode::kStore, MemId::kOut, 2000, 1, 7, 7)), "sram_base"));
  // UOP depth 8192.
  EXPECT_TRUE(Contains(fails(memInsn(Opcode::kLoad, MemId::kUop, 8190, 1, 1, 3)), "sram_base"));
}

TEST_F(IsaValidate, UopLoadShape) {
  EXPECT_TRUE(Contains(fails(memInsn(Opcode::kLoad, MemId::kUop, 0, 1, 2, 3)), "y_size"));
}

TEST_F(IsaValidate, UopRangeOfGemmAndAlu) {
  Insn g;
  g.opcode = Opcode::kGemm;
  g.uopEnd = 8193;  // fits the 14-bit field, but past the 8192-entry buffer
  std::string msg = fails(g);
  EXPECT_TRUE(Contains(msg, "uop_end"));
  EXPECT_TRUE(Contains(msg, "8193"));
  g.uopEnd = 4;
  g.uopBgn = 5;
  EXPECT_TRUE(Contains(fails(g), "uop_bgn"));
  Insn a;
  a.opcode = Opcode::kAlu;
  a.uopEnd = 8193;
  EXPECT_TRUE(Contains(fails(a), "uop_end"));
  a.uopEnd = 1;
  a.aluOp = 5;
  EXPECT_TRUE(Contains(fails(a), "alu_opcode"));
}

}  // namespace
