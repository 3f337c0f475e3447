// Internal to the graph compiler: linking, each segment's layers compiled and joined into one instruction stream.
#pragma once

#include <ostream>

#include "dram_plan.h"
#include "partition.h"

namespace tessera::compiler::graph::detail {

// Compiles every layer of every segment with the operator compiler, places its constants in the
// model's constants image and its activations in their slots, and links the layers of a segment
// into one stream with one FINISH; fills in the layers' rows and the segments.
void link(const hw::Config& cfg, const ir::Graph& g, const Partition& p, const DramPlan& plan, model::CompiledModel& m,
          std::ostream* printAfterAll);

}  // namespace tessera::compiler::graph::detail
