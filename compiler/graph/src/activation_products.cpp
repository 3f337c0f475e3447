// Products of two activations (attention's Q·Kᵀ and A·V) as grouped 1x1 convolutions whose weights are the second operand.
#include <numeric>

#include "passes.h"
#include "tessera/compiler/op/dram_layout.h"

namespace tessera::compiler::graph::detail {

using ir::DType;
using ir::Graph;
using ir::Node;
using ir::Tensor;

namespace {

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

void activationProductsAsConvolutions(const hw::Config& cfg, Graph& g) {
  std::vector<Node> out;
  for (const Node& n : g.nodes) {
    auto activation = [&](const std::string& t) {
      return g.hasTensor(t) && !g.tensor(t).isConstant && g.tensor(t).hasShape && g.tensor(t).dtype == DType::kFloat32;
    };
    bool candidate = n.domain.empty() && n.opType == "MatMul" && n.inputs.size() == 2 && n.outputs.size() == 1 &&
                     activation(n.inputs[0]) && activation(n.inputs[1]) && g.hasTensor(n.outputs[0]) &&
                     g.tensor(n.outputs[0]).hasShape;
    // [..., T, K] x [..., K, N] with the same leading dimensions (no broadcasting): G products.
    const std::vector<int64_t> xs = candidate ? g.tensor(n.inputs[0]).shape : std::vector<int64_t>();
    const std::vector<int64_t> ys = candidate ? g.tensor(n.inputs[1]).shape : std::vector<int64_t>();
    candidate = candidate && xs.size() >= 3 && xs.size() == ys.size() &&
                std::equal(xs.begin(), xs.end() - 2, ys.begin()) && xs.back() == ys[ys.size() - 2];
    if (!candidate) {
      out.push_back(n);
      continue;
    }
    const int64_t G = std::accumulate(xs.begin(), xs.end() - 2, int64_t(1), std::multiplies<int64_t>());
    const int64_t T = xs[xs.size() - 2], K = xs.back(), N = ys.back();
    // The contraction and the product's columns padded to whole channel blocks (zeros).
    const int64_t Kp = roundUp(K, cfg.blockIn), Np = roundUp(N, cfg.blockOut);
    op::Operator conv = op::Operator::conv2d(1, int(G * Kp), int(T), 1, int(G * Np), 1, 1, 0, op::Epilogue{});
    conv.groups = int(G);
    if (G < 1 || T < 1 || K < 1 || N < 1 || cfg.blockIn != cfg.blockOut || !op::weightsViewIsPacked(cfg, conv)) {
      out.push_back(n);
      continue;
    }
    const std::string& x = n.inputs[0];
    const std::string& y = n.inputs[1];
    const std::string base = n.name;
    auto reshape = [&](const std::string& in, const std::string& what, std::vector<int64_t> shape) {
      const std::string t = addFloatTensor(g, base + "_" + what, shape);
      out.push_back(hostNode("Reshape", base + "_" + what, {in, addInt64Constant(g, base + "_" + what + "_shape", shape)}, t));
      return t;
    };
    auto transpose = [&](const std::string& in, const std::string& what, std::vector<int64_t> shape) {
      const std::string t = addFloatTensor(g, base + "_" + what, shape);
      Node tr = hostNode("Transpose", base + "_" + what, {in}, t);
      tr.attrs["perm"] = intsAttribute({0, 2, 1});
      out.push_back(tr);
      return t;
    };
    auto pad = [&](const std::string& in, const std::string& what, int64_t rows, int64_t columns, std::vector<int64_t> to) {
      if (!rows && !columns) return in;
      const std::string t = addFloatTensor(g, base + "_" + what, to);
      out.push_back(hostNode("Pad", base + "_" + what, {in, addInt64Constant(g, base + "_" + what + "_pads", {0, 0, 0, 0, rows, columns})}, t));
      return t;
    };
    // The first operand as an image of G*Kp channels over T rows: X[g][t][k] at channel g*Kp + k, row t.
    std::string xi = transpose(reshape(x, "rows", {G, T, K}), "channels", {G, K, T});
    xi = reshape(pad(xi, "channels_padded", Kp - K, 0, {G, Kp, T}), "image", {1, G * Kp, T, 1});
    // The second as an activation [1, G*Kp, Np, 1] (Y[g][k][n] at channel g*Kp + k, row n), which
    // the convolution reads as its weights W[g*Np + n][k] (op::weightsView; the quantizer finds
    // this Reshape-Transpose-Reshape and gives the convolution that activation's slot).
    std::string yi = pad(reshape(y, "operand", {G, K, N}), "operand_padded", Kp - K, Np - N, {G, Kp, Np});
    yi = reshape(yi, "operand_image", {1, G * Kp, Np, 1});
    const std::string w = reshape(transpose(reshape(yi, "weights_groups", {G, Kp, Np}), "weights_rows", {G, Np, Kp}),
                                  "weights", {G * Np, Kp, 1, 1});
    const std::string z = addFloatTensor(g, base + "_conv", {1, G * Np, T, 1});
    Node c = hostNode("Conv", base, {xi, w}, z);
    c.attrs["kernel_shape"] = intsAttribute({1, 1});
    c.attrs["group"] = intAttribute(G);
    // The per-layer table counts the product's own MACs, not the padding's.
    c.attrs["logical_macs"] = intAttribute(G * T * K * N);
    out.push_back(c);
    // Back: [1, G*Np, T, 1] -> [G, Np, T] -> the N real columns -> [G, T, N] -> the product's shape.
    std::string r = reshape(z, "columns", {G, Np, T});
    if (Np != N) {
      const std::string t = addFloatTensor(g, base + "_columns_cropped", {G, N, T});
      out.push_back(hostNode("Slice", base + "_columns_cropped",
                             {r, addInt64Constant(g, base + "_crop_starts", {0}), addInt64Constant(g, base + "_crop_ends", {N}),
                              addInt64Constant(g, base + "_crop_axes", {1})},
                             t));
      r = t;
    }
    r = transpose(r, "product_rows", {G, T, N});
    out.push_back(hostNode("Reshape", base + "_as_output",
                           {r, addInt64Constant(g, base + "_output_shape", g.tensor(n.outputs[0]).shape)}, n.outputs[0]));
  }
  g.nodes = std::move(out);
  g.pruneTensors();
}

}  // namespace tessera::compiler::graph::detail
