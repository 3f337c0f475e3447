// Fuzz harness: arbitrary text through the assembler; what it accepts must disassemble and reassemble to the same instructions.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "tessera/hw/asm.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"

namespace {

using namespace tessera;

const hw::Isa& isa() {
  static const hw::Config cfg = hw::Config::load("default");
  static const hw::Isa instance(cfg);
  return instance;
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "asm_text: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  hw::Assembly first;
  try {
    first = hw::assemble(isa(), text, "fuzz.s");
  } catch (const Error&) {
    return 0;  // rejected with a located error: the contract
  }
  // The disassembler's text is the assembler's input language: the round trip must be exact.
  std::string listing;
  for (const auto& raw : first.insns) listing += hw::disassemble(isa(), raw) + "\n";
  for (uint32_t u : first.uops) listing += hw::disassembleUop(isa().decodeUop(u)) + "\n";
  hw::Assembly second;
  try {
    second = hw::assemble(isa(), listing, "disassembly");
  } catch (const Error& e) {
    fail(std::string("the disassembly of accepted text does not assemble: ") + e.what() + "\n" + listing);
  }
  // Compared decoded: a `.raw` line with a valid opcode may set bits no field of its format has,
  // which the hardware ignores and the field-by-field disassembly does not print.
  if (second.insns.size() != first.insns.size()) fail("the disassembly has another instruction count:\n" + listing);
  for (size_t i = 0; i < first.insns.size(); ++i)
    if (isa().decode(second.insns[i]) != isa().decode(first.insns[i]))
      fail("instruction " + std::to_string(i) + " differs after a disassembly round trip:\n" + listing);
  if (second.uops != first.uops) fail("micro-ops differ after a disassembly round trip:\n" + listing);
  return 0;
}
