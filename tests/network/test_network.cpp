// Graph compiler tests: a small float network quantized, compiled to one segment, run on every target against the host reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <tuple>

#include "../../compiler/graph/src/calibration_thresholds.h"
#include "../../compiler/graph/src/requantization.h"
#include "tessera/compiler/codegen/codegen.h"
#include "tessera/compiler/graph/compile.h"
#include "tessera/compiler/host/executor.h"
#include "tessera/compiler/model/chrome_trace.h"
#include "tessera/compiler/model/run.h"
#include "tessera/compiler/op/operator.h"
#include "tessera/gen/host_interface.h"
#include "tessera/hw/asm.h"
#include "tessera/runtime/aot.h"
#include "tessera/hw/config.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/target.h"
#include "tessera/support/error.h"

namespace {

using tessera::compiler::model::CompiledModel;
using tessera::compiler::ir::Attribute;
using tessera::compiler::ir::DType;
using tessera::compiler::ir::Graph;
using tessera::compiler::ir::Node;
using tessera::compiler::ir::Tensor;

Tensor floatTensor(const std::string& name, std::vector<int64_t> shape, std::mt19937& rng, float spread, bool constant) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.hasShape = true;
  t.isConstant = constant;
  std::normal_distribution<float> d(0.0f, spread);
  for (int64_t i = 0; i < t.elements(); ++i) t.floats.push_back(d(rng));
  return t;
}

// A constant 1-D int64 tensor (a Reshape's shape, Split's sizes, Squeeze's axes).
Tensor int64Tensor(const std::string& name, std::vector<int64_t> v) {
  Tensor t;
  t.name = name;
  t.dtype = DType::kInt64;
  t.shape = {int64_t(v.size())};
  t.hasShape = true;
  t.isConstant = true;
  t.ints = std::move(v);
  return t;
}

Attribute ints(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

Node node(const std::string& op, const std::string& name, std::vector<std::string> in, std::vector<std::string> out) {
  Node n;
  n.opType = op;
  n.name = name;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// HardSigmoid as PyTorch exports it (alpha 1/6, beta 1/2).
Node hardSigmoid(const std::string& name, const std::string& in, const std::string& out) {
  Node n = node("HardSigmoid", name, {in}, {out});
  Attribute alpha;
  alpha.kind = Attribute::Kind::kFloat;
  alpha.f = 1.0f / 6.0f;
  n.attrs["alpha"] = alpha;
  return n;
}

// A graph with one float input x [1, 3, 32, 32] and nothing else yet.
Graph inputGraph(const std::string& name) {
  Graph g;
  g.name = name;
  g.origin = name + "-network";
  g.opset = 13;
  Tensor x;
  x.name = "x";
  x.shape = {1, 3, 32, 32};
  x.hasShape = true;
  g.tensors[x.name] = x;
  g.inputs = {"x"};
  return g;
}

// The classifier every test network ends with: Gemm (transB = 1, as PyTorch's Linear) of the
// flattened features to "logits", the graph's output; then shapes.
void addLogits(Graph& g, const std::string& features, const std::string& w, const std::string& b) {
  Node fc = node("Gemm", "fc", {features, w, b}, {"logits"});
  Attribute transB;
  transB.i = 1;
  fc.attrs["transB"] = transB;
  g.nodes.push_back(fc);
  g.outputs = {"logits"};
  tessera::compiler::host::inferShapes(g);
}

// conv+BN+relu, maxpool, a residual block, global average pool, flatten, dense: every kind of
// accelerator layer, BatchNorm folding and the fusions.
Graph smallNetwork(uint32_t seed) {
  std::mt19937 rng(seed);
  Graph g = inputGraph("small");
  auto add = [&](Tensor t) { g.tensors[t.name] = t; };
  add(floatTensor("w1", {16, 3, 3, 3}, rng, 0.3f, true));
  add(floatTensor("b1", {16}, rng, 0.1f, true));
  Tensor gamma = floatTensor("gamma", {16}, rng, 0.1f, true), var = floatTensor("var", {16}, rng, 0.1f, true);
  for (float& v : gamma.floats) v += 1.0f;
  for (float& v : var.floats) v = std::fabs(v) + 0.5f;
  add(gamma);
  add(var);
  add(floatTensor("beta", {16}, rng, 0.1f, true));
  add(floatTensor("mean", {16}, rng, 0.1f, true));
  add(floatTensor("w2", {16, 16, 3, 3}, rng, 0.15f, true));
  add(floatTensor("b2", {16}, rng, 0.1f, true));
  add(floatTensor("w3", {10, 16}, rng, 0.3f, true));
  add(floatTensor("b3", {10}, rng, 0.1f, true));
  // Stride 2, so the first convolution's fold takes row phases as well as kernel columns.
  Node conv1 = node("Conv", "conv1", {"x", "w1", "b1"}, {"c1"});
  conv1.attrs["pads"] = ints({1, 1, 1, 1});
  conv1.attrs["strides"] = ints({2, 2});
  g.nodes.push_back(conv1);
  g.nodes.push_back(node("BatchNormalization", "bn1", {"c1", "gamma", "beta", "mean", "var"}, {"n1"}));
  g.nodes.push_back(node("Relu", "relu1", {"n1"}, {"r1"}));
  Node pool = node("MaxPool", "pool", {"r1"}, {"p1"});
  pool.attrs["kernel_shape"] = ints({2, 2});
  pool.attrs["strides"] = ints({2, 2});
  g.nodes.push_back(pool);
  Node conv2 = node("Conv", "conv2", {"p1", "w2", "b2"}, {"c2"});
  conv2.attrs["pads"] = ints({1, 1, 1, 1});
  g.nodes.push_back(conv2);
  // PRelu with one slope per channel (PyTorch's [C,1,1]), in conv2's epilogue with the residual add.
  Tensor slope = floatTensor("slope", {16, 1, 1}, rng, 0.4f, true);
  for (float& v : slope.floats) v = std::clamp(v, -0.9f, 0.9f);
  add(slope);
  g.nodes.push_back(node("PRelu", "prelu2", {"c2", "slope"}, {"c2p"}));
  g.nodes.push_back(node("Add", "residual", {"c2p", "p1"}, {"s2"}));
  g.nodes.push_back(node("Relu", "relu2", {"s2"}, {"r2"}));
  g.nodes.push_back(node("GlobalAveragePool", "gap", {"r2"}, {"g"}));
  g.nodes.push_back(node("Flatten", "flatten", {"g"}, {"f"}));
  addLogits(g, "f", "w3", "b3");
  return g;
}

// MobileNet's and SqueezeNet's shapes: a depthwise convolution (with a channel multiplier of
// 2), a grouped one, a dilated one, and a Fire module's Concat of two branches feeding a 1x1 convolution.
Graph branchyNetwork(uint32_t seed) {
  std::mt19937 rng(seed);
  Graph g = inputGraph("branchy");
  auto add = [&](Tensor t) { g.tensors[t.name] = t; };
  add(floatTensor("w1", {16, 3, 3, 3}, rng, 0.3f, true));
  add(floatTensor("b1", {16}, rng, 0.1f, true));
  add(floatTensor("wd", {32, 1, 3, 3}, rng, 0.4f, true));
  add(floatTensor("bd", {32}, rng, 0.1f, true));
  add(floatTensor("wg", {32, 8, 3, 3}, rng, 0.2f, true));
  add(floatTensor("wse1", {8, 32, 1, 1}, rng, 0.3f, true));
  add(floatTensor("bse1", {8}, rng, 0.1f, true));
  add(floatTensor("wse2", {32, 8, 1, 1}, rng, 0.5f, true));
  add(floatTensor("bse2", {32}, rng, 0.3f, true));
  add(floatTensor("wa", {16, 32, 1, 1}, rng, 0.2f, true));
  add(floatTensor("wb", {32, 32, 3, 3}, rng, 0.1f, true));
  add(floatTensor("wc", {16, 48, 1, 1}, rng, 0.2f, true));
  add(floatTensor("w3", {10, 16}, rng, 0.3f, true));
  add(floatTensor("b3", {10}, rng, 0.1f, true));
  auto conv = [&](const std::string& name, std::vector<std::string> in, const std::string& out, int pad, int stride,
                  int group, int dilation = 1) {
    Node c = node("Conv", name, std::move(in), {out});
    c.attrs["pads"] = ints({pad, pad, pad, pad});
    c.attrs["strides"] = ints({stride, stride});
    if (dilation != 1) c.attrs["dilations"] = ints({dilation, dilation});
    Attribute gr;
    gr.i = group;
    c.attrs["group"] = gr;
    g.nodes.push_back(c);
  };
  conv("conv1", {"x", "w1", "b1"}, "c1", 1, 2, 1);
  // PyTorch's SiLU at opset 13: x * Sigmoid(x), run in the convolution's epilogue.
  g.nodes.push_back(node("Sigmoid", "sigmoid1", {"c1"}, {"s1"}));
  g.nodes.push_back(node("Mul", "silu1", {"s1", "c1"}, {"r1"}));
  conv("depthwise", {"r1", "wd", "bd"}, "d", 1, 1, 16);
  g.nodes.push_back(node("Relu", "relu2", {"d"}, {"r2"}));
  // Squeeze-excitation: the gate (a Sigmoid in its convolution's epilogue) scales the depthwise
  // output's channels on the accelerator (`scale`).
  g.nodes.push_back(node("GlobalAveragePool", "se_pool", {"r2"}, {"se_p"}));
  conv("se_reduce", {"se_p", "wse1", "bse1"}, "se_r", 0, 1, 1);
  add(floatTensor("se_slope", {8, 1, 1}, rng, 0.3f, true));  // PRelu, in se_reduce's epilogue
  g.nodes.push_back(node("PRelu", "se_prelu", {"se_r", "se_slope"}, {"se_rr"}));
  conv("se_expand", {"se_rr", "wse2", "bse2"}, "se_e", 0, 1, 1);
  g.nodes.push_back(node("Sigmoid", "se_gate", {"se_e"}, {"se_g"}));
  g.nodes.push_back(node("Mul", "se_scale", {"r2", "se_g"}, {"se_out"}));
  conv("grouped", {"se_out", "wg"}, "gr", 1, 2, 4);
  g.nodes.push_back(node("Relu", "relu3", {"gr"}, {"r3"}));
  conv("squeeze_a", {"r3", "wa"}, "a", 0, 1, 1);
  Node leaky = node("LeakyRelu", "leaky4", {"a"}, {"ra"});  // on the sum, in the epilogue
  Attribute alpha;
  alpha.kind = Attribute::Kind::kFloat;
  alpha.f = 0.1f;
  leaky.attrs["alpha"] = alpha;
  g.nodes.push_back(leaky);
  conv("expand_b", {"r3", "wb"}, "b", 2, 1, 1, 2);  // dilated (an atrous layer)
  g.nodes.push_back(node("Relu", "relu5", {"b"}, {"rb"}));
  Node cat = node("Concat", "fire_concat", {"ra", "rb"}, {"cat"});
  Attribute axis;
  axis.i = 1;
  cat.attrs["axis"] = axis;
  g.nodes.push_back(cat);
  conv("after_concat", {"cat", "wc"}, "c", 0, 1, 1);
  // PyTorch's HardSwish at opset 13: x * HardSigmoid(x), run in the convolution's epilogue.
  g.nodes.push_back(hardSigmoid("hardsigmoid", "c", "hc"));
  g.nodes.push_back(node("Mul", "hardswish", {"c", "hc"}, {"rc"}));
  g.nodes.push_back(node("GlobalAveragePool", "gap", {"rc"}, {"gp"}));
  g.nodes.push_back(node("Flatten", "flatten", {"gp"}, {"f"}));
  Node fc = node("Gemm", "fc", {"f", "w3", "b3"}, {"fc_out"});
  Attribute transB;
  transB.i = 1;
  fc.attrs["transB"] = transB;
  g.nodes.push_back(fc);
  // And after the dense layer (MobileNetV3's classifier).
  g.nodes.push_back(hardSigmoid("fc_hardsigmoid", "fc_out", "fc_h"));
  g.nodes.push_back(node("Mul", "fc_hardswish", {"fc_h", "fc_out"}, {"logits"}));
  g.outputs = {"logits"};
  tessera::compiler::host::inferShapes(g);
  return g;
}

// DenseNet's shape: a block of growing concatenations (the first of one input), each read through
// a pre-activation BatchNorm and ReLU (no convolution before them), then a transition whose
// average pool PyTorch exports behind a Pad of nothing; and a late reader of the second concat.
Graph denseNetwork(uint32_t seed) {
  std::mt19937 rng(seed);
  Graph g = inputGraph("dense");
  auto add = [&](Tensor t) { g.tensors[t.name] = t; };
  auto conv = [&](const std::string& name, const std::string& in, const std::string& out, int64_t cin, int64_t cout, int k) {
    add(floatTensor(name + "_w", {cout, cin, k, k}, rng, 0.3f, true));
    add(floatTensor(name + "_b", {cout}, rng, 0.1f, true));
    Node c = node("Conv", name, {in, name + "_w", name + "_b"}, {out});
    c.attrs["pads"] = ints({k / 2, k / 2, k / 2, k / 2});
    g.nodes.push_back(c);
  };
  // BatchNormalization with its statistics, then ReLU.
  auto preActivation = [&](const std::string& name, const std::string& in, const std::string& out, int64_t c) {
    add(floatTensor(name + "_gamma", {c}, rng, 0.5f, true));
    add(floatTensor(name + "_beta", {c}, rng, 0.2f, true));
    add(floatTensor(name + "_mean", {c}, rng, 0.3f, true));
    Tensor var = floatTensor(name + "_var", {c}, rng, 1.0f, true);
    for (float& v : var.floats) v = 0.2f + std::fabs(v);
    add(var);
    g.nodes.push_back(node("BatchNormalization", name, {in, name + "_gamma", name + "_beta", name + "_mean", name + "_var"},
                           {name + "_bn"}));
    g.nodes.push_back(node("Relu", name + "_relu", {name + "_bn"}, {out}));
  };
  auto concat = [&](const std::string& name, std::vector<std::string> in, const std::string& out) {
    Node c = node("Concat", name, std::move(in), {out});
    Attribute axis;
    axis.i = 1;
    c.attrs["axis"] = axis;
    g.nodes.push_back(c);
  };
  conv("conv0", "x", "c0", 3, 16, 3);
  g.nodes.push_back(node("Relu", "relu0", {"c0"}, {"r0"}));
  Node pool = node("MaxPool", "pool0", {"r0"}, {"x0"});
  pool.attrs["kernel_shape"] = ints({2, 2});
  pool.attrs["strides"] = ints({2, 2});
  g.nodes.push_back(pool);
  std::vector<std::string> features = {"x0"};
  for (int layer = 1; layer <= 2; ++layer) {
    const std::string l = "layer" + std::to_string(layer);
    concat(l + "_concat", features, l + "_in");
    preActivation(l + "_norm1", l + "_in", l + "_a", 16 * int64_t(features.size()));
    conv(l + "_conv1", l + "_a", l + "_b", 16 * int64_t(features.size()), 32, 1);
    g.nodes.push_back(node("Relu", l + "_relu2", {l + "_b"}, {l + "_rb"}));
    conv(l + "_conv2", l + "_rb", "f" + std::to_string(layer), 32, 16, 3);
    features.push_back("f" + std::to_string(layer));
  }
  concat("block_concat", features, "block");
  preActivation("transition_norm", "block", "t", 48);
  conv("transition_conv", "t", "tc", 48, 32, 1);
  add(int64Tensor("transition_pads", std::vector<int64_t>(8, 0)));
  g.nodes.push_back(node("Pad", "transition_pad", {"tc", "transition_pads"}, {"tp"}));
  Node avg = node("AveragePool", "transition_pool", {"tp"}, {"ta"});
  avg.attrs["kernel_shape"] = ints({2, 2});
  avg.attrs["strides"] = ints({2, 2});
  g.nodes.push_back(avg);
  g.nodes.push_back(node("GlobalAveragePool", "gap", {"ta"}, {"gp"}));
  // A late reader of an earlier concat (a prefix of the block's buffer): the buffer must outlive
  // the block's own last reader.
  g.nodes.push_back(node("GlobalAveragePool", "late_gap", {"layer2_in"}, {"late"}));
  g.nodes.push_back(node("Add", "late_add", {"gp", "late"}, {"sum"}));
  g.nodes.push_back(node("Flatten", "flatten", {"sum"}, {"flat"}));
  add(floatTensor("fc_w", {10, 32}, rng, 0.3f, true));
  add(floatTensor("fc_b", {10}, rng, 0.1f, true));
  addLogits(g, "flat", "fc_w", "fc_b");
  return g;
}

// A detector's neck: features upsampled by nearest Resize and concatenated with earlier ones (the
// earlier ones also read by a convolution of their own), then upsampled once more by a factor of
// 1x2 straight into a convolution. `resizeMode` and `transform` are the second Resize's; the first
// is PyTorch's export (asymmetric, floor, scales), the last ONNX's defaults with sizes.
Graph neckNetwork(uint32_t seed, const std::string& resizeMode = "nearest", const std::string& transform = "half_pixel") {
  std::mt19937 rng(seed);
  Graph g = inputGraph("neck");
  auto add = [&](Tensor t) { g.tensors[t.name] = t; };
  auto conv = [&](const std::string& name, const std::string& in, const std::string& out, int64_t cin, int64_t cout, int k) {
    add(floatTensor(name + "_w", {cout, cin, k, k}, rng, 0.3f, true));
    add(floatTensor(name + "_b", {cout}, rng, 0.1f, true));
    Node c = node("Conv", name, {in, name + "_w", name + "_b"}, {name + "_c"});
    c.attrs["pads"] = ints({k / 2, k / 2, k / 2, k / 2});
    g.nodes.push_back(c);
    g.nodes.push_back(node("Relu", name + "_relu", {name + "_c"}, {out}));
  };
  auto pool = [&](const std::string& name, const std::string& in, const std::string& out) {
    Node p = node("MaxPool", name, {in}, {out});
    p.attrs["kernel_shape"] = ints({2, 2});
    p.attrs["strides"] = ints({2, 2});
    g.nodes.push_back(p);
  };
  auto constant = [&](const std::string& name, DType type, std::vector<float> floats, std::vector<int64_t> values) {
    Tensor t;
    t.name = name;
    t.dtype = type;
    t.shape = {4};
    t.hasShape = true;
    t.isConstant = true;
    t.floats = std::move(floats);
    t.ints = std::move(values);
    add(t);
  };
  auto text = [](const std::string& v) {
    Attribute a;
    a.kind = Attribute::Kind::kString;
    a.s = v;
    return a;
  };
  conv("conv0", "x", "r0", 3, 16, 3);
  pool("pool0", "r0", "a");  // [16,16,16]
  conv("conv1", "a", "r1", 16, 32, 3);
  pool("pool1", "r1", "b");  // [32,8,8]
  conv("conv2", "b", "c", 32, 16, 1);
  constant("up_scales", DType::kFloat32, {1, 1, 2, 2}, {});
  Node up = node("Resize", "up", {"c", "", "up_scales"}, {"u"});  // [16,16,16]
  up.attrs["mode"] = text("nearest");
  up.attrs["coordinate_transformation_mode"] = text("asymmetric");
  up.attrs["nearest_mode"] = text("floor");
  g.nodes.push_back(up);
  Node cat = node("Concat", "neck_concat", {"u", "a"}, {"cat"});
  Attribute axis;
  axis.i = 1;
  cat.attrs["axis"] = axis;
  g.nodes.push_back(cat);
  conv("side", "a", "s", 16, 16, 1);  // a second reader of the concat's slice
  conv("conv3", "cat", "d", 32, 16, 3);
  g.nodes.push_back(node("Add", "merge", {"d", "s"}, {"e"}));
  constant("wide_sizes", DType::kInt64, {}, {1, 16, 16, 32});
  Node wide = node("Resize", "wide", {"e", "", "", "wide_sizes"}, {"w"});  // [16,16,32]
  wide.attrs["mode"] = text(resizeMode);
  wide.attrs["coordinate_transformation_mode"] = text(transform);
  g.nodes.push_back(wide);
  conv("conv4", "w", "f", 16, 32, 3);
  g.nodes.push_back(node("GlobalAveragePool", "gap", {"f"}, {"gp"}));
  g.nodes.push_back(node("Flatten", "flatten", {"gp"}, {"flat"}));
  add(floatTensor("fc_w", {10, 32}, rng, 0.3f, true));
  add(floatTensor("fc_b", {10}, rng, 0.1f, true));
  addLogits(g, "flat", "fc_w", "fc_b");
  return g;
}

// A transformer's attention block over 25 tokens (a 6x6-stride-6 patch convolution of the 32x32
// input): Q, K and V projections, two heads of 16, Q·Kᵀ scaled, Softmax, A·V, the heads merged, a
// projection and a residual, then the tokens' mean into the classifier. 25 tokens are not whole
// channel blocks, so both products pad.
Graph attentionNetwork(uint32_t seed) {
  std::mt19937 rng(seed);
  Graph g = inputGraph("attention");
  auto add = [&](Tensor t) { g.tensors[t.name] = t; };
  auto shape = [&](const std::string& name, std::vector<int64_t> v) { add(int64Tensor(name, std::move(v))); };
  auto perm = [&](const std::string& name, const std::string& in, const std::string& out, std::vector<int64_t> p) {
    Node t = node("Transpose", name, {in}, {out});
    t.attrs["perm"] = ints(std::move(p));
    g.nodes.push_back(t);
  };
  add(floatTensor("patch_w", {32, 3, 6, 6}, rng, 0.15f, true));
  add(floatTensor("patch_b", {32}, rng, 0.1f, true));
  Node patch = node("Conv", "patch", {"x", "patch_w", "patch_b"}, {"p"});
  patch.attrs["strides"] = ints({6, 6});
  g.nodes.push_back(patch);
  shape("tokens_shape", {1, 32, 25});
  g.nodes.push_back(node("Reshape", "tokens_flat", {"p", "tokens_shape"}, {"pf"}));
  perm("tokens", "pf", "tok", {0, 2, 1});  // [1, 25, 32]
  // One projection for Q, K and V, split as PyTorch's attention writes it.
  add(floatTensor("qkv_w", {32, 96}, rng, 0.3f, true));
  add(floatTensor("qkv_b", {96}, rng, 0.1f, true));
  g.nodes.push_back(node("MatMul", "qkv", {"tok", "qkv_w"}, {"qkv_m"}));
  g.nodes.push_back(node("Add", "qkv_bias", {"qkv_m", "qkv_b"}, {"qkv_a"}));
  shape("heads_shape", {1, 25, 3, 2, 16});
  g.nodes.push_back(node("Reshape", "qkv_heads", {"qkv_a", "heads_shape"}, {"qkv_r"}));
  perm("qkv_parts", "qkv_r", "qkv_p", {2, 0, 3, 1, 4});  // [3, 1, 2, 25, 16]
  g.nodes.push_back(node("Split", "qkv_split", {"qkv_p"}, {"q_s", "k_s", "v_s"}));
  shape("first_axis", {0});
  for (const std::string h : {"q", "k", "v"}) g.nodes.push_back(node("Squeeze", h + "_part", {h + "_s", "first_axis"}, {h}));
  perm("k_t", "k", "kt", {0, 1, 3, 2});
  g.nodes.push_back(node("MatMul", "qk", {"q", "kt"}, {"s"}));
  add(floatTensor("temperature", {}, rng, 0.0f, true));
  g.tensors["temperature"].floats = {0.25f};
  g.nodes.push_back(node("Mul", "scaled", {"s", "temperature"}, {"ss"}));
  Node softmax = node("Softmax", "softmax", {"ss"}, {"attn"});
  Attribute axis;
  axis.i = -1;
  softmax.attrs["axis"] = axis;
  g.nodes.push_back(softmax);
  g.nodes.push_back(node("MatMul", "av", {"attn", "v"}, {"o"}));
  perm("merge", "o", "om", {0, 2, 1, 3});
  shape("merged_shape", {1, 25, 32});
  g.nodes.push_back(node("Reshape", "merged", {"om", "merged_shape"}, {"mg"}));
  add(floatTensor("proj_w", {32, 32}, rng, 0.3f, true));
  g.nodes.push_back(node("MatMul", "proj", {"mg", "proj_w"}, {"pr"}));
  g.nodes.push_back(node("Add", "residual", {"pr", "tok"}, {"res"}));
  Node mean = node("ReduceMean", "token_mean", {"res"}, {"feat"});
  mean.attrs["axes"] = ints({1});
  Attribute keep;
  keep.i = 0;
  mean.attrs["keepdims"] = keep;
  g.nodes.push_back(mean);
  add(floatTensor("fc_w", {10, 32}, rng, 0.3f, true));
  add(floatTensor("fc_b", {10}, rng, 0.1f, true));
  addLogits(g, "feat", "fc_w", "fc_b");
  return g;
}

// ShuffleNetV2's shape: a stride-2 unit (two branches, one depthwise on the unit's input) and two
// stride-1 units (a channel split by Slice, one branch, Concat), each ending in the
// Reshape-Transpose-Reshape channel shuffle; halves of 24 channels, not whole channel blocks.
Graph shuffleNetwork(uint32_t seed) {
  std::mt19937 rng(seed);
  Graph g = inputGraph("shuffle");
  auto add = [&](Tensor t) { g.tensors[t.name] = t; };
  auto ints64 = [&](const std::string& name, std::vector<int64_t> v) {
    add(int64Tensor(name, std::move(v)));
    return name;
  };
  auto conv = [&](const std::string& name, const std::string& in, const std::string& out, int64_t cin, int64_t cout,
                  int k, int stride, bool depthwise, bool relu) {
    add(floatTensor(name + "_w", {cout, depthwise ? 1 : cin, k, k}, rng, depthwise ? 0.4f : 0.3f, true));
    add(floatTensor(name + "_b", {cout}, rng, 0.1f, true));
    Node c = node("Conv", name, {in, name + "_w", name + "_b"}, {relu ? name + "_pre" : out});
    c.attrs["pads"] = ints({k / 2, k / 2, k / 2, k / 2});
    c.attrs["strides"] = ints({stride, stride});
    Attribute group;
    group.i = depthwise ? cin : 1;
    c.attrs["group"] = group;
    g.nodes.push_back(c);
    if (relu) g.nodes.push_back(node("Relu", name + "_relu", {name + "_pre"}, {out}));
  };
  auto shuffle = [&](const std::string& name, const std::string& in, const std::string& out) {
    g.nodes.push_back(node("Reshape", name + "_split", {in, ints64(name + "_shape5", {1, 2, 24, 8, 8})}, {name + "_5d"}));
    Node t = node("Transpose", name + "_transpose", {name + "_5d"}, {name + "_t"});
    t.attrs["perm"] = ints({0, 2, 1, 3, 4});
    g.nodes.push_back(t);
    g.nodes.push_back(node("Reshape", name + "_merge", {name + "_t", ints64(name + "_shape4", {1, 48, 8, 8})}, {out}));
  };
  auto concat = [&](const std::string& name, std::vector<std::string> in, const std::string& out) {
    Node c = node("Concat", name, std::move(in), {out});
    Attribute axis;
    axis.i = 1;
    c.attrs["axis"] = axis;
    g.nodes.push_back(c);
  };
  conv("conv0", "x", "s0", 3, 24, 3, 2, false, true);
  conv("u0_b1_dw", "s0", "u0_b1_d", 24, 24, 3, 2, true, false);
  conv("u0_b1_pw", "u0_b1_d", "u0_b1", 24, 24, 1, 1, false, true);
  conv("u0_b2_pw1", "s0", "u0_b2_a", 24, 24, 1, 1, false, true);
  conv("u0_b2_dw", "u0_b2_a", "u0_b2_d", 24, 24, 3, 2, true, false);
  conv("u0_b2_pw2", "u0_b2_d", "u0_b2", 24, 24, 1, 1, false, true);
  concat("u0_concat", {"u0_b1", "u0_b2"}, "u0_cat");
  shuffle("u0_shuffle", "u0_cat", "y0");
  for (int u = 1; u <= 2; ++u) {
    const std::string p = "u" + std::to_string(u), y = "y" + std::to_string(u - 1);
    g.nodes.push_back(node("Slice", p + "_first", {y, ints64(p + "_s0", {0}), ints64(p + "_e0", {24}), ints64(p + "_a0", {1})},
                           {p + "_x1"}));
    g.nodes.push_back(node("Slice", p + "_second",
                           {y, ints64(p + "_s1", {24}), ints64(p + "_e1", {INT64_MAX}), ints64(p + "_a1", {1})}, {p + "_x2"}));
    conv(p + "_pw1", p + "_x2", p + "_a", 24, 24, 1, 1, false, true);
    conv(p + "_dw", p + "_a", p + "_d", 24, 24, 3, 1, true, false);
    conv(p + "_pw2", p + "_d", p + "_b", 24, 24, 1, 1, false, true);
    concat(p + "_concat", {p + "_x1", p + "_b"}, p + "_cat");
    shuffle(p + "_shuffle", p + "_cat", "y" + std::to_string(u));
  }
  conv("conv5", "y2", "c5", 48, 32, 1, 1, false, true);
  g.nodes.push_back(node("GlobalAveragePool", "gap", {"c5"}, {"gp"}));
  g.nodes.push_back(node("Flatten", "flatten", {"gp"}, {"flat"}));
  add(floatTensor("fc_w", {10, 32}, rng, 0.3f, true));
  add(floatTensor("fc_b", {10}, rng, 0.1f, true));
  addLogits(g, "flat", "fc_w", "fc_b");
  return g;
}

std::map<std::string, Tensor> sample(uint32_t seed) {
  std::mt19937 rng(seed);
  return {{"x", floatTensor("x", {1, 3, 32, 32}, rng, 1.0f, false)}};
}

// Two samples on `target`: the host reference's bits, and logits within a cosine of 0.99 of the
// float graph's.
void expectReferenceBitsAndFloatAnswers(const CompiledModel& m, const Graph& graph, const std::string& target,
                                        const std::string& config) {
  tessera::runtime::Session session(target, tessera::hw::Config::load(config));
  tessera::compiler::model::ModelRunner runner(m, session);
  for (uint32_t s = 0; s < 2; ++s) {
    const auto in = sample(300 + s);
    const auto got = runner.run(in).outputs.at("logits").floats;
    EXPECT_EQ(got, tessera::compiler::model::runReference(m, in).outputs.at("logits").floats)
        << target << "/" << config << " sample " << s;
    const auto want = tessera::compiler::host::evaluate(graph, in).at("logits").floats;
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      ab += double(got[i]) * want[i];
      aa += double(got[i]) * got[i];
      bb += double(want[i]) * want[i];
    }
    EXPECT_GT(ab / std::sqrt(aa * bb), 0.99) << "sample " << s << ": cosine to the float model";
  }
}

// Compile options calibrated on four samples (not copyable: the options point at the samples).
struct CalibratedOptions {
  tessera::compiler::graph::Calibration calibration;
  tessera::compiler::graph::CompileOptions options;
  CalibratedOptions() {
    calibration.origin = "test";
    for (uint32_t s = 0; s < 4; ++s) calibration.samples.push_back(sample(100 + s));
    options.calibration = &calibration;
  }
  CalibratedOptions(const CalibratedOptions&) = delete;
  CalibratedOptions& operator=(const CalibratedOptions&) = delete;
};

CompiledModel compileSmall(const tessera::hw::Config& cfg) {
  tessera::compiler::graph::Calibration c;
  c.origin = "test";
  for (uint32_t s = 0; s < 8; ++s) c.samples.push_back(sample(100 + s));
  tessera::compiler::graph::CompileOptions o;
  o.calibration = &c;
  return tessera::compiler::graph::compile(cfg, smallNetwork(7), o);
}

// Resizes that do not repeat pixels by whole factors (linear interpolation; tf_half_pixel_for_nn,
// whose nearest pixels are 0, 1, 1, 2, 2, ... rather than 0, 0, 1, 1, ...) stay on the host, and
// the network still runs.
TEST(Network, ResizesThatDoNotRepeatPixelsRunOnTheHost) {
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  for (const auto& [mode, transform] : {std::pair<std::string, std::string>{"linear", "half_pixel"},
                                        std::pair<std::string, std::string>{"nearest", "tf_half_pixel_for_nn"}}) {
    CalibratedOptions c;
    const Graph graph = neckNetwork(11, mode, transform);
    const CompiledModel m = tessera::compiler::graph::compile(cfg, graph, c.options);
    std::vector<std::string> hostResizes, upsamples;
    for (const auto& l : m.layers) {
      if (l.kind == "Resize") hostResizes.push_back(l.name);
      if (l.kind == "upsample") upsamples.push_back(l.name);
    }
    EXPECT_EQ(hostResizes, std::vector<std::string>{"wide"}) << mode << " " << transform;
    EXPECT_EQ(upsamples, std::vector<std::string>{"up"}) << mode << " " << transform;
    const auto in = sample(300);
    EXPECT_EQ(tessera::compiler::model::runReference(m, in).outputs.at("logits").floats.size(), 10u);
  }
}

TEST(Network, EveryLayerRunsOnTheAcceleratorInOneSegment) {
  const CompiledModel m = compileSmall(tessera::hw::Config::load("default"));
  ASSERT_EQ(m.segments.size(), 1u);
  std::vector<std::string> accel, host;
  for (const auto& l : m.layers) (l.onAccelerator ? accel : host).push_back(l.kind);
  // The residual block's add runs in its second convolution's epilogue.
  EXPECT_EQ(accel, (std::vector<std::string>{"conv2d", "maxpool", "conv2d", "avgpool", "dense"}));
  EXPECT_NE(m.layers[4].spec.find("residual=1"), std::string::npos) << m.layers[4].spec;
  EXPECT_NE(m.layers[4].spec.find("leaky_mul=channel"), std::string::npos) << m.layers[4].spec;  // and the PRelu
  // Only the edges: quantizing the input (and folding it for the 3-channel first convolution) and
  // dequantizing the logits.
  EXPECT_EQ(host, (std::vector<std::string>{"QuantizeLinear", "FoldInput", "DequantizeLinear"}));
  // One FINISH for the whole stream.
  size_t finishes = 0;
  for (const auto& in : m.segments[0].insns) finishes += in.opcode == tessera::hw::Opcode::kFinish;
  EXPECT_EQ(finishes, 1u);
  EXPECT_LT(m.arenaBytes, m.arenaBytesWithoutReuse);
}

// --print-after-all: every pass, partitioning, DRAM planning and each layer's lowering, in order,
// each under the banner the operator compiler's stages use too.
TEST(Network, PrintAfterAllShowsEveryStageInOrder) {
  tessera::compiler::graph::Calibration c;
  c.origin = "test";
  for (uint32_t s = 0; s < 4; ++s) c.samples.push_back(sample(100 + s));
  std::ostringstream os;
  tessera::compiler::graph::CompileOptions o;
  o.calibration = &c;
  o.printAfterAll = &os;
  const CompiledModel m = tessera::compiler::graph::compile(tessera::hw::Config::load("default"), smallNetwork(7), o);
  const std::string s = os.str();
  std::vector<std::string> stages = {"shape inference",   "constant folding",  "transposed convolutions as convolutions", "BatchNorm folding",
                                     "spatial means as pools", "QDQ recognition",   "BatchNorm as depthwise", "channel mixes as maps",
                                     "row products as convolutions", "activation products as convolutions", "quantization and fusion",
                                     "narrow-input fold",
                                     "residual fusion",   "partitioning",      "DRAM planning"};
  for (const auto& l : m.layers)
    if (l.onAccelerator) stages.push_back("lowering '" + l.name + "': " + l.detail);
  size_t at = 0;
  for (const std::string& stage : stages) {
    const size_t found = s.find("\n*** IR dump after " + stage + " ***\n", at);
    ASSERT_NE(found, std::string::npos) << "no banner for '" << stage << "' after offset " << at;
    at = found + 1;
  }
  size_t banners = 0;
  for (size_t p = s.find("*** IR dump after "); p != std::string::npos; p = s.find("*** IR dump after ", p + 1)) ++banners;
  EXPECT_EQ(banners, stages.size());
  EXPECT_NE(s.find("activation arena"), std::string::npos);
  EXPECT_NE(s.find("SRAM occupancy"), std::string::npos) << "each layer's lowering prints its summary";
}

// The narrow-input fold reorders the first convolution's sums; int32 sums wrap associatively, so
// the answers are the same bits with and without it.
TEST(Network, TheFirstConvolutionsFoldChangesNoBit) {
  CalibratedOptions calibrated;
  tessera::compiler::graph::CompileOptions& o = calibrated.options;
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  const CompiledModel folded = tessera::compiler::graph::compile(cfg, smallNetwork(7), o);
  o.foldNarrowInput = false;
  const CompiledModel plain = tessera::compiler::graph::compile(cfg, smallNetwork(7), o);
  EXPECT_NE(folded.layers[2].detail, plain.layers[1].detail);
  for (uint32_t s = 0; s < 3; ++s) {
    const auto in = sample(400 + s);
    const auto want = tessera::compiler::model::runReference(plain, in).outputs.at("logits").floats;
    EXPECT_EQ(tessera::compiler::model::runReference(folded, in).outputs.at("logits").floats, want);
    tessera::runtime::Session session("fsim", cfg);
    tessera::compiler::model::ModelRunner runner(folded, session);
    EXPECT_EQ(runner.run(in).outputs.at("logits").floats, want);
  }
}

// A ReduceMean over H and W (PyTorch's x.mean((2, 3)), MNASNet's head) runs as the accelerator's
// global average pool: with keepdims=0 the same layers and the same logits bit for bit as the
// GlobalAveragePool and Flatten it stands for; with keepdims=1 (a squeeze-excitation's mean) the
// pool alone.
TEST(Network, SpatialReduceMeanRunsAsTheAcceleratorsPool) {
  CalibratedOptions calibrated;
  tessera::compiler::graph::CompileOptions& o = calibrated.options;
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  auto withMean = [](bool keepdims) {
    Graph g = smallNetwork(7);
    std::vector<Node> nodes;
    for (Node& n : g.nodes) {
      if (n.opType == "Flatten" && !keepdims) continue;
      if (n.opType == "GlobalAveragePool") {
        Node mean = node("ReduceMean", "mean", {"r2"}, {keepdims ? "g" : "f"});
        mean.attrs["axes"] = ints({-1, 2});
        Attribute keep;
        keep.i = keepdims ? 1 : 0;
        mean.attrs["keepdims"] = keep;
        nodes.push_back(mean);
        continue;
      }
      nodes.push_back(n);
    }
    g.nodes = nodes;
    for (const std::string t : {"g", "f"}) g.tensors.erase(t);
    tessera::compiler::host::inferShapes(g);
    return g;
  };
  const CompiledModel pool = tessera::compiler::graph::compile(cfg, smallNetwork(7), o);
  for (bool keepdims : {false, true}) {
    const CompiledModel mean = tessera::compiler::graph::compile(cfg, withMean(keepdims), o);
    ASSERT_EQ(mean.segments.size(), 1u) << "keepdims " << keepdims;
    std::vector<std::string> accel;
    for (const auto& l : mean.layers)
      if (l.onAccelerator) accel.push_back(l.kind);
    EXPECT_EQ(accel, (std::vector<std::string>{"conv2d", "maxpool", "conv2d", "avgpool", "dense"})) << "keepdims " << keepdims;
    const auto in = sample(500);
    EXPECT_EQ(tessera::compiler::model::runReference(mean, in).outputs.at("logits").floats,
              tessera::compiler::model::runReference(pool, in).outputs.at("logits").floats)
        << "keepdims " << keepdims;
  }
}

// What PyTorch writes for x.reshape(x.shape[0], -1) without constant folding: Shape, Gather,
// Unsqueeze and Concat into the Reshape's target. The chain is computed at compile time from the
// static shapes, so the Reshape is the Flatten it stands for: the same layers and logits.
TEST(Network, ShapeComputationsIntoAReshapeFoldAtCompileTime) {
  CalibratedOptions calibrated;
  tessera::compiler::graph::CompileOptions& o = calibrated.options;
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  Graph g = smallNetwork(7);
  std::vector<Node> nodes;
  for (Node& n : g.nodes) {
    if (n.opType != "Flatten") {
      nodes.push_back(n);
      continue;
    }
    auto constant = [&](const std::string& name, std::vector<int64_t> v) { g.tensors[name] = int64Tensor(name, std::move(v)); };
    constant("zero", {0});
    constant("minus_one", {-1});
    constant("axes0", {0});
    nodes.push_back(node("Shape", "shape", {"g"}, {"g_shape"}));
    Node gather = node("Gather", "batch", {"g_shape", "zero"}, {"batch1"});
    nodes.push_back(gather);
    nodes.push_back(node("Concat", "target", {"batch1", "minus_one"}, {"target"}));
    nodes.back().attrs["axis"] = Attribute{};
    nodes.push_back(node("Reshape", "reshape", {"g", "target"}, {"f"}));
  }
  g.nodes = nodes;
  g.tensors.erase("f");
  tessera::compiler::host::inferShapes(g);
  const CompiledModel chain = tessera::compiler::graph::compile(cfg, g, o);
  const CompiledModel flat = tessera::compiler::graph::compile(cfg, smallNetwork(7), o);
  ASSERT_EQ(chain.segments.size(), 1u);
  ASSERT_EQ(chain.layers.size(), flat.layers.size());
  for (size_t i = 0; i < flat.layers.size(); ++i) EXPECT_EQ(chain.layers[i].kind, flat.layers[i].kind) << i;
  const auto in = sample(501);
  EXPECT_EQ(tessera::compiler::model::runReference(chain, in).outputs.at("logits").floats,
            tessera::compiler::model::runReference(flat, in).outputs.at("logits").floats);
}

// The residual fusion keeps the add's arithmetic, so it changes no bit either; without it the add
// is a layer of its own.
TEST(Network, TheResidualFusionChangesNoBit) {
  tessera::compiler::graph::Calibration c;
  c.origin = "test";
  for (uint32_t s = 0; s < 4; ++s) c.samples.push_back(sample(100 + s));
  tessera::compiler::graph::CompileOptions o;
  o.calibration = &c;
  for (const char* name : {"default", "batch2"}) {
    const tessera::hw::Config cfg = tessera::hw::Config::load(name);
    const CompiledModel fused = tessera::compiler::graph::compile(cfg, smallNetwork(7), o);
    o.fuseResidualAdds = false;
    const CompiledModel plain = tessera::compiler::graph::compile(cfg, smallNetwork(7), o);
    o.fuseResidualAdds = true;
    auto adds = [](const CompiledModel& m) {
      return std::count_if(m.layers.begin(), m.layers.end(), [](const auto& l) { return l.kind == "add"; });
    };
    EXPECT_EQ(adds(plain), 1);
    EXPECT_EQ(adds(fused), 0);
    EXPECT_EQ(fused.layers.size() + 1, plain.layers.size());
    for (uint32_t s = 0; s < 3; ++s) {
      const auto in = sample(500 + s);
      const auto want = tessera::compiler::model::runReference(plain, in).outputs.at("logits").floats;
      EXPECT_EQ(tessera::compiler::model::runReference(fused, in).outputs.at("logits").floats, want) << name;
      tessera::runtime::Session session("fsim", cfg);
      tessera::compiler::model::ModelRunner runner(fused, session);
      EXPECT_EQ(runner.run(in).outputs.at("logits").floats, want) << name;
    }
  }
}

// A weight that is not a number stops the compile with an error naming the layer and the weight,
// instead of an int8 weight made of it (the fuzzer's first find in the compile harness).
TEST(Network, NonFiniteWeightsAreNamed) {
  Graph g = smallNetwork(7);
  g.tensors.at("w1").floats.at(5) = std::nanf("");
  CalibratedOptions c;
  try {
    tessera::compiler::graph::compile(tessera::hw::Config::load("default"), g, c.options);
    ADD_FAILURE() << "a NaN weight compiled";
  } catch (const tessera::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("weight 5 is not a finite number"), std::string::npos) << what;
    EXPECT_NE(what.find("conv1"), std::string::npos) << what;
  }
}

TEST(Network, QuantizedAnswersFollowTheFloatModel) {
  const CompiledModel m = compileSmall(tessera::hw::Config::load("default"));
  const Graph g = smallNetwork(7);
  double worst = 0, range = 0;
  int sameTop = 0;
  for (uint32_t s = 0; s < 8; ++s) {
    const auto in = sample(200 + s);
    const auto q = tessera::compiler::model::runReference(m, in).outputs.at("logits").floats;
    const auto f = tessera::compiler::host::evaluate(g, in).at("logits").floats;
    ASSERT_EQ(q.size(), f.size());
    size_t qa = 0, fa = 0;
    for (size_t i = 0; i < q.size(); ++i) {
      worst = std::max(worst, double(std::fabs(q[i] - f[i])));
      range = std::max(range, double(std::fabs(f[i])));
      if (q[i] > q[qa]) qa = i;
      if (f[i] > f[fa]) fa = i;
    }
    sameTop += qa == fa;
  }
  EXPECT_LT(worst, 0.1 * range) << "int8 logits drift from the float model's";
  EXPECT_GE(sameTop, 6);
}

bool built(const std::string& target, const tessera::hw::Config& cfg) {
  for (const auto* t : tessera::runtime::availableTargets())
    if (t->name == target) return t->supports(cfg);
  return false;
}

class NetworkOnTarget : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(NetworkOnTarget, MatchesTheHostReferenceBitForBit) {
  const auto& [target, config] = GetParam();
  const tessera::hw::Config cfg = tessera::hw::Config::load(config);
  if (!built(target, cfg)) GTEST_SKIP() << target << " is not built for " << config;
  const CompiledModel m = compileSmall(cfg);
  tessera::runtime::Session session(target, cfg);
  tessera::compiler::model::ModelRunner runner(m, session);
  for (uint32_t s = 0; s < 2; ++s) {
    const auto in = sample(300 + s);
    const auto want = tessera::compiler::model::runReference(m, in).outputs.at("logits").floats;
    const auto got = runner.run(in);
    EXPECT_EQ(got.outputs.at("logits").floats, want) << target << "/" << config << " sample " << s;
    EXPECT_GT(got.counters.macs, 0u);
  }
}

// Depthwise and grouped convolutions and a copy-free Concat: on a config whose blocks agree, one
// segment in which the concat is a layer without instructions (its branches store into its
// slices); with BLOCK_IN != BLOCK_OUT (batch2) the Concat runs on the host between segments.
// Every target gives the host reference's bits either way.
TEST_P(NetworkOnTarget, GroupedConvolutionsAndConcatMatchTheHostReference) {
  const auto& [target, config] = GetParam();
  const tessera::hw::Config cfg = tessera::hw::Config::load(config);
  if (!built(target, cfg)) GTEST_SKIP() << target << " is not built for " << config;
  tessera::compiler::graph::Calibration c;
  c.origin = "test";
  for (uint32_t s = 0; s < 4; ++s) c.samples.push_back(sample(100 + s));
  tessera::compiler::graph::CompileOptions o;
  o.calibration = &c;
  std::ostringstream dump;
  o.printAfterAll = &dump;
  const CompiledModel m = tessera::compiler::graph::compile(cfg, branchyNetwork(3), o);
  const bool copyFree = cfg.blockIn == cfg.blockOut;
  if (copyFree) {
    EXPECT_EQ(m.segments.size(), 1u);
  }
  std::vector<std::string> accel, host;
  for (const auto& l : m.layers) (l.onAccelerator ? accel : host).push_back(l.kind);
  std::vector<std::string> want = {"conv2d", "conv2d", "avgpool", "conv2d", "conv2d", "scale", "conv2d", "conv2d", "conv2d"};
  if (copyFree) want.push_back("concat");
  for (const char* k : {"conv2d", "avgpool", "dense"}) want.push_back(k);
  EXPECT_EQ(accel, want);
  for (const auto& l : m.layers) {
    if (l.name == "depthwise") {
      EXPECT_NE(l.spec.find("groups=16"), std::string::npos) << l.spec;
    }
    if (l.name == "grouped") {
      EXPECT_NE(l.spec.find("groups=4"), std::string::npos) << l.spec;
    }
    if (l.name == "expand_b") {
      EXPECT_NE(l.spec.find("dh=2 dw=2"), std::string::npos) << l.spec;
    }
    if (l.name == "squeeze_a") {
      EXPECT_NE(l.spec.find("leaky=1"), std::string::npos) << l.spec;
    }
    if (l.name == "se_reduce") {
      EXPECT_NE(l.spec.find("leaky_mul=channel"), std::string::npos) << l.spec;
    }
    if (l.kind == "concat") {
      EXPECT_EQ(l.insnBegin, l.insnEnd);
      EXPECT_NE(l.detail.find("copy-free"), std::string::npos) << l.detail;
    }
  }
  if (copyFree) {
    EXPECT_NE(dump.str().find("(no copy)"), std::string::npos);
  }
  EXPECT_EQ(std::count(host.begin(), host.end(), "HardSigmoid") + std::count(host.begin(), host.end(), "Mul") +
                std::count(host.begin(), host.end(), "LeakyRelu") + std::count(host.begin(), host.end(), "Sigmoid"),
            0)
      << "the HardSwish, the SiLU, the Sigmoid and the LeakyRelu run in the convolutions' epilogues";
  for (const auto& l : m.layers)
    if (l.name == "after_concat" || l.name == "fc") {
      EXPECT_NE(l.spec.find("act=hardswish"), std::string::npos) << l.spec;
    }
  for (const auto& l : m.layers)
    if (l.name == "se_expand") {
      EXPECT_NE(l.spec.find("act=sigmoid"), std::string::npos) << l.spec;
    }
  for (const auto& l : m.layers)
    if (l.name == "conv1") {
      EXPECT_NE(l.spec.find("act=silu"), std::string::npos) << l.spec;
    }
  tessera::runtime::Session session(target, cfg);
  tessera::compiler::model::ModelRunner runner(m, session);
  for (uint32_t s = 0; s < 2; ++s) {
    const auto in = sample(300 + s);
    EXPECT_EQ(runner.run(in).outputs.at("logits").floats,
              tessera::compiler::model::runReference(m, in).outputs.at("logits").floats)
        << target << "/" << config << " sample " << s;
  }
}

// DenseNet's block: on a config whose blocks agree, one segment, every concatenation copy-free
// (each concat the first slice of the next, one buffer), the pre-activation BatchNorms as
// depthwise 1x1 convolutions with their ReLU fused, the empty Pad gone; every target gives the
// host reference's bits, and the float model's answer is kept.
TEST_P(NetworkOnTarget, DenseBlockConcatChainMatchesTheHostReference) {
  const auto& [target, config] = GetParam();
  const tessera::hw::Config cfg = tessera::hw::Config::load(config);
  if (!built(target, cfg)) GTEST_SKIP() << target << " is not built for " << config;
  CalibratedOptions c;
  const Graph graph = denseNetwork(5);
  const CompiledModel m = tessera::compiler::graph::compile(cfg, graph, c.options);
  const bool copyFree = cfg.blockIn == cfg.blockOut;
  size_t concats = 0, depthwise = 0;
  for (const auto& l : m.layers) {
    EXPECT_NE(l.kind, "Pad") << "a Pad of nothing stays";
    if (l.kind == "BatchNormalization") ADD_FAILURE() << l.name << " runs on the host";
    if (l.kind == "concat") {
      ++concats;
      EXPECT_EQ(l.insnBegin, l.insnEnd);
      EXPECT_NE(l.detail.find("copy-free"), std::string::npos) << l.detail;
    }
    if (l.onAccelerator && l.spec.find("groups=") != std::string::npos) {
      ++depthwise;
      EXPECT_NE(l.spec.find("relu=1"), std::string::npos) << l.name << ": " << l.spec;
    }
  }
  EXPECT_EQ(depthwise, 3u) << "the three pre-activations";
  if (copyFree) {
    EXPECT_EQ(m.segments.size(), 1u);
    EXPECT_EQ(concats, 3u);
  }
  expectReferenceBitsAndFloatAnswers(m, graph, target, config);
}

// Nearest upsampling by whole factors and the Concat after it: on a config whose blocks agree, one
// segment in which both upsamples and the concat are layers without instructions (the layers
// before store into every position each entry covers, in the concat's slice); with BLOCK_IN !=
// BLOCK_OUT (batch2) they run on the host between segments. Every target gives the host
// reference's bits either way, and the answers follow the float model.
TEST_P(NetworkOnTarget, UpsamplesAndTheirConcatMatchTheHostReference) {
  const auto& [target, config] = GetParam();
  const tessera::hw::Config cfg = tessera::hw::Config::load(config);
  if (!built(target, cfg)) GTEST_SKIP() << target << " is not built for " << config;
  CalibratedOptions c;
  const Graph graph = neckNetwork(11);
  const CompiledModel m = tessera::compiler::graph::compile(cfg, graph, c.options);
  if (cfg.blockIn == cfg.blockOut) {
    EXPECT_EQ(m.segments.size(), 1u);
    size_t upsamples = 0, concats = 0;
    for (const auto& l : m.layers) {
      if (l.kind == "upsample" || l.kind == "concat") {
        EXPECT_TRUE(l.onAccelerator) << l.name;
        EXPECT_EQ(l.insnBegin, l.insnEnd) << l.name;
        EXPECT_NE(l.detail.find("copy-free"), std::string::npos) << l.detail;
        ++(l.kind == "upsample" ? upsamples : concats);
      }
      EXPECT_NE(l.kind, "Resize") << l.name << " runs on the host";
    }
    EXPECT_EQ(upsamples, 2u);
    EXPECT_EQ(concats, 1u);
  }
  expectReferenceBitsAndFloatAnswers(m, graph, target, config);
}

// Attention's two products of activations (Q·Kᵀ and A·V, two heads): on the default config each
// is one grouped convolution on the accelerator reading the second operand's slot as its weights
// (and the per-layer table counts the products' own MACs, not the padding's); where the config's
// layouts do not make that slot the packed weights (small: 4-channel blocks; batch2) they stay
// MatMuls on the host. Every target gives the host reference's bits, and the answers follow the
// float model.
TEST_P(NetworkOnTarget, AttentionProductsMatchTheHostReference) {
  const auto& [target, config] = GetParam();
  const tessera::hw::Config cfg = tessera::hw::Config::load(config);
  if (!built(target, cfg)) GTEST_SKIP() << target << " is not built for " << config;
  CalibratedOptions c;
  const Graph graph = attentionNetwork(13);
  const CompiledModel m = tessera::compiler::graph::compile(cfg, graph, c.options);
  size_t products = 0;
  std::map<std::string, int> segmentOf;
  for (const auto& l : m.layers)
    if (l.onAccelerator) segmentOf[l.name] = l.segment;
  if (config == "default") {
    // Q, K and V are selected (and K and V padded to 32 rows) by the projection's stores, V is
    // transposed by a layer over an identity, all in the projection's segment; the product of the
    // probabilities and V feeds the output projection in the same segment, unchanged.
    size_t selects = 0;
    for (const auto& l : m.layers) selects += l.kind == "select" && l.onAccelerator && l.segment == segmentOf["qkv"];
    EXPECT_EQ(selects, 3u);
    ASSERT_TRUE(segmentOf.count("qkv") && segmentOf.count("qk") && segmentOf.count("av_transposed") &&
                segmentOf.count("av") && segmentOf.count("proj"));
    EXPECT_EQ(segmentOf["qk"], segmentOf["qkv"]);
    EXPECT_EQ(segmentOf["av_transposed"], segmentOf["qkv"]);
    EXPECT_EQ(segmentOf["proj"], segmentOf["av"]);
  }
  for (const auto& l : m.layers) {
    if (l.name != "qk" && l.name != "av") continue;
    ++products;
    EXPECT_EQ(l.onAccelerator, config == "default") << l.name << " (" << l.kind << ") on " << config;
    if (l.onAccelerator) {
      EXPECT_EQ(l.kind, "conv2d") << l.name;
      EXPECT_NE(l.spec.find("wgt=input"), std::string::npos) << l.spec;
      EXPECT_EQ(l.macs, 2u * 25 * 25 * 16) << l.name;
      EXPECT_EQ(l.tensors.size(), 3u) << l.name;  // the input, the weights' activation, the output
    } else {
      EXPECT_EQ(l.kind, "MatMul") << l.name;
    }
  }
  EXPECT_EQ(products, 2u);
  expectReferenceBitsAndFloatAnswers(m, graph, target, config);
  // The identity the transposing layer reads is a constant segment input: the generated host
  // code places it as the interpreter's runner does (elsewhere the host runs the Split, which has
  // no generated code).
  if (target == "fsim" && config == "default") {
    tessera::runtime::Session session(target, cfg);
    const tessera::compiler::codegen::JitModel code(m, "attention");
    tessera::runtime::AotSession aot(code.descriptor(), session);
    tessera::compiler::model::ModelRunner runner(m, session);
    const auto in = sample(310);
    EXPECT_EQ(tessera::compiler::codegen::runGenerated(m, code.descriptor(), aot.handle(), in).outputs.at("logits").floats,
              runner.run(in).outputs.at("logits").floats)
        << config;
  }
}

// ShuffleNet's units: on a config whose blocks agree, one segment with no Slice, Concat,
// Reshape or Transpose left on the host (the channel maps put the mixes in the convolutions'
// weights over one growing buffer); every target gives the host reference's bits, and the answers
// follow the float model.
TEST_P(NetworkOnTarget, ShuffleUnitsAsChannelMapsMatchTheHostReference) {
  const auto& [target, config] = GetParam();
  const tessera::hw::Config cfg = tessera::hw::Config::load(config);
  if (!built(target, cfg)) GTEST_SKIP() << target << " is not built for " << config;
  CalibratedOptions c;
  const Graph graph = shuffleNetwork(9);
  const CompiledModel m = tessera::compiler::graph::compile(cfg, graph, c.options);
  if (cfg.blockIn == cfg.blockOut) {
    EXPECT_EQ(m.segments.size(), 1u);
    for (const auto& l : m.layers)
      if (!l.onAccelerator) {
        EXPECT_TRUE(l.kind == "QuantizeLinear" || l.kind == "DequantizeLinear" || l.kind == "FoldInput")
            << l.name << " (" << l.kind << ") runs on the host";
      }
  }
  expectReferenceBitsAndFloatAnswers(m, graph, target, config);
}

INSTANTIATE_TEST_SUITE_P(Targets, NetworkOnTarget,
                         ::testing::Combine(::testing::Values("fsim", "tsim", "hls", "hls-sc", "rtl-sc"),
                                            ::testing::Values("default", "small", "batch2")),
                         [](const auto& info) {
                           std::string n = std::get<0>(info.param) + "_" + std::get<1>(info.param);
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// A uint8 QDQ file's average pools (global, and 2x2 without padding) keep their zero points: the
// accelerator's average takes them in its rounding row, so nothing is widened and every output is
// within one step of the file's semantics (they were widened to int8 symmetric at twice the scale
// and up to 5 steps off), bit-exact on every target.
TEST(Network, Uint8AveragePoolsKeepTheirZeroPoints) {
  std::mt19937 rng(5);
  Graph g;
  g.name = g.origin = "uint8-pools";
  g.opset = 13;
  auto scalar = [&](const std::string& name, float scale) {
    Tensor t;
    t.name = name;
    t.hasShape = true;
    t.isConstant = true;
    t.floats = {scale};
    g.tensors[name] = t;
  };
  auto zero = [&](const std::string& name, int64_t z) {
    Tensor t;
    t.name = name;
    t.dtype = tessera::compiler::ir::DType::kUInt8;
    t.hasShape = true;
    t.isConstant = true;
    t.ints = {z};
    g.tensors[name] = t;
  };
  Tensor x = floatTensor("x", {1, 32, 8, 8}, rng, 1.0f, false);
  x.floats.clear();
  g.tensors["x"] = x;
  g.inputs = {"x"};
  scalar("s_in", 0.02f), zero("z_in", 57);
  scalar("s_gap", 0.004f), zero("z_gap", 141);
  scalar("s_avg", 0.011f), zero("z_avg", 20);
  g.nodes.push_back(node("QuantizeLinear", "q_in", {"x", "s_in", "z_in"}, {"xq"}));
  g.nodes.push_back(node("DequantizeLinear", "dq_in", {"xq", "s_in", "z_in"}, {"xd"}));
  g.nodes.push_back(node("GlobalAveragePool", "gap", {"xd"}, {"gap"}));
  g.nodes.push_back(node("QuantizeLinear", "q_gap", {"gap", "s_gap", "z_gap"}, {"gapq"}));
  g.nodes.push_back(node("DequantizeLinear", "dq_gap", {"gapq", "s_gap", "z_gap"}, {"gap_out"}));
  Node avg = node("AveragePool", "avg", {"xd"}, {"avg"});
  avg.attrs["kernel_shape"] = ints({2, 2});
  avg.attrs["strides"] = ints({2, 2});
  g.nodes.push_back(avg);
  g.nodes.push_back(node("QuantizeLinear", "q_avg", {"avg", "s_avg", "z_avg"}, {"avgq"}));
  g.nodes.push_back(node("DequantizeLinear", "dq_avg", {"avgq", "s_avg", "z_avg"}, {"avg_out"}));
  // Padded, counting its padding (as Inception's branch pools): the padding stands for 0.
  scalar("s_pad", 0.015f), zero("z_pad", 200);
  Node pad = node("AveragePool", "pad_avg", {"xd"}, {"pad_avg"});
  pad.attrs["kernel_shape"] = ints({3, 3});
  pad.attrs["pads"] = ints({1, 1, 1, 1});
  Attribute countPadding;  // kind int
  countPadding.i = 1;
  pad.attrs["count_include_pad"] = countPadding;
  g.nodes.push_back(pad);
  g.nodes.push_back(node("QuantizeLinear", "q_pad", {"pad_avg", "s_pad", "z_pad"}, {"padq"}));
  g.nodes.push_back(node("DequantizeLinear", "dq_pad", {"padq", "s_pad", "z_pad"}, {"pad_out"}));
  g.outputs = {"gap_out", "avg_out", "pad_out"};
  tessera::compiler::host::inferShapes(g);
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  const CompiledModel m = tessera::compiler::graph::compile(cfg, g);
  for (const auto& note : m.quantizationNotes) ADD_FAILURE() << "widened: " << note.tensor << ": " << note.change;
  int averages = 0;
  for (const auto& l : m.layers)
    if (l.kind == "avgpool") {
      ++averages;
      EXPECT_NE(l.spec.find("inzp=-71"), std::string::npos) << l.spec;  // 57 - 128
    }
  EXPECT_EQ(averages, 3);
  size_t off = 0, total = 0;
  for (uint32_t s = 0; s < 6; ++s) {
    std::mt19937 r(40 + s);
    std::map<std::string, Tensor> in = {{"x", floatTensor("x", {1, 32, 8, 8}, r, 1.0f + 0.3f * float(s), false)}};
    const auto file = tessera::compiler::host::evaluate(g, in);
    const auto ref = tessera::compiler::model::runReference(m, in);
    for (const auto& [name, step] :
         {std::pair<std::string, float>{"gap_out", 0.004f}, {"avg_out", 0.011f}, {"pad_out", 0.015f}}) {
      const auto& a = ref.outputs.at(name).floats;
      const auto& b = file.at(name).floats;
      ASSERT_EQ(a.size(), b.size());
      for (size_t k = 0; k < a.size(); ++k, ++total) {
        EXPECT_LE(std::fabs(a[k] - b[k]), step * 1.0001f) << name << " element " << k;
        off += std::fabs(a[k] - b[k]) > step * 0.5f;
      }
    }
    if (s < 2)
      for (const std::string target : {"fsim", "tsim", "hls", "hls-sc", "rtl-sc"}) {
        if (!built(target, cfg)) continue;
        tessera::runtime::Session session(target, cfg);
        tessera::compiler::model::ModelRunner runner(m, session);
        const auto got = runner.run(in);
        for (const char* name : {"gap_out", "avg_out", "pad_out"})
          EXPECT_EQ(got.outputs.at(name).floats, ref.outputs.at(name).floats) << target << " " << name;
      }
  }
  std::printf("uint8 averages: %zu of %zu outputs a step off the file's\n", off, total);
}

// Cosine similarity of two outputs.
double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t k = 0; k < a.size() && k < b.size(); ++k) ab += double(a[k]) * b[k], aa += double(a[k]) * a[k], bb += double(b[k]) * b[k];
  return ab / std::sqrt(aa * bb);
}

// `g` compiled for `default`, calibrated on four samples of `input` from seed `seed` on.
CompiledModel compileCalibrated(const Graph& g, const std::function<std::map<std::string, Tensor>(uint32_t)>& input, uint32_t seed,
                                tessera::compiler::graph::TransposedConvolutionForm form =
                                    tessera::compiler::graph::TransposedConvolutionForm::kCostModel) {
  tessera::compiler::graph::Calibration c;
  c.origin = "test";
  for (uint32_t s = 0; s < 4; ++s) c.samples.push_back(input(seed + s));
  tessera::compiler::graph::CompileOptions o;
  o.calibration = &c;
  o.transposedConvolutions = form;
  return tessera::compiler::graph::compile(tessera::hw::Config::load("default"), g, o);
}

// The accelerator layers, each as its description begins ("conv2d fc1").
std::vector<std::string> acceleratorLayerNames(const CompiledModel& m) {
  std::vector<std::string> names;
  for (const auto& l : m.layers)
    if (l.onAccelerator) names.push_back(l.detail.substr(0, l.detail.find(':')));
  return names;
}

// A transformer's projections: a MatMul over [1, 20, 32] rows (with PyTorch's Add of the bias)
// and a Gemm over 12 rows run as 1x1 convolutions over the rows, a classifier's head over a batch
// of two stays dense, token rows reshaped from attention's heads do not; bit-exact on every target with the host reference, close to the float model.
TEST(Network, RowProductsRunAsConvolutions) {
  std::mt19937 rng(9);
  Graph g;
  g.name = g.origin = "row-products";
  g.opset = 13;
  for (Tensor t : {floatTensor("x", {1, 20, 32}, rng, 1, false), floatTensor("w1", {32, 48}, rng, 0.2f, true),
                   floatTensor("b1", {48}, rng, 0.1f, true), floatTensor("w2", {48, 16}, rng, 0.2f, true),
                   floatTensor("b2", {16}, rng, 0.1f, true), floatTensor("z", {12, 24}, rng, 1, false),
                   floatTensor("w3", {16, 24}, rng, 0.2f, true), floatTensor("b3", {16}, rng, 0.1f, true),
                   floatTensor("q", {2, 16, 2, 2}, rng, 1, false), floatTensor("w4", {10, 64}, rng, 0.2f, true),
                   floatTensor("hd", {1, 20, 2, 16}, rng, 1, false), floatTensor("w5", {32, 8}, rng, 0.2f, true)}) {
    if (!t.isConstant) t.floats.clear();
    g.tensors[t.name] = t;
  }
  // Attention's heads merged back into token rows: [1, 20, 2, 16] -> [1, 20, 32].
  g.tensors["merged_shape"] = int64Tensor("merged_shape", {1, 20, 32});
  g.inputs = {"x", "z", "q", "hd"};
  g.nodes.push_back(node("MatMul", "fc1", {"x", "w1"}, {"h"}));
  g.nodes.push_back(node("Add", "fc1_bias", {"h", "b1"}, {"hb"}));
  g.nodes.push_back(node("Relu", "act", {"hb"}, {"r"}));
  g.nodes.push_back(node("MatMul", "fc2", {"r", "w2"}, {"o"}));
  g.nodes.push_back(node("Add", "fc2_bias", {"b2", "o"}, {"y"}));
  Node gemm = node("Gemm", "proj", {"z", "w3", "b3"}, {"p"});
  Attribute transB;  // kind int
  transB.i = 1;
  gemm.attrs["transB"] = transB;
  g.nodes.push_back(gemm);
  // A classifier's head over a batch of two stays dense.
  g.nodes.push_back(node("Flatten", "flat", {"q"}, {"qf"}));
  Node head = node("Gemm", "head", {"qf", "w4"}, {"logits"});
  head.attrs["transB"] = transB;
  g.nodes.push_back(head);
  // Token rows from a Reshape of a 4-D tensor are rows, not a classifier's head.
  g.nodes.push_back(node("Reshape", "merge_heads", {"hd", "merged_shape"}, {"tokens"}));
  g.nodes.push_back(node("MatMul", "out_proj", {"tokens", "w5"}, {"t"}));
  g.outputs = {"y", "p", "logits", "t"};
  tessera::compiler::host::inferShapes(g);
  auto input = [&](uint32_t seed) {
    std::mt19937 r(seed);
    return std::map<std::string, Tensor>{{"x", floatTensor("x", {1, 20, 32}, r, 1, false)},
                                         {"z", floatTensor("z", {12, 24}, r, 1, false)},
                                         {"q", floatTensor("q", {2, 16, 2, 2}, r, 1, false)},
                                         {"hd", floatTensor("hd", {1, 20, 2, 16}, r, 1, false)}};
  };
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  const CompiledModel m = compileCalibrated(g, input, 60);
  EXPECT_EQ(acceleratorLayerNames(m),
            (std::vector<std::string>{"conv2d fc1", "conv2d fc2", "conv2d proj", "dense head", "conv2d out_proj"}));
  const auto in = input(90);
  const auto want = tessera::compiler::host::evaluate(g, in);
  const auto ref = tessera::compiler::model::runReference(m, in);
  for (const char* name : {"y", "p", "logits", "t"}) {
    ASSERT_EQ(ref.outputs.at(name).floats.size(), want.at(name).floats.size()) << name;
    EXPECT_GT(cosine(ref.outputs.at(name).floats, want.at(name).floats), 0.995) << name << ": cosine to the float model";
  }
  for (const std::string target : {"fsim", "tsim", "hls", "hls-sc", "rtl-sc"}) {
    if (!built(target, cfg)) continue;
    tessera::runtime::Session session(target, cfg);
    tessera::compiler::model::ModelRunner runner(m, session);
    const auto got = runner.run(in);
    for (const char* name : {"y", "p", "logits", "t"})
      EXPECT_EQ(got.outputs.at(name).floats, ref.outputs.at(name).floats) << target << " " << name;
  }
}

// A DCGAN-style generator's transposed convolutions (kernel 4, stride 2, pad 1 with a BatchNorm
// and ReLU after it; kernel 3, stride 2, pad 1, output padding 1 with a Tanh after it) run as
// convolutions over zero-inserted inputs on the accelerator, bit-exact on every target with the
// host reference, and close to the float model.
TEST(Network, TransposedConvolutionsRunAsConvolutions) {
  std::mt19937 rng(13);
  Graph g;
  g.name = g.origin = "generator";
  g.opset = 13;
  for (Tensor t : {floatTensor("x", {1, 32, 4, 4}, rng, 1, false), floatTensor("w1", {32, 16, 4, 4}, rng, 0.1f, true),
                   floatTensor("gamma", {16}, rng, 0.2f, true), floatTensor("beta", {16}, rng, 0.1f, true),
                   floatTensor("mean", {16}, rng, 0.1f, true), floatTensor("w2", {16, 16, 3, 3}, rng, 0.2f, true),
                   floatTensor("b2", {16}, rng, 0.1f, true)}) {
    if (!t.isConstant) t.floats.clear();
    g.tensors[t.name] = t;
  }
  Tensor var = floatTensor("var", {16}, rng, 0.1f, true);
  for (float& v : var.floats) v = 1.0f + std::fabs(v);
  g.tensors["var"] = var;
  // Two convolutions after the transposed ones, whose outputs the DRAM planner would place over
  // the dilate's zeros if it let anything share them.
  for (Tensor t : {floatTensor("w3", {16, 16, 3, 3}, rng, 0.2f, true), floatTensor("w4", {8, 16, 3, 3}, rng, 0.2f, true)})
    g.tensors[t.name] = t;
  for (float& v : g.tensors["gamma"].floats) v += 1.0f;
  g.inputs = {"x"};
  Node up1 = node("ConvTranspose", "up1", {"x", "w1"}, {"u1"});
  up1.attrs["strides"] = ints({2, 2});
  up1.attrs["pads"] = ints({1, 1, 1, 1});
  g.nodes.push_back(up1);
  g.nodes.push_back(node("BatchNormalization", "bn1", {"u1", "gamma", "beta", "mean", "var"}, {"n1"}));
  g.nodes.push_back(node("Relu", "relu1", {"n1"}, {"r1"}));
  Node up2 = node("ConvTranspose", "up2", {"r1", "w2", "b2"}, {"u2"});
  up2.attrs["strides"] = ints({2, 2});
  up2.attrs["pads"] = ints({1, 1, 1, 1});
  up2.attrs["output_padding"] = ints({1, 1});
  g.nodes.push_back(up2);
  for (const auto& [name, in, w, out] : {std::tuple<std::string, std::string, std::string, std::string>{"post1", "u2", "w3", "p1"},
                                         {"post2", "p1", "w4", "p2"}}) {
    Node c = node("Conv", name, {in, w}, {out});
    c.attrs["pads"] = ints({1, 1, 1, 1});
    g.nodes.push_back(c);
  }
  g.nodes.push_back(node("Tanh", "tanh", {"p2"}, {"image"}));
  g.outputs = {"image"};
  tessera::compiler::host::inferShapes(g);
  ASSERT_EQ(g.tensor("image").shape, (std::vector<int64_t>{1, 8, 16, 16}));
  auto input = [&](uint32_t seed) {
    std::mt19937 r(seed);
    return std::map<std::string, Tensor>{{"x", floatTensor("x", {1, 32, 4, 4}, r, 1, false)}};
  };
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  using Form = tessera::compiler::graph::TransposedConvolutionForm;
  for (const Form form : {Form::kZeroInsertion, Form::kStridePhases}) {
    const bool phases = form == Form::kStridePhases;
    const std::string which = phases ? "stride phases" : "zero insertion";
    const CompiledModel m = compileCalibrated(g, input, 70, form);
    // Zero insertion: up2's zero insertion and padding over up1's output are a dilate done by
    // up1's stores; up1's, over the network's input, stay on the host. Stride phases: each is one
    // convolution computing its four phases (kernel 4: 2x2 taps each; kernel 3 with output
    // padding 1: 2x2 taps, some zero), interleaved and cropped by its stores.
    std::vector<std::string> names = {"conv2d up1+bn1", "copy-free", "conv2d up2", "conv2d post1", "conv2d post2"};
    if (phases) names.insert(names.begin() + 3, "copy-free");
    EXPECT_EQ(acceleratorLayerNames(m), names) << which;
    EXPECT_EQ(m.segments.size(), 1u) << which;
    std::vector<std::string> specs;
    for (const auto& l : m.layers)
      if (l.onAccelerator && l.insnBegin == l.insnEnd) specs.push_back(l.spec);
    const std::vector<std::string> wantSpecs =
        phases ? std::vector<std::string>{"interleave phases=2x2 crop=1x1 size=8x8", "interleave phases=2x2 crop=1x1 size=16x16"}
               : std::vector<std::string>{"dilate stride=2x2 offset=1x1 size=18x18"};
    EXPECT_EQ(specs, wantSpecs) << which;
    // The table counts each transposed convolution's own MACs (input pixels x output channels x
    // kernel taps), not those of the convolution that computes it.
    std::vector<uint64_t> macs;
    for (const auto& l : m.layers)
      if (l.onAccelerator) macs.push_back(l.macs);
    std::vector<uint64_t> wantMacs = {32 * 4 * 4 * 16 * 4 * 4, 0, 16 * 8 * 8 * 16 * 3 * 3, 16 * 16 * 16 * 16 * 3 * 3,
                                      8 * 16 * 16 * 16 * 3 * 3};
    if (phases) wantMacs.insert(wantMacs.begin() + 3, 0);
    EXPECT_EQ(macs, wantMacs) << which;
    // Each target's runner runs every input: the zeros between the dilate's pixels must outlast a run.
    std::vector<std::unique_ptr<tessera::runtime::Session>> sessions;
    std::vector<std::unique_ptr<tessera::compiler::model::ModelRunner>> runners;
    std::vector<std::string> targets;
    for (const std::string target : {"fsim", "tsim", "hls", "hls-sc", "rtl-sc"}) {
      if (!built(target, cfg)) continue;
      sessions.push_back(std::make_unique<tessera::runtime::Session>(target, cfg));
      runners.push_back(std::make_unique<tessera::compiler::model::ModelRunner>(m, *sessions.back()));
      targets.push_back(target);
    }
    for (uint32_t s = 0; s < 3; ++s) {
      const auto in = input(90 + s);
      const auto values = tessera::compiler::host::evaluate(g, in);
      const auto& want = values.at("image").floats;
      const auto ref = tessera::compiler::model::runReference(m, in);
      const auto& got = ref.outputs.at("image").floats;
      ASSERT_EQ(got.size(), want.size());
      EXPECT_GT(cosine(got, want), 0.99) << which << " input " << s << ": cosine to the float model";
      for (size_t t = 0; t < runners.size(); ++t)
        EXPECT_EQ(runners[t]->run(in).outputs.at("image").floats, got) << which << " " << targets[t] << " input " << s;
    }
  }
}

// Transposed convolutions the lowering does not take (dilations, groups) stay whole on the host,
// named in the layer table, and compute what the float model does.
TEST(Network, TransposedConvolutionsItCannotLowerRunOnTheHost) {
  std::mt19937 rng(17);
  Graph g;
  g.name = g.origin = "odd-transposed";
  g.opset = 13;
  for (Tensor t : {floatTensor("x", {1, 16, 5, 5}, rng, 1, false), floatTensor("wd", {16, 8, 3, 3}, rng, 0.2f, true),
                   floatTensor("wg", {16, 4, 3, 3}, rng, 0.2f, true), floatTensor("wc", {16, 16, 1, 1}, rng, 0.2f, true)}) {
    if (!t.isConstant) t.floats.clear();
    g.tensors[t.name] = t;
  }
  g.inputs = {"x"};
  g.nodes.push_back(node("Conv", "before", {"x", "wc"}, {"c"}));
  Node dilated = node("ConvTranspose", "up_dilated", {"c", "wd"}, {"d"});
  dilated.attrs["strides"] = ints({2, 2});
  dilated.attrs["dilations"] = ints({2, 2});
  g.nodes.push_back(dilated);
  Node grouped = node("ConvTranspose", "up_grouped", {"c", "wg"}, {"e"});
  grouped.attrs["strides"] = ints({2, 2});
  Attribute groups;  // kind int
  groups.i = 4;
  grouped.attrs["group"] = groups;
  g.nodes.push_back(grouped);
  g.outputs = {"d", "e"};
  tessera::compiler::host::inferShapes(g);
  auto input = [&](uint32_t seed) {
    std::mt19937 r(seed);
    return std::map<std::string, Tensor>{{"x", floatTensor("x", {1, 16, 5, 5}, r, 1, false)}};
  };
  const CompiledModel m = compileCalibrated(g, input, 80);
  EXPECT_EQ(acceleratorLayerNames(m), (std::vector<std::string>{"conv2d before"}));
  std::vector<std::string> hostLayers;
  for (const auto& l : m.layers)
    if (!l.onAccelerator && l.kind == "ConvTranspose") hostLayers.push_back(l.name);
  EXPECT_EQ(hostLayers, (std::vector<std::string>{"up_dilated", "up_grouped"}));
  const auto in = input(95);
  const auto want = tessera::compiler::host::evaluate(g, in);
  const auto ref = tessera::compiler::model::runReference(m, in);
  for (const char* name : {"d", "e"}) {
    ASSERT_EQ(ref.outputs.at(name).floats.size(), want.at(name).floats.size()) << name;
    EXPECT_GT(cosine(ref.outputs.at(name).floats, want.at(name).floats), 0.99) << name;
  }
}

TEST(Network, CompiledModelFilesRoundTripAndRefuseCorruption) {
  const CompiledModel m = compileSmall(tessera::hw::Config::load("default"));
  const std::vector<uint8_t> bytes = m.serialize();
  const CompiledModel back = CompiledModel::deserialize(bytes, "mem");
  const auto in = sample(9);
  EXPECT_EQ(tessera::compiler::model::runReference(back, in).outputs.at("logits").floats,
            tessera::compiler::model::runReference(m, in).outputs.at("logits").floats);
  std::vector<uint8_t> corrupt = bytes;
  corrupt[corrupt.size() / 2] ^= 0x10;
  EXPECT_THROW(CompiledModel::deserialize(corrupt, "corrupt.tsm"), tessera::Error);
  std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + int64_t(bytes.size() / 3));
  try {
    CompiledModel::deserialize(truncated, "truncated.tsm");
    FAIL() << "a truncated model loaded";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated.tsm"), std::string::npos) << e.what();
  }
}

// Regression test (found by the tsm_file fuzzer): a tensor's stored quantization axis was turned
// into an int and decremented unchecked (signed overflow at 0x80000000, UBSan); now it is bounded
// by the largest rank a file holds.
TEST(Network, CompiledModelFileRefusesAQuantizationAxisPastAnyRank) {
  CompiledModel m = compileSmall(tessera::hw::Config::load("small"));
  ASSERT_FALSE(m.inputs.empty());
  m.inputs[0].quant.axis = 9;
  try {
    CompiledModel::deserialize(m.serialize(), "axis.tsm");
    FAIL() << "a quantization axis past rank 8 loaded";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("axis.tsm"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("quantization axis 9"), std::string::npos) << e.what();
  }
}

TEST(Network, WrongInputsAreNamed) {
  const CompiledModel m = compileSmall(tessera::hw::Config::load("default"));
  std::mt19937 rng(1);
  try {
    tessera::compiler::model::runReference(m, {{"x", floatTensor("x", {1, 3, 8, 8}, rng, 1, false)}});
    FAIL();
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tessera::compiler::model::runReference(m, {}), tessera::Error);
  auto extra = sample(1);
  extra["y"] = extra["x"];
  EXPECT_THROW(tessera::compiler::model::runReference(m, extra), tessera::Error);
}

TEST(Network, CalibrationOfTheWrongShapeIsNamed) {
  tessera::compiler::graph::Calibration c;
  c.origin = "calib-dir";
  std::mt19937 rng(3);
  c.samples.push_back({{"x", floatTensor("x", {1, 1, 32, 32}, rng, 1, false)}});
  tessera::compiler::graph::CompileOptions o;
  o.calibration = &c;
  try {
    tessera::compiler::graph::compile(tessera::hw::Config::load("default"), smallNetwork(7), o);
    FAIL();
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("calib-dir"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
}

// The squared error of quantizing `magnitudes` to 127 steps of threshold/127, clipping above it.
double quantizationError(const std::vector<float>& magnitudes, double threshold) {
  const double step = threshold / 127;
  double e = 0;
  for (float v : magnitudes) {
    const double q = std::min(std::round(double(v) / step), 127.0) * step;
    e += (q - v) * (q - v);
  }
  return e;
}

// The MSE method's threshold is the least-error clipping of the values themselves (to within 2% of
// the best of a fine search over their exact rounding, with and without far outliers), cuts a
// Gaussian's thin tail, and keeps the whole range of a distribution with nothing worth clipping.
TEST(Calibration, MseThresholdIsTheLeastErrorClipping) {
  using tessera::compiler::graph::detail::mseThreshold;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> gauss;
  for (int i = 0; i < 50000; ++i) gauss.push_back(std::fabs(normal(rng)));
  const float top = *std::max_element(gauss.begin(), gauss.end());
  std::vector<float> outliers = gauss;
  for (int i = 0; i < 5; ++i) outliers.push_back(12.0f);
  for (const auto* values : {&gauss, &outliers}) {
    const float maxAbs = *std::max_element(values->begin(), values->end());
    const float t = mseThreshold(*values, maxAbs);
    double best = std::numeric_limits<double>::infinity();
    for (double c = 0.5; c <= maxAbs; c += 0.02) best = std::min(best, quantizationError(*values, c));
    EXPECT_LE(quantizationError(*values, t), 1.02 * best) << "threshold " << t << " of " << maxAbs;
  }
  EXPECT_LT(mseThreshold(gauss, top), 0.9f * top);

  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> flat;
  for (int i = 0; i < 100000; ++i) flat.push_back(uniform(rng));
  EXPECT_GE(mseThreshold(flat, 1.0f), 0.95f);
  EXPECT_EQ(mseThreshold({}, 3.0f), 3.0f);
  EXPECT_EQ(mseThreshold({0.0f, 0.0f}, 0.0f), 0.0f);
}

// The requantization never wraps: worst-case accumulators through the integer pipeline (exactly
// the accelerator's: bias, pre-shift or pre-clip, multiply, shift, clip) land within one step of the real
// product, for channel scales spread up to 16x.
TEST(Requantization, IntegerPipelineTracksTheRealMultiplier) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> base(1e-5, 0.05), spread(1.0, 16.0);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<double> real(8);
    const double b = base(rng) * (trial % 3 == 0 ? 20 : 1);
    for (double& r : real) r = b * spread(rng);
    const int64_t worst = int64_t(1) << (10 + trial % 16);
    const auto r = tessera::compiler::graph::detail::requantization(real, worst);
    std::uniform_int_distribution<int64_t> acc(-worst, worst);
    for (int k = 0; k < 300; ++k) {
      const size_t o = size_t(k) % real.size();
      const int64_t a = k == 0 ? worst : k == 1 ? -worst : acc(rng);
      int64_t v = (a + r.roundingBias[o]) >> r.preShift;
      if (r.preClip) v = std::clamp<int64_t>(v, -r.preClip, r.preClip);
      const int64_t product = v * r.multipliers[o];
      ASSERT_LE(std::llabs(product), int64_t(INT32_MAX)) << "multiply wraps";
      const int64_t rounded = r.round ? product + (int64_t(1) << (r.shift - 1)) : product;
      ASSERT_LE(std::llabs(rounded), int64_t(INT32_MAX)) << "rounding wraps";
      const int64_t got = std::clamp<int64_t>(rounded >> r.shift, -128, 127);
      const double want = std::clamp(double(a) * real[o], -128.0, 127.0);
      ASSERT_LE(std::fabs(double(got) - want), 1.0) << "acc " << a << " m " << real[o] << " pre " << r.preShift;
    }
  }
}

// The clip-bound form: through exactly the accelerator's int32 arithmetic (bias with the folded
// rounding, per-channel clip, multiply, rounding, shift, the stored low byte), every accumulator,
// including those far beyond the saturation point, gives the correctly rounded result of the
// quantized multiplier, saturated to int8 (or to [0, 127] with ReLU), and no product wraps.
TEST(Requantization, ChannelClipBoundsAreExactAndNeverWrap) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> exponent(-6.0, -1.3), spread(1.0, 16.0);
  int immediate = 0, refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<double> real(8);
    const double b = std::pow(10.0, exponent(rng)) * (trial % 4 == 0 ? 8 : 1);
    for (double& r : real) r = b * spread(rng);
    if (trial % 7 == 0) real[3] = 0;  // a channel of zero weights
    const bool relu = trial % 2 == 1;
    const int64_t worst = int64_t(1) << (8 + trial % 22);
    const auto r = tessera::compiler::graph::detail::clippedRequantization(real, worst, relu);
    // Where one accumulator step can exceed an output step (a multiplier near 1 or above), or the
    // multiplier would be too coarse, the form is refused (the older forms take over).
    if (!r) {
      ++refused;
      continue;
    }
    ASSERT_TRUE(r->perChannelClip);
    immediate += r->round;
    std::uniform_int_distribution<int64_t> acc(-worst, worst);
    for (int k = 0; k < 400; ++k) {
      const size_t o = size_t(k) % real.size();
      const int64_t a = k < 8 ? worst : k < 16 ? -worst : acc(rng);
      const int64_t biased = a + r->roundingBias[o];
      ASSERT_LE(std::llabs(biased), int64_t(INT32_MAX));
      const int64_t clipped = std::clamp<int64_t>(biased, r->clipLow[o], r->clipHigh[o]);
      const int64_t product = clipped * r->multipliers[o];
      ASSERT_GE(product, int64_t(INT32_MIN)) << "multiply wraps";
      ASSERT_LE(product, int64_t(INT32_MAX)) << "multiply wraps";
      const int64_t rounded = r->round ? product + (int64_t(1) << (r->shift - 1)) : product;
      ASSERT_LE(std::llabs(rounded), int64_t(INT32_MAX)) << "rounding wraps";
      const int64_t got = rounded >> r->shift;
      ASSERT_GE(got, relu ? 0 : -128) << "the bounds must keep the result in range";
      ASSERT_LE(got, 127);
      // The same pipeline without the clip, in int64, saturated afterwards: the clip is exact.
      const int64_t unclipped = biased * r->multipliers[o] + (r->round ? int64_t(1) << (r->shift - 1) : 0);
      const int64_t want = std::clamp<int64_t>(unclipped >> r->shift, relu ? 0 : -128, 127);
      ASSERT_EQ(got, want) << "acc " << a << " m " << r->multipliers[o] << " shift " << r->shift;
      ASSERT_LE(std::fabs(double(got) - std::clamp(double(a) * real[o], relu ? 0.0 : -128.0, 127.0)), 1.0);
    }
  }
  EXPECT_GT(immediate, 0) << "large multipliers take the rounding immediate";
  EXPECT_GT(refused, 0);
  EXPECT_LT(refused, 150);
  EXPECT_FALSE(tessera::compiler::graph::detail::clippedRequantization({0.01, -0.02}, 1000, false).has_value());
}

// The bias after the multiply: through the reference's int32 arithmetic (applyEpilogue, which
// wraps as the ALU does), every accumulator, saturating or not and with biases up to 2^30, gives
// (acc + bias) * m + 2^23 >> 24 computed without overflow, saturated: products that leave int32
// wrap back. Unsaturated results are within half a step plus the bound the compiler reports of
// the real product, so they round correctly unless the real value lies that close to a tie.
TEST(Requantization, BiasAfterTheMultiplyRoundsExactlyThroughWrappingInt32) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> exponent(-6.0, -1.3), spread(1.0, 16.0);
  std::uniform_int_distribution<int64_t> biasDist(-(int64_t(1) << 30), int64_t(1) << 30);
  int refused = 0, wrapped = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<double> real(8);
    const double b = std::pow(10.0, exponent(rng)) * (trial % 4 == 0 ? 8 : 1);
    for (double& r : real) r = b * spread(rng);
    if (trial % 7 == 0) real[3] = 0;
    const bool relu = trial % 2 == 1;
    const int64_t maxAcc = int64_t(1) << (8 + trial % 23);
    std::vector<int64_t> bias(real.size());
    for (auto& v : bias) v = trial % 3 == 0 ? biasDist(rng) / (int64_t(1) << (trial % 20)) : 0;
    const auto r = tessera::compiler::graph::detail::productBiasRequantization(real, bias, maxAcc, relu);
    if (!r) {
      ++refused;
      continue;
    }
    ASSERT_TRUE(r->biasAfterMultiply && r->perChannelClip);
    ASSERT_EQ(r->shift, 24);
    tessera::compiler::op::Epilogue e;
    e.perChannelMultiplier = e.perChannelClip = e.biasAfterMultiply = true;
    e.shift = r->shift;
    e.relu = relu;
    std::uniform_int_distribution<int64_t> acc(-maxAcc, maxAcc);
    for (int k = 0; k < 400; ++k) {
      const size_t o = size_t(k) % real.size();
      const int64_t a = k < 8 ? maxAcc : k < 16 ? -maxAcc : acc(rng);
      const int8_t got = tessera::compiler::op::applyEpilogue(e, int32_t(a), r->productBias[o], r->multipliers[o],
                                                          r->clipLow[o], r->clipHigh[o]);
      const int64_t v = a + bias[o];
      const int64_t exact = v * r->multipliers[o] + (int64_t(1) << 23);
      const int64_t want = std::clamp<int64_t>(exact >> 24, relu ? 0 : -128, 127);
      ASSERT_EQ(int64_t(got), want) << "acc " << a << " bias " << bias[o] << " m " << r->multipliers[o];
      const int64_t clipped = std::clamp<int64_t>(a, r->clipLow[o], r->clipHigh[o]);
      wrapped += std::llabs(clipped * r->multipliers[o]) > INT32_MAX;
      const double ideal = double(v) * real[o];
      if (ideal > (relu ? 0.0 : -128.0) && ideal < 127.0) {
        ASSERT_LE(std::fabs(double(got) - ideal), 0.5 + r->worstStepError + 1e-9) << "acc " << a << " m " << real[o];
      }
    }
  }
  EXPECT_GT(wrapped, 0) << "large biases make intermediate products wrap";
  EXPECT_LT(refused, 100);
  EXPECT_FALSE(tessera::compiler::graph::detail::productBiasRequantization({0.01, -0.02}, {0, 0}, 1000, false).has_value());
  EXPECT_FALSE(tessera::compiler::graph::detail::productBiasRequantization({0.01, 1.5}, {0, 0}, 1000, false).has_value());
}

// Low multiplier bits (lowbits=E): the two-word product gives exactly floor((v * M + 2^(S-1)) /
// 2^S) for S = 24 + E, M = round(real * 2^S), over every accumulator the layer can produce, with
// no intermediate that must not wrap leaving int32; the bounds saturate exactly.
// A fused HardSigmoid or HardSwish against the float function, over every integer input v of
// its range, for input ranges from a tenth to a hundred and the output scales calibration would
// give: the integer result (op::epilogueValue's arithmetic, which every target computes) stays
// within `bound` output steps of the function's exact value (0.5 of them is rounding's).
TEST(Requantization, FusedActivationsTrackTheFloatFunction) {
  using tessera::compiler::graph::detail::activationConstants;
  using tessera::compiler::op::Epilogue;
  for (bool swish : {false, true})
    for (double range : {0.1, 0.6, 3.0, 8.0, 40.0, 100.0}) {
      auto f = [&](double x) {
        const double h = std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
        return swish ? x * h : h;
      };
      const double outRange = swish ? std::max(f(range), 0.375) : f(range);
      const double sy = outRange / 127.0;
      const auto c = activationConstants(swish, range, sy);
      ASSERT_TRUE(c) << (swish ? "hardswish" : "hardsigmoid") << " range " << range;
      Epilogue e;
      e.bias = false;
      e.perChannelMultiplier = true;
      e.perChannelClip = true;
      e.shift = 0;
      e.activation = swish ? Epilogue::Activation::kHardSwish : Epilogue::Activation::kHardSigmoid;
      e.activationOffset = c->offset;
      e.activationCeiling = c->ceiling;
      e.activationPreShift = c->preShift;
      e.activationMultiplier = c->multiplier;
      e.activationShift = c->shift;
      double worst = 0;
      for (int64_t v = -c->vMax; v <= c->vMax; ++v) {
        const int32_t y = tessera::compiler::op::epilogueValue(e, int32_t(v), 0, 1, INT32_MIN, INT32_MAX);
        const double want = std::min(std::max(f(double(v) * c->inputScale) / sy, -128.0), 127.0);
        worst = std::max(worst, std::fabs(double(y) - want));
      }
      EXPECT_LT(worst, 0.75) << (swish ? "hardswish" : "hardsigmoid") << " range " << range << ": offset " << c->offset
                              << " preshift " << c->preShift << " mul " << c->multiplier << " shift " << c->shift;
      std::printf("%s over [-%g, %g]: v in +-%lld, worst %.3f output steps\n", swish ? "hardswish" : "hardsigmoid",
                  range, range, (long long)c->vMax, worst);
    }
}

// A fused sigmoid, SiLU or tanh (the nested clamps) against the float function, over every integer
// input v of its range, for input ranges from a tenth to a hundred: the integer result (what every
// target computes) stays within the bound below of the exact value, in output steps. The bound
// is the fit's own error (0.0051 of the sigmoid's 1) at the output scale, plus rounding's half
// step and the multiplier's and v's resolution.
TEST(Requantization, PiecewiseActivationsTrackTheFloatFunction) {
  using tessera::compiler::graph::detail::piecewiseConstants;
  using tessera::compiler::graph::detail::piecewiseTarget;
  using tessera::compiler::op::Epilogue;
  for (auto kind : {Epilogue::Activation::kSigmoid, Epilogue::Activation::kSilu, Epilogue::Activation::kTanh})
    for (double range : {0.1, 0.6, 3.0, 8.0, 40.0, 100.0}) {
      const char* name = kind == Epilogue::Activation::kSigmoid ? "sigmoid" : kind == Epilogue::Activation::kSilu ? "silu" : "tanh";
      auto f = [&](double x) { return piecewiseTarget(kind, x); };
      const double outRange = kind == Epilogue::Activation::kSilu ? std::max(f(range), 0.2785) : f(range);
      const double sy = outRange / 127.0;
      const auto c = piecewiseConstants(kind, range, sy);
      ASSERT_TRUE(c) << name << " range " << range;
      Epilogue e;
      e.bias = false;
      e.perChannelMultiplier = true;
      e.perChannelClip = true;
      e.shift = 0;
      e.activation = kind;
      e.activationBounds = c->bounds;
      e.activationSlopes = c->slopes;
      e.activationSlopeShift = c->slopeShift;
      e.activationOffset = c->offset;
      e.activationPreShift = c->preShift;
      e.activationMultiplier = c->multiplier;
      e.activationShift = c->shift;
      // The fit's error at this output scale: 0.0051 of the sigmoid, twice that for tanh.
      const double fit = (kind == Epilogue::Activation::kTanh ? 0.0102 : 0.0051) *
                         (kind == Epilogue::Activation::kSilu ? range : 1.0) / sy;
      double worst = 0;
      for (int64_t v = -c->vMax; v <= c->vMax; ++v) {
        const int32_t y = tessera::compiler::op::epilogueValue(e, int32_t(v), 0, 1, INT32_MIN, INT32_MAX);
        const double want = std::min(std::max(f(double(v) * c->inputScale) / sy, -128.0), 127.0);
        worst = std::max(worst, std::fabs(double(y) - want));
      }
      EXPECT_LT(worst, fit + 0.75) << name << " range " << range;
      std::printf("%s over [-%g, %g]: v in +-%lld, bounds %d %d %d %d slopes %d %d %d, worst %.3f output steps (fit's error %.3f)\n", name,
                  range, range, (long long)c->vMax, c->bounds[0], c->bounds[1], c->bounds[2], c->bounds[3], c->slopes[0], c->slopes[1], c->slopes[2], worst, fit);
    }
}

// A LeakyRelu on the sum (Epilogue::leaky) over the whole range of sums the constants were chosen
// for, requantized so that the largest sum is 127 steps: within half a step (and 1/16 for the
// slope's rounding and the dropped bits) of the real function, and never wrapping.
TEST(Requantization, LeakyReluTracksTheFloatFunction) {
  using tessera::compiler::graph::detail::leakyConstants;
  using tessera::compiler::op::Epilogue;
  for (double alpha : {0.01, 0.1, 0.2, 1.0 / 3.0, 0.9})
    for (int64_t worst : {int64_t(1) << 12, int64_t(1) << 20, int64_t(3) << 26, int64_t(1) << 30}) {
      const auto c = leakyConstants(alpha, worst);
      ASSERT_TRUE(c) << "alpha " << alpha << " worst " << worst;
      EXPECT_LT((worst >> c->preShift) * c->multiplier, int64_t(1) << 31);
      Epilogue e;
      e.bias = false;
      e.round = true;
      e.shift = 1;
      while ((worst >> e.shift) > 127) ++e.shift;
      e.leaky = true;
      e.leakyPreShift = c->preShift;
      e.leakyMultiplier = c->multiplier;
      e.leakyShift = c->shift;
      double err = 0;
      for (int k = -4000; k <= 4000; ++k) {
        const int64_t acc = worst * k / 4000;
        const int32_t y = tessera::compiler::op::epilogueValue(e, int32_t(acc), 0, 1, INT32_MIN, INT32_MAX);
        const double want = std::clamp((acc < 0 ? alpha * double(acc) : double(acc)) / std::ldexp(1.0, e.shift), -128.0, 127.0);
        err = std::max(err, std::fabs(double(y) - want));
      }
      EXPECT_LT(err, 0.5 + 1.0 / 16) << "alpha " << alpha << " worst " << worst << ": preshift " << c->preShift << " mul "
                                     << c->multiplier << " shift " << c->shift;
    }
  EXPECT_FALSE(leakyConstants(0.0, 100));
  EXPECT_FALSE(leakyConstants(1.0, 100));
}

TEST(Requantization, LowMultiplierBitsRoundExactlyAtTheLongerShift) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> exponent(-6.0, 0.0), spread(0.5, 1.0);
  std::uniform_int_distribution<int64_t> biasDist(-(int64_t(1) << 20), int64_t(1) << 20);
  int refused = 0, withSevenBits = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<double> real(8);
    const double b = std::pow(10.0, exponent(rng));
    for (double& r : real) r = std::min(1.0, b * spread(rng));
    if (trial % 7 == 0) real[3] = 0;
    const bool relu = trial % 2 == 1;
    const int64_t maxAcc = int64_t(1) << (8 + trial % 22);
    std::vector<int64_t> bias(real.size());
    for (auto& v : bias) v = trial % 3 == 0 ? biasDist(rng) / (int64_t(1) << (trial % 20)) : 0;
    int64_t worst = 0;
    for (int64_t v : bias) worst = std::max<int64_t>(worst, maxAcc + std::llabs(v));
    const auto r = tessera::compiler::graph::detail::lowBitsRequantization(real, worst, relu);
    if (!r) {
      ++refused;
      continue;
    }
    ASSERT_TRUE(r->perChannelClip && r->round);
    ASSERT_GE(r->lowBits, 1);
    ASSERT_LE(r->lowBits, 7);
    withSevenBits += r->lowBits == 7;
    const int total = r->shift + r->lowBits;
    tessera::compiler::op::Epilogue e;
    e.perChannelMultiplier = e.perChannelClip = e.round = true;
    e.lowBits = r->lowBits;
    e.shift = r->shift;
    e.relu = relu;
    std::uniform_int_distribution<int64_t> acc(-maxAcc, maxAcc);
    for (int k = 0; k < 400; ++k) {
      const size_t o = size_t(k) % real.size();
      const int64_t a = k < 8 ? maxAcc : k < 16 ? -maxAcc : acc(rng);
      const int8_t got = tessera::compiler::op::applyEpilogue(e, int32_t(a), int32_t(bias[o]), r->multipliers[o],
                                                          r->clipLow[o], r->clipHigh[o], r->multipliersLow[o]);
      const int32_t value = tessera::compiler::op::epilogueValue(e, int32_t(a), int32_t(bias[o]), r->multipliers[o],
                                                             r->clipLow[o], r->clipHigh[o], r->multipliersLow[o]);
      const int64_t v = a + bias[o];
      const int64_t M = int64_t(r->multipliers[o]) * (int64_t(1) << r->lowBits) + r->multipliersLow[o];
      // floor((v * M + 2^(S-1)) / 2^S) in exact (128-bit-safe) arithmetic: |v * M| < 2^62 here.
      const __int128 exact = (__int128(v) * M + (__int128(1) << (total - 1))) >> total;
      const int64_t want = std::clamp<int64_t>(int64_t(exact), relu ? 0 : -128, 127);
      ASSERT_EQ(int64_t(value), want) << "acc " << a << " bias " << bias[o] << " M " << M << " bits " << r->lowBits;
      ASSERT_EQ(int64_t(got), want);
      // The low product is shifted: it must not have wrapped.
      const int64_t clipped = std::clamp<int64_t>(v, r->clipLow[o], r->clipHigh[o]);
      ASSERT_LE(std::llabs(clipped * r->multipliersLow[o]), int64_t(INT32_MAX));
    }
  }
  EXPECT_GT(withSevenBits, 100);
  EXPECT_LT(refused, 100);
  EXPECT_FALSE(tessera::compiler::graph::detail::lowBitsRequantization({0.01, -0.02}, 1000, false).has_value());
  EXPECT_FALSE(tessera::compiler::graph::detail::lowBitsRequantization({0.01, 1.5}, 1000, false).has_value());
}

}  // namespace

extern "C" int c_api_smoke(const char* path, float* logits, size_t count, char* why, size_t whySize);

namespace {

TEST(NetworkCApi, RunsACompiledModelFileAndNamesErrors) {
  const CompiledModel m = compileSmall(tessera::hw::Config::load("default"));
  const std::string path = ::testing::TempDir() + "/small_c_api.tsm";
  std::remove(path.c_str());
  m.save(path, false);
  float logits[10];
  char why[512] = {0};
  ASSERT_EQ(c_api_smoke(path.c_str(), logits, 10, why, sizeof why), 0) << why;
  std::map<std::string, Tensor> zeros = sample(0);
  for (float& v : zeros["x"].floats) v = 0;
  const auto want = tessera::compiler::model::runReference(m, zeros).outputs.at("logits").floats;
  EXPECT_EQ(std::vector<float>(logits, logits + 10), want);
  // A wrong output size is refused with a message, not a buffer overrun.
  EXPECT_NE(c_api_smoke(path.c_str(), logits, 9, why, sizeof why), 0);
  EXPECT_NE(std::string(why).find("logits"), std::string::npos) << why;
  // A missing file names itself.
  EXPECT_NE(c_api_smoke("/nonexistent/model.tsm", logits, 10, why, sizeof why), 0);
  EXPECT_NE(std::string(why).find("/nonexistent/model.tsm"), std::string::npos) << why;
  std::remove(path.c_str());
}

}  // namespace

namespace {

// The timeline: one metadata event naming the layer track, then one complete event per layer in
// execution order, back to back, whose accelerator spans add up to the layers' cycles.
TEST(NetworkTimeline, LayersAreBackToBackAndAddUpToTheirCycles) {
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  if (!built("tsim", cfg)) GTEST_SKIP() << "tsim is not built for default";
  const CompiledModel m = compileSmall(cfg);
  tessera::runtime::Session session("tsim", cfg);
  tessera::compiler::model::ModelRunner runner(m, session);
  const auto r = runner.run(sample(1), true);
  const auto j = nlohmann::json::parse(tessera::compiler::model::chromeTrace(m, r, 100.0));
  // Metadata first (the layer track's and process's names), then the layers; nothing else when
  // the run recorded no instruction spans.
  std::vector<nlohmann::json> events;
  for (const auto& e : j.at("traceEvents")) {
    EXPECT_EQ(e.at("pid"), 1);
    if (e.at("ph") == "M") EXPECT_TRUE(events.empty()) << "metadata after a layer";
    else events.push_back(e);
  }
  ASSERT_EQ(events.size(), m.layers.size());
  EXPECT_FALSE(j.at("otherData").at("instruction_tracks").get<bool>());
  double at = 0, acceleratorMicros = 0;
  uint64_t layerCycles = 0;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const auto& e = events[i];
    EXPECT_EQ(e.at("ph"), "X");
    EXPECT_EQ(e.at("name"), m.layers[i].name);
    EXPECT_NEAR(e.at("ts").get<double>(), at, 1e-3) << "gap or overlap before " << m.layers[i].name;
    at += e.at("dur").get<double>();
    if (m.layers[i].onAccelerator) {
      EXPECT_GT(r.layers[i].cycles, 0u) << m.layers[i].name;
      acceleratorMicros += e.at("dur").get<double>();
      layerCycles += r.layers[i].cycles;
    }
  }
  EXPECT_NEAR(acceleratorMicros * 100.0, double(layerCycles), 1.0);
  // The layers run alone stay close to the whole stream (the barriers between layers hold them apart).
  EXPECT_NEAR(double(layerCycles), double(r.counters.cycles), 0.1 * double(r.counters.cycles));
}

// The unit that runs an instruction, by docs/rtl.md's dispatch rules.
int unitOf(const tessera::hw::Insn& in) {
  using tessera::hw::Opcode;
  namespace host = tessera::host;
  const bool loadModule = in.opcode == Opcode::kLoad && (in.memType == uint32_t(tessera::hw::MemId::kInp) ||
                                                         in.memType == uint32_t(tessera::hw::MemId::kWgt));
  if (loadModule) return host::kTraceLoad;
  if (in.opcode == Opcode::kStore) return host::kTraceStore;
  if (in.opcode == Opcode::kGemm) return in.reset ? host::kTraceAluPipe : host::kTraceGemmPipe;
  if (in.opcode == Opcode::kAlu) return host::kTraceAluPipe;
  return host::kTraceCompute;
}

// With instruction spans on a timed target: one more process per segment run, named, ordered tracks
// per unit (as many as the unit needs so that no two spans of a track overlap: load has several
// instructions in flight), every instruction once on fetch and once on the unit that runs it, named
// by its mnemonic, within the segment's whole-stream cycles, the last ending with them.
TEST(NetworkTimeline, InstructionTracksCoverEachSegmentRun) {
  namespace host = tessera::host;
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  if (!built("tsim", cfg)) GTEST_SKIP() << "tsim is not built for default";
  const CompiledModel m = compileSmall(cfg);
  ASSERT_FALSE(m.segments.empty());
  tessera::runtime::Session session("tsim", cfg);
  tessera::compiler::model::ModelRunner runner(m, session);
  tessera::compiler::model::RunOptions o;
  o.layerCycles = true;
  o.instructionSpans = true;
  const auto r = runner.run(sample(1), o);
  ASSERT_EQ(r.spans, tessera::compiler::model::ModelRunResult::Spans::kRecorded);
  ASSERT_EQ(r.segments.size(), m.segments.size());
  const double mhz = 100.0;
  const auto j = nlohmann::json::parse(tessera::compiler::model::chromeTrace(m, r, mhz));
  EXPECT_TRUE(j.at("otherData").at("instruction_tracks").get<bool>());
  const auto& described = j.at("otherData").at("segments");
  ASSERT_EQ(described.size(), m.segments.size());
  // The runner's spans cover the segment as well.
  EXPECT_EQ(r.segments[0].run.cycles, r.counters.cycles);
  for (size_t k = 0; k < m.segments.size(); ++k) {
    const auto& seg = m.segments[size_t(r.segments[k].segment)];
    const int pid = described[k].at("pid").get<int>();
    const uint64_t cycles = described[k].at("cycles").get<uint64_t>();
    const double start = described[k].at("start_us").get<double>();
    EXPECT_EQ(cycles, r.segments[k].run.cycles);
    EXPECT_EQ(described[k].at("instructions").get<size_t>(), seg.insns.size());
    std::map<int, std::string> threadName;
    std::map<int, int> sortIndex;
    std::map<int, size_t> perUnit;
    std::map<int, std::vector<std::pair<uint64_t, uint64_t>>> perThread;
    std::map<int, int> unitOfThread;
    std::vector<int> onFetch(seg.insns.size()), onUnit(seg.insns.size());
    uint64_t last = 0;
    for (const auto& e : j.at("traceEvents")) {
      if (e.at("pid") != pid) continue;
      if (e.at("ph") == "M") {
        if (e.at("name") == "thread_name") threadName[e.at("tid").get<int>()] = e.at("args").at("name");
        if (e.at("name") == "thread_sort_index") sortIndex[e.at("tid").get<int>()] = e.at("args").at("sort_index");
        continue;
      }
      ASSERT_EQ(e.at("ph"), "X");
      const auto& a = e.at("args");
      const std::string unitName = a.at("unit").get<std::string>();
      int unit = 0;
      while (unit < host::kNumTraceUnits && unitName != host::kTraceUnitNames[unit]) ++unit;
      ASSERT_LT(unit, host::kNumTraceUnits) << unitName;
      const int tid = e.at("tid").get<int>();
      EXPECT_EQ(unitOfThread.emplace(tid, unit).first->second, unit) << "thread " << tid << " mixes units";
      const uint32_t insn = a.at("insn").get<uint32_t>();
      ASSERT_LT(insn, seg.insns.size());
      const uint64_t begin = a.at("begin_cycle").get<uint64_t>(), end = a.at("end_cycle").get<uint64_t>();
      EXPECT_LT(begin, end) << "instruction " << insn;
      EXPECT_LE(end, cycles) << "instruction " << insn << " ends after the segment";
      EXPECT_NEAR(e.at("ts").get<double>(), start + double(begin) / mhz, 1e-6);
      EXPECT_NEAR(e.at("dur").get<double>(), double(end - begin) / mhz, 1e-6);
      last = std::max(last, end);
      perThread[tid].emplace_back(begin, end);
      const tessera::hw::Insn& in = seg.insns[insn];
      EXPECT_EQ(e.at("name").get<std::string>().rfind(tessera::hw::mnemonic(in), 0), 0u) << e.dump();
      if (unit == host::kTraceFetch) {
        onFetch[insn]++;
      } else {
        onUnit[insn]++;
        EXPECT_EQ(unit, unitOf(in)) << "instruction " << insn << " " << e.dump();
      }
      perUnit[unit]++;
      // The layer whose instructions these are.
      std::string layer;
      for (int li : seg.layers)
        if (insn >= m.layers[size_t(li)].insnBegin && insn < m.layers[size_t(li)].insnEnd) layer = m.layers[size_t(li)].name;
      EXPECT_EQ(a.at("layer").get<std::string>(), layer) << "instruction " << insn;
    }
    EXPECT_EQ(last, cycles) << "the last span does not end with the segment";
    for (size_t i = 0; i < seg.insns.size(); ++i) {
      EXPECT_EQ(onFetch[i], 1) << "instruction " << i << " on fetch";
      EXPECT_EQ(onUnit[i], 1) << "instruction " << i << " on an executing unit";
    }
    std::map<int, size_t> want;
    want[host::kTraceFetch] = seg.insns.size();
    for (const auto& in : seg.insns) want[unitOf(in)]++;
    for (int u = 0; u < host::kNumTraceUnits; ++u) {
      EXPECT_EQ(perUnit[u], want[u]) << host::kTraceUnitNames[u];
      EXPECT_EQ(threadName[u + 1], host::kTraceUnitNames[u]) << "the unit's first track";
    }
    EXPECT_GT(perThread.size(), size_t(host::kNumTraceUnits)) << "load had no two instructions in flight";
    for (auto& kv : perThread) {
      const int unit = unitOfThread[kv.first];
      EXPECT_EQ(threadName[kv.first].rfind(host::kTraceUnitNames[unit], 0), 0u) << threadName[kv.first];
      // Tracks in unit order, a unit's together.
      for (const auto& other : unitOfThread) {
        if (other.second < unit) {
          EXPECT_LT(sortIndex.at(other.first), sortIndex.at(kv.first));
        }
      }
      std::sort(kv.second.begin(), kv.second.end());
      for (size_t i = 1; i < kv.second.size(); ++i)
        EXPECT_LE(kv.second[i - 1].second, kv.second[i].first) << "two spans overlap on " << threadName[kv.first];
    }
  }
}

// On an untimed target the file keeps the layer track alone and says why.
TEST(NetworkTimeline, UntimedTargetsKeepTheLayerTrackAndSaySo) {
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  const CompiledModel m = compileSmall(cfg);
  tessera::runtime::Session session("fsim", cfg);
  tessera::compiler::model::ModelRunner runner(m, session);
  tessera::compiler::model::RunOptions o;
  o.instructionSpans = true;
  const auto r = runner.run(sample(1), o);
  EXPECT_EQ(r.spans, tessera::compiler::model::ModelRunResult::Spans::kUnsupported);
  EXPECT_TRUE(r.segments.empty());
  const auto j = nlohmann::json::parse(tessera::compiler::model::chromeTrace(m, r, 100.0));
  for (const auto& e : j.at("traceEvents")) EXPECT_EQ(e.at("pid"), 1) << e.dump();
  EXPECT_FALSE(j.at("otherData").at("instruction_tracks").get<bool>());
  EXPECT_NE(j.at("otherData").at("instruction_tracks_note").get<std::string>().find("untimed"), std::string::npos);
}

}  // namespace
