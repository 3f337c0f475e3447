// Graph passes: constant folding, BatchNorm folding, calibration and post-training quantization.
#include "passes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "tessera/compiler/host_ops.h"
#include "tessera/support/error.h"

namespace tessera::compiler::detail {

using graph::Attribute;
using graph::DType;
using graph::Graph;
using graph::Node;
using graph::Tensor;

const char* const kTesseraDomain = "tessera";

bool isAccelerator(const Node& n) {
  return n.domain == kTesseraDomain && (n.opType == "conv2d" || n.opType == "dense" || n.opType == "add" ||
                                        n.opType == "maxpool" || n.opType == "avgpool");
}

namespace {

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

Operator acceleratorOperator(const Graph& g, const Node& n) {
  auto it = n.attrs.find("spec");
  if (it == n.attrs.end()) throw Error(g.origin, "accelerator node '" + n.name + "' has no spec");
  Operator op = Operator::parse(it->second.s, "node '" + n.name + "'");
  op.name = n.name;
  return op;
}

OperatorData acceleratorConstants(const Graph& g, const Node& n) {
  OperatorData d;
  if (n.opType != "conv2d" && n.opType != "dense") return d;
  const Tensor& w = g.tensor(n.inputs.at(1));
  d.weights.reserve(w.ints.size());
  for (int64_t v : w.ints) d.weights.push_back(static_cast<int8_t>(v));
  const Tensor& b = g.tensor(n.inputs.at(2));
  for (int64_t v : b.ints) d.bias.push_back(static_cast<int32_t>(v));
  if (n.inputs.size() > 3 && !n.inputs[3].empty()) {
    const Tensor& m = g.tensor(n.inputs[3]);
    for (int64_t v : m.ints) d.multipliers.push_back(static_cast<int32_t>(v));
  }
  if (n.inputs.size() > 5 && !n.inputs[4].empty()) {
    for (int64_t v : g.tensor(n.inputs[4]).ints) d.clipLow.push_back(static_cast<int32_t>(v));
    for (int64_t v : g.tensor(n.inputs[5]).ints) d.clipHigh.push_back(static_cast<int32_t>(v));
  }
  if (n.inputs.size() > 6 && !n.inputs[6].empty())
    for (int64_t v : g.tensor(n.inputs[6]).ints) d.multipliersLow.push_back(static_cast<int32_t>(v));
  return d;
}

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
    const bool passThrough = n.domain.empty() && (n.opType == "Identity" || n.opType == "Dropout");
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

std::map<std::string, float> calibrate(const Graph& g, const Calibration& calibration) {
  if (calibration.samples.empty()) throw Error(calibration.origin, "the calibration set is empty");
  std::map<std::string, float> maxAbs;
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
    for (const auto& kv : evaluate(g, sample)) {
      if (kv.second.dtype != DType::kFloat32) continue;
      float m = 0;
      for (float v : kv.second.floats) m = std::max(m, std::fabs(v));
      float& slot = maxAbs[kv.first];
      slot = std::max(slot, m);
    }
  }
  return maxAbs;
}

namespace {

// Round half up: an ALU immediate 2^(shift-1) after the multiply when it fits (shift <= 15), else
// folded into the bias, (acc + round(2^(total-1)/m)) * m ~ acc * m + 2^(total-1), which is off by
// at most m/2 before a shift of more than 15 bits (under a quarter step).
void foldRounding(Requantization& r, int total) {
  r.roundingBias.assign(r.multipliers.size(), 0);
  if (r.shift >= 1 && r.shift <= 15 && r.preShift == 0) {
    r.round = true;
    return;
  }
  for (size_t i = 0; i < r.multipliers.size(); ++i)
    if (r.multipliers[i] && total > 0)
      r.roundingBias[i] = static_cast<int32_t>(std::llround(std::ldexp(1.0, total - 1) / r.multipliers[i]));
}

}  // namespace

Requantization requantization(const std::vector<double>& real, int64_t worstAccumulator) {
  const int64_t int32Max = std::numeric_limits<int32_t>::max();
  double largest = 0;
  for (double x : real) largest = std::max(largest, std::fabs(x));
  // The largest total shift (at most 31) whose multipliers fit the signed 16-bit range.
  int total = 31;
  while (total > 0 && largest * std::ldexp(1.0, total) > 32767.0) --total;
  Requantization r;
  int64_t maxMul = 1;
  for (double x : real) {
    const int64_t m = std::clamp<int64_t>(std::llround(x * std::ldexp(1.0, total)), -32767, 32767);
    r.multipliers.push_back(static_cast<int32_t>(m));
    maxMul = std::max<int64_t>(maxMul, std::llabs(m));
  }
  // Fewer multiplier bits first: the largest shift whose products cannot wrap at all, when it
  // still leaves every channel's multiplier at least 128 (under 0.4% error, a quarter step at
  // most): no extra ALU instruction.
  for (int s = total; s > 0; --s) {
    std::vector<int32_t> m;
    int64_t hi = 1, lo = std::numeric_limits<int64_t>::max();
    for (double x : real) {
      const int64_t q = std::llround(x * std::ldexp(1.0, s));
      m.push_back(static_cast<int32_t>(q));
      hi = std::max<int64_t>(hi, std::llabs(q));
      if (q) lo = std::min<int64_t>(lo, std::llabs(q));
    }
    if (lo < 128) break;
    if ((worstAccumulator + (int64_t(1) << (s - 1))) * hi + hi <= int32Max) {
      r.multipliers = m;
      r.shift = s;
      foldRounding(r, s);
      return r;
    }
  }
  const int64_t half = total ? int64_t(1) << (total - 1) : 0;
  double smallest = largest;
  for (double x : real)
    if (x != 0) smallest = std::min(smallest, std::fabs(x));
  // Beyond +-129 / (smallest multiplier) every channel saturates anyway: when that bound fits an
  // ALU immediate and the products of the biggest rounding bias stay in int32, clip there instead
  // of dropping bits.
  if (smallest > 0) {
    const int64_t clip = int64_t(std::ceil(129.0 / smallest));
    if (clip <= 32767 && clip * maxMul < int32Max && worstAccumulator + half > clip) {
      r.preClip = static_cast<int32_t>(clip);
      r.shift = total;
      foldRounding(r, total);
      return r;
    }
  }
  // The fewest low accumulator bits dropped before the multiply so that no product wraps: the
  // worst accumulator (plus the folded rounding) times the largest multiplier stays in int32.
  int pre = 0;
  while (pre < total && ((worstAccumulator + half) >> pre) * maxMul + maxMul > int32Max) ++pre;
  r.preShift = pre;
  r.shift = total - pre;
  foldRounding(r, total);
  return r;
}

namespace {

int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

}  // namespace

std::optional<Requantization> clippedRequantization(const std::vector<double>& real, int64_t worstAccumulator,
                                                    bool relu) {
  return clippedRequantization(real, worstAccumulator, relu ? 0 : -128, 127);
}

std::optional<Requantization> clippedRequantization(const std::vector<double>& real, int64_t worstAccumulator,
                                                    int64_t low, int64_t high) {
  double largest = 0;
  for (double x : real) {
    if (!(x >= 0) || !std::isfinite(x)) return std::nullopt;
    largest = std::max(largest, x);
  }
  // The bounds times the multiplier stay in [-2^31, 2^31 - 1] for a total shift of up to 24 (with
  // the rounding folded into the bias; an immediate rounding needs a shift of at most 15 anyway).
  int maxTotal = 24;
  while (maxTotal > 0 && largest * std::ldexp(1.0, maxTotal) > 32767.0) --maxTotal;
  // A range shifted by an output zero point (up to 256 values on one side) needs one bit more.
  while (maxTotal > 0 && std::max(high + 1, -low) * (int64_t(1) << maxTotal) > (int64_t(1) << 31)) --maxTotal;
  if (maxTotal < 1 || worstAccumulator + (int64_t(1) << maxTotal) >= std::numeric_limits<int32_t>::max())
    return std::nullopt;
  auto build = [&](int total, bool immediateRound) {
    Requantization r;
    r.perChannelClip = true;
    r.shift = total;
    r.round = immediateRound;
    const int64_t one = int64_t(1) << total, half = one / 2;
    const int64_t rounding = immediateRound ? half : 0;
    for (double x : real) {
      const int64_t m = std::min<int64_t>(std::llround(x * double(one)), 32767);
      r.multipliers.push_back(int32_t(m));
      const int64_t folded = (!immediateRound && m > 0) ? std::llround(double(half) / double(m)) : 0;
      r.roundingBias.push_back(int32_t(folded));
      if (m == 0) {
        r.clipLow.push_back(0);
        r.clipHigh.push_back(0);
        continue;
      }
      // acc' = acc + bias + folded rounding; result = (acc' * m + rounding) >> total.
      const int64_t hi = floorDiv((high + 1) * one - 1 - rounding, m), lo = ceilDiv(low * one - rounding, m);
      // Exact only if the bounds themselves give the saturated values (not so when one
      // accumulator step is more than an output step).
      if (floorDiv(hi * m + rounding, one) != high || floorDiv(lo * m + rounding, one) != low) r.perChannelClip = false;
      r.clipHigh.push_back(int32_t(hi));
      r.clipLow.push_back(int32_t(lo));
      // Error in output steps at the largest unsaturated result, plus the folded rounding's.
      double err = x > 0 ? double(std::max(high + 1, -low)) * std::fabs(double(m) / double(one) - x) / x : 0.0;
      if (!immediateRound) err += std::fabs(double(folded * m - half)) / double(one);
      r.worstStepError = std::max(r.worstStepError, err);
    }
    return r;
  };
  // `build` clears perChannelClip when a bound would not saturate exactly.
  std::optional<Requantization> best;
  const Requantization folded = build(maxTotal, false);
  if (folded.perChannelClip && folded.worstStepError < 1.0 / 16) best = folded;
  if (!best || folded.worstStepError > 1.0 / 512) {
    // The rounding immediate (one more ALU instruction), when folding would cost more than 1/512
    // of a step or is not exact.
    const Requantization immediate = build(std::min(maxTotal, 15), true);
    if (immediate.perChannelClip && immediate.worstStepError < 1.0 / 16 &&
        (!best || immediate.worstStepError < best->worstStepError))
      best = immediate;
  }
  return best;
}

std::optional<Requantization> productBiasRequantization(const std::vector<double>& real, const std::vector<int64_t>& bias,
                                                        int64_t maxAbsAccumulator, bool relu) {
  return productBiasRequantization(real, bias, maxAbsAccumulator, relu ? 0 : -128, 127);
}

std::optional<Requantization> productBiasRequantization(const std::vector<double>& real, const std::vector<int64_t>& bias,
                                                        int64_t maxAbsAccumulator, int64_t low, int64_t high) {
  const int64_t int32Max = std::numeric_limits<int32_t>::max(), int32Min = std::numeric_limits<int32_t>::min();
  if (bias.size() != real.size() || maxAbsAccumulator < 0 || maxAbsAccumulator > int32Max) return std::nullopt;
  // y = (v * m + 2^(s-1)) >> s for v = acc + bias clipped to [lo, hi], where the bounds saturate
  // exactly and keep v * m + 2^(s-1) in [-128 * 2^s, 128 * 2^s): inside int32 for s = 24. The
  // accelerator computes clip(acc, lo - bias, hi - bias) * m + (bias * m + 2^(s-1)), which is the
  // same sum; its products may wrap, but int32 addition and multiplication wrap consistently
  // (mod 2^32), so the final sum is exact.
  const int shift = 24;
  const int64_t one = int64_t(1) << shift, half = one / 2;
  Requantization r;
  r.perChannelClip = true;
  r.biasAfterMultiply = true;
  r.shift = shift;
  r.roundingBias.assign(real.size(), 0);
  for (size_t o = 0; o < real.size(); ++o) {
    const double x = real[o];
    if (!(x >= 0) || !std::isfinite(x) || x > 1.0) return std::nullopt;
    const int64_t m = std::llround(x * double(one));
    const int64_t b = bias[o];
    r.multipliers.push_back(int32_t(m));
    r.productBias.push_back(int32_t(uint32_t(uint64_t(b * m + half))));
    if (m == 0) {  // (0 + 2^(s-1)) >> s is 0 whatever the accumulator
      r.clipLow.push_back(0);
      r.clipHigh.push_back(0);
      continue;
    }
    const int64_t hi = floorDiv((high + 1) * one - 1 - half, m), lo = ceilDiv(low * one - half, m);
    if (floorDiv(hi * m + half, one) != high || floorDiv(lo * m + half, one) != low) return std::nullopt;
    // Bounds beyond int32 are never reached by the accumulator: clamping them changes nothing.
    r.clipHigh.push_back(int32_t(std::clamp(hi - b, int32Min, int32Max)));
    r.clipLow.push_back(int32_t(std::clamp(lo - b, int32Min, int32Max)));
    // Error of the multiplier at the largest |v| that is not saturated (or that can occur).
    const double reach = std::min(double(std::max(hi, -lo)), double(maxAbsAccumulator + std::llabs(b)));
    r.worstStepError = std::max(r.worstStepError, reach * std::fabs(double(m) - x * double(one)) / double(one));
  }
  if (r.worstStepError >= 1.0 / 16) return std::nullopt;
  return r;
}

std::optional<Requantization> lowBitsRequantization(const std::vector<double>& real, int64_t worstAccumulator,
                                                    bool relu) {
  return lowBitsRequantization(real, worstAccumulator, relu ? 0 : -128, 127);
}

std::optional<Requantization> lowBitsRequantization(const std::vector<double>& real, int64_t worstAccumulator,
                                                    int64_t low, int64_t high) {
  const int64_t int32Max = std::numeric_limits<int32_t>::max(), int32Min = std::numeric_limits<int32_t>::min();
  if (worstAccumulator < 0 || worstAccumulator >= int32Max) return std::nullopt;
  for (double x : real)
    if (!(x >= 0) || !std::isfinite(x) || x > 1.0) return std::nullopt;
  const int base = 24;
  // y = floor((v * M + 2^(S-1)) / 2^S) for v = acc + bias clipped to bounds that saturate exactly,
  // S = 24 + e and M = m * 2^e + mlow. The accelerator computes v * m + ((v * mlow) >> e) =
  // floor(v * M / 2^e), adds 2^23 and shifts by 24: the same value, as long as |v| * mlow stays
  // in int32 (the bounds keep the final sum there).
  for (int e = 7; e >= 1; --e) {
    const int total = base + e;
    const int64_t one = int64_t(1) << total, half = one / 2;
    Requantization r;
    r.perChannelClip = true;
    r.lowBits = e;
    r.shift = base;
    r.round = true;
    r.roundingBias.assign(real.size(), 0);
    bool fits = true;
    for (double x : real) {
      const int64_t M = std::llround(x * double(one));
      const int64_t m = M >> e, ml = M & ((int64_t(1) << e) - 1);
      r.multipliers.push_back(int32_t(m));
      r.multipliersLow.push_back(int32_t(ml));
      if (M == 0) {  // (0 + 2^(S-1)) >> S is 0 whatever the accumulator
        r.clipLow.push_back(0);
        r.clipHigh.push_back(0);
        continue;
      }
      const int64_t hi = floorDiv((high + 1) * one - 1 - half, M), lo = ceilDiv(low * one - half, M);
      if (floorDiv(hi * M + half, one) != high || floorDiv(lo * M + half, one) != low) fits = false;
      // v never leaves [-worstAccumulator, worstAccumulator]; bounds beyond it change nothing. The
      // low product must not wrap (it is shifted); the other terms may (the sum they wrap to is
      // exact modulo 2^32 and, with these bounds, lies in int32).
      const int64_t reach = std::min(std::max(hi, -lo), worstAccumulator);
      if (reach * ml > int32Max) fits = false;
      r.clipHigh.push_back(int32_t(std::clamp(hi, int32Min, int32Max)));
      r.clipLow.push_back(int32_t(std::clamp(lo, int32Min, int32Max)));
      r.worstStepError = std::max(r.worstStepError, double(reach) * std::fabs(double(M) - x * double(one)) / double(one));
    }
    if (fits && r.worstStepError < 1.0 / 16) return r;
  }
  return std::nullopt;
}

}  // namespace tessera::compiler::detail
