// Internal to the graph compiler: the segments partitioning forms, and the operand conventions DRAM planning and linking share.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tessera/compiler/ir/graph.h"
#include "tessera/compiler/model/compiled_model.h"
#include "tessera/hw/config.h"

namespace tessera::compiler::graph::detail {

// Consecutive accelerator nodes that run as one instruction stream (graph node indices, in order).
struct SegmentPlan {
  std::vector<int> nodes;
};

// What partitioning decides: the segments, and when each node runs.
struct Partition {
  std::vector<SegmentPlan> segments;  // parallel to model::CompiledModel::segments
  std::map<int, int> nodeTime;        // graph node -> its layer time (execution order)
  std::map<int, int> layerOfNode;     // accelerator node -> its model::CompiledModel::layers row
};

// Fills the model's steps, host steps, layer rows (accelerator rows are placeholders linking fills
// in), the host steps' constants and one empty Segment per accelerator segment.
Partition partition(const hw::Config& cfg, const ir::Graph& g, model::CompiledModel& m, std::ostream* printAfterAll);

// conv2d and dense read BLOCK_IN blocks; add and the poolings read the accumulator's 8-bit layout.
bool readsInputBlocks(const ir::Node& n);
int inputBlock(const hw::Config& cfg, const ir::Node& n);
// A layer's second activation operand (add's b, a fused residual add's residual), or "": it is in
// the accumulator's 8-bit layout, BLOCK_OUT channels a block.
const std::string& secondOperand(const ir::Node& n);
// A conv2d's weights given as an activation (node attribute runtime_weights=1, Operator::
// runtimeWeights): inputs[1], in BLOCK_OUT blocks, read as its weights buffer (op::weightsView); or "".
const std::string& runtimeWeightsOperand(const ir::Node& n);
// The activations a layer reads, each with the channel block of its layout.
std::vector<std::pair<std::string, int>> activationInputs(const hw::Config& cfg, const ir::Node& n);

}  // namespace tessera::compiler::graph::detail
