// Internal to the graph compiler: the passes between import and partitioning, each Graph -> Graph.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/compiler/graph/compile.h"
#include "tessera/compiler/ir/graph.h"
#include "tessera/compiler/model/scatter.h"
#include "tessera/compiler/op/operator.h"
#include "tessera/hw/config.h"

namespace tessera::compiler::graph::detail {

// Accelerator nodes the passes create carry domain kTesseraDomain (so does the host's
// tessera.FoldInput, which isAccelerator() tells apart), op type = the operator kind
// ("conv2d", "dense", "add", "maxpool", "avgpool"), attribute "spec" (Operator::spec()) and, for
// conv2d/dense, inputs: the activation, then constant weights (int8 OIHW), bias (int32),
// multipliers, clip low, clip high, low multiplier bits (int32; "" where absent), and a fused
// residual add's other activation (inputs[7]). A "concat" node (no spec) joins int8 activations
// along the channels without instructions: its inputs are slices of its output's DRAM slot. An
// "upsample" node (spec "upsample factor=SHxSW") repeats each pixel of its int8 input SH times
// down and SW times across (nearest-neighbour Resize by whole factors), also without
// instructions: the layer that produces its input stores each output entry into all the
// positions it covers in the upsample's slot (link.cpp). "dilate" and "interleave" nodes move
// entries the same way (model/scatter.h); a dilate's slot is never shared, and runners zero the
// arena when they load a model, so the zeros between its pixels stay.
extern const char* const kTesseraDomain;

bool isAccelerator(const ir::Node& n);
// A constant tensor of that name, type and shape, no values yet; a tensor name the graph does not
// use yet (base, else base_1, base_2, ...); whether a name is a constant of the graph.
ir::Tensor constTensor(const std::string& name, ir::DType t, std::vector<int64_t> shape);
std::string uniqueName(const ir::Graph& g, const std::string& base);
bool isConst(const ir::Graph& g, const std::string& name);
// An integer attribute; a list of integers.
ir::Attribute intAttribute(int64_t v);
ir::Attribute intsAttribute(std::vector<int64_t> v);
// New tensors of the graph, under names it does not use yet (from `base`), returning the name: a
// float32 activation of that shape (no values), and a 1-D int64 constant (a Reshape's shape, a
// Pad's pads). A node of the default domain with one output.
std::string addFloatTensor(ir::Graph& g, const std::string& base, std::vector<int64_t> shape);
std::string addInt64Constant(ir::Graph& g, const std::string& base, const std::vector<int64_t>& values);
ir::Node hostNode(const std::string& op, const std::string& name, std::vector<std::string> inputs, std::string output);
bool isConcat(const ir::Node& n);
// Upsample, dilate and interleave (model/scatter.h): accelerator nodes whose producer's stores move
// each entry; with concat, the nodes without instructions of their own.
bool isScatter(const ir::Node& n);
bool hasNoCode(const ir::Node& n);
// A scatter node's movement, from its spec and its input's shape (throws naming the node).
model::Scatter scatterOf(const ir::Graph& g, const ir::Node& n);
// One step of a chain that only moves values: a node and which of its outputs the next step reads.
struct MovingStep {
  const ir::Node* node = nullptr;
  size_t output = 0;
};
// A float tensor shaped like `t` whose element k holds k + 1 (so a 0 marks a value that came from
// nowhere), or nothing if it has 2^24 elements or more (where float32 stops counting exactly).
std::optional<ir::Tensor> positionProbe(const ir::Tensor& t);
// The steps run in order on the host over `x`, their other inputs constants of `g` (whose opset
// they follow): where a chain puts each position. Nothing if a step fails, reads a non-constant
// beyond its first input, or makes 2^24 elements or more.
std::optional<ir::Tensor> runMovingSteps(const ir::Graph& g, const std::vector<MovingStep>& steps, ir::Tensor x);

// The operator and its constants of an accelerator node.
op::Operator acceleratorOperator(const ir::Graph& g, const ir::Node& n);
op::OperatorData acceleratorConstants(const ir::Graph& g, const ir::Node& n);

// Constant nodes become constants, Identity and inference Dropout disappear, nodes whose inputs
// are all constant are evaluated.
void foldConstants(ir::Graph& g);
// A float ReduceMean over H and W of an NCHW tensor (MNASNet's, EfficientNet's squeeze) becomes
// GlobalAveragePool, followed by Flatten without keepdims, which the accelerator runs.
void spatialMeansAsPools(ir::Graph& g);
// A 2-D ConvTranspose (one group, no dilation, explicit pads) of a float activation by constant
// weights becomes host Reshape and Pad steps that insert stride - 1 zeros between its input's
// pixels and pad it, then a stride-1 Conv with the kernel flipped and its channel axes swapped, so
// the accelerator runs it (and a BatchNormalization after it folds in). Calibrated float models
// only (not QDQ files).
// Or, when the cost model says it is faster (or `form` says so) and M is a whole number of
// BLOCK_OUT blocks, as one stride-1 convolution computing all stride phases as groups of output
// channels, followed by host Reshape, Transpose, Reshape and Slice steps that interleave and crop
// them (docs/graph.md); a BatchNormalization and an activation after it move before the interleave.
void transposedConvolutionsAsConvolutions(const hw::Config& cfg, ir::Graph& g, TransposedConvolutionForm form);
// Conv followed by BatchNormalization (its only consumer) becomes one Conv with folded weights.
void foldBatchNorm(ir::Graph& g);
// A BatchNormalization left over (no convolution before it: DenseNet's pre-activation after a
// Concat) on a 4-D float activation becomes a depthwise 1x1 Conv whose weight is the channel's
// factor gamma / sqrt(var + eps), so a calibrated model runs it (and a ReLU after it) on the
// accelerator. Before calibration, on float models only: a QDQ file quantizes what it runs.
void batchNormsAsDepthwise(ir::Graph& g);
// ShuffleNet's channel mixes (a channel Split or Slice, Concat, the Reshape-Transpose-Reshape
// channel shuffle) become channel maps: the activations they mix (each padded to whole BLOCK_OUT
// channel blocks by zero output channels of its convolution) are Concats of one growing buffer,
// and each convolution reading a mix takes the channels where the buffer holds them in its weights
// (a depthwise one runs over the buffer's channels, its readers taking that order). No copy is
// left; the readers do more MACs (zero weights). Calibrated float models only.
void channelMixesAsMaps(const hw::Config& cfg, ir::Graph& g);
// A MatMul (any leading dimensions) or Gemm of a float activation with more rows than a batch
// block by constant 2-D weights (a transformer's projections and MLP) becomes a 1x1 Conv over the
// rows: host Reshape and Transpose to [1, K, rows, 1], the Conv (with a following Add of a bias
// folded in), and back. A dense layer would read all its weights once per batch block of rows; the
// convolution's tiles keep them while they walk the rows. A classifier's head (after a Flatten or
// Reshape of a 4-D activation) stays dense. Calibrated float models only.
void rowProductsAsConvolutions(const hw::Config& cfg, ir::Graph& g);
// A MatMul of two float activations [..., T, K] x [..., K, N] (attention's Q·Kᵀ and A·V, batched
// over heads: G products) becomes a grouped 1x1 Conv over T rows whose weights are the second
// operand: host Reshape/Transpose/Pad steps give the first as an image [1, G*Kp, T, 1] and the
// second as an activation [1, G*Kp, Np, 1] (K and N padded to whole channel blocks), viewed as
// weights [G*Np, Kp, 1, 1] by Reshape-Transpose-Reshape (op::weightsView), and host steps crop and
// transpose the result back. Only where the config lays that activation out as the packed
// weights (op::weightsViewIsPacked); the quantizer then runs it reading the activation's slot.
// Calibrated float models only.
void activationProductsAsConvolutions(const hw::Config& cfg, ir::Graph& g);
// QDQ patterns and QOperator nodes become accelerator nodes on int8 tensors; returns whether the
// graph had any (then the model needs no calibration).
bool recognizeQuantized(const hw::Config& cfg, ir::Graph& g, std::vector<model::QuantizationNote>& notes,
                        std::string& kind);
// Float Conv/Gemm/MatMul/Add/pooling (with a following Relu fused) become accelerator nodes,
// scales calibrated on `calibration`; Quantize/Dequantize host nodes at the float edges.
void quantizeFloat(const hw::Config& cfg, ir::Graph& g, const Calibration& calibration);
// Scales of int8 symmetric activations (real = scale * q) and per-channel weight scales.
struct ActivationScales {
  std::map<std::string, float> activation;            // by float tensor name
  std::map<std::string, std::vector<float>> weights;  // by float weight tensor name
  std::map<std::string, int> weightAxis;
  bool fixed = false;  // true: tensors without a scale stay float (QDQ files); false: calibrated
  // Values the file's quantization clips at zero (uint8 with zero point 0): a ReLU in all but name,
  // which the producing accelerator node applies.
  std::set<std::string> clippedAtZero;
  // The int8 zero point of a value's accelerator form (by float tensor name; absent: 0). A uint8
  // tensor q with zero point z is stored exactly as q - 128 with zero point z - 128.
  std::map<std::string, int> zeroPoint;
  // The config the model compiles for: a requantization form whose resident vectors leave no room
  // for a tile there is not chosen (null: every form may be).
  const hw::Config* config = nullptr;
};
// quantizeFloat's rewriting with given scales (recognizeQuantized uses it for QDQ files).
void quantizeWithScales(ir::Graph& g, const ActivationScales& scales);
// A narrow first convolution gets its kernel folded into channels (input rearranged on the host).
void foldNarrowInputs(const hw::Config& cfg, ir::Graph& g);

// An accelerator add of a conv2d/dense output that nothing else reads becomes that layer's fused
// residual add (Operator::residual), run where the add ran; inputs[7] of the fused node is the
// other operand. Returns how many were fused.
int fuseResidualAdds(ir::Graph& g);

// Per-tensor max |x| (or its percentile, Calibration::method) over the calibration samples, for
// every float tensor the graph computes.
std::map<std::string, float> calibrate(const ir::Graph& g, const Calibration& calibration);

}  // namespace tessera::compiler::graph::detail
