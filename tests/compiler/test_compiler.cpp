// Compiler tests: every operator form against its host reference on each target and config; tiling, program files, printing.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <cstdlib>
#include <sstream>
#include <string>
#include <unistd.h>

#include "tessera/compiler/op/compile.h"
#include "tessera/compiler/op/dram_layout.h"
#include "tessera/compiler/op/program.h"
#include "tessera/compiler/op/suite.h"
#include "tessera/hw/config.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/target.h"
#include "tessera/support/error.h"

namespace {

using namespace tessera::compiler::op;
using tessera::Error;
using tessera::hw::Config;

bool built(const std::string& target, const Config& cfg) {
  for (const auto* t : tessera::runtime::availableTargets())
    if (t->name == target) return t->supports(cfg);
  return false;
}

// Compiles `op`, runs it on `target` and expects the reference's bytes.
void expectMatchesReference(const std::string& target, const Config& cfg, Operator op, uint32_t seed) {
  const OperatorData data = OperatorData::random(op, seed);
  const Program prog = compile(cfg, op, data);
  tessera::runtime::Session session(target, cfg);
  const RunResult r = runProgram(prog, session, data);
  const std::vector<int8_t> want = reference(op, data);
  ASSERT_EQ(r.output.size(), want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (r.output[i] != want[i] && bad++ == 0) first = i;
  EXPECT_EQ(bad, 0u) << op.describe() << " on " << target << "/" << cfg.name << " (" << prog.summary.tiling
                     << "): first mismatch at " << first << ": got " << int(r.output[first]) << ", want "
                     << int(want[first]);
}

// add and pooling: odd shapes, channel and batch padding, scales, rounding, ReLU, padding that must
// never win a max, power-of-two and general averaging windows, global pooling.
std::vector<Operator> vectorOperators() {
  std::vector<Operator> ops;
  Epilogue sum;
  sum.bias = false;
  sum.shift = 1;
  sum.round = true;
  ops.push_back(Operator::add(1, 20, 5, 7, sum));
  Epilogue scaled = sum;
  scaled.shift = 4;
  scaled.relu = true;
  Operator add2 = Operator::add(2, 16, 3, 3, scaled);
  add2.scaleA = 5;
  add2.scaleB = -3;
  ops.push_back(add2);
  Epilogue plainSum;
  plainSum.bias = false;
  plainSum.shift = 0;
  ops.push_back(Operator::add(1, 8, 4, 4, plainSum));  // saturating int8 add
  ops.push_back(Operator::maxPool(1, 20, 9, 9, 3, 2, 1));
  ops.push_back(Operator::maxPool(2, 16, 8, 8, 2, 2, 0));
  ops.push_back(Operator::maxPool(1, 16, 6, 7, 3, 1, 1));
  ops.push_back(Operator::avgPool(1, 16, 7, 7, 7, 1, 0));   // global, 49: multiply and shift
  ops.push_back(Operator::avgPool(1, 24, 8, 8, 2, 2, 0));   // 4: shift only
  ops.push_back(Operator::avgPool(2, 16, 9, 9, 3, 2, 1));   // 9 with padding counted
  ops.push_back(Operator::avgPool(1, 16, 8, 8, 4, 4, 0));   // 16
  // wide=1: int32 multipliers and the rounding constant in resident accumulator rows, shifts
  // beyond 15 (as the graph compiler makes them), negative multipliers, channel and batch padding.
  Epilogue wide = sum;
  wide.wideScales = true;
  wide.shift = 22;
  wide.relu = true;
  Operator addWide = Operator::add(2, 20, 3, 5, wide);
  addWide.scaleA = 4194303 + 977;
  addWide.scaleB = 3000017;
  ops.push_back(addWide);
  wide.shift = 27;
  wide.relu = false;
  addWide = Operator::add(1, 16, 4, 4, wide);
  addWide.scaleA = -(1 << 22) - 12345;
  addWide.scaleB = (1 << 23) + 7;
  ops.push_back(addWide);
  Operator gapWide = Operator::avgPool(1, 24, 7, 7, 7, 1, 0);
  gapWide.epilogue.multiplier = 294717;
  gapWide.epilogue.shift = 23;
  gapWide.epilogue.round = true;
  gapWide.epilogue.wideScales = true;
  ops.push_back(gapWide);
  Operator avgWide = Operator::avgPool(2, 16, 9, 9, 3, 2, 1);
  avgWide.epilogue.multiplier = (1 << 20) + 321;
  avgWide.epilogue.shift = 24;
  avgWide.epilogue.round = true;
  avgWide.epilogue.wideScales = true;
  ops.push_back(avgWide);
  // Averages of uint8-style tensors (zero points in the rounding row): a global pool with input
  // and output zero points, and a strided one with a negative output zero point.
  Operator gapZero = gapWide;
  gapZero.epilogue.multiplier = 120000;
  gapZero.epilogue.shift = 22;
  gapZero.inputZeroPoint = -100;
  gapZero.epilogue.outputZeroPoint = 37;
  ops.push_back(gapZero);
  Operator avgZero = Operator::avgPool(1, 16, 8, 8, 2, 2, 0);
  avgZero.epilogue.multiplier = 3 << 18;
  avgZero.epilogue.shift = 22;
  avgZero.epilogue.round = true;
  avgZero.epilogue.wideScales = true;
  avgZero.inputZeroPoint = 45;
  avgZero.epilogue.outputZeroPoint = -20;
  ops.push_back(avgZero);
  // Padded averages with zero points (the padding set to the input's zero point, by max for a
  // positive one and min for a negative one), strided and not, channels not whole blocks.
  Operator padZero = Operator::avgPool(1, 20, 9, 9, 3, 2, 1);
  padZero.epilogue.multiplier = 6000;
  padZero.epilogue.shift = 16;
  padZero.epilogue.round = true;
  padZero.epilogue.wideScales = true;
  padZero.inputZeroPoint = 57;
  padZero.epilogue.outputZeroPoint = 20;
  ops.push_back(padZero);
  padZero = Operator::avgPool(2, 16, 7, 6, 3, 1, 1);
  padZero.epilogue.multiplier = 9000;
  padZero.epilogue.shift = 16;
  padZero.epilogue.round = true;
  padZero.epilogue.wideScales = true;
  padZero.inputZeroPoint = -71;
  padZero.epilogue.outputZeroPoint = -5;
  ops.push_back(padZero);
  // Global averages whose windows do not fit beside their outputs in an accumulator half: the
  // window comes in chunks of rows (36x36 = 1296 entries; 3 planes of 24x24), with the divide's
  // own immediates and with the wide rescale and zero points.
  ops.push_back(Operator::avgPool(1, 16, 36, 36, 36, 1, 0));
  Operator bigZero = Operator::avgPool(1, 48, 24, 24, 24, 1, 0);
  bigZero.epilogue.multiplier = 1 << 13;
  bigZero.epilogue.shift = 23;
  bigZero.epilogue.round = true;
  bigZero.epilogue.wideScales = true;
  bigZero.inputZeroPoint = -90;
  bigZero.epilogue.outputZeroPoint = 11;
  ops.push_back(bigZero);
  // scale (a squeeze-excitation product): immediates, and wide rows with a long shift; channels
  // and batches that are not whole blocks; ReLU.
  Epilogue gate;
  gate.bias = false;
  gate.round = true;
  gate.shift = 13;
  gate.multiplier = 300;
  ops.push_back(Operator::scale(1, 20, 5, 7, gate));
  gate.wideScales = true;
  gate.shift = 24;
  gate.multiplier = 70001;
  gate.relu = true;
  ops.push_back(Operator::scale(2, 40, 4, 4, gate));
  // Ceil mode (ONNX ceil_mode): the last window hangs over the input's end by a row or a column,
  // with and without padding, and with a 2x2 window on an odd size.
  for (const auto& [h, w, k, st, p] : {std::tuple<int, int, int, int, int>{8, 8, 3, 2, 0}, {9, 10, 3, 2, 1}, {7, 7, 2, 2, 0}}) {
    Operator ceil = Operator::maxPool(1, 20, h, w, k, st, p);
    ceil.ceilMode = true;
    ops.push_back(ceil);
  }
  return ops;
}

// The low-multiplier-bits form (mul=channel clip=channel lowbits=E round=1).
Epilogue lowBitsEpilogue(int lowBits, int shift) {
  Epilogue e;
  e.perChannelMultiplier = true;
  e.perChannelClip = true;
  e.lowBits = lowBits;
  e.shift = shift;
  e.round = true;
  return e;
}

// LeakyRelu on the sum (leaky=1): a slope of 0.1 with and without a pre-shift, with the low
// multiplier bits (the scratch region then holds t, then the low product), after a depthwise
// convolution with an input zero point, with a fused residual add, and a dense layer.
std::vector<Operator> leakyOperators() {
  auto leaky = [](Epilogue e, int preShift, int mul, int shift) {
    e.leaky = true;
    e.leakyPreShift = preShift;
    e.leakyMultiplier = mul;
    e.leakyShift = shift;
    return e;
  };
  Epilogue plain;
  plain.shift = 9;
  plain.round = true;
  std::vector<Operator> ops;
  ops.push_back(Operator::conv2d(1, 20, 7, 7, 40, 3, 1, 1, leaky(plain, 2, 1638, 12)));
  ops.push_back(Operator::conv2d(2, 16, 5, 6, 24, 1, 1, 0, leaky(plain, 0, 13107, 17)));
  ops.push_back(Operator::conv2d(1, 16, 6, 6, 32, 3, 2, 1, leaky(lowBitsEpilogue(6, 22), 4, 26214, 14)));
  Operator dw = Operator::conv2d(1, 32, 6, 6, 32, 3, 1, 1, leaky(plain, 1, 3277, 14));
  dw.groups = 32;
  dw.inputZeroPoint = -128;
  ops.push_back(dw);
  Epilogue sum;
  sum.bias = false;
  sum.shift = 1;
  sum.round = true;
  Operator fused = Operator::conv2d(1, 16, 5, 5, 16, 3, 1, 1, leaky(plain, 2, 1638, 12));
  fused.residual = true;
  fused.residualB = 2;
  fused.residualEpilogue = sum;
  ops.push_back(fused);
  ops.push_back(Operator::dense(2, 48, 24, leaky(plain, 3, 819, 10)));
  // PRelu: one slope per output channel (resident), with the low bits too, and depthwise.
  Epilogue prelu = leaky(plain, 2, 0, 12);
  prelu.leakyPerChannel = true;
  ops.push_back(Operator::conv2d(1, 20, 6, 6, 40, 3, 1, 1, prelu));
  Epilogue preluLow = leaky(lowBitsEpilogue(6, 22), 4, 0, 11);
  preluLow.leakyPerChannel = true;
  ops.push_back(Operator::conv2d(1, 16, 6, 6, 32, 1, 1, 0, preluLow));
  Operator dwPrelu = Operator::conv2d(1, 32, 6, 6, 32, 3, 1, 1, prelu);
  dwPrelu.groups = 32;
  ops.push_back(dwPrelu);
  return ops;
}

// Dilated convolutions (DeepLab's atrous layers): dilation 2, 3 and 4, with stride 2, different
// dilations per axis, depthwise, and with an input zero point (its border corrections count the
// taps a dilated window leaves outside the input).
std::vector<Operator> dilatedOperators() {
  std::vector<Operator> ops;
  auto dilated = [](int c, int h, int w, int o, int k, int s, int p, int dh, int dw, int groups) {
    Epilogue relu;
    relu.relu = true;
    relu.shift = 6;
    Operator op = Operator::conv2d(1, c, h, w, o, k, s, p, relu);
    op.dilationH = dh;
    op.dilationW = dw;
    op.groups = groups;
    return op;
  };
  ops.push_back(dilated(16, 9, 9, 16, 3, 1, 2, 2, 2, 1));
  ops.push_back(dilated(20, 10, 11, 40, 3, 1, 3, 3, 3, 1));
  ops.push_back(dilated(16, 11, 11, 32, 3, 2, 2, 2, 2, 1));
  ops.push_back(dilated(16, 8, 12, 16, 3, 1, 1, 2, 1, 1));
  ops.push_back(dilated(32, 9, 9, 32, 3, 1, 2, 2, 2, 32));
  ops.push_back(dilated(16, 12, 12, 16, 3, 1, 4, 4, 4, 1));
  Operator zp = dilated(20, 9, 9, 20, 3, 1, 2, 2, 2, 1);
  zp.inputZeroPoint = -128;
  ops.push_back(zp);
  Operator zpStride = dilated(16, 10, 10, 16, 3, 2, 1, 2, 3, 1);  // padding smaller than the reach
  zpStride.inputZeroPoint = 37;
  ops.push_back(zpStride);
  return ops;
}

// Grouped convolutions: depthwise (3x3 and 5x5, stride 1 and 2, channels not a multiple of the
// block), a channel multiplier, groups of 4, 8 and 24 channels (a block holding several groups,
// groups spanning blocks unevenly), two groups, with an input zero point, low multiplier bits and
// a fused residual add.
std::vector<Operator> groupedOperators() {
  std::vector<Operator> ops;
  auto grouped = [](int n, int c, int h, int w, int o, int k, int s, int p, int groups, const Epilogue& e) {
    Operator op = Operator::conv2d(n, c, h, w, o, k, s, p, e);
    op.groups = groups;
    return op;
  };
  Epilogue relu;
  relu.relu = true;
  relu.shift = 5;
  ops.push_back(grouped(1, 24, 9, 9, 24, 3, 1, 1, 24, relu));
  ops.push_back(grouped(2, 40, 8, 7, 40, 3, 2, 1, 40, relu));
  ops.push_back(grouped(1, 20, 9, 9, 20, 5, 2, 2, 20, relu));
  ops.push_back(grouped(1, 8, 6, 6, 16, 3, 1, 1, 8, relu));    // channel multiplier 2
  ops.push_back(grouped(1, 32, 6, 6, 32, 3, 1, 1, 8, relu));   // 4 channels per group
  ops.push_back(grouped(1, 48, 5, 5, 72, 3, 1, 1, 6, relu));   // 8 in, 12 out per group: uneven
  ops.push_back(grouped(1, 48, 5, 5, 48, 3, 1, 1, 2, relu));   // 24 per group: blocks shared by both
  ops.push_back(grouped(1, 64, 5, 5, 64, 3, 1, 1, 2, relu));   // 32 per group: 2 of 4 blocks each
  ops.push_back(grouped(1, 64, 4, 4, 64, 1, 1, 0, 4, relu));   // 16 per group, 1x1
  Operator zp = grouped(1, 24, 7, 7, 24, 3, 1, 1, 24, relu);
  zp.inputZeroPoint = -128;
  ops.push_back(zp);
  Epilogue precise = lowBitsEpilogue(6, 22);
  ops.push_back(grouped(1, 36, 7, 7, 36, 3, 1, 1, 36, precise));
  Epilogue sum;
  sum.bias = false;
  sum.shift = 1;
  sum.round = true;
  Operator fused = grouped(1, 32, 5, 5, 32, 3, 1, 1, 32, relu);
  fused.residual = true;
  fused.residualB = 2;
  fused.residualEpilogue = sum;
  ops.push_back(fused);
  return ops;
}

// Small operators covering every form: kernel sizes, strides, padding, channels that are not a
// multiple of the block, batch, each epilogue step.
// The piecewise-linear sigmoid, SiLU (v and t in two regions, their product) and tanh: a 1x1
// expansion with SiLU (EfficientNet's), a depthwise SiLU, a dense sigmoid gate, a tanh.
std::vector<Operator> piecewiseOperators() {
  std::vector<Operator> ops;
  Epilogue pw;
  pw.perChannelMultiplier = true;
  pw.perChannelClip = true;
  pw.shift = 10;
  pw.round = true;
  pw.activation = Epilogue::Activation::kSilu;
  pw.activationBounds = {300, 867, 1978, 7380};
  pw.activationSlopes = {141, 167, 382};
  pw.activationSlopeShift = 7;
  pw.activationOffset = 7380;
  pw.activationPreShift = 12;
  pw.activationMultiplier = 282;
  pw.activationShift = 14;
  ops.push_back(Operator::conv2d(1, 24, 6, 7, 40, 1, 1, 0, pw));
  Operator dwSilu = Operator::conv2d(1, 32, 6, 6, 32, 3, 2, 1, pw);
  dwSilu.groups = 32;
  ops.push_back(dwSilu);
  pw.activation = Epilogue::Activation::kSigmoid;
  pw.activationPreShift = 2;
  pw.activationMultiplier = 564;
  ops.push_back(Operator::dense(2, 48, 24, pw));
  pw.activation = Epilogue::Activation::kTanh;
  pw.activationOffset = 0;
  pw.activationPreShift = 1;
  pw.activationMultiplier = 564;
  ops.push_back(Operator::conv2d(1, 16, 5, 5, 16, 3, 1, 1, pw));
  return ops;
}

std::vector<Operator> smallOperators() {
  std::vector<Operator> ops;
  Epilogue plain;
  Epilogue relu;
  relu.relu = true;
  relu.shift = 6;
  Epilogue mul;
  mul.multiplier = 3;
  mul.shift = 9;
  Epilogue noBias;
  noBias.bias = false;
  noBias.shift = 0;
  ops.push_back(Operator::conv2d(1, 16, 8, 8, 16, 3, 1, 1, plain));
  ops.push_back(Operator::conv2d(1, 20, 9, 7, 24, 3, 2, 1, relu));   // odd sizes, channel padding, stride 2
  ops.push_back(Operator::conv2d(1, 3, 16, 16, 16, 7, 2, 3, plain));  // C1's shape, small
  ops.push_back(Operator::conv2d(1, 32, 8, 8, 32, 1, 2, 0, mul));     // 1x1 stride 2
  ops.push_back(Operator::conv2d(1, 16, 6, 6, 8, 5, 1, 2, noBias));   // 5x5
  ops.push_back(Operator::conv2d(2, 8, 5, 5, 16, 3, 1, 0, relu));     // batch 2, no padding
  ops.push_back(Operator::dense(1, 64, 40, relu));
  ops.push_back(Operator::dense(2, 48, 16, mul));
  Epilogue rounded;
  rounded.bias = false;
  rounded.shift = 2;
  rounded.round = true;
  rounded.relu = true;
  ops.push_back(Operator::conv2d(1, 16, 5, 5, 16, 3, 1, 1, rounded));
  // Whole-network requantization: per-channel multipliers (vector MUL) after a pre-shift or a
  // pre-clip, with channel counts that pad the multiplier vector.
  Epilogue channel;
  channel.perChannelMultiplier = true;
  channel.preShift = 3;
  channel.shift = 20;
  channel.relu = true;
  ops.push_back(Operator::conv2d(1, 20, 7, 7, 40, 3, 1, 1, channel));
  Epilogue clipped;
  clipped.perChannelMultiplier = true;
  clipped.preClip = 900;
  clipped.shift = 14;
  clipped.round = true;
  ops.push_back(Operator::dense(2, 48, 24, clipped));
  ops.push_back(Operator::conv2d(1, 16, 6, 6, 16, 1, 1, 0, clipped));
  // Per-channel clip bounds (vector MIN/MAX) and no final clip: random bounds, so some stored
  // values wrap to their low byte, as the hardware stores them.
  Epilogue bounded;
  bounded.perChannelMultiplier = true;
  bounded.perChannelClip = true;
  bounded.shift = 9;
  bounded.relu = true;
  ops.push_back(Operator::conv2d(1, 20, 7, 7, 40, 3, 1, 1, bounded));
  bounded.relu = false;
  bounded.round = true;
  ops.push_back(Operator::dense(2, 48, 24, bounded));
  for (Operator& op : vectorOperators()) ops.push_back(op);
  // The bias after the multiply (bias=after): multipliers and biases drawn from all of int32, so
  // products and sums wrap and every target must wrap as the reference does.
  Epilogue after;
  after.perChannelMultiplier = true;
  after.perChannelClip = true;
  after.biasAfterMultiply = true;
  after.shift = 24;
  after.relu = true;
  ops.push_back(Operator::conv2d(1, 20, 7, 7, 40, 3, 1, 1, after));
  after.relu = false;
  ops.push_back(Operator::dense(2, 48, 24, after));
  // A residual add fused into the epilogue (residual=1): the epilogue's value and a second operand
  // of the output's shape, with immediates or (res_wide) resident rows; batch and channel padding,
  // tiles that split the output's rows and columns, the per-channel-clip form whose random bounds
  // leave values outside int8 in the accumulator (the add takes them as they are).
  Epilogue sumEpilogue;
  sumEpilogue.bias = false;
  sumEpilogue.shift = 3;
  sumEpilogue.round = true;
  sumEpilogue.relu = true;
  Operator fused = Operator::conv2d(2, 20, 9, 7, 24, 3, 1, 1, relu);
  fused.residual = true;
  fused.residualA = 3;
  fused.residualB = -5;
  fused.residualEpilogue = sumEpilogue;
  ops.push_back(fused);
  sumEpilogue.wideScales = true;
  sumEpilogue.shift = 22;
  sumEpilogue.relu = false;
  fused = Operator::conv2d(1, 20, 7, 7, 40, 3, 1, 1, after);
  fused.residual = true;
  fused.residualA = 4194303 + 977;
  fused.residualB = -3000017;
  fused.residualEpilogue = sumEpilogue;
  ops.push_back(fused);
  fused = Operator::dense(2, 48, 24, relu);
  fused.residual = true;
  fused.residualB = 2;
  fused.residualEpilogue.bias = false;
  fused.residualEpilogue.shift = 1;
  ops.push_back(fused);
  // Low multiplier bits (lowbits=E): the clipped accumulator's copy times the low bits, shifted,
  // added to the high product, the rounding as a resident row; random multipliers and bounds,
  // so intermediates wrap as the reference wraps them; with a fused residual add; and the
  // four-region accumulator the small tiles take.
  Epilogue precise = lowBitsEpilogue(7, 24);
  precise.relu = true;
  ops.push_back(Operator::conv2d(1, 20, 7, 7, 40, 3, 1, 1, precise));
  precise.lowBits = 3;
  precise.round = false;
  precise.relu = false;
  precise.shift = 9;
  ops.push_back(Operator::dense(2, 48, 24, precise));
  precise.lowBits = 5;
  precise.round = true;
  precise.shift = 22;
  fused = Operator::conv2d(2, 16, 6, 5, 24, 1, 1, 0, precise);
  fused.residual = true;
  fused.residualA = 7;
  fused.residualB = 3;
  fused.residualEpilogue = sumEpilogue;
  ops.push_back(fused);
  // An input zero point (inzp=Z): the bias carries -Z * sum(w), border outputs add Z times the
  // weights of their taps outside the input. uint8 with zero point 0 (Z = -128) on a 3x3 window,
  // a stride-2 window whose last row and column reach past the input, a 5x5 window with padding 2
  // (two rows and columns of border classes), batches, a dense layer, and the low-bits form.
  Operator zp = Operator::conv2d(1, 20, 7, 7, 40, 3, 1, 1, relu);
  zp.inputZeroPoint = -128;
  ops.push_back(zp);
  zp = Operator::conv2d(2, 12, 9, 8, 24, 3, 2, 1, mul);
  zp.inputZeroPoint = -3;
  ops.push_back(zp);
  zp = Operator::conv2d(2, 8, 6, 6, 16, 5, 1, 2, mul);
  zp.inputZeroPoint = 77;
  ops.push_back(zp);
  zp = Operator::dense(2, 48, 24, relu);
  zp.inputZeroPoint = 127;
  ops.push_back(zp);
  precise.lowBits = 6;
  precise.relu = true;
  precise.shift = 24;
  zp = Operator::conv2d(1, 20, 7, 7, 40, 3, 1, 1, precise);
  zp.inputZeroPoint = -128;
  ops.push_back(zp);
  // Output zero points (outzp=Z): in the low-bits form's rounding row (with an input zero point
  // too, as a QOperator file's uint8 chain needs), joined to the bias after the multiply, or an
  // immediate after the shift, with and without ReLU (then the floor is Z); add's operand zero
  // points in its wide rounding row, and a narrow add's output zero point as an immediate.
  precise.outputZeroPoint = -128;
  zp.epilogue = precise;
  ops.push_back(zp);
  precise.relu = false;
  precise.outputZeroPoint = 15;
  ops.push_back(Operator::dense(2, 48, 24, precise));
  after.outputZeroPoint = -100;
  after.relu = true;
  ops.push_back(Operator::conv2d(1, 20, 7, 7, 40, 3, 1, 1, after));
  Epilogue shifted = relu;
  shifted.outputZeroPoint = -128;
  ops.push_back(Operator::conv2d(1, 16, 6, 6, 16, 3, 1, 1, shifted));
  shifted.relu = false;
  shifted.outputZeroPoint = 33;
  ops.push_back(Operator::dense(1, 64, 40, shifted));
  Epilogue wideSum;
  wideSum.bias = false;
  wideSum.wideScales = true;
  wideSum.round = true;
  wideSum.shift = 21;
  wideSum.relu = true;
  wideSum.outputZeroPoint = -128;
  Operator zpAdd = Operator::add(2, 20, 5, 3, wideSum);
  zpAdd.scaleA = 1500000;
  zpAdd.scaleB = 2100000;
  zpAdd.zeroPointA = -128;
  zpAdd.zeroPointB = -2;
  ops.push_back(zpAdd);
  Epilogue narrowSum;
  narrowSum.bias = false;
  narrowSum.shift = 2;
  narrowSum.round = true;
  narrowSum.outputZeroPoint = -7;
  narrowSum.relu = true;
  ops.push_back(Operator::add(1, 16, 4, 4, narrowSum));
  // A fused residual add with zero points: the layer's output zero point (the add's first operand's),
  // the residual operand's (res_bzp) and the output's (res_outzp) in the wide rounding row, or the
  // output's as an immediate in the narrow form.
  precise.relu = false;
  precise.outputZeroPoint = -2;
  fused = Operator::conv2d(1, 20, 7, 7, 40, 3, 1, 1, precise);
  fused.inputZeroPoint = -128;
  fused.residual = true;
  fused.residualA = 1900000;
  fused.residualB = 1700000;
  fused.residualZeroPointB = 126 - 128;
  fused.residualEpilogue = wideSum;
  ops.push_back(fused);
  fused = Operator::conv2d(1, 16, 5, 5, 16, 3, 1, 1, relu);
  fused.residual = true;
  fused.residualB = 2;
  fused.residualEpilogue = narrowSum;
  ops.push_back(fused);
  for (Operator& g : groupedOperators()) ops.push_back(g);
  for (Operator& d : dilatedOperators()) ops.push_back(d);
  // An activation function after the requantization (act=): HardSwish's t in the scratch region,
  // with the low multiplier bits' product there before it; HardSigmoid in place; a depthwise
  // HardSwish and a dense HardSigmoid (a squeeze-excitation gate).
  Epilogue act;
  act.perChannelMultiplier = true;
  act.perChannelClip = true;
  act.shift = 10;
  act.round = true;
  act.activation = Epilogue::Activation::kHardSwish;
  act.activationOffset = 700;
  act.activationCeiling = 1400;
  act.activationPreShift = 9;
  act.activationMultiplier = 3000;
  act.activationShift = 14;
  ops.push_back(Operator::conv2d(1, 20, 7, 7, 40, 3, 1, 1, act));
  Epilogue actLow = act;
  actLow.lowBits = 5;
  actLow.shift = 20;
  ops.push_back(Operator::conv2d(2, 16, 5, 6, 24, 1, 1, 0, actLow));
  Operator dwAct = Operator::conv2d(1, 32, 6, 6, 32, 3, 1, 1, act);
  dwAct.groups = 32;
  ops.push_back(dwAct);
  act.activation = Epilogue::Activation::kHardSigmoid;
  act.activationMultiplier = 11613;
  act.activationShift = 15;
  ops.push_back(Operator::dense(2, 48, 24, act));
  ops.push_back(Operator::conv2d(1, 16, 6, 6, 16, 3, 1, 1, act));
  for (Operator& p : piecewiseOperators()) ops.push_back(p);
  for (Operator& l : leakyOperators()) ops.push_back(l);
  return ops;
}

// What parsing and validating `spec` throws ("no error" if nothing).
std::string specError(const std::string& spec) {
  try {
    Operator::parse(spec, "test").validate();
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

// gtest names are identifiers: "rtl-sc" and "default" make "rtl_sc_default".
std::string testName(const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& info) {
  std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

class OnTarget : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(OnTarget, SmallOperatorsMatchTheReference) {
  const auto& [target, config] = GetParam();
  const Config cfg = Config::load(config);
  if (!built(target, cfg)) GTEST_SKIP() << target << " not built for " << config;
  uint32_t seed = 1;
  for (const Operator& op : smallOperators()) expectMatchesReference(target, cfg, op, seed++);
}

// Weights given at run time (wgt=input): a product over token rows shaped like attention's Q.K^T
// (16 input channels, 50 rows, 64 outputs) and A.V (64 in, 16 out), a 3x3 convolution and a dense
// layer, each compiled once (with other weights, which must not matter) and run with two sets of
// weights and inputs: every target gives the reference's bits for the weights it was given.
TEST_P(OnTarget, RuntimeWeightsAreAnOperandOfEachRun) {
  const auto& [target, config] = GetParam();
  const Config cfg = Config::load(config);
  if (!built(target, cfg)) GTEST_SKIP() << target << " not built for " << config;
  Epilogue e;
  e.shift = 7;
  e.relu = false;
  Epilogue perTensor = e;
  perTensor.bias = false;
  perTensor.multiplier = 45;
  perTensor.shift = 12;
  perTensor.round = true;
  std::vector<Operator> ops = {Operator::conv2d(1, 16, 50, 1, 64, 1, 1, 0, perTensor),
                               Operator::conv2d(1, 64, 50, 1, 16, 1, 1, 0, e), Operator::conv2d(1, 20, 6, 7, 24, 3, 1, 1, e),
                               Operator::dense(2, 40, 24, perTensor)};
  tessera::runtime::Session session(target, cfg);
  for (Operator& op : ops) {
    op.runtimeWeights = true;
    const OperatorData constants = OperatorData::random(op, 1);
    const Program prog = compile(cfg, op, constants);
    EXPECT_EQ(prog.buffers[size_t(prog.bufferIndex("weights"))].role, BufferRole::kInput) << op.describe();
    EXPECT_TRUE(prog.constants().weights.empty()) << op.describe();
    const Operator back = Operator::parse(op.spec(), "test");
    EXPECT_TRUE(back.runtimeWeights) << op.spec();
    for (uint32_t seed : {2u, 3u}) {
      OperatorData data = OperatorData::random(op, seed);
      data.bias = constants.bias;  // the bias stays a constant of the program
      EXPECT_EQ(runProgram(prog, session, data).output, reference(op, data))
          << op.describe() << " on " << target << "/" << config << ", weights of seed " << seed;
    }
    OperatorData none = OperatorData::random(op, 4);
    none.weights.clear();
    EXPECT_THROW(runProgram(prog, session, none), Error) << "a run without its weights";
  }
  EXPECT_NE(specError("conv2d cin=16 h=6 w=6 cout=16 wgt=input inzp=3").find("wgt=input cannot take inzp"), std::string::npos);
  EXPECT_NE(specError("maxpool c=16 h=8 w=8 kernel=2 stride=2 wgt=input").find("wgt=input belongs to conv2d and dense"),
            std::string::npos);
  EXPECT_NE(specError("conv2d cin=16 h=6 w=6 cout=16 wgt=const").find("wgt takes only 'input'"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(All, OnTarget,
                         ::testing::Combine(::testing::Values("fsim", "tsim", "hls", "rtl-sc", "hls-sc"),
                                            ::testing::Values("default", "small", "batch2")),
                         testName);

// Runs `op` on fsim under every legal tiling of the given tile sizes (tci 1 and 2) against the
// reference; returns how many there were.
int everyTilingMatches(const Config& cfg, const Operator& op, const OperatorData& data, std::vector<int> tcos,
                       std::vector<int> ths, std::vector<int> tws) {
  const std::vector<int8_t> want = reference(op, data);
  tessera::runtime::Session session("fsim", cfg);
  int checked = 0;
  for (int tco : tcos)
    for (int th : ths)
      for (int tw : tws)
        for (int tci : {1, 2}) {
          const Tiling t{tco, th, tw, tci};
          if (!tilingProblem(cfg, op, t).empty()) continue;
          CompileOptions o;
          o.tiling = t;
          const Program prog = compile(cfg, op, data, o);
          EXPECT_EQ(runProgram(prog, session, data).output, want) << op.describe() << " with " << prog.summary.tiling;
          ++checked;
        }
  return checked;
}

// everyTilingMatches over each of `ops` with random operands of `seed`; how many tilings ran.
int everyTilingOfEach(const Config& cfg, const std::vector<Operator>& ops, uint32_t seed, std::vector<int> tcos,
                      std::vector<int> ths, std::vector<int> tws) {
  int checked = 0;
  for (const Operator& op : ops) checked += everyTilingMatches(cfg, op, OperatorData::random(op, seed), tcos, ths, tws);
  return checked;
}

// An input zero point's border corrections under tilings that split the output's rows and columns
// (border runs in several tiles, some tiles with none), one and three channel blocks per tile, and
// the four accumulator regions small tiles take: every legal one of them against the reference.
TEST(InputZeroPoint, EveryTilingMatchesTheReference) {
  const Config cfg = Config::load("default");
  Epilogue e;
  e.shift = 7;
  e.relu = false;
  int checked = 0;
  for (const auto& [kernel, stride, pad, zp] : {std::tuple<int, int, int, int>{3, 1, 1, -128}, {3, 2, 1, 45}, {5, 1, 2, -7}}) {
    Operator op = Operator::conv2d(1, 20, 8, 8, 40, kernel, stride, pad, e);
    op.inputZeroPoint = zp;
    const OperatorData data = OperatorData::random(op, uint32_t(100 + kernel + zp));
    checked += everyTilingMatches(cfg, op, data, {1, 3}, {1, 2, 4, 8}, {1, 2, 4, 8});
  }
  EXPECT_GT(checked, 40);
}

// Grouped convolutions under every legal tiling of a few shapes, and what the lowering reads: only
// the input blocks an output block's groups need, so a depthwise layer's padded MACs are 1/CIB of
// a dense one's.
TEST(GroupedConv, EveryTilingMatchesTheReference) {
  const Config cfg = Config::load("default");
  EXPECT_GT(everyTilingOfEach(cfg, groupedOperators(), 7, {1, 2, 4}, {1, 2, 3, 4, 5, 7, 9}, {1, 2, 3, 4, 7}), 40);
  Operator dw = Operator::conv2d(1, 64, 8, 8, 64, 3, 1, 1);
  dw.groups = 64;
  Operator dense = dw;
  dense.groups = 1;
  const Program a = compile(cfg, dw, OperatorData::random(dw, 1)), b = compile(cfg, dense, OperatorData::random(dense, 1));
  EXPECT_EQ(a.summary.paddedMacs * 4, b.summary.paddedMacs);
  EXPECT_EQ(dw.macs() * 64, dense.macs());
  // Output blocks reading different input blocks never share a tile.
  EXPECT_NE(tilingProblem(cfg, dw, Tiling{2, 8, 8, 1}).find("different input blocks"), std::string::npos);
}

// A global average too large for an accumulator half runs in chunks of rows under every tiling.
TEST(ChunkedAverage, EveryTilingMatchesTheReference) {
  const Config cfg = Config::load("default");
  Operator op = Operator::avgPool(1, 64, 40, 40, 40, 1, 0);
  const OperatorData data = OperatorData::random(op, 23);
  EXPECT_TRUE(tilingProblem(cfg, op, Tiling{1, 1, 1, 1}).empty()) << tilingProblem(cfg, op, Tiling{1, 1, 1, 1});
  EXPECT_GE(everyTilingMatches(cfg, op, data, {1, 2, 4}, {1}, {1}), 3);
  const Program prog = compile(cfg, op, data);
  EXPECT_NE(prog.summary.tiling.find("tco="), std::string::npos);
}

// An average's zero points survive the spec, are refused where they cannot join the rounding row,
// and a padded average's padding counts as the input's zero point under every tiling.
TEST(AverageZeroPoints, SpecRoundTripErrorsAndPadding) {
  const Operator op = Operator::parse("avgpool c=16 h=7 w=7 kernel=7 mul=120000 shift=22 round=1 wide=1 inzp=-100 outzp=37", "test");
  const Operator back = Operator::parse(op.spec(), "again");
  EXPECT_EQ(back.inputZeroPoint, -100);
  EXPECT_EQ(back.epilogue.outputZeroPoint, 37);
  EXPECT_EQ(tessera::compiler::op::poolRounding(op), int32_t((1u << 21) + (37u << 22) - 49u * uint32_t(-100) * 120000u));
  // A padded one's padding counts as its zero point: at the corner of a 3x3 window with one pixel
  // of padding, five taps are padding. Every tiling lays the padding fix-ups out differently.
  const Operator padded = Operator::parse("avgpool c=16 h=8 w=8 kernel=3 pad=1 mul=6000 shift=16 round=1 wide=1 inzp=-93", "test");
  OperatorData d = OperatorData::random(padded, 5);
  int32_t corner = 5 * -93;
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x) corner += d.input[size_t(y * 8 + x)];
  int32_t want = int32_t(uint32_t(corner) * 6000u + uint32_t(tessera::compiler::op::poolRounding(padded))) >> 16;
  EXPECT_EQ(int(reference(padded, d).at(0)), std::max(-128, std::min(127, want)));
  EXPECT_GE(everyTilingMatches(Config::load("default"), padded, d, {1}, {1, 2, 4, 8}, {1, 2, 4, 8}), 12);
  EXPECT_GE(everyTilingMatches(Config::load("small"), padded, d, {1, 2, 4}, {1, 8}, {1, 8}), 6);
  EXPECT_NE(specError("avgpool c=16 h=8 w=8 kernel=2 stride=2 outzp=3").find("need the wide rescale"), std::string::npos);
  EXPECT_NE(specError("maxpool c=16 h=8 w=8 kernel=2 stride=2 inzp=3").find("inzp belongs to conv2d, dense and avgpool"),
            std::string::npos);
  EXPECT_NE(specError("avgpool c=16 h=8 w=8 kernel=8 mul=1073741824 shift=31 round=1 wide=1 inzp=-128").find("can leave int32"),
            std::string::npos);
}

// LeakyRelu's spec round-trips, its errors name the key, and every tiling of its operators matches.
TEST(LeakyEpilogue, SpecErrorsAndEveryTiling) {
  const Operator op = Operator::parse("conv2d cin=16 h=6 w=6 cout=16 kernel=3 pad=1 leaky=1 leaky_preshift=2 leaky_mul=1638 leaky_shift=12", "test");
  EXPECT_TRUE(op.epilogue.leaky);
  const Operator back = Operator::parse(op.spec(), "again");
  EXPECT_EQ(back.epilogue.leakyMultiplier, 1638);
  EXPECT_EQ(back.epilogue.leakyPreShift, 2);
  EXPECT_EQ(back.epilogue.leakyShift, 12);
  EXPECT_NE(op.describe().find("LeakyRelu max(acc, ((acc >> 2) * 1638) >> 12)"), std::string::npos) << op.describe();
  EXPECT_NE(specError("conv2d cin=16 h=6 w=6 cout=16 leaky=1 leaky_mul=40000 leaky_shift=16").find("leaky_mul must be in [0, 32767]"),
            std::string::npos);
  EXPECT_NE(specError("conv2d cin=16 h=6 w=6 cout=16 leaky=1 leaky_mul=300 leaky_shift=8").find("must be below 1"), std::string::npos);
  EXPECT_NE(specError("conv2d cin=16 h=6 w=6 cout=16 leaky=1 leaky_mul=30 leaky_shift=8 relu=1").find("no relu"), std::string::npos);
  EXPECT_NE(specError("conv2d cin=16 h=6 w=6 cout=16 leaky_mul=30").find("need leaky=1"), std::string::npos);
  EXPECT_NE(specError("maxpool c=16 h=6 w=6 kernel=2 stride=2 leaky=1 leaky_mul=1 leaky_shift=4").find("leaky belongs to conv2d and dense"),
            std::string::npos);
  const Operator prelu = Operator::parse("conv2d cin=16 h=6 w=6 cout=16 kernel=3 pad=1 leaky=1 leaky_preshift=2 leaky_mul=channel leaky_shift=12", "test");
  EXPECT_TRUE(Operator::parse(prelu.spec(), "again").epilogue.leakyPerChannel);
  EXPECT_NE(prelu.describe().find("PRelu max(acc, ((acc >> 2) * slope[o]) >> 12)"), std::string::npos) << prelu.describe();
  const Config cfg = Config::load("default");
  OperatorData steep = OperatorData::random(prelu, 3);
  steep.leakyMultipliers[5] = (1 << 14) + 1;  // a slope just above 1
  try {
    compile(cfg, prelu, steep);
    ADD_FAILURE() << "a slope above 1 compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("slope multiplier 16385 of channel 5 is beyond 2^14"), std::string::npos) << e.what();
  }
  EXPECT_GT(everyTilingOfEach(cfg, leakyOperators(), 17, {1, 2}, {1, 2, 5}, {1, 3, 6}), 20);
}

// Dilated convolutions under every legal tiling; the spec round-trips and its errors name the key.
TEST(DilatedConv, EveryTilingMatchesTheReference) {
  const Config cfg = Config::load("default");
  EXPECT_GT(everyTilingOfEach(cfg, dilatedOperators(), 11, {1, 2}, {1, 2, 3, 5, 9}, {1, 2, 4, 7}), 40);
  const Operator op = Operator::parse("conv2d cin=16 h=9 w=9 cout=16 kernel=3 pad=2 dilation=2", "test");
  EXPECT_EQ(op.outHeight(), 9);
  EXPECT_EQ(Operator::parse(op.spec(), "again").dilationW, 2);
  EXPECT_NE(op.describe().find("dilation 2x2"), std::string::npos) << op.describe();
  EXPECT_NE(specError("conv2d cin=16 h=9 w=9 cout=16 kernel=3 pad=1 dilation=0").find("dilation height must be positive"),
            std::string::npos);
  EXPECT_NE(specError("maxpool c=16 h=9 w=9 kernel=3 dilation=2").find("dilation belongs to conv2d"), std::string::npos);
  EXPECT_NE(specError("conv2d cin=16 h=4 w=4 cout=16 kernel=3 dilation=3").find("kernel extent 7x7 is larger"),
            std::string::npos);
}

// The activation's spec survives a round trip, its errors name the key, and random operands do
// reach every part of it (t below 0, inside, above C), so the targets' agreement means something.
TEST(Activation, SpecRoundTripErrorsAndCoverage) {
  const std::string spec = "conv2d cin=16 h=5 w=5 cout=16 kernel=3 pad=1 mul=channel clip=channel shift=10 round=1 "
                           "act=hardswish act_k=700 act_max=1400 act_preshift=9 act_mul=3000 act_shift=14";
  const Operator op = Operator::parse(spec, "test");
  EXPECT_EQ(op.epilogue.activation, Epilogue::Activation::kHardSwish);
  const Operator again = Operator::parse(op.spec(), "again");
  EXPECT_EQ(again.spec(), op.spec());
  EXPECT_NE(op.describe().find("HardSwish"), std::string::npos) << op.describe();
  EXPECT_NE(specError("conv2d cin=16 h=5 w=5 cout=16 act=hardswish act_max=10").find("act needs clip=channel"), std::string::npos);
  EXPECT_NE(specError("conv2d cin=16 h=5 w=5 cout=16 mul=channel clip=channel act=swish").find("act takes hardswish"),
            std::string::npos);
  EXPECT_NE(specError("conv2d cin=16 h=5 w=5 cout=16 mul=channel clip=channel act=hardsigmoid act_max=10 act_shift=16")
                .find("act_shift must be in [1, 15]"),
            std::string::npos);
  EXPECT_NE(specError("add c=4 h=4 w=4 shift=1 act=hardsigmoid act_max=10").find("act belongs to conv2d and dense"),
            std::string::npos);
  // Random operands reach every part of it: t = 0 (output 0), negative inputs, and many values.
  const std::vector<int8_t> out = reference(op, OperatorData::random(op, 5));
  const std::set<int> distinct(out.begin(), out.end());
  EXPECT_GT(distinct.size(), 40u) << "the outputs hardly vary";
  EXPECT_TRUE(distinct.count(0));
  EXPECT_LT(*distinct.begin(), 0);
}

// The piecewise-linear activations: specs round-trip, errors name the key, and random operands
// reach both saturations and the negative lobe, so the targets' agreement means something.
TEST(Activation, PiecewiseSpecsErrorsAndCoverage) {
  const std::string base = "conv2d cin=16 h=6 w=6 cout=16 kernel=3 pad=1 mul=channel clip=channel shift=10 round=1 ";
  const std::string silu = base + "act=silu act_k=7380 act_bounds=300,867,1978,7380 act_slopes=141,167,382 "
                                  "act_slope_shift=7 act_preshift=12 act_mul=282 act_shift=14";
  const Operator op = Operator::parse(silu, "test");
  EXPECT_EQ(op.epilogue.activation, Epilogue::Activation::kSilu);
  EXPECT_EQ(op.epilogue.activationBounds[3], 7380);
  EXPECT_EQ(op.epilogue.activationSlopes[2], 382);
  EXPECT_EQ(Operator::parse(op.spec(), "again").spec(), op.spec());
  EXPECT_NE(op.describe().find("SiLU"), std::string::npos) << op.describe();
  EXPECT_NE(specError(base + "act=tanh act_bounds=1,2,3").find("act_bounds takes 4 comma-separated integers"),
            std::string::npos);
  EXPECT_NE(specError(base + "act=tanh act_slopes=1,x,3").find("act_slopes takes 3"), std::string::npos);
  EXPECT_NE(specError(base + "act=sigmoid act_bounds=1,2,3,40000").find("act_bounds must be 4 values in [0, 32767]"),
            std::string::npos);
  EXPECT_NE(specError(base + "act=sigmoid act_bounds=1,2,3,4 act_slope_shift=16").find("act_slope_shift must be in [0, 15]"),
            std::string::npos);
  const OperatorData d = OperatorData::random(op, 7);
  const std::vector<int8_t> out = reference(op, d);
  const std::set<int> distinct(out.begin(), out.end());
  EXPECT_GT(distinct.size(), 30u) << "the outputs hardly vary";
  EXPECT_TRUE(distinct.count(0));
  EXPECT_GT(*distinct.rbegin(), 100) << "large inputs, where SiLU is x, are never reached";
  EXPECT_LT(*distinct.begin(), -2) << "SiLU's negative lobe is never reached";
  for (const Operator& p : piecewiseOperators()) {
    const std::vector<int8_t> o = reference(p, OperatorData::random(p, 11));
    EXPECT_GT(std::set<int>(o.begin(), o.end()).size(), 20u) << p.spec() << ": the outputs hardly vary";
  }
  EXPECT_GT(everyTilingOfEach(Config::load("default"), piecewiseOperators(), 23, {1, 2}, {1, 2, 3, 6}, {1, 3, 7}), 20);
}

TEST(Scale, SpecRoundTripAndErrors) {
  const Operator op = Operator::parse("scale c=32 h=7 w=7 mul=5000 shift=20 round=1 wide=1", "test");
  EXPECT_EQ(op.kind, OpKind::kScale);
  EXPECT_EQ(Operator::parse(op.spec(), "again").spec(), op.spec());
  EXPECT_NE(op.describe().find("a*b*5000"), std::string::npos) << op.describe();
  EXPECT_NE(specError("scale c=8 h=4 w=4 mul=3 shift=4").find("needs round=1"), std::string::npos);
  EXPECT_NE(specError("scale c=8 h=4 w=4 mul=3 shift=20 round=1").find("shift goes to 15"), std::string::npos);
  EXPECT_NE(specError("scale c=8 h=4 w=4 mul=200000 shift=20 round=1 wide=1").find("leaves int32"), std::string::npos);
  EXPECT_NE(specError("scale c=8 h=4 w=4 kernel=3 mul=3 shift=4 round=1").find("no kernel"), std::string::npos);
}

TEST(MaxPoolCeilMode, SizesSpecAndErrors) {
  Operator op = Operator::parse("maxpool c=16 h=8 w=7 kernel=3 stride=2 ceil=1", "test");
  EXPECT_TRUE(op.ceilMode);
  EXPECT_EQ(op.outHeight(), 4);  // floor mode: 3
  EXPECT_EQ(op.outWidth(), 3);   // (7 - 3) / 2 + 1 either way
  EXPECT_TRUE(Operator::parse(op.spec(), "again").ceilMode);
  EXPECT_NE(specError("avgpool c=16 h=8 w=8 kernel=3 stride=2 ceil=1").find("ceil=1 belongs to maxpool"), std::string::npos);
  EXPECT_NE(specError("maxpool c=16 h=8 w=8 kernel=3 stride=2 ceil=2").find("ceil must be 0 or 1"), std::string::npos);
  // A 1x1 window with stride 3 on 4 rows: the ceil-mode last window would start past the input.
  EXPECT_NE(specError("maxpool c=16 h=5 w=5 kernel=1 stride=3 ceil=1").find("start past the input"), std::string::npos);
}

TEST(GroupedConv, SpecRoundTripLayoutAndErrors) {
  const Operator op = Operator::parse("conv2d cin=48 h=5 w=5 cout=48 kernel=3 pad=1 groups=2", "test");
  EXPECT_EQ(op.groups, 2);
  EXPECT_EQ(Operator::parse(op.spec(), "again").groups, 2);
  EXPECT_NE(op.describe().find("[48][24][3][3]"), std::string::npos) << op.describe();
  EXPECT_NE(specError("conv2d cin=48 h=5 w=5 cout=40 groups=6").find("groups=6 must divide cin=48 and cout=40"), std::string::npos);
  EXPECT_NE(specError("conv2d cin=48 h=5 w=5 cout=48 groups=0").find("groups must be positive"), std::string::npos);
  EXPECT_NE(specError("dense cin=48 cout=48 groups=2").find("groups belongs to conv2d"), std::string::npos);
  // The packed layout: two groups of 32 channels in blocks of 16: each output block reads its
  // group's 2 of 4 input blocks; two of 24: the middle output block straddles both groups, so all
  // read the 3 blocks; packing round-trips.
  const Config cfg = Config::load("default");
  const WeightLayout l = weightLayout(cfg, 64, 64, 3, 3, 2);
  EXPECT_EQ(l.reductionBlocks(), 2);
  EXPECT_EQ(l.firstInBlock(1), 0);
  EXPECT_EQ(l.firstInBlock(2), 2);
  std::vector<int8_t> w(size_t(64) * 32 * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = int8_t(i * 7 + 1);
  EXPECT_EQ(unpackWeights(l, packWeights(l, w)), w);
  const WeightLayout straddle = weightLayout(cfg, 48, 48, 3, 3, 2);
  EXPECT_EQ(straddle.reductionBlocks(), 3);
  EXPECT_EQ(straddle.firstInBlock(2), 0);
  const WeightLayout d = weightLayout(cfg, 40, 40, 3, 3, 40);
  EXPECT_EQ(d.reductionBlocks(), 1);
  EXPECT_EQ(d.bytes(), uint64_t(3) * 9 * 16 * 16);
}

// The zero point survives the spec and the program file; its errors name the key.
TEST(InputZeroPoint, SpecRoundTripAndErrors) {
  const Operator op = Operator::parse("conv2d cin=8 h=5 w=5 cout=8 kernel=3 pad=1 inzp=-128", "test");
  EXPECT_EQ(op.inputZeroPoint, -128);
  EXPECT_EQ(Operator::parse(op.spec(), "spec").inputZeroPoint, -128);
  EXPECT_NE(op.describe().find("input zero point -128"), std::string::npos);
  const Config cfg = Config::load("default");
  const OperatorData data = OperatorData::random(op, 5);
  const Program prog = compile(cfg, op, data);
  const Program back = Program::deserialize(prog.serialize(), "mem");
  EXPECT_EQ(back.op.inputZeroPoint, -128);
  // The constants read back are the operator's (the bias without the folded share).
  EXPECT_EQ(back.constants().bias, data.bias);
  EXPECT_NE(specError("conv2d cin=8 h=5 w=5 cout=8 inzp=128").find("inzp must be in [-128, 127]"), std::string::npos);
  EXPECT_NE(specError("conv2d cin=8 h=5 w=5 cout=8 bias=0 inzp=3").find("inzp needs the bias first"), std::string::npos);
  EXPECT_NE(specError("conv2d cin=8 h=5 w=5 cout=8 bias=after mul=channel clip=channel shift=24 inzp=3").find("inzp needs the bias first"),
            std::string::npos);
  EXPECT_NE(specError("add c=4 h=4 w=4 inzp=3").find("inzp belongs to conv2d, dense and avgpool"), std::string::npos);
}

std::vector<Operator> resnet18() {
  std::vector<Operator> ops;
  for (const SuiteLayer& l : resnet18Suite()) ops.push_back(l.op);
  for (const SuiteLayer& l : resnet18VectorSuite()) ops.push_back(l.op);
  return ops;
}

class ResNet18 : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(ResNet18, EveryLayerMatchesTheReference) {
  const auto& [target, config] = GetParam();
  const Config cfg = Config::load(config);
  if (!built(target, cfg)) GTEST_SKIP() << target << " not built for " << config;
  uint32_t seed = 100;
  for (const Operator& op : resnet18()) {
    SCOPED_TRACE(op.name);
    expectMatchesReference(target, cfg, op, seed++);
  }
}

// The RTL and HLS in SystemC and the HLS C simulation run ResNet-18 too; `small` (13x the cycles of
// `default` on its 1x4x4 core) is left to fsim and tsim there to keep the suite's time reasonable.
INSTANTIATE_TEST_SUITE_P(Suite, ResNet18,
                         ::testing::Combine(::testing::Values("fsim", "tsim"),
                                            ::testing::Values("default", "small", "batch2")),
                         testName);
INSTANTIATE_TEST_SUITE_P(OtherModels, ResNet18,
                         ::testing::Combine(::testing::Values("hls", "rtl-sc", "hls-sc"),
                                            ::testing::Values("default", "batch2")),
                         testName);

TEST(Tiling, EveryChosenTilingIsLegalAndBeatsTheSmallest) {
  for (const char* config : {"default", "small", "batch2"}) {
    const Config cfg = Config::load(config);
    for (const Operator& op : resnet18()) {
      uint64_t legal = 0;
      const Tiling t = chooseTiling(cfg, op, &legal);
      EXPECT_GT(legal, 0u);
      EXPECT_EQ(tilingProblem(cfg, op, t), "") << op.name;
      const Tiling smallest{1, 1, 1, 1};
      if (tilingProblem(cfg, op, smallest).empty()) {
        EXPECT_LE(estimateCycles(cfg, op, t).cycles, estimateCycles(cfg, op, smallest).cycles) << op.name;
      }
    }
  }
}

// Every legal tiling of the vector operators, not only the chosen one, computes the reference:
// tiles with and without padding on each side, plane groups, split rows and columns.
TEST(Tiling, EveryLegalVectorTilingMatchesTheReference) {
  for (const char* config : {"default", "batch2"}) {
    const Config cfg = Config::load(config);
    tessera::runtime::Session session("fsim", cfg);
    for (const Operator& op : {Operator::maxPool(1, 40, 9, 9, 3, 2, 1), Operator::avgPool(1, 24, 6, 6, 3, 1, 1),
                               vectorOperators()[1], vectorOperators()[10], vectorOperators()[13]}) {
      const OperatorData data = OperatorData::random(op, 9);
      const std::vector<int8_t> want = reference(op, data);
      int tried = 0;
      for (int tco = 1; tco <= 4; ++tco)
        for (int th = 1; th <= op.outHeight(); ++th)
          for (int tw = 1; tw <= op.outWidth(); ++tw) {
            const Tiling t{tco, th, tw, 1};
            if (!tilingProblem(cfg, op, t).empty()) continue;
            CompileOptions o;
            o.tiling = t;
            ++tried;
            EXPECT_EQ(runProgram(compile(cfg, op, data, o), session, data).output, want)
                << op.describe() << " tiling " << tco << "," << th << "," << tw << " on " << config;
          }
      EXPECT_GE(tried, 4) << op.describe();
    }
  }
}

TEST(Tiling, IllegalRequestsAreRefusedWithTheReason) {
  const Config cfg = Config::load("small");
  const Operator op = Operator::conv2d(1, 64, 56, 56, 64, 3, 1, 1);
  EXPECT_NE(tilingProblem(cfg, op, Tiling{3, 1, 1, 1}).find("does not divide"), std::string::npos);
  EXPECT_NE(tilingProblem(cfg, op, Tiling{16, 56, 56, 16}).find("a half holds"), std::string::npos);
  CompileOptions o;
  o.tiling = Tiling{16, 56, 56, 16};
  try {
    compile(cfg, op, OperatorData::random(op, 1), o);
    ADD_FAILURE() << "an oversized tiling compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("requested tiling"), std::string::npos) << e.what();
  }
}

TEST(Operator, SpecRoundTripsAndBadSpecsAreNamed) {
  for (const Operator& op : smallOperators()) {
    const Operator back = Operator::parse(op.spec(), "test");
    EXPECT_EQ(back.spec(), op.spec());
  }
  EXPECT_EQ(Operator::parse("maxpool c=64 h=112 w=112 kernel=3 stride=2 pad=1", "t").spec(),
            Operator::maxPool(1, 64, 112, 112, 3, 2, 1).spec());
  EXPECT_TRUE(Operator::parse("conv2d cin=4 h=4 w=4 cout=4 bias=after mul=channel clip=channel shift=24", "t")
                  .epilogue.biasAfterMultiply);
  EXPECT_FALSE(Operator::parse("conv2d cin=4 h=4 w=4 cout=4 bias=after bias=1", "t").epilogue.biasAfterMultiply);
  EXPECT_TRUE(Operator::parse("add c=4 h=4 w=4 mul_a=9000000 shift=23 round=1 wide=1", "t").epilogue.wideScales);
  for (const char* bad : {"conv2d cin=0 h=4 w=4 cout=4 kernel=3 pad=1", "conv2d cin=4 h=4 w=4 cout=4 kernel=3 pad=3",
                          "pool cin=4", "conv2d cin=4 h=4 w=4 cout=4 frobnicate=1", "conv2d cin=x",
                          "maxpool c=4 h=4 w=4 kernel=3 shift=2", "add c=4 h=2 w=2 kernel=3", "add c=4 h=2 w=2 bias=1",
                          "conv2d cin=4 h=4 w=4 cout=4 kernel=3 round=1 shift=0", "add c=4 h=4 w=4 mul_a=40000",
                          "conv2d c=4 h=4 w=4", "avgpool cin=4 cout=8 h=4 w=4 kernel=2", "dense cin=4 cout=4 mul_b=2",
                          "add c=4 h=4 w=4 shift=20 round=1", "maxpool c=4 h=4 w=4 kernel=2 wide=1",
                          "conv2d cin=4 h=4 w=4 cout=4 wide=1", "avgpool c=4 h=4 w=4 kernel=4 wide=1",
                          "add c=4 h=4 w=4 mul_a=1000000000 mul_b=1000000000 shift=20 round=1 wide=1",
                          "avgpool c=4 h=7 w=7 kernel=7 mul=1000000 shift=23 round=1 wide=1",
                          "add c=4 h=4 w=4 bias=after", "conv2d cin=4 h=4 w=4 cout=4 bias=later",
                          "add c=4 h=4 w=4 residual=1", "conv2d cin=4 h=4 w=4 cout=4 res_mul_a=2",
                          "conv2d cin=4 h=4 w=4 cout=4 residual=1 res_mul_b=40000",
                          "conv2d cin=4 h=4 w=4 cout=4 residual=1 res_shift=20 res_round=1",
                          "conv2d cin=4 h=4 w=4 cout=4 residual=2",
                          "conv2d cin=4 h=4 w=4 cout=4 residual=1 res_wide=1 res_mul_a=1000000000 "
                          "res_mul_b=1000000000 res_shift=20 res_round=1",
                          "conv2d cin=4 h=4 w=4 cout=4 lowbits=3", "conv2d cin=4 h=4 w=4 cout=4 mul=channel lowbits=3",
                          "conv2d cin=4 h=4 w=4 cout=4 mul=channel clip=channel lowbits=8",
                          "conv2d cin=4 h=4 w=4 cout=4 mul=channel clip=channel bias=after lowbits=2",
                          "add c=4 h=4 w=4 lowbits=2"}) {
    try {
      Operator::parse(bad, "spec");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("spec"), std::string::npos) << bad << ": " << e.what();
    }
  }
}

TEST(Layout, PackingRoundTripsWithZeroPadding) {
  const Config cfg = Config::load("batch2");
  const ActivationLayout l = inputLayout(cfg, 3, 20, 4, 5);
  std::vector<int8_t> x(size_t(3) * 20 * 4 * 5);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(i * 7 + 1);
  const auto packed = packActivations(l, x);
  EXPECT_EQ(packed.size(), l.bytes());
  EXPECT_EQ(unpackActivations(l, packed), x);
  size_t zeros = 0;
  for (int8_t v : packed) zeros += v == 0;
  EXPECT_GE(zeros, packed.size() - x.size());
}

TEST(ProgramFile, RoundTripsAndRunsTheSame) {
  const Config cfg = Config::load("small");
  Operator op = Operator::conv2d(1, 8, 6, 6, 8, 3, 1, 1);
  const OperatorData data = OperatorData::random(op, 5);
  const Program prog = compile(cfg, op, data);
  const Program back = Program::deserialize(prog.serialize(), "memory");
  EXPECT_EQ(back.serialize(), prog.serialize());
  tessera::runtime::Session session("fsim", cfg);
  EXPECT_EQ(runProgram(back, session, data).output, reference(op, data));
  // Files: no overwrite without asking; corrupt and truncated files are refused with the reason.
  char dir[] = "/tmp/tessera_compiler_test_XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/conv.tprog";
  prog.save(path, false);
  EXPECT_THROW(prog.save(path, false), Error);
  EXPECT_EQ(Program::load(path).serialize(), prog.serialize());
  std::vector<uint8_t> bytes = prog.serialize();
  bytes[bytes.size() / 2] ^= 0x40;
  try {
    Program::deserialize(bytes, "corrupt");
    ADD_FAILURE() << "corrupt program accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
  }
  bytes = prog.serialize();
  bytes.resize(bytes.size() - 20);
  EXPECT_THROW(Program::deserialize(bytes, "truncated"), Error);
  EXPECT_THROW(Program::deserialize({'n', 'o', 'p', 'e'}, "tiny"), Error);
  // The program refuses a session of another config.
  tessera::runtime::Session other("fsim", Config::load("default"));
  EXPECT_THROW(runProgram(prog, other, data), Error);
  std::remove(path.c_str());
  ::rmdir(dir);
}

TEST(ProgramFile, VectorOperatorsRoundTripAndRunTheSame) {
  const Config cfg = Config::load("default");
  tessera::runtime::Session session("fsim", cfg);
  for (const Operator& op : vectorOperators()) {
    const OperatorData data = OperatorData::random(op, 3);
    const Program prog = compile(cfg, op, data);
    const Program back = Program::deserialize(prog.serialize(), "memory");
    EXPECT_EQ(back.serialize(), prog.serialize()) << op.describe();
    EXPECT_EQ(runProgram(back, session, data).output, reference(op, data)) << op.describe();
    EXPECT_TRUE(back.constants().weights.empty());
  }
  // add needs its second operand.
  const Operator add = vectorOperators()[0];
  OperatorData missing = OperatorData::random(add, 1);
  missing.input2.clear();
  EXPECT_THROW(runProgram(compile(cfg, add, missing), session, missing), Error);
}

TEST(PrintAfterAll, ShowsEveryStageOfAVectorOperator) {
  const Config cfg = Config::load("default");
  const Operator op = Operator::maxPool(1, 32, 9, 9, 3, 2, 1);
  std::ostringstream os;
  CompileOptions o;
  o.printAfterAll = &os;
  compile(cfg, op, OperatorData::random(op, 2), o);
  const std::string s = os.str();
  for (const char* stage : {"after operator", "after tiling search", "after loop nest", "after runtime calls",
                            "after instruction selection", "after summary", "padding never wins", "VTALoadBuffer2D(",
                            "ACC_8BIT", "VTAPushALUOp(", "MAX", "VTADepPush(", "ALU micro-ops"})
    EXPECT_NE(s.find(stage), std::string::npos) << stage;
}

TEST(PrintAfterAll, ShowsEveryStage) {
  const Config cfg = Config::load("default");
  Operator op = Operator::conv2d(1, 32, 8, 8, 32, 3, 1, 1);
  std::ostringstream os;
  CompileOptions o;
  o.printAfterAll = &os;
  compile(cfg, op, OperatorData::random(op, 2), o);
  const std::string s = os.str();
  for (const char* stage : {"after operator", "after tiling search", "after loop nest", "after runtime calls",
                            "after instruction selection", "after summary", "VTALoadBuffer2D(", "VTAUopPush(",
                            "VTADepPush(", "VTADepPop(", "GEMM", "FINISH", "SRAM occupancy"})
    EXPECT_NE(s.find(stage), std::string::npos) << stage;
}

}  // namespace
