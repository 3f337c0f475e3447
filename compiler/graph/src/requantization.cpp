// Requantization arithmetic: per-channel multipliers, shifts, rounding and clip bounds for a real multiplier, exact in int32.
#include "requantization.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace tessera::compiler::graph::detail {

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
  if (smallest > 0 && std::ceil(129.0 / smallest) <= 32767) {  // (a tiny multiplier's bound fits no integer)
    const int64_t clip = int64_t(std::ceil(129.0 / smallest));
    if (clip * maxMul < int32Max && worstAccumulator + half > clip) {
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
  return clippedRequantization(real, worstAccumulator, low, high, 1.0 / 16, false);
}

std::optional<Requantization> clippedRequantization(const std::vector<double>& real, int64_t worstAccumulator,
                                                    int64_t low, int64_t high, double maxStepError,
                                                    bool wideMultipliers) {
  double largest = 0;
  for (double x : real) {
    if (!(x >= 0) || !std::isfinite(x)) return std::nullopt;
    largest = std::max(largest, x);
  }
  // The bounds times the multiplier stay in [-2^31, 2^31 - 1] for a total shift of up to 24 (with
  // the rounding folded into the bias; an immediate rounding needs a shift of at most 15 anyway).
  // Multipliers are 16-bit, or any int32 (the bounds keep the products in range either way).
  const double multiplierMax = wideMultipliers ? double(std::numeric_limits<int32_t>::max()) : 32767.0;
  int maxTotal = wideMultipliers ? 30 : 24;
  while (maxTotal > 0 && largest * std::ldexp(1.0, maxTotal) > multiplierMax) --maxTotal;
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
      const int64_t m = std::min<int64_t>(std::llround(x * double(one)), int64_t(multiplierMax));
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
  if (folded.perChannelClip && folded.worstStepError < maxStepError) best = folded;
  if (!best || folded.worstStepError > maxStepError / 32) {
    // The rounding immediate (one more ALU instruction), when folding would cost more than 1/512
    // of a step or is not exact.
    const Requantization immediate = build(std::min(maxTotal, 15), true);
    if (immediate.perChannelClip && immediate.worstStepError < maxStepError &&
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
  // The final sum, output zero point included, lies in [-128 * 2^24, 128 * 2^24): 256 values at most.
  if (high - low > 255) return std::nullopt;
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
  // The final sum, output zero point included, lies in [-128 * 2^24, 128 * 2^24): 256 values at most.
  if (high - low > 255) return std::nullopt;
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

namespace {

// An activation's last step, p * M + 2^(S-1) >> S for p up to pMax: the 16-bit immediate M and the
// largest S in 1..15 (its rounding an immediate too) for the real factor, keeping p * M in int32.
// False when none fits or the factor rounds to nothing.
bool outputMultiplier(double real, int64_t pMax, int& multiplier, int& shift) {
  for (int s = 15; s >= 1; --s) {
    const int64_t m = std::llround(std::ldexp(real, s));
    if (m > 32767 || pMax * m + (int64_t(1) << (s - 1)) > std::numeric_limits<int32_t>::max()) continue;
    if (m < 1) return false;
    multiplier = int(m);
    shift = s;
    return true;
  }
  return false;
}

}  // namespace

std::optional<ActivationConstants> activationConstants(bool hardSwish, double inputRange, double outputScale) {
  if (!(inputRange > 0) || !std::isfinite(inputRange) || !(outputScale > 0) || !std::isfinite(outputScale))
    return std::nullopt;
  ActivationConstants c;
  // 10 bits of v over the range, but at least 256 steps for 3 (t's resolution) and at most 16383.
  c.inputScale = std::max(std::min(inputRange / 1023.0, 3.0 / 256.0), 3.0 / 16383.0);
  c.offset = int(std::lround(3.0 / c.inputScale));
  c.inputScale = 3.0 / c.offset;  // 3 and 6 exactly at the breakpoints
  c.ceiling = 2 * c.offset;
  if (!(inputRange / c.inputScale < double(int64_t(1) << 30))) return std::nullopt;  // v would not fit
  c.vMax = int64_t(std::ceil(inputRange / c.inputScale));
  const int64_t maxProduct = hardSwish ? c.vMax * c.ceiling : c.ceiling;
  if (maxProduct >= (int64_t(1) << 30)) return std::nullopt;
  int bits = 0;
  while ((int64_t(1) << bits) <= maxProduct) ++bits;
  c.preShift = hardSwish ? std::max(0, bits - 12) : 0;
  // HardSigmoid(x) = t * (3 / offset) / 6; HardSwish(x) = v * t * inputScale * (3 / offset) / 6.
  const double real = (hardSwish ? std::ldexp(c.inputScale, c.preShift) : 1.0) / (2.0 * c.offset * outputScale);
  const int64_t pMax = maxProduct >> c.preShift;
  if (!outputMultiplier(real, pMax, c.multiplier, c.shift)) return std::nullopt;
  return c;
}

namespace {

// The fit (see piecewiseConstants): o(x) for x >= 0 rises with these slopes between 0, the
// breakpoints and the saturation at 1/2.
constexpr double kSigmoidSlopes[] = {0.2347341523, 0.1501454386, 0.0707076587, 0.0175133636};
constexpr double kSigmoidBreaks[] = {1.0356964143, 1.9481960186, 3.1038996994};

// Where the fitted o(x) reaches 1/2.
double sigmoidSaturation() {
  double o = 0, at = 0;
  for (size_t i = 0; i < std::size(kSigmoidBreaks); ++i) {
    o += kSigmoidSlopes[i] * (kSigmoidBreaks[i] - at);
    at = kSigmoidBreaks[i];
  }
  return at + (0.5 - o) / kSigmoidSlopes[std::size(kSigmoidBreaks)];
}

}  // namespace

double piecewiseTarget(op::Epilogue::Activation kind, double x) {
  const double s = 1.0 / (1.0 + std::exp(-x));
  if (kind == op::Epilogue::Activation::kSilu) return x * s;
  if (kind == op::Epilogue::Activation::kTanh) return std::tanh(x);
  return s;
}

std::optional<PiecewiseConstants> piecewiseConstants(op::Epilogue::Activation kind, double inputRange,
                                                     double outputScale) {
  using Activation = op::Epilogue::Activation;
  if (kind != Activation::kSigmoid && kind != Activation::kSilu && kind != Activation::kTanh) return std::nullopt;
  if (!(inputRange > 0) || !std::isfinite(inputRange) || !(outputScale > 0) || !std::isfinite(outputScale))
    return std::nullopt;
  // tanh(x) = 2 o(2x): the same slopes' ratios, the breakpoints at half the x.
  const double squeeze = kind == Activation::kTanh ? 2.0 : 1.0;
  const double saturation = sigmoidSaturation() / squeeze;
  const double range = kind == Activation::kSilu ? inputRange : std::min(inputRange, saturation);
  constexpr int kStages = op::Epilogue::kActivationStages;
  PiecewiseConstants c;
  c.slopeShift = 7;
  // Each stage y = kappa * y + v makes the slope inside its breakpoint kappa times the slope there
  // plus 1: the ratios of the fitted slopes give the kappas, in units of 2^-slopeShift.
  double kappa[kStages];
  {
    // The final y's slope between breakpoints i-1 and i, over the outermost one's, is
    // ratio[i] = kappa[k-1] * (... (kappa[i+1] * (kappa[i] + 1) + 1) ...) + 1: peel it from outside.
    for (int i = kStages - 1; i >= 0; --i) {
      double r = kSigmoidSlopes[i] / kSigmoidSlopes[kStages];
      for (int j = kStages - 1; j > i; --j) r = (r - 1.0) / kappa[j];
      kappa[i] = r - 1.0;
    }
  }
  for (int i = 0; i < kStages; ++i) {
    c.slopes[size_t(i)] = int(std::lround(std::ldexp(kappa[i], c.slopeShift)));
    if (c.slopes[size_t(i)] < 0 || c.slopes[size_t(i)] > 32767) return std::nullopt;
  }
  // v's scale: 10 bits over the range, coarser when the saturation bound would pass 2^15 - 1.
  c.inputScale = range / 1023.0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const double perStep = squeeze * c.inputScale;  // x per v step, in the fit's units
    double bound = std::round(kSigmoidBreaks[0] / perStep);
    c.bounds[0] = int(std::min(bound, 1e9));
    for (int i = 0; i < kStages; ++i) {
      const double at = i + 1 < kStages ? kSigmoidBreaks[i + 1] : sigmoidSaturation();
      bound = std::round(std::ldexp(double(c.slopes[size_t(i)]), -c.slopeShift) * bound + at / perStep);
      c.bounds[size_t(i) + 1] = int(std::min(bound, 1e9));
    }
    if (bound <= 32767) break;
    c.inputScale *= bound / 32000.0;
  }
  for (int b : c.bounds)
    if (b < 0 || b > 32767) return std::nullopt;
  const int64_t top = c.bounds[kStages];
  c.vMax = std::max<int64_t>(1, int64_t(std::ceil(range / c.inputScale)));
  if (kind != Activation::kSilu) c.vMax = std::min<int64_t>(c.vMax, int64_t(std::ceil(saturation / c.inputScale)));
  c.offset = kind == Activation::kTanh ? 0 : int(top);
  // The gate g = y + offset: sigmoid(x) ~ g / (2 top), tanh(x) ~ y / top.
  const double gateUnit = kind == Activation::kTanh ? 1.0 / double(top) : 0.5 / double(top);
  // p = g >> preShift (silu: (v * g) >> preShift) at most 2^12, so that the 16-bit multiplier
  // keeps about 10 bits whatever the gate's resolution.
  const int64_t maxProduct = kind == Activation::kSilu ? c.vMax * 2 * top : kind == Activation::kTanh ? top : 2 * top;
  if (maxProduct >= (int64_t(1) << 31)) return std::nullopt;
  int bits = 0;
  while ((int64_t(1) << bits) <= maxProduct) ++bits;
  c.preShift = std::max(0, bits - 12);
  const int64_t pMax = (maxProduct >> c.preShift) + 1;
  const double real =
      std::ldexp((kind == Activation::kSilu ? c.inputScale : 1.0) * gateUnit, c.preShift) / outputScale;
  if (!outputMultiplier(real, pMax, c.multiplier, c.shift)) return std::nullopt;
  return c;
}

std::optional<LeakyConstants> leakyConstants(double alpha, int64_t worstAccumulator) {
  if (!(alpha > 0 && alpha < 1) || worstAccumulator < 0) return std::nullopt;
  int bits = 0;
  while (bits < 62 && std::nearbyint(alpha * std::ldexp(1.0, bits + 1)) <= 32767) ++bits;
  LeakyConstants c;
  c.multiplier = int(std::nearbyint(alpha * std::ldexp(1.0, bits)));
  while ((worstAccumulator >> c.preShift) * int64_t(c.multiplier) >= (int64_t(1) << 31) && c.preShift < bits) ++c.preShift;
  c.shift = bits - c.preShift;
  if (c.shift > 31 || c.preShift > 31 || (worstAccumulator >> c.preShift) * int64_t(c.multiplier) >= (int64_t(1) << 31))
    return std::nullopt;
  return c;
}

std::optional<LeakyConstants> slopeConstants(const std::vector<double>& slopes, int64_t worstAccumulator) {
  double largest = 0;
  for (double a : slopes) {
    if (!(a >= -1 && a <= 1)) return std::nullopt;
    largest = std::max(largest, std::fabs(a));
  }
  if (slopes.empty() || worstAccumulator < 0) return std::nullopt;
  int bits = 0;
  while (bits < 62 && std::nearbyint(largest * std::ldexp(1.0, bits + 1)) <= 32767) ++bits;
  LeakyConstants c;
  int64_t biggest = 1;
  for (double a : slopes) {
    c.multipliers.push_back(int32_t(std::nearbyint(a * std::ldexp(1.0, bits))));
    biggest = std::max<int64_t>(biggest, std::llabs(int64_t(c.multipliers.back())));
  }
  while ((worstAccumulator >> c.preShift) * biggest >= (int64_t(1) << 31) && c.preShift < bits) ++c.preShift;
  c.shift = bits - c.preShift;
  if (c.shift > 31 || c.preShift > 31 || (worstAccumulator >> c.preShift) * biggest >= (int64_t(1) << 31))
    return std::nullopt;
  return c;
}

}  // namespace tessera::compiler::graph::detail
