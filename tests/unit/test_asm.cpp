// Unit tests of the disassembler, assembler and binary program/micro-op files (asm.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "tessera/hw/asm.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "tessera/support/file_io.h"
#include "test_util.h"

namespace {

using namespace tessera::hw;
using tessera::Error;
using tessera::readBinaryFile;
using tessera::writeBinaryFile;
using tessera::hw::testing::errorOf;
using tessera::hw::testing::randomInsn;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// The tessera::Error assembling `text` throws (with a failure if none).
Error assembleError(const Isa& isa, const std::string& text) {
  try {
    assemble(isa, text, "prog.s");
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no tessera::Error for: " << text;
  return Error("", "");
}

// Random raw instruction with a valid opcode: every field of the format random within its width.
RawInsn randomRaw(const Isa& isa, Opcode op, std::mt19937& rng) { return isa.encode(randomInsn(isa.layout(), op, rng)); }

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera_asm_test_XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    char* p = ::mkdtemp(buf.data());
    if (!p) throw std::runtime_error("mkdtemp failed");
    path_ = p;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }
  size_t entries() const {
    size_t n = 0;
    for (auto it = std::filesystem::directory_iterator(path_); it != std::filesystem::directory_iterator(); ++it) ++n;
    return n;
  }

 private:
  std::string path_;
};

const Opcode kAllOpcodes[] = {Opcode::kLoad, Opcode::kStore, Opcode::kGemm, Opcode::kFinish, Opcode::kAlu};

TEST(Disassemble, LoadLineByHand) {
  Isa isa(Config::load("default"));
  Insn i;
  i.opcode = Opcode::kLoad;
  i.memType = static_cast<uint32_t>(MemId::kInp);
  i.popNext = true;
  i.sramBase = 5;
  i.dramBase = 0x1234;
  i.ySize = 3;
  i.xSize = 4;
  i.xStride = 7;
  i.yPad0 = 1;
  i.xPad1 = 2;
  EXPECT_EQ(disassemble(isa, i),
            "LOAD.INP deps=pop_next sram_base=5 dram_base=0x1234 y_size=3 x_size=4 x_stride=7 y_pad_0=1 "
            "y_pad_1=0 x_pad_0=0 x_pad_1=2");
  EXPECT_EQ(disassemble(isa, isa.encode(i)), disassemble(isa, i));
}

TEST(Disassemble, AluGemmFinishLinesByHand) {
  Isa isa(Config::load("small"));
  Insn a;
  a.opcode = Opcode::kAlu;
  a.aluOp = static_cast<uint32_t>(AluOp::kAdd);
  a.uopEnd = 1;
  a.iterOut = 1;
  a.iterIn = 1;
  a.useImm = true;
  a.imm = -5;
  a.popPrev = true;
  a.pushNext = true;
  EXPECT_EQ(disassemble(isa, a),
            "ALU.ADD deps=pop_prev|push_next reset=0 uop_bgn=0 uop_end=1 iter_out=1 iter_in=1 dst_factor_out=0 "
            "dst_factor_in=0 src_factor_out=0 src_factor_in=0 use_imm=1 imm=-5");
  Insn g;
  g.opcode = Opcode::kGemm;
  g.reset = true;
  g.uopEnd = 2;
  g.iterOut = 3;
  g.iterIn = 4;
  g.wgtFactorIn = 9;
  EXPECT_EQ(disassemble(isa, g),
            "GEMM deps=- reset=1 uop_bgn=0 uop_end=2 iter_out=3 iter_in=4 dst_factor_out=0 dst_factor_in=0 "
            "src_factor_out=0 src_factor_in=0 wgt_factor_out=0 wgt_factor_in=9");
  Insn f;
  f.opcode = Opcode::kFinish;
  EXPECT_EQ(disassemble(isa, f), "FINISH deps=-");
  f.popNext = true;
  EXPECT_EQ(disassemble(isa, f), "FINISH deps=pop_next");
  EXPECT_EQ(disassembleUop(Uop{3, 1, 0}), "UOP dst=3 src=1 wgt=0");
}

TEST(Disassemble, ProgramListingHasIndexPrefixes) {
  Isa isa(Config::load("small"));
  Insn f;
  f.opcode = Opcode::kFinish;
  std::string listing = disassembleProgram(isa, {isa.encode(f), isa.encode(f)});
  EXPECT_EQ(listing, "    0: FINISH deps=-\n    1: FINISH deps=-\n");
}

TEST(Disassemble, RawForInvalidOpcode) {
  Isa isa(Config::load("default"));
  RawInsn r;
  r.lo = 0xfedcba9876543215ull;  // low 3 bits 101 = opcode 5
  r.hi = 0x0011223344556677ull;
  std::string line = disassemble(isa, r);
  EXPECT_EQ(line, ".raw 0x0011223344556677fedcba9876543215  # invalid opcode 5");
  Assembly a = assemble(isa, line, "raw.s");
  ASSERT_EQ(a.insns.size(), 1u);
  EXPECT_EQ(a.insns[0], r);
  EXPECT_TRUE(a.uops.empty());
}

// Regression test: asm.h promises that an invalid opcode prints as ".raw ..."; the Insn overload
// once re-encoded the instruction with Isa::encode(), which throws for an invalid opcode.
TEST(Disassemble, InsnOverloadWithInvalidOpcodePrintsRaw) {
  Isa isa(Config::load("default"));
  Insn i;
  i.opcode = static_cast<Opcode>(6);
  i.popPrev = true;  // bit 3: raw lo = 6 | 8 = 0xe
  std::string line;
  EXPECT_NO_THROW(line = disassemble(isa, i));
  EXPECT_EQ(line, ".raw 0x0000000000000000000000000000000e  # invalid opcode 6");
}

TEST(AsmRoundTrip, RandomInstructionsEveryShippedConfig) {
  std::mt19937 rng(12345);
  for (const auto& name : shippedConfigNames()) {
    SCOPED_TRACE(name);
    Isa isa(Config::load(name));
    std::vector<RawInsn> program;
    for (Opcode op : kAllOpcodes) {
      for (int n = 0; n < 200; ++n) {
        RawInsn raw = randomRaw(isa, op, rng);
        std::string line = disassemble(isa, raw);
        Assembly a;
        ASSERT_NO_THROW(a = assemble(isa, line, "rt.s")) << line;
        ASSERT_EQ(a.insns.size(), 1u) << line;
        ASSERT_EQ(a.insns[0], raw) << line;
        program.push_back(raw);
      }
    }
    // Invalid opcodes round-trip through .raw.
    for (uint64_t op = 5; op < 8; ++op) {
      RawInsn raw;
      raw.lo = (rng() * 0x100000001ull & ~7ull) | op;
      raw.hi = uint64_t(rng()) << 32 | rng();
      program.push_back(raw);
    }
    std::shuffle(program.begin(), program.end(), rng);
    // The whole listing, with "<n>:" prefixes, assembles back to the program.
    Assembly all = assemble(isa, disassembleProgram(isa, program), "listing.s");
    EXPECT_EQ(all.insns, program);
  }
}

TEST(AsmRoundTrip, RandomUopsEveryShippedConfig) {
  std::mt19937 rng(99);
  for (const auto& name : shippedConfigNames()) {
    SCOPED_TRACE(name);
    Isa isa(Config::load(name));
    const auto& f = isa.layout().uopFormat();
    std::string text;
    std::vector<uint32_t> expect;
    for (int n = 0; n < 200; ++n) {
      Uop u;
      u.dst = std::uniform_int_distribution<uint32_t>(0, (1u << f[0].width) - 1)(rng);
      u.src = std::uniform_int_distribution<uint32_t>(0, (1u << f[1].width) - 1)(rng);
      u.wgt = std::uniform_int_distribution<uint32_t>(0, (1u << f[2].width) - 1)(rng);
      expect.push_back(isa.encodeUop(u));
      text += disassembleUop(u) + "\n";
    }
    Assembly a = assemble(isa, text, "uops.s");
    EXPECT_EQ(a.uops, expect);
    EXPECT_TRUE(a.insns.empty());
  }
}

TEST(Assemble, SyntaxFeatures) {
  Isa isa(Config::load("small"));
  // Comments, blank lines, index prefixes, hex and decimal, any field order, omitted fields zero,
  // lower-case mnemonics, "_idx" micro-op names.
  std::string text =
      "# a program\n"
      "\n"
      "  0: load.inp x_size=0x4 y_size=1 deps=pop_next|push_next x_stride=4 dram_base=16   # comment\n"
      "GEMM uop_end=1 iter_in=1 iter_out=1\n"
      "ALU.shr use_imm=1 imm=-0x10\n"
      "UOP wgt_idx=2 dst_idx=1 src=0x3\n"
      "FINISH\n";
  Assembly a = assemble(isa, text, "f.s");
  ASSERT_EQ(a.insns.size(), 4u);
  ASSERT_EQ(a.uops.size(), 1u);
  Insn load = isa.decode(a.insns[0]);
  EXPECT_EQ(load.opcode, Opcode::kLoad);
  EXPECT_EQ(load.memType, static_cast<uint32_t>(MemId::kInp));
  EXPECT_EQ(load.xSize, 4u);
  EXPECT_EQ(load.ySize, 1u);
  EXPECT_EQ(load.xStride, 4u);
  EXPECT_EQ(load.dramBase, 16u);
  EXPECT_TRUE(load.popNext);
  EXPECT_TRUE(load.pushNext);
  EXPECT_FALSE(load.popPrev);
  EXPECT_EQ(load.sramBase, 0u);
  Insn alu = isa.decode(a.insns[2]);
  EXPECT_EQ(alu.aluOp, static_cast<uint32_t>(AluOp::kShr));
  EXPECT_EQ(alu.imm, -16);
  EXPECT_TRUE(alu.useImm);
  EXPECT_EQ(isa.decodeUop(a.uops[0]), (Uop{1, 3, 2}));
  EXPECT_EQ(isa.decode(a.insns[3]).opcode, Opcode::kFinish);
}

TEST(Assemble, UnknownFieldReportsLineAndColumn) {
  Isa isa(Config::load("default"));
  // Line 2, "GEMM bogus=1": the field starts at column 6.
  Error e = assembleError(isa, "FINISH\nGEMM bogus=1\n");
  EXPECT_EQ(e.where(), "prog.s:2:6");
  EXPECT_TRUE(Contains(e.what(), "prog.s:2:6:"));
  EXPECT_TRUE(Contains(e.what(), "bogus"));
  // A field that exists, but not in this format.
  e = assembleError(isa, "GEMM imm=1");
  EXPECT_EQ(e.where(), "prog.s:1:6");
  EXPECT_TRUE(Contains(e.what(), "imm"));
  e = assembleError(isa, "UOP dst=1 idx=2");
  EXPECT_EQ(e.where(), "prog.s:1:11");
}

TEST(Assemble, DuplicateFieldReportsLineAndColumn) {
  Isa isa(Config::load("default"));
  // "GEMM uop_bgn=1 uop_bgn=2": the second one starts at column 16.
  Error e = assembleError(isa, "GEMM uop_bgn=1 uop_bgn=2");
  EXPECT_EQ(e.where(), "prog.s:1:16");
  EXPECT_TRUE(Contains(e.what(), "given twice"));
  e = assembleError(isa, "\n\nUOP dst=1 dst=2");
  EXPECT_EQ(e.where(), "prog.s:3:11");
}

TEST(Assemble, BadNumberReportsLineAndColumn) {
  Isa isa(Config::load("default"));
  // "GEMM uop_bgn=zz": the value starts at column 14.
  Error e = assembleError(isa, "GEMM uop_bgn=zz");
  EXPECT_EQ(e.where(), "prog.s:1:14");
  EXPECT_TRUE(Contains(e.what(), "bad number"));
  e = assembleError(isa, "LOAD.INP x_size=12abc");
  EXPECT_EQ(e.where(), "prog.s:1:17");
  e = assembleError(isa, "LOAD.INP x_size=0x");
  EXPECT_EQ(e.where(), "prog.s:1:17");
  // Values that wrap the 32-bit holder, or exceed the field, are rejected too.
  e = assembleError(isa, "LOAD.INP dram_base=-1");
  EXPECT_TRUE(Contains(e.what(), "prog.s:1:"));
  e = assembleError(isa, "ALU.ADD imm=40000");
  EXPECT_TRUE(Contains(e.what(), "prog.s:1:1:"));
  EXPECT_TRUE(Contains(e.what(), "imm"));
  e = assembleError(isa, "GEMM reset=2");
  EXPECT_TRUE(Contains(e.what(), "reset"));
}

TEST(Assemble, OtherMalformedLines) {
  Isa isa(Config::load("default"));
  EXPECT_EQ(assembleError(isa, "  JUMP x=1").where(), "prog.s:1:3");
  EXPECT_TRUE(Contains(assembleError(isa, "LOAD x_size=1").what(), "suffix"));
  EXPECT_TRUE(Contains(assembleError(isa, "LOAD.FOO x_size=1").what(), "FOO"));
  EXPECT_TRUE(Contains(assembleError(isa, "ALU.DIV").what(), "DIV"));
  EXPECT_TRUE(Contains(assembleError(isa, "GEMM.X").what(), "suffix"));
  EXPECT_EQ(assembleError(isa, "GEMM uop_bgn").where(), "prog.s:1:6");
  EXPECT_TRUE(Contains(assembleError(isa, "GEMM deps=pop_later").what(), "pop_later"));
  EXPECT_TRUE(Contains(assembleError(isa, "x3: FINISH").what(), "index prefix"));
  EXPECT_TRUE(Contains(assembleError(isa, "3:").what(), "index prefix"));
  EXPECT_TRUE(Contains(assembleError(isa, ".raw 0x1234").what(), "32 hex digits"));
  EXPECT_TRUE(Contains(assembleError(isa, ".raw 0x0000000000000000000000000000000g").what(), "hex"));
  EXPECT_TRUE(Contains(assembleError(isa, "UOP dst=5000").what(), "dst_idx"));
}

TEST(BinaryFiles, ProgramAndUopBytesAreLittleEndian) {
  RawInsn r;
  r.lo = 0x0807060504030201ull;
  r.hi = 0x100f0e0d0c0b0a09ull;
  std::vector<uint8_t> b = programBytes({r});
  ASSERT_EQ(b.size(), 16u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(b[i], i + 1);
  std::vector<uint8_t> u = uopBytes({0x04030201u, 0xa0b0c0d0u});
  EXPECT_EQ(u, (std::vector<uint8_t>{1, 2, 3, 4, 0xd0, 0xc0, 0xb0, 0xa0}));
}

TEST(BinaryFiles, WriteAndReadBack) {
  TempDir dir;
  Isa isa(Config::load("small"));
  Insn f;
  f.opcode = Opcode::kFinish;
  RawInsn a;
  a.lo = 0x1122334455667788ull;
  a.hi = 0x99aabbccddeeff00ull;
  std::vector<RawInsn> prog = {a, isa.encode(f)};
  writeBinaryFile(dir.file("p.bin"), programBytes(prog), false);
  EXPECT_EQ(readProgramFile(dir.file("p.bin")), prog);
  std::vector<uint32_t> uops = {1, 0xdeadbeef, 7};
  writeBinaryFile(dir.file("u.bin"), uopBytes(uops), false);
  EXPECT_EQ(readUopFile(dir.file("u.bin")), uops);
  EXPECT_EQ(readBinaryFile(dir.file("u.bin")).size(), 12u);
  EXPECT_EQ(dir.entries(), 2u);  // no temporary files left behind
}

TEST(BinaryFiles, TruncatedProgramIsRejected) {
  TempDir dir;
  std::vector<uint8_t> bytes(16 * 2 + 5, 0x03);
  writeBinaryFile(dir.file("t.bin"), bytes, false);
  std::string msg = errorOf([&] { readProgramFile(dir.file("t.bin")); });
  EXPECT_TRUE(Contains(msg, "truncated"));
  EXPECT_TRUE(Contains(msg, "t.bin"));
  EXPECT_TRUE(Contains(msg, "37"));
  // 24 bytes: one and a half instructions.
  writeBinaryFile(dir.file("t24.bin"), std::vector<uint8_t>(24, 0x03), false);
  EXPECT_TRUE(Contains(errorOf([&] { readProgramFile(dir.file("t24.bin")); }), "truncated"));
  writeBinaryFile(dir.file("e.bin"), {}, false);
  EXPECT_TRUE(Contains(errorOf([&] { readProgramFile(dir.file("e.bin")); }), "empty"));
  writeBinaryFile(dir.file("u.bin"), std::vector<uint8_t>(6, 0), false);
  EXPECT_TRUE(Contains(errorOf([&] { readUopFile(dir.file("u.bin")); }), "4-byte"));
  EXPECT_TRUE(Contains(errorOf([&] { readBinaryFile(dir.file("missing.bin")); }), "missing.bin"));
}

}  // namespace
