// Constant folding and BatchNorm folding: what the graph computes from constants alone is computed once, here.
#include "passes.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "tessera/compiler/host/executor.h"
#include "tessera/support/error.h"

namespace tessera::compiler::graph::detail {

using host::hostSupports;
using host::runHostNode;
using ir::Attribute;
using ir::DType;
using ir::Graph;
using ir::Node;
using ir::Tensor;

Tensor constTensor(const std::string& name, DType t, std::vector<int64_t> shape) {
  Tensor x;
  x.name = name;
  x.dtype = t;
  x.shape = std::move(shape);
  x.hasShape = true;
  x.isConstant = true;
  return x;
}

std::string uniqueName(const Graph& g, const std::string& base) {
  if (!g.hasTensor(base)) return base;
  for (int i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (!g.hasTensor(n)) return n;
  }
}

bool isConst(const Graph& g, const std::string& name) {
  return !name.empty() && g.hasTensor(name) && g.tensor(name).isConstant;
}

Attribute intAttribute(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}

Attribute intsAttribute(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

std::string addFloatTensor(Graph& g, const std::string& base, std::vector<int64_t> shape) {
  Tensor t;
  t.name = uniqueName(g, base);
  t.dtype = DType::kFloat32;
  t.shape = std::move(shape);
  t.hasShape = true;
  g.tensors[t.name] = t;
  return t.name;
}

std::string addInt64Constant(Graph& g, const std::string& base, const std::vector<int64_t>& values) {
  Tensor t = constTensor(uniqueName(g, base), DType::kInt64, {int64_t(values.size())});
  t.ints = values;
  g.tensors[t.name] = t;
  return t.name;
}

Node hostNode(const std::string& op, const std::string& name, std::vector<std::string> inputs, std::string output) {
  Node m;
  m.name = name;
  m.opType = op;
  m.inputs = std::move(inputs);
  m.outputs = {std::move(output)};
  return m;
}

namespace {

// Renames every use of `from` (node inputs, graph outputs) to `to`.
void replaceUses(Graph& g, const std::string& from, const std::string& to) {
  for (Node& n : g.nodes)
    for (std::string& in : n.inputs)
      if (in == from) in = to;
  for (std::string& o : g.outputs)
    if (o == from) o = to;
}

bool isGraphOutput(const Graph& g, const std::string& t) {
  return std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end();
}

}  // namespace

void foldConstants(Graph& g) {
  std::vector<Node> kept;
  for (Node& n : g.nodes) {
    if (n.domain.empty() && n.opType == "Constant") {
      auto it = n.attrs.find("value");
      if (it == n.attrs.end() || !it->second.tensor)
        throw Error(g.origin, n.label(g.opset) + ": only the 'value' form of Constant is supported");
      Tensor t = *it->second.tensor;
      t.name = n.outputs.at(0);
      t.isConstant = true;
      t.hasShape = true;
      g.tensors[t.name] = t;
      continue;
    }
    // A Pad of nothing (PyTorch's AvgPool2d export writes one before the pool) is an identity too.
    bool emptyPad = false;
    if (n.domain.empty() && n.opType == "Pad" && !n.inputs.empty()) {
      if (n.inputs.size() > 1 && isConst(g, n.inputs[1]) && !isConst(g, n.inputs[0])) {
        const Tensor& pads = g.tensor(n.inputs[1]);
        emptyPad = pads.dtype == DType::kInt64 && std::all_of(pads.ints.begin(), pads.ints.end(), [](int64_t v) { return v == 0; });
      } else if (n.inputs.size() == 1 && n.attrs.count("pads") && !isConst(g, n.inputs[0])) {
        const auto& pads = n.attrs.at("pads").ints;
        emptyPad = std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; });
      }
    }
    const bool passThrough = n.domain.empty() && (n.opType == "Identity" || n.opType == "Dropout" || emptyPad);
    if (passThrough) {
      if (n.opType == "Dropout" && n.outputs.size() > 1 && !n.outputs[1].empty() && !g.consumers(n.outputs[1]).empty())
        throw Error(g.origin, n.label(g.opset) + ": its mask output is used; only inference Dropout is supported");
      // The output name survives when it is a graph output, so the file's output names stay.
      if (isGraphOutput(g, n.outputs[0])) {
        kept.push_back(n);
        continue;
      }
      replaceUses(g, n.outputs[0], n.inputs[0]);
      continue;
    }
    bool allConst = !n.inputs.empty();
    for (const std::string& in : n.inputs)
      if (!in.empty() && !isConst(g, in)) allConst = false;
    // Shape needs only its input's static shape: the start of the shape computations an exporter
    // writes (Shape, Gather, Unsqueeze, Concat into a Reshape), which then fold whole.
    if (n.domain.empty() && n.opType == "Shape" && !n.inputs.empty() && g.hasTensor(n.inputs[0]) &&
        g.tensor(n.inputs[0]).hasShape)
      allConst = true;
    // Dequantized weights stay as they are: QDQ recognition reads their scales.
    if (allConst && n.domain.empty() && n.opType != "DequantizeLinear" && hostSupports(n, g.opset)) {
      std::vector<const Tensor*> ins;
      for (const std::string& in : n.inputs) ins.push_back(in.empty() ? nullptr : &g.tensor(in));
      std::vector<Tensor> outs = runHostNode(n, ins, g.opset);
      for (size_t i = 0; i < outs.size() && i < n.outputs.size(); ++i) {
        if (n.outputs[i].empty()) continue;
        Tensor t = std::move(outs[i]);
        t.name = n.outputs[i];
        t.isConstant = true;
        t.hasShape = true;
        g.tensors[t.name] = std::move(t);
      }
      continue;
    }
    kept.push_back(n);
  }
  g.nodes = std::move(kept);
  g.pruneTensors();
}

void spatialMeansAsPools(Graph& g) {
  std::vector<Node> out;
  for (Node& n : g.nodes) {
    const bool candidate = n.domain.empty() && n.opType == "ReduceMean" && n.inputs.size() == 1 && n.outputs.size() == 1 &&
                           g.hasTensor(n.inputs[0]) && g.tensor(n.inputs[0]).hasShape &&
                           g.tensor(n.inputs[0]).shape.size() == 4 && g.tensor(n.inputs[0]).dtype == DType::kFloat32;
    std::vector<int64_t> axes = n.attrInts("axes", {});
    for (int64_t& a : axes)
      if (a < 0) a += 4;
    std::sort(axes.begin(), axes.end());
    if (!candidate || axes != std::vector<int64_t>{2, 3}) {
      out.push_back(std::move(n));
      continue;
    }
    const std::vector<int64_t>& shape = g.tensor(n.inputs[0]).shape;
    Node pool;
    pool.name = n.name;
    pool.opType = "GlobalAveragePool";
    pool.inputs = n.inputs;
    pool.outputs = n.outputs;
    if (n.attrInt("keepdims", 1)) {
      out.push_back(std::move(pool));
      continue;
    }
    // keepdims=0: the pool's [N, C, 1, 1] flattened to the mean's [N, C].
    Tensor pooled = g.tensor(n.outputs[0]);
    pooled.name = uniqueName(g, n.outputs[0] + "_pooled");
    pooled.shape = {shape[0], shape[1], 1, 1};
    pooled.hasShape = true;
    g.tensors[pooled.name] = pooled;
    pool.outputs = {pooled.name};
    Node flatten;
    flatten.name = n.name + "_flatten";
    flatten.opType = "Flatten";
    flatten.inputs = {pooled.name};
    flatten.outputs = n.outputs;
    ir::Attribute axis;
    axis.kind = ir::Attribute::Kind::kInt;
    axis.i = 1;
    flatten.attrs["axis"] = axis;
    out.push_back(std::move(pool));
    out.push_back(std::move(flatten));
  }
  g.nodes = std::move(out);
}

void foldBatchNorm(Graph& g) {
  std::vector<bool> drop(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& bn = g.nodes[i];
    if (!bn.domain.empty() || bn.opType != "BatchNormalization") continue;
    const int p = g.producer(bn.inputs[0]);
    if (p < 0) continue;
    Node& conv = g.nodes[size_t(p)];
    if (conv.opType != "Conv" || !conv.domain.empty() || g.consumers(bn.inputs[0]).size() != 1 ||
        isGraphOutput(g, bn.inputs[0]) || !isConst(g, conv.inputs.at(1)))
      continue;
    for (size_t k = 1; k < 5; ++k)
      if (!isConst(g, bn.inputs.at(k))) throw Error(g.origin, bn.label(g.opset) + ": non-constant statistics");
    const Tensor& w = g.tensor(conv.inputs[1]);
    if (w.dtype != DType::kFloat32) continue;
    const auto& gamma = g.tensor(bn.inputs[1]).floats;
    const auto& beta = g.tensor(bn.inputs[2]).floats;
    const auto& mean = g.tensor(bn.inputs[3]).floats;
    const auto& var = g.tensor(bn.inputs[4]).floats;
    const float eps = bn.attrFloat("epsilon", 1e-5f);
    const int64_t outC = w.shape.at(0);
    if (int64_t(gamma.size()) != outC || int64_t(beta.size()) != outC || int64_t(mean.size()) != outC ||
        int64_t(var.size()) != outC)
      throw Error(g.origin, bn.label(g.opset) + ": statistics have " + std::to_string(gamma.size()) +
                                " channels, the convolution " + std::to_string(outC));
    Tensor nw = w;
    nw.name = uniqueName(g, conv.inputs[1] + "_bnfolded");
    const int64_t per = w.elements() / outC;
    std::vector<float> bias(size_t(outC), 0.0f);
    if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) bias = g.tensor(conv.inputs[2]).floats;
    Tensor nb = constTensor(uniqueName(g, conv.name + "_bnfolded_bias"), DType::kFloat32, {outC});
    nb.floats.resize(size_t(outC));
    for (int64_t o = 0; o < outC; ++o) {
      const double k = double(gamma[size_t(o)]) / std::sqrt(double(var[size_t(o)]) + eps);
      for (int64_t j = 0; j < per; ++j) nw.floats[size_t(o * per + j)] = float(w.floats[size_t(o * per + j)] * k);
      nb.floats[size_t(o)] = float((bias[size_t(o)] - mean[size_t(o)]) * k + beta[size_t(o)]);
    }
    g.tensors[nw.name] = nw;
    g.tensors[nb.name] = nb;
    conv.inputs.resize(3);
    conv.inputs[1] = nw.name;
    conv.inputs[2] = nb.name;
    conv.outputs[0] = bn.outputs[0];
    conv.name = conv.name + "+" + bn.name;
    drop[i] = true;
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  g.pruneTensors();
}

void batchNormsAsDepthwise(Graph& g) {
  for (Node& bn : g.nodes) {
    if (!bn.domain.empty() || bn.opType != "BatchNormalization" || bn.inputs.size() != 5 || bn.outputs.size() != 1 ||
        bn.attrInt("training_mode", 0) != 0 || !g.hasTensor(bn.inputs[0]))
      continue;
    const Tensor& x = g.tensor(bn.inputs[0]);
    if (x.isConstant || x.dtype != DType::kFloat32 || x.shape.size() != 4) continue;
    const int64_t c = x.shape[1];
    bool constant = c > 0;
    for (size_t k = 1; k < 5 && constant; ++k)
      constant = isConst(g, bn.inputs[k]) && g.tensor(bn.inputs[k]).dtype == DType::kFloat32 &&
                 g.tensor(bn.inputs[k]).elements() == c;
    if (!constant) continue;
    const auto& gamma = g.tensor(bn.inputs[1]).floats;
    const auto& beta = g.tensor(bn.inputs[2]).floats;
    const auto& mean = g.tensor(bn.inputs[3]).floats;
    const auto& var = g.tensor(bn.inputs[4]).floats;
    const double eps = bn.attrFloat("epsilon", 1e-5f);
    Tensor w = constTensor(uniqueName(g, bn.name + "_factor"), DType::kFloat32, {c, 1, 1, 1});
    Tensor b = constTensor(uniqueName(g, bn.name + "_shift"), DType::kFloat32, {c});
    w.floats.resize(size_t(c));
    b.floats.resize(size_t(c));
    for (int64_t o = 0; o < c; ++o) {
      const double k = double(gamma[size_t(o)]) / std::sqrt(double(var[size_t(o)]) + eps);
      w.floats[size_t(o)] = float(k);
      b.floats[size_t(o)] = float(double(beta[size_t(o)]) - double(mean[size_t(o)]) * k);
    }
    g.tensors[w.name] = w;
    g.tensors[b.name] = b;
    Node conv;
    conv.name = bn.name;
    conv.opType = "Conv";
    conv.inputs = {bn.inputs[0], w.name, b.name};
    conv.outputs = bn.outputs;
    conv.attrs["group"] = intAttribute(c);
    bn = std::move(conv);
  }
  g.pruneTensors();
}

}  // namespace tessera::compiler::graph::detail
