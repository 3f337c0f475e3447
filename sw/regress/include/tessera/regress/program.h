// A regression program: DRAM regions, instructions without tokens, and their lowering to a VTA stream.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/isa.h"

namespace tessera::regress {

// What a DRAM region holds. Only OUT regions are ever written by STOREs; everything else is
// read-only for the whole run, which is what lets the checker reason about DRAM races.
enum class RegionKind { kInsn, kUop, kInp, kWgt, kAcc, kAcc8, kOut };
const char* regionKindName(RegionKind kind);

struct Region {
  std::string name;          // e.g. "inp", "out1"; unique within a program
  RegionKind kind = RegionKind::kInp;
  uint64_t base = 0;         // physical byte address, page aligned, below 4 GiB
  std::vector<uint8_t> init; // contents before the run; its size is the region's size
  uint64_t end() const { return base + init.size(); }
};

// One instruction as generated: dependency flags all clear (lower() adds them). `block` groups
// the instructions generated together, so the shrinker can remove them as a unit; `id` is stable
// across shrinking and names the instruction in OrderEdges.
struct Op {
  uint32_t id = 0;
  uint32_t block = 0;
  hw::Insn insn;
};

// An ordering asked for on top of the data dependences (the generator's random extra tokens):
// op `from` completes before op `to` starts.
struct OrderEdge {
  uint32_t from = 0, to = 0;
};

struct Program {
  hw::Config cfg;
  uint64_t seed = 0;
  std::string size;             // the generator's size knob, for reproduction
  std::vector<Region> regions;  // the last one is the instruction region
  std::vector<Op> ops;          // in stream order; the sequential meaning of the program
  std::vector<OrderEdge> edges;
  // Percent chance, each time lowering adds a push, that it first adds 1-3 more pushes on earlier
  // instructions of the same stage, all popped by the same consumer: tokens no data needs, several
  // in flight at once and several pops (NOPs) before one instruction.
  uint32_t extraTokenPercent = 0;

  // Filled by lower(): the instruction stream (FINISH last) and, per instruction, the index in
  // `ops` it came from, or -1 for the NOPs and the FINISH that lowering added.
  std::vector<hw::Insn> insns;
  std::vector<int> insnOp;

  const Region& insnRegion() const { return regions.back(); }
  uint64_t insnBase() const { return insnRegion().base; }
  uint32_t insnCount() const { return static_cast<uint32_t>(insns.size()); }
};

// Turns `ops` into a runnable stream: every pair of accesses that conflict (same SRAM entry or
// DRAM byte, one of them a write) in different stages, every OrderEdge, and "everything before
// FINISH" become dependency tokens. The k-th pop of a queue waits for the k-th push, so a push is
// placed on the earlier instruction and enough pops before the later one; extra pops and the
// load<->store orderings (which have no queue of their own and go through a compute NOP) use
// zero-width NOPs; extraTokenPercent adds more. The stream is encoded into the instruction region. Throws tessera::Error if an
// op is out of range (see analyze in check.h).
void lower(Program& p);

// Rough cycle count of a cycle-accurate run with no overlap between stages: DRAM beats and one
// latency of hw::DramTiming's default per row, SRAM writes of padding, micro-ops, per-instruction
// overhead. Sizes programs and bounds watchdogs.
uint64_t estimateCycles(const hw::Config& cfg, const std::vector<hw::Insn>& insns);

// Human-readable listing: the regions, then "index: disassembly" per instruction with the op and
// block it came from (or what lowering added it for), and the micro-ops each LOAD.UOP loads.
std::string listing(const Program& p);

// Number of instructions that are not zero-width NOPs and not FINISH.
size_t workInstructions(const Program& p);

}  // namespace tessera::regress
