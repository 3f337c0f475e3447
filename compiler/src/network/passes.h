// Internal to the graph compiler: the passes between import and lowering, each Graph -> Graph.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/compiler/graph.h"
#include "tessera/compiler/network.h"
#include "tessera/compiler/operator.h"
#include "tessera/hw/config.h"

namespace tessera::compiler::detail {

// Accelerator nodes the passes create carry domain kTesseraDomain (so does the host's
// tessera.FoldInput, which isAccelerator() tells apart), op type = the operator kind
// ("conv2d", "dense", "add", "maxpool", "avgpool"), attribute "spec" (Operator::spec()) and, for
// conv2d/dense, inputs: the activation, then constant weights (int8 OIHW), bias (int32),
// multipliers, clip low, clip high, low multiplier bits (int32; "" where absent), and a fused
// residual add's other activation (inputs[7]).
extern const char* const kTesseraDomain;

bool isAccelerator(const graph::Node& n);
// The operator and its constants of an accelerator node.
Operator acceleratorOperator(const graph::Graph& g, const graph::Node& n);
OperatorData acceleratorConstants(const graph::Graph& g, const graph::Node& n);

// Constant nodes become constants, Identity and inference Dropout disappear, nodes whose inputs
// are all constant are evaluated.
void foldConstants(graph::Graph& g);
// Conv followed by BatchNormalization (its only consumer) becomes one Conv with folded weights.
void foldBatchNorm(graph::Graph& g);
// QDQ patterns and QOperator nodes become accelerator nodes on int8 tensors; returns whether the
// graph had any (then the model needs no calibration).
bool recognizeQuantized(const hw::Config& cfg, graph::Graph& g, std::vector<QuantizationNote>& notes,
                        std::string& kind);
// Float Conv/Gemm/MatMul/Add/pooling (with a following Relu fused) become accelerator nodes,
// scales calibrated on `calibration`; Quantize/Dequantize host nodes at the float edges.
void quantizeFloat(const hw::Config& cfg, graph::Graph& g, const Calibration& calibration);
// Scales of int8 symmetric activations (real = scale * q) and per-channel weight scales.
struct ActivationScales {
  std::map<std::string, float> activation;            // by float tensor name
  std::map<std::string, std::vector<float>> weights;  // by float weight tensor name
  std::map<std::string, int> weightAxis;
  bool fixed = false;  // true: tensors without a scale stay float (QDQ files); false: calibrated
  // Values the file's quantization clips at zero (uint8 with zero point 0): a ReLU in all but name,
  // which the producing accelerator node applies.
  std::set<std::string> clippedAtZero;
  // The config the model compiles for: a requantization form whose resident vectors leave no room
  // for a tile there is not chosen (null: every form may be).
  const hw::Config* config = nullptr;
};
// quantizeFloat's rewriting with given scales (recognizeQuantized uses it for QDQ files).
void quantizeWithScales(graph::Graph& g, const ActivationScales& scales);
// A narrow first convolution gets its kernel folded into channels (input rearranged on the host).
void foldNarrowInputs(const hw::Config& cfg, graph::Graph& g);

// An accelerator add of a conv2d/dense output that nothing else reads becomes that layer's fused
// residual add (Operator::residual), run where the add ran; inputs[7] of the fused node is the
// other operand. Returns how many were fused.
int fuseResidualAdds(graph::Graph& g);

// Per-tensor max |x| over the calibration samples, for every float tensor the graph computes.
std::map<std::string, float> calibrate(const graph::Graph& g, const Calibration& calibration);

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

}  // namespace tessera::compiler::detail
