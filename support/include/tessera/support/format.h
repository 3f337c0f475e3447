// Number formatting shared by every library's messages and tables.
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

// "0x" and lower-case hex digits, no padding: how addresses and fields appear in every message.
std::string hex(uint64_t v);

// Decimal with a comma between each group of three digits (1234567 -> "1,234,567"), for tables.
std::string thousands(uint64_t v);

}  // namespace tessera
