// Partitioning: consecutive accelerator nodes become segments (one instruction stream each), the rest host steps.
#include <algorithm>
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

// Multiply-accumulates of a convolution or matrix product the host runs (0 for other operators and
// for tensors whose shape is unknown), so the reports' accelerator share counts host layers too.
uint64_t hostMacs(const Graph& g, const Node& n) {
  auto shapeOf = [&](size_t i) -> const std::vector<int64_t>* {
    if (i >= n.inputs.size() || n.inputs[i].empty() || !g.tensor(n.inputs[i]).hasShape) return nullptr;
    return &g.tensor(n.inputs[i]).shape;
  };
  auto product = [](std::vector<int64_t>::const_iterator b, std::vector<int64_t>::const_iterator e) {
    uint64_t p = 1;
    for (; b != e; ++b) p *= uint64_t(std::max<int64_t>(*b, 0));
    return p;
  };
  if (n.outputs.empty() || !g.tensor(n.outputs[0]).hasShape) return 0;
  const std::vector<int64_t>& out = g.tensor(n.outputs[0]).shape;
  const uint64_t outElements = product(out.begin(), out.end());
  const bool qlinear = n.opType == "QLinearConv" || n.opType == "QLinearMatMul";
  // The weight operand: QLinear ops put each operand's scale and zero point after it.
  const size_t weight = qlinear ? 3 : 1;
  const std::vector<int64_t>* w = shapeOf(weight);
  const std::vector<int64_t>* x = shapeOf(0);
  if (!w || w->empty()) return 0;
  if (n.opType == "Conv" || n.opType == "ConvInteger" || n.opType == "QLinearConv")
    return outElements * product(w->begin() + 1, w->end());  // each output: C/groups x kernel
  if (n.opType == "ConvTranspose")
    return x ? product(x->begin(), x->end()) * product(w->begin() + 1, w->end()) : 0;  // each input: M/groups x kernel
  if (n.opType == "Gemm") {
    const bool transB = n.attrInt("transB", 0) != 0;
    return w->size() == 2 ? outElements * uint64_t((*w)[transB ? 1 : 0]) : 0;
  }
  if (n.opType == "MatMul" || n.opType == "MatMulInteger" || n.opType == "QLinearMatMul")
    return x && !x->empty() ? outElements * uint64_t(x->back()) : 0;
  return 0;
}

bool readsResidual(const Node& n) {
  return (n.opType == "conv2d" || n.opType == "dense") && n.inputs.size() > 7 && !n.inputs[7].empty();
}

}  // namespace

const std::string& secondOperand(const Node& n) {
  static const std::string none;
  if (n.opType == "add" || n.opType == "scale") return n.inputs.at(1);
  if (readsResidual(n)) return n.inputs[7];
  return none;
}

const std::string& runtimeWeightsOperand(const Node& n) {
  static const std::string none;
  if (readsInputBlocks(n) && n.inputs.size() > 1 && !n.inputs[1].empty() && n.attrInt("runtime_weights", 0))
    return n.inputs[1];
  return none;
}

std::vector<std::pair<std::string, int>> activationInputs(const hw::Config& cfg, const Node& n) {
  if (isConcat(n)) {
    std::vector<std::pair<std::string, int>> in;
    for (const std::string& t : n.inputs) in.push_back({t, cfg.blockOut});
    return in;
  }
  std::vector<std::pair<std::string, int>> in = {{n.inputs.at(0), inputBlock(cfg, n)}};
  if (!secondOperand(n).empty()) in.push_back({secondOperand(n), cfg.blockOut});
  if (!runtimeWeightsOperand(n).empty()) in.push_back({runtimeWeightsOperand(n), cfg.blockOut});
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
      // A constant image a layer reads (an identity the layer transposes its weights with).
      for (const auto& [t, block] : activationInputs(cfg, n))
        if (g.tensor(t).isConstant) m.constants[t] = g.tensor(t);
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
      info.macs = hostMacs(g, n);
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
