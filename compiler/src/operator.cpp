// Operator descriptions: construction, validation, the text spec, random operands and the host reference.
#include "tessera/compiler/operator.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "tessera/hw/error.h"

namespace tessera::compiler {

namespace {

// The ALU's int32 arithmetic wraps; doing it in uint32 keeps the reference free of signed overflow.
int32_t wrapAdd(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
int32_t wrapMul(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b)); }

std::string kindName(OpKind k) { return k == OpKind::kConv2d ? "conv2d" : "dense"; }

}  // namespace

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

int Operator::outHeight() const { return strideH > 0 ? (height + 2 * padH - kernelH) / strideH + 1 : 0; }
int Operator::outWidth() const { return strideW > 0 ? (width + 2 * padW - kernelW) / strideW + 1 : 0; }

uint64_t Operator::macs() const {
  return uint64_t(batch) * outChannels * outHeight() * outWidth() * inChannels * kernelH * kernelW;
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
  if (padH >= kernelH || padW >= kernelW)
    throw Error(where, "padding " + std::to_string(padH) + "x" + std::to_string(padW) +
                           " must be smaller than the kernel " + std::to_string(kernelH) + "x" +
                           std::to_string(kernelW) + " (an output would see only padding)");
  if (kernelH > height + 2 * padH || kernelW > width + 2 * padW)
    throw Error(where, "kernel " + std::to_string(kernelH) + "x" + std::to_string(kernelW) +
                           " is larger than the padded input " + std::to_string(height + 2 * padH) + "x" +
                           std::to_string(width + 2 * padW));
  if (kind == OpKind::kDense && (height != 1 || width != 1 || kernelH != 1 || kernelW != 1 || padH || padW))
    throw Error(where, "dense has a 1x1 input and no kernel, stride or padding");
  if (epilogue.shift < 0 || epilogue.shift > 31)
    throw Error(where, "shift must be in [0, 31], got " + std::to_string(epilogue.shift));
  if (epilogue.multiplier < -32768 || epilogue.multiplier > 32767)
    throw Error(where, "multiplier must fit the ALU's signed 16-bit immediate, got " +
                           std::to_string(epilogue.multiplier));
}

std::string Operator::describe() const {
  std::ostringstream os;
  os << kindName(kind) << (name.empty() ? "" : " " + name) << ": ";
  if (kind == OpKind::kDense) {
    os << "in [" << batch << "][" << inChannels << "] int8, weights [" << outChannels << "][" << inChannels
       << "] int8 -> out [" << batch << "][" << outChannels << "] int8";
  } else {
    os << "in [" << batch << "][" << inChannels << "][" << height << "][" << width << "] int8, weights ["
       << outChannels << "][" << inChannels << "][" << kernelH << "][" << kernelW << "] int8, stride " << strideH
       << "x" << strideW << ", pad " << padH << "x" << padW << " -> out [" << batch << "][" << outChannels << "]["
       << outHeight() << "][" << outWidth() << "] int8";
  }
  os << "; epilogue: " << (epilogue.bias ? "+bias int32, " : "");
  if (epilogue.multiplier != 1) os << "*" << epilogue.multiplier << ", ";
  os << ">>" << epilogue.shift << ", clip [" << (epilogue.relu ? 0 : -128) << ", 127]" << (epilogue.relu ? " (ReLU)" : "");
  os << "; " << macs() << " MACs";
  return os.str();
}

std::string Operator::spec() const {
  std::ostringstream os;
  os << kindName(kind);
  if (!name.empty()) os << " name=" << name;
  os << " n=" << batch << " cin=" << inChannels;
  if (kind == OpKind::kConv2d)
    os << " h=" << height << " w=" << width << " cout=" << outChannels << " kh=" << kernelH << " kw=" << kernelW
       << " sh=" << strideH << " sw=" << strideW << " ph=" << padH << " pw=" << padW;
  else
    os << " cout=" << outChannels;
  os << " bias=" << epilogue.bias << " mul=" << epilogue.multiplier << " shift=" << epilogue.shift
     << " relu=" << epilogue.relu;
  return os.str();
}

Operator Operator::parse(const std::string& text, const std::string& origin) {
  std::istringstream is(text);
  std::string word;
  if (!(is >> word)) throw Error(origin, "empty operator description (expected conv2d or dense)");
  Operator op;
  if (word == "conv2d") op.kind = OpKind::kConv2d;
  else if (word == "dense") op.kind = OpKind::kDense;
  else throw Error(origin, "unknown operator '" + word + "' (known: conv2d, dense)");
  std::map<std::string, int*> ints = {
      {"n", &op.batch},        {"cin", &op.inChannels}, {"h", &op.height},    {"w", &op.width},
      {"cout", &op.outChannels}, {"kh", &op.kernelH},   {"kw", &op.kernelW},  {"sh", &op.strideH},
      {"sw", &op.strideW},     {"ph", &op.padH},        {"pw", &op.padW},     {"mul", &op.epilogue.multiplier},
      {"shift", &op.epilogue.shift}};
  const std::map<std::string, std::vector<int*>> both = {{"kernel", {&op.kernelH, &op.kernelW}},
                                                         {"stride", {&op.strideH, &op.strideW}},
                                                         {"pad", {&op.padH, &op.padW}}};
  while (is >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == word.size())
      throw Error(origin, "expected key=value, got '" + word + "'");
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "name") {
      op.name = value;
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
    if (key == "bias" || key == "relu") {
      if (v != 0 && v != 1) throw Error(origin, key + " must be 0 or 1");
      (key == "bias" ? op.epilogue.bias : op.epilogue.relu) = v == 1;
    } else if (ints.count(key)) {
      *ints[key] = static_cast<int>(v);
    } else if (both.count(key)) {
      for (int* p : both.at(key)) *p = static_cast<int>(v);
    } else {
      throw Error(origin, "unknown key '" + key +
                              "' (known: name n cin h w cout kernel kh kw stride sh sw pad ph pw bias mul shift relu)");
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
  d.weights.resize(size_t(op.outChannels) * op.inChannels * op.kernelH * op.kernelW);
  for (auto& v : d.input) v = static_cast<int8_t>(byte(rng));
  for (auto& v : d.weights) v = static_cast<int8_t>(byte(rng));
  if (op.epilogue.bias) {
    d.bias.resize(size_t(op.outChannels));
    for (auto& v : d.bias) v = bias(rng);
  }
  return d;
}

int8_t applyEpilogue(const Epilogue& e, int32_t acc, int32_t bias) {
  if (e.bias) acc = wrapAdd(acc, bias);
  if (e.multiplier != 1) acc = wrapMul(acc, e.multiplier);
  acc >>= e.shift;  // arithmetic on int32 (C++20 guarantees it; every supported compiler does it in C++17)
  acc = std::min(acc, 127);
  acc = std::max(acc, e.relu ? 0 : -128);
  return static_cast<int8_t>(acc);
}

std::vector<int8_t> reference(const Operator& op, const OperatorData& data) {
  op.validate();
  const int N = op.batch, C = op.inChannels, H = op.height, W = op.width, O = op.outChannels;
  const int KH = op.kernelH, KW = op.kernelW, OH = op.outHeight(), OW = op.outWidth();
  if (data.input.size() != size_t(N) * C * H * W || data.weights.size() != size_t(O) * C * KH * KW ||
      (op.epilogue.bias && data.bias.size() != size_t(O)))
    throw Error("reference", "operand sizes do not match " + op.describe());
  std::vector<int8_t> out(size_t(N) * O * OH * OW);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < O; ++o)
      for (int y = 0; y < OH; ++y)
        for (int x = 0; x < OW; ++x) {
          int32_t acc = 0;
          for (int c = 0; c < C; ++c)
            for (int ky = 0; ky < KH; ++ky) {
              const int iy = y * op.strideH + ky - op.padH;
              if (iy < 0 || iy >= H) continue;
              for (int kx = 0; kx < KW; ++kx) {
                const int ix = x * op.strideW + kx - op.padW;
                if (ix < 0 || ix >= W) continue;
                acc = wrapAdd(acc, int32_t(data.input[((size_t(n) * C + c) * H + iy) * W + ix]) *
                                       int32_t(data.weights[((size_t(o) * C + c) * KH + ky) * KW + kx]));
              }
            }
          out[((size_t(n) * O + o) * OH + y) * OW + x] = applyEpilogue(op.epilogue, acc, op.epilogue.bias ? data.bias[o] : 0);
        }
  return out;
}

}  // namespace tessera::compiler
