// Decoding and static validation of a program in DRAM, shared by every simulator so a bad
// program fails the same way on each of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/hw/counters.h"
#include "tessera/hw/dram.h"
#include "tessera/hw/isa.h"

namespace tessera::hw {

// "instruction 7 (GEMM)", "instruction 2 (LOAD.INP)", "instruction 5 (ALU.ADD)": how errors name
// an instruction.
std::string insnName(size_t index, const Insn& insn);

// The DRAM byte range [first, end) a non-NOP LOAD/STORE touches (empty when y_size is 0).
struct DramRange {
  uint64_t first = 0, end = 0;
};
DramRange dramRange(const Insn& insn, const Config& cfg);

// Decodes the `count` instructions at `insnPhys` and validates each: fields (Isa::validate) and
// the DRAM range of every LOAD/STORE (Dram::at). Throws tessera::Error naming the instruction and
// the field before anything executes.
std::vector<Insn> decodeProgram(const Isa& isa, const Dram& dram, uint64_t insnPhys, uint32_t count);
// decodeProgram, then the missing-FINISH error fsim would end the run with: what a driver of a
// device checks before it sends anything.
std::vector<Insn> decodeRunnableProgram(const Isa& isa, const Dram& dram, uint64_t insnPhys, uint32_t count);

// Throws the error Isa::validate or the DRAM range check words for an instruction the fast
// validation of a simulator refused (an internal error if neither does).
[[noreturn]] void validateOrThrow(const Isa& isa, const Dram& dram, const Insn& insn, size_t index);

// Instruction-level counters of a program that ran to completion, as fsim counts them (what the
// timed and C-simulation targets report besides their own cycle counters).
Counters countProgram(const std::vector<Insn>& prog, const Config& cfg);

}  // namespace tessera::hw
