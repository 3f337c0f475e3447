// Transposed convolutions as convolutions: over the input with zeros inserted, or as stride phases put together, by the cost model.
#include <algorithm>
#include <set>

#include "passes.h"
#include "tessera/compiler/op/compile.h"
#include "tessera/support/error.h"

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

// Elementwise functions of one activation that commute with moving pixels around.
bool isUnaryActivation(const Node& n) {
  static const std::set<std::string> kinds = {"Relu", "Tanh", "Sigmoid", "LeakyRelu", "HardSigmoid", "HardSwish", "Elu", "Clip"};
  return n.domain.empty() && kinds.count(n.opType) && !n.inputs.empty() && n.outputs.size() == 1;
}

// The one node reading `t` (not a graph output), or -1.
int soleReader(const Graph& g, const std::string& t) {
  if (std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end()) return -1;
  const std::vector<int> readers = g.consumers(t);
  return readers.size() == 1 ? readers[0] : -1;
}

double convolutionCycles(const hw::Config& cfg, int64_t n, int64_t c, int64_t h, int64_t w, int64_t m, int64_t kh, int64_t kw,
                         int64_t ph, int64_t pw) {
  op::Operator o = op::Operator::conv2d(int(n), int(c), int(h), int(w), int(m), 1, 1, 0);
  o.kernelH = int(kh), o.kernelW = int(kw), o.padH = int(ph), o.padW = int(pw);
  try {
    o.validate();
    return op::estimateCycles(cfg, o, op::chooseTiling(cfg, o)).cycles;
  } catch (const Error&) {
    return -1;  // no tiling fits: the form cannot run on the accelerator
  }
}

}  // namespace

void transposedConvolutionsAsConvolutions(const hw::Config& cfg, Graph& g, TransposedConvolutionForm form) {
  if (quantizedFile(g)) return;
  std::vector<Node> out;
  std::set<std::string> moved;  // BatchNormalization and activation nodes taken before a phase form's interleave
  for (const Node& n : g.nodes) {
    if (moved.count(n.name)) continue;
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
    // The stride-phase form: output pixel o (one axis, stride s, kernel K, pad p) has phase
    // r = (o + p) mod s and sums x[q - j] * w[r + j*s] over j, q = (o + p - r) / s: a stride-1
    // convolution of x, padded by J - 1 on each side, with the phase's taps reversed, whose output
    // q lands at q*s + r - p. With J taps for every phase (zero taps past the kernel), one
    // convolution computes all s*s phases as s*s groups of M output channels (phase-major); a
    // Reshape, Transpose and Reshape interleave them (DepthToSpace in DCR order) and a Slice crops
    // p. No multiplication by an inserted zero, at the cost of the zero taps and the border.
    const int64_t resultH = g.tensor(n.outputs[0]).shape.size() == 4 ? g.tensor(n.outputs[0]).shape[2] : 0;
    const int64_t resultW = g.tensor(n.outputs[0]).shape.size() == 4 ? g.tensor(n.outputs[0]).shape[3] : 0;
    auto taps = [](int64_t k, int64_t s, int64_t extra, int64_t padEnd) {
      return std::max((k + s - 1) / s, (k + extra - padEnd + s - 1) / s);
    };
    const int64_t JH = taps(KH, SH, extra[0], pads[2]), JW = taps(KW, SW, extra[1], pads[3]);
    const int64_t QH = H + JH - 1, QW = W + JW - 1;
    bool phases = (SH > 1 || SW > 1) && M % cfg.blockOut == 0 && cfg.blockIn == cfg.blockOut && resultH > 0 && resultW > 0 &&
                  pads[0] + resultH <= QH * SH && pads[1] + resultW <= QW * SW;
    if (phases && form == TransposedConvolutionForm::kCostModel) {
      const double zeroInserted = convolutionCycles(cfg, N, C, H * SH + top + bottom - (SH - 1), W * SW + left + right - (SW - 1),
                                                    M, KH, KW, 0, 0);
      const double stridePhases = convolutionCycles(cfg, N, C, H, W, M * SH * SW, JH, JW, JH - 1, JW - 1);
      phases = stridePhases > 0 && (zeroInserted < 0 || stridePhases < zeroInserted);
    }
    if (form == TransposedConvolutionForm::kZeroInsertion) phases = false;
    if (phases) {
      // W'[(ry*SW + rx)*M + m][c][jy][jx] = W[c][m][ry + (JH-1-jy)*SH][rx + (JW-1-jx)*SW], zero past the kernel.
      const int64_t groups = SH * SW;
      Tensor pw = constTensor(uniqueName(g, n.inputs[1] + "_phases"), DType::kFloat32, {groups * M, C, JH, JW});
      pw.floats.assign(size_t(groups * M * C * JH * JW), 0.0f);
      for (int64_t ry = 0; ry < SH; ++ry)
        for (int64_t rx = 0; rx < SW; ++rx)
          for (int64_t m = 0; m < M; ++m)
            for (int64_t c = 0; c < C; ++c)
              for (int64_t jy = 0; jy < JH; ++jy)
                for (int64_t jx = 0; jx < JW; ++jx) {
                  const int64_t ky = ry + (JH - 1 - jy) * SH, kx = rx + (JW - 1 - jx) * SW;
                  if (ky >= KH || kx >= KW) continue;
                  pw.floats[size_t(((((ry * SW + rx) * M + m) * C + c) * JH + jy) * JW + jx)] =
                      w->floats[size_t(((c * M + m) * KH + ky) * KW + kx)];
                }
      g.tensors[pw.name] = pw;
      // Each per-channel vector of M values (the bias, a BatchNormalization's parameters) for every phase.
      auto perPhase = [&](const std::string& t) {
        const Tensor& v = g.tensor(t);
        Tensor r = constTensor(uniqueName(g, t + "_phases"), DType::kFloat32, {groups * M});
        for (int64_t k = 0; k < groups; ++k) r.floats.insert(r.floats.end(), v.floats.begin(), v.floats.end());
        g.tensors[r.name] = r;
        return r.name;
      };
      std::vector<std::string> convInputs = {n.inputs[0], pw.name};
      if (n.inputs.size() > 2 && !n.inputs[2].empty()) convInputs.push_back(perPhase(n.inputs[2]));
      std::string t = addFloatTensor(g, n.name + "_phases", {N, groups * M, QH, QW});
      Node conv = hostNode("Conv", n.name, convInputs, t);
      conv.attrs["kernel_shape"] = intsAttribute({JH, JW});
      conv.attrs["pads"] = intsAttribute({JH - 1, JW - 1, JH - 1, JW - 1});
      conv.attrs["logical_macs"] = intAttribute(N * C * H * W * M * KH * KW);
      out.push_back(conv);
      // A BatchNormalization, then an activation, that alone read the result move before the
      // interleave (per channel and elementwise, they commute with it), so they fold and fuse into
      // the convolution.
      std::string last = n.outputs[0];
      int reader = soleReader(g, last);
      if (reader >= 0 && g.nodes[size_t(reader)].opType == "BatchNormalization" && g.nodes[size_t(reader)].inputs.size() == 5 &&
          g.nodes[size_t(reader)].outputs.size() == 1) {
        const Node& bn = g.nodes[size_t(reader)];
        bool constant = true;
        for (size_t k = 1; k < 5; ++k)
          constant = constant && isConst(g, bn.inputs[k]) && g.tensor(bn.inputs[k]).dtype == DType::kFloat32 &&
                     int64_t(g.tensor(bn.inputs[k]).floats.size()) == M;
        if (constant) {
          Node b = bn;
          b.inputs = {t, perPhase(bn.inputs[1]), perPhase(bn.inputs[2]), perPhase(bn.inputs[3]), perPhase(bn.inputs[4])};
          t = addFloatTensor(g, bn.name + "_phases", {N, groups * M, QH, QW});
          b.outputs = {t};
          out.push_back(b);
          moved.insert(bn.name);
          last = bn.outputs[0];
          reader = soleReader(g, last);
        }
      }
      if (reader >= 0 && isUnaryActivation(g.nodes[size_t(reader)])) {
        Node a = g.nodes[size_t(reader)];
        bool constantRest = true;
        for (size_t k = 1; k < a.inputs.size(); ++k) constantRest = constantRest && (a.inputs[k].empty() || isConst(g, a.inputs[k]));
        if (constantRest) {
          a.inputs[0] = t;
          t = addFloatTensor(g, a.name + "_phases", {N, groups * M, QH, QW});
          moved.insert(a.name);
          last = a.outputs[0];
          a.outputs = {t};
          out.push_back(a);
        }
      }
      const std::string split = addFloatTensor(g, n.name + "_phase_groups", {N, SH, SW, M, QH, QW});
      const std::string spread = addFloatTensor(g, n.name + "_phase_pixels", {N, M, QH, SH, QW, SW});
      const std::string whole = addFloatTensor(g, n.name + "_interleaved", {N, M, QH * SH, QW * SW});
      out.push_back(hostNode("Reshape", n.name + "_phase_groups", {t, addInt64Constant(g, n.name + "_phase_groups_shape", {N, SH, SW, M, QH, QW})}, split));
      Node tr = hostNode("Transpose", n.name + "_phase_pixels", {split}, spread);
      tr.attrs["perm"] = intsAttribute({0, 3, 4, 1, 5, 2});
      out.push_back(tr);
      out.push_back(hostNode("Reshape", n.name + "_interleave", {spread, addInt64Constant(g, n.name + "_interleaved_shape", {N, M, QH * SH, QW * SW})}, whole));
      out.push_back(hostNode("Slice", n.name + "_crop",
                             {whole, addInt64Constant(g, n.name + "_crop_starts", {pads[0], pads[1]}),
                              addInt64Constant(g, n.name + "_crop_ends", {pads[0] + resultH, pads[1] + resultW}),
                              addInt64Constant(g, n.name + "_crop_axes", {2, 3})},
                             last));
      continue;
    }
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
