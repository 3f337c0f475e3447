// Operator descriptions the operator compiler accepts (quantized conv2d, dense, elementwise add, pooling), their data and host references.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tessera::compiler::op {

// What happens to each int32 accumulator before it is stored as int8, in this order (all on the
// accelerator's vector ALU, all wrapping int32 arithmetic as the ALU computes it):
//   acc += bias[o]  (if bias and not biasAfterMultiply);  acc >>= preShift (if != 0);
//   acc = max(min(acc, preClip), -preClip) (if preClip != 0);
//   acc = max(min(acc, clipHigh[o]), clipLow[o]) (if perChannelClip);
//   acc *= multipliers[o] (if perChannelMultiplier) or multiplier (if != 1);
//   acc += bias[o] (if biasAfterMultiply);
//   acc += 1 << (shift - 1) (if round);  acc >>= shift (arithmetic);
//   unless perChannelClip: acc = min(acc, 127); acc = max(acc, relu ? 0 : -128).
// The stored int8 is acc's low byte.
// preShift keeps a large accumulator's product inside int32 (requantization of whole networks).
struct Epilogue {
  bool bias = true;
  int multiplier = 1;  // ALU MUL immediate: a signed 16-bit value
  int shift = 8;       // 0..31
  bool round = false;  // round to nearest (half up) instead of toward minus infinity; needs shift in 1..15
  bool relu = false;
  // conv2d and dense: one multiplier per output channel (OperatorData::multipliers, a signed 16-bit
  // value, or any int32 with perChannelClip), loaded into the accumulator like the bias and applied
  // by a vector ALU MUL.
  bool perChannelMultiplier = false;
  int preShift = 0;  // 0..31, arithmetic shift before the multiply (conv2d, dense)
  int preClip = 0;   // 0 or 1..32767 (an ALU immediate): clip before the multiply (conv2d, dense)
  // conv2d and dense: per-channel int32 bounds (OperatorData::clipLow/clipHigh, resident like the
  // bias) clip before the multiply; the compiler picks them so that the result is already in
  // int8 range (ReLU included), so the two final clips are left out.
  bool perChannelClip = false;
  // conv2d and dense: the bias is added after the multiply (spec `bias=after`), so it can carry
  // the rounding constant 2^(shift-1) exactly whatever the shift, and the real bias times the
  // multiplier; wrapping int32 sums make the intermediate product's overflow harmless.
  bool biasAfterMultiply = false;
  // add and avgpool's rescale (spec `wide=1`): the multipliers (mul_a, mul_b; mul) are any int32
  // and the shift goes up to 31 with rounding. They and the rounding constant are resident
  // accumulator rows read by vector ALU instructions instead of signed 16-bit immediates, which
  // would leave only about 15 bits of multiplier.
  bool wideScales = false;
  // conv2d and dense (spec `lowbits=E`, 1..7; with mul=channel, clip=channel and the bias first):
  // each channel's multiplier gets E more low bits (OperatorData::multipliersLow, 0..2^E-1), so
  // the requantization shift can reach 24 + E. After the bias and the clip,
  //   acc = acc * m[o] + ((acc * mlow[o]) >> E) + 2^(shift-1) (if round), then acc >>= shift,
  // which is exactly floor((acc * (m[o] * 2^E + mlow[o]) + 2^(shift-1+E)) / 2^(shift+E)). The low
  // product runs on a copy of the clipped accumulator; the rounding constant is a resident row.
  int lowBits = 0;
  // The output's zero point (spec `outzp=Z`, in [-128, 127]): the stored value is the requantized
  // one plus Z, so an asymmetric tensor (uint8 q stored as q - 128) keeps its whole grid. Where the
  // rounding is a resident row (lowbits, add's and avgpool's wide form) Z * 2^shift joins it
  // before the shift; with the bias after the multiply Z * 2^shift joins the bias; otherwise an
  // immediate ADD of Z follows the shift. ReLU then means "not below Z": the final clip is
  // [relu ? Z : -128, 127] (per-channel bounds already include it). A fused residual add takes the
  // value with Z as its first operand's zero point.
  int outputZeroPoint = 0;
  // conv2d and dense (spec `act=hardsigmoid|hardswish act_k=K act_max=C act_preshift=P act_mul=M
  // act_shift=S`, with clip=channel, no relu, no residual, no outzp): an activation function after
  // the requantization, whose per-channel bounds then keep the value v in a range wider than int8
  // (more bits of the pre-activation than its int8 would keep). With t = min(max(v + K, 0), C),
  //   hardsigmoid: p = t;  hardswish: p = (v * t) >> P;
  //   out = clip((p * M + 2^(S-1)) >> S, -128, 127),
  // all wrapping int32 as the vector ALU computes it. K stands for 3 and C for 6 in v's units, so t
  // is ReLU6(x + 3): HardSigmoid(x) = t / 6 and HardSwish(x) = x * t / 6 (ONNX's, alpha 1/6, beta
  // 1/2). hardswish needs a scratch region in the tile's accumulator half for t.
  //
  // sigmoid, silu and tanh (spec `act=sigmoid|silu|tanh act_bounds=A1,A2,A3,A4 act_slopes=a1,a2,a3
  // act_slope_shift=k act_k=H act_preshift=P act_mul=M act_shift=S`) approximate the function by
  // a continuous odd piecewise-linear y(v) with four slopes, built by nested clamps:
  //   y = clip(v, -A1, A1);  then for i = 1..3:  y = clip(((y * a_i) >> k) + v, -A_{i+1}, A_{i+1}),
  // so y's slope is 1 outermost and grows by the factor a_i / 2^k + 1 at each breakpoint inward;
  // it saturates at +-A4. With g = y + H (H = A4 for the sigmoid, 0 for tanh),
  //   sigmoid, tanh: p = g >> P;  silu: p = (v * g) >> P;  then out as above.
  // The sigmoid is g / 2H, silu x times that, tanh y / A4. All need the scratch region (v is kept
  // for the "+ v" of each stage); docs/graph.md gives the constants and the measured error.
  enum class Activation { kNone, kHardSigmoid, kHardSwish, kSigmoid, kSilu, kTanh };
  static constexpr int kActivationStages = 3;
  // conv2d and dense (spec `leaky=1 leaky_preshift=P leaky_mul=M leaky_shift=S`, with the bias first
  // and no relu): LeakyRelu on the sum after the bias, before the requantization,
  //   t = ((acc >> P) * M) >> S;  acc = max(acc, t),
  // a slope of M / 2^(P+S) below 1 on the negative side (M a 16-bit immediate in [0, 32767]). The
  // requantization then scales it like any sum (LeakyRelu commutes with a positive factor). t is
  // computed in the scratch region; P keeps (acc >> P) * M within int32. With `leaky_mul=channel`
  // (PRelu) each output channel has its own M (OperatorData::leakyMultipliers, resident like the
  // bias, any int32 with |M| <= 2^(P+S): a slope in [-1, 1], for which max still gives PRelu).
  Activation activation = Activation::kNone;
  int activationOffset = 0, activationCeiling = 0, activationPreShift = 0, activationMultiplier = 1,
      activationShift = 1;
  std::array<int, kActivationStages + 1> activationBounds{};  // A1..A4 (sigmoid, silu, tanh)
  std::array<int, kActivationStages> activationSlopes{};      // a1..a3
  int activationSlopeShift = 0;                               // k
  // The piecewise-linear kinds (sigmoid, silu, tanh), and those that multiply v by the gate.
  bool piecewiseActivation() const {
    return activation == Activation::kSigmoid || activation == Activation::kSilu || activation == Activation::kTanh;
  }
  bool activationTimesInput() const { return activation == Activation::kHardSwish || activation == Activation::kSilu; }
  bool leaky = false, leakyPerChannel = false;
  int leakyPreShift = 0, leakyMultiplier = 0, leakyShift = 0;
};

enum class OpKind { kConv2d, kDense, kAdd, kMaxPool, kAvgPool, kScale };

// conv2d: out[n][o][y][x] = epilogue(sum_{c,ky,kx} in[n][g*C/G+c][y*sh+ky*dh-ph][x*sw+kx*dw-pw] * w[o][c][ky][kx]),
// zero outside the input, with G groups (ONNX's `group`), g = o / (O/G) the output channel's group and c
// over its C/G input channels (weights [O][C/G][KH][KW]; depthwise is G = C). dense is the 1x1 case on a 1x1 image: out[n][o] = epilogue(sum_c in[n][c] * w[o][c]).
// add: out = epilogue(a * scaleA + b * scaleB) elementwise over two tensors of one shape (no bias, multiplier 1).
// maxpool: out[n][c][y][x] = max over the window of in[n][c][y*sh+ky-ph][x*sw+kx-pw]; padding never wins.
// avgpool: S = sum over the window, padding counting as zero and in the divisor N = kh*kw; out is
//   (S + N/2) >> log2(N) when N is a power of two, else (S * round(2^15 / N) + 2^14) >> 15; with
//   mul=M shift=K round=1 (a rescale to another output scale) (S * M + 2^(K-1)) >> K; clipped to int8.
//   With wide=1 (add, avgpool's rescale) the same arithmetic takes int32 multipliers and shifts up to 31.
// scale: out[n][c][y][x] = clip((a[n][c][y][x] * b[n][c] * mul + 2^(shift-1)) >> shift), b one value per
//   channel (input2 [N][C], a squeeze-excitation gate): mul a signed 16-bit immediate, or with wide=1
//   any int32 in a resident row (|a * b * mul| must stay in int32); round=1 and shift >= 1.
// Tensors are logical NCHW / OIHW here; the compiler pads batch and channels to the config's blocks.
// add and the poolings run on the vector ALU and keep the channel count (outChannels == inChannels).
struct Operator {
  OpKind kind = OpKind::kConv2d;
  std::string name;  // free label, e.g. "C2"
  int batch = 1, inChannels = 1, height = 1, width = 1, outChannels = 1;
  int kernelH = 1, kernelW = 1, strideH = 1, strideW = 1, padH = 0, padW = 0;
  // conv2d (spec `groups=G`): G must divide cin and cout. The GEMM core reduces each output-channel
  // block over only the input-channel blocks its groups read (dram_layout.h's WeightLayout).
  int groups = 1;
  // conv2d (spec `dilation=D`, or `dh`, `dw`): the taps lie D apart, spanning (K - 1) * D + 1 input
  // rows or columns (ONNX's `dilations`). The micro-ops address the taps D apart; weights keep K x K.
  int dilationH = 1, dilationW = 1;
  int extentH() const { return (kernelH - 1) * dilationH + 1; }  // input rows one output reads
  int extentW() const { return (kernelW - 1) * dilationW + 1; }
  // maxpool (spec `ceil=1`): the output size rounds up, (H + 2*ph - kh + sh - 1) / sh + 1, as ONNX's
  // ceil_mode: the last window may hang over the input's end (its taps there are padding, which
  // never wins). It must still start inside the input or its left padding.
  bool ceilMode = false;
  Epilogue epilogue;
  int scaleA = 1, scaleB = 1;  // add: the operands' multipliers (signed 16-bit immediates, or int32 with wide)
  // conv2d and dense: a residual add fused into the epilogue (spec `residual=1` with `res_mul_a`,
  // `res_mul_b`, `res_shift`, `res_round`, `res_relu`, `res_wide`). The epilogue's int8 result `a`
  // stays in the accumulator; with `b`, a second int8 tensor of the output's shape
  // (OperatorData::input2), the output is exactly what `add` computes from the two:
  // residualEpilogue(a * residualA + b * residualB). Saves storing `a` and loading it back.
  bool residual = false;
  int residualA = 1, residualB = 1;
  // conv2d and dense (spec `inzp=Z`, in [-128, 127], with the bias first): the input's zero point.
  // Each input value x stands for x - Z and padding for 0, so the accumulator is
  // sum over the taps inside the input of (x - Z) * w. The compiler folds -Z * sum(w) into the bias
  // and adds Z times the weights of the taps outside the input at the borders (resident rows, one
  // vector ALU ADD per border run), so an asymmetric (e.g. uint8 with zero point 0) tensor stays
  // exact: int8 x = q - 128 with Z = z - 128.
  int inputZeroPoint = 0;
  // conv2d and dense (spec `wgt=input`, without inzp): the weights are an operand of each run, read
  // from a DRAM buffer in the packed layout (dram_layout.h's WeightLayout) that the caller fills,
  // rather than constants compiled into the program: a product whose second operand another layer
  // computes (attention's K and V).
  bool runtimeWeights = false;
  // add (spec `azp`, `bzp`; wide=1 round=1): the operands' zero points. The sum is
  // (a - azp) * mul_a + (b - bzp) * mul_b; the constant part joins the resident rounding row.
  int zeroPointA = 0, zeroPointB = 0;
  Epilogue residualEpilogue;  // add's: no bias and no multiplier; shift, round, relu, wideScales, outputZeroPoint
  // The residual operand's zero point (spec `res_bzp`, with res_wide=1 res_round=1): the sum is
  // (a - outzp) * residualA + (b - res_bzp) * residualB, a being the epilogue's value.
  int residualZeroPointB = 0;

  // The add the residual form computes after the epilogue (its shape is the output's).
  Operator residualAdd() const;

  static Operator conv2d(int batch, int inChannels, int height, int width, int outChannels, int kernel, int stride,
                         int pad, const Epilogue& e = Epilogue());
  static Operator dense(int batch, int inFeatures, int outFeatures, const Epilogue& e = Epilogue());
  // `e.bias` and `e.multiplier` must be off; scaleA/scaleB are set on the result.
  static Operator add(int batch, int channels, int height, int width, const Epilogue& e);
  static Operator maxPool(int batch, int channels, int height, int width, int kernel, int stride, int pad);
  static Operator avgPool(int batch, int channels, int height, int width, int kernel, int stride, int pad);
  // `e.multiplier`, `e.shift` (round=1) and optionally `e.wideScales` and `e.relu`; no bias.
  static Operator scale(int batch, int channels, int height, int width, const Epilogue& e);

  // add, maxpool and avgpool: computed on the vector ALU, operands in the accumulator's 8-bit layout.
  bool onVectorAlu() const {
    return kind == OpKind::kAdd || kind == OpKind::kMaxPool || kind == OpKind::kAvgPool || kind == OpKind::kScale;
  }

  int groupInChannels() const { return groups > 0 ? inChannels / groups : 0; }  // each output channel's inputs (C/G)
  int outHeight() const;
  int outWidth() const;
  uint64_t macs() const;  // of the logical (unpadded) operator; 0 for the vector-ALU operators
  // Throws tessera::Error naming the field when the description is meaningless (non-positive sizes,
  // kernel larger than the padded input, shift or multiplier out of range).
  void validate() const;
  // One line, e.g. "conv2d n=1 cin=64 h=56 w=56 cout=64 kernel=3x3 stride=1x1 pad=1x1 bias shift=8 clip=[-128,127]".
  std::string describe() const;
  // The canonical "key=value" spec that parse() reads back (also the CLI's syntax).
  std::string spec() const;
  // Parses "conv2d cin=64 h=56 w=56 cout=64 kernel=3 stride=1 pad=1 shift=8 bias=1 relu=0 ..."; throws
  // tessera::Error naming the bad token (`origin` says where the text came from).
  static Operator parse(const std::string& text, const std::string& origin);
};

// The operands of one operator, logical layouts: input [N][C][H][W], weights [O][C/G][KH][KW], bias [O];
// add's second operand `input2` has the input's shape, a residual conv2d/dense's the output's,
// scale's is [N][C].
struct OperatorData {
  std::vector<int8_t> input, input2, weights;
  std::vector<int32_t> bias;
  std::vector<int32_t> multipliers;  // [O], with Epilogue::perChannelMultiplier
  std::vector<int32_t> multipliersLow;  // [O], with Epilogue::lowBits: each in [0, 2^lowBits)
  std::vector<int32_t> leakyMultipliers;  // [O], with Epilogue::leakyPerChannel: |each| <= 2^(P+S)
  std::vector<int32_t> clipLow, clipHigh;  // [O] each, with Epilogue::perChannelClip
  // Random int8 input and weights, and biases in [-biasRange, biasRange].
  static OperatorData random(const Operator& op, uint32_t seed, int32_t biasRange = 1 << 12);
};

// Host reference with exactly the accelerator's integer arithmetic; returns int8 [N][O][OH][OW].
std::vector<int8_t> reference(const Operator& op, const OperatorData& data);

// The epilogue on one accumulator value (shared by the reference of every operator); `multiplier`
// is the channel's when the epilogue has per-channel multipliers.
int8_t applyEpilogue(const Epilogue& e, int32_t acc, int32_t bias);
int8_t applyEpilogue(const Epilogue& e, int32_t acc, int32_t bias, int32_t multiplier);
int8_t applyEpilogue(const Epilogue& e, int32_t acc, int32_t bias, int32_t multiplier, int32_t clipLow,
                     int32_t clipHigh, int32_t multiplierLow = 0);
// The same before STORE keeps the low byte: what the accumulator holds after the epilogue (a fused
// residual add goes on from it).
// `leakyMultiplier` is the channel's slope multiplier when the epilogue has per-channel ones.
int32_t epilogueValue(const Epilogue& e, int32_t acc, int32_t bias, int32_t multiplier, int32_t clipLow,
                      int32_t clipHigh, int32_t multiplierLow = 0, int32_t leakyMultiplier = 0);

// avgpool's division of a window sum by `count` (the rule above), in the ALU's int32 arithmetic.
int32_t averageOf(int32_t sum, int count);
// The immediates avgpool's division uses: multiplier (1 for a power of two) and shift.
void averageDivisor(int count, int32_t* multiplier, int* shift);
// An avgpool's immediates: its epilogue's mul and shift when it gives them (a rescale to another
// output scale: (sum * mul + 2^(shift-1)) >> shift, clipped), else averageDivisor of its window.
void poolScale(const Operator& op, int32_t* multiplier, int* shift);
// An average's rounding constant, added before its shift: 2^(shift-1), plus (avgpool's wide rescale
// with zero points) outzp * 2^shift - window * inzp * mul, so that the result is
// (sum - window * inzp) * mul / 2^shift + outzp rounded (wrapping int32, as the ALU adds).
int32_t poolRounding(const Operator& op);

// The operator kind's spec keyword: "conv2d", "dense", "add", "maxpool", "avgpool".
std::string kindName(OpKind kind);
// An activation function's name as descriptions print it ("HardSwish", "SiLU"; "none").
std::string activationTitle(Epilogue::Activation a);

}  // namespace tessera::compiler::op
