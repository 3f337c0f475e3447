// Shared by the tsim, rtl-sc and hls-sc tests: where programs go, the ALU example, a DRAM holding a program, an unbuilt config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/hw/asm.h"
#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"

namespace tessera::tsim::testing {

using tessera::hw::Config;
using tessera::hw::Dram;

constexpr uint64_t kUopAddr = 0x20000;   // micro-ops (UOP index 0x8000)
constexpr uint64_t kAccAddr = 0x10000;   // accumulators (ACC index 0x400 on default)
constexpr uint64_t kInsnAddr = 0x40000;  // the program

// Adds -3 to 16 accumulators and stores them narrowed (the CLI example).
inline const char* kAluProgram = R"(
LOAD.UOP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1
LOAD.ACC deps=- sram_base=0 dram_base=0x400 y_size=1 x_size=1 x_stride=1
ALU.ADD deps=push_next uop_bgn=0 uop_end=1 iter_out=1 iter_in=1 use_imm=1 imm=-3
STORE.OUT deps=pop_prev|push_prev sram_base=0 dram_base=0x3000 y_size=1 x_size=1 x_stride=1
LOAD.UOP deps=pop_next
FINISH
UOP dst=0 src=0 wgt=0
)";

// A GEMM over accumulator rows 0..63 and, behind it, an ALU instruction on 8 rows at `aluRow`, with
// input, weight and micro-op loads before and a STORE of the ALU's rows after; FINISH waits for the
// STORE. At aluRow 1024 (the other accumulator bank on default) the two footprints are apart and
// the compute stage runs them side by side; at 0 the ALU's rows are the GEMM's and it waits. A
// reset GEMM on the STORE's rows comes first (the ALU pipe's, like every reset GEMM).
inline std::string gemmAluProgram(int aluRow) {
  const std::string row = std::to_string(aluRow);
  return "LOAD.INP deps=- sram_base=0 dram_base=0x100 y_size=1 x_size=1 x_stride=1\n"
         "LOAD.WGT deps=push_next sram_base=0 dram_base=0x100 y_size=1 x_size=1 x_stride=1\n"
         "LOAD.UOP deps=pop_prev sram_base=0 dram_base=0x8000 y_size=1 x_size=2 x_stride=2\n"
         "GEMM deps=- reset=1 uop_bgn=1 uop_end=2 iter_out=8 iter_in=1 dst_factor_out=1\n"
         "GEMM deps=- uop_bgn=0 uop_end=1 iter_out=64 iter_in=1 dst_factor_out=1\n"
         "ALU.ADD deps=push_next uop_bgn=1 uop_end=2 iter_out=8 iter_in=1 dst_factor_out=1 src_factor_out=1 use_imm=1 imm=3\n"
         "STORE.OUT deps=pop_prev|push_prev sram_base=" + row + " dram_base=0x3000 y_size=1 x_size=8 x_stride=8\n"
         "FINISH deps=pop_next\n"
         "UOP dst=0 src=0 wgt=0\n"
         "UOP dst=" + row + " src=" + row + " wgt=0\n";
}
// Instruction indices in gemmAluProgram.
enum GemmAluInsn : uint32_t { kLoadInp, kLoadWgt, kLoadUop, kResetGemm, kGemm, kAlu, kStore, kFinish };

// kAluProgram's STORE: OUT element 0x3000 (a DRAM address in OUT elements, as VTA's), one element.
constexpr uint64_t kAluStoreIndex = 0x3000;
inline uint64_t aluStoreAddr(const Config& cfg) { return kAluStoreIndex * uint64_t(cfg.outElemBytes); }

// What kAluProgram stores on a LoadedMachine, worked out here from its data (accumulator i is
// 3i-50, minus 3, narrowed to int8), not by any simulator.
inline std::vector<uint8_t> aluExpectedTile(const Config& cfg) {
  std::vector<uint8_t> tile(static_cast<size_t>(cfg.outElemBytes));
  for (size_t i = 0; i < tile.size(); ++i) tile[i] = static_cast<uint8_t>(static_cast<int8_t>(3 * int(i) - 50 - 3));
  return tile;
}

// A byte no stored tile holds (aluExpectedTile spans -53..-8), written over the STORE's target
// first so a STORE that never happened cannot look like one that did.
constexpr uint8_t kUnwritten = 0x5A;

// Assembles `text` (UOP lines included) into `dram`: instructions at `at`, micro-ops at kUopAddr.
// Returns the instruction count.
inline uint32_t placeProgram(const Config& cfg, Dram& dram, const std::string& text, uint64_t at = kInsnAddr) {
  tessera::hw::Isa isa(cfg);
  auto a = tessera::hw::assemble(isa, text, "test program");
  auto bytes = tessera::hw::programBytes(a.insns);
  dram.write(at, bytes.data(), bytes.size(), "test program");
  if (!a.uops.empty()) {
    auto u = tessera::hw::uopBytes(a.uops);
    dram.write(kUopAddr, u.data(), u.size(), "test micro-ops");
  }
  return static_cast<uint32_t>(a.insns.size());
}

// A config and a DRAM holding `text` at kInsnAddr and 64 accumulators of data.
struct LoadedMachine {
  explicit LoadedMachine(const std::string& text, const std::string& config = "default") : cfg(Config::load(config)), dram(cfg) {
    for (int i = 0; i < 64; ++i) {
      int32_t v = 3 * i - 50;
      dram.write(kAccAddr + 4 * i, &v, 4, "test data");
    }
    count = placeProgram(cfg, dram, text);
    const std::vector<uint8_t> unwritten(static_cast<size_t>(cfg.outElemBytes), kUnwritten);
    dram.write(aluStoreAddr(cfg), unwritten.data(), unwritten.size(), "unwritten output");
  }
  // The OUT tile kAluProgram's STORE writes.
  std::vector<uint8_t> aluStoredTile() const {
    std::vector<uint8_t> tile(static_cast<size_t>(cfg.outElemBytes));
    dram.read(aluStoreAddr(cfg), tile.data(), tile.size(), "stored tile");
    return tile;
  }
  Config cfg;
  Dram dram;
  uint32_t count = 0;
};

// A valid config under a name no simulator was built for.
inline Config unbuiltConfig() {
  Config cfg = Config::load("default");
  cfg.name = "not-built";
  cfg.insnQueueDepth = 256;
  cfg.derive("test");
  return cfg;
}

}  // namespace tessera::tsim::testing
