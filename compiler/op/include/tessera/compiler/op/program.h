// A compiled operator: instructions, micro-ops, constant data and buffer layouts; its file format and runner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/compiler/op/operator.h"
#include "tessera/hw/config.h"
#include "tessera/hw/counters.h"
#include "tessera/hw/isa.h"

namespace tessera::runtime {
class Session;
}

namespace tessera::compiler::op {

enum class BufferRole : uint32_t { kInput = 0, kOutput = 1, kConstant = 2 };

// One DRAM buffer the program reads or writes. Instructions index it in elements of `memType`
// (hw::MemId), relative to its start; the runner relocates them to wherever it is allocated.
struct ProgramBuffer {
  std::string name;  // "input", "input2" (add's second operand), "output", "weights", "bias", "uops"
  BufferRole role = BufferRole::kConstant;
  uint32_t memType = 0;
  uint64_t bytes = 0;
  std::string layout;         // the packed layout, for people
  std::vector<uint8_t> data;  // constants: their bytes, already in DRAM layout
};

// Figures of one compiled operator (the per-operator summary).
struct ProgramSummary {
  std::string tiling;            // tile sizes and loop order, one line
  uint64_t tiles = 0, steps = 0;  // output tiles, and load/compute steps over the reduction
  // SRAM entries in use (both halves of double-buffered tiles) and each buffer's depth.
  uint64_t inpEntries = 0, wgtEntries = 0, accEntries = 0, uopEntries = 0;
  uint64_t macs = 0;          // of the logical operator
  uint64_t paddedMacs = 0;    // executed by the GEMM core (channels and batch padded to blocks)
  double estimatedCycles = 0;  // the cost model's estimate for the chosen tiling
  uint64_t legalTilings = 0;   // tilings the search considered legal
};

struct Program {
  std::string configJson;  // hw::Config::toJson() of the config it was compiled for
  Operator op;
  std::vector<ProgramBuffer> buffers;
  std::vector<hw::Insn> insns;
  std::vector<int32_t> insnBuffer;  // per instruction: index into `buffers` its dram_base is relative to, or -1
  std::vector<hw::Uop> uops;        // the micro-op buffer's contents (loaded once by the first instruction)
  ProgramSummary summary;

  // Index of the buffer with that name; throws if there is none.
  int bufferIndex(const std::string& name) const;
  // Instruction counts by opcode (LOAD, STORE, GEMM, FINISH, ALU) and dependency-only NOPs.
  void countInsns(uint64_t byOpcode[5], uint64_t* nops) const;
  // DRAM bytes LOAD reads (UOP, WGT, INP, ACC) and STORE writes, from the instructions.
  uint64_t dramReadBytes(const hw::Config& cfg) const;
  uint64_t dramWriteBytes(const hw::Config& cfg) const;

  // The constant operands in logical layouts (weights [O][C][KH][KW], bias [O]), unpacked from the
  // buffers (none for add and the poolings); the inputs are empty. With them a loaded program can be
  // checked against the reference.
  OperatorData constants() const;

  // The file format of docs/compiler.md.
  std::vector<uint8_t> serialize() const;
  static Program deserialize(const std::vector<uint8_t>& bytes, const std::string& origin);
  void save(const std::string& path, bool overwrite) const;
  static Program load(const std::string& path);
};

struct RunResult {
  std::vector<int8_t> output;  // logical [N][O][OH][OW]
  hw::Counters counters;       // of this run
  double deviceSeconds = 0;
};

// Runs `program` on the session's target (the calling thread's device): allocates and fills its
// buffers, relocates and writes the instructions, runs them, reads the output and frees
// everything. The inputs are `data.input` (and, for add, `data.input2`), logical [N][C][H][W], and
// with wgt=input `data.weights`, logical [O][C/G][KH][KW]; the constants come from the program. Throws tessera::Error if the session's config is not the
// program's, an input has the wrong size, or the device faults.
RunResult runProgram(const Program& program, runtime::Session& session, const OperatorData& data,
                     uint32_t waitCycles = 0);

}  // namespace tessera::compiler::op
