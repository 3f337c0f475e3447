// Operator descriptions the compiler accepts (quantized conv2d and dense), their data and host references.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tessera::compiler {

// What happens to each int32 accumulator before it is stored as int8, in this order (all on the
// accelerator's vector ALU, all wrapping int32 arithmetic as the ALU computes it):
//   acc += bias[o]  (if bias);  acc *= multiplier (if != 1);  acc >>= shift (arithmetic);
//   acc = min(acc, 127);  acc = max(acc, relu ? 0 : -128).
struct Epilogue {
  bool bias = true;
  int multiplier = 1;  // ALU MUL immediate: a signed 16-bit value
  int shift = 8;       // 0..31
  bool relu = false;
};

enum class OpKind { kConv2d, kDense };

// conv2d: out[n][o][y][x] = epilogue(sum_{c,ky,kx} in[n][c][y*sh+ky-ph][x*sw+kx-pw] * w[o][c][ky][kx]),
// zero outside the input. dense is the 1x1 case on a 1x1 image: out[n][o] = epilogue(sum_c in[n][c] * w[o][c]).
// Tensors are logical NCHW / OIHW here; the compiler pads batch and channels to the config's blocks.
struct Operator {
  OpKind kind = OpKind::kConv2d;
  std::string name;  // free label, e.g. "C2"
  int batch = 1, inChannels = 1, height = 1, width = 1, outChannels = 1;
  int kernelH = 1, kernelW = 1, strideH = 1, strideW = 1, padH = 0, padW = 0;
  Epilogue epilogue;

  static Operator conv2d(int batch, int inChannels, int height, int width, int outChannels, int kernel, int stride,
                         int pad, const Epilogue& e = Epilogue());
  static Operator dense(int batch, int inFeatures, int outFeatures, const Epilogue& e = Epilogue());

  int outHeight() const;
  int outWidth() const;
  uint64_t macs() const;  // of the logical (unpadded) operator
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

// The operands of one operator, logical layouts: input [N][C][H][W], weights [O][C][KH][KW], bias [O].
struct OperatorData {
  std::vector<int8_t> input, weights;
  std::vector<int32_t> bias;
  // Random int8 input and weights, and biases in [-biasRange, biasRange].
  static OperatorData random(const Operator& op, uint32_t seed, int32_t biasRange = 1 << 12);
};

// Host reference with exactly the accelerator's integer arithmetic; returns int8 [N][O][OH][OW].
std::vector<int8_t> reference(const Operator& op, const OperatorData& data);

// The epilogue on one accumulator value (shared by the reference of every operator).
int8_t applyEpilogue(const Epilogue& e, int32_t acc, int32_t bias);

}  // namespace tessera::compiler
