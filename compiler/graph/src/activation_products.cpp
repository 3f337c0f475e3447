// Products of two activations (attention's Q·Kᵀ and A·V) as grouped 1x1 convolutions whose weights are the second operand.
#include <algorithm>
#include <numeric>
#include <set>

#include "dram_plan.h"
#include "passes.h"
#include "tessera/compiler/op/dram_layout.h"

namespace tessera::compiler::graph::detail {

using ir::DType;
using ir::Graph;
using ir::Node;
using ir::Tensor;

namespace {

// Whether `y` [G, K, N] (any leading shape of G elements) only moves the values of an image
// S [1, F, R, 1] a node other than a moving step writes (a projection's convolution), with each
// group's N columns whole channels of S and its K rows rows of S: Y[g][k][n] = S[f(g) + n][k].
// Then S's channels of Y are already an image with Y's rows as rows, the transpose of what the
// product reads as weights, and an accelerator layer transposes them (see below) so the host
// does not. Decided by running the steps on the host over a probe of S's positions.
bool rowsOfImage(const Graph& g, const std::string& y, int64_t G, int64_t K, int64_t N) {
  static const std::set<std::string> moves = {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Split", "Slice"};
  std::vector<MovingStep> path;
  std::string cur = y;
  for (int p = g.producer(cur); p >= 0; p = g.producer(cur)) {
    const Node& n = g.nodes[size_t(p)];
    if (!n.domain.empty() || !moves.count(n.opType) || n.inputs.empty()) break;
    path.push_back({&n, size_t(std::find(n.outputs.begin(), n.outputs.end(), cur) - n.outputs.begin())});
    cur = n.inputs[0];
  }
  if (path.empty() || !g.hasTensor(cur)) return false;
  const Tensor& st = g.tensor(cur);
  if (!st.hasShape || st.shape.size() != 4 || st.shape[0] != 1 || st.shape[3] != 1 || st.isConstant) return false;
  const int64_t R = st.shape[2];
  std::reverse(path.begin(), path.end());
  std::optional<Tensor> start = positionProbe(st);
  std::optional<Tensor> moved = start ? runMovingSteps(g, path, std::move(*start)) : std::nullopt;
  if (!moved) return false;
  const Tensor& probe = *moved;
  if (int64_t(probe.floats.size()) != G * K * N) return false;
  for (int64_t gi = 0; gi < G; ++gi) {
    const int64_t at = int64_t(probe.floats[size_t(gi * K * N)]) - 1;
    if (at < 0 || at % R) return false;
    const int64_t f0 = at / R;
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        if (probe.floats[size_t((gi * K + k) * N + n)] != float((f0 + n) * R + k + 1)) return false;
  }
  return true;
}

}  // namespace

void activationProductsAsConvolutions(const hw::Config& cfg, Graph& g) {
  std::vector<Node> out;
  // Where each tensor becomes available in `out` (after its producer), so the second operand's
  // steps are placed right after it: an accelerator layer that produced it still has its
  // segment open, and its stores can move the values (the quantizer's movedInt8).
  std::map<std::string, size_t> readyAt;
  auto ready = [&](const std::string& t) {
    auto it = readyAt.find(t);
    return it == readyAt.end() ? size_t(0) : it->second;
  };
  auto record = [&](size_t from) {
    for (size_t k = from; k < out.size(); ++k)
      for (const std::string& o : out[k].outputs) readyAt[o] = k + 1;
  };
  const std::vector<Node> nodes = g.nodes;
  for (const Node& n : nodes) {
    const size_t before = out.size();
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
      record(before);
      continue;
    }
    const int64_t G = std::accumulate(xs.begin(), xs.end() - 2, int64_t(1), std::multiplies<int64_t>());
    const int64_t T = xs[xs.size() - 2], K = xs.back(), N = ys.back();
    // The contraction and the product's columns padded to whole channel blocks (zeros).
    const int64_t Kp = int64_t(alignUp(uint64_t(K), uint64_t(cfg.blockIn))), Np = int64_t(alignUp(uint64_t(N), uint64_t(cfg.blockOut)));
    op::Operator conv = op::Operator::conv2d(1, int(G * Kp), int(T), 1, int(G * Np), 1, 1, 0, op::Epilogue{});
    conv.groups = int(G);
    if (G < 1 || T < 1 || K < 1 || N < 1 || cfg.blockIn != cfg.blockOut || !op::weightsViewIsPacked(cfg, conv)) {
      out.push_back(n);
      record(before);
      continue;
    }
    // The transposing layer's identity needs N to be one channel block and its own view to fit.
    op::Operator transpose = op::Operator::conv2d(1, int(G * N), int(N), 1, int(G * Kp), 1, 1, 0, op::Epilogue{});
    transpose.groups = int(G);
    const bool transposeOnAccelerator =
        N == cfg.blockOut && op::weightsViewIsPacked(cfg, transpose) && rowsOfImage(g, n.inputs[1], G, K, N);
    const std::string& x = n.inputs[0];
    const std::string& y = n.inputs[1];
    const std::string base = n.name;
    std::vector<Node> ySide;
    std::vector<Node>* to = &ySide;
    auto reshape = [&](const std::string& in, const std::string& what, std::vector<int64_t> shape) {
      const std::string t = addFloatTensor(g, base + "_" + what, shape);
      to->push_back(hostNode("Reshape", base + "_" + what, {in, addInt64Constant(g, base + "_" + what + "_shape", shape)}, t));
      return t;
    };
    auto transposeLast = [&](const std::string& in, const std::string& what, std::vector<int64_t> shape) {
      const std::string t = addFloatTensor(g, base + "_" + what, shape);
      Node tr = hostNode("Transpose", base + "_" + what, {in}, t);
      tr.attrs["perm"] = intsAttribute({0, 2, 1});
      to->push_back(tr);
      return t;
    };
    auto pad = [&](const std::string& in, const std::string& what, int64_t rows, int64_t columns, std::vector<int64_t> shape) {
      if (!rows && !columns) return in;
      const std::string t = addFloatTensor(g, base + "_" + what, shape);
      to->push_back(hostNode("Pad", base + "_" + what, {in, addInt64Constant(g, base + "_" + what + "_pads", {0, 0, 0, 0, rows, columns})}, t));
      return t;
    };
    // An activation [1, G*P, Q, 1] viewed as the weights [G*Q, P, 1, 1] of a grouped convolution
    // (op::weightsView), and that convolution.
    auto productConv = [&](const std::string& input, const std::string& image, int64_t P, int64_t Q, const std::string& what,
                           int64_t rows, int64_t macs) {
      const std::string v = reshape(transposeLast(reshape(image, what + "_weights_groups", {G, P, Q}), what + "_weights_rows", {G, Q, P}),
                                    what + "_weights", {G * Q, P, 1, 1});
      const std::string z = addFloatTensor(g, base + "_" + what + "_conv", {1, G * Q, rows, 1});
      Node c = hostNode("Conv", what.empty() ? base : base + "_" + what, {input, v}, z);
      c.attrs["kernel_shape"] = intsAttribute({1, 1});
      c.attrs["group"] = intAttribute(G);
      c.attrs["logical_macs"] = intAttribute(macs);
      to->push_back(c);
      return z;
    };
    // The second operand as an activation [1, G*Kp, Np, 1] (Y[g][k][n] at channel g*Kp + k, row
    // n), which the product reads as its weights W[g*Np + n][k] (the quantizer finds the view's
    // Reshape-Transpose-Reshape and gives the product that activation's slot).
    std::string yi;
    if (transposeOnAccelerator) {
      // Y's columns are channels of an image with Y's rows as rows (attention's V, as its
      // projection writes it): that image, its rows padded, is the weights of a grouped
      // convolution over an identity [1, G*N, N, 1], whose output [1, G*Kp, N, 1] is Y in the
      // product's form (rows k become channels, channels n rows), transposed on the accelerator.
      std::string yt = transposeLast(reshape(y, "operand", {G, K, N}), "operand_columns", {G, N, K});
      yt = reshape(pad(yt, "operand_columns_padded", 0, Kp - K, {G, N, Kp}), "operand_columns_image", {1, G * N, Kp, 1});
      Tensor identity = constTensor(uniqueName(g, base + "_identity"), DType::kFloat32, {1, G * N, N, 1});
      identity.floats.assign(size_t(G * N * N), 0.0f);
      for (int64_t gi = 0; gi < G; ++gi)
        for (int64_t r = 0; r < N; ++r) identity.floats[size_t((gi * N + r) * N + r)] = 1.0f;
      g.tensors[identity.name] = identity;
      yi = productConv(identity.name, yt, N, Kp, "transposed", N, 0);
    } else {
      yi = pad(reshape(y, "operand", {G, K, N}), "operand_padded", Kp - K, Np - N, {G, Kp, Np});
      yi = reshape(yi, "operand_image", {1, G * Kp, Np, 1});
    }
    // Right after the second operand's producer.
    const size_t at = ready(y);
    out.insert(out.begin() + int64_t(at), ySide.begin(), ySide.end());
    record(at);
    to = &out;
    // The first operand as an image of G*Kp channels over T rows: X[g][t][k] at channel g*Kp + k, row t.
    std::string xi = transposeLast(reshape(x, "rows", {G, T, K}), "channels", {G, K, T});
    xi = reshape(pad(xi, "channels_padded", Kp - K, 0, {G, Kp, T}), "image", {1, G * Kp, T, 1});
    // The per-layer table counts the product's own MACs, not the padding's.
    const std::string z = productConv(xi, yi, Kp, Np, "", T, G * T * K * N);
    // Back: [1, G*Np, T, 1] -> [G, Np, T] -> the N real columns -> [G, T, N] -> the product's shape.
    std::string r = reshape(z, "columns", {G, Np, T});
    if (Np != N) {
      const std::string t = addFloatTensor(g, base + "_columns_cropped", {G, N, T});
      to->push_back(hostNode("Slice", base + "_columns_cropped",
                             {r, addInt64Constant(g, base + "_crop_starts", {0}), addInt64Constant(g, base + "_crop_ends", {N}),
                              addInt64Constant(g, base + "_crop_axes", {1})},
                             t));
      r = t;
    }
    r = transposeLast(r, "product_rows", {G, T, N});
    out.push_back(hostNode("Reshape", base + "_as_output",
                           {r, addInt64Constant(g, base + "_output_shape", g.tensor(n.outputs[0]).shape)}, n.outputs[0]));
    record(before + ySide.size());
  }
  g.nodes = std::move(out);
  g.pruneTensors();
}

}  // namespace tessera::compiler::graph::detail
