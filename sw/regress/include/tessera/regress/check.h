// The validity oracle: a static check that a program's result does not depend on timing.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/hw/isa.h"
#include "tessera/regress/program.h"

namespace tessera::regress {

// On-chip buffers as the ISA sees them (ACC_8BIT and OUT share the accumulator).
enum Buffer : int { kBufUop = 0, kBufInp = 1, kBufWgt = 2, kBufAcc = 3, kBufCount = 4 };

struct ByteRange {
  uint64_t lo = 0, hi = 0;  // [lo, hi)
};

// What one instruction touches: sorted, unique SRAM entries per buffer and merged DRAM ranges.
struct Accesses {
  std::vector<uint32_t> sramRead[kBufCount];
  std::vector<uint32_t> sramWrite[kBufCount];
  std::vector<ByteRange> dramRead;
  std::vector<ByteRange> dramWrite;
};

// Accesses of each instruction of `stream`, in stream order (micro-op contents follow the
// compute stage's order of LOAD.UOP and GEMM/ALU). Throws tessera::Error naming the instruction
// if a micro-op index leaves its buffer at some loop iteration, a LOAD.UOP does not read a micro-op
// region, a STORE does not write an OUT region, or any DRAM row is not inside one region.
std::vector<Accesses> analyze(const Program& p, const std::vector<hw::Insn>& stream);

// Happens-before between the instructions of a lowered program: in-order stages, and the k-th
// pop of a queue waiting for the k-th push. Built by running the token protocol with the config's
// queue depths, as the hardware would (each stage is in order and blocks on its queues, so the
// outcome, deadlock included, is the same for every timing). The ordering a full queue adds is
// not relied on. Throws tessera::Error on a deadlock, on tokens left at FINISH, or if FINISH does
// not wait for every instruction.
class HappensBefore {
 public:
  explicit HappensBefore(const Program& p);
  // Instruction a completes before instruction b starts.
  bool before(size_t a, size_t b) const {
    if (a == b) return false;
    if (stage_[a] == stage_[b]) return pos_[a] < pos_[b];
    return pos_[a] < start_[b][stage_[a]];
  }
  bool ordered(size_t a, size_t b) const { return before(a, b) || before(b, a); }

 private:
  std::vector<int> stage_;
  std::vector<uint32_t> pos_;                   // index among the instructions of its stage
  std::vector<std::array<uint32_t, 3>> start_;  // per stage: how many of its instructions are done
};

// Checks that `p` (lowered) is a valid, deterministic program, and throws tessera::Error(where,
// what) naming the first violation otherwise:
//  - regions page aligned, disjoint, inside [4 KiB, 4 GiB); the instruction region holds the
//    encoded stream; every instruction encodes and passes hw::Isa::validate; FINISH only last;
//  - the token protocol runs to FINISH without deadlock (bounded queues, as the hardware) and
//    leaves no token, and every instruction happens before FINISH;
//  - every SRAM read is preceded by a write of that entry, and every write of an entry is ordered
//    (by program order or tokens) with every read of it in another stage;
//  - STOREs never overlap each other, and a STORE and a LOAD touching the same byte are ordered.
// "Ordered" is happens-before through in-order stages and the k-th pop waiting for the k-th push;
// the ordering a full queue would add is not relied on.
void checkProgram(const Program& p);

}  // namespace tessera::regress
