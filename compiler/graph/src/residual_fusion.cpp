// The residual-fusion pass: an accelerator add of a convolution's (or dense layer's) output, used
// nowhere else, becomes that layer's fused residual add.
#include <set>

#include "passes.h"
#include "tessera/support/error.h"

namespace tessera::compiler::graph::detail {

using ir::Graph;
using ir::Node;
using op::Operator;

namespace {

// The layer `a` comes from, if it can take a residual add of it: a conv2d/dense accelerator node
// without one, whose output only the add at `addIndex` reads and the caller does not see.
int fusableProducer(const Graph& g, const std::string& a, int addIndex) {
  const int p = g.producer(a);
  if (p < 0) return -1;
  const Node& n = g.nodes[size_t(p)];
  if (!isAccelerator(n) || (n.opType != "conv2d" && n.opType != "dense")) return -1;
  if (g.consumers(a) != std::vector<int>{addIndex}) return -1;
  for (const std::string& out : g.outputs)
    if (out == a) return -1;
  return acceleratorOperator(g, n).residual ? -1 : p;
}

}  // namespace

int fuseResidualAdds(Graph& g) {
  std::set<int> fusedAway;
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& add = g.nodes[i];
    if (!isAccelerator(add) || add.opType != "add" || add.inputs.size() < 2) continue;
    const Operator sum = acceleratorOperator(g, add);
    for (int side = 0; side < 2; ++side) {
      const std::string& a = add.inputs[size_t(side)];
      const std::string& b = add.inputs[size_t(1 - side)];
      if (a == b) break;
      const int p = fusableProducer(g, a, int(i));
      if (p < 0 || fusedAway.count(p)) continue;
      Operator layer = acceleratorOperator(g, g.nodes[size_t(p)]);
      if (layer.batch != sum.batch || layer.outChannels != sum.outChannels || layer.outHeight() != sum.height ||
          layer.outWidth() != sum.width)
        continue;
      // Zero points: the layer's output zero point is the first operand's (the residual add
      // subtracts it); the other operand's is res_bzp. Both join the wide rounding row.
      const int za = side == 0 ? sum.zeroPointA : sum.zeroPointB, zb = side == 0 ? sum.zeroPointB : sum.zeroPointA;
      if (za != layer.epilogue.outputZeroPoint) continue;
      layer.residual = true;
      layer.residualA = side == 0 ? sum.scaleA : sum.scaleB;
      layer.residualB = side == 0 ? sum.scaleB : sum.scaleA;
      layer.residualZeroPointB = zb;
      layer.residualEpilogue = sum.epilogue;
      try {
        layer.validate();
      } catch (const Error&) {
        continue;  // a form the fused epilogue cannot take stays a separate add
      }
      // The fused layer runs where the add ran: both of the add's operands exist there, and
      // nothing between the layer and the add read the layer's output.
      Node f = g.nodes[size_t(p)];
      f.name = f.name + "+" + add.name;
      f.attrs["spec"].s = layer.spec();
      f.outputs = add.outputs;
      // Inputs: x, weights, bias, multipliers, clip low, clip high, low multiplier bits (empty
      // when absent), residual, PRelu's slopes (when present).
      const std::string slopes = f.inputs.size() > 8 ? f.inputs[8] : std::string();
      f.inputs.resize(7);
      f.inputs.push_back(b);
      if (!slopes.empty()) f.inputs.push_back(slopes);
      g.nodes[i] = std::move(f);
      fusedAway.insert(p);
      ++fused;
      break;
    }
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!fusedAway.count(int(i))) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  return fused;
}

}  // namespace tessera::compiler::graph::detail
