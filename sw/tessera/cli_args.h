// Parsers of the CLI's number, address and range arguments, free of the CLI so tests and fuzzers call them.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::cli {

// Instruction fetch addresses are 32-bit physical addresses (VTA's vta_phy_addr_t, the RTL's AXI
// addresses): a stream given by address must end at or below this.
constexpr uint64_t kInsnAddressLimit = uint64_t(1) << 32;

// Unsigned integer in decimal or 0x-hex; throws tessera::Error naming `what`.
uint64_t parseNumber(const std::string& text, const std::string& what);

// `tessera sim --insn ADDR:COUNT`: instructions already in DRAM. COUNT is at least 1 and the
// stream [ADDR, ADDR + 16*COUNT) ends at or below kInsnAddressLimit.
struct InsnRange {
  uint64_t addr = 0;
  uint32_t count = 0;
};
InsnRange parseInsnRange(const std::string& spec);

// `tessera sim --load FILE@ADDR` (the last '@' separates, so file names may contain one).
struct LoadSpec {
  std::string file;
  uint64_t addr = 0;
};
LoadSpec parseLoadSpec(const std::string& spec);

// `tessera sim --dump ADDR:BYTES:FILE`: ADDR + BYTES without overflow.
struct DumpSpec {
  uint64_t addr = 0, bytes = 0;
  std::string file;
};
DumpSpec parseDumpSpec(const std::string& spec);

}  // namespace tessera::cli
