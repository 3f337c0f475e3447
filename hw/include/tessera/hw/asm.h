// Disassembler and assembler: one readable text line per instruction or micro-op, and back.
#pragma once

#include <string>
#include <vector>

#include "tessera/hw/isa.h"

namespace tessera::hw {

// One line, e.g. "LOAD.INP deps=pop_next sram_base=0 dram_base=0x100 y_size=1 ...".
// Every field of the instruction's format is printed with its VTA name; FINISH prints only the
// fields that are non-zero. An invalid opcode prints as ".raw 0x<32 hex digits>".
std::string disassemble(const Isa& isa, const RawInsn& raw);
std::string disassemble(const Isa& isa, const Insn& insn);
// The line's first word: "LOAD.INP", "GEMM", "ALU.MUL", "FINISH".
std::string mnemonic(const Insn& insn);
// "UOP dst=3 src=1 wgt=0".
std::string disassembleUop(const Uop& uop);
// A listing: "<index>: <line>" per instruction.
std::string disassembleProgram(const Isa& isa, const std::vector<RawInsn>& program);

struct Assembly {
  std::vector<RawInsn> insns;
  std::vector<uint32_t> uops;
};

// Parses text written by disassemble(): one instruction or UOP per line, an optional "<n>:" index
// prefix, '#' comments, hex (0x) or decimal numbers, fields in any order, omitted fields zero.
// Throws tessera::Error with "origin:line:column" on any malformed line.
Assembly assemble(const Isa& isa, const std::string& text, const std::string& origin);

// Binary files: instructions are 16 bytes each, micro-ops 4 bytes each, little endian.
std::vector<RawInsn> readProgramFile(const std::string& path);
std::vector<uint32_t> readUopFile(const std::string& path);
std::vector<uint8_t> programBytes(const std::vector<RawInsn>& program);
std::vector<uint8_t> uopBytes(const std::vector<uint32_t>& uops);

}  // namespace tessera::hw
