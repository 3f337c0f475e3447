// Accelerator nodes: the domain and op types the passes create, and the operator and constants each one carries.
#include "passes.h"
#include "tessera/support/error.h"

namespace tessera::compiler::graph::detail {

using ir::Graph;
using ir::Node;
using ir::Tensor;
using op::Operator;
using op::OperatorData;

const char* const kTesseraDomain = "tessera";

bool isAccelerator(const Node& n) {
  return n.domain == kTesseraDomain && (n.opType == "conv2d" || n.opType == "dense" || n.opType == "add" ||
                                        n.opType == "maxpool" || n.opType == "avgpool" || n.opType == "scale" ||
                                        hasNoCode(n));
}

bool isConcat(const Node& n) { return n.domain == kTesseraDomain && n.opType == "concat"; }

bool isScatter(const Node& n) { return n.domain == kTesseraDomain && model::isScatterKind(n.opType); }

bool hasNoCode(const Node& n) { return isConcat(n) || isScatter(n); }

model::Scatter scatterOf(const Graph& g, const Node& n) {
  auto it = n.attrs.find("spec");
  const std::string spec = it == n.attrs.end() ? std::string() : it->second.s;
  const Tensor& in = g.tensor(n.inputs.at(0));
  if (in.shape.size() != 4) throw Error(g.origin, n.opType + " node '" + n.name + "': its input is not NCHW");
  return model::parseScatter(n.opType, spec, in.shape[2], in.shape[3], g.origin + ": node '" + n.name + "'");
}

Operator acceleratorOperator(const Graph& g, const Node& n) {
  auto it = n.attrs.find("spec");
  if (it == n.attrs.end()) throw Error(g.origin, "accelerator node '" + n.name + "' has no spec");
  Operator op = Operator::parse(it->second.s, "node '" + n.name + "'");
  op.name = n.name;
  return op;
}

OperatorData acceleratorConstants(const Graph& g, const Node& n) {
  OperatorData d;
  if (n.opType != "conv2d" && n.opType != "dense") return d;
  const Tensor& w = g.tensor(n.inputs.at(1));
  if (w.isConstant) {  // else weights given at run time (an activation)
    d.weights.reserve(w.ints.size());
    for (int64_t v : w.ints) d.weights.push_back(static_cast<int8_t>(v));
  }
  const Tensor& b = g.tensor(n.inputs.at(2));
  for (int64_t v : b.ints) d.bias.push_back(static_cast<int32_t>(v));
  if (n.inputs.size() > 3 && !n.inputs[3].empty()) {
    const Tensor& m = g.tensor(n.inputs[3]);
    for (int64_t v : m.ints) d.multipliers.push_back(static_cast<int32_t>(v));
  }
  if (n.inputs.size() > 5 && !n.inputs[4].empty()) {
    for (int64_t v : g.tensor(n.inputs[4]).ints) d.clipLow.push_back(static_cast<int32_t>(v));
    for (int64_t v : g.tensor(n.inputs[5]).ints) d.clipHigh.push_back(static_cast<int32_t>(v));
  }
  if (n.inputs.size() > 6 && !n.inputs[6].empty())
    for (int64_t v : g.tensor(n.inputs[6]).ints) d.multipliersLow.push_back(static_cast<int32_t>(v));
  if (n.inputs.size() > 8 && !n.inputs[8].empty())
    for (int64_t v : g.tensor(n.inputs[8]).ints) d.leakyMultipliers.push_back(static_cast<int32_t>(v));
  return d;
}

}  // namespace tessera::compiler::graph::detail
