// ResNet-18 as a float graph: conv/BN/ReLU stem, max pooling, four stages of basic blocks, average pooling, dense.
#include "tessera/compiler/ir/resnet18.h"

#include <cmath>
#include <random>
#include <string>

namespace tessera::compiler::ir {

namespace {

class Builder {
 public:
  explicit Builder(uint32_t seed) : rng_(seed) {
    g_.name = "resnet18";
    g_.origin = "resnet18 (built in C++)";
    g_.opset = 13;
  }

  Graph& graph() { return g_; }

  std::string input(const std::string& name, std::vector<int64_t> shape) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.hasShape = true;
    g_.tensors[name] = t;
    g_.inputs.push_back(name);
    return name;
  }

  std::string constant(const std::string& name, std::vector<int64_t> shape, float mean, float spread, bool uniform) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.hasShape = true;
    t.isConstant = true;
    std::normal_distribution<float> normal(mean, spread);
    std::uniform_real_distribution<float> flat(mean - spread, mean + spread);
    for (int64_t i = 0; i < t.elements(); ++i) t.floats.push_back(uniform ? flat(rng_) : normal(rng_));
    g_.tensors[name] = t;
    return name;
  }

  std::string node(const std::string& op, const std::string& name, std::vector<std::string> inputs,
                   std::map<std::string, std::vector<int64_t>> attrs = {}) {
    Node n;
    n.opType = op;
    n.name = name;
    n.inputs = std::move(inputs);
    n.outputs = {name + "_out"};
    for (auto& kv : attrs) {
      Attribute a;
      a.kind = Attribute::Kind::kInts;
      a.ints = kv.second;
      n.attrs[kv.first] = a;
    }
    g_.nodes.push_back(n);
    return n.outputs[0];
  }

  // conv (no bias) + BatchNormalization, as torchvision's layers export.
  std::string convBn(const std::string& name, const std::string& x, int64_t cin, int64_t cout, int64_t k, int64_t stride) {
    const float he = std::sqrt(2.0f / float(cin * k * k));
    const std::string w = constant(name + ".weight", {cout, cin, k, k}, 0.0f, he, false);
    const int64_t p = k / 2;
    const std::string c = node("Conv", name, {x, w}, {{"kernel_shape", {k, k}}, {"strides", {stride, stride}}, {"pads", {p, p, p, p}}});
    const std::string bn = name + ".bn";
    return node("BatchNormalization", bn,
                {c, constant(bn + ".gamma", {cout}, 1.0f, 0.5f, true), constant(bn + ".beta", {cout}, 0.0f, 0.1f, false),
                 constant(bn + ".mean", {cout}, 0.0f, 0.1f, false), constant(bn + ".var", {cout}, 1.0f, 0.5f, true)});
  }

  std::string basicBlock(const std::string& name, const std::string& x, int64_t cin, int64_t cout, int64_t stride) {
    std::string y = node("Relu", name + ".relu1", {convBn(name + ".conv1", x, cin, cout, 3, stride)});
    y = convBn(name + ".conv2", y, cout, cout, 3, 1);
    std::string skip = x;
    if (stride != 1 || cin != cout) skip = convBn(name + ".downsample", x, cin, cout, 1, stride);
    return node("Relu", name + ".relu2", {node("Add", name + ".add", {y, skip})});
  }

 private:
  Graph g_;
  std::mt19937 rng_;
};

}  // namespace

Graph resnet18Graph(uint32_t seed) {
  Builder b(seed);
  std::string x = b.input("data", {1, 3, 224, 224});
  x = b.node("Relu", "relu", {b.convBn("conv1", x, 3, 64, 7, 2)});
  x = b.node("MaxPool", "maxpool", {x}, {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}});
  const int64_t widths[] = {64, 128, 256, 512};
  int64_t cin = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t cout = widths[stage];
    for (int block = 0; block < 2; ++block) {
      const std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(block);
      x = b.basicBlock(name, x, cin, cout, block == 0 && stage > 0 ? 2 : 1);
      cin = cout;
    }
  }
  x = b.node("GlobalAveragePool", "avgpool", {x});
  x = b.node("Flatten", "flatten", {x});
  const std::string w = b.constant("fc.weight", {1000, 512}, 0.0f, 1.0f / std::sqrt(512.0f), false);
  const std::string bias = b.constant("fc.bias", {1000}, 0.0f, 0.01f, false);
  Graph& g = b.graph();
  Node fc;
  fc.opType = "Gemm";
  fc.name = "fc";
  fc.inputs = {x, w, bias};
  fc.outputs = {"logits"};
  Attribute transB;
  transB.i = 1;
  fc.attrs["transB"] = transB;
  g.nodes.push_back(fc);
  Tensor logits;
  logits.name = "logits";
  g.tensors["logits"] = logits;
  g.outputs = {"logits"};
  // Intermediate values exist as tensors for shape inference to fill.
  for (const Node& n : g.nodes)
    for (const std::string& o : n.outputs)
      if (!g.tensors.count(o)) {
        Tensor t;
        t.name = o;
        g.tensors[o] = t;
      }
  return g;
}

Tensor resnet18Input(uint32_t seed) {
  Tensor t;
  t.name = "data";
  t.shape = {1, 3, 224, 224};
  t.hasShape = true;
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (int64_t i = 0; i < t.elements(); ++i) t.floats.push_back(d(rng));
  return t;
}

}  // namespace tessera::compiler::ir
