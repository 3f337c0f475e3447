// Operator descriptions: construction, validation, the text spec, random operands and the host reference.
#include "tessera/compiler/op/operator.h"

#include <algorithm>
#include <climits>
#include <map>
#include <sstream>

#include "tessera/support/error.h"

namespace tessera::compiler::op {

namespace {

// The ALU's int32 arithmetic wraps; doing it in uint32 keeps the reference free of signed overflow.
int32_t wrapAdd(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
int32_t wrapMul(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b)); }

// Arithmetic right shift on int32 (C++20 guarantees it; every supported compiler does it in C++17).
int32_t shiftRight(int32_t v, int s) { return v >> s; }

// The spec's word for an activation function, and the name descriptions print.
struct ActivationName {
  Epilogue::Activation kind;
  const char* spec;
  const char* title;
};
constexpr ActivationName kActivationNames[] = {
    {Epilogue::Activation::kHardSigmoid, "hardsigmoid", "HardSigmoid"}, {Epilogue::Activation::kHardSwish, "hardswish", "HardSwish"},
    {Epilogue::Activation::kSigmoid, "sigmoid", "Sigmoid"},             {Epilogue::Activation::kSilu, "silu", "SiLU"},
    {Epilogue::Activation::kTanh, "tanh", "Tanh"}};
const ActivationName& activationName(Epilogue::Activation a) {
  for (const ActivationName& n : kActivationNames)
    if (n.kind == a) return n;
  return kActivationNames[0];
}

}  // namespace

std::string activationTitle(Epilogue::Activation a) {
  return a == Epilogue::Activation::kNone ? "none" : activationName(a).title;
}

std::string kindName(OpKind k) {
  switch (k) {
    case OpKind::kConv2d: return "conv2d";
    case OpKind::kDense: return "dense";
    case OpKind::kAdd: return "add";
    case OpKind::kMaxPool: return "maxpool";
    case OpKind::kAvgPool: return "avgpool";
    case OpKind::kScale: return "scale";
  }
  return "?";
}

Operator Operator::conv2d(int batch, int inChannels, int height, int width, int outChannels, int kernel, int stride,
                          int pad, const Epilogue& e) {
  Operator op;
  op.kind = OpKind::kConv2d;
  op.batch = batch;
  op.inChannels = inChannels;
  op.height = height;
  op.width = width;
  op.outChannels = outChannels;
  op.kernelH = op.kernelW = kernel;
  op.strideH = op.strideW = stride;
  op.padH = op.padW = pad;
  op.epilogue = e;
  return op;
}

Operator Operator::dense(int batch, int inFeatures, int outFeatures, const Epilogue& e) {
  Operator op;
  op.kind = OpKind::kDense;
  op.batch = batch;
  op.inChannels = inFeatures;
  op.outChannels = outFeatures;
  op.epilogue = e;
  return op;
}

Operator Operator::add(int batch, int channels, int height, int width, const Epilogue& e) {
  Operator op;
  op.kind = OpKind::kAdd;
  op.batch = batch;
  op.inChannels = op.outChannels = channels;
  op.height = height;
  op.width = width;
  op.epilogue = e;
  return op;
}

namespace {
Operator pool(OpKind kind, int batch, int channels, int height, int width, int kernel, int stride, int pad) {
  Operator op;
  op.kind = kind;
  op.batch = batch;
  op.inChannels = op.outChannels = channels;
  op.height = height;
  op.width = width;
  op.kernelH = op.kernelW = kernel;
  op.strideH = op.strideW = stride;
  op.padH = op.padW = pad;
  op.epilogue.bias = false;
  op.epilogue.shift = 0;
  return op;
}
}  // namespace

Operator Operator::maxPool(int batch, int channels, int height, int width, int kernel, int stride, int pad) {
  return pool(OpKind::kMaxPool, batch, channels, height, width, kernel, stride, pad);
}

Operator Operator::avgPool(int batch, int channels, int height, int width, int kernel, int stride, int pad) {
  return pool(OpKind::kAvgPool, batch, channels, height, width, kernel, stride, pad);
}

Operator Operator::scale(int batch, int channels, int height, int width, const Epilogue& e) {
  Operator op = add(batch, channels, height, width, e);
  op.kind = OpKind::kScale;
  return op;
}

Operator Operator::residualAdd() const {
  Operator a = add(batch, outChannels, outHeight(), outWidth(), residualEpilogue);
  a.name = name.empty() ? "residual" : name + " residual";
  a.scaleA = residualA;
  a.scaleB = residualB;
  a.zeroPointA = epilogue.outputZeroPoint;
  a.zeroPointB = residualZeroPointB;
  return a;
}

int Operator::outHeight() const {
  return strideH > 0 ? (height + 2 * padH - extentH() + (ceilMode ? strideH - 1 : 0)) / strideH + 1 : 0;
}
int Operator::outWidth() const {
  return strideW > 0 ? (width + 2 * padW - extentW() + (ceilMode ? strideW - 1 : 0)) / strideW + 1 : 0;
}

uint64_t Operator::macs() const {
  if (onVectorAlu()) return 0;
  return uint64_t(batch) * outChannels * outHeight() * outWidth() * groupInChannels() * kernelH * kernelW;
}

void Operator::validate() const {
  const std::string where = name.empty() ? kindName(kind) : name + " (" + kindName(kind) + ")";
  auto positive = [&](int v, const char* field) {
    if (v <= 0) throw Error(where, std::string(field) + " must be positive, got " + std::to_string(v));
  };
  positive(batch, "n");
  positive(inChannels, "cin");
  positive(outChannels, "cout");
  positive(height, "h");
  positive(width, "w");
  positive(kernelH, "kernel height");
  positive(kernelW, "kernel width");
  positive(strideH, "stride height");
  positive(strideW, "stride width");
  if (padH < 0 || padW < 0) throw Error(where, "padding must not be negative");
  positive(groups, "groups");
  positive(dilationH, "dilation height");
  positive(dilationW, "dilation width");
  if ((dilationH != 1 || dilationW != 1) && kind != OpKind::kConv2d) throw Error(where, "dilation belongs to conv2d");
  if (ceilMode && kind != OpKind::kMaxPool) throw Error(where, "ceil=1 belongs to maxpool");
  if (ceilMode && ((outHeight() - 1) * strideH - padH >= height || (outWidth() - 1) * strideW - padW >= width))
    throw Error(where, "with ceil=1 the last window would start past the input (and its left padding)");
  if (groups != 1 && kind != OpKind::kConv2d) throw Error(where, "groups belongs to conv2d");
  if (inChannels % groups || outChannels % groups)
    throw Error(where, "groups=" + std::to_string(groups) + " must divide cin=" + std::to_string(inChannels) +
                           " and cout=" + std::to_string(outChannels));
  if (padH >= extentH() || padW >= extentW())
    throw Error(where, "padding " + std::to_string(padH) + "x" + std::to_string(padW) +
                           " must be smaller than the kernel's extent " + std::to_string(extentH()) + "x" +
                           std::to_string(extentW()) + " (an output would see only padding)");
  if (extentH() > height + 2 * padH || extentW() > width + 2 * padW)
    throw Error(where, "kernel extent " + std::to_string(extentH()) + "x" + std::to_string(extentW()) +
                           " is larger than the padded input " + std::to_string(height + 2 * padH) + "x" +
                           std::to_string(width + 2 * padW));
  if (kind == OpKind::kDense && (height != 1 || width != 1 || kernelH != 1 || kernelW != 1 || padH || padW))
    throw Error(where, "dense has a 1x1 input and no kernel, stride or padding");
  if (onVectorAlu() && outChannels != inChannels)
    throw Error(where, "keeps the channel count: cout must equal cin (" + std::to_string(inChannels) + ")");
  if (kind == OpKind::kAdd && (kernelH != 1 || kernelW != 1 || strideH != 1 || strideW != 1 || padH || padW))
    throw Error(where, "add has no kernel, stride or padding");
  if (kind == OpKind::kScale) {
    if (kernelH != 1 || kernelW != 1 || strideH != 1 || strideW != 1 || padH || padW)
      throw Error(where, "scale has no kernel, stride or padding");
    if (epilogue.bias || !epilogue.round || epilogue.shift < 1 || epilogue.outputZeroPoint)
      throw Error(where, "scale takes no bias and no outzp, and needs round=1 with shift >= 1");
    if (!epilogue.wideScales && epilogue.shift > 15)
      throw Error(where, "scale's shift goes to 15 (its rounding is an immediate) or, with wide=1, to 31");
    if (int64_t(128) * 128 * std::llabs(int64_t(epilogue.multiplier)) + (int64_t(1) << (epilogue.shift - 1)) > INT32_MAX)
      throw Error(where, "scale: 128 * 128 * |mul| plus the rounding leaves int32");
  }
  if (onVectorAlu() && (epilogue.perChannelMultiplier || epilogue.preShift || epilogue.perChannelClip ||
                        epilogue.biasAfterMultiply))
    throw Error(where, "per-channel multipliers and clips, preshift and bias=after belong to conv2d and dense");
  if (epilogue.biasAfterMultiply && !epilogue.bias) throw Error(where, "bias=after needs the bias");
  if (epilogue.perChannelMultiplier && epilogue.multiplier != 1)
    throw Error(where, "mul is either one immediate or per channel (mul=channel), not both");
  if (epilogue.preClip < 0 || epilogue.preClip > 32767)
    throw Error(where, "preclip must be in [0, 32767] (a signed 16-bit ALU immediate), got " + std::to_string(epilogue.preClip));
  if (onVectorAlu() && epilogue.preClip) throw Error(where, "preclip belongs to conv2d and dense");
  if (epilogue.preShift < 0 || epilogue.preShift > 31)
    throw Error(where, "preshift must be in [0, 31], got " + std::to_string(epilogue.preShift));
  if (epilogue.lowBits < 0 || epilogue.lowBits > 7)
    throw Error(where, "lowbits must be in [0, 7], got " + std::to_string(epilogue.lowBits));
  if (epilogue.lowBits && (onVectorAlu() || !epilogue.perChannelMultiplier || !epilogue.perChannelClip ||
                           epilogue.biasAfterMultiply || epilogue.preShift || epilogue.preClip))
    throw Error(where, "lowbits belongs to conv2d and dense with mul=channel and clip=channel, the bias first, "
                       "no preshift and no preclip");
  if (kind == OpKind::kAdd && (epilogue.bias || epilogue.multiplier != 1))
    throw Error(where, "add takes no bias and no multiplier after the sum (scale the operands with mul_a, mul_b)");
  if (kind == OpKind::kMaxPool &&
      (epilogue.bias || epilogue.multiplier != 1 || epilogue.shift != 0 || epilogue.round || epilogue.relu))
    throw Error(where, "maxpool has no requantization (bias, mul, shift, round, relu)");
  const bool wide = epilogue.wideScales;
  if (wide && kind != OpKind::kAdd && kind != OpKind::kAvgPool && kind != OpKind::kScale)
    throw Error(where, "wide=1 belongs to add, avgpool and scale");
  if (kind == OpKind::kAvgPool) {
    if (epilogue.bias || epilogue.relu) throw Error(where, "avgpool has no bias and no relu");
    const bool rescale = epilogue.multiplier != 1 || epilogue.shift != 0 || epilogue.round;
    const int maxShift = wide ? 31 : 15, maxMul = wide ? (1 << 30) : 32767;
    if (wide && !rescale) throw Error(where, "wide=1 belongs to avgpool's rescale (mul, shift, round=1)");
    if (rescale && (!epilogue.round || epilogue.shift < 1 || epilogue.shift > maxShift || epilogue.multiplier < 1 ||
                    epilogue.multiplier > maxMul))
      throw Error(where, "avgpool's rescale needs mul in [1, " + std::to_string(maxMul) + "], shift in [1, " +
                             std::to_string(maxShift) + "] and round=1 (got mul=" + std::to_string(epilogue.multiplier) +
                             " shift=" + std::to_string(epilogue.shift) + " round=" + std::to_string(epilogue.round) + ")");
    if (rescale && int64_t(128) * kernelH * kernelW * epilogue.multiplier + (int64_t(1) << (epilogue.shift - 1)) > INT32_MAX)
      throw Error(where, "avgpool's rescale: a window sum times mul=" + std::to_string(epilogue.multiplier) +
                             " can leave int32");
  }
  if (kind == OpKind::kAvgPool && kernelH * kernelW > 16384)
    throw Error(where, "window " + std::to_string(kernelH) + "x" + std::to_string(kernelW) +
                           " is larger than the 16384 elements avgpool divides");
  if (epilogue.shift < 0 || epilogue.shift > 31)
    throw Error(where, "shift must be in [0, 31], got " + std::to_string(epilogue.shift));
  if (epilogue.round && epilogue.lowBits && epilogue.shift < 1) throw Error(where, "round needs a shift of at least 1");
  if (epilogue.round && !wide && !epilogue.lowBits && (epilogue.shift < 1 || epilogue.shift > 15))
    throw Error(where, "round needs shift in [1, 15] (its 1 << (shift-1) is a signed 16-bit ALU immediate; wide=1 "
                       "takes up to 31), got " + std::to_string(epilogue.shift));
  if (epilogue.round && wide && epilogue.shift < 1) throw Error(where, "round needs a shift of at least 1");
  for (const auto& [value, what] : {std::pair<int, const char*>{epilogue.multiplier, "multiplier"},
                                    {scaleA, "mul_a"},
                                    {scaleB, "mul_b"}})
    if (!wide && (value < -32768 || value > 32767))
      throw Error(where, std::string(what) + " must fit the ALU's signed 16-bit immediate (or take wide=1), got " +
                             std::to_string(value));
  // add's worst sum, with its rounding, stays in int32 (the reference and the ALU would wrap alike,
  // but a wrapped sum is no requantization).
  if (kind == OpKind::kAdd && wide &&
      (128 + std::llabs(int64_t(zeroPointA))) * std::llabs(int64_t(scaleA)) +
              (128 + std::llabs(int64_t(zeroPointB))) * std::llabs(int64_t(scaleB)) +
              (epilogue.round ? int64_t(1) << (epilogue.shift - 1) : 0) +
              (std::llabs(int64_t(epilogue.outputZeroPoint)) << epilogue.shift) > INT32_MAX)
    throw Error(where, "wide add: 128 * (|mul_a| + |mul_b|) (more with azp, bzp) plus the rounding and outzp leaves int32");
  if (kind != OpKind::kAdd && (scaleA != 1 || scaleB != 1)) throw Error(where, "mul_a and mul_b belong to add");
  for (const auto& [value, key] : {std::pair<int, const char*>{epilogue.outputZeroPoint, "outzp"},
                                  {zeroPointA, "azp"},
                                  {zeroPointB, "bzp"}})
    if (value < -128 || value > 127)
      throw Error(where, std::string(key) + " must be in [-128, 127] (an int8 zero point), got " + std::to_string(value));
  const bool zeroPointAverage = kind == OpKind::kAvgPool && (inputZeroPoint || epilogue.outputZeroPoint);
  if (zeroPointAverage && (!wide || !epilogue.round))
    throw Error(where, "avgpool's inzp and outzp need the wide rescale (wide=1 round=1; they join its rounding row)");
  if (zeroPointAverage && (128 + std::llabs(int64_t(inputZeroPoint))) * kernelH * kernelW * int64_t(epilogue.multiplier) +
                                  (int64_t(1) << (epilogue.shift - 1)) + (std::llabs(int64_t(epilogue.outputZeroPoint)) << epilogue.shift) >
                              INT32_MAX)
    throw Error(where, "avgpool's rescale: a window sum less the input zero point's, times mul, plus the rounding and "
                       "outzp, can leave int32");
  if (epilogue.outputZeroPoint) {
    if (kind == OpKind::kMaxPool)
      throw Error(where, "outzp belongs to conv2d, dense, add and avgpool (a max pooling keeps its input's zero point)");
    if (epilogue.lowBits && !epilogue.round) throw Error(where, "outzp with lowbits needs round=1 (it joins the rounding row)");
  }
  if (zeroPointA || zeroPointB) {
    if (kind != OpKind::kAdd) throw Error(where, "azp and bzp belong to add");
    if (!epilogue.wideScales || !epilogue.round)
      throw Error(where, "azp and bzp need wide=1 and round=1 (they join the resident rounding row)");
  }
  if (runtimeWeights) {
    if (kind != OpKind::kConv2d && kind != OpKind::kDense) throw Error(where, "wgt=input belongs to conv2d and dense");
    if (inputZeroPoint)
      throw Error(where, "wgt=input cannot take inzp: the zero point's correction is a sum of the weights, known only at run time");
  }
  if (inputZeroPoint) {
    if (kind != OpKind::kConv2d && kind != OpKind::kDense && kind != OpKind::kAvgPool)
      throw Error(where, "inzp belongs to conv2d, dense and avgpool");
    if (inputZeroPoint < -128 || inputZeroPoint > 127)
      throw Error(where, "inzp must be in [-128, 127] (an int8 zero point), got " + std::to_string(inputZeroPoint));
    if (kind != OpKind::kAvgPool && (!epilogue.bias || epilogue.biasAfterMultiply))
      throw Error(where, "inzp needs the bias first (bias=1): the zero point's sum is folded into it");
  }
  if (epilogue.activation != Epilogue::Activation::kNone) {
    const Epilogue& e = epilogue;
    if (kind != OpKind::kConv2d && kind != OpKind::kDense) throw Error(where, "act belongs to conv2d and dense");
    if (!e.perChannelClip || e.relu || residual || e.outputZeroPoint)
      throw Error(where, "act needs clip=channel (its bounds give the activation's input range), and no relu, residual or outzp");
    if (e.activationOffset < 0 || e.activationOffset > 32767 ||
        (!e.piecewiseActivation() && (e.activationCeiling < 1 || e.activationCeiling > 32767)))
      throw Error(where, "act_k must be in [0, 32767] and act_max in [1, 32767] (signed 16-bit ALU immediates)");
    if (e.piecewiseActivation()) {
      for (int a : e.activationBounds)
        if (a < 0 || a > 32767)
          throw Error(where, "act_bounds must be 4 values in [0, 32767] (clip immediates), got " + std::to_string(a));
      for (int a : e.activationSlopes)
        if (a < 0 || a > 32767)
          throw Error(where, "act_slopes must be 3 values in [0, 32767] (multiply immediates), got " + std::to_string(a));
      if (e.activationSlopeShift < 0 || e.activationSlopeShift > 15)
        throw Error(where, "act_slope_shift must be in [0, 15], got " + std::to_string(e.activationSlopeShift));
    }
    if (e.activationMultiplier < -32768 || e.activationMultiplier > 32767)
      throw Error(where, "act_mul must be a signed 16-bit ALU immediate, got " + std::to_string(e.activationMultiplier));
    if (e.activationShift < 1 || e.activationShift > 15)
      throw Error(where, "act_shift must be in [1, 15] (its rounding 2^(S-1) is an immediate), got " +
                             std::to_string(e.activationShift));
    if (e.activationPreShift < 0 || e.activationPreShift > 31)
      throw Error(where, "act_preshift must be in [0, 31], got " + std::to_string(e.activationPreShift));
  }
  if (epilogue.leaky) {
    const Epilogue& e = epilogue;
    if (kind != OpKind::kConv2d && kind != OpKind::kDense) throw Error(where, "leaky belongs to conv2d and dense");
    if (e.relu || e.biasAfterMultiply) throw Error(where, "leaky needs the bias first (or none) and no relu");
    if (e.leakyMultiplier < 0 || e.leakyMultiplier > 32767)
      throw Error(where, "leaky_mul must be in [0, 32767] (a signed 16-bit ALU immediate), got " + std::to_string(e.leakyMultiplier));
    if (e.leakyPreShift < 0 || e.leakyPreShift > 31 || e.leakyShift < 0 || e.leakyShift > 31)
      throw Error(where, "leaky_preshift and leaky_shift must be in [0, 31]");
    if (e.leakyPreShift + e.leakyShift < 31 && e.leakyMultiplier >= (int64_t(1) << (e.leakyPreShift + e.leakyShift)))
      throw Error(where, "leaky's slope leaky_mul / 2^(leaky_preshift + leaky_shift) must be below 1");
    if (e.leakyPerChannel && e.leakyMultiplier) throw Error(where, "leaky_mul is either one immediate or per channel, not both");
  } else if (epilogue.leakyMultiplier || epilogue.leakyPreShift || epilogue.leakyShift || epilogue.leakyPerChannel) {
    throw Error(where, "leaky_mul, leaky_preshift and leaky_shift need leaky=1");
  }
  if (residual) {
    if (kind != OpKind::kConv2d && kind != OpKind::kDense) throw Error(where, "residual=1 belongs to conv2d and dense");
    try {
      residualAdd().validate();
    } catch (const Error& e) {
      throw Error(where, "residual add: " + e.reason());
    }
  } else if (residualA != 1 || residualB != 1 || residualEpilogue.relu || residualEpilogue.round ||
             residualEpilogue.wideScales || residualZeroPointB || residualEpilogue.outputZeroPoint) {
    throw Error(where, "res_mul_a, res_mul_b, res_round, res_relu, res_wide, res_bzp and res_outzp need residual=1");
  }
}

std::string Operator::describe() const {
  std::ostringstream os;
  os << kindName(kind) << (name.empty() ? "" : " " + name) << ": ";
  auto shape = [&](int c, int h, int w) {
    return "[" + std::to_string(batch) + "][" + std::to_string(c) + "][" + std::to_string(h) + "][" + std::to_string(w) + "]";
  };
  if (kind == OpKind::kMaxPool || kind == OpKind::kAvgPool) {
    os << "in " << shape(inChannels, height, width) << " int8, window " << kernelH << "x" << kernelW << ", stride "
       << strideH << "x" << strideW << ", pad " << padH << "x" << padW << (ceilMode ? ", ceil mode" : "") << " -> out "
       << shape(outChannels, outHeight(), outWidth()) << " int8";
    if (kind == OpKind::kMaxPool) {
      os << "; max (padding never wins)";
    } else {
      int32_t m = 1;
      int sh = 0;
      poolScale(*this, &m, &sh);
      os << "; sum";
      if (m != 1) os << " *" << m;
      if (sh) os << " +" << (1 << (sh - 1)) << " >>" << sh;
      if (epilogue.multiplier != 1 || epilogue.shift != 0)
        os << " (average over " << kernelH * kernelW << ", padding counted as zero, to the output's scale)";
      else
        os << " (average over " << kernelH * kernelW << ", padding counted as zero)";
      if (epilogue.wideScales) os << "; multiplier and rounding in resident accumulator rows";
    }
    return os.str();
  }
  if (kind == OpKind::kScale) {
    os << "a " << shape(inChannels, height, width) << " int8, b [" << batch << "][" << inChannels << "] int8 -> out "
       << shape(outChannels, height, width) << " int8; a*b*" << epilogue.multiplier << " +"
       << (1 << (epilogue.shift - 1)) << " >>" << epilogue.shift << ", clip [" << (epilogue.relu ? 0 : -128)
       << ", 127]" << (epilogue.relu ? " (ReLU)" : "");
    if (epilogue.wideScales) os << "; multiplier and rounding in resident accumulator rows";
    return os.str();
  }
  if (kind == OpKind::kAdd) {
    os << "a, b " << shape(inChannels, height, width) << " int8 -> out " << shape(outChannels, height, width)
       << " int8; a";
    if (scaleA != 1) os << "*" << scaleA;
    os << " + b";
    if (scaleB != 1) os << "*" << scaleB;
    os << ", ";
    if (epilogue.round) os << "+" << (1 << (epilogue.shift - 1)) << ", ";
    os << ">>" << epilogue.shift;
    if (epilogue.outputZeroPoint) os << ", +" << epilogue.outputZeroPoint << " (output zero point)";
    os << ", clip [" << (epilogue.relu ? (epilogue.outputZeroPoint > -128 ? epilogue.outputZeroPoint : -128) : -128)
       << ", 127]" << (epilogue.relu ? " (ReLU)" : "");
    if (zeroPointA || zeroPointB) os << "; operand zero points a " << zeroPointA << ", b " << zeroPointB;
    if (epilogue.wideScales) os << "; multipliers and rounding in resident accumulator rows";
    return os.str();
  }
  if (kind == OpKind::kDense) {
    os << "in [" << batch << "][" << inChannels << "] int8, weights [" << outChannels << "][" << inChannels
       << "] int8 -> out [" << batch << "][" << outChannels << "] int8";
  } else {
    os << "in [" << batch << "][" << inChannels << "][" << height << "][" << width << "] int8, weights ["
       << outChannels << "][" << groupInChannels() << "][" << kernelH << "][" << kernelW << "] int8";
    if (groups != 1) os << " (" << groups << " groups" << (groups == inChannels ? ", depthwise" : "") << ")";
    if (dilationH != 1 || dilationW != 1) os << ", dilation " << dilationH << "x" << dilationW;
    os << ", stride " << strideH
       << "x" << strideW << ", pad " << padH << "x" << padW << " -> out [" << batch << "][" << outChannels << "]["
       << outHeight() << "][" << outWidth() << "] int8";
  }
  if (runtimeWeights) os << " (weights given at run time)";
  if (inputZeroPoint)
    os << " (input zero point " << inputZeroPoint << ": sum of (x " << (inputZeroPoint < 0 ? "+ " : "- ")
       << std::abs(inputZeroPoint) << ") * w over the taps inside the input)";
  os << "; epilogue: " << (epilogue.bias && !epilogue.biasAfterMultiply ? "+bias int32, " : "");
  if (epilogue.leaky)
    os << (epilogue.leakyPerChannel ? "PRelu" : "LeakyRelu") << " max(acc, ((acc >> " << epilogue.leakyPreShift << ") * "
       << (epilogue.leakyPerChannel ? std::string("slope[o]") : std::to_string(epilogue.leakyMultiplier)) << ") >> "
       << epilogue.leakyShift << "), ";
  if (epilogue.preShift) os << ">>" << epilogue.preShift << ", ";
  if (epilogue.preClip) os << "clip [" << -epilogue.preClip << ", " << epilogue.preClip << "], ";
  if (epilogue.perChannelClip) os << "clip [low[o], high[o]], ";
  if (epilogue.perChannelMultiplier)
    os << (epilogue.lowBits ? "*(multiplier[o] + low[o]/" + std::to_string(1 << epilogue.lowBits) + "), " : "*multiplier[o], ");
  if (epilogue.multiplier != 1) os << "*" << epilogue.multiplier << ", ";
  if (epilogue.biasAfterMultiply) os << "+bias int32 (after the multiply), ";
  if (epilogue.round) os << "+" << (1 << (epilogue.shift - 1)) << ", ";
  os << ">>" << epilogue.shift;
  if (epilogue.outputZeroPoint) os << ", +" << epilogue.outputZeroPoint << " (output zero point)";
  if (!epilogue.perChannelClip)
    os << ", clip [" << (epilogue.relu ? epilogue.outputZeroPoint : -128) << ", 127]" << (epilogue.relu ? " (ReLU)" : "");
  else if (epilogue.relu)
    os << " (ReLU by the bounds)";
  if (epilogue.activation != Epilogue::Activation::kNone) {
    const Epilogue& e = epilogue;
    const bool times = e.activationTimesInput();
    os << "; then " << activationName(e.activation).title << ": ";
    if (e.piecewiseActivation()) {
      os << "t = clip(v, +-" << e.activationBounds[0] << ")";
      for (int i = 0; i < Epilogue::kActivationStages; ++i)
        os << ", clip((t*" << e.activationSlopes[size_t(i)] << " >>" << e.activationSlopeShift << ") + v, +-"
           << e.activationBounds[size_t(i) + 1] << ")";
      if (e.activationOffset) os << ", +" << e.activationOffset;
    } else {
      os << "t = clip(v + " << e.activationOffset << ", 0, " << e.activationCeiling << ")";
    }
    const std::string p = times                     ? "(v*t >> " + std::to_string(e.activationPreShift) + ")"
                          : e.piecewiseActivation() ? "(t >> " + std::to_string(e.activationPreShift) + ")"
                                                    : std::string("t");
    os << ", " << p << " *" << e.activationMultiplier
       << " +" << (1 << (e.activationShift - 1)) << " >>" << e.activationShift << ", clip [-128, 127]";
  }
  if (residual) {
    const Epilogue& r = residualEpilogue;
    os << "; then + residual b " << shape(outChannels, outHeight(), outWidth()) << " int8: a";
    if (residualA != 1) os << "*" << residualA;
    os << " + b";
    if (residualB != 1) os << "*" << residualB;
    os << ", ";
    if (r.round) os << "+" << (1 << (r.shift - 1)) << ", ";
    if (residualZeroPointB) os << " (b's zero point " << residualZeroPointB << ")";
    os << ">>" << r.shift;
    if (r.outputZeroPoint) os << ", +" << r.outputZeroPoint << " (output zero point)";
    os << ", clip [" << (r.relu ? r.outputZeroPoint : -128) << ", 127]" << (r.relu ? " (ReLU)" : "");
    if (r.wideScales) os << " (multipliers and rounding in resident accumulator rows)";
  }
  os << "; " << macs() << " MACs";
  return os.str();
}

std::string Operator::spec() const {
  std::ostringstream os;
  os << kindName(kind);
  if (!name.empty()) os << " name=" << name;
  os << " n=" << batch;
  if (onVectorAlu()) {
    os << " c=" << inChannels << " h=" << height << " w=" << width;
    if (kind == OpKind::kScale) {
      os << " mul=" << epilogue.multiplier << " shift=" << epilogue.shift << " round=" << epilogue.round
         << " relu=" << epilogue.relu;
    } else if (kind == OpKind::kAdd) {
      os << " mul_a=" << scaleA << " mul_b=" << scaleB << " shift=" << epilogue.shift << " round=" << epilogue.round
         << " relu=" << epilogue.relu;
      if (zeroPointA) os << " azp=" << zeroPointA;
      if (zeroPointB) os << " bzp=" << zeroPointB;
      if (epilogue.outputZeroPoint) os << " outzp=" << epilogue.outputZeroPoint;
    }
    else
      os << " kh=" << kernelH << " kw=" << kernelW << " sh=" << strideH << " sw=" << strideW << " ph=" << padH
         << " pw=" << padW << (ceilMode ? " ceil=1" : "");
    if (kind == OpKind::kAvgPool && (epilogue.multiplier != 1 || epilogue.shift != 0))
      os << " mul=" << epilogue.multiplier << " shift=" << epilogue.shift << " round=" << epilogue.round;
    if (kind == OpKind::kAvgPool && inputZeroPoint) os << " inzp=" << inputZeroPoint;
    if (kind == OpKind::kAvgPool && epilogue.outputZeroPoint) os << " outzp=" << epilogue.outputZeroPoint;
    if (epilogue.wideScales) os << " wide=1";
    return os.str();
  }
  os << " cin=" << inChannels;
  if (kind == OpKind::kConv2d)
    os << " h=" << height << " w=" << width << " cout=" << outChannels << " kh=" << kernelH << " kw=" << kernelW
       << " sh=" << strideH << " sw=" << strideW << " ph=" << padH << " pw=" << padW;
  else
    os << " cout=" << outChannels;
  if (groups != 1) os << " groups=" << groups;
  if (dilationH != 1 || dilationW != 1) os << " dh=" << dilationH << " dw=" << dilationW;
  os << " bias=" << (epilogue.biasAfterMultiply ? "after" : epilogue.bias ? "1" : "0") << " mul=";
  if (epilogue.perChannelMultiplier) os << "channel";
  else os << epilogue.multiplier;
  if (epilogue.preShift) os << " preshift=" << epilogue.preShift;
  if (epilogue.preClip) os << " preclip=" << epilogue.preClip;
  if (epilogue.perChannelClip) os << " clip=channel";
  if (epilogue.lowBits) os << " lowbits=" << epilogue.lowBits;
  if (inputZeroPoint) os << " inzp=" << inputZeroPoint;
  if (runtimeWeights) os << " wgt=input";
  if (epilogue.outputZeroPoint) os << " outzp=" << epilogue.outputZeroPoint;
  os << " shift=" << epilogue.shift << " round=" << epilogue.round << " relu=" << epilogue.relu;
  if (epilogue.leaky) {
    os << " leaky=1 leaky_preshift=" << epilogue.leakyPreShift << " leaky_mul=";
    if (epilogue.leakyPerChannel) os << "channel";
    else os << epilogue.leakyMultiplier;
    os << " leaky_shift=" << epilogue.leakyShift;
  }
  if (epilogue.activation != Epilogue::Activation::kNone)
  {
    const Epilogue& e = epilogue;
    os << " act=" << activationName(e.activation).spec << " act_k=" << e.activationOffset;
    if (e.piecewiseActivation()) {
      os << " act_bounds=";
      for (size_t i = 0; i < e.activationBounds.size(); ++i) os << (i ? "," : "") << e.activationBounds[i];
      os << " act_slopes=";
      for (size_t i = 0; i < e.activationSlopes.size(); ++i) os << (i ? "," : "") << e.activationSlopes[i];
      os << " act_slope_shift=" << e.activationSlopeShift;
    } else {
      os << " act_max=" << e.activationCeiling;
    }
    os << " act_preshift=" << e.activationPreShift << " act_mul=" << e.activationMultiplier
       << " act_shift=" << e.activationShift;
  }
  if (residual)
    os << " residual=1 res_mul_a=" << residualA << " res_mul_b=" << residualB << " res_shift=" << residualEpilogue.shift
       << " res_round=" << residualEpilogue.round << " res_relu=" << residualEpilogue.relu
       << " res_wide=" << residualEpilogue.wideScales;
  if (residualZeroPointB) os << " res_bzp=" << residualZeroPointB;
  if (residualEpilogue.outputZeroPoint) os << " res_outzp=" << residualEpilogue.outputZeroPoint;
  return os.str();
}

Operator Operator::parse(const std::string& text, const std::string& origin) {
  std::istringstream is(text);
  std::string word;
  const char* known = "conv2d, dense, add, maxpool, avgpool, scale";
  if (!(is >> word)) throw Error(origin, std::string("empty operator description (expected one of ") + known + ")");
  Operator op;
  bool found = false;
  for (OpKind k : {OpKind::kConv2d, OpKind::kDense, OpKind::kAdd, OpKind::kMaxPool, OpKind::kAvgPool, OpKind::kScale})
    if (word == kindName(k)) {
      op.kind = k;
      found = true;
    }
  if (!found) throw Error(origin, "unknown operator '" + word + "' (known: " + known + ")");
  if (op.kind == OpKind::kMaxPool || op.kind == OpKind::kAvgPool) {
    op.epilogue.bias = false;
    op.epilogue.shift = 0;
  }
  if (op.kind == OpKind::kAdd || op.kind == OpKind::kScale) op.epilogue.bias = false;
  op.residualEpilogue.bias = false;
  std::map<std::string, int*> ints = {
      {"n", &op.batch},        {"cin", &op.inChannels}, {"h", &op.height},    {"w", &op.width},
      {"cout", &op.outChannels}, {"kh", &op.kernelH},   {"kw", &op.kernelW},  {"sh", &op.strideH},
      {"sw", &op.strideW},     {"ph", &op.padH},        {"pw", &op.padW},     {"mul", &op.epilogue.multiplier},
      {"shift", &op.epilogue.shift}, {"preshift", &op.epilogue.preShift}, {"preclip", &op.epilogue.preClip},
      {"lowbits", &op.epilogue.lowBits}, {"inzp", &op.inputZeroPoint}, {"outzp", &op.epilogue.outputZeroPoint},
      {"res_bzp", &op.residualZeroPointB}, {"res_outzp", &op.residualEpilogue.outputZeroPoint},
      {"azp", &op.zeroPointA}, {"bzp", &op.zeroPointB},
      {"mul_a", &op.scaleA},   {"mul_b", &op.scaleB}, {"res_mul_a", &op.residualA}, {"res_mul_b", &op.residualB},
      {"res_shift", &op.residualEpilogue.shift}, {"groups", &op.groups}, {"dh", &op.dilationH}, {"dw", &op.dilationW},
      {"act_k", &op.epilogue.activationOffset}, {"act_max", &op.epilogue.activationCeiling},
      {"act_preshift", &op.epilogue.activationPreShift}, {"act_mul", &op.epilogue.activationMultiplier},
      {"act_shift", &op.epilogue.activationShift}, {"act_slope_shift", &op.epilogue.activationSlopeShift},
      {"leaky_preshift", &op.epilogue.leakyPreShift},
      {"leaky_mul", &op.epilogue.leakyMultiplier}, {"leaky_shift", &op.epilogue.leakyShift}};
  const std::map<std::string, std::vector<int*>> both = {{"kernel", {&op.kernelH, &op.kernelW}},
                                                         {"stride", {&op.strideH, &op.strideW}},
                                                         {"pad", {&op.padH, &op.padW}},
                                                         {"dilation", {&op.dilationH, &op.dilationW}}};
  while (is >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == word.size())
      throw Error(origin, "expected key=value, got '" + word + "'");
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "name") {
      op.name = value;
      continue;
    }
    if (key == "leaky_mul" && value == "channel") {
      op.epilogue.leakyPerChannel = true;
      continue;
    }
    if (key == "mul" && value == "channel") {
      op.epilogue.perChannelMultiplier = true;
      continue;
    }
    if (key == "bias" && value == "after") {
      op.epilogue.bias = op.epilogue.biasAfterMultiply = true;
      continue;
    }
    if (key == "act") {
      op.epilogue.activation = Epilogue::Activation::kNone;
      bool known = value == "none";
      for (const ActivationName& n : kActivationNames)
        if (value == n.spec) {
          op.epilogue.activation = n.kind;
          known = true;
        }
      if (!known) throw Error(origin, "act takes hardswish, hardsigmoid, sigmoid, silu, tanh or none, got '" + value + "'");
      continue;
    }
    if (key == "act_bounds" || key == "act_slopes") {
      // Comma-separated integers: A1..A4 or a1..a3.
      int* out = key == "act_bounds" ? op.epilogue.activationBounds.data() : op.epilogue.activationSlopes.data();
      const size_t want = key == "act_bounds" ? op.epilogue.activationBounds.size() : op.epilogue.activationSlopes.size();
      std::vector<long> values;
      std::stringstream list(value);
      std::string item;
      while (std::getline(list, item, ',')) {
        try {
          size_t used = 0;
          values.push_back(std::stol(item, &used, 0));
          if (used != item.size()) throw std::invalid_argument(item);
        } catch (const std::exception&) {
          throw Error(origin, key + " takes " + std::to_string(want) + " comma-separated integers, got '" + value + "'");
        }
      }
      if (values.size() != want)
        throw Error(origin, key + " takes " + std::to_string(want) + " comma-separated integers, got '" + value + "'");
      for (size_t i = 0; i < want; ++i) {
        if (values[i] < -(1L << 30) || values[i] > (1L << 30)) throw Error(origin, "value of '" + key + "' is out of range");
        out[i] = int(values[i]);
      }
      continue;
    }
    if (key == "wgt") {
      if (value != "input") throw Error(origin, "wgt takes only 'input' (weights given at run time), got '" + value + "'");
      op.runtimeWeights = true;
      continue;
    }
    if (key == "clip") {
      if (value != "channel") throw Error(origin, "clip takes only 'channel' (per-channel bounds), got '" + value + "'");
      op.epilogue.perChannelClip = true;
      continue;
    }
    long v = 0;
    try {
      size_t used = 0;
      v = std::stol(value, &used, 0);
      if (used != value.size()) throw std::invalid_argument(value);
    } catch (const std::exception&) {
      throw Error(origin, "value of '" + key + "' is not an integer: '" + value + "'");
    }
    if (v < -(1L << 30) || v > (1L << 30)) throw Error(origin, "value of '" + key + "' is out of range");
    if (key == "wide") {
      if (v != 0 && v != 1) throw Error(origin, "wide must be 0 or 1");
      op.epilogue.wideScales = v == 1;
    } else if (key == "leaky") {
      if (v != 0 && v != 1) throw Error(origin, "leaky must be 0 or 1");
      op.epilogue.leaky = v == 1;
    } else if (key == "ceil") {
      if (v != 0 && v != 1) throw Error(origin, "ceil must be 0 or 1");
      op.ceilMode = v == 1;
    } else if (key == "residual" || key == "res_round" || key == "res_relu" || key == "res_wide") {
      if (v != 0 && v != 1) throw Error(origin, key + " must be 0 or 1");
      (key == "residual" ? op.residual : key == "res_round" ? op.residualEpilogue.round
                                       : key == "res_relu" ? op.residualEpilogue.relu
                                                           : op.residualEpilogue.wideScales) = v == 1;
    } else if (key == "bias" || key == "relu" || key == "round") {
      if (v != 0 && v != 1) throw Error(origin, key + " must be 0 or 1" + (key == "bias" ? " or 'after'" : ""));
      (key == "bias" ? op.epilogue.bias : key == "relu" ? op.epilogue.relu : op.epilogue.round) = v == 1;
      if (key == "bias") op.epilogue.biasAfterMultiply = false;
    } else if (key == "c") {
      if (!op.onVectorAlu()) throw Error(origin, "c= (channels) is for add and pooling; " + kindName(op.kind) + " takes cin= and cout=");
      op.inChannels = op.outChannels = static_cast<int>(v);
    } else if (ints.count(key)) {
      *ints[key] = static_cast<int>(v);
    } else if (both.count(key)) {
      for (int* p : both.at(key)) *p = static_cast<int>(v);
    } else {
      throw Error(origin, "unknown key '" + key +
                              "' (known: name n cin cout c h w kernel kh kw stride sh sw pad ph pw bias (0, 1 or 'after') mul (a "
                              "number or 'channel') preshift preclip clip (channel) lowbits inzp wgt (input) outzp shift round relu mul_a mul_b azp bzp wide ceil groups dilation dh dw act act_k act_max act_bounds act_slopes act_slope_shift act_preshift act_mul act_shift leaky leaky_preshift leaky_mul leaky_shift residual "
                              "res_mul_a res_mul_b res_shift res_round res_relu res_wide res_bzp res_outzp)");
    }
  }
  try {
    op.validate();
  } catch (const Error& e) {
    throw Error(origin, e.what());
  }
  return op;
}

OperatorData OperatorData::random(const Operator& op, uint32_t seed, int32_t biasRange) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::uniform_int_distribution<int32_t> bias(-biasRange, biasRange);
  OperatorData d;
  d.input.resize(size_t(op.batch) * op.inChannels * op.height * op.width);
  d.weights.resize(size_t(op.outChannels) * op.groupInChannels() * op.kernelH * op.kernelW);
  if (op.onVectorAlu()) d.weights.clear();
  if (op.kind == OpKind::kAdd) d.input2.resize(d.input.size());
  if (op.kind == OpKind::kScale) d.input2.resize(size_t(op.batch) * op.inChannels);
  if (op.residual) d.input2.resize(size_t(op.batch) * op.outChannels * op.outHeight() * op.outWidth());
  for (auto& v : d.input) v = static_cast<int8_t>(byte(rng));
  for (auto& v : d.input2) v = static_cast<int8_t>(byte(rng));
  for (auto& v : d.weights) v = static_cast<int8_t>(byte(rng));
  if (op.epilogue.bias) {
    d.bias.resize(size_t(op.outChannels));
    for (auto& v : d.bias) v = bias(rng);
  }
  if (op.epilogue.perChannelMultiplier) {
    // A bias after the multiply comes with 24-bit multipliers and int32 sums that wrap: draw both
    // from the whole range, so the targets' wrapping is checked too.
    const bool wide = op.epilogue.biasAfterMultiply;
    std::uniform_int_distribution<int32_t> mul(wide ? INT32_MIN : -32768, wide ? INT32_MAX : 32767);
    d.multipliers.resize(size_t(op.outChannels));
    for (auto& v : d.multipliers) v = mul(rng);
    if (op.epilogue.activation != Epilogue::Activation::kNone) {
      // Multipliers that bring the clipped sums near the activation's breakpoints.
      std::uniform_int_distribution<int32_t> small(1, std::max(1, 1 << std::max(0, op.epilogue.shift - 3)));
      for (auto& v : d.multipliers) v = small(rng);
    }
    if (wide)
      for (auto& v : d.bias) v = mul(rng);
  }
  if (op.epilogue.leakyPerChannel) {
    // Slopes across [-1, 1] (negative ones too, as PRelu allows).
    const int64_t one = int64_t(1) << std::min(30, op.epilogue.leakyPreShift + op.epilogue.leakyShift);
    std::uniform_int_distribution<int64_t> slope(-one, one);
    d.leakyMultipliers.resize(size_t(op.outChannels));
    for (auto& v : d.leakyMultipliers) v = int32_t(slope(rng));
  }
  if (op.epilogue.lowBits) {
    std::uniform_int_distribution<int32_t> low(0, (1 << op.epilogue.lowBits) - 1);
    d.multipliersLow.resize(size_t(op.outChannels));
    for (auto& v : d.multipliersLow) v = low(rng);
  }
  if (op.epilogue.perChannelClip) {
    // Bounds anywhere in int32, either order, so some channels clip everything and some nothing.
    // Before an activation function, bounds around zero, so its input crosses its breakpoints.
    const bool act = op.epilogue.activation != Epilogue::Activation::kNone;
    std::uniform_int_distribution<int32_t> bound(-biasRange * 64, biasRange * 64);
    std::uniform_int_distribution<int32_t> low(-4 * biasRange, -1), high(0, 4 * biasRange);
    d.clipLow.resize(size_t(op.outChannels));
    d.clipHigh.resize(size_t(op.outChannels));
    for (int o = 0; o < op.outChannels; ++o) {
      d.clipLow[size_t(o)] = act ? low(rng) : bound(rng);
      d.clipHigh[size_t(o)] = act ? high(rng) : bound(rng);
    }
  }
  return d;
}

int8_t applyEpilogue(const Epilogue& e, int32_t acc, int32_t bias) { return applyEpilogue(e, acc, bias, e.multiplier); }

int8_t applyEpilogue(const Epilogue& e, int32_t acc, int32_t bias, int32_t multiplier) {
  return applyEpilogue(e, acc, bias, multiplier, 0, 0);
}

int8_t applyEpilogue(const Epilogue& e, int32_t acc, int32_t bias, int32_t multiplier, int32_t clipLow,
                     int32_t clipHigh, int32_t multiplierLow) {
  return static_cast<int8_t>(
      static_cast<uint32_t>(epilogueValue(e, acc, bias, multiplier, clipLow, clipHigh, multiplierLow)) & 0xffu);
}

namespace {

// The requantization alone: the value before an activation function (or the result, without one).
int32_t requantizedValue(const Epilogue& e, int32_t acc, int32_t bias, int32_t multiplier, int32_t clipLow,
                         int32_t clipHigh, int32_t multiplierLow, int32_t leakyMultiplier);

// An activation function after the requantization (Epilogue::activation), to int8.
int32_t activationValue(const Epilogue& e, int32_t v) {
  if (e.activation == Epilogue::Activation::kNone) return v;
  int32_t t = 0;
  if (e.piecewiseActivation()) {
    auto clip = [](int32_t x, int a) { return std::min(std::max(x, -a), a); };
    t = clip(v, e.activationBounds[0]);
    for (size_t i = 0; i < e.activationSlopes.size(); ++i)
      t = clip(wrapAdd(shiftRight(wrapMul(t, e.activationSlopes[i]), e.activationSlopeShift), v), e.activationBounds[i + 1]);
    t = wrapAdd(t, e.activationOffset);
  } else {
    t = std::min(std::max(wrapAdd(v, e.activationOffset), 0), e.activationCeiling);
  }
  const int32_t p = e.activationTimesInput()      ? shiftRight(wrapMul(v, t), e.activationPreShift)
                    : e.piecewiseActivation() ? shiftRight(t, e.activationPreShift)
                                              : t;
  const int32_t y = shiftRight(wrapAdd(wrapMul(p, e.activationMultiplier), int32_t(1) << (e.activationShift - 1)),
                               e.activationShift);
  return std::max(std::min(y, 127), -128);
}

}  // namespace

int32_t epilogueValue(const Epilogue& e, int32_t acc, int32_t bias, int32_t multiplier, int32_t clipLow,
                      int32_t clipHigh, int32_t multiplierLow, int32_t leakyMultiplier) {
  return activationValue(e, requantizedValue(e, acc, bias, multiplier, clipLow, clipHigh, multiplierLow, leakyMultiplier));
}

namespace {

// LeakyRelu on the sum (Epilogue::leaky), wrapping int32 as the vector ALU computes it.
int32_t leakyValue(const Epilogue& e, int32_t acc, int32_t channelMultiplier) {
  if (!e.leaky) return acc;
  const int32_t m = e.leakyPerChannel ? channelMultiplier : e.leakyMultiplier;
  return std::max(acc, shiftRight(wrapMul(shiftRight(acc, e.leakyPreShift), m), e.leakyShift));
}

int32_t requantizedValue(const Epilogue& e, int32_t acc, int32_t bias, int32_t multiplier, int32_t clipLow,
                         int32_t clipHigh, int32_t multiplierLow, int32_t leakyMultiplier) {
  // The output zero point before the shift, where it joins a resident row or the bias.
  const int32_t zeroShifted = int32_t(uint32_t(e.outputZeroPoint) << e.shift);
  if (e.lowBits) {
    if (e.bias) acc = wrapAdd(acc, bias);
    acc = leakyValue(e, acc, leakyMultiplier);
    acc = std::max(std::min(acc, clipHigh), clipLow);
    const int32_t low = shiftRight(wrapMul(acc, multiplierLow), e.lowBits);
    acc = wrapAdd(wrapMul(acc, multiplier), low);
    if (e.round) acc = wrapAdd(acc, wrapAdd(int32_t(1) << (e.shift - 1), zeroShifted));
    return shiftRight(acc, e.shift);
  }
  const bool zeroBeforeShift = e.biasAfterMultiply || (e.wideScales && e.round);
  if (e.bias && !e.biasAfterMultiply) acc = wrapAdd(acc, bias);
  acc = leakyValue(e, acc, leakyMultiplier);
  if (e.preShift) acc = shiftRight(acc, e.preShift);
  if (e.preClip) acc = std::max(std::min(acc, int32_t(e.preClip)), int32_t(-e.preClip));
  if (e.perChannelClip) acc = std::max(std::min(acc, clipHigh), clipLow);
  if (e.perChannelMultiplier || multiplier != 1) acc = wrapMul(acc, multiplier);
  if (e.biasAfterMultiply) acc = wrapAdd(acc, wrapAdd(bias, zeroShifted));
  if (e.round) acc = wrapAdd(acc, wrapAdd(int32_t(1) << (e.shift - 1), e.wideScales ? zeroShifted : 0));
  acc = shiftRight(acc, e.shift);
  if (!zeroBeforeShift) acc = wrapAdd(acc, e.outputZeroPoint);
  if (e.perChannelClip) return acc;
  acc = std::min(acc, 127);
  acc = std::max(acc, e.relu ? e.outputZeroPoint : -128);
  return acc;
}

}  // namespace

void averageDivisor(int count, int32_t* multiplier, int* shift) {
  int log = 0;
  while ((1 << log) < count) ++log;
  if ((1 << log) == count) {
    *multiplier = 1;
    *shift = log;
  } else {
    *multiplier = (int32_t(1 << 15) + count / 2) / count;
    *shift = 15;
  }
}

void poolScale(const Operator& op, int32_t* multiplier, int* shift) {
  if (op.epilogue.multiplier != 1 || op.epilogue.shift != 0) {
    *multiplier = op.epilogue.multiplier;
    *shift = op.epilogue.shift;
    return;
  }
  averageDivisor(op.kernelH * op.kernelW, multiplier, shift);
}

int32_t poolRounding(const Operator& op) {
  int32_t m = 1;
  int sh = 0;
  poolScale(op, &m, &sh);
  if (!sh) return 0;
  const uint32_t window = uint32_t(op.kernelH) * uint32_t(op.kernelW);
  return int32_t((uint32_t(1) << (sh - 1)) + (uint32_t(op.epilogue.outputZeroPoint) << sh) -
                 window * uint32_t(op.inputZeroPoint) * uint32_t(m));
}

int32_t averageOf(int32_t sum, int count) {
  int32_t m = 1;
  int s = 0;
  averageDivisor(count, &m, &s);
  if (m != 1) sum = wrapMul(sum, m);
  if (s) sum = wrapAdd(sum, int32_t(1) << (s - 1));
  return shiftRight(sum, s);
}

namespace {

std::vector<int8_t> addReference(const Operator& op, const OperatorData& data) {
  if (data.input.size() != size_t(op.batch) * op.inChannels * op.height * op.width || data.input2.size() != data.input.size())
    throw Error("reference", "operand sizes do not match " + op.describe());
  std::vector<int8_t> out(data.input.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = applyEpilogue(op.epilogue,
                           wrapAdd(wrapMul(int32_t(data.input[i]) - op.zeroPointA, op.scaleA),
                                   wrapMul(int32_t(data.input2[i]) - op.zeroPointB, op.scaleB)),
                           0);
  return out;
}

std::vector<int8_t> scaleReference(const Operator& op, const OperatorData& data) {
  const size_t plane = size_t(op.height) * op.width;
  if (data.input.size() != size_t(op.batch) * op.inChannels * plane || data.input2.size() != size_t(op.batch) * op.inChannels)
    throw Error("reference", "operand sizes do not match " + op.describe());
  std::vector<int8_t> out(data.input.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = applyEpilogue(op.epilogue, wrapMul(int32_t(data.input[i]) * int32_t(data.input2[i / plane]), op.epilogue.multiplier), 0, 1);
  return out;
}

std::vector<int8_t> poolReference(const Operator& op, const OperatorData& data) {
  const int N = op.batch, C = op.inChannels, H = op.height, W = op.width, OH = op.outHeight(), OW = op.outWidth();
  if (data.input.size() != size_t(N) * C * H * W) throw Error("reference", "operand sizes do not match " + op.describe());
  const bool isMax = op.kind == OpKind::kMaxPool;
  std::vector<int8_t> out(size_t(N) * C * OH * OW);
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int y = 0; y < OH; ++y)
        for (int x = 0; x < OW; ++x) {
          int32_t acc = isMax ? -128 : 0;
          for (int ky = 0; ky < op.kernelH; ++ky)
            for (int kx = 0; kx < op.kernelW; ++kx) {
              const int iy = y * op.strideH + ky - op.padH, ix = x * op.strideW + kx - op.padW;
              // An average's padding stands for 0, the input's zero point when it has one.
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) {
                if (!isMax) acc += op.inputZeroPoint;
                continue;
              }
              const int32_t v = data.input[((size_t(n) * C + c) * H + iy) * W + ix];
              acc = isMax ? std::max(acc, v) : acc + v;
            }
          if (!isMax) {
            int32_t m = 1;
            int sh = 0;
            poolScale(op, &m, &sh);
            if (m != 1) acc = wrapMul(acc, m);
            if (sh) acc = shiftRight(wrapAdd(acc, poolRounding(op)), sh);
            acc = std::max(-128, std::min(127, acc));
          }
          out[((size_t(n) * C + c) * OH + y) * OW + x] = static_cast<int8_t>(acc);
        }
  return out;
}

}  // namespace

std::vector<int8_t> reference(const Operator& op, const OperatorData& data) {
  op.validate();
  if (op.kind == OpKind::kAdd) return addReference(op, data);
  if (op.kind == OpKind::kScale) return scaleReference(op, data);
  if (op.kind == OpKind::kMaxPool || op.kind == OpKind::kAvgPool) return poolReference(op, data);
  const int N = op.batch, C = op.inChannels, H = op.height, W = op.width, O = op.outChannels;
  const int KH = op.kernelH, KW = op.kernelW, OH = op.outHeight(), OW = op.outWidth();
  const int CG = op.groupInChannels(), OG = O / op.groups;
  if (data.input.size() != size_t(N) * C * H * W || data.weights.size() != size_t(O) * CG * KH * KW ||
      (op.epilogue.bias && data.bias.size() != size_t(O)) ||
      (op.epilogue.perChannelMultiplier && data.multipliers.size() != size_t(O)) ||
      (op.epilogue.perChannelClip && (data.clipLow.size() != size_t(O) || data.clipHigh.size() != size_t(O))) ||
      (op.residual && data.input2.size() != size_t(N) * O * OH * OW) ||
      (op.epilogue.lowBits && data.multipliersLow.size() != size_t(O)))
    throw Error("reference", "operand sizes do not match " + op.describe());
  std::vector<int8_t> out(size_t(N) * O * OH * OW);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < O; ++o)
      for (int y = 0; y < OH; ++y)
        for (int x = 0; x < OW; ++x) {
          int32_t acc = 0;
          const int c0 = (o / OG) * CG;
          for (int c = 0; c < CG; ++c)
            for (int ky = 0; ky < KH; ++ky) {
              const int iy = y * op.strideH + ky * op.dilationH - op.padH;
              if (iy < 0 || iy >= H) continue;
              for (int kx = 0; kx < KW; ++kx) {
                const int ix = x * op.strideW + kx * op.dilationW - op.padW;
                if (ix < 0 || ix >= W) continue;
                acc = wrapAdd(acc, (int32_t(data.input[((size_t(n) * C + c0 + c) * H + iy) * W + ix]) - op.inputZeroPoint) *
                                       int32_t(data.weights[((size_t(o) * CG + c) * KH + ky) * KW + kx]));
              }
            }
          const size_t i = ((size_t(n) * O + o) * OH + y) * OW + x;
          const int32_t a = epilogueValue(op.epilogue, acc, op.epilogue.bias ? data.bias[o] : 0,
                                          op.epilogue.perChannelMultiplier ? data.multipliers[o] : op.epilogue.multiplier,
                                          op.epilogue.perChannelClip ? data.clipLow[o] : 0,
                                          op.epilogue.perChannelClip ? data.clipHigh[o] : 0,
                                          op.epilogue.lowBits ? data.multipliersLow[o] : 0,
                                          op.epilogue.leakyPerChannel ? data.leakyMultipliers[o] : 0);
          // A fused residual add takes the epilogue's value from the accumulator as it is (the
          // graph compiler's clip bounds keep it in int8 range; STORE would keep its low byte).
          out[i] = op.residual ? applyEpilogue(op.residualEpilogue,
                                               wrapAdd(wrapMul(wrapAdd(a, -op.epilogue.outputZeroPoint), op.residualA),
                                                       wrapMul(int32_t(data.input2[i]) - op.residualZeroPointB, op.residualB)),
                                               0)
                               : static_cast<int8_t>(static_cast<uint32_t>(a) & 0xffu);
        }
  return out;
}

}  // namespace tessera::compiler::op
