// Fuzz harness: arbitrary bytes as a compiled-operator program file (tessera compile -o) and as a raw instruction file.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "checksummed.h"
#include "tessera/compiler/op/program.h"
#include "tessera/hw/asm.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"

namespace {

using namespace tessera;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "program_file: %s\n", what.c_str());
  std::abort();
}

// A raw program (tessera asm's .bin, tessera sim --insn FILE): every instruction, valid or not,
// disassembles to text that assembles back to the same decoded fields.
void rawProgram(const uint8_t* data, size_t size) {
  static const hw::Config cfg = hw::Config::load("default");
  static const hw::Isa isa(cfg);
  for (size_t i = 0; i + 16 <= size && i < 16 * 64; i += 16) {
    const hw::RawInsn raw = hw::Isa::rawFromBytes(data + i);
    const std::string line = hw::disassemble(isa, raw);
    hw::Assembly back;
    try {
      back = hw::assemble(isa, line, "disassembly");
    } catch (const Error& e) {
      fail("the disassembly of an instruction does not assemble: " + line + ": " + e.what());
    }
    if (back.insns.size() != 1 || isa.decode(back.insns[0]) != isa.decode(raw))
      fail("an instruction changes in a disassembly round trip: " + line);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rawProgram(data, size);
  compiler::op::Program p;
  try {
    p = compiler::op::Program::deserialize(fuzz::withChecksum(data, size), "fuzz.tsp");
  } catch (const Error&) {
    return 0;
  }
  // An accepted file is one the writer could have written: it must read back the same.
  const std::vector<uint8_t> written = p.serialize();
  try {
    if (compiler::op::Program::deserialize(written, "written back").serialize() != written)
      fail("a program file does not read back as written");
    (void)p.constants();
  } catch (const Error& e) {
    fail(std::string("an accepted program file, written back, is refused: ") + e.what());
  }
  return 0;
}
