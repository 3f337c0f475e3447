// QDQ and QOperator recognition: the file's quantization parameters drive the same int8 rewriting as calibration.
#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "passes.h"
#include "tessera/compiler/host/executor.h"
#include "tessera/support/error.h"

namespace tessera::compiler::graph::detail {

using host::inferShapes;
using host::runHostNode;
using ir::DType;
using ir::Graph;
using ir::Node;
using ir::Tensor;
using model::QuantizationNote;

namespace {

std::vector<float> floatsOf(const Tensor& t) {
  if (t.dtype == DType::kFloat32) return t.floats;
  return std::vector<float>(t.ints.begin(), t.ints.end());
}

// The int8 form of a file's (dtype, scale, zero point) activation. Exact wherever the accelerator
// takes zero points: uint8 q is stored as q - 128 with zero point z - 128, int8 as it is with its
// zero point. Where it does not (`exact` false: the operand or result of a padded average pool that
// leaves its padding out of the count), int8 with
// zero point 0 and uint8 with zero point 128 are still exact, and any other zero point widens the
// grid until the file's whole range fits, with a note saying by how much.
struct InternalQuant {
  float scale = 1;
  int zeroPoint = 0;
};

InternalQuant internalQuant(const std::string& tensor, DType dtype, float scale, int64_t zp, bool exact,
                            std::vector<QuantizationNote>& notes) {
  if ((dtype == DType::kInt8 && zp == 0) || (dtype == DType::kUInt8 && zp == 128)) return {scale, 0};
  if (exact && dtype == DType::kUInt8 && zp >= 0 && zp <= 255) return {scale, int(zp - 128)};
  if (exact && dtype == DType::kInt8 && zp >= -128 && zp <= 127) return {scale, int(zp)};
  const int64_t lo = dtype == DType::kUInt8 ? 0 : -128, hi = dtype == DType::kUInt8 ? 255 : 127;
  const int64_t reach = std::max(std::llabs(lo - zp), std::llabs(hi - zp));
  const float widened = scale * float(reach) / 127.0f;
  QuantizationNote n;
  n.tensor = tensor;
  std::ostringstream os;
  os << ir::dtypeName(dtype) << " zero point " << zp << " -> int8 symmetric, scale " << scale << " -> " << widened
     << " (x" << widened / scale << "; a padded average pool takes no zero point)";
  n.change = os.str();
  n.maxAbsError = widened / 2;  // rounding to the coarser grid, against the file's own grid
  notes.push_back(n);
  return {widened, 0};
}

// Values that meet an average pool whose padding is left out of its count (count_include_pad 0),
// directly or through Q/DQ pairs and Flatten/Reshape (its output scale may come from after a
// Flatten): the accelerator's average divides by the whole window, its padding set to the input's
// zero point, so only a pool that counts its padding takes zero points there.
std::set<std::string> averagePoolValues(const Graph& g) {
  std::set<std::string> out;
  for (const Node& n : g.nodes)
    if (n.domain.empty() && n.opType == "AveragePool") {
      const std::vector<int64_t> pads = n.attrInts("pads", {0, 0, 0, 0});
      const bool padded = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }) ||
                          n.attrString("auto_pad", "NOTSET").rfind("SAME", 0) == 0;
      if (!padded || n.attrInt("count_include_pad", 0)) continue;
      if (!n.inputs.empty()) out.insert(n.inputs[0]);
      if (!n.outputs.empty()) out.insert(n.outputs[0]);
    }
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node& n : g.nodes) {
      const bool passes = n.domain.empty() && (n.opType == "QuantizeLinear" || n.opType == "DequantizeLinear" ||
                                               n.opType == "Flatten" || n.opType == "Reshape");
      if (!passes || n.inputs.empty() || n.outputs.empty() || !out.count(n.inputs[0])) continue;
      changed |= out.insert(n.outputs[0]).second;
    }
  }
  return out;
}

// QLinearConv and QLinearMatMul become their QDQ form, so one path handles both kinds of file.
void expandQOperators(Graph& g) {
  std::vector<Node> out;
  auto makeTensor = [&](const std::string& base, DType t) {
    std::string name = base;
    for (int i = 1; g.hasTensor(name); ++i) name = base + "_" + std::to_string(i);
    Tensor x;
    x.name = name;
    x.dtype = t;
    g.tensors[name] = x;
    return name;
  };
  auto dq = [&](const std::string& q, const std::string& s, const std::string& z, const std::string& name, int axis) {
    Node d;
    d.name = name;
    d.opType = "DequantizeLinear";
    d.inputs = {q, s, z};
    if (axis >= 0) {
      ir::Attribute a;
      a.i = axis;
      d.attrs["axis"] = a;
    }
    d.outputs = {makeTensor(q + "_dequantized", DType::kFloat32)};
    out.push_back(d);
    return d.outputs[0];
  };
  for (Node& n : g.nodes) {
    if (!n.domain.empty() || (n.opType != "QLinearConv" && n.opType != "QLinearMatMul")) {
      out.push_back(n);
      continue;
    }
    const bool conv = n.opType == "QLinearConv";
    const auto& in = n.inputs;
    const std::string x = dq(in.at(0), in.at(1), in.at(2), n.name + "_dq_x", -1);
    // Per-channel weight scales: axis 0 of OIHW, axis 1 of a MatMul's [K,N].
    const bool perChannel = g.tensor(in.at(4)).elements() > 1;
    const std::string w = dq(in.at(3), in.at(4), in.at(5), n.name + "_dq_w", perChannel ? (conv ? 0 : 1) : -1);
    Node core = n;
    core.opType = conv ? "Conv" : "MatMul";
    core.inputs = {x, w};
    if (conv && in.size() > 8 && !in[8].empty()) {
      // The int32 bias is in units of x_scale * w_scale.
      const Tensor& sx = g.tensor(in[1]);
      const Tensor& sw = g.tensor(in[4]);
      Tensor& b = g.tensor(in[8]);
      Tensor bf;
      bf.name = makeTensor(in[8] + "_real", DType::kFloat32);
      bf.dtype = DType::kFloat32;
      bf.shape = b.shape;
      bf.hasShape = true;
      bf.isConstant = true;
      for (size_t o = 0; o < b.ints.size(); ++o)
        bf.floats.push_back(float(double(b.ints[o]) * sx.floats.at(0) * sw.floats.at(sw.floats.size() == 1 ? 0 : o)));
      g.tensors[bf.name] = bf;
      core.inputs.push_back(bf.name);
    }
    const std::string y = makeTensor(n.outputs[0] + "_real", DType::kFloat32);
    core.outputs = {y};
    core.domain.clear();
    out.push_back(core);
    Node q;
    q.name = n.name + "_q_y";
    q.opType = "QuantizeLinear";
    q.inputs = {y, in.at(conv ? 6 : 6), in.at(conv ? 7 : 7)};
    q.outputs = {n.outputs[0]};
    out.push_back(q);
  }
  g.nodes = std::move(out);
}

// MaxPool, Flatten and Reshape commute with a monotonic quantization: max(q(x)) = q(max(x)), and a
// reshape moves values without changing them. QOperator files apply them to the quantized tensor
// (QuantizeLinear -> MaxPool -> DequantizeLinear); moving them before the QuantizeLinear gives the
// same values and lets the Q/DQ pair around them go.
// Returns the QuantizeLinear nodes whose float input now feeds the moved operator, so their scale
// still reaches that value's producer.
std::vector<Node> moveIntegerLayoutOpsToFloat(Graph& g) {
  std::vector<Node> bypassed;
  std::vector<Node> out;
  for (Node& n : g.nodes) {
    const bool layoutOp = n.domain.empty() && (n.opType == "MaxPool" || n.opType == "Flatten" || n.opType == "Reshape") &&
                          n.outputs.size() >= 1 && (n.outputs.size() == 1 || n.outputs[1].empty());
    const int p = layoutOp ? g.producer(n.inputs[0]) : -1;
    if (p < 0 || g.nodes[size_t(p)].opType != "QuantizeLinear" || !g.nodes[size_t(p)].domain.empty()) {
      out.push_back(n);
      continue;
    }
    const Node& q = g.nodes[size_t(p)];
    bypassed.push_back(q);
    std::string floatOut = n.outputs[0] + "_float";
    for (int i = 1; g.hasTensor(floatOut); ++i) floatOut = n.outputs[0] + "_float_" + std::to_string(i);
    Tensor t;
    t.name = floatOut;
    g.tensors[floatOut] = t;
    Node requantize;
    requantize.name = n.name + "_quantize";
    requantize.opType = "QuantizeLinear";
    requantize.inputs = q.inputs;
    requantize.inputs[0] = floatOut;
    requantize.outputs = {n.outputs[0]};
    Node moved = n;
    moved.inputs[0] = q.inputs[0];
    moved.outputs = {floatOut};
    out.push_back(moved);
    out.push_back(requantize);
  }
  g.nodes = std::move(out);
  return bypassed;
}

// Nodes whose outputs nothing reads (rewrites leave QuantizeLinear nodes behind).
void removeDeadNodes(Graph& g) {
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<Node> kept;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      bool used = false;
      for (const std::string& o : n.outputs)
        if (!o.empty() && (!g.consumers(o).empty() || std::find(g.outputs.begin(), g.outputs.end(), o) != g.outputs.end()))
          used = true;
      if (used) kept.push_back(n);
      else changed = true;
    }
    g.nodes = std::move(kept);
  }
}

}  // namespace

bool recognizeQuantized(const hw::Config& cfg, Graph& g, std::vector<QuantizationNote>& notes, std::string& kind) {
  bool qdq = false, qop = false;
  for (const Node& n : g.nodes) {
    if (!n.domain.empty()) continue;
    if (n.opType == "QuantizeLinear" || n.opType == "DequantizeLinear") qdq = true;
    if (n.opType == "QLinearConv" || n.opType == "QLinearMatMul") qop = true;
  }
  if (!qdq && !qop) return false;
  kind = qop ? "QOperator" : "QDQ";
  expandQOperators(g);
  const std::vector<Node> bypassed = moveIntegerLayoutOpsToFloat(g);
  removeDeadNodes(g);
  inferShapes(g);

  ActivationScales scales;
  scales.config = &cfg;
  scales.fixed = true;
  const std::set<std::string> pooled = averagePoolValues(g);
  auto paramsOf = [&](const Node& n, float* s, int64_t* zp) {
    if (!isConst(g, n.inputs.at(1)) || (n.inputs.size() > 2 && !n.inputs[2].empty() && !isConst(g, n.inputs[2])))
      return false;
    const Tensor& st = g.tensor(n.inputs[1]);
    if (st.elements() != 1) return false;
    *s = st.floats.at(0);
    *zp = n.inputs.size() > 2 && !n.inputs[2].empty() ? g.tensor(n.inputs[2]).ints.at(0) : 0;
    return true;
  };

  // Constant weights and biases: dequantized once, their per-channel scales kept.
  std::vector<Node> kept;
  for (const Node& n : g.nodes) {
    if (n.domain.empty() && n.opType == "DequantizeLinear" && isConst(g, n.inputs[0]) && isConst(g, n.inputs.at(1))) {
      std::vector<const Tensor*> ins;
      for (const std::string& in : n.inputs) ins.push_back(in.empty() ? nullptr : &g.tensor(in));
      Tensor t = runHostNode(n, ins, g.opset).at(0);
      t.name = n.outputs[0];
      t.isConstant = true;
      t.hasShape = true;
      g.tensors[t.name] = t;
      const Tensor& q = g.tensor(n.inputs[0]);
      const bool zeroPoints = n.inputs.size() < 3 || n.inputs[2].empty() ||
                              std::all_of(g.tensor(n.inputs[2]).ints.begin(), g.tensor(n.inputs[2]).ints.end(),
                                          [](int64_t z) { return z == 0; });
      if (q.dtype == DType::kInt8 && zeroPoints) {
        scales.weights[t.name] = floatsOf(g.tensor(n.inputs[1]));
        scales.weightAxis[t.name] = int(n.attrInt("axis", 1));
      } else if (q.dtype != DType::kInt32) {
        notes.push_back({n.inputs[0], std::string(ir::dtypeName(q.dtype)) +
                                          " weights with zero points -> int8 symmetric per channel (requantized)", 0});
      }
      continue;
    }
    kept.push_back(n);
  }
  g.nodes = std::move(kept);

  // Activation Q -> DQ pairs: the float value before Q takes the DQ output's name and the scale.
  std::set<size_t> drop;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& q = g.nodes[i];
    if (!q.domain.empty() || q.opType != "QuantizeLinear") continue;
    float s;
    int64_t zp;
    if (!paramsOf(q, &s, &zp)) continue;
    const std::string& xq = q.outputs[0];
    std::vector<int> dqs;
    bool onlyDq = true;
    for (int c : g.consumers(xq)) {
      const Node& d = g.nodes[size_t(c)];
      float ds;
      int64_t dz;
      if (d.opType == "DequantizeLinear" && paramsOf(d, &ds, &dz) && ds == s && dz == zp) dqs.push_back(c);
      else onlyDq = false;
    }
    if (dqs.empty() || !onlyDq || std::find(g.outputs.begin(), g.outputs.end(), xq) != g.outputs.end()) continue;
    const DType dtype = g.tensor(xq).dtype;
    const std::string xf = q.inputs[0];
    const std::string name = g.nodes[size_t(dqs[0])].outputs[0];
    bool exact = !pooled.count(xf) && !pooled.count(xq);
    for (int d : dqs) exact = exact && !pooled.count(g.nodes[size_t(d)].outputs[0]);
    const InternalQuant internal = internalQuant(xq, dtype, s, zp, exact, notes);
    // Uses of every DQ output and of the float value itself now read one tensor.
    auto rename = [&](const std::string& from, const std::string& to) {
      for (Node& n : g.nodes) {
        for (std::string& in : n.inputs)
          if (in == from) in = to;
        for (std::string& o : n.outputs)
          if (o == from) o = to;
      }
      for (std::string& o : g.outputs)
        if (o == from) o = to;
      for (std::string& o : g.inputs)
        if (o == from) o = to;
    };
    for (int d : dqs) drop.insert(size_t(d));
    drop.insert(i);
    // Graph inputs keep their names; any other value takes the (first) DQ output's name, so
    // graph outputs keep theirs.
    const bool keepFloatName = std::find(g.inputs.begin(), g.inputs.end(), xf) != g.inputs.end();
    const std::string target = keepFloatName ? xf : name;
    Tensor renamed = g.tensor(xf);
    std::vector<std::string> dqOutputs;
    for (int d : dqs) dqOutputs.push_back(g.nodes[size_t(d)].outputs[0]);
    for (int d : dqs) g.nodes[size_t(d)].outputs[0].clear();
    for (const std::string& o : dqOutputs)
      if (o != target) rename(o, target);
    if (!keepFloatName) rename(xf, target);
    renamed.name = target;
    g.tensors[target] = renamed;
    scales.activation[target] = internal.scale;
    if (internal.zeroPoint) scales.zeroPoint[target] = internal.zeroPoint;
    if (dtype == DType::kUInt8 && zp == 0) scales.clippedAtZero.insert(target);
  }
  std::vector<Node> rest;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop.count(i)) rest.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(rest);
  // The values whose QuantizeLinear a layout operator was moved past keep that quantization.
  for (const Node& q : bypassed) {
    float s;
    int64_t zp;
    if (!paramsOf(q, &s, &zp) || scales.activation.count(q.inputs[0])) continue;
    const DType dtype = g.tensor(q.inputs.size() > 2 && !q.inputs[2].empty() ? q.inputs[2] : q.inputs[1]).dtype;
    const DType qtype = dtype == DType::kFloat32 ? DType::kUInt8 : dtype;
    const InternalQuant internal =
        internalQuant(q.outputs[0], qtype, s, zp, !pooled.count(q.inputs[0]) && !pooled.count(q.outputs[0]), notes);
    scales.activation[q.inputs[0]] = internal.scale;
    if (internal.zeroPoint) scales.zeroPoint[q.inputs[0]] = internal.zeroPoint;
    if (qtype == DType::kUInt8 && zp == 0) scales.clippedAtZero.insert(q.inputs[0]);
  }
  // A QuantizeLinear that stays (its output is a graph output or feeds the host): the float value
  // it quantizes gets its scale, so the producer can still run on the accelerator.
  for (const Node& n : g.nodes) {
    float s;
    int64_t zp;
    if (n.domain.empty() && n.opType == "QuantizeLinear" && paramsOf(n, &s, &zp) && !scales.activation.count(n.inputs[0])) {
      const InternalQuant internal = internalQuant(n.outputs[0], g.tensor(n.outputs[0]).dtype, s, zp,
                                                   !pooled.count(n.inputs[0]) && !pooled.count(n.outputs[0]), notes);
      scales.activation[n.inputs[0]] = internal.scale;
      if (internal.zeroPoint) scales.zeroPoint[n.inputs[0]] = internal.zeroPoint;
      if (g.tensor(n.outputs[0]).dtype == DType::kUInt8 && zp == 0) scales.clippedAtZero.insert(n.inputs[0]);
    }
  }
  // DQ of a value the host quantized (a graph input of type int8/uint8): its output's scale.
  for (const Node& n : g.nodes) {
    float s;
    int64_t zp;
    if (n.domain.empty() && n.opType == "DequantizeLinear" && paramsOf(n, &s, &zp)) {
      const InternalQuant internal = internalQuant(n.inputs[0], g.tensor(n.inputs[0]).dtype, s, zp,
                                                   !pooled.count(n.inputs[0]) && !pooled.count(n.outputs[0]), notes);
      scales.activation[n.outputs[0]] = internal.scale;
      if (internal.zeroPoint) scales.zeroPoint[n.outputs[0]] = internal.zeroPoint;
    }
  }
  g.pruneTensors();
  inferShapes(g);
  quantizeWithScales(g, scales);
  return true;
}


}  // namespace tessera::compiler::graph::detail
