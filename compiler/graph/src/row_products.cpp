// Row products as convolutions: a MatMul or Gemm of many rows by constant weights becomes a 1x1 convolution over the rows.
#include <algorithm>
#include <functional>
#include <numeric>

#include "passes.h"

namespace tessera::compiler::graph::detail {

using ir::DType;
using ir::Graph;
using ir::Node;
using ir::Tensor;

namespace {

// The bias of `add`, an Add of the product and a constant of `n` values (PyTorch's Linear on more
// than two dimensions exports MatMul then Add); empty when it is not one.
std::vector<float> addedBias(const Graph& g, const Node& add, const std::string& product, int64_t n) {
  if (!add.domain.empty() || add.opType != "Add" || add.inputs.size() != 2) return {};
  const std::string& other = add.inputs[0] == product ? add.inputs[1] : add.inputs[0];
  if (other == product || !isConst(g, other)) return {};
  const Tensor& c = g.tensor(other);
  if (c.dtype != DType::kFloat32 || c.elements() != n || c.shape.empty() || c.shape.back() != n) return {};
  return c.floats;
}

}  // namespace

void rowProductsAsConvolutions(const hw::Config& cfg, Graph& g) {
  std::vector<Node> out;
  std::vector<bool> dropped(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (dropped[i]) continue;
    const Node n = g.nodes[i];
    const bool gemm = n.opType == "Gemm", matmul = n.opType == "MatMul";
    bool candidate = n.domain.empty() && (gemm || matmul) && n.inputs.size() >= 2 && n.outputs.size() == 1 &&
                     g.hasTensor(n.inputs[0]) && isConst(g, n.inputs[1]);
    if (candidate && gemm)
      candidate = !n.attrInt("transA", 0) && n.attrFloat("alpha", 1) == 1.0f && n.attrFloat("beta", 1) == 1.0f &&
                  (n.inputs.size() < 3 || n.inputs[2].empty() || isConst(g, n.inputs[2]));
    const Tensor* a = candidate ? &g.tensor(n.inputs[0]) : nullptr;
    const Tensor* b = candidate ? &g.tensor(n.inputs[1]) : nullptr;
    candidate = candidate && !a->isConstant && a->hasShape && a->dtype == DType::kFloat32 && a->shape.size() >= 2 &&
                (gemm ? a->shape.size() == 2 : true) && b->dtype == DType::kFloat32 && b->shape.size() == 2;
    const bool transB = gemm && n.attrInt("transB", 0);
    const int64_t K = candidate ? (transB ? b->shape[1] : b->shape[0]) : 0, N = candidate ? (transB ? b->shape[0] : b->shape[1]) : 0;
    const int64_t R = candidate ? std::accumulate(a->shape.begin(), a->shape.end() - 1, int64_t(1), std::multiplies<int64_t>()) : 0;
    // A dense layer runs its rows one batch block at a time, reading all its weights for each; a
    // convolution keeps a weight tile while it walks the rows. One batch block stays dense.
    // A classifier's head (a Flatten or Reshape of a 4-D activation into one row per image) stays
    // a dense layer: the quantizer reads the 4-D activation directly, in the segment of the layers
    // before it. A Reshape of a 4-D tensor into token rows (attention's heads merged) is not one.
    const int from = candidate ? g.producer(n.inputs[0]) : -1;
    const bool head = from >= 0 && (g.nodes[size_t(from)].opType == "Flatten" || g.nodes[size_t(from)].opType == "Reshape") &&
                      !g.nodes[size_t(from)].inputs.empty() && g.hasTensor(g.nodes[size_t(from)].inputs[0]) &&
                      g.tensor(g.nodes[size_t(from)].inputs[0]).shape.size() == 4 && a->shape.size() == 2 &&
                      a->shape[0] == g.tensor(g.nodes[size_t(from)].inputs[0]).shape[0];
    if (!candidate || head || a->shape.back() != K || R <= cfg.batch || K <= 0 || N <= 0) {
      out.push_back(n);
      continue;
    }
    std::vector<float> bias;
    if (gemm && n.inputs.size() > 2 && !n.inputs[2].empty()) {
      const Tensor& c = g.tensor(n.inputs[2]);
      if (c.dtype != DType::kFloat32 || (c.elements() != N && c.elements() != 1)) {
        out.push_back(n);
        continue;
      }
      bias = c.elements() == N ? c.floats : std::vector<float>(size_t(N), c.floats.at(0));
    }
    // The product's only reader an Add of a bias: it joins the convolution's bias.
    std::string result = n.outputs[0];
    const std::vector<int> readers = g.consumers(result);
    if (bias.empty() && readers.size() == 1 && std::find(g.outputs.begin(), g.outputs.end(), result) == g.outputs.end()) {
      const Node& add = g.nodes[size_t(readers[0])];
      std::vector<float> added = addedBias(g, add, result, N);
      if (!added.empty() && add.outputs.size() == 1 && g.hasTensor(add.outputs[0]) && g.tensor(add.outputs[0]).hasShape &&
          g.tensor(add.outputs[0]).shape == g.tensor(result).shape) {
        bias = std::move(added);
        result = add.outputs[0];
        dropped[size_t(readers[0])] = true;
      }
    }
    const std::vector<int64_t> outShape = g.tensor(result).shape;
    // Rows [.., K] -> NHWC [1, R, 1, K] -> NCHW [1, K, R, 1] (host), the convolution, and back.
    const std::string rows = addFloatTensor(g, n.name + "_rows", {1, R, 1, K});
    const std::string image = addFloatTensor(g, n.name + "_image", {1, K, R, 1});
    const std::string conv = addFloatTensor(g, n.name + "_conv", {1, N, R, 1});
    const std::string back = addFloatTensor(g, n.name + "_rows_out", {1, R, 1, N});
    Tensor w = constTensor(uniqueName(g, n.inputs[1] + "_oihw"), DType::kFloat32, {N, K, 1, 1});
    w.floats.resize(size_t(N * K));
    for (int64_t o = 0; o < N; ++o)
      for (int64_t k = 0; k < K; ++k) w.floats[size_t(o * K + k)] = transB ? b->floats[size_t(o * K + k)] : b->floats[size_t(k * N + o)];
    g.tensors[w.name] = w;
    std::vector<std::string> convInputs = {image, w.name};
    if (!bias.empty()) {
      Tensor c = constTensor(uniqueName(g, n.name + "_bias"), DType::kFloat32, {N});
      c.floats = bias;
      g.tensors[c.name] = c;
      convInputs.push_back(c.name);
    }
    out.push_back(hostNode("Reshape", n.name + "_as_rows", {n.inputs[0], addInt64Constant(g, n.name + "_rows_shape", {1, R, 1, K})}, rows));
    Node toImage = hostNode("Transpose", n.name + "_to_image", {rows}, image);
    toImage.attrs["perm"] = intsAttribute({0, 3, 1, 2});
    out.push_back(toImage);
    out.push_back(hostNode("Conv", n.name, convInputs, conv));
    Node toRows = hostNode("Transpose", n.name + "_to_rows", {conv}, back);
    toRows.attrs["perm"] = intsAttribute({0, 2, 3, 1});
    out.push_back(toRows);
    out.push_back(hostNode("Reshape", n.name + "_as_output", {back, addInt64Constant(g, n.name + "_output_shape", outShape)}, result));
  }
  g.nodes = std::move(out);
  g.pruneTensors();
}

}  // namespace tessera::compiler::graph::detail
