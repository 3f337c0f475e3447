// Instruction streams shaped like those other VTA toolchains (TVM's VTA flow) produce: deterministic,
// seeded programs with their DRAM images, for measuring simulators on shapes Tessera's own
// compiler never emits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/hw/isa.h"

namespace tessera::streams {

// One DRAM image: `bytes` at physical address `base` (page aligned, below 4 GiB).
struct Region {
  std::string name;  // "inp", "uops", "insns", ...
  uint64_t base = 0;
  std::vector<uint8_t> bytes;
};

// A range the program writes with STOREs (every byte of it), read back after a run.
struct Output {
  std::string name;
  uint64_t base = 0, bytes = 0;
};

struct Stream {
  hw::Config cfg;
  std::string shape;
  uint64_t seed = 0;
  double scale = 1.0;
  std::vector<Region> regions;  // data and micro-ops first; the last one holds the instructions
  std::vector<hw::Insn> insns;  // the stream, FINISH last, encoded in regions.back()
  std::vector<Output> outputs;  // disjoint from every region

  uint64_t insnBase() const { return regions.back().base; }
  uint32_t insnCount() const { return static_cast<uint32_t>(insns.size()); }
  // The bytes of the region named `name` (micro-ops: "uops"), 0 if there is none.
  uint64_t regionBytes(const std::string& name) const;
  // One line: instructions by kind, micro-op and data bytes, the largest GEMM/ALU micro-op loop.
  std::string summary() const;
};

struct ShapeInfo {
  const char* name;
  const char* description;
};
// The shapes generate() knows, in the order `tessera stream --list` prints them.
const std::vector<ShapeInfo>& shapes();

// Generates `shape` for `cfg` from `seed`. `scale` (> 0) multiplies the shape's size (the number
// of tiles or rows), so tests can run small versions of the big shapes; 1 is the measured size.
// Every stream is valid on every config: tile sizes follow the config's buffer depths, every SRAM
// entry is written before it is read, every cross-stage access is ordered by tokens (so any
// correct simulator gives the same bytes), and STOREs cover their outputs exactly.
// Throws tessera::Error for an unknown shape or a scale that leaves nothing to run.
Stream generate(const hw::Config& cfg, const std::string& shape, uint64_t seed, double scale = 1.0);

// Writes every region of `s` into `dram` (which must be fresh: outputs read as zero).
void place(const Stream& s, hw::Dram& dram);

}  // namespace tessera::streams
