// Helpers shared by the hw unit tests: error capture and random instructions.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "tessera/support/error.h"
#include "tessera/hw/isa.h"

#include "error_of.h"

namespace tessera::hw::testing {

using tessera::testutil::errorOf;

// A random instruction of opcode `op`: every field of its format random within its width.
inline Insn randomInsn(const InsnLayout& layout, Opcode op, std::mt19937& rng) {
  Insn insn;
  insn.opcode = op;
  for (const auto& p : layout.format(op)) {
    if (p.field == Field::kOpcode) continue;
    if (p.isSigned) {
      std::uniform_int_distribution<int64_t> d(-(int64_t(1) << (p.width - 1)), (int64_t(1) << (p.width - 1)) - 1);
      insn.set(p.field, d(rng));
    } else {
      std::uniform_int_distribution<uint64_t> d(0, (uint64_t(1) << p.width) - 1);
      insn.set(p.field, static_cast<int64_t>(d(rng)));
    }
  }
  return insn;
}

}  // namespace tessera::hw::testing
