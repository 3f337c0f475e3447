// Internal to the graph compiler: requantization arithmetic, real multipliers as the accelerator's integer epilogue forms.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tessera/compiler/op/operator.h"

namespace tessera::compiler::graph::detail {

// The integer requantization of real multipliers m[o] (shared shift, per-channel 16-bit
// multipliers, rounding folded into the bias); see docs/graph.md.
struct Requantization {
  std::vector<int32_t> multipliers;
  int preShift = 0;  // before the multiply, so no product wraps
  int preClip = 0;   // or a clip before it (an immediate), when that saturates every channel
  int shift = 0;     // after it
  bool round = false;                 // rounding by the epilogue's immediate (shift <= 15)
  std::vector<int32_t> roundingBias;  // or folded into each channel's bias
  // Or per-channel bounds on acc + bias (rounding included) before the multiply: they saturate
  // exactly where the result would, and keep every product inside int32 (Epilogue::perChannelClip).
  bool perChannelClip = false;
  std::vector<int32_t> clipLow, clipHigh;
  double worstStepError = 0;  // bound on |result - acc * real| beyond rounding, in output steps
  // Or the bias after the multiply (Epilogue::biasAfterMultiply): productBias[o] = bias[o] * m[o] +
  // 2^(shift-1) replaces the bias, the clip bounds apply to the accumulator alone.
  bool biasAfterMultiply = false;
  std::vector<int32_t> productBias;
  // Or multipliers with lowBits more bits (Epilogue::lowBits): the shift after the combined sum
  // stays 24, the multiplier is multipliers[o] * 2^lowBits + multipliersLow[o].
  int lowBits = 0;
  std::vector<int32_t> multipliersLow;
};
// `worstAccumulator` bounds |acc + bias| over every input (127 * sum |w| + |bias|).
Requantization requantization(const std::vector<double>& realMultipliers, int64_t worstAccumulator);
// The per-channel-clip form (docs/graph.md), or nullopt when it does not apply: a negative
// multiplier, an accumulator bound too large, a multiplier so large that the bounds cannot
// saturate exactly, or so small that its 24-bit shift leaves more than 1/16 step of error.
// `relu` makes the low bound map to 0.
std::optional<Requantization> clippedRequantization(const std::vector<double>& realMultipliers,
                                                    int64_t worstAccumulator, bool relu);
// The per-channel-clip form with the bias after the multiply (docs/graph.md): exact rounding at a
// 24-bit shift and multipliers of up to 24 bits, for the same five ALU instructions. `bias` is in
// accumulator units; `maxAbsAccumulator` bounds |acc| without it. nullopt when a multiplier is
// negative, not finite or above 1 (an accumulator step larger than an output step), when the
// accumulator could leave int32, or when a multiplier so small leaves more than 1/16 step of error.
std::optional<Requantization> productBiasRequantization(const std::vector<double>& realMultipliers,
                                                        const std::vector<int64_t>& bias, int64_t maxAbsAccumulator,
                                                        bool relu);
// The per-channel-clip form with 1 to 7 low multiplier bits (Epilogue::lowBits; docs/graph.md):
// exact rounding at a shift of 24 + lowBits, the most bits whose products stay in int32.
// `worstAccumulator` bounds |acc + bias|. nullopt when a multiplier is negative, not finite or
// above 1, when acc + bias could leave int32, or when no low bits keep the bounds exact.
std::optional<Requantization> lowBitsRequantization(const std::vector<double>& realMultipliers,
                                                    int64_t worstAccumulator, bool relu);
// The same three forms with the result's range given: [low, high] before an output zero point is
// added (the relu forms above are [0, 127] and [-128, 127]).
std::optional<Requantization> lowBitsRequantization(const std::vector<double>& realMultipliers,
                                                    int64_t worstAccumulator, int64_t low, int64_t high);
std::optional<Requantization> productBiasRequantization(const std::vector<double>& realMultipliers,
                                                        const std::vector<int64_t>& bias, int64_t maxAbsAccumulator,
                                                        int64_t low, int64_t high);
std::optional<Requantization> clippedRequantization(const std::vector<double>& realMultipliers,
                                                    int64_t worstAccumulator, int64_t low, int64_t high);
// The per-channel-clip form for a range wider than int8 (an activation function's input): error up
// to `maxStepError` steps of the range, multipliers any int32 when `wideMultipliers`.
std::optional<Requantization> clippedRequantization(const std::vector<double>& realMultipliers,
                                                    int64_t worstAccumulator, int64_t low, int64_t high,
                                                    double maxStepError, bool wideMultipliers);

// An activation function fused after a layer's requantization (op::Epilogue::activation): the
// layer requantizes to v = x / inputScale, in [-vMax, vMax], then the ALU computes
// t = clip(v + offset, 0, ceiling) and the function from it (docs/graph.md). `inputRange` is the
// calibrated max |x| before the function, `outputScale` the int8 output's scale. The offset stands
// for 3 (at least 256 steps, so t keeps 9 bits; at most 16383, an immediate) and the ceiling for 6;
// the product v * t is shifted to at most 2^12 so the 16-bit multiplier keeps about 10 bits. v has
// 10 bits over the range (8 times an int8 step's resolution), so that the requantization's 31-bit
// products leave the multipliers precise to 1/16 of the int8 step.
struct ActivationConstants {
  double inputScale = 0;
  int64_t vMax = 0;
  int offset = 0, ceiling = 0, preShift = 0, multiplier = 0, shift = 1;
};
// nullopt when the constants do not fit the immediates (a range too large or too small).
std::optional<ActivationConstants> activationConstants(bool hardSwish, double inputRange, double outputScale);

// Sigmoid, SiLU or tanh fused after a layer's requantization (op::Epilogue's piecewise kinds):
// the layer requantizes to v = x / inputScale in [-vMax, vMax]; the nested clamps approximate the
// sigmoid's odd part o(x) = sigmoid(x) - 1/2 by a continuous piecewise-linear function with four
// slopes, fitted for the least worst-case error over x >= 0 (0.0051; tanh(x) = 2 o(2x) uses the
// same fit). `inputRange` is the calibrated max |x| before the function, `outputScale` the int8
// output's. The sigmoid and tanh need v only up to where the approximation saturates. v has 10
// bits over its range, fewer when the last bound would leave a 16-bit immediate.
struct PiecewiseConstants {
  double inputScale = 0;
  int64_t vMax = 0;
  std::array<int, op::Epilogue::kActivationStages + 1> bounds{};
  std::array<int, op::Epilogue::kActivationStages> slopes{};
  int slopeShift = 0, offset = 0, preShift = 0, multiplier = 0, shift = 1;
};
// nullopt for a kind that is not piecewise or constants that do not fit the immediates.
std::optional<PiecewiseConstants> piecewiseConstants(op::Epilogue::Activation kind, double inputRange,
                                                     double outputScale);
// The function piecewiseConstants approximates, in float (for the tests and the docs' error figures).
double piecewiseTarget(op::Epilogue::Activation kind, double x);

// A LeakyRelu slope in (0, 1) on sums of magnitude up to `worstAccumulator` (Epilogue::leaky):
// t = ((acc >> preShift) * multiplier) >> shift with the multiplier as large as a 16-bit immediate
// holds and the fewest low bits dropped that keep the product in int32. t then errs from
// alpha * acc by at most alpha * 2^preShift + 1 (plus the slope's rounding, below 2^-15 of it).
// nullopt when no split fits the instruction's shift fields.
struct LeakyConstants {
  int preShift = 0, multiplier = 0, shift = 0;
  std::vector<int32_t> multipliers;  // slopeConstants: one per channel (multiplier unused)
};
std::optional<LeakyConstants> leakyConstants(double alpha, int64_t worstAccumulator);
// PRelu's slopes, one per channel, each in [-1, 1] (max(acc, t) is PRelu for those): multipliers
// round(slope * 2^(P+S)) with P + S as large as keeps the largest in 15 bits, P as above.
std::optional<LeakyConstants> slopeConstants(const std::vector<double>& slopes, int64_t worstAccumulator);

}  // namespace tessera::compiler::graph::detail
