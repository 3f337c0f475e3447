// Probes of steps that only move values: what a chain of host steps does to a tensor of its own positions.
#include "passes.h"
#include "tessera/compiler/host/executor.h"
#include "tessera/support/error.h"

namespace tessera::compiler::graph::detail {

using ir::Graph;
using ir::Tensor;

std::optional<Tensor> positionProbe(const Tensor& t) {
  const int64_t limit = int64_t(1) << 24;
  if (!t.hasShape) return std::nullopt;
  int64_t elements = 1;
  for (int64_t d : t.shape) {
    if (d < 0 || d >= limit) return std::nullopt;
    elements *= d;
    if (elements >= limit) return std::nullopt;
  }
  Tensor p = t;
  p.dtype = ir::DType::kFloat32;
  p.isConstant = false;
  p.ints.clear();
  p.floats.resize(size_t(elements));
  for (size_t k = 0; k < p.floats.size(); ++k) p.floats[k] = float(k + 1);
  return p;
}

std::optional<Tensor> runMovingSteps(const Graph& g, const std::vector<MovingStep>& steps, Tensor x) {
  try {
    for (const MovingStep& s : steps) {
      std::vector<const Tensor*> ins = {&x};
      for (size_t a = 1; a < s.node->inputs.size(); ++a) {
        const std::string& in = s.node->inputs[a];
        if (in.empty()) {
          ins.push_back(nullptr);
          continue;
        }
        if (!g.hasTensor(in) || !g.tensor(in).isConstant) return std::nullopt;
        ins.push_back(&g.tensor(in));
      }
      std::vector<Tensor> r = host::runHostNode(*s.node, ins, g.opset);
      if (s.output >= r.size()) return std::nullopt;
      x = std::move(r[s.output]);
      // Beyond 2^24 elements float32 stops counting positions exactly.
      if (x.floats.size() >= (size_t(1) << 24)) return std::nullopt;
    }
  } catch (const Error&) {
    return std::nullopt;  // the host reports what is wrong with the node when it runs it
  }
  return x;
}

}  // namespace tessera::compiler::graph::detail
