// Post-training quantization: float Conv/Gemm/MatMul/Add/pooling become int8 accelerator nodes.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "calibration_thresholds.h"
#include "passes.h"
#include "requantization.h"
#include "tessera/compiler/host/executor.h"
#include "tessera/compiler/op/compile.h"
#include "tessera/compiler/op/dram_layout.h"
#include "tessera/support/error.h"

namespace tessera::compiler::graph::detail {

using host::evaluate;
using ir::Attribute;
using ir::DType;
using ir::Graph;
using ir::Node;
using ir::Tensor;
using op::Epilogue;
using op::Operator;
using op::Tiling;
using op::kindName;
using op::tilingProblem;

namespace {

int8_t saturate8(double v) { return static_cast<int8_t>(std::clamp(std::nearbyint(v), -128.0, 127.0)); }

// A window's kernel, strides and padding (the factories take square ones).
void setWindow(Operator& o, int kh, int kw, int sh, int sw, int ph, int pw) {
  o.kernelH = kh;
  o.kernelW = kw;
  o.strideH = sh;
  o.strideW = sw;
  o.padH = ph;
  o.padW = pw;
}

class Quantizer {
 public:
  Quantizer(Graph& g, const ActivationScales& scales) : g_(g), scales_(scales) {}

  void run() {
    std::vector<Node> original = std::move(g_.nodes);
    g_.nodes.clear();
    original_ = &original;
    shareConcatScales();
    findWeightsViews();
    for (size_t i = 0; i < original.size(); ++i) {
      if (fused_.count(i)) continue;
      if (!tryAccelerate(i) && !deferMovement(i)) keepOnHost(original[i]);
    }
    for (std::string& out : g_.outputs) {
      auto deferred = deferredFlatten_.find(out);
      if (deferred != deferredFlatten_.end()) {
        Node flatten = deferred->second;
        deferredFlatten_.erase(deferred);
        keepOnHost(flatten);
      }
      out = floatValue(out);
    }
    g_.pruneTensors();
  }

 private:
  const std::vector<Node>& nodes() const { return *original_; }

  bool hasScale(const std::string& t) const { return !scales_.fixed || scales_.activation.count(t); }
  // The scale an average pool's output `t` is quantized to: its own, or else that of the Flatten or
  // Reshape that is its only consumer (QDQ files quantize after the Flatten).
  std::optional<float> averageOutputScale(const std::string& t) const {
    if (scales_.activation.count(t)) return scales_.activation.at(t);
    if (consumerCount(t) != 1) return std::nullopt;
    for (const Node& n : nodes())
      if (n.domain.empty() && !n.inputs.empty() && n.inputs[0] == t && (n.opType == "Flatten" || n.opType == "Reshape") &&
          scales_.activation.count(n.outputs.at(0)))
        return scales_.activation.at(n.outputs[0]);
    return std::nullopt;
  }
  float scaleFor(const std::string& floatTensor) const {
    auto it = scales_.activation.find(floatTensor);
    if (it == scales_.activation.end()) {
      if (scales_.fixed) throw Error(g_.origin, "tensor '" + floatTensor + "' has no quantization parameters");
      return 1.0f / 127.0f;
    }
    if (!std::isfinite(it->second))
      throw Error(g_.origin, "tensor '" + floatTensor + "': its calibrated range is not finite (the calibration "
                                                        "samples drive it to infinity)");
    return it->second > 0 ? it->second : 1.0f / 127.0f;
  }

  // The int8 zero point of a value's accelerator form (QDQ and QOperator files; 0 otherwise).
  int zeroPointFor(const std::string& floatTensor) const {
    auto it = scales_.zeroPoint.find(floatTensor);
    return it == scales_.zeroPoint.end() ? 0 : it->second;
  }

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; g_.hasTensor(name); ++i) name = base + "_" + std::to_string(i);
    return name;
  }

  std::string addConst(const std::string& base, DType t, std::vector<int64_t> shape, std::vector<int64_t> ints,
                       std::vector<float> floats = {}) {
    Tensor x;
    x.name = fresh(base);
    x.dtype = t;
    x.shape = std::move(shape);
    x.hasShape = true;
    x.isConstant = true;
    x.ints = std::move(ints);
    x.floats = std::move(floats);
    g_.tensors[x.name] = x;
    return x.name;
  }

  // The int8 tensor holding `floatTensor`'s quantized value, quantizing on the host if needed.
  std::string int8Value(const std::string& floatTensor) {
    auto it = int8Of_.find(floatTensor);
    if (it != int8Of_.end()) return it->second;
    if (deferredMove_.count(floatTensor)) {
      if (std::optional<std::string> moved = movedInt8(floatTensor)) return *moved;
      floatValue(floatTensor);
    }
    const Tensor& f = g_.tensor(floatTensor);
    const float s = scaleFor(floatTensor);
    Node q;
    q.name = "quantize_" + floatTensor;
    q.opType = "QuantizeLinear";
    const std::string scale = addConst(floatTensor + "_scale", DType::kFloat32, {}, {}, {s});
    const int z = zeroPointFor(floatTensor);
    const std::string zp = addConst(floatTensor + "_zero_point", DType::kInt8, {}, {z});
    Tensor out = f;
    out.name = fresh(floatTensor + "_q");
    out.dtype = DType::kInt8;
    out.isConstant = false;
    out.floats.clear();
    out.quant.scale = {s};
    out.quant.zeroPoint = {z};
    g_.tensors[out.name] = out;
    q.inputs = {floatTensor, scale, zp};
    q.outputs = {out.name};
    g_.nodes.push_back(q);
    int8Of_[floatTensor] = out.name;
    floatOf_[out.name] = floatTensor;
    return out.name;
  }

  // A constant float image quantized now (symmetric, its own max), for a layer that reads it as
  // its input: the model carries it and the runners place it in the layer's slot.
  std::string constantInt8(const std::string& floatTensor) {
    auto it = int8Of_.find(floatTensor);
    if (it != int8Of_.end()) return it->second;
    const Tensor& f = g_.tensor(floatTensor);
    float m = 0;
    for (float v : f.floats) m = std::max(m, std::fabs(v));
    if (!std::isfinite(m)) throw Error(g_.origin, "constant '" + floatTensor + "' is not finite");
    const float s = m > 0 ? m / 127.0f : 1.0f;
    std::vector<int64_t> q(f.floats.size());
    for (size_t k = 0; k < q.size(); ++k) q[k] = saturate8(f.floats[k] / s);
    const std::string name = addConst(floatTensor + "_q", DType::kInt8, f.shape, std::move(q));
    g_.tensors[name].quant.scale = {s};
    g_.tensors[name].quant.zeroPoint = {0};
    int8Of_[floatTensor] = name;
    return name;
  }

  // The float tensor for a value that may now only exist as int8 (dequantized on the host).
  std::string floatValue(const std::string& floatTensor) {
    auto deferred = deferredMove_.find(floatTensor);
    if (!pendingFloat_.count(floatTensor) && deferred != deferredMove_.end()) {
      // A host step that only moves values runs after all, where its value is first needed.
      const size_t k = deferred->second;
      for (const std::string& o : nodes()[k].outputs) deferredMove_.erase(o);
      keepOnHost(nodes()[k]);
      return floatTensor;
    }
    if (!pendingFloat_.count(floatTensor)) return floatTensor;
    pendingFloat_.erase(floatTensor);
    const std::string q = int8Of_.at(floatTensor);
    const Tensor& qt = g_.tensor(q);
    Node d;
    d.name = "dequantize_" + floatTensor;
    d.opType = "DequantizeLinear";
    d.inputs = {q, addConst(floatTensor + "_scale", DType::kFloat32, {}, {}, {qt.quant.scale.at(0)}),
                addConst(floatTensor + "_zero_point", DType::kInt8, {},
                         {qt.quant.zeroPoint.empty() ? 0 : qt.quant.zeroPoint[0]})};
    d.outputs = {floatTensor};
    g_.tensors[floatTensor].isConstant = false;
    g_.nodes.push_back(d);
    return floatTensor;
  }

  // Declares `int8Name` (a new accelerator output) as the quantized form of `floatTensor`.
  std::string defineInt8(const std::string& floatTensor, float scale, const std::vector<int64_t>& shape,
                         int zeroPoint = 0) {
    Tensor t;
    t.name = fresh(floatTensor + "_q");
    t.dtype = DType::kInt8;
    t.shape = shape;
    t.hasShape = true;
    t.quant.scale = {scale};
    t.quant.zeroPoint = {zeroPoint};
    g_.tensors[t.name] = t;
    int8Of_[floatTensor] = t.name;
    floatOf_[t.name] = floatTensor;
    pendingFloat_.insert(floatTensor);
    return t.name;
  }

  void keepOnHost(Node n) {
    for (std::string& in : n.inputs) {
      // A flatten deferred for a dense layer that then stayed on the host runs here after all.
      auto deferred = deferredFlatten_.find(in);
      if (deferred != deferredFlatten_.end()) {
        Node flatten = deferred->second;
        deferredFlatten_.erase(deferred);
        keepOnHost(flatten);
      }
      if (!in.empty()) in = floatValue(in);
    }
    g_.nodes.push_back(std::move(n));
  }

  int consumerCount(const std::string& t) const {
    int c = 0;
    for (const Node& n : nodes())
      for (const std::string& in : n.inputs)
        if (in == t) ++c;
    for (const std::string& o : g_.outputs)
      if (o == t) ++c;
    return c;
  }

  // The Relu (or Clip with a zero lower bound) that alone consumes `t`, fused into its producer.
  int fusableRelu(const std::string& t) const {
    if (consumerCount(t) != 1) return -1;
    for (size_t i = 0; i < nodes().size(); ++i) {
      const Node& n = nodes()[i];
      if (n.inputs.empty() || n.inputs[0] != t || !n.domain.empty()) continue;
      if (n.opType == "Relu") return int(i);
      if (n.opType == "Clip") {
        float lo = -1;
        if (n.inputs.size() > 1 && !n.inputs[1].empty() && g_.tensor(n.inputs[1]).isConstant)
          lo = g_.tensor(n.inputs[1]).floats.at(0);
        else if (n.has("min"))
          lo = n.attrFloat("min", -1);
        if (lo == 0.0f) return int(i);
      }
      return -1;
    }
    return -1;
  }

  // The LeakyRelu (slope in (0, 1)) that alone reads `t` in a calibrated model, to run on the
  // layer's sum (Epilogue::leaky): its node, or -1. A QDQ file quantizes between the two.
  // Or a PRelu whose constant slope is one value or one per channel (shape [C], [C,1,1] or
  // [1,C,1,1] against the layer's [N,C,H,W] output; [O] against a dense one's [N,O]), each in
  // [-1, 1]: `slopes` gets them.
  int fusableLeakyRelu(const std::string& t, std::vector<double>* slopes) const {
    if (scales_.fixed || consumerCount(t) != 1) return -1;
    for (size_t i = 0; i < nodes().size(); ++i) {
      const Node& n = nodes()[i];
      if (n.inputs.empty() || n.inputs[0] != t || !n.domain.empty()) continue;
      if (!hasScale(n.outputs.at(0))) return -1;
      if (n.opType == "LeakyRelu") {
        const double alpha = n.attrFloat("alpha", 0.01f);
        *slopes = {alpha};
        return alpha > 0 && alpha < 1 ? int(i) : -1;
      }
      if (n.opType != "PRelu" || n.inputs.size() < 2 || !isConstTensor(n.inputs[1])) return -1;
      const Tensor& s = g_.tensor(n.inputs[1]);
      const std::vector<int64_t>& y = g_.tensor(t).shape;
      if (s.dtype != DType::kFloat32 || y.size() < 2) return -1;
      const int64_t channels = y[1];
      int64_t nonUnit = 0, at = -1;
      for (size_t d = 0; d < s.shape.size(); ++d)
        if (s.shape[d] != 1) ++nonUnit, at = int64_t(d);
      // The slope's one non-unit axis must line up with the output's channel axis (axis 1).
      const int64_t axis = at < 0 ? -1 : at + int64_t(y.size()) - int64_t(s.shape.size());
      if (s.elements() != 1 && (nonUnit != 1 || axis != 1 || s.elements() != channels)) return -1;
      slopes->assign(s.floats.begin(), s.floats.end());
      for (double a : *slopes)
        if (!(a >= -1 && a <= 1)) return -1;
      return int(i);
    }
    return -1;
  }

  // The node of the original graph that writes `t`, or -1.
  int producerOf(const std::string& t) const {
    for (size_t k = 0; k < nodes().size(); ++k)
      for (const std::string& o : nodes()[k].outputs)
        if (o == t) return int(k);
    return -1;
  }

  // Convolutions whose weights are an activation A [1, G*P, Q, 1] viewed as [G*Q, P, 1, 1] by
  // Reshape [G, P, Q], Transpose (0, 2, 1), Reshape (the attention pass's form; op::weightsView):
  // each runs on the accelerator reading A's int8 slot as its weights, where the config's layouts
  // make those bytes the packed weights. The view's three nodes are then not run at all.
  void findWeightsViews() {
    const hw::Config* cfg = scales_.config;
    if (!cfg || scales_.fixed) return;
    auto shapeOf = [&](const std::string& t) { return g_.hasTensor(t) ? g_.tensor(t).shape : std::vector<int64_t>(); };
    auto only = [&](const std::string& t, const char* op) {
      const int k = producerOf(t);
      return k >= 0 && consumerCount(t) == 1 && nodes()[size_t(k)].domain.empty() && nodes()[size_t(k)].opType == op ? k : -1;
    };
    for (size_t i = 0; i < nodes().size(); ++i) {
      const Node& n = nodes()[i];
      if (!n.domain.empty() || n.opType != "Conv" || n.inputs.size() < 2 || isConstTensor(n.inputs[1]) ||
          !(floatActivation(n.inputs[0]) || (isConstTensor(n.inputs[0]) && g_.tensor(n.inputs[0]).dtype == DType::kFloat32)) ||
          n.outputs.size() != 1 ||
          (n.inputs.size() > 2 && !n.inputs[2].empty() && !isConstTensor(n.inputs[2])))
        continue;
      const int64_t groups = n.attrInt("group", 1);
      const std::vector<int64_t> w = shapeOf(n.inputs[1]), x = shapeOf(n.inputs[0]);
      const int r2 = only(n.inputs[1], "Reshape");
      const int tr = r2 >= 0 ? only(nodes()[size_t(r2)].inputs.at(0), "Transpose") : -1;
      const int r1 = tr >= 0 ? only(nodes()[size_t(tr)].inputs.at(0), "Reshape") : -1;
      if (r1 < 0 || w.size() != 4 || x.size() != 4 || groups < 1 || w[0] % groups || w[2] != 1 || w[3] != 1 ||
          x[0] != 1 || x[1] != w[1] * groups || nodes()[size_t(tr)].attrInts("perm", {}) != std::vector<int64_t>{0, 2, 1})
        continue;
      const std::string& a = nodes()[size_t(r1)].inputs.at(0);
      const int64_t P = w[1], Q = w[0] / groups;
      if (!floatActivation(a) || shapeOf(a) != std::vector<int64_t>{1, groups * P, Q, 1} ||
          shapeOf(nodes()[size_t(r1)].outputs.at(0)) != std::vector<int64_t>{groups, P, Q})
        continue;
      int ph, pw, sh, sw, kh = 1, kw = 1;
      Node plain = n;
      if (!simpleWindow(plain, &ph, &pw, &sh, &sw, &kh, &kw, 2) || ph || pw || sh != 1 || sw != 1 || kh != 1 || kw != 1)
        continue;
      Operator probe = Operator::conv2d(1, int(x[1]), int(x[2]), int(x[3]), int(w[0]), 1, 1, 0, Epilogue{});
      probe.groups = int(groups);
      if (!op::weightsViewIsPacked(*cfg, probe)) continue;
      weightsViews_[i] = a;
      fused_.insert({size_t(r1), size_t(tr), size_t(r2)});
    }
  }

  bool floatActivation(const std::string& t) const {
    return !t.empty() && g_.hasTensor(t) && !g_.tensor(t).isConstant && g_.tensor(t).dtype == DType::kFloat32;
  }

  void addAccelerator(const std::string& name, const Operator& op, std::vector<std::string> inputs,
                      const std::string& output) {
    Node n;
    n.name = name;
    n.domain = kTesseraDomain;
    n.opType = kindName(op.kind);
    Attribute spec;
    spec.kind = Attribute::Kind::kString;
    spec.s = op.spec();
    n.attrs["spec"] = spec;
    n.inputs = std::move(inputs);
    n.outputs = {output};
    // A rewritten layer's own MACs (a transposed convolution's, without its inserted zeros) stay
    // what the per-layer table reports.
    if (original_)
      for (const Node& o : *original_)
        if (o.name == name && o.has("logical_macs")) n.attrs["logical_macs"] = o.attrs.at("logical_macs");
    g_.nodes.push_back(n);
  }

  // Conv (any groups and dilations, symmetric pads; weights [outC][inC/groups][kh][kw]) or a dense
  // layer given as OIHW weights.
  // An activation function after a layer, run in its epilogue: the function's kind and the
  // layer's own (pre-activation) output.
  struct FusedActivation {
    Epilogue::Activation kind = Epilogue::Activation::kNone;
    std::string preActivation;
  };

  // The HardSigmoid (alpha 1/6, beta 1/2), HardSwish, Sigmoid or Tanh that alone reads `t`, or
  // x * HardSigmoid(x) or x * Sigmoid(x) (PyTorch's HardSwish and SiLU at opset 13: t read by the
  // gate and a Mul of the two): the nodes to fuse and the function's output. Calibrated models
  // only (a QDQ file quantizes between).
  std::optional<std::pair<FusedActivation, std::vector<size_t>>> fusableActivation(const std::string& t,
                                                                                     std::string* output) const {
    if (scales_.fixed) return std::nullopt;
    const int uses = consumerCount(t);
    std::optional<size_t> sigmoid, swish, mul;
    // The gate's kind alone and times its input.
    Epilogue::Activation alone = Epilogue::Activation::kHardSigmoid, times = Epilogue::Activation::kHardSwish;
    for (size_t i = 0; i < nodes().size(); ++i) {
      const Node& n = nodes()[i];
      if (!n.domain.empty() || n.inputs.empty() || fused_.count(i) || n.inputs[0] != t) continue;
      if (n.opType == "HardSigmoid" && std::fabs(n.attrFloat("alpha", 0.2f) - 1.0f / 6.0f) < 1e-6f &&
          n.attrFloat("beta", 0.5f) == 0.5f) {
        sigmoid = i;
        alone = Epilogue::Activation::kHardSigmoid;
        times = Epilogue::Activation::kHardSwish;
      }
      if (n.opType == "Sigmoid" || n.opType == "Tanh") {
        sigmoid = i;
        alone = n.opType == "Sigmoid" ? Epilogue::Activation::kSigmoid : Epilogue::Activation::kTanh;
        times = n.opType == "Sigmoid" ? Epilogue::Activation::kSilu : Epilogue::Activation::kNone;
      }
      if (n.opType == "HardSwish") swish = i;
    }
    FusedActivation a;
    a.preActivation = t;
    if (swish && uses == 1) {
      a.kind = Epilogue::Activation::kHardSwish;
      *output = nodes()[*swish].outputs.at(0);
      return std::make_pair(a, std::vector<size_t>{*swish});
    }
    if (!sigmoid) return std::nullopt;
    const std::string& h = nodes()[*sigmoid].outputs.at(0);
    // A HardSigmoid alone pays off only when the accelerator reads its output: a squeeze-excitation
    // gate feeding the host's Mul keeps more precision as the int8 input it is computed from.
    bool readByConvolutions = consumerCount(h) > 0;
    for (const Node& n : nodes())
      for (const std::string& in : n.inputs)
        if (in == h && (!n.domain.empty() || (n.opType != "Conv" && n.opType != "Mul"))) readByConvolutions = false;
    if (uses == 1 && readByConvolutions) {
      a.kind = alone;
      *output = h;
      return std::make_pair(a, std::vector<size_t>{*sigmoid});
    }
    if (uses != 2 || consumerCount(h) != 1) return std::nullopt;
    for (size_t i = 0; i < nodes().size(); ++i) {
      const Node& n = nodes()[i];
      if (n.domain.empty() && n.opType == "Mul" && n.inputs.size() == 2 &&
          ((n.inputs[0] == t && n.inputs[1] == h) || (n.inputs[0] == h && n.inputs[1] == t)))
        mul = i;
    }
    if (!mul || times == Epilogue::Activation::kNone) return std::nullopt;
    a.kind = times;
    *output = nodes()[*mul].outputs.at(0);
    return std::make_pair(a, std::vector<size_t>{*sigmoid, *mul});
  }

  // With an activation function fused (`act`), `floatOut` is the function's output and
  // `act->preActivation` the layer's own; false (nothing added) when no requantization form can
  // feed the function.
  bool addConvolution(const std::string& name, const std::string& input, const std::vector<float>& weights,
                       const std::vector<float>& bias, int64_t outC, int64_t inC, int kh, int kw, int sh, int sw,
                       int ph, int pw, bool dense, const std::string& floatOut, const std::vector<int64_t>& outShape,
                       bool relu, const std::vector<float>* weightScales, int groups = 1,
                       const FusedActivation* act = nullptr, int dh = 1, int dw = 1,
                       const std::vector<double>& slopes = {}, const std::string& runtimeWeights = "") {
    const std::string xq = isConstTensor(input) ? constantInt8(input) : int8Value(input);
    const Tensor& x = g_.tensor(xq);
    const float sx = x.quant.scale.at(0);
    // Zero points: x - zx reaches 128 + |zx|; the requantized value before zy is added must land in
    // [-128 - zy, 127 - zy] (not below 0 with ReLU).
    const int zx = x.quant.zeroPoint.empty() ? 0 : int(x.quant.zeroPoint[0]);
    const int zy = zeroPointFor(floatOut);
    const int64_t inMax = 128 + std::abs(zx);
    int64_t outLow = relu ? std::max<int64_t>(0, -128 - zy) : -128 - zy, outHigh = 127 - zy;
    // The scale the requantization targets: the output's, or the activation function's input v.
    double sy = scaleFor(floatOut);
    std::optional<ActivationConstants> ac;
    std::optional<PiecewiseConstants> pc;
    int64_t actVMax = 0;
    if (act) {
      const double inRange = double(scaleFor(act->preActivation)) * 127.0;
      Epilogue probe;
      probe.activation = act->kind;
      if (probe.piecewiseActivation()) {
        pc = piecewiseConstants(act->kind, inRange, sy);
        if (pc) std::tie(sy, actVMax) = std::make_pair(pc->inputScale, pc->vMax);
      } else {
        ac = activationConstants(act->kind == Epilogue::Activation::kHardSwish, inRange, sy);
        if (ac) std::tie(sy, actVMax) = std::make_pair(ac->inputScale, ac->vMax);
      }
      if (!actVMax || zx || zy || relu) return false;
      outLow = -actVMax;
      outHigh = actVMax;
    }
    const int64_t per = inC / groups * kh * kw;
    // Weights given at run time (an activation, op::weightsView): its int8 form's one scale, and
    // any int8 values, so the sums bound at 128 per term. It takes no input zero point.
    const std::string wq8 = runtimeWeights.empty() ? std::string() : int8Value(runtimeWeights);
    if (!wq8.empty() && (zx || g_.tensor(wq8).quant.zeroPoint.at(0) != 0)) return false;
    for (size_t k = 0; k < weights.size() || k < bias.size(); ++k)
      if ((k < weights.size() && !std::isfinite(weights[k])) || (k < bias.size() && !std::isfinite(bias[k])))
        throw Error(g_.origin, "node '" + name + "': its " + (k < weights.size() && !std::isfinite(weights[k]) ? "weight" : "bias") +
                                   " " + std::to_string(k) + " is not a finite number");
    std::vector<int64_t> wq(static_cast<size_t>(outC * per));
    std::vector<int64_t> bq(static_cast<size_t>(outC));
    std::vector<double> real(static_cast<size_t>(outC));
    int64_t worst = 0;
    std::vector<int64_t> sumAbs(static_cast<size_t>(outC));
    for (int64_t o = 0; o < outC && !wq8.empty(); ++o) {
      const double sw8 = g_.tensor(wq8).quant.scale.at(0);
      sumAbs[size_t(o)] = 128 * per;
      const double b = bias.empty() ? 0.0 : bias[size_t(o)];
      bq[size_t(o)] = std::clamp<int64_t>(std::llround(b / (double(sx) * sw8)), -(int64_t(1) << 30), int64_t(1) << 30);
      real[size_t(o)] = double(sx) * sw8 / double(sy);
      worst = std::max<int64_t>(worst, inMax * sumAbs[size_t(o)] + std::llabs(bq[size_t(o)]));
    }
    for (int64_t o = 0; o < outC && wq8.empty(); ++o) {
      float m = 0;
      for (int64_t j = 0; j < per; ++j) m = std::max(m, std::fabs(weights[size_t(o * per + j)]));
      // A QDQ file's own per-channel scales reproduce its int8 weights exactly.
      double sw8 = m > 0 ? m / 127.0 : 1.0;
      if (weightScales && !weightScales->empty())
        sw8 = weightScales->size() == 1 ? (*weightScales)[0] : (*weightScales)[size_t(o)];
      if (!(sw8 > 0) || !std::isfinite(sw8))
        throw Error(g_.origin, "node '" + name + "': the weight scale of output channel " + std::to_string(o) + " is " +
                                   std::to_string(sw8) + ", not a positive finite number");
      for (int64_t j = 0; j < per; ++j) {
        const int8_t q = saturate8(weights[size_t(o * per + j)] / sw8);
        wq[size_t(o * per + j)] = q;
        sumAbs[size_t(o)] += std::abs(int(q));
      }
      const double b = bias.empty() ? 0.0 : bias[size_t(o)];
      bq[size_t(o)] = std::clamp<int64_t>(std::llround(b / (double(sx) * sw8)), -(int64_t(1) << 30), int64_t(1) << 30);
      real[size_t(o)] = double(sx) * sw8 / double(sy);
      worst = std::max<int64_t>(worst, inMax * sumAbs[size_t(o)] + std::llabs(bq[size_t(o)]));
    }
    int64_t maxAbsAcc = 0;
    for (int64_t v : sumAbs) maxAbsAcc = std::max(maxAbsAcc, inMax * v);
    // A fused LeakyRelu on the sum (Epilogue::leaky).
    // One slope in (0, 1) is LeakyRelu's immediate; several (PRelu's, one per channel) a resident row.
    std::optional<LeakyConstants> leaky;
    const bool perChannelSlope = slopes.size() > 1 || (slopes.size() == 1 && !(slopes[0] > 0 && slopes[0] < 1));
    if (!slopes.empty()) {
      std::vector<double> each = slopes;
      if (perChannelSlope && each.size() == 1) each.assign(size_t(outC), slopes[0]);
      if (perChannelSlope && int64_t(each.size()) != outC) return false;
      leaky = perChannelSlope ? slopeConstants(each, worst) : leakyConstants(slopes[0], worst);
      if (!leaky) return false;
    }
    // The operator a requantization form gives (its epilogue; the bias values do not matter here).
    auto operatorFor = [&](const Requantization& r) {
      Epilogue e;
      e.bias = true;
      e.biasAfterMultiply = r.biasAfterMultiply;
      e.perChannelMultiplier = true;
      e.shift = r.shift;
      e.preShift = r.preShift;
      e.preClip = r.preClip;
      e.perChannelClip = r.perChannelClip;
      e.round = r.round;
      e.lowBits = r.lowBits;
      e.relu = relu;
      e.outputZeroPoint = zy;
      if (leaky) {
        e.leaky = true;
        e.leakyPerChannel = perChannelSlope;
        e.leakyPreShift = leaky->preShift;
        e.leakyMultiplier = perChannelSlope ? 0 : leaky->multiplier;
        e.leakyShift = leaky->shift;
      }
      if (ac) {
        e.activation = act->kind;
        e.activationOffset = ac->offset;
        e.activationCeiling = ac->ceiling;
        e.activationPreShift = ac->preShift;
        e.activationMultiplier = ac->multiplier;
        e.activationShift = ac->shift;
      }
      if (pc) {
        e.activation = act->kind;
        e.activationBounds = pc->bounds;
        e.activationSlopes = pc->slopes;
        e.activationSlopeShift = pc->slopeShift;
        e.activationOffset = pc->offset;
        e.activationPreShift = pc->preShift;
        e.activationMultiplier = pc->multiplier;
        e.activationShift = pc->shift;
      }
      const auto& xs = x.shape;
      Operator o;
      if (dense) {
        o = Operator::dense(int(xs.at(0)), int(inC), int(outC), e);
      } else {
        o = Operator::conv2d(int(xs.at(0)), int(inC), int(xs.at(2)), int(xs.at(3)), int(outC), kh, sh, ph, e);
        setWindow(o, kh, kw, sh, sw, ph, pw);
        o.groups = groups;
        o.dilationH = dh;
        o.dilationW = dw;
      }
      o.name = name;
      o.inputZeroPoint = zx;
      o.runtimeWeights = !wq8.empty();
      return o;
    };
    // The forms that apply, the most exact first: low multiplier bits, the bias after the
    // multiply (it cannot carry an input zero point's share, which is folded into a bias added
    // before), clip bounds. Each keeps the result within 1/16 of an output step of the real
    // multiplier's.
    std::vector<Requantization> forms;
    if (std::optional<Requantization> low = lowBitsRequantization(real, worst, outLow, outHigh)) {
      // Its fifth resident vector (the low bits) must leave room for a tile, as in a config with a
      // small accumulator and a wide dense layer it may not.
      Operator probe = operatorFor(*low);
      if (!scales_.config || tilingProblem(*scales_.config, probe, Tiling{1, 1, 1, 1}).empty()) forms.push_back(*low);
    }
    // (LeakyRelu needs the whole sum, bias included, before the multiply.)
    if (!zx && slopes.empty())
      if (std::optional<Requantization> pb = productBiasRequantization(real, bq, maxAbsAcc, outLow, outHigh))
        forms.push_back(*pb);
    if (std::optional<Requantization> c = clippedRequantization(real, worst, outLow, outHigh)) forms.push_back(*c);
    // Before an activation function: v's range is wider than int8; the form may err by 1/16 of the
    // pre-activation's int8 step (vMax / 127 / 16 of v's), with int32 multipliers.
    if (act)
      if (std::optional<Requantization> c =
              clippedRequantization(real, worst, outLow, outHigh, double(actVMax) / 127.0 / 16.0, true))
        forms.push_back(*c);
    // An activation function reads v in the bounds the per-channel clip gives.
    if (act) {
      forms.erase(std::remove_if(forms.begin(), forms.end(), [](const Requantization& r) { return !r.perChannelClip; }),
                  forms.end());
      if (forms.empty()) return false;
    }
    // A calibrated model takes the form the cost model says is fastest: a layer with a short
    // reduction (a 1x1 convolution over 16 channels, a depthwise one) spends its time in the
    // epilogue, where the low bits cost twice the vector ALU passes of the bias after the multiply.
    // A QDQ file keeps the most exact.
    size_t pick = 0;
    if (!scales_.fixed && scales_.config && forms.size() > 1) {
      double best = 0;
      for (size_t k = 0; k < forms.size(); ++k) {
        double cycles = 0;
        try {
          const Operator o = operatorFor(forms[k]);
          cycles = op::estimateCycles(*scales_.config, o, op::chooseTiling(*scales_.config, o)).cycles;
        } catch (const Error&) {
          continue;
        }
        if (k == 0 || cycles < best) {
          best = cycles;
          pick = k;
        }
      }
    }
    const Requantization r = forms.empty() ? requantization(real, worst) : forms[pick];
    std::vector<int64_t> mults(static_cast<size_t>(outC));
    for (int64_t o = 0; o < outC; ++o) {
      bq[size_t(o)] = r.biasAfterMultiply ? r.productBias[size_t(o)] : bq[size_t(o)] + r.roundingBias[size_t(o)];
      mults[size_t(o)] = r.multipliers[size_t(o)];
    }
    Operator op = operatorFor(r);
    op.validate();
    const std::string w =
        wq8.empty() ? addConst(name + "_weights_q", DType::kInt8, {outC, inC / groups, kh, kw}, std::move(wq)) : wq8;
    const std::string b = addConst(name + "_bias_q", DType::kInt32, {outC}, std::move(bq));
    const std::string m = addConst(name + "_multipliers", DType::kInt32, {outC}, std::move(mults));
    std::vector<std::string> inputs = {xq, w, b, m};
    if (r.perChannelClip) {
      inputs.push_back(addConst(name + "_clip_low", DType::kInt32, {outC},
                                std::vector<int64_t>(r.clipLow.begin(), r.clipLow.end())));
      inputs.push_back(addConst(name + "_clip_high", DType::kInt32, {outC},
                                std::vector<int64_t>(r.clipHigh.begin(), r.clipHigh.end())));
    }
    if (r.lowBits || (leaky && perChannelSlope)) {
      // Optional inputs keep their places: 6 the low multiplier bits, 7 a fused residual (added
      // later), 8 PRelu's slopes.
      while (inputs.size() < 6) inputs.push_back("");
      inputs.push_back(r.lowBits ? addConst(name + "_multipliers_low", DType::kInt32, {outC},
                                            std::vector<int64_t>(r.multipliersLow.begin(), r.multipliersLow.end()))
                                 : std::string());
    }
    if (leaky && perChannelSlope) {
      inputs.push_back("");
      inputs.push_back(addConst(name + "_slopes", DType::kInt32, {outC},
                                std::vector<int64_t>(leaky->multipliers.begin(), leaky->multipliers.end())));
    }
    const std::string out = defineInt8(floatOut, scaleFor(floatOut), outShape, zy);
    addAccelerator(name, op, inputs, out);
    if (!wq8.empty()) g_.nodes.back().attrs["runtime_weights"] = intAttribute(1);
    return true;
  }

  // Symmetric pads, or false; the dilations go to `dh` and `dw`, or without them must be 1.
  bool simpleWindow(const Node& n, int* ph, int* pw, int* sh, int* sw, int* kh, int* kw, size_t spatialDims,
                    int* dh = nullptr, int* dw = nullptr) {
    if (n.attrString("auto_pad", "NOTSET") != "NOTSET" && n.attrString("auto_pad", "NOTSET") != "VALID") return false;
    std::vector<int64_t> pads = n.attrInts("pads", std::vector<int64_t>(2 * spatialDims, 0));
    std::vector<int64_t> strides = n.attrInts("strides", std::vector<int64_t>(spatialDims, 1));
    std::vector<int64_t> dil = n.attrInts("dilations", std::vector<int64_t>(spatialDims, 1));
    if (spatialDims != 2 || pads.size() != 4 || strides.size() != 2) return false;
    if (dil.size() != 2 || dil[0] < 1 || dil[1] < 1 || dil[0] > 64 || dil[1] > 64) return false;
    if (!dh && (dil[0] != 1 || dil[1] != 1)) return false;
    if (dh) *dh = int(dil[0]);
    if (dw) *dw = int(dil[1]);
    if (pads[0] != pads[2] || pads[1] != pads[3]) return false;
    *ph = int(pads[0]);
    *pw = int(pads[1]);
    *sh = int(strides[0]);
    *sw = int(strides[1]);
    if (n.has("kernel_shape")) {
      std::vector<int64_t> k = n.attrInts("kernel_shape", {});
      if (k.size() != 2) return false;
      *kh = int(k[0]);
      *kw = int(k[1]);
    }
    return true;
  }

  // A Concat whose inputs are int8 outputs of accelerator layers of the segment being formed (no
  // host step since the first of them), all at the output's scale: an accelerator `concat` node,
  // which costs nothing (DRAM planning puts its inputs in slices of its output).
  bool tryConcat(const Node& n) {
    if (!concatAlignment(n)) return false;
    const std::string& out = n.outputs[0];
    if (!hasScale(out)) return false;
    const float s = scaleFor(out);
    const int z = zeroPointFor(out);
    size_t lastHost = 0;
    for (size_t k = 0; k < g_.nodes.size(); ++k)
      if (g_.nodes[k].domain != kTesseraDomain) lastHost = k + 1;
    std::vector<std::string> inputs;
    for (const std::string& t : n.inputs) {
      auto it = int8Of_.find(t);
      if (it == int8Of_.end() || !pendingFloat_.count(t)) return false;
      const Tensor& q = g_.tensor(it->second);
      if (q.quant.scale.at(0) != s || (q.quant.zeroPoint.empty() ? 0 : int(q.quant.zeroPoint[0])) != z) return false;
      const int p = g_.producer(it->second);
      if (p < 0 || size_t(p) < lastHost || !isAccelerator(g_.nodes[size_t(p)])) return false;
      inputs.push_back(it->second);
    }
    Node c;
    c.name = n.name;
    c.domain = kTesseraDomain;
    c.opType = "concat";
    c.inputs = inputs;
    c.outputs = {defineInt8(out, s, g_.tensor(out).shape, z)};
    g_.nodes.push_back(c);
    return true;
  }

  // The nodes from nodes()[i] on whose op types are `ops` (after nodes()[i] itself), each the
  // previous one's only reader; empty if the graph has no such chain there.
  std::vector<size_t> readerChain(size_t i, std::initializer_list<const char*> ops) const {
    std::vector<size_t> chain = {i};
    for (const char* op : ops) {
      const Node& last = nodes()[chain.back()];
      if (last.outputs.size() != 1) return {};
      const int c = soleConsumer(last.outputs[0]);
      if (c < 0 || nodes()[size_t(c)].opType != op || !nodes()[size_t(c)].domain.empty()) return {};
      chain.push_back(size_t(c));
    }
    return chain;
  }

  // What a chain of host steps does to a probe shaped like float tensor `x` whose element k holds
  // k + 1 (so a 0 marks a value that came from nowhere): the last step's output, or nothing if a
  // step has a non-constant extra input or fails, or a tensor on the way has 2^24 elements or more
  // (where float32 stops counting exactly).
  std::optional<Tensor> probeChain(const Tensor& x, const std::vector<size_t>& chain) const {
    std::optional<Tensor> probe = positionProbe(x);
    if (!probe) return std::nullopt;
    std::vector<MovingStep> steps;
    for (size_t k : chain) steps.push_back({&nodes()[k], 0});
    return runMovingSteps(g_, steps, std::move(*probe));
  }

  // The largest factor an accelerator upsample repeats a pixel by, per axis: each stored run
  // becomes SH x SW STOREs, so larger factors are left to the host.
  static constexpr int64_t kMaxUpsampleFactor = 8;

  // Whether a Resize or Upsample might repeat pixels by whole factors (nearest mode, output
  // extents whole multiples of the input's): what shareConcatScales looks through. tryUpsample
  // decides for certain.
  bool mayReplicate(const Node& n) const {
    if ((n.opType != "Resize" && n.opType != "Upsample") || !n.domain.empty() || n.inputs.empty() ||
        n.outputs.size() != 1 || n.attrString("mode", "nearest") != "nearest")
      return false;
    const Tensor& x = g_.tensor(n.inputs[0]);
    const Tensor& y = g_.tensor(n.outputs[0]);
    return x.hasShape && y.hasShape && x.shape.size() == 4 && y.shape.size() == 4 && x.shape[0] == y.shape[0] &&
           x.shape[1] == y.shape[1] && x.shape[2] > 0 && x.shape[3] > 0 && y.shape[2] % x.shape[2] == 0 &&
           y.shape[3] % x.shape[3] == 0;
  }

  // A nearest Resize (or Upsample) that repeats each pixel of an int8 output of an accelerator
  // layer of the segment being formed SH times down and SW times across: an accelerator
  // `upsample` node at its input's scale, which that layer's stores carry out (link.cpp). Whether
  // the node repeats pixels is decided by running it on the host over a probe whose values are
  // their own positions, so every coordinate transformation and rounding mode is judged by what
  // it does.
  bool tryUpsample(size_t i) {
    const Node& n = nodes()[i];
    const hw::Config* cfg = scales_.config;
    if (!cfg || cfg->blockIn != cfg->blockOut || !mayReplicate(n) || !floatActivation(n.inputs[0])) return false;
    const std::string& x = n.inputs[0];
    const std::string& out = n.outputs[0];
    const Tensor& xt = g_.tensor(x);
    const std::vector<int64_t>& ys = g_.tensor(out).shape;
    const int64_t sh = ys[2] / xt.shape[2], sw = ys[3] / xt.shape[3];
    if (sh > kMaxUpsampleFactor || sw > kMaxUpsampleFactor) return false;
    auto it = int8Of_.find(x);
    if (!storedInSegment(x, "upsample")) return false;
    const Tensor& q = g_.tensor(it->second);
    const float s = q.quant.scale.at(0);
    const int z = q.quant.zeroPoint.empty() ? 0 : int(q.quant.zeroPoint[0]);
    if (scales_.fixed && (!scales_.activation.count(out) || scaleFor(out) != s || zeroPointFor(out) != z)) return false;
    const int64_t h = xt.shape[2], w = xt.shape[3], planes = xt.shape[0] * xt.shape[1];
    const std::optional<Tensor> got = probeChain(xt, {i});
    if (!got || got->shape != ys) return false;
    for (int64_t pl = 0, k = 0; pl < planes; ++pl)
      for (int64_t oy = 0; oy < h * sh; ++oy)
        for (int64_t ox = 0; ox < w * sw; ++ox, ++k)
          if (got->floats[size_t(k)] != float((pl * h + oy / sh) * w + ox / sw + 1)) return false;
    Node c;
    c.name = n.name;
    c.domain = kTesseraDomain;
    c.opType = "upsample";
    Attribute spec;
    spec.kind = Attribute::Kind::kString;
    spec.s = "upsample factor=" + std::to_string(sh) + "x" + std::to_string(sw);
    c.attrs["spec"] = spec;
    c.inputs = {it->second};
    c.outputs = {defineInt8(out, s, ys, z)};
    g_.nodes.push_back(c);
    return true;
  }

  // Whether float value `x` is the int8 output of an accelerator layer with instructions of the
  // segment being formed (no host step since), or of a chain of scatter nodes after one: a layer
  // whose stores can put it elsewhere, for a scatter node of `kind`. The stores follow a chain
  // only where its first node alone groups channels into phases and its last alone repeats pixels.
  bool storedInSegment(const std::string& x, const std::string& kind) const {
    auto it = int8Of_.find(x);
    if (it == int8Of_.end() || !pendingFloat_.count(x)) return false;
    size_t lastHost = 0;
    for (size_t k = 0; k < g_.nodes.size(); ++k)
      if (g_.nodes[k].domain != kTesseraDomain) lastHost = k + 1;
    int p = g_.producer(it->second);
    while (p >= 0 && isScatter(g_.nodes[size_t(p)])) {
      if (kind == "interleave" || kind == "select" || g_.nodes[size_t(p)].opType == "upsample") return false;
      p = g_.producer(g_.nodes[size_t(p)].inputs.at(0));
    }
    return p >= 0 && size_t(p) >= lastHost && isAccelerator(g_.nodes[size_t(p)]) && !hasNoCode(g_.nodes[size_t(p)]);
  }

  // The one node of the original graph that reads `t` (and `t` is no graph output), or -1.
  int soleConsumer(const std::string& t) const {
    if (consumerCount(t) != 1) return -1;
    for (size_t k = 0; k < nodes().size(); ++k)
      for (const std::string& in : nodes()[k].inputs)
        if (in == t) return int(k);
    return -1;
  }

  // The zero insertion and padding transposedConvolutionsAsConvolutions writes before a transposed
  // convolution (Reshape, Pad, Reshape, Pad, each the previous one's only reader), over the int8
  // output of an accelerator layer of the segment being formed: an accelerator `dilate` node at
  // its input's scale (zero point 0, so the zeros are int8 zeros), which that layer's stores carry
  // out (link.cpp). The four steps are run on the host over a probe whose values are their own
  // positions plus one, and must place every pixel on one grid with zeros elsewhere.
  bool tryDilate(size_t i) {
    const hw::Config* cfg = scales_.config;
    if (!cfg || cfg->blockIn != cfg->blockOut || scales_.fixed) return false;
    const std::vector<size_t> chain = readerChain(i, {"Pad", "Reshape", "Pad"});
    if (chain.empty()) return false;
    const std::string& x = nodes()[i].inputs.at(0);
    const std::string& out = nodes()[chain.back()].outputs.at(0);
    if (!floatActivation(x) || !storedInSegment(x, "dilate")) return false;
    const Tensor& xt = g_.tensor(x);
    const Tensor& yt = g_.tensor(out);
    if (!xt.hasShape || !yt.hasShape || xt.shape.size() != 4 || yt.shape.size() != 4 || xt.shape[0] != yt.shape[0] ||
        xt.shape[1] != yt.shape[1])
      return false;
    const Tensor& q = g_.tensor(int8Of_.at(x));
    if (!q.quant.zeroPoint.empty() && q.quant.zeroPoint[0] != 0) return false;
    const int64_t planes = xt.shape[0] * xt.shape[1], h = xt.shape[2], w = xt.shape[3];
    const int64_t oh = yt.shape[2], ow = yt.shape[3];
    const std::optional<Tensor> probed = probeChain(xt, chain);
    if (!probed) return false;
    const Tensor& cur = *probed;
    if (cur.shape != yt.shape || cur.floats.size() != size_t(planes * oh * ow)) return false;
    // Where pixels (0, 0), (0, 1) and (1, 0) of the first plane landed.
    auto find = [&](float v) -> int64_t {
      for (int64_t k = 0; k < oh * ow; ++k)
        if (cur.floats[size_t(k)] == v) return k;
      return -1;
    };
    const int64_t origin = find(1);
    if (origin < 0) return false;
    const int64_t top = origin / ow, left = origin % ow;
    int64_t sh = 1, sw = 1;
    if (w > 1) {
      const int64_t p = find(2);
      if (p < 0 || p / ow != top || p % ow <= left) return false;
      sw = p % ow - left;
    }
    if (h > 1) {
      const int64_t p = find(float(w + 1));
      if (p < 0 || p % ow != left || p / ow <= top) return false;
      sh = p / ow - top;
    }
    if (top + (h - 1) * sh >= oh || left + (w - 1) * sw >= ow) return false;
    std::vector<float> want(size_t(planes * oh * ow), 0.0f);
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t xx = 0; xx < w; ++xx)
          want[size_t((pl * oh + top + y * sh) * ow + left + xx * sw)] = float((pl * h + y) * w + xx + 1);
    if (want != cur.floats) return false;
    Node c;
    c.name = nodes()[chain[2]].name;
    c.domain = kTesseraDomain;
    c.opType = "dilate";
    Attribute spec;
    spec.kind = Attribute::Kind::kString;
    spec.s = "dilate stride=" + std::to_string(sh) + "x" + std::to_string(sw) + " offset=" + std::to_string(top) + "x" +
             std::to_string(left) + " size=" + std::to_string(oh) + "x" + std::to_string(ow);
    c.attrs["spec"] = spec;
    c.inputs = {int8Of_.at(x)};
    c.outputs = {defineInt8(out, q.quant.scale.at(0), yt.shape, 0)};
    g_.nodes.push_back(c);
    for (size_t k = 1; k < chain.size(); ++k) fused_.insert(chain[k]);
    return true;
  }

  // The interleave of stride phases transposedConvolutionsAsConvolutions writes after a transposed
  // convolution's phase form (Reshape, Transpose, Reshape, Slice, each the previous one's only
  // reader), over the int8 output of an accelerator layer of the segment being formed: an
  // accelerator `interleave` node at its input's scale, which that layer's stores carry out
  // (link.cpp), each channel block being one phase's. The four steps are run on the host over a
  // probe whose values are their own positions plus one, and must move every pixel where the
  // interleave puts it.
  bool tryInterleave(size_t i) {
    const hw::Config* cfg = scales_.config;
    if (!cfg || cfg->blockIn != cfg->blockOut || scales_.fixed) return false;
    const std::vector<size_t> chain = readerChain(i, {"Transpose", "Reshape", "Slice"});
    if (chain.empty()) return false;
    const std::string& x = nodes()[i].inputs.at(0);
    const std::string& out = nodes()[chain.back()].outputs.at(0);
    if (!floatActivation(x) || !storedInSegment(x, "interleave")) return false;
    const Tensor& xt = g_.tensor(x);
    const Tensor& split = g_.tensor(nodes()[i].outputs.at(0));
    const Tensor& yt = g_.tensor(out);
    if (!xt.hasShape || !yt.hasShape || !split.hasShape || xt.shape.size() != 4 || yt.shape.size() != 4 ||
        split.shape.size() != 6 || xt.shape[0] != yt.shape[0])
      return false;
    const int64_t n = xt.shape[0], c = xt.shape[1], h = xt.shape[2], w = xt.shape[3];
    const int64_t m = yt.shape[1], oh = yt.shape[2], ow = yt.shape[3], sh = split.shape[1], sw = split.shape[2];
    if (sh < 1 || sw < 1 || m * sh * sw != c || m % cfg->blockOut) return false;
    const std::optional<Tensor> probed = probeChain(xt, chain);
    if (!probed) return false;
    const Tensor& cur = *probed;
    if (cur.shape != yt.shape || cur.floats.empty() || cur.floats[0] < 1) return false;
    // The crop from where output pixel (0, 0) of channel 0 came from.
    const int64_t source = int64_t(cur.floats[0]) - 1;
    const int64_t sc = source / (h * w) % c, sy = source / w % h, sx = source % w;
    const int64_t phase = sc / m;
    if (sc % m != 0) return false;
    const int64_t top = sy * sh + phase / sw, left = sx * sw + phase % sw;
    std::vector<float> want(cur.floats.size());
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < m; ++ch)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox) {
            const int64_t zy = oy + top, zx = ox + left;
            if (zy / sh >= h || zx / sw >= w) return false;
            const int64_t from = ((b * c + ((zy % sh) * sw + zx % sw) * m + ch) * h + zy / sh) * w + zx / sw;
            want[size_t(((b * m + ch) * oh + oy) * ow + ox)] = float(from + 1);
          }
    if (want != cur.floats) return false;
    const Tensor& q = g_.tensor(int8Of_.at(x));
    Node node;
    node.name = nodes()[chain.back()].name;
    node.domain = kTesseraDomain;
    node.opType = "interleave";
    Attribute spec;
    spec.kind = Attribute::Kind::kString;
    spec.s = "interleave phases=" + std::to_string(sh) + "x" + std::to_string(sw) + " crop=" + std::to_string(top) + "x" +
             std::to_string(left) + " size=" + std::to_string(oh) + "x" + std::to_string(ow);
    node.attrs["spec"] = spec;
    node.inputs = {int8Of_.at(x)};
    node.outputs = {defineInt8(out, q.quant.scale.at(0), yt.shape, q.quant.zeroPoint.empty() ? 0 : int(q.quant.zeroPoint[0]))};
    g_.nodes.push_back(node);
    for (size_t k = 1; k < chain.size(); ++k) fused_.insert(chain[k]);
    return true;
  }

  // A host step that only moves values (Reshape, Transpose, Squeeze, Unsqueeze, Split, Slice,
  // zero Pad) of an accelerator output not dequantized yet, or of another such step: it is not
  // run yet. An accelerator layer reading its result takes it as a copy-free movement of that
  // output where the stores can do it (movedInt8); anything else runs it on the host where it
  // first needs it (floatValue), so a chain of such steps between two accelerator layers no
  // longer cuts their segment.
  bool deferMovement(size_t i) {
    const Node& n = nodes()[i];
    static const std::set<std::string> moves = {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Split", "Slice", "Pad"};
    if (!scales_.config || scales_.fixed || !n.domain.empty() || !moves.count(n.opType) || n.inputs.empty() ||
        n.outputs.empty())
      return false;
    if (n.opType == "Pad" && (n.attrString("mode", "constant") != "constant" ||
                              (n.inputs.size() > 2 && !n.inputs[2].empty() &&
                               (!isConstTensor(n.inputs[2]) || g_.tensor(n.inputs[2]).floats != std::vector<float>{0.0f}))))
      return false;
    const std::string& x = n.inputs[0];
    if (!(pendingFloat_.count(x) || deferredMove_.count(x))) return false;
    for (size_t a = 1; a < n.inputs.size(); ++a)
      if (!n.inputs[a].empty() && !isConstTensor(n.inputs[a])) return false;
    for (const std::string& o : n.outputs)
      if (o.empty() || !g_.hasTensor(o) || !g_.tensor(o).hasShape) return false;
    for (const std::string& o : n.outputs) deferredMove_[o] = i;
    return true;
  }

  // `t`, the result of deferred moving steps from an int8 accelerator output X [1, C, H, W] of the
  // segment being formed, as a copy-free movement of X: the steps are run on the host over a probe
  // whose values are X's positions plus one, and must give [1, C', H', W'] holding one group of
  // C' whole channel blocks of X (select) placed at an offset in an image of zeros (dilate), or X
  // itself. Then `t` is that (at X's scale), stored by X's producer; else nothing.
  std::optional<std::string> movedInt8(const std::string& t) {
    const hw::Config* cfg = scales_.config;
    if (!cfg || cfg->blockIn != cfg->blockOut) return std::nullopt;
    std::vector<MovingStep> path;
    std::string cur = t;
    for (auto d = deferredMove_.find(cur); d != deferredMove_.end(); d = deferredMove_.find(cur)) {
      const Node& n = nodes()[d->second];
      path.push_back({&n, size_t(std::find(n.outputs.begin(), n.outputs.end(), cur) - n.outputs.begin())});
      cur = n.inputs.at(0);
    }
    if (path.empty() || !pendingFloat_.count(cur) || !int8Of_.count(cur)) return std::nullopt;
    std::reverse(path.begin(), path.end());
    const Tensor& xt = g_.tensor(cur);
    const Tensor& yt = g_.tensor(t);
    if (!xt.hasShape || !yt.hasShape || xt.shape.size() != 4 || yt.shape.size() != 4 || xt.shape[0] != 1 || yt.shape[0] != 1)
      return std::nullopt;
    const int64_t C = xt.shape[1], H = xt.shape[2], W = xt.shape[3], C2 = yt.shape[1], H2 = yt.shape[2], W2 = yt.shape[3];
    if (C2 < 1 || C % C2 || (C2 != C && C2 % cfg->blockOut)) return std::nullopt;
    std::optional<Tensor> start = positionProbe(xt);
    std::optional<Tensor> moved = start ? runMovingSteps(g_, path, std::move(*start)) : std::nullopt;
    if (!moved) return std::nullopt;
    const Tensor& probe = *moved;
    if (probe.shape != yt.shape) return std::nullopt;
    // Where X's first kept value landed gives the group and the offset.
    size_t first = 0;
    while (first < probe.floats.size() && probe.floats[first] == 0.0f) ++first;
    if (first == probe.floats.size()) return std::nullopt;
    const int64_t from = int64_t(probe.floats[first]) - 1, to = int64_t(first);
    const int64_t c0 = from / (H * W), y0 = from / W % H, x0 = from % W;
    const int64_t c1 = to / (H2 * W2), y1 = to / W2 % H2, x1 = to % W2;
    const int64_t group = (c0 - c1) / C2, top = y1 - y0, left = x1 - x0;
    if (c0 - c1 < 0 || (c0 - c1) % C2 || top < 0 || left < 0 || top + H > H2 || left + W > W2) return std::nullopt;
    std::vector<float> want(probe.floats.size(), 0.0f);
    for (int64_t c = 0; c < C2; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x)
          want[size_t((c * H2 + y + top) * W2 + x + left)] = float(((group * C2 + c) * H + y) * W + x + 1);
    if (want != probe.floats) return std::nullopt;
    const std::string xq = int8Of_.at(cur);
    const Tensor& q = g_.tensor(xq);
    const int z = q.quant.zeroPoint.empty() ? 0 : int(q.quant.zeroPoint[0]);
    const bool select = C2 != C, dilate = H2 != H || W2 != W;
    if (!select && !dilate) {  // X itself, only reshaped and transposed back
      int8Of_[t] = xq;
      pendingFloat_.insert(t);
      deferredMove_.erase(t);
      return xq;
    }
    if ((dilate && z != 0) || !storedInSegment(cur, select ? "select" : "dilate")) return std::nullopt;
    auto scatterNode = [&](const std::string& kind, const std::string& spec, const std::string& in, const std::string& out) {
      Node c;
      c.name = fresh(path.back().node->name + "_" + kind);
      c.domain = kTesseraDomain;
      c.opType = kind;
      Attribute a;
      a.kind = Attribute::Kind::kString;
      a.s = spec;
      c.attrs["spec"] = a;
      c.inputs = {in};
      c.outputs = {out};
      g_.nodes.push_back(c);
    };
    std::string in = xq;
    if (select) {
      const std::string out = dilate ? fresh(t + "_group_q") : std::string();
      if (dilate) {
        Tensor sel;
        sel.name = out;
        sel.dtype = DType::kInt8;
        sel.shape = {1, C2, H, W};
        sel.hasShape = true;
        sel.quant = q.quant;
        g_.tensors[out] = sel;
      }
      const std::string target = dilate ? out : defineInt8(t, q.quant.scale.at(0), yt.shape, z);
      scatterNode("select", "select groups=" + std::to_string(C / C2) + " group=" + std::to_string(group), in, target);
      in = target;
    }
    if (dilate)
      scatterNode("dilate",
                  "dilate stride=1x1 offset=" + std::to_string(top) + "x" + std::to_string(left) + " size=" + std::to_string(H2) +
                      "x" + std::to_string(W2),
                  in, defineInt8(t, q.quant.scale.at(0), yt.shape, 0));
    deferredMove_.erase(t);
    return int8Of_.at(t);
  }

  bool tryAccelerate(size_t i) {
    const Node& n = nodes()[i];
    if (!n.domain.empty()) return false;
    const std::string out = n.outputs.empty() ? "" : n.outputs[0];
    // QDQ models: only what the file quantizes goes to the accelerator.
    if (scales_.fixed && n.opType != "Flatten" && n.opType != "Reshape") {
      if (!hasScale(n.inputs.at(0)) || (n.opType == "Add" && (n.inputs.size() < 2 || !hasScale(n.inputs[1])))) return false;
      const int r = fusableRelu(out);
      const std::string y = r >= 0 ? nodes()[size_t(r)].outputs[0] : out;
      const bool pooling = n.opType == "MaxPool" || n.opType == "AveragePool" || n.opType == "GlobalAveragePool";
      if (!pooling && !hasScale(y)) return false;
    }
    auto outputAfterRelu = [&](bool* relu) {
      const int r = fusableRelu(out);
      *relu = r >= 0 || scales_.clippedAtZero.count(out);
      if (r >= 0) {
        fused_.insert(size_t(r));
        return nodes()[size_t(r)].outputs[0];
      }
      return out;
    };
    if (n.opType == "Concat") return tryConcat(n);
    if (n.opType == "Resize" || n.opType == "Upsample") return tryUpsample(i);
    if (n.opType == "Reshape" && (tryDilate(i) || tryInterleave(i))) return true;
    if (n.opType == "Conv" && weightsViews_.count(i)) {
      std::vector<float> bias;
      if (n.inputs.size() > 2 && !n.inputs[2].empty()) bias = g_.tensor(n.inputs[2]).floats;
      const Tensor& w = g_.tensor(n.inputs[1]);
      const int64_t groups = n.attrInt("group", 1);
      bool relu;
      const std::string y = outputAfterRelu(&relu);
      if (!addConvolution(n.name, n.inputs[0], {}, bias, w.shape[0], w.shape[1] * groups, 1, 1, 1, 1, 0, 0, false, y,
                          g_.tensor(y).shape, relu, nullptr, int(groups), nullptr, 1, 1, {}, weightsViews_.at(i)))
        throw Error(g_.origin, "node '" + n.name + "': no requantization fits its weights given at run time");
      return true;
    }
    if (n.opType == "Conv") {
      if (!floatActivation(n.inputs[0]) || !isConstTensor(n.inputs.at(1))) return false;
      const Tensor& w = g_.tensor(n.inputs[1]);
      if (w.shape.size() != 4 || g_.tensor(n.inputs[0]).shape.size() != 4) return false;
      const int64_t groups = n.attrInt("group", 1);
      if (groups < 1 || g_.tensor(n.inputs[0]).shape[1] != w.shape[1] * groups || w.shape[0] % groups) return false;
      int ph, pw, sh, sw, kh = int(w.shape[2]), kw = int(w.shape[3]), dh = 1, dw = 1;
      if (!simpleWindow(n, &ph, &pw, &sh, &sw, &kh, &kw, 2, &dh, &dw)) return false;
      std::vector<float> bias;
      if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
        if (!isConstTensor(n.inputs[2])) return false;
        bias = g_.tensor(n.inputs[2]).floats;
      }
      bool relu;
      const std::string y = outputAfterRelu(&relu);
      std::vector<double> slopes;
      if (!relu && y == out) {
        const int leaky = fusableLeakyRelu(out, &slopes);
        const std::string leakyOut = leaky >= 0 ? nodes()[size_t(leaky)].outputs.at(0) : std::string();
        if (leaky >= 0 && addConvolution(n.name, n.inputs[0], w.floats, bias, w.shape[0], w.shape[1] * groups, kh, kw, sh,
                                         sw, ph, pw, false, leakyOut, g_.tensor(leakyOut).shape, false,
                                         weightScalesOf(n.inputs[1]), int(groups), nullptr, dh, dw, slopes)) {
          fused_.insert(size_t(leaky));
          return true;
        }
      }
      std::string activated;
      if (!relu && y == out)
        if (auto f = fusableActivation(out, &activated)) {
          if (hasScale(activated) && floatActivation(out) &&
              addConvolution(n.name, n.inputs[0], w.floats, bias, w.shape[0], w.shape[1] * groups, kh, kw, sh, sw, ph, pw,
                             false, activated, g_.tensor(activated).shape, false, weightScalesOf(n.inputs[1]), int(groups),
                             &f->first, dh, dw)) {
            for (size_t k : f->second) fused_.insert(k);
            return true;
          }
        }
      addConvolution(n.name, n.inputs[0], w.floats, bias, w.shape[0], w.shape[1] * groups, kh, kw, sh, sw, ph, pw, false,
                      y, g_.tensor(y).shape, relu, weightScalesOf(n.inputs[1]), int(groups), nullptr, dh, dw);
      return true;
    }
    if (n.opType == "Gemm" || n.opType == "MatMul") {
      std::string a = n.inputs[0];
      if (!isConstTensor(n.inputs.at(1)) || !floatActivation(a)) return false;
      if (n.opType == "Gemm" && (n.attrInt("transA", 0) || n.attrFloat("alpha", 1) != 1.0f || n.attrFloat("beta", 1) != 1.0f))
        return false;
      const Tensor& b = g_.tensor(n.inputs[1]);
      if (b.shape.size() != 2 || g_.tensor(a).shape.size() != 2) return false;
      const bool transB = n.opType == "Gemm" && n.attrInt("transB", 0);
      const int64_t K = transB ? b.shape[1] : b.shape[0], O = transB ? b.shape[0] : b.shape[1];
      // The weights as [O][K]: Gemm's transB=1 form (PyTorch's Linear) already is, and is not copied
      // (VGG's first dense layer holds 411 MB of them).
      std::vector<float> transposed;
      if (!transB) {
        transposed.resize(static_cast<size_t>(O * K));
        for (int64_t o = 0; o < O; ++o)
          for (int64_t k = 0; k < K; ++k) transposed[size_t(o * K + k)] = b.floats[size_t(k * O + o)];
      }
      const std::vector<float>& wOK = transB ? b.floats : transposed;
      std::vector<float> bias;
      if (n.opType == "Gemm" && n.inputs.size() > 2 && !n.inputs[2].empty()) {
        if (!isConstTensor(n.inputs[2])) return false;
        const Tensor& c = g_.tensor(n.inputs[2]);
        if (c.elements() == O) bias = c.floats;
        else if (c.elements() == 1) bias.assign(size_t(O), c.floats.at(0));
        else return false;
      }
      bool relu;
      const std::string y = outputAfterRelu(&relu);
      // A HardSwish after it (MobileNetV3's classifier) runs in its epilogue, as after a Conv.
      std::string activated;
      std::optional<std::pair<FusedActivation, std::vector<size_t>>> fused;
      if (!relu && y == out) fused = fusableActivation(out, &activated);
      if (fused && !hasScale(activated)) fused.reset();
      std::vector<double> slopes;
      const int leaky = !relu && y == out && !fused ? fusableLeakyRelu(out, &slopes) : -1;
      auto dense = [&](const std::string& input, int64_t inC, int kh, int kw, bool isDense) {
        if (leaky >= 0) {
          const std::string& leakyOut = nodes()[size_t(leaky)].outputs.at(0);
          if (addConvolution(n.name, input, wOK, bias, O, inC, kh, kw, 1, 1, 0, 0, isDense, leakyOut,
                             g_.tensor(leakyOut).shape, false, denseScales(n, transB), 1, nullptr, 1, 1, slopes)) {
            fused_.insert(size_t(leaky));
            return;
          }
        }
        if (fused && addConvolution(n.name, input, wOK, bias, O, inC, kh, kw, 1, 1, 0, 0, isDense, activated,
                                    g_.tensor(activated).shape, false, denseScales(n, transB), 1, &fused->first)) {
          for (size_t k : fused->second) fused_.insert(k);
          return;
        }
        addConvolution(n.name, input, wOK, bias, O, inC, kh, kw, 1, 1, 0, 0, isDense, y, g_.tensor(y).shape, relu,
                        denseScales(n, transB));
      };
      // A dense layer after Flatten of an [N,C,H,W] activation is a convolution with an HxW
      // kernel over it: the flatten order (c, y, x) is the OIHW weight order, so no relayout.
      auto flat = flattenedFrom_.find(a);
      if (flat != flattenedFrom_.end()) {
        const Tensor& src = g_.tensor(flat->second);
        const int64_t C = src.shape[1], H = src.shape[2], W = src.shape[3];
        if (C * H * W == K) {
          dense(flat->second, C, int(H), int(W), H * W == 1);
          return true;
        }
      }
      dense(a, K, 1, 1, true);
      return true;
    }
    if (n.opType == "Flatten" || n.opType == "Reshape") {
      // Kept lazily: a following dense layer reads the 4-D activation directly.
      const Tensor& in = g_.tensor(n.inputs[0]);
      const Tensor& o = g_.tensor(out);
      if (!floatActivation(n.inputs[0]) || in.shape.size() != 4 || o.shape.size() != 2 || o.shape[0] != in.shape[0])
        return false;
      if (n.opType == "Flatten" && n.attrInt("axis", 1) != 1) return false;
      bool onlyDense = consumerCount(out) > 0;
      for (const Node& c : nodes())
        for (const std::string& ci : c.inputs)
          if (ci == out && !(c.domain.empty() && (c.opType == "Gemm" || c.opType == "MatMul") && c.inputs[0] == out))
            onlyDense = false;
      if (!onlyDense || !int8Of_.count(n.inputs[0])) return false;
      flattenedFrom_[out] = n.inputs[0];
      deferredFlatten_[out] = n;
      return true;
    }
    if (n.opType == "Mul") {
      // A feature map times one value per channel (a squeeze-excitation gate): `scale`.
      if (n.inputs.size() != 2 || !floatActivation(n.inputs[0]) || !floatActivation(n.inputs[1]) || !scales_.config)
        return false;
      const bool gateFirst = g_.tensor(n.inputs[0]).shape.size() == 4 && g_.tensor(n.inputs[0]).shape[2] == 1 &&
                             g_.tensor(n.inputs[0]).shape[3] == 1 && g_.tensor(n.inputs[1]).shape.size() == 4 &&
                             g_.tensor(n.inputs[1]).shape[2] * g_.tensor(n.inputs[1]).shape[3] > 1;
      const std::string& xs = n.inputs[gateFirst ? 1 : 0];
      const std::string& gs = n.inputs[gateFirst ? 0 : 1];
      const Tensor& x = g_.tensor(xs);
      const Tensor& gt = g_.tensor(gs);
      if (x.shape.size() != 4 || gt.shape != std::vector<int64_t>{x.shape[0], x.shape[1], 1, 1}) return false;
      // Both from accelerator layers: quantizing a float operand here would add a rounding the host's
      // float product does not have (EfficientNet's SiLU outputs and Sigmoid gates).
      if (!pendingFloat_.count(xs) || !pendingFloat_.count(gs)) return false;
      bool relu;
      const std::string y = outputAfterRelu(&relu);
      if (zeroPointFor(y) || zeroPointFor(xs) || zeroPointFor(gs)) return false;
      const float sy = scaleFor(y);
      // int32 multiplier and rounding from resident rows (wide=1): the largest shift whose
      // 128 * 128 * M plus the rounding stays in int32 (about 17 bits of multiplier).
      const double real = double(scaleFor(xs)) * double(scaleFor(gs)) / double(sy);
      int k = 31;
      auto fits = [&](int s) {
        const int64_t m = std::llround(std::ldexp(real, s));
        return m >= 1 && int64_t(128) * 128 * m + (int64_t(1) << (s - 1)) <= int64_t(std::numeric_limits<int32_t>::max());
      };
      while (k > 1 && !fits(k)) --k;
      if (!fits(k)) return false;
      Epilogue e;
      e.bias = false;
      e.round = true;
      e.shift = k;
      e.multiplier = int(std::llround(std::ldexp(real, k)));
      e.relu = relu;
      e.wideScales = true;
      Operator op = Operator::scale(int(x.shape[0]), int(x.shape[1]), int(x.shape[2]), int(x.shape[3]), e);
      op.name = n.name;
      op.validate();
      const std::string xq = int8Value(xs), gq = int8Value(gs);
      addAccelerator(n.name, op, {xq, gq}, defineInt8(y, sy, g_.tensor(y).shape, 0));
      return true;
    }
    if (n.opType == "Add") {
      if (n.inputs.size() != 2 || !floatActivation(n.inputs[0]) || !floatActivation(n.inputs[1])) return false;
      const Tensor& a = g_.tensor(n.inputs[0]);
      const Tensor& b = g_.tensor(n.inputs[1]);
      if (a.shape != b.shape || a.shape.size() != 4) return false;
      bool relu;
      const std::string y = outputAfterRelu(&relu);
      const std::string aq = int8Value(n.inputs[0]), bq = int8Value(n.inputs[1]);
      const double sa = g_.tensor(aq).quant.scale.at(0), sb = g_.tensor(bq).quant.scale.at(0);
      const float sy = scaleFor(y);
      const int za = int(g_.tensor(aq).quant.zeroPoint.at(0)), zb = int(g_.tensor(bq).quant.zeroPoint.at(0));
      const int zy = zeroPointFor(y);
      // int32 multipliers from resident rows (wide=1): the largest shift whose worst sum
      // 128 * (mA + mB) plus the rounding stays in int32, about 22 bits for two similar scales
      // instead of the 15 of a 16-bit immediate.
      const double ra = sa / double(sy), rb = sb / double(sy);
      // Even the smallest shift needs the ratios below 2^29: else the output's calibrated range is
      // next to nothing beside its inputs' (b = -a), and no int32 multiplier represents it.
      if (!(std::fabs(ra) < double(1 << 29)) || !(std::fabs(rb) < double(1 << 29)))
        throw Error(g_.origin, "node '" + n.name + "' (Add): its inputs' scales are " +
                                   std::to_string(std::max(std::fabs(ra), std::fabs(rb))) +
                                   " times its output's, whose calibrated range is next to nothing; no int32 "
                                   "multiplier holds that");
      auto sumFits = [&](int k) {
        const int64_t ma = std::llround(ra * std::ldexp(1.0, k)), mb = std::llround(rb * std::ldexp(1.0, k));
        return std::max(ma, mb) <= (int64_t(1) << 30) &&
               (128 + std::abs(za)) * std::llabs(ma) + (128 + std::abs(zb)) * std::llabs(mb) + (int64_t(1) << (k - 1)) +
                       (int64_t(std::abs(zy)) << k) <=
                   int64_t(std::numeric_limits<int32_t>::max());
      };
      int k = 30;
      while (k > 1 && !sumFits(k)) --k;
      Epilogue e;
      e.bias = false;
      e.multiplier = 1;
      e.shift = k;
      e.round = true;
      e.relu = relu;
      e.wideScales = true;
      e.outputZeroPoint = zy;
      Operator op = Operator::add(int(a.shape[0]), int(a.shape[1]), int(a.shape[2]), int(a.shape[3]), e);
      op.scaleA = int(std::llround(ra * std::ldexp(1.0, k)));
      op.scaleB = int(std::llround(rb * std::ldexp(1.0, k)));
      op.zeroPointA = za;
      op.zeroPointB = zb;
      op.name = n.name;
      op.validate();
      addAccelerator(n.name, op, {aq, bq}, defineInt8(y, sy, g_.tensor(y).shape, zy));
      return true;
    }
    if (n.opType == "MaxPool" || n.opType == "AveragePool" || n.opType == "GlobalAveragePool") {
      if (!floatActivation(n.inputs[0])) return false;
      const Tensor& x = g_.tensor(n.inputs[0]);
      if (x.shape.size() != 4) return false;
      int ph = 0, pw = 0, sh = 1, sw = 1, kh = int(x.shape[2]), kw = int(x.shape[3]);
      if (n.opType != "GlobalAveragePool") {
        if (!simpleWindow(n, &ph, &pw, &sh, &sw, &kh, &kw, 2)) return false;
        // Rounding the output size up: the accelerator's max pool takes ceil=1 (its last window's
        // taps past the input are padding); an average would divide differently at the edge.
        if (n.attrInt("ceil_mode", 0) && n.opType != "MaxPool") {
          const Tensor& y = g_.tensor(n.outputs.at(0));
          if (!y.hasShape || y.shape.size() != 4 || y.shape[2] != (x.shape[2] + 2 * ph - kh) / sh + 1 ||
              y.shape[3] != (x.shape[3] + 2 * pw - kw) / sw + 1)
            return false;
        }
        if (n.outputs.size() > 1 && !n.outputs[1].empty()) return false;
        if (n.opType == "MaxPool" && n.attrInt("storage_order", 0)) return false;
        // The accelerator's average divides by the whole window (padding counted as zero).
        if (n.opType == "AveragePool" && (ph || pw) && !n.attrInt("count_include_pad", 0)) return false;
      }
      const int N = int(x.shape[0]), C = int(x.shape[1]), H = int(x.shape[2]), W = int(x.shape[3]);
      auto windowOperator = [&] {
        Operator o = n.opType == "MaxPool" ? Operator::maxPool(N, C, H, W, kh, sh, ph) : Operator::avgPool(N, C, H, W, kh, sh, ph);
        setWindow(o, kh, kw, sh, sw, ph, pw);
        o.ceilMode = n.opType == "MaxPool" && n.attrInt("ceil_mode", 0) != 0;
        o.name = n.name;
        return o;
      };
      {
        // The output size must be the graph's (ceil mode's last window may not start in the padding).
        const Operator o = windowOperator();
        const Tensor& y = g_.tensor(n.outputs.at(0));
        if (!y.hasShape || y.shape.size() != 4 || y.shape[2] != o.outHeight() || y.shape[3] != o.outWidth()) return false;
        try {
          o.validate();
        } catch (const Error&) {
          return false;
        }
      }
      // A window the operator compiler cannot tile runs on the host (a global average too large for
      // an accumulator half comes in chunks of rows, but a max pool's or a padded average's window
      // must fit): probed with the smallest tiling and an average's resident scale rows, before
      // anything is added to the graph.
      if (scales_.config) {
        Operator probe = windowOperator();
        if (n.opType != "MaxPool") {
          probe.epilogue.multiplier = 256;
          probe.epilogue.shift = 16;
          probe.epilogue.round = true;
          probe.epilogue.wideScales = true;
          probe.inputZeroPoint = zeroPointFor(n.inputs[0]);
        }
        if (!tilingProblem(*scales_.config, probe, Tiling{1, 1, 1, 1}).empty()) return false;
      }
      const std::string xq = int8Value(n.inputs[0]);
      // Max pooling keeps its input's zero point (its padding, the smallest int8, never wins). An
      // average keeps it too at the input's scale (the mean of x is the mean of x - z, plus z);
      // rescaled to the output's own scale, zero points join the rounding row. A padded average's
      // padding stands for 0, the zero point z, which only the rescale form sets it to (inzp): with
      // no scale of its own, such an average rescales to its input's scale and zero point.
      const int zx = int(g_.tensor(xq).quant.zeroPoint.at(0));
      const bool paddedZeroPoint = zx && n.opType != "MaxPool" && (ph || pw);
      Operator op = windowOperator();
      int zy = zx;
      // Max pooling keeps the input's scale. An average takes the output's own scale when it has one
      // (the file's, or the calibration's), as the mean is much smaller than the values it averages.
      const float sx = g_.tensor(xq).quant.scale.at(0);
      float sy = sx;
      if (n.opType != "MaxPool") {
        std::optional<float> own = averageOutputScale(out);
        const bool keepInput = paddedZeroPoint && !(own && *own > 0);
        if (keepInput) own = sx;
        if (own && *own > 0) {
          // An int32 multiplier from a resident row (wide=1): the largest shift whose worst
          // window sum times it, plus the rounding, stays in int32.
          const double real = double(sx) / (double(*own) * kh * kw);
          const int zOut = keepInput ? zx : zeroPointFor(out);
          auto fits = [&](int shift) {
            const int64_t m = std::llround(real * std::ldexp(1.0, shift));
            return m <= (int64_t(1) << 30) && (128 + std::abs(zx)) * int64_t(kh) * kw * m + (int64_t(1) << (shift - 1)) +
                                                      (int64_t(std::abs(zOut)) << shift) <=
                                                  INT32_MAX;
          };
          int shift = 31;
          while (shift > 1 && !fits(shift)) --shift;
          const int64_t m = std::llround(real * std::ldexp(1.0, shift));
          // Too small a multiplier would cost precision: keep the input's scale then.
          if (m >= 256 && fits(shift)) {
            op.epilogue.multiplier = int(m);
            op.epilogue.shift = shift;
            op.epilogue.round = true;
            op.epilogue.wideScales = true;
            op.inputZeroPoint = zx;
            op.epilogue.outputZeroPoint = zOut;
            sy = *own;
            zy = zOut;
          }
        }
      }
      if (paddedZeroPoint && !op.inputZeroPoint)
        throw Error(g_.origin, "node '" + n.name + "': a padded average pool's input has zero point " + std::to_string(zx) +
                                   " and no multiplier of at least 256 rescales its " + std::to_string(kh) + "x" +
                                   std::to_string(kw) + " window within int32");
      op.validate();
      addAccelerator(n.name, op, {xq}, defineInt8(out, sy, g_.tensor(out).shape, zy));
      return true;
    }
    return false;
  }

  const std::vector<float>* weightScalesOf(const std::string& w) const {
    auto it = scales_.weights.find(w);
    return it == scales_.weights.end() ? nullptr : &it->second;
  }
  // A MatMul's [K,N] weights are quantized per column (axis 1), a Gemm's per its output axis.
  const std::vector<float>* denseScales(const Node& n, bool transB) const {
    auto it = scales_.weights.find(n.inputs[1]);
    if (it == scales_.weights.end()) return nullptr;
    const int axis = scales_.weightAxis.count(n.inputs[1]) ? scales_.weightAxis.at(n.inputs[1]) : -1;
    if (it->second.size() > 1 && axis != (transB ? 0 : 1)) return nullptr;
    return &it->second;
  }

  bool isConstTensor(const std::string& t) const { return !t.empty() && g_.hasTensor(t) && g_.tensor(t).isConstant; }

  // A channel Concat the accelerator could do without a copy (concatAlignment) takes one scale for
  // its inputs and output, the largest of theirs: its producers then store straight into their
  // slices of its buffer. Calibrated models only (a QDQ file's scales are the file's).
  // Concats that share inputs (a chain) end with one scale for all of them.
  void shareConcatScales() {
    if (scales_.fixed) return;
    for (bool changed = true; changed;) {
      changed = false;
      for (const Node& n : nodes()) {
        if (n.opType != "Concat" || !n.domain.empty() || !concatAlignment(n)) continue;
        float s = 0;
        for (const std::string& t : n.inputs) s = std::max(s, scaleFor(t));
        s = std::max(s, scaleFor(n.outputs.at(0)));
        for (const std::string& t : n.inputs) {
          changed = std::exchange(scales_.activation[t], s) != s || changed;
          // A max pool and a pixel-repeating Resize keep their input's scale: the layer before
          // requantizes to s (DenseNet's stem pool feeds its first block's concatenations, a
          // detector's upsampled features its neck's).
          for (std::string u = t;;) {
            const Node* pool = nullptr;
            for (const Node& p : nodes())
              if (p.domain.empty() && (p.opType == "MaxPool" || mayReplicate(p)) && p.outputs.size() == 1 &&
                  p.outputs[0] == u)
                pool = &p;
            if (!pool || consumerCount(pool->inputs.at(0)) != 1) break;
            u = pool->inputs[0];
            changed = std::exchange(scales_.activation[u], s) != s || changed;
          }
        }
        changed = std::exchange(scales_.activation[n.outputs[0]], s) != s || changed;
      }
    }
  }

  // A Concat along the channels of 4-D activations, each input a whole number of BLOCK_OUT
  // channel blocks read by no other Concat but a chain's, batch within one batch block, on a config whose input
  // and output blocks agree: the shape conditions for the accelerator to place its inputs in
  // slices of one buffer.
  bool concatAlignment(const Node& n) const {
    const hw::Config* cfg = scales_.config;
    if (!cfg || cfg->blockIn != cfg->blockOut || n.inputs.empty() || n.outputs.size() != 1) return false;
    const Tensor& y = g_.tensor(n.outputs[0]);
    if (!y.hasShape || y.shape.size() != 4 || y.dtype != DType::kFloat32) return false;
    const int64_t axis = n.attrInt("axis", 0);
    if (axis != 1 && axis != -3) return false;
    if (y.shape[0] > cfg->batch) return false;
    std::set<std::string> seen;
    for (const std::string& t : n.inputs) {
      if (t.empty() || !seen.insert(t).second || !floatActivation(t)) return false;
      const Tensor& x = g_.tensor(t);
      if (!x.hasShape || x.shape.size() != 4 || x.shape[1] % cfg->blockOut) return false;
      if (!concatReadersChain(t)) return false;
    }
    return true;
  }

  // Whether, of any two Concats that read `t`, one's inputs begin the other's (DenseNet's growing
  // concatenations): DRAM planning then makes each a prefix of one buffer, so `t` is stored once,
  // in its slice, for all of them. Other layers read `t` where it lies, in that slice.
  bool concatReadersChain(const std::string& t) const {
    std::vector<const std::vector<std::string>*> lists;
    for (const Node& n : nodes())
      for (const std::string& in : n.inputs)
        if (in == t) {
          if (n.opType == "Concat" && n.domain.empty()) lists.push_back(&n.inputs);
          break;
        }
    for (const auto* a : lists)
      for (const auto* b : lists) {
        const auto* shorter = a->size() <= b->size() ? a : b;
        const auto* longer = shorter == a ? b : a;
        if (!std::equal(shorter->begin(), shorter->end(), longer->begin())) return false;
      }
    return true;
  }

  Graph& g_;
  ActivationScales scales_;
  const std::vector<Node>* original_ = nullptr;
  std::map<std::string, Node> deferredFlatten_;
  // Outputs of host steps that only move an accelerator output's values, not run yet (deferMovement).
  std::map<std::string, size_t> deferredMove_;
  std::set<size_t> fused_;
  std::map<size_t, std::string> weightsViews_;  // Conv -> the activation its weights view
  std::map<std::string, std::string> int8Of_, floatOf_, flattenedFrom_;
  std::set<std::string> pendingFloat_;
};

}  // namespace

std::map<std::string, float> calibrate(const Graph& g, const Calibration& calibration) {
  if (calibration.samples.empty()) throw Error(calibration.origin, "the calibration set is empty");
  const bool percentile = calibration.method == CalibrationMethod::kPercentile;
  const bool entropy = calibration.method == CalibrationMethod::kEntropy;
  const bool mse = calibration.method == CalibrationMethod::kMse;
  std::map<std::string, float> maxAbs;
  // kPercentile, kEntropy and kMse: every magnitude seen, per tensor, for one selection at the end.
  std::map<std::string, std::vector<float>> seen;
  for (size_t s = 0; s < calibration.samples.size(); ++s) {
    const auto& sample = calibration.samples[s];
    for (const std::string& in : g.inputs) {
      auto it = sample.find(in);
      if (it == sample.end())
        throw Error(calibration.origin, "sample " + std::to_string(s) + " has no value for input '" + in + "'");
      const Tensor& want = g.tensor(in);
      if (it->second.shape != want.shape || it->second.dtype != want.dtype)
        throw Error(calibration.origin, "sample " + std::to_string(s) + ": input '" + in + "' is " +
                                            it->second.describe() + ", the model takes " + want.describe());
    }
    for (const auto& kv : evaluate(g, sample, host::FloatKernels::kLibrary)) {
      if (kv.second.dtype != DType::kFloat32) continue;
      float m = 0;
      for (float v : kv.second.floats) m = std::max(m, std::fabs(v));
      float& slot = maxAbs[kv.first];
      slot = std::max(slot, m);
      if (percentile || entropy || mse) {
        std::vector<float>& all = seen[kv.first];
        for (float v : kv.second.floats) all.push_back(std::fabs(v));
      }
    }
  }
  if (entropy)
    for (auto& kv : seen) maxAbs[kv.first] = entropyThreshold(kv.second, maxAbs[kv.first]);
  if (mse)
    for (auto& kv : seen) maxAbs[kv.first] = mseThreshold(kv.second, maxAbs[kv.first]);
  if (percentile)
    for (auto& kv : seen) {
      std::vector<float>& all = kv.second;
      if (all.empty()) continue;
      const size_t k = std::min(all.size() - 1, size_t(std::ceil(calibration.percentile / 100.0 * double(all.size()))) - 1);
      std::nth_element(all.begin(), all.begin() + long(k), all.end());
      // A tensor whose values are mostly zero keeps its largest magnitude (a percentile of 0 would
      // leave no range).
      if (all[k] > 0) maxAbs[kv.first] = all[k];
    }
  return maxAbs;
}

void quantizeFloat(const hw::Config& cfg, Graph& g, const Calibration& calibration) {
  ActivationScales scales;
  scales.config = &cfg;
  for (const auto& kv : calibrate(g, calibration)) scales.activation[kv.first] = kv.second / 127.0f;
  Quantizer(g, scales).run();
}

void quantizeWithScales(Graph& g, const ActivationScales& scales) { Quantizer(g, scales).run(); }

}  // namespace tessera::compiler::graph::detail
