// Partitioning: consecutive accelerator nodes become segments (one instruction stream each), the rest host steps.
#include <set>

#include "passes.h"
#include "tessera/compiler/op/print_after_all.h"
#include "partition.h"

namespace tessera::compiler::graph::detail {

using ir::Graph;
using ir::Node;
using model::CompiledModel;
using model::LayerInfo;
using model::Step;
using op::printDumpBanner;

bool readsInputBlocks(const Node& n) { return n.opType == "conv2d" || n.opType == "dense"; }

int inputBlock(const hw::Config& cfg, const Node& n) { return readsInputBlocks(n) ? cfg.blockIn : cfg.blockOut; }

namespace {

bool readsResidual(const Node& n) {
  return (n.opType == "conv2d" || n.opType == "dense") && n.inputs.size() > 7 && !n.inputs[7].empty();
}

}  // namespace

const std::string& secondOperand(const Node& n) {
  static const std::string none;
  if (n.opType == "add") return n.inputs.at(1);
  if (readsResidual(n)) return n.inputs[7];
  return none;
}

std::vector<std::pair<std::string, int>> activationInputs(const hw::Config& cfg, const Node& n) {
  std::vector<std::pair<std::string, int>> in = {{n.inputs.at(0), inputBlock(cfg, n)}};
  if (!secondOperand(n).empty()) in.push_back({secondOperand(n), cfg.blockOut});
  return in;
}

Partition partition(const hw::Config& cfg, const Graph& g, CompiledModel& m, std::ostream* printAfterAll) {
  Partition p;
  SegmentPlan current;
  std::set<std::string> producedInSegment;
  auto closeSegment = [&] {
    producedInSegment.clear();
    if (current.nodes.empty()) return;
    Step s;
    s.kind = Step::Kind::kSegment;
    s.index = int(p.segments.size());
    p.segments.push_back(current);
    m.segments.emplace_back();
    m.steps.push_back(s);
    current = SegmentPlan();
  };
  int layerTime = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (isAccelerator(n)) {
      // A convolution reading another accelerator output needs BLOCK_IN == BLOCK_OUT to share
      // its DRAM layout; otherwise the host repacks it between two segments.
      bool chains = !current.nodes.empty();
      if (chains && readsInputBlocks(n) && cfg.blockIn != cfg.blockOut && producedInSegment.count(n.inputs[0]))
        chains = false;
      if (!chains) closeSegment();
      current.nodes.push_back(int(i));
      // The table lists layers in execution order; linking fills this row in.
      p.layerOfNode[int(i)] = int(m.layers.size());
      m.layers.emplace_back();
      for (const std::string& o : n.outputs) producedInSegment.insert(o);
    } else {
      closeSegment();
      Step s;
      s.kind = Step::Kind::kHost;
      s.index = int(m.hostSteps.size());
      m.hostSteps.push_back({n});
      LayerInfo info;
      info.name = n.name;
      info.kind = n.opType;
      info.detail = n.label(g.opset);
      s.layer = int(m.layers.size());
      m.layers.push_back(info);
      m.steps.push_back(s);
      for (const std::string& in : n.inputs)
        if (!in.empty() && g.tensor(in).isConstant) m.constants[in] = g.tensor(in);
    }
    p.nodeTime[int(i)] = layerTime++;
  }
  closeSegment();
  if (printAfterAll) {
    std::ostream& os = *printAfterAll;
    printDumpBanner(os, "partitioning");
    for (const Step& s : m.steps) {
      if (s.kind == Step::Kind::kHost) {
        os << "host: " << m.hostSteps[size_t(s.index)].node.label(g.opset) << "\n";
        continue;
      }
      os << "accelerator segment " << s.index << " (one instruction stream):\n";
      for (int ni : p.segments[size_t(s.index)].nodes)
        os << "  " << g.nodes[size_t(ni)].opType << " '" << g.nodes[size_t(ni)].name << "'\n";
    }
  }
  return p;
}

}  // namespace tessera::compiler::graph::detail
