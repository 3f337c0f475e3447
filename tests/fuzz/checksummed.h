// Shared by the file-format harnesses: a fuzz input as a file body with its checksum appended, so mutations reach the parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/compiler/op/binary_io.h"

namespace tessera::fuzz {

// Program and compiled-model files end in an FNV-1a checksum of everything before it; random
// bytes almost never match one, so the body is fuzzed and the checksum computed. Seed corpora hold
// bodies (the files without their last 8 bytes).
inline std::vector<uint8_t> withChecksum(const uint8_t* data, size_t size) {
  std::vector<uint8_t> file(data, data + size);
  const uint64_t sum = compiler::op::fnv1a(data, size);
  for (int i = 0; i < 8; ++i) file.push_back(static_cast<uint8_t>(sum >> (8 * i)));
  return file;
}

}  // namespace tessera::fuzz
