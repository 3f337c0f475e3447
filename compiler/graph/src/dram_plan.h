// Internal to the graph compiler: DRAM planning, one liveness-planned arena for the activations of every segment.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "partition.h"

namespace tessera::compiler::graph::detail {

// One activation a segment touches, in one channel block's layout: where it lies in the arena
// (what the segment's inputs and outputs record), and when it lives.
struct Slot : model::SegmentTensor {
  int start = 0, end = 0;  // layer times (inclusive)
};

struct DramPlan {
  uint64_t alignment = 64;              // of every slot (regionAlignment)
  std::map<std::string, Slot> slots;    // by slotKey
  // A concat node's inputs: slices of its output's slot (their key -> the output's key and the
  // byte offset in it), placed with it rather than on their own.
  std::map<std::string, std::pair<std::string, uint64_t>> aliasOf;
  std::map<size_t, std::vector<std::string>> inputsOf, outputsOf;  // per segment: slot keys
  const Slot& slot(size_t segment, const std::string& tensor, int block) const;
};

std::string slotKey(size_t segment, const std::string& tensor, int block);

// Every DRAM element size of the config divides this, so a region offset that is a multiple of it
// is a whole number of elements for any instruction.
uint64_t regionAlignment(const hw::Config& cfg);
uint64_t alignUp(uint64_t v, uint64_t a);

// Slots for each segment's inputs, intermediates and outputs, with their lifetimes in layer times;
// slots whose lifetimes do not overlap share memory, first fit by address; a concat's inputs are
// consecutive slices of its output's slot (one batch block: a channel block's whole image is
// contiguous in NCHW{BATCH}n{BLOCK}c). Sets the model's arena sizes.
DramPlan planDram(const hw::Config& cfg, const ir::Graph& g, const Partition& p, model::CompiledModel& m,
                  std::ostream* printAfterAll);

}  // namespace tessera::compiler::graph::detail
