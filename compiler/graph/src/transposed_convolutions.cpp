// Transposed convolutions as convolutions: a ConvTranspose becomes a stride-1 Conv over its input with zeros inserted.
#include <algorithm>

#include "passes.h"

namespace tessera::compiler::graph::detail {

using ir::DType;
using ir::Graph;
using ir::Node;
using ir::Tensor;

namespace {

bool quantizedFile(const Graph& g) {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) {
    return n.opType == "QuantizeLinear" || n.opType == "DequantizeLinear" || n.opType == "QLinearConv" ||
           n.opType == "QLinearMatMul";
  });
}

}  // namespace

void transposedConvolutionsAsConvolutions(Graph& g) {
  if (quantizedFile(g)) return;
  std::vector<Node> out;
  for (const Node& n : g.nodes) {
    bool candidate = n.domain.empty() && n.opType == "ConvTranspose" && n.inputs.size() >= 2 && n.outputs.size() == 1 &&
                     g.hasTensor(n.inputs[0]) && isConst(g, n.inputs[1]) &&
                     (n.inputs.size() < 3 || n.inputs[2].empty() || isConst(g, n.inputs[2]));
    const Tensor* x = candidate ? &g.tensor(n.inputs[0]) : nullptr;
    const Tensor* w = candidate ? &g.tensor(n.inputs[1]) : nullptr;
    candidate = candidate && !x->isConstant && x->hasShape && x->shape.size() == 4 && x->dtype == DType::kFloat32 &&
                w->dtype == DType::kFloat32 && w->shape.size() == 4 && w->shape[0] == x->shape[1] &&
                n.attrInt("group", 1) == 1 && n.attrString("auto_pad", "NOTSET") == "NOTSET" && !n.has("output_shape") &&
                g.hasTensor(n.outputs[0]) && g.tensor(n.outputs[0]).hasShape;
    const std::vector<int64_t> strides = candidate ? n.attrInts("strides", {1, 1}) : std::vector<int64_t>();
    const std::vector<int64_t> pads = candidate ? n.attrInts("pads", {0, 0, 0, 0}) : std::vector<int64_t>();
    const std::vector<int64_t> extra = candidate ? n.attrInts("output_padding", {0, 0}) : std::vector<int64_t>();
    const std::vector<int64_t> dilations = candidate ? n.attrInts("dilations", {1, 1}) : std::vector<int64_t>();
    candidate = candidate && strides.size() == 2 && pads.size() == 4 && extra.size() == 2 && dilations == std::vector<int64_t>{1, 1};
    const int64_t N = candidate ? x->shape[0] : 0, C = candidate ? x->shape[1] : 0, H = candidate ? x->shape[2] : 0,
                  W = candidate ? x->shape[3] : 0;
    const int64_t M = candidate ? w->shape[1] : 0, KH = candidate ? w->shape[2] : 0, KW = candidate ? w->shape[3] : 0;
    // Zeros inserted between the input's pixels (stride - 1 of them), then KH - 1 - pad of padding
    // before and KH - 1 - pad + output_padding after: a stride-1 convolution with the kernel
    // flipped and its channel axes swapped computes the transposed convolution.
    const int64_t top = KH - 1 - (candidate ? pads[0] : 0), left = KW - 1 - (candidate ? pads[1] : 0);
    const int64_t bottom = KH - 1 - (candidate ? pads[2] : 0) + (candidate ? extra[0] : 0);
    const int64_t right = KW - 1 - (candidate ? pads[3] : 0) + (candidate ? extra[1] : 0);
    candidate = candidate && strides[0] >= 1 && strides[1] >= 1 && top >= 0 && left >= 0 && bottom >= 0 && right >= 0 &&
                N > 0 && C > 0 && H > 0 && W > 0 && M > 0 && KH > 0 && KW > 0;
    if (!candidate) {
      out.push_back(n);
      continue;
    }
    const int64_t SH = strides[0], SW = strides[1];
    // [N,C,H,W] -> [N,C,H,1,W,1] -> zeros after each pixel [N,C,H,SH,W,SW] -> [N,C,H*SH,W*SW] ->
    // the padding (the last SH-1 rows and SW-1 columns of zeros count towards the bottom and right).
    const std::string split = addFloatTensor(g, n.name + "_pixels", {N, C, H, 1, W, 1});
    const std::string spaced = addFloatTensor(g, n.name + "_spaced", {N, C, H, SH, W, SW});
    const std::string plane = addFloatTensor(g, n.name + "_zero_inserted", {N, C, H * SH, W * SW});
    const int64_t outH = H * SH + top + bottom - (SH - 1), outW = W * SW + left + right - (SW - 1);
    const std::string padded = addFloatTensor(g, n.name + "_padded", {N, C, outH, outW});
    out.push_back(hostNode("Reshape", n.name + "_pixels", {n.inputs[0], addInt64Constant(g, n.name + "_pixels_shape", {N, C, H, 1, W, 1})}, split));
    out.push_back(hostNode("Pad", n.name + "_insert_zeros", {split, addInt64Constant(g, n.name + "_insert_pads", {0, 0, 0, 0, 0, 0, 0, 0, 0, SH - 1, 0, SW - 1})},
                       spaced));
    out.push_back(hostNode("Reshape", n.name + "_zero_inserted", {spaced, addInt64Constant(g, n.name + "_plane_shape", {N, C, H * SH, W * SW})}, plane));
    out.push_back(hostNode("Pad", n.name + "_pad", {plane, addInt64Constant(g, n.name + "_pads", {0, 0, top, left, 0, 0, bottom - (SH - 1), right - (SW - 1)})},
                       padded));
    // W'[m][c][y][x] = W[c][m][KH-1-y][KW-1-x].
    Tensor flipped = constTensor(uniqueName(g, n.inputs[1] + "_as_conv"), DType::kFloat32, {M, C, KH, KW});
    flipped.floats.resize(size_t(M * C * KH * KW));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t y = 0; y < KH; ++y)
          for (int64_t xx = 0; xx < KW; ++xx)
            flipped.floats[size_t(((m * C + c) * KH + y) * KW + xx)] =
                w->floats[size_t(((c * M + m) * KH + (KH - 1 - y)) * KW + (KW - 1 - xx))];
    g.tensors[flipped.name] = flipped;
    std::vector<std::string> convInputs = {padded, flipped.name};
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) convInputs.push_back(n.inputs[2]);
    Node conv = hostNode("Conv", n.name, convInputs, n.outputs[0]);
    conv.attrs["kernel_shape"] = intsAttribute({KH, KW});
    // The per-layer table counts the transposed convolution's own MACs, not the inserted zeros'.
    conv.attrs["logical_macs"] = intAttribute(N * C * H * W * M * KH * KW);
    out.push_back(conv);
  }
  g.nodes = std::move(out);
  g.pruneTensors();
}

}  // namespace tessera::compiler::graph::detail
