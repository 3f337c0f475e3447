// Internal to the graph compiler: DRAM planning, one liveness-planned arena for the activations of every segment.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "partition.h"

namespace tessera::compiler::graph::detail {

// One activation a segment touches, in one channel block's layout.
struct Slot {
  std::string tensor;
  int block = 0;
  int n = 1, c = 1, h = 1, w = 1;
  uint64_t bytes = 0;
  int start = 0, end = 0;  // layer times (inclusive)
  uint64_t offset = 0;     // bytes into the arena
  std::vector<int64_t> shape;
};

struct DramPlan {
  uint64_t alignment = 64;              // of every slot (regionAlignment)
  std::map<std::string, Slot> slots;    // by slotKey
  std::map<size_t, std::vector<std::string>> inputsOf, outputsOf;  // per segment: slot keys
  const Slot& slot(size_t segment, const std::string& tensor, int block) const;
};

std::string slotKey(size_t segment, const std::string& tensor, int block);

// Every DRAM element size of the config divides this, so a region offset that is a multiple of it
// is a whole number of elements for any instruction.
uint64_t regionAlignment(const hw::Config& cfg);
uint64_t alignUp(uint64_t v, uint64_t a);

// Slots for each segment's inputs, intermediates and outputs, with their lifetimes in layer times;
// slots whose lifetimes do not overlap share memory, first fit by address. Sets the model's arena sizes.
DramPlan planDram(const hw::Config& cfg, const ir::Graph& g, const Partition& p, model::CompiledModel& m,
                  std::ostream* printAfterAll);

}  // namespace tessera::compiler::graph::detail
