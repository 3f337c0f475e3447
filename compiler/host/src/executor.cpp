// ONNX operators on the host with their reference semantics: shape rules, float and exact integer kernels.
#include "tessera/compiler/host/executor.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

#include "library_kernels.h"
#include "upsampling.h"
#include "tessera/support/error.h"

namespace tessera::compiler::host {

using ir::DType;
using ir::Graph;
using ir::Node;
using ir::Tensor;
using Shape = std::vector<int64_t>;

namespace {

const std::set<std::string>& supportedOps() {
  static const std::set<std::string> ops = {
      "Identity", "Dropout", "Relu", "Clip", "Add", "Sub", "Mul", "Conv", "ConvInteger", "QLinearConv", "MatMul",
      "MatMulInteger", "QLinearMatMul", "Gemm", "MaxPool", "AveragePool", "GlobalAveragePool", "BatchNormalization",
      "Flatten", "Reshape", "Transpose", "Softmax", "Constant", "QuantizeLinear", "DequantizeLinear", "Sigmoid",
      "HardSigmoid", "HardSwish", "Tanh", "LeakyRelu", "Elu", "Erf", "Concat", "Squeeze", "Unsqueeze", "Slice", "ReduceSum", "ReduceMean", "ReduceMax", "Shape", "Gather",
      "Div", "PRelu", "Pad", "Split", "Cast", "ConstantOfShape", "Range", "Expand", "LogSoftmax", "Equal", "Less",
      "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "Where", "Resize", "Upsample", "ConvTranspose", "Sqrt",
      "Reciprocal", "Pow", "LayerNormalization"};
  return ops;
}

// The float activations, each element computed in double and rounded to float once. The code
// generator (codegen/src/generate.cpp) emits the same operations in the same order, so JIT-compiled
// host steps are bit-exact with these; the node conformance tests hold the two together.
struct FloatActivation {
  struct Params {
    double alpha = 0, beta = 0;
  };
  const char* op;
  Params (*params)(const Node&);
  float (*apply)(const Params&, float);
};

FloatActivation::Params noParams(const Node&) { return {}; }

const FloatActivation kFloatActivations[] = {
    {"Sigmoid", noParams, [](const FloatActivation::Params&, float x) { return float(1.0 / (1.0 + std::exp(-double(x)))); }},
    {"Tanh", noParams, [](const FloatActivation::Params&, float x) { return float(std::tanh(double(x))); }},
    {"Erf", noParams, [](const FloatActivation::Params&, float x) { return float(std::erf(double(x))); }},
    // Correctly rounded either way: double carries more than twice float's precision.
    {"Sqrt", noParams, [](const FloatActivation::Params&, float x) { return float(std::sqrt(double(x))); }},
    {"Reciprocal", noParams, [](const FloatActivation::Params&, float x) { return float(1.0 / double(x)); }},
    {"HardSigmoid",
     [](const Node& n) { return FloatActivation::Params{n.attrFloat("alpha", 0.2f), n.attrFloat("beta", 0.5f)}; },
     [](const FloatActivation::Params& p, float x) {
       return float(std::min(std::max(p.alpha * double(x) + p.beta, 0.0), 1.0));
     }},
    {"HardSwish", noParams,
     [](const FloatActivation::Params&, float x) {
       return float(double(x) * std::min(std::max(double(x) * (1.0 / 6.0) + 0.5, 0.0), 1.0));
     }},
    {"LeakyRelu", [](const Node& n) { return FloatActivation::Params{n.attrFloat("alpha", 0.01f), 0}; },
     [](const FloatActivation::Params& p, float x) { return x < 0 ? float(p.alpha * double(x)) : x; }},
    {"Elu", [](const Node& n) { return FloatActivation::Params{n.attrFloat("alpha", 1.0f), 0}; },
     [](const FloatActivation::Params& p, float x) { return x < 0 ? float(p.alpha * (std::exp(double(x)) - 1.0)) : x; }},
};

const FloatActivation* floatActivation(const std::string& op) {
  for (const FloatActivation& a : kFloatActivations)
    if (op == a.op) return &a;
  return nullptr;
}

// Everything the executor needs to know about a node while running it: its label for errors.
struct Ctx {
  const Node& n;
  int64_t opset;
  FloatKernels kernels = FloatKernels::kReference;
  [[noreturn]] void fail(const std::string& why) const { throw Error(n.label(opset), why); }
  const Tensor& in(const std::vector<const Tensor*>& ins, size_t i) const {
    if (i >= ins.size() || !ins[i]) fail("input " + std::to_string(i) + " is missing");
    return *ins[i];
  }
  bool has(const std::vector<const Tensor*>& ins, size_t i) const { return i < ins.size() && ins[i]; }
};

// Elements of a shape, saturating at INT64_MAX rather than wrapping.
int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d > 0 && n > std::numeric_limits<int64_t>::max() / d) return std::numeric_limits<int64_t>::max();
    n *= d;
  }
  return n;
}

// a + b for element counts, saturating at INT64_MAX as count() does.
int64_t satAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

// The most elements one tensor the executor makes may hold (512 MiB of float32): beyond any CNN's
// activation or dequantized weight (VGG's largest is 103M), short of what a malformed shape would
// have it allocate.
constexpr int64_t kMaxTensorElements = int64_t(1) << 27;
// Thrown by make() past that; execute() names the node.
struct TensorTooLarge {
  std::string shape;
  int64_t elements;
};

std::string shapeText(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}

Tensor make(DType t, Shape s) {
  if (count(s) > kMaxTensorElements) throw TensorTooLarge{shapeText(s), count(s)};
  Tensor x;
  x.dtype = t;
  x.shape = std::move(s);
  x.hasShape = true;
  if (t == DType::kFloat32) x.floats.assign(size_t(count(x.shape)), 0.0f);
  else x.ints.assign(size_t(count(x.shape)), 0);
  return x;
}

double value(const Tensor& t, int64_t i) {
  return t.dtype == DType::kFloat32 ? double(t.floats[size_t(i)]) : double(t.ints[size_t(i)]);
}

void checkData(const Ctx& c, const Tensor& t, const char* what) {
  const size_t have = t.dtype == DType::kFloat32 ? t.floats.size() : t.ints.size();
  if (int64_t(have) != count(t.shape))
    c.fail(std::string(what) + " '" + t.name + "' holds " + std::to_string(have) + " values for shape " + shapeText(t.shape));
}

int64_t saturateTo(DType t, double v) {
  const double r = std::nearbyint(v);  // the default rounding mode: half to even
  if (t == DType::kUInt8) return int64_t(std::clamp(r, 0.0, 255.0));
  if (t == DType::kInt8) return int64_t(std::clamp(r, -128.0, 127.0));
  if (t == DType::kInt32) return int64_t(std::clamp(r, -2147483648.0, 2147483647.0));
  return int64_t(r);
}

// Integer arithmetic wraps at the type's width, as ONNX's (numpy's) does.
int64_t wrapTo(DType t, int64_t v) {
  switch (t) {
    case DType::kUInt8: return int64_t(uint8_t(v));
    case DType::kInt8: return int64_t(int8_t(v));
    case DType::kInt32: return int64_t(int32_t(v));
    default: return v;
  }
}

Shape broadcast(const Ctx& c, const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (da != db && da != 1 && db != 1) c.fail("shapes " + shapeText(a) + " and " + shapeText(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Index into a broadcast operand of shape `s` for the flat index `i` of `out`: an odometer over
// `out`'s coordinates, each step adding the operand's stride of the axis that moved (0 where the
// operand has size 1) and taking back what the axes that wrapped had added.
std::vector<int64_t> broadcastIndex(const Shape& s, const Shape& out) {
  const int64_t total = count(out);
  std::vector<int64_t> idx(static_cast<size_t>(total));
  if (s == out) {
    std::iota(idx.begin(), idx.end(), int64_t(0));
    return idx;
  }
  const size_t rank = out.size(), off = rank - s.size();
  std::vector<int64_t> stride(rank, 0), coord(rank, 0);
  int64_t st = 1;
  for (size_t k = rank; k-- > off;) {
    const int64_t dim = s[k - off];
    stride[k] = dim == 1 ? 0 : st;
    st *= dim;
  }
  int64_t at = 0;
  for (int64_t i = 0; i < total; ++i) {
    idx[size_t(i)] = at;
    for (size_t k = rank; k-- > 0;) {
      if (++coord[k] < out[k]) {
        at += stride[k];
        break;
      }
      at -= stride[k] * (out[k] - 1);
      coord[k] = 0;
    }
  }
  return idx;
}

// Convolution and pooling windows over N-C-H-W (2-D only).
struct Window {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0, oh = 1, ow = 1;
};

Window window(const Ctx& c, const Shape& x, int64_t kh, int64_t kw, bool ceilMode) {
  const Node& n = c.n;
  if (x.size() != 4) c.fail("only 2-D (N,C,H,W) inputs are supported, got " + shapeText(x));
  Window w;
  w.kh = kh;
  w.kw = kw;
  const Shape strides = n.attrInts("strides", {1, 1}), dil = n.attrInts("dilations", {1, 1});
  if (strides.size() != 2 || dil.size() != 2) c.fail("strides and dilations need two values");
  w.sh = strides[0], w.sw = strides[1], w.dh = dil[0], w.dw = dil[1];
  if (w.sh < 1 || w.sw < 1 || w.dh < 1 || w.dw < 1 || kh < 1 || kw < 1) c.fail("kernel, strides and dilations must be positive");
  const int64_t ekh = (kh - 1) * w.dh + 1, ekw = (kw - 1) * w.dw + 1;
  const WindowPads pads = windowPads(n, x[2], x[3], ekh, ekw, w.sh, w.sw, [&](const std::string& why) { c.fail(why); });
  w.pt = pads.top, w.pl = pads.left, w.pb = pads.bottom, w.pr = pads.right;
  auto outSize = [&](int64_t in, int64_t pad, int64_t ek, int64_t s) {
    const int64_t span = in + pad - ek;
    if (span < 0) c.fail("the kernel is larger than the padded input " + shapeText(x));
    return (ceilMode ? (span + s - 1) / s : span / s) + 1;
  };
  w.oh = outSize(x[2], w.pt + w.pb, ekh, w.sh);
  w.ow = outSize(x[3], w.pl + w.pr, ekw, w.sw);
  if (ceilMode) {
    // The last window must start inside the input or its left padding.
    if ((w.oh - 1) * w.sh >= x[2] + w.pt) --w.oh;
    if ((w.ow - 1) * w.sw >= x[3] + w.pl) --w.ow;
  }
  return w;
}

// Per-axis quantization parameters broadcast over `shape`: index of the parameter for flat index i.
std::vector<int64_t> parameterIndex(const Ctx& c, const Shape& shape, const Tensor& scale, int64_t axis) {
  std::vector<int64_t> idx(size_t(count(shape)), 0);
  if (scale.elements() == 1) return idx;
  if (axis < 0) axis += int64_t(shape.size());
  if (axis < 0 || axis >= int64_t(shape.size()) || shape[size_t(axis)] != scale.elements())
    c.fail("per-axis scale of " + std::to_string(scale.elements()) + " values does not match axis " + std::to_string(axis) +
           " of " + shapeText(shape));
  int64_t inner = 1;
  for (size_t k = size_t(axis) + 1; k < shape.size(); ++k) inner *= shape[k];
  for (int64_t i = 0; i < count(shape); ++i) idx[size_t(i)] = (i / inner) % shape[size_t(axis)];
  return idx;
}

// Shared by Conv, ConvInteger and QLinearConv: acc[n][o][y][x] = sum (x - xz) * (w - wz[o]).
template <typename Acc, typename GetX, typename GetW>
std::vector<Acc> convolve(const Ctx& c, const Shape& xs, const Shape& ws, const Window& w, int64_t group, GetX xAt, GetW wAt) {
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], O = ws[0], CG = ws[1];
  if (group < 1 || C != CG * group || O % group) c.fail("channels " + std::to_string(C) + " and weights " + shapeText(ws) + " do not match group " + std::to_string(group));
  std::vector<Acc> out(size_t(N * O * w.oh * w.ow), Acc(0));
  const int64_t OG = O / group;
  for (int64_t nb = 0; nb < N; ++nb)
    for (int64_t o = 0; o < O; ++o) {
      const int64_t g = o / OG;
      Acc* dst = &out[size_t(((nb * O + o) * w.oh) * w.ow)];
      for (int64_t ci = 0; ci < CG; ++ci) {
        const int64_t cin = g * CG + ci;
        for (int64_t ky = 0; ky < w.kh; ++ky)
          for (int64_t kx = 0; kx < w.kw; ++kx) {
            const Acc wv = wAt(((o * CG + ci) * w.kh + ky) * w.kw + kx);
            if (wv == Acc(0)) continue;
            for (int64_t oy = 0; oy < w.oh; ++oy) {
              const int64_t iy = oy * w.sh + ky * w.dh - w.pt;
              if (iy < 0 || iy >= H) continue;
              const int64_t rowBase = ((nb * C + cin) * H + iy) * W;
              Acc* row = dst + oy * w.ow;
              for (int64_t ox = 0; ox < w.ow; ++ox) {
                const int64_t ix = ox * w.sw + kx * w.dw - w.pl;
                if (ix < 0 || ix >= W) continue;
                row[ox] += xAt(rowBase + ix) * wv;
              }
            }
          }
      }
    }
  return out;
}

// Batched matrix product with numpy broadcasting of the leading dimensions.
template <typename Acc, typename GetA, typename GetB>
Tensor matmul(const Ctx& c, const Shape& as, const Shape& bs, DType outType, GetA aAt, GetB bAt,
              const std::function<void(Tensor&, int64_t, Acc)>& store, bool compute = true) {
  Shape a = as, b = bs;
  const bool aVec = a.size() == 1, bVec = b.size() == 1;
  if (aVec) a.insert(a.begin(), 1);
  if (bVec) b.push_back(1);
  if (a.size() < 2 || b.size() < 2) c.fail("MatMul needs at least 1-D operands");
  const int64_t M = a[a.size() - 2], K = a.back(), K2 = b[b.size() - 2], Nn = b.back();
  if (K != K2) c.fail("inner dimensions differ: " + shapeText(as) + " x " + shapeText(bs));
  const Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  const Shape batch = broadcast(c, ab, bb);
  Shape outShape = batch;
  if (!aVec) outShape.push_back(M);
  if (!bVec) outShape.push_back(Nn);
  if (!compute) {
    Tensor t;
    t.dtype = outType;
    t.shape = outShape;
    t.hasShape = true;
    return t;
  }
  Tensor out = make(outType, outShape);
  const std::vector<int64_t> ai = broadcastIndex(ab, batch), bi = broadcastIndex(bb, batch);
  // A row of sums at a time, k outside n so that b is read along its rows; each sum still adds its
  // products in k order, as generated code does.
  std::vector<Acc> acc(static_cast<size_t>(Nn));
  for (int64_t t = 0; t < count(batch); ++t)
    for (int64_t m = 0; m < M; ++m) {
      std::fill(acc.begin(), acc.end(), Acc(0));
      for (int64_t k = 0; k < K; ++k) {
        const auto x = aAt(ai[size_t(t)] * M * K + m * K + k);
        const int64_t row = bi[size_t(t)] * K * Nn + k * Nn;
        for (int64_t nn = 0; nn < Nn; ++nn) acc[size_t(nn)] += x * bAt(row + nn);
      }
      for (int64_t nn = 0; nn < Nn; ++nn) store(out, (t * M + m) * Nn + nn, acc[size_t(nn)]);
    }
  return out;
}

}  // namespace

Reduction reduction(const Node& n, int64_t opset, const std::vector<int64_t>& shape, const std::vector<const Tensor*>& ins) {
  const Ctx c{n, opset};
  const int64_t rank = int64_t(shape.size());
  std::vector<int64_t> axes;
  if (n.has("axes")) {
    axes = n.attrInts("axes", {});
  } else if (c.has(ins, 1)) {
    const Tensor& t = c.in(ins, 1);
    if (!t.isConstant && t.ints.empty() && t.elements() != 0) c.fail("the axes must be a constant");
    axes = t.ints;
  }
  Reduction r;
  r.reduced.assign(shape.size(), axes.empty() && !n.attrInt("noop_with_empty_axes", 0));
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) c.fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (a < 0) a += rank;
    if (r.reduced[size_t(a)]) c.fail("axis " + std::to_string(a) + " is given twice");
    r.reduced[size_t(a)] = true;
  }
  const bool keep = n.attrInt("keepdims", 1) != 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!r.reduced[d]) r.shape.push_back(shape[d]);
    else if (keep) r.shape.push_back(1);
  }
  return r;
}

SliceWindow sliceWindow(const Node& n, int64_t opset, const std::vector<int64_t>& shape,
                        const std::vector<const Tensor*>& ins) {
  const Ctx c{n, opset};
  auto constantInts = [&](size_t i, const char* what) -> std::vector<int64_t> {
    const Tensor& t = c.in(ins, i);
    if (!t.isConstant && t.ints.empty()) c.fail(std::string("the ") + what + " must be constant");
    return t.ints;
  };
  const int64_t rank = int64_t(shape.size());
  const std::vector<int64_t> starts = constantInts(1, "starts"), ends = constantInts(2, "ends");
  if (starts.size() != ends.size()) c.fail("starts and ends differ in length");
  std::vector<int64_t> axes, steps;
  if (c.has(ins, 3)) axes = constantInts(3, "axes");
  else for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (c.has(ins, 4)) steps = constantInts(4, "steps");
  else steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) c.fail("starts, ends, axes and steps differ in length");
  SliceWindow w;
  w.shape = shape;
  w.start.assign(shape.size(), 0);
  w.step.assign(shape.size(), 1);
  std::vector<bool> seen(shape.size(), false);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k];
    if (a < -rank || a >= rank) c.fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (a < 0) a += rank;
    if (seen[size_t(a)]) c.fail("axis " + std::to_string(a) + " is given twice");
    seen[size_t(a)] = true;
    const int64_t dim = shape[size_t(a)], step = steps[k];
    if (step == 0) c.fail("a step is 0");
    // ONNX's clamping: starts and ends past either end of the axis are brought back onto it.
    auto wrap = [&](int64_t v) { return v < 0 ? std::max<int64_t>(v, -dim) + dim : v; };
    int64_t start = wrap(starts[k]), end = wrap(ends[k]);
    if (step > 0) {
      start = std::min(start, dim);
      end = std::min(end, dim);
    } else {
      start = std::min(start, dim - 1);
      end = ends[k] < -dim ? -1 : std::min(end, dim - 1);
    }
    const int64_t span = step > 0 ? end - start : start - end;
    const int64_t magnitude = step > 0 ? step : -step;
    w.shape[size_t(a)] = span <= 0 ? 0 : (span + magnitude - 1) / magnitude;
    w.start[size_t(a)] = start;
    w.step[size_t(a)] = step;
  }
  return w;
}

namespace {

// Squeeze's and Unsqueeze's axes: the attribute before opset 13, the constant second input since;
// negative ones counted back from `rank`, each in [0, rank) and given once.
std::vector<int64_t> squeezeAxes(const Ctx& c, const std::vector<const Tensor*>& ins, int64_t rank) {
  std::vector<int64_t> axes;
  if (c.n.has("axes")) {
    axes = c.n.attrInts("axes", {});
  } else if (c.has(ins, 1)) {
    const Tensor& t = c.in(ins, 1);
    if (!t.isConstant && t.ints.empty()) c.fail("the axes must be a constant");
    axes = t.ints;
  }
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) c.fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (a < 0) a += rank;
  }
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) c.fail("an axis is given twice");
  return sorted;
}

Shape reshapeTarget(const Ctx& c, const Shape& in, const Tensor& shapeTensor) {
  if (!shapeTensor.isConstant && shapeTensor.ints.empty()) c.fail("the target shape must be a constant");
  Shape out(shapeTensor.ints.begin(), shapeTensor.ints.end());
  const bool allowZero = c.n.attrInt("allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowZero) {
      if (i >= in.size()) c.fail("a 0 in the target shape has no input dimension to copy");
      out[i] = in[i];
    }
    if (out[i] == -1) {
      if (infer >= 0) c.fail("more than one -1 in the target shape");
      infer = int64_t(i);
    } else if (out[i] < 0) {
      c.fail("negative dimension in the target shape " + shapeText(out));
    } else {
      known *= out[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || count(in) % known) c.fail("cannot reshape " + shapeText(in) + " to " + shapeText(out));
    out[size_t(infer)] = count(in) / known;
  }
  if (count(out) != count(in)) c.fail("cannot reshape " + shapeText(in) + " to " + shapeText(out));
  return out;
}

float scalarAttrOrInput(const Ctx& c, const std::vector<const Tensor*>& ins, size_t i, float fallback) {
  if (!c.has(ins, i)) return fallback;
  const Tensor& t = *ins[i];
  if (t.elements() != 1 || (t.dtype == DType::kFloat32 ? t.floats.size() : t.ints.size()) != 1)
    c.fail("input " + std::to_string(i) + " must be a scalar with a value");
  return float(value(t, 0));
}

// Computes one node; `computeData` false only derives output dtypes and shapes.
// tessera.FoldInput: a narrow convolution's input rearranged so its kernel columns and its row
// stride phases become channels (docs/graph.md): y[n][(c*KW + kx)*P + py][y'][x'] =
// x[n][c][P*y' + py - ph][sw*x' + kx - pw], the attribute pad_value (the input's zero point, so
// the value stands for 0) outside.
Tensor foldInput(const Ctx& c, const Tensor& x, bool computeData) {
  const Node& n = c.n;
  const int64_t kw = n.attrInt("kw", 1), sw = n.attrInt("sw", 1), phases = n.attrInt("phases", 1);
  const int64_t ph = n.attrInt("ph", 0), pw = n.attrInt("pw", 0), oh = n.attrInt("out_h", 1), ow = n.attrInt("out_w", 1);
  if (x.shape.size() != 4 || kw < 1 || sw < 1 || phases < 1 || oh < 1 || ow < 1) c.fail("bad FoldInput attributes or input");
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], C2 = C * kw * phases;
  Tensor y;
  y.dtype = x.dtype;
  y.shape = {N, C2, oh, ow};
  y.hasShape = true;
  if (!computeData) return y;
  y.ints.assign(size_t(N * C2 * oh * ow), n.attrInt("pad_value", 0));
  for (int64_t b = 0; b < N; ++b)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t kx = 0; kx < kw; ++kx)
        for (int64_t py = 0; py < phases; ++py) {
          const int64_t out = (ch * kw + kx) * phases + py;
          for (int64_t yy = 0; yy < oh; ++yy) {
            const int64_t iy = phases * yy + py - ph;
            if (iy < 0 || iy >= H) continue;
            for (int64_t xx = 0; xx < ow; ++xx) {
              const int64_t ix = sw * xx + kx - pw;
              if (ix < 0 || ix >= W) continue;
              y.ints[size_t(((b * C2 + out) * oh + yy) * ow + xx)] = x.ints[size_t(((b * C + ch) * H + iy) * W + ix)];
            }
          }
        }
  return y;
}

std::vector<Tensor> executeNode(const Ctx& c, const std::vector<const Tensor*>& ins, bool computeData) {
  const Node& n = c.n;
  const std::string& op = n.opType;
  if (n.domain == "tessera" && op == "FoldInput") {
    const Tensor& x = c.in(ins, 0);
    if (x.dtype == DType::kFloat32) c.fail("folds integer tensors");
    return {foldInput(c, x, computeData)};
  }
  if (!n.domain.empty() && n.domain != "ai.onnx") c.fail("operators of domain '" + n.domain + "' are not supported");
  if (!supportedOps().count(op)) c.fail("operator " + op + " is not supported (docs/onnx.md lists the supported ones)");
  if (computeData && op != "Shape")  // Shape reads its input's shape only
    for (size_t i = 0; i < ins.size(); ++i)
      if (ins[i]) checkData(c, *ins[i], "input");
  auto shapeOnly = [&](DType t, Shape s) {
    Tensor x;
    x.dtype = t;
    x.shape = std::move(s);
    x.hasShape = true;
    return x;
  };

  if (op == "Identity" || op == "Dropout") {
    if (op == "Dropout" && n.outputs.size() > 1 && !n.outputs[1].empty()) c.fail("the mask output is not supported (inference only)");
    Tensor y = c.in(ins, 0);
    y.isConstant = false;
    return {y};
  }
  if (op == "Constant") {
    auto it = n.attrs.find("value");
    if (it != n.attrs.end() && it->second.tensor) return {*it->second.tensor};
    if (n.has("value_float")) {
      Tensor t = make(DType::kFloat32, {});
      t.floats = {n.attrFloat("value_float", 0)};
      return {t};
    }
    if (n.has("value_int")) {
      Tensor t = make(DType::kInt64, {});
      t.ints = {n.attrInt("value_int", 0)};
      return {t};
    }
    if (n.has("value_ints")) {
      const Shape v = n.attrInts("value_ints", {});
      Tensor t = make(DType::kInt64, {int64_t(v.size())});
      t.ints = v;
      return {t};
    }
    c.fail("only the value, value_float, value_int and value_ints forms are supported");
  }
  const Tensor& x = c.in(ins, 0);
  if (op == "Relu" || op == "Clip") {
    float lo = op == "Relu" ? 0.0f : -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (!computeData) return {shapeOnly(x.dtype, x.shape)};
    if (op == "Clip") {
      lo = scalarAttrOrInput(c, ins, 1, lo);
      hi = scalarAttrOrInput(c, ins, 2, hi);
    }
    Tensor y = make(x.dtype, x.shape);
    if (x.dtype == DType::kFloat32) {
      const float* in = x.floats.data();
      float* out = y.floats.data();
      for (size_t i = 0, total = x.floats.size(); i < total; ++i) out[i] = std::min(std::max(in[i], lo), hi);
    } else
      for (size_t i = 0; i < x.ints.size(); ++i)
        y.ints[i] = int64_t(std::min<double>(std::max<double>(double(x.ints[i]), lo), hi));
    return {y};
  }
  if (const FloatActivation* act = floatActivation(op)) {
    if (x.dtype != DType::kFloat32) c.fail("takes float32, not " + x.describe());
    if (!computeData) return {shapeOnly(x.dtype, x.shape)};
    const FloatActivation::Params params = act->params(n);
    Tensor y = make(x.dtype, x.shape);
    for (size_t i = 0; i < x.floats.size(); ++i) y.floats[i] = act->apply(params, x.floats[i]);
    return {y};
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    const Tensor& b = c.in(ins, 1);
    if (x.dtype != b.dtype) c.fail("operand types differ: " + x.describe() + " and " + b.describe());
    if (x.dtype == DType::kBool) c.fail("takes numbers, not bool");
    const Shape s = broadcast(c, x.shape, b.shape);
    if (!computeData) return {shapeOnly(x.dtype, s)};
    Tensor y = make(x.dtype, s);
    // The operator decided once, not per element (comparing its name per element cost more than
    // the arithmetic).
    enum class Arith { kAdd, kSub, kMul, kDiv };
    const Arith f = op == "Add" ? Arith::kAdd : op == "Sub" ? Arith::kSub : op == "Mul" ? Arith::kMul : Arith::kDiv;
    if (x.dtype == DType::kFloat32 && x.shape == b.shape) {
      // No broadcasting (a residual sum): element by element, without index tables.
      const float *u = x.floats.data(), *v = b.floats.data();
      float* out = y.floats.data();
      const size_t total = y.floats.size();
      switch (f) {
        case Arith::kAdd: for (size_t i = 0; i < total; ++i) out[i] = u[i] + v[i]; break;
        case Arith::kSub: for (size_t i = 0; i < total; ++i) out[i] = u[i] - v[i]; break;
        case Arith::kMul: for (size_t i = 0; i < total; ++i) out[i] = u[i] * v[i]; break;
        case Arith::kDiv: for (size_t i = 0; i < total; ++i) out[i] = u[i] / v[i]; break;
      }
      return {y};
    }
    const auto ai = broadcastIndex(x.shape, s), bi = broadcastIndex(b.shape, s);
    for (int64_t i = 0; i < count(s); ++i) {
      const size_t a = size_t(ai[size_t(i)]), bb = size_t(bi[size_t(i)]);
      if (x.dtype == DType::kFloat32) {
        const float u = x.floats[a], v = b.floats[bb];
        y.floats[size_t(i)] = f == Arith::kAdd ? u + v : f == Arith::kSub ? u - v : f == Arith::kMul ? u * v : u / v;
      } else {
        const int64_t u = x.ints[a], v = b.ints[bb];
        // Integer division truncates toward zero (ONNX Runtime's and C's rule).
        if (f == Arith::kDiv && v == 0) c.fail("integer division by zero at output element " + std::to_string(i));
        y.ints[size_t(i)] = wrapTo(x.dtype, f == Arith::kAdd ? u + v : f == Arith::kSub ? u - v : f == Arith::kMul ? u * v : u / v);
      }
    }
    return {y};
  }
  if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual") {
    const Tensor& b = c.in(ins, 1);
    if (x.dtype != b.dtype) c.fail("operand types differ: " + x.describe() + " and " + b.describe());
    if (op != "Equal" && x.dtype == DType::kBool) c.fail("compares numbers, not bool");
    const Shape s = broadcast(c, x.shape, b.shape);
    if (!computeData) return {shapeOnly(DType::kBool, s)};
    Tensor y = make(DType::kBool, s);
    const auto ai = broadcastIndex(x.shape, s), bi = broadcastIndex(b.shape, s);
    enum class Compare { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };
    const Compare f = op == "Equal" ? Compare::kEqual : op == "Less" ? Compare::kLess : op == "Greater" ? Compare::kGreater
                      : op == "LessOrEqual" ? Compare::kLessOrEqual : Compare::kGreaterOrEqual;
    for (int64_t i = 0; i < count(s); ++i) {
      // Integers compared exactly (an int64 need not fit a double); floats as IEEE does (NaN unequal).
      const size_t a = size_t(ai[size_t(i)]), bb = size_t(bi[size_t(i)]);
      bool r;
      if (x.dtype == DType::kFloat32) {
        const float u = x.floats[a], v = b.floats[bb];
        r = f == Compare::kEqual ? u == v : f == Compare::kLess ? u < v : f == Compare::kGreater ? u > v : f == Compare::kLessOrEqual ? u <= v : u >= v;
      } else {
        const int64_t u = x.ints[a], v = b.ints[bb];
        r = f == Compare::kEqual ? u == v : f == Compare::kLess ? u < v : f == Compare::kGreater ? u > v : f == Compare::kLessOrEqual ? u <= v : u >= v;
      }
      y.ints[size_t(i)] = r;
    }
    return {y};
  }
  if (op == "Not") {
    if (x.dtype != DType::kBool) c.fail("takes bool, not " + x.describe());
    if (!computeData) return {shapeOnly(DType::kBool, x.shape)};
    Tensor y = make(DType::kBool, x.shape);
    for (size_t i = 0; i < x.ints.size(); ++i) y.ints[i] = x.ints[i] == 0;
    return {y};
  }
  if (op == "Where") {
    const Tensor &a = c.in(ins, 1), &b = c.in(ins, 2);
    if (x.dtype != DType::kBool) c.fail("the condition must be bool, not " + x.describe());
    if (a.dtype != b.dtype) c.fail("operand types differ: " + a.describe() + " and " + b.describe());
    const Shape s = broadcast(c, broadcast(c, x.shape, a.shape), b.shape);
    if (!computeData) return {shapeOnly(a.dtype, s)};
    Tensor y = make(a.dtype, s);
    const auto ci = broadcastIndex(x.shape, s), ai = broadcastIndex(a.shape, s), bi = broadcastIndex(b.shape, s);
    for (int64_t i = 0; i < count(s); ++i) {
      const bool pick = x.ints[size_t(ci[size_t(i)])] != 0;
      const Tensor& from = pick ? a : b;
      const size_t at = size_t((pick ? ai : bi)[size_t(i)]);
      if (a.dtype == DType::kFloat32) y.floats[size_t(i)] = from.floats[at];
      else y.ints[size_t(i)] = from.ints[at];
    }
    return {y};
  }
  if (op == "Resize") return {detail::resize(n, c.opset, ins, computeData)};
  if (op == "Upsample") {
    // Opset 9's Upsample (opset 10 only deprecated it): Resize with asymmetric coordinates, nearest
    // rounding down, and the scales as input 1 (or opset 7's attribute).
    Node r = n;
    auto text = [](const char* v) {
      ir::Attribute a;
      a.kind = ir::Attribute::Kind::kString;
      a.s = v;
      return a;
    };
    r.attrs["coordinate_transformation_mode"] = text("asymmetric");
    r.attrs["nearest_mode"] = text("floor");
    Tensor fromAttr;
    const Tensor* scales = c.has(ins, 1) ? ins[1] : nullptr;
    if (!scales && n.has("scales")) {
      const auto it = n.attrs.find("scales");
      fromAttr = make(DType::kFloat32, {int64_t(it->second.floats.size())});
      fromAttr.floats = it->second.floats;
      scales = &fromAttr;
    }
    if (!scales) c.fail("needs its scales (input 1, or the scales attribute)");
    return {detail::resize(r, c.opset, {&x, nullptr, scales, nullptr}, computeData)};
  }
  if (op == "ConvTranspose") return {detail::convTranspose(n, c.opset, ins, computeData)};
  if (op == "PRelu") {
    const Tensor& slope = c.in(ins, 1);
    if (x.dtype != DType::kFloat32 || slope.dtype != DType::kFloat32) c.fail("takes float32 input and slope");
    // The slope broadcasts to the input (unidirectionally).
    if (broadcast(c, x.shape, slope.shape) != x.shape)
      c.fail("slope " + shapeText(slope.shape) + " does not broadcast to the input " + shapeText(x.shape));
    if (!computeData) return {shapeOnly(x.dtype, x.shape)};
    Tensor y = make(x.dtype, x.shape);
    const auto si = broadcastIndex(slope.shape, x.shape);
    for (size_t i = 0; i < x.floats.size(); ++i) {
      const float v = x.floats[i];
      y.floats[i] = v < 0 ? v * slope.floats[size_t(si[i])] : v;
    }
    return {y};
  }
  if (op == "Pad") {
    const std::string mode = n.attrString("mode", "constant");
    const bool constantMode = mode == "constant", edgeMode = mode == "edge";
    if (mode != "constant" && mode != "reflect" && mode != "edge")
      c.fail("mode '" + mode + "' is not supported (constant, reflect and edge are)");
    const int64_t rank = int64_t(x.shape.size());
    const Tensor& padsT = c.in(ins, 1);
    if (padsT.dtype != DType::kInt64 || int64_t(padsT.ints.size()) != 2 * rank)
      c.fail("pads must be a constant int64 tensor of " + std::to_string(2 * rank) + " values, got " + padsT.describe());
    double fill = 0;
    if (c.has(ins, 2)) {
      const Tensor& v = *ins[2];
      if (v.dtype != x.dtype || v.elements() != 1) c.fail("constant_value must be one " + std::string(ir::dtypeName(x.dtype)));
      fill = value(v, 0);
    }
    Shape s(static_cast<size_t>(rank), 0);
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t before = padsT.ints[size_t(d)], after = padsT.ints[size_t(d + rank)];
      constexpr int64_t kMaxPad = int64_t(1) << 31;
      if (std::llabs(before) > kMaxPad || std::llabs(after) > kMaxPad)
        c.fail("pads " + shapeText(padsT.ints) + " are out of range on axis " + std::to_string(d));
      s[size_t(d)] = x.shape[size_t(d)] + before + after;
      if (s[size_t(d)] < 0) c.fail("pads " + shapeText(padsT.ints) + " leave axis " + std::to_string(d) + " negative");
      if (mode == "reflect" && (before >= x.shape[size_t(d)] || after >= x.shape[size_t(d)]) && (before > 0 || after > 0))
        c.fail("reflect padding of " + std::to_string(std::max(before, after)) + " on axis " + std::to_string(d) +
               " of size " + std::to_string(x.shape[size_t(d)]) + ": it must be smaller than the axis");
      if (mode == "edge" && x.shape[size_t(d)] == 0 && s[size_t(d)] > 0) c.fail("edge padding of an empty axis");
    }
    if (!computeData) return {shapeOnly(x.dtype, s)};
    Tensor y = make(x.dtype, s);
    std::vector<int64_t> inStride(size_t(rank), 1);
    for (int64_t k = rank - 2; k >= 0; --k) inStride[size_t(k)] = inStride[size_t(k) + 1] * x.shape[size_t(k) + 1];
    for (int64_t i = 0; i < count(s); ++i) {
      int64_t rem = i, src = 0;
      bool outside = false;
      for (int64_t k = rank - 1; k >= 0; --k) {
        const int64_t dim = x.shape[size_t(k)];
        int64_t at = rem % s[size_t(k)] - padsT.ints[size_t(k)];
        rem /= s[size_t(k)];
        if (at < 0 || at >= dim) {
          if (constantMode) outside = true;
          else if (edgeMode) at = std::clamp<int64_t>(at, 0, dim - 1);
          else at = at < 0 ? -at : 2 * (dim - 1) - at;
        }
        src += at * inStride[size_t(k)];
      }
      if (x.dtype == DType::kFloat32) y.floats[size_t(i)] = outside ? float(fill) : x.floats[size_t(src)];
      else y.ints[size_t(i)] = outside ? int64_t(fill) : x.ints[size_t(src)];
    }
    return {y};
  }
  if (op == "Split") {
    const int64_t rank = int64_t(x.shape.size());
    int64_t axis = n.attrInt("axis", 0);
    if (axis < -rank || axis >= rank) c.fail("axis " + std::to_string(axis) + " is out of range for " + shapeText(x.shape));
    if (axis < 0) axis += rank;
    const int64_t dim = x.shape[size_t(axis)], parts = int64_t(n.outputs.size());
    if (c.opset >= 13 && c.has(ins, 1) && int64_t(ins[1]->ints.size()) != ins[1]->elements())
      c.fail("the split sizes must be a constant");
    std::vector<int64_t> sizes = c.opset >= 13 ? (c.has(ins, 1) ? ins[1]->ints : std::vector<int64_t>{}) : n.attrInts("split", {});
    if (sizes.empty()) {
      if (parts < 1 || dim % parts) c.fail("axis " + std::to_string(axis) + " of " + shapeText(x.shape) + " does not split into " + std::to_string(parts) + " equal parts");
      sizes.assign(size_t(parts), dim / parts);
    }
    if (int64_t(sizes.size()) != parts) c.fail(std::to_string(sizes.size()) + " split sizes for " + std::to_string(parts) + " outputs");
    int64_t total = 0;
    for (int64_t v : sizes) {
      if (v < 0) c.fail("negative split size " + std::to_string(v));
      total += v;
    }
    if (total != dim) c.fail("split sizes add up to " + std::to_string(total) + ", axis " + std::to_string(axis) + " has " + std::to_string(dim));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape[size_t(d)];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape[size_t(d)];
    std::vector<Tensor> outs;
    int64_t offset = 0;
    for (int64_t part : sizes) {
      Shape s = x.shape;
      s[size_t(axis)] = part;
      if (!computeData) {
        outs.push_back(shapeOnly(x.dtype, s));
        continue;
      }
      Tensor y = make(x.dtype, s);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t e = 0; e < part * inner; ++e) {
          const size_t from = size_t((o * dim + offset) * inner + e), to = size_t(o * part * inner + e);
          if (x.dtype == DType::kFloat32) y.floats[to] = x.floats[from];
          else y.ints[to] = x.ints[from];
        }
      outs.push_back(std::move(y));
      offset += part;
    }
    return outs;
  }
  if (op == "Cast") {
    // ONNX's TensorProto element types this executor holds.
    const int64_t to = n.attrInt("to", 0);
    DType t;
    switch (to) {
      case 1: t = DType::kFloat32; break;
      case 2: t = DType::kUInt8; break;
      case 3: t = DType::kInt8; break;
      case 6: t = DType::kInt32; break;
      case 7: t = DType::kInt64; break;
      case 9: t = DType::kBool; break;
      default: c.fail("casting to element type " + std::to_string(to) + " is not supported (float, uint8, int8, int32, int64, bool are)");
    }
    if (!computeData) return {shapeOnly(t, x.shape)};
    Tensor y = make(t, x.shape);
    for (int64_t i = 0; i < count(x.shape); ++i) {
      if (t == DType::kFloat32) {
        y.floats[size_t(i)] = float(value(x, i));
      } else if (t == DType::kBool) {
        y.ints[size_t(i)] = value(x, i) != 0;  // NaN is true, as in numpy
      } else if (x.dtype == DType::kFloat32) {
        // Float to integer truncates toward zero; out-of-range values saturate instead of being undefined.
        const double v = std::trunc(double(x.floats[size_t(i)]));
        if (std::isnan(v)) c.fail("cannot cast NaN at element " + std::to_string(i) + " to an integer");
        y.ints[size_t(i)] = saturateTo(t, v);
      } else {
        y.ints[size_t(i)] = wrapTo(t, x.ints[size_t(i)]);
      }
    }
    return {y};
  }
  if (op == "ConstantOfShape") {
    if (x.dtype != DType::kInt64 || x.shape.size() != 1) c.fail("takes a 1-D int64 shape, not " + x.describe());
    if (int64_t(x.ints.size()) != x.elements()) c.fail("the shape must be a constant (it does not fold at compile time)");
    Shape s = x.ints;
    for (int64_t d : s)
      if (d < 0) c.fail("negative dimension in " + shapeText(s));
    Tensor fill = make(DType::kFloat32, {1});
    auto it = n.attrs.find("value");
    if (it != n.attrs.end() && it->second.tensor) {
      fill = *it->second.tensor;
      if (fill.elements() != 1) c.fail("value must hold one element");
    }
    if (!computeData) return {shapeOnly(fill.dtype, s)};
    Tensor y = make(fill.dtype, s);
    if (fill.dtype == DType::kFloat32) std::fill(y.floats.begin(), y.floats.end(), fill.floats.at(0));
    else std::fill(y.ints.begin(), y.ints.end(), fill.ints.at(0));
    return {y};
  }
  if (op == "Range") {
    const Tensor& limit = c.in(ins, 1);
    const Tensor& delta = c.in(ins, 2);
    if (x.elements() != 1 || limit.elements() != 1 || delta.elements() != 1 || limit.dtype != x.dtype || delta.dtype != x.dtype)
      c.fail("start, limit and delta must be scalars of one type");
    // Range's output length depends on its values: only constant operands have a shape.
    if (!x.isConstant && x.floats.empty() && x.ints.empty()) c.fail("start, limit and delta must be constants");
    const double start = value(x, 0), lim = value(limit, 0), step = value(delta, 0);
    if (step == 0) c.fail("delta is 0");
    const int64_t len = std::max<int64_t>(int64_t(std::ceil((lim - start) / step)), 0);
    Tensor y = make(x.dtype, {len});
    for (int64_t i = 0; i < len; ++i) {
      if (x.dtype == DType::kFloat32) y.floats[size_t(i)] = float(start + double(i) * step);
      else y.ints[size_t(i)] = x.ints[0] + i * delta.ints[0];
    }
    return {y};
  }
  if (op == "Expand") {
    const Tensor& shapeT = c.in(ins, 1);
    if (shapeT.dtype != DType::kInt64 || shapeT.shape.size() != 1) c.fail("the shape must be a 1-D int64 tensor, not " + shapeT.describe());
    if (shapeT.ints.size() != size_t(shapeT.elements())) c.fail("the shape must be a constant");
    const Shape s = broadcast(c, x.shape, shapeT.ints);
    if (!computeData) return {shapeOnly(x.dtype, s)};
    Tensor y = make(x.dtype, s);
    const auto xi = broadcastIndex(x.shape, s);
    for (int64_t i = 0; i < count(s); ++i) {
      if (x.dtype == DType::kFloat32) y.floats[size_t(i)] = x.floats[size_t(xi[size_t(i)])];
      else y.ints[size_t(i)] = x.ints[size_t(xi[size_t(i)])];
    }
    return {y};
  }
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
    const bool qlinear = op == "QLinearConv";
    const Tensor& w = c.in(ins, qlinear ? 3 : 1);
    if (w.shape.size() != 4) c.fail("only 2-D convolutions are supported (weights " + shapeText(w.shape) + ")");
    const Shape ks = n.attrInts("kernel_shape", {w.shape[2], w.shape[3]});
    if (ks.size() != 2 || ks[0] != w.shape[2] || ks[1] != w.shape[3]) c.fail("kernel_shape disagrees with the weights");
    const Window win = window(c, x.shape, w.shape[2], w.shape[3], false);
    const int64_t group = n.attrInt("group", 1);
    const Shape ys = {x.shape[0], w.shape[0], win.oh, win.ow};
    if (op == "Conv") {
      if (x.dtype != DType::kFloat32 || w.dtype != DType::kFloat32) c.fail("Conv takes float32 (use ConvInteger or QLinearConv)");
      if (!computeData) return {shapeOnly(DType::kFloat32, ys)};
      if (c.kernels == FloatKernels::kLibrary) {
        const int64_t CG = w.shape[1];
        if (group < 1 || x.shape[1] != CG * group || w.shape[0] % group)
          c.fail("channels " + std::to_string(x.shape[1]) + " and weights " + shapeText(w.shape) + " do not match group " +
                 std::to_string(group));
        if (c.has(ins, 2) && ins[2]->floats.size() != size_t(w.shape[0])) c.fail("the bias must have one value per output channel");
        detail::ConvGeometry geo;
        geo.n = x.shape[0], geo.c = x.shape[1], geo.h = x.shape[2], geo.w = x.shape[3], geo.o = w.shape[0];
        geo.kh = win.kh, geo.kw = win.kw, geo.group = group, geo.strideH = win.sh, geo.strideW = win.sw;
        geo.dilationH = win.dh, geo.dilationW = win.dw, geo.padTop = win.pt, geo.padLeft = win.pl, geo.outH = win.oh, geo.outW = win.ow;
        Tensor y = make(DType::kFloat32, ys);
        detail::convolveFloat(geo, x.floats.data(), w.floats.data(), c.has(ins, 2) ? ins[2]->floats.data() : nullptr,
                              y.floats.data());
        return {y};
      }
      // Sums in double, rounded once to float32 (as Gemm and MatMul do here): the float32 result
      // nearest the exact one, whatever order another runtime adds in.
      std::vector<double> acc = convolve<double>(
          c, x.shape, w.shape, win, group, [&](int64_t i) { return double(x.floats[size_t(i)]); },
          [&](int64_t i) { return double(w.floats[size_t(i)]); });
      Tensor y = make(DType::kFloat32, ys);
      const int64_t plane = win.oh * win.ow;
      for (int64_t i = 0; i < count(ys); ++i) {
        const double b = c.has(ins, 2) ? double(ins[2]->floats.at(size_t((i / plane) % ys[1]))) : 0.0;
        y.floats[size_t(i)] = float(acc[size_t(i)] + b);
      }
      return {y};
    }
    // Integer convolutions: exact int64 sums of zero-point-corrected operands.
    const size_t xzIn = 2, wzIn = qlinear ? 5 : 3;
    const DType outType = qlinear ? c.in(ins, 7).dtype : DType::kInt32;
    if (!computeData) return {shapeOnly(outType, ys)};
    const int64_t xz = c.has(ins, xzIn) ? ins[xzIn]->ints.at(0) : 0;
    const Tensor* wz = c.has(ins, wzIn) ? ins[wzIn] : nullptr;
    const int64_t per = w.shape[1] * w.shape[2] * w.shape[3];
    std::vector<int64_t> acc = convolve<int64_t>(
        c, x.shape, w.shape, win, group, [&](int64_t i) { return x.ints[size_t(i)] - xz; },
        [&](int64_t i) {
          const int64_t z = wz ? wz->ints.at(wz->ints.size() == 1 ? 0 : size_t(i / per)) : 0;
          return w.ints[size_t(i)] - z;
        });
    Tensor y = make(qlinear ? outType : DType::kInt32, ys);
    const int64_t plane = win.oh * win.ow;
    for (int64_t i = 0; i < count(ys); ++i) {
      if (!qlinear) {
        y.ints[size_t(i)] = acc[size_t(i)];
        continue;
      }
      const int64_t o = (i / plane) % ys[1];
      const Tensor& sw = c.in(ins, 4);
      const double real = double(c.in(ins, 1).floats.at(0)) * double(sw.floats.at(sw.floats.size() == 1 ? 0 : size_t(o)));
      const int64_t bias = c.has(ins, 8) ? ins[8]->ints.at(size_t(o)) : 0;
      // The ONNX reference rounds the float product to int32 first, then adds the zero point.
      const double scaled = double(float(double(acc[size_t(i)] + bias) * real / double(c.in(ins, 6).floats.at(0))));
      y.ints[size_t(i)] = saturateTo(outType, std::nearbyint(scaled) + double(c.in(ins, 7).ints.at(0)));
    }
    return {y};
  }
  if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
    const bool qlinear = op == "QLinearMatMul";
    const Tensor& b = c.in(ins, qlinear ? 3 : 1);
    if (op == "MatMul") {
      if (x.dtype != DType::kFloat32) c.fail("MatMul takes float32 here (use MatMulInteger or QLinearMatMul)");
      if (!computeData) {
        Tensor t = matmul<float>(c, x.shape, b.shape, DType::kFloat32, [](int64_t) { return 0.0f; },
                                 [](int64_t) { return 0.0f; }, [](Tensor&, int64_t, float) {}, false);
        return {shapeOnly(DType::kFloat32, t.shape)};
      }
      return {matmul<double>(c, x.shape, b.shape, DType::kFloat32, [&](int64_t i) { return double(x.floats[size_t(i)]); },
                             [&](int64_t i) { return double(b.floats[size_t(i)]); },
                             [](Tensor& t, int64_t i, double v) { t.floats[size_t(i)] = float(v); })};
    }
    const DType outType = qlinear ? c.in(ins, 7).dtype : DType::kInt32;
    if (!computeData) {
      Tensor t = matmul<int64_t>(c, x.shape, b.shape, outType, [](int64_t) { return int64_t(0); },
                                 [](int64_t) { return int64_t(0); }, [](Tensor&, int64_t, int64_t) {}, false);
      return {shapeOnly(outType, t.shape)};
    }
    const int64_t az = c.has(ins, 2) ? ins[2]->ints.at(0) : 0;
    const Tensor* bz = c.has(ins, qlinear ? 5 : 3) ? ins[qlinear ? 5 : 3] : nullptr;
    const int64_t cols = b.shape.back();
    const Tensor* bs = qlinear ? &c.in(ins, 4) : nullptr;
    const double sa = qlinear ? double(c.in(ins, 1).floats.at(0)) : 1, sy = qlinear ? double(c.in(ins, 6).floats.at(0)) : 1;
    const int64_t yz = qlinear ? c.in(ins, 7).ints.at(0) : 0;
    return {matmul<int64_t>(
        c, x.shape, b.shape, outType, [&](int64_t i) { return x.ints[size_t(i)] - az; },
        [&](int64_t i) {
          const int64_t z = bz ? bz->ints.at(bz->ints.size() == 1 ? 0 : size_t(i % cols)) : 0;
          return b.ints[size_t(i)] - z;
        },
        [&](Tensor& t, int64_t i, int64_t acc) {
          if (!qlinear) {
            t.ints[size_t(i)] = acc;
            return;
          }
          const int64_t col = i % t.shape.back();
          const double sb = double(bs->floats.at(bs->floats.size() == 1 ? 0 : size_t(col)));
          const double scaled = double(float(double(acc) * sa * sb / sy));
          t.ints[size_t(i)] = saturateTo(outType, std::nearbyint(scaled) + double(yz));
        })};
  }
  if (op == "Gemm") {
    const Tensor& b = c.in(ins, 1);
    if (x.shape.size() != 2 || b.shape.size() != 2) c.fail("Gemm takes 2-D operands");
    if (x.dtype != DType::kFloat32) c.fail("Gemm takes float32");
    const bool ta = n.attrInt("transA", 0), tb = n.attrInt("transB", 0);
    const int64_t M = ta ? x.shape[1] : x.shape[0], K = ta ? x.shape[0] : x.shape[1];
    const int64_t K2 = tb ? b.shape[1] : b.shape[0], N = tb ? b.shape[0] : b.shape[1];
    if (K != K2) c.fail("inner dimensions differ: " + shapeText(x.shape) + " and " + shapeText(b.shape));
    const Shape ys = {M, N};
    if (c.has(ins, 2)) broadcast(c, ins[2]->shape, ys);
    if (!computeData) return {shapeOnly(DType::kFloat32, ys)};
    const float alpha = n.attrFloat("alpha", 1.0f), beta = n.attrFloat("beta", 1.0f);
    Tensor y = make(DType::kFloat32, ys);
    std::vector<int64_t> ci;
    if (c.has(ins, 2)) ci = broadcastIndex(ins[2]->shape, ys);
    if (c.kernels == FloatKernels::kLibrary) {
      detail::multiplyFloat(M, N, K, ta, tb, alpha, x.floats.data(), b.floats.data(), y.floats.data());
      if (c.has(ins, 2))
        for (int64_t i = 0; i < M * N; ++i) y.floats[size_t(i)] += beta * ins[2]->floats[size_t(ci[size_t(i)])];
      return {y};
    }
    for (int64_t m = 0; m < M; ++m)
      for (int64_t nn = 0; nn < N; ++nn) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += double(x.floats[size_t(ta ? k * M + m : m * K + k)]) * double(b.floats[size_t(tb ? nn * K + k : k * N + nn)]);
        double v = alpha * acc;
        if (c.has(ins, 2)) v += double(beta) * double(ins[2]->floats[size_t(ci[size_t(m * N + nn)])]);
        y.floats[size_t(m * N + nn)] = float(v);
      }
    return {y};
  }
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") {
    const bool isMax = op == "MaxPool";
    if (isMax && n.outputs.size() > 1 && !n.outputs[1].empty()) c.fail("the Indices output is not supported");
    if (x.shape.size() != 4) c.fail("only 2-D (N,C,H,W) pooling is supported, got " + shapeText(x.shape));
    Window win;
    if (op == "GlobalAveragePool") {
      win.kh = x.shape[2], win.kw = x.shape[3];
    } else {
      const Shape ks = n.attrInts("kernel_shape", {});
      if (ks.size() != 2) c.fail("kernel_shape needs two values");
      if (n.attrInt("storage_order", 0)) c.fail("storage_order 1 is not supported");
      win = window(c, x.shape, ks[0], ks[1], n.attrInt("ceil_mode", 0) != 0);
    }
    const Shape ys = {x.shape[0], x.shape[1], win.oh, win.ow};
    if (op != "MaxPool" && x.dtype != DType::kFloat32) c.fail(op + " takes float32");
    if (!computeData) return {shapeOnly(x.dtype, ys)};
    Tensor y = make(x.dtype, ys);
    const bool includePad = n.attrInt("count_include_pad", 0) != 0;
    const int64_t H = x.shape[2], W = x.shape[3];
    if (isMax && x.dtype == DType::kFloat32) {
      // Float max pooling without the average's bookkeeping: the same maximum (compared as
      // doubles, as below), taken over the taps inside the input.
      for (int64_t p = 0; p < x.shape[0] * x.shape[1]; ++p) {
        const float* plane = x.floats.data() + p * H * W;
        float* out = y.floats.data() + p * win.oh * win.ow;
        for (int64_t oy = 0; oy < win.oh; ++oy)
          for (int64_t ox = 0; ox < win.ow; ++ox) {
            double best = -std::numeric_limits<double>::infinity();
            for (int64_t ky = 0; ky < win.kh; ++ky) {
              const int64_t iy = oy * win.sh + ky * win.dh - win.pt;
              if (iy < 0 || iy >= H) continue;
              for (int64_t kx = 0; kx < win.kw; ++kx) {
                const int64_t ix = ox * win.sw + kx * win.dw - win.pl;
                if (ix >= 0 && ix < W) best = std::max(best, double(plane[iy * W + ix]));
              }
            }
            out[oy * win.ow + ox] = float(best);
          }
      }
      return {y};
    }
    for (int64_t p = 0; p < x.shape[0] * x.shape[1]; ++p)
      for (int64_t oy = 0; oy < win.oh; ++oy)
        for (int64_t ox = 0; ox < win.ow; ++ox) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          int64_t cnt = 0, padded = 0;
          for (int64_t ky = 0; ky < win.kh; ++ky)
            for (int64_t kx = 0; kx < win.kw; ++kx) {
              const int64_t iy = oy * win.sh + ky * win.dh - win.pt, ix = ox * win.sw + kx * win.dw - win.pl;
              const bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
              // count_include_pad counts the explicit padding, never what ceil mode reaches beyond it.
              if (!inside && iy >= -win.pt && iy < H + win.pb && ix >= -win.pl && ix < W + win.pr) ++padded;
              if (!inside) continue;
              const double v = value(x, (p * H + iy) * W + ix);
              best = std::max(best, v);
              sum += v;
              ++cnt;
            }
          const int64_t at = (p * win.oh + oy) * win.ow + ox;
          if (isMax) {
            if (x.dtype == DType::kFloat32) y.floats[size_t(at)] = float(best);
            else y.ints[size_t(at)] = int64_t(best);
          } else {
            const int64_t div = includePad ? cnt + padded : cnt;
            y.floats[size_t(at)] = float(sum / double(std::max<int64_t>(div, 1)));
          }
        }
    return {y};
  }
  if (op == "Shape") {
    // Needs only the input's shape: constant folding evaluates it on tensors without data.
    const int64_t rank = int64_t(x.shape.size());
    auto clampAxis = [&](int64_t a) { return std::min(std::max(a < 0 ? a + rank : a, int64_t(0)), rank); };
    const int64_t start = clampAxis(n.attrInt("start", 0)), end = clampAxis(n.attrInt("end", rank));
    Tensor y = make(DType::kInt64, {std::max<int64_t>(end - start, 0)});
    for (int64_t d = start; d < end; ++d) y.ints[size_t(d - start)] = x.shape[size_t(d)];
    return {y};
  }
  if (op == "Gather") {
    const Tensor& idx = c.in(ins, 1);
    if (idx.dtype != DType::kInt64 && idx.dtype != DType::kInt32) c.fail("indices must be int32 or int64, not " + idx.describe());
    const int64_t rank = int64_t(x.shape.size());
    int64_t axis = n.attrInt("axis", 0);
    if (axis < -rank || axis >= rank) c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    if (axis < 0) axis += rank;
    Shape s(x.shape.begin(), x.shape.begin() + axis);
    s.insert(s.end(), idx.shape.begin(), idx.shape.end());
    s.insert(s.end(), x.shape.begin() + axis + 1, x.shape.end());
    if (!computeData) return {shapeOnly(x.dtype, s)};
    const int64_t dim = x.shape[size_t(axis)];
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape[size_t(d)];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape[size_t(d)];
    Tensor y = make(x.dtype, s);
    const int64_t picks = int64_t(idx.ints.size());
    for (int64_t k = 0; k < picks; ++k) {
      int64_t i = idx.ints[size_t(k)];
      if (i < -dim || i >= dim) c.fail("index " + std::to_string(i) + " is out of range for axis " + std::to_string(axis) + " of " + shapeText(x.shape));
      if (i < 0) i += dim;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t e = 0; e < inner; ++e) {
          const size_t from = size_t((o * dim + i) * inner + e), to = size_t((o * picks + k) * inner + e);
          if (x.dtype == DType::kFloat32) y.floats[to] = x.floats[from];
          else y.ints[to] = x.ints[from];
        }
    }
    return {y};
  }
  if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax") {
    if (x.dtype != DType::kFloat32) c.fail("takes float32, not " + x.describe());
    const bool isMax = op == "ReduceMax", isMean = op == "ReduceMean";
    const Reduction r = reduction(n, c.opset, x.shape, ins);
    if (!computeData) return {shapeOnly(x.dtype, r.shape)};
    Tensor y = make(x.dtype, r.shape);
    // Every output element in row-major order, its reduced elements in row-major order, summed in
    // double (the code generator's order too).
    std::vector<int64_t> keptShape, keptStride, redShape, redStride;
    int64_t stride = 1;
    std::vector<int64_t> inStride(x.shape.size());
    for (int d = int(x.shape.size()) - 1; d >= 0; --d) {
      inStride[size_t(d)] = stride;
      stride *= x.shape[size_t(d)];
    }
    for (size_t d = 0; d < x.shape.size(); ++d) {
      (r.reduced[d] ? redShape : keptShape).push_back(x.shape[d]);
      (r.reduced[d] ? redStride : keptStride).push_back(inStride[d]);
    }
    auto at = [](int64_t i, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
      int64_t off = 0;
      for (int d = int(dims.size()) - 1; d >= 0; --d) {
        off += (i % dims[size_t(d)]) * strides[size_t(d)];
        i /= dims[size_t(d)];
      }
      return off;
    };
    const int64_t outCount = count(keptShape), redCount = count(redShape);
    for (int64_t o = 0; o < outCount; ++o) {
      const int64_t base = at(o, keptShape, keptStride);
      double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t k = 0; k < redCount; ++k) {
        const double v = double(x.floats[size_t(base + at(k, redShape, redStride))]);
        acc = isMax ? std::max(acc, v) : acc + v;
      }
      if (isMean) acc = acc / double(redCount);
      y.floats[size_t(o)] = float(acc);
    }
    return {y};
  }
  if (op == "Slice") {
    const SliceWindow w = sliceWindow(n, c.opset, x.shape, ins);
    if (!computeData) return {shapeOnly(x.dtype, w.shape)};
    Tensor y = make(x.dtype, w.shape);
    std::vector<int64_t> inStride(x.shape.size(), 1);
    for (int k = int(x.shape.size()) - 2; k >= 0; --k) inStride[size_t(k)] = inStride[size_t(k) + 1] * x.shape[size_t(k) + 1];
    for (int64_t i = 0; i < count(w.shape); ++i) {
      int64_t rem = i, src = 0;
      for (int k = int(w.shape.size()) - 1; k >= 0; --k) {
        const int64_t idx = rem % w.shape[size_t(k)];
        rem /= w.shape[size_t(k)];
        src += (w.start[size_t(k)] + idx * w.step[size_t(k)]) * inStride[size_t(k)];
      }
      if (x.dtype == DType::kFloat32) y.floats[size_t(i)] = x.floats[size_t(src)];
      else y.ints[size_t(i)] = x.ints[size_t(src)];
    }
    return {y};
  }
  if (op == "Concat") {
    const int64_t rank = int64_t(x.shape.size());
    int64_t axis = n.attrInt("axis", 0);
    if (!n.has("axis")) c.fail("needs its axis attribute");
    if (axis < -rank || axis >= rank) c.fail("axis " + std::to_string(axis) + " is out of range for " + shapeText(x.shape));
    if (axis < 0) axis += rank;
    Shape s = x.shape;
    s[size_t(axis)] = 0;
    for (size_t k = 0; k < ins.size(); ++k) {
      const Tensor& t = c.in(ins, k);
      if (t.dtype != x.dtype) c.fail("input " + std::to_string(k) + " is " + t.describe() + ", input 0 " + x.describe());
      bool fits = int64_t(t.shape.size()) == rank;
      for (int64_t d = 0; fits && d < rank; ++d) fits = d == axis || t.shape[size_t(d)] == x.shape[size_t(d)];
      if (!fits)
        c.fail("input " + std::to_string(k) + "'s shape " + shapeText(t.shape) + " does not match " + shapeText(x.shape) +
               " outside axis " + std::to_string(axis));
      s[size_t(axis)] += t.shape[size_t(axis)];
    }
    if (!computeData) return {shapeOnly(x.dtype, s)};
    Tensor y = make(x.dtype, s);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= s[size_t(d)];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= s[size_t(d)];
    // Each input's rows of `shape[axis] * inner` elements, side by side in every outer slice.
    const int64_t rowOut = s[size_t(axis)] * inner;
    int64_t offset = 0;
    for (const Tensor* t : ins) {
      const int64_t row = t->shape[size_t(axis)] * inner;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t e = 0; e < row; ++e) {
          const size_t from = size_t(o * row + e), to = size_t(o * rowOut + offset + e);
          if (x.dtype == DType::kFloat32) y.floats[to] = t->floats[from];
          else y.ints[to] = t->ints[from];
        }
      offset += row;
    }
    return {y};
  }
  if (op == "BatchNormalization") {
    if (x.shape.size() < 2 || x.dtype != DType::kFloat32) c.fail("takes a float32 input of rank 2 or more");
    if (n.attrInt("training_mode", 0)) c.fail("training mode is not supported");
    if (n.outputs.size() > 1)
      for (size_t i = 1; i < n.outputs.size(); ++i)
        if (!n.outputs[i].empty()) c.fail("only the inference output is supported");
    const int64_t C = x.shape[1];
    for (size_t i = 1; i < 5; ++i)
      if (c.in(ins, i).elements() != C) c.fail("input " + std::to_string(i) + " must have " + std::to_string(C) + " values");
    if (!computeData) return {shapeOnly(DType::kFloat32, x.shape)};
    const float eps = n.attrFloat("epsilon", 1e-5f);
    Tensor y = make(DType::kFloat32, x.shape);
    const int64_t inner = count(x.shape) / (x.shape[0] * C);
    // Each channel's factor once (the same operations per element as before, so the same bits, and
    // the code generator's): eval's float reference spent most of its time in per-element sqrt.
    std::vector<double> k(static_cast<size_t>(C));
    for (size_t ch = 0; ch < size_t(C); ++ch) k[ch] = double(ins[1]->floats[ch]) / std::sqrt(double(ins[4]->floats[ch]) + eps);
    size_t i = 0;
    for (int64_t b = 0; b < x.shape[0]; ++b)
      for (size_t ch = 0; ch < size_t(C); ++ch) {
        const double mean = ins[3]->floats[ch], beta = ins[2]->floats[ch];
        for (int64_t e = 0; e < inner; ++e, ++i) y.floats[i] = float((double(x.floats[i]) - mean) * k[ch] + beta);
      }
    return {y};
  }
  if (op == "Flatten" || op == "Reshape" || op == "Transpose" || op == "Squeeze" || op == "Unsqueeze") {
    Shape s;
    std::vector<int64_t> perm;
    if (op == "Squeeze") {
      const std::vector<int64_t> axes = squeezeAxes(c, ins, int64_t(x.shape.size()));
      for (size_t d = 0; d < x.shape.size(); ++d) {
        const bool listed = std::binary_search(axes.begin(), axes.end(), int64_t(d));
        if (listed && x.shape[d] != 1)
          c.fail("cannot squeeze axis " + std::to_string(d) + " of " + shapeText(x.shape) + ": its size is not 1");
        if (!(listed || (axes.empty() && x.shape[d] == 1))) s.push_back(x.shape[d]);
      }
    } else if (op == "Unsqueeze") {
      const int64_t rank = int64_t(x.shape.size());
      std::vector<int64_t> given = n.has("axes") ? n.attrInts("axes", {}) : c.in(ins, 1).ints;
      const std::vector<int64_t> axes = squeezeAxes(c, ins, rank + int64_t(given.size()));
      if (axes.empty()) c.fail("needs at least one axis");
      size_t from = 0;
      for (int64_t d = 0; d < rank + int64_t(axes.size()); ++d)
        s.push_back(std::binary_search(axes.begin(), axes.end(), d) ? 1 : x.shape[from++]);
    } else if (op == "Flatten") {
      int64_t axis = n.attrInt("axis", 1);
      if (axis < 0) axis += int64_t(x.shape.size());
      if (axis < 0 || axis > int64_t(x.shape.size())) c.fail("axis out of range for " + shapeText(x.shape));
      int64_t outer = 1;
      for (int64_t i = 0; i < axis; ++i) outer *= x.shape[size_t(i)];
      s = {outer, count(x.shape) / std::max<int64_t>(outer, 1)};
    } else if (op == "Reshape") {
      s = reshapeTarget(c, x.shape, c.in(ins, 1));
    } else {
      perm = n.attrInts("perm", {});
      if (perm.empty())
        for (int64_t i = int64_t(x.shape.size()) - 1; i >= 0; --i) perm.push_back(i);
      if (perm.size() != x.shape.size()) c.fail("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(x.shape.size()));
      std::vector<int64_t> seen = perm;
      std::sort(seen.begin(), seen.end());
      for (size_t i = 0; i < seen.size(); ++i)
        if (seen[i] != int64_t(i)) c.fail("perm is not a permutation");
      for (int64_t p : perm) s.push_back(x.shape[size_t(p)]);
    }
    if (!computeData) return {shapeOnly(x.dtype, s)};
    Tensor y = x;
    y.name.clear();
    y.isConstant = false;
    y.shape = s;
    if (op == "Transpose" && count(s) > 0) {
      std::vector<int64_t> inStride(x.shape.size(), 1);
      for (int k = int(x.shape.size()) - 2; k >= 0; --k) inStride[size_t(k)] = inStride[size_t(k) + 1] * x.shape[size_t(k) + 1];
      // The output in order: the last axis as a strided run of the input, the others by an
      // odometer that moves the source offset as it counts.
      const size_t rank = s.size();
      std::vector<int64_t> step(rank), at(rank, 0);
      for (size_t k = 0; k < rank; ++k) step[k] = inStride[size_t(perm[k])];
      const int64_t run = rank ? s.back() : 1, runStep = rank ? step.back() : 0;
      auto copy = [&](auto* out, const auto* in) {
        int64_t src = 0;
        for (int64_t i = 0; i < count(s); i += run) {
          for (int64_t j = 0; j < run; ++j) out[i + j] = in[src + j * runStep];
          for (int k = int(rank) - 2; k >= 0; --k) {
            src += step[size_t(k)];
            if (++at[size_t(k)] < s[size_t(k)]) break;
            src -= step[size_t(k)] * s[size_t(k)];
            at[size_t(k)] = 0;
          }
        }
      };
      if (x.dtype == DType::kFloat32) copy(y.floats.data(), x.floats.data());
      else copy(y.ints.data(), x.ints.data());
    }
    return {y};
  }
  if (op == "Pow") {
    // The output takes the base's type (opset 12 on: any exponent type). Float bases in double,
    // rounded once; integer bases exactly for integer exponents (repeated squaring, wrapping as
    // the type does), else the float power truncated toward zero, as NumPy's astype does.
    const Tensor& e = c.in(ins, 1);
    if (x.dtype == DType::kBool || e.dtype == DType::kBool) c.fail("takes numbers, not bool");
    const Shape s = broadcast(c, x.shape, e.shape);
    if (!computeData) return {shapeOnly(x.dtype, s)};
    Tensor y = make(x.dtype, s);
    const auto ai = broadcastIndex(x.shape, s), bi = broadcastIndex(e.shape, s);
    for (int64_t i = 0; i < count(s); ++i) {
      const size_t a = size_t(ai[size_t(i)]), b = size_t(bi[size_t(i)]);
      if (x.dtype == DType::kFloat32) {
        y.floats[size_t(i)] = float(std::pow(double(x.floats[a]), value(e, int64_t(b))));
      } else if (e.dtype != DType::kFloat32) {
        int64_t base = x.ints[a], exponent = e.ints[b];
        if (exponent < 0) c.fail("an integer base to a negative integer power (output element " + std::to_string(i) + ")");
        uint64_t r = 1, m = uint64_t(base);
        for (; exponent; exponent >>= 1, m *= m)
          if (exponent & 1) r *= m;
        y.ints[size_t(i)] = wrapTo(x.dtype, int64_t(r));
      } else {
        const double r = std::pow(double(x.ints[a]), double(e.floats[b]));
        if (!std::isfinite(r)) c.fail("an integer power that is not finite (output element " + std::to_string(i) + ")");
        y.ints[size_t(i)] = saturateTo(x.dtype, std::trunc(r));
      }
    }
    return {y};
  }
  if (op == "LayerNormalization") {
    // Opset 17: over the axes from `axis` on, y = (x - mean) / sqrt(var + epsilon) * scale + bias,
    // each group's mean and variance in double; Mean and InvStdDev (float32, the stash type) have
    // the input's shape with the normalized axes kept as 1.
    if (x.dtype != DType::kFloat32) c.fail("takes float32");
    const Tensor& scale = c.in(ins, 1);
    const Tensor* bias = c.has(ins, 2) ? ins[2] : nullptr;
    if (n.attrInt("stash_type", 1) != 1) c.fail("stash_type " + std::to_string(n.attrInt("stash_type", 1)) + " is not supported (1, float32, is)");
    const int64_t rank = int64_t(x.shape.size());
    int64_t axis = n.attrInt("axis", -1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) c.fail("axis out of range for " + shapeText(x.shape));
    const Shape normalized(x.shape.begin() + axis, x.shape.end());
    for (const Tensor* t : {&scale, bias}) {
      if (!t) continue;
      if (t->dtype != DType::kFloat32) c.fail("scale and bias must be float32");
      if (broadcast(c, normalized, t->shape) != normalized)
        c.fail("scale or bias " + shapeText(t->shape) + " does not broadcast to the normalized shape " + shapeText(normalized));
    }
    Shape stats = x.shape;
    for (int64_t k = axis; k < rank; ++k) stats[size_t(k)] = 1;
    if (!computeData) return {shapeOnly(DType::kFloat32, x.shape), shapeOnly(DType::kFloat32, stats), shapeOnly(DType::kFloat32, stats)};
    const double epsilon = n.attrFloat("epsilon", 1e-5f);
    const int64_t len = count(normalized), groups = count(x.shape) / std::max<int64_t>(1, len);
    const auto si = broadcastIndex(scale.shape, normalized);
    const auto bi = bias ? broadcastIndex(bias->shape, normalized) : std::vector<int64_t>();
    Tensor y = make(DType::kFloat32, x.shape), mean = make(DType::kFloat32, stats), inv = make(DType::kFloat32, stats);
    for (int64_t gi = 0; gi < groups; ++gi) {
      const float* in = x.floats.data() + gi * len;
      double m = 0, v = 0;
      for (int64_t k = 0; k < len; ++k) m += in[k];
      m /= double(len);
      for (int64_t k = 0; k < len; ++k) v += (in[k] - m) * (in[k] - m);
      const double r = 1.0 / std::sqrt(v / double(len) + epsilon);
      for (int64_t k = 0; k < len; ++k)
        y.floats[size_t(gi * len + k)] = float((in[k] - m) * r * scale.floats[size_t(si[size_t(k)])] +
                                                (bias ? bias->floats[size_t(bi[size_t(k)])] : 0.0));
      mean.floats[size_t(gi)] = float(m);
      inv.floats[size_t(gi)] = float(r);
    }
    return {y, mean, inv};
  }
  if (op == "Softmax" || op == "LogSoftmax") {
    if (x.dtype != DType::kFloat32) c.fail("takes float32");
    const bool logarithm = op == "LogSoftmax";
    int64_t axis = n.attrInt("axis", c.opset >= 13 ? -1 : 1);
    if (axis < 0) axis += int64_t(x.shape.size());
    if (axis < 0 || axis >= int64_t(x.shape.size())) c.fail("axis out of range for " + shapeText(x.shape));
    if (!computeData) return {shapeOnly(DType::kFloat32, x.shape)};
    // Opsets before 13 normalize over every dimension from `axis` on; 13 and later over `axis` only.
    int64_t len = x.shape[size_t(axis)], inner = 1;
    for (size_t k = size_t(axis) + 1; k < x.shape.size(); ++k) inner *= x.shape[k];
    if (c.opset < 13) {
      len *= inner;
      inner = 1;
    }
    Tensor y = make(DType::kFloat32, x.shape);
    const int64_t outer = count(x.shape) / (len * inner);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        double mx = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t k = 0; k < len; ++k) mx = std::max(mx, double(x.floats[size_t((o * len + k) * inner + in)]));
        for (int64_t k = 0; k < len; ++k) sum += std::exp(double(x.floats[size_t((o * len + k) * inner + in)]) - mx);
        for (int64_t k = 0; k < len; ++k) {
          const size_t at = size_t((o * len + k) * inner + in);
          y.floats[at] = !logarithm ? float(std::exp(double(x.floats[at]) - mx) / sum)
                                         : float(double(x.floats[at]) - mx - std::log(sum));
        }
      }
    return {y};
  }
  if (op == "QuantizeLinear" || op == "DequantizeLinear") {
    const Tensor& scale = c.in(ins, 1);
    const Tensor* zp = c.has(ins, 2) ? ins[2] : nullptr;
    if (scale.dtype != DType::kFloat32) c.fail("the scale must be float32");
    if (zp && zp->elements() != scale.elements()) c.fail("scale and zero point differ in size");
    const bool quantize = op == "QuantizeLinear";
    const DType outType = op == "DequantizeLinear" ? DType::kFloat32 : zp ? zp->dtype : DType::kUInt8;
    if (op == "QuantizeLinear" && outType != DType::kUInt8 && outType != DType::kInt8)
      c.fail("quantizes to uint8 or int8 only, not " + std::string(ir::dtypeName(outType)));
    if (op == "DequantizeLinear" && x.dtype == DType::kFloat32) c.fail("dequantizes integers, not float32");
    if (op == "QuantizeLinear" && x.dtype != DType::kFloat32 && x.dtype != DType::kInt32) c.fail("quantizes float32 or int32");
    const int64_t axis = n.attrInt("axis", 1);
    if (!computeData) return {shapeOnly(outType, x.shape)};
    const std::vector<int64_t> pi = parameterIndex(c, x.shape, scale, axis);
    Tensor y = make(outType, x.shape);
    for (int64_t i = 0; i < count(x.shape); ++i) {
      const size_t p = size_t(pi[size_t(i)]);
      const int64_t z = zp ? zp->ints[p] : 0;
      if (quantize) {
        // ONNX divides in float: x / y_scale, rounded half to even, plus the zero point, saturated.
        y.ints[size_t(i)] = saturateTo(outType, double(std::nearbyint(float(value(x, i)) / scale.floats[p])) + double(z));
      } else {
        y.floats[size_t(i)] = float(double(x.ints[size_t(i)] - z) * double(scale.floats[p]));
      }
    }
    return {y};
  }
  c.fail("operator " + op + " is not supported");
}

// executeNode with its bounds checks (vector::at on an operand's values) reported as an error
// naming the node: a malformed model (say, an empty zero point) must not end the process.
std::vector<Tensor> execute(const Ctx& c, const std::vector<const Tensor*>& ins, bool computeData) {
  try {
    return executeNode(c, ins, computeData);
  } catch (const std::out_of_range&) {
    c.fail("an input holds fewer values or dimensions than the operator reads (a malformed model)");
  } catch (const TensorTooLarge& t) {
    c.fail("its output of shape " + t.shape + " (" + std::to_string(t.elements) + " elements) is beyond the " +
           std::to_string(kMaxTensorElements) + " elements one host tensor may hold");
  }
}

}  // namespace

bool hostSupports(const Node& n, int64_t opset) {
  return (n.domain.empty() || n.domain == "ai.onnx") && opset >= 11 && opset <= 17 && supportedOps().count(n.opType);
}

std::vector<Tensor> runHostNode(const Node& n, const std::vector<const Tensor*>& inputs, int64_t opset) {
  return execute(Ctx{n, opset}, inputs, true);
}

// The most elements a model's constant computations may create beyond their inputs' (256 MiB of
// float32), over one shape inference: shape chains and folded weights create almost none, an Expand
// or ConstantOfShape of a shape gone wrong creates gigabytes, one node at a time under the
// per-tensor limit.
constexpr int64_t kMaxConstantGrowth = int64_t(1) << 26;

void inferShapes(Graph& g) {
  int64_t grown = 0;
  for (const Node& n : g.nodes) {
    if (n.domain == "tessera" && n.opType != "FoldInput") continue;
    std::vector<const Tensor*> ins;
    for (const std::string& in : n.inputs) {
      if (in.empty()) {
        ins.push_back(nullptr);
        continue;
      }
      const Tensor& t = g.tensor(in);
      if (!t.hasShape) throw Error(n.label(g.opset), "input '" + in + "' has no known shape");
      ins.push_back(&t);
    }
    const bool allConstant = std::all_of(ins.begin(), ins.end(), [](const Tensor* t) { return !t || t->isConstant; });
    // Values computable now are computed (constant folding does the same later), so that a
    // Reshape's target from a Constant node or from a shape computation (Shape, Gather, Unsqueeze,
    // Concat) is known here. Dequantized weights are left to QDQ recognition, which reads their
    // scales.
    const bool shapeOf = n.opType == "Shape" && !ins.empty() && ins[0];
    const bool computed = n.domain.empty() && supportedOps().count(n.opType) && n.opType != "DequantizeLinear" &&
                          (allConstant || shapeOf);
    std::vector<Tensor> outs = execute(Ctx{n, g.opset}, ins, false);
    if (computed) {
      // Shapes first: the budget is checked before anything is allocated.
      int64_t in = 0, out = 0;
      for (const Tensor* t : ins)
        if (t && t->isConstant) in = satAdd(in, count(t->shape));
      for (const Tensor& t : outs) out = satAdd(out, count(t.shape));
      if (out > in) grown = satAdd(grown, out - in);
      if (grown > kMaxConstantGrowth)
        throw Error(n.label(g.opset), "computing its output at compile time would bring the model's constant computations to " +
                                          std::to_string(grown) + " elements beyond their inputs, past the " +
                                          std::to_string(kMaxConstantGrowth) + " Tessera allows (a shape computation gone wrong?)");
      outs = execute(Ctx{n, g.opset}, ins, true);
    }
    for (size_t i = 0; i < outs.size() && i < n.outputs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      Tensor& t = g.tensors[n.outputs[i]];
      t.name = n.outputs[i];
      t.dtype = outs[i].dtype;
      t.shape = outs[i].shape;
      t.hasShape = true;
      if (computed) {
        t.floats = std::move(outs[i].floats);
        t.ints = std::move(outs[i].ints);
        t.isConstant = true;
      }
    }
  }
}

std::map<std::string, Tensor> evaluate(const Graph& g, const std::map<std::string, Tensor>& inputs, FloatKernels kernels) {
  std::map<std::string, Tensor> values = inputs;
  for (const Node& n : g.nodes) {
    std::vector<const Tensor*> ins;
    for (const std::string& in : n.inputs) {
      if (in.empty()) {
        ins.push_back(nullptr);
        continue;
      }
      auto it = values.find(in);
      if (it != values.end()) {
        ins.push_back(&it->second);
        continue;
      }
      const Tensor& t = g.tensor(in);
      if (!t.isConstant) throw Error(n.label(g.opset), "input '" + in + "' has no value (is every graph input given?)");
      ins.push_back(&t);
    }
    std::vector<Tensor> outs = execute(Ctx{n, g.opset, kernels}, ins, true);
    for (size_t i = 0; i < outs.size() && i < n.outputs.size(); ++i)
      if (!n.outputs[i].empty()) {
        outs[i].name = n.outputs[i];
        values[n.outputs[i]] = std::move(outs[i]);
      }
  }
  return values;
}

WindowPads windowPads(const Node& n, int64_t inH, int64_t inW, int64_t extentH, int64_t extentW, int64_t strideH,
                      int64_t strideW, const std::function<void(const std::string&)>& fail) {
  WindowPads p;
  const std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    const Shape pads = n.attrInts("pads", {0, 0, 0, 0});
    if (pads.size() != 4) fail("pads needs four values");
    p.top = pads[0], p.left = pads[1], p.bottom = pads[2], p.right = pads[3];
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    // SAME: as many outputs as ceil(input / stride); an odd padding puts the extra row and column
    // at the end (UPPER) or the start (LOWER).
    const int64_t oh = (inH + strideH - 1) / strideH, ow = (inW + strideW - 1) / strideW;
    const int64_t ph = std::max<int64_t>(0, (oh - 1) * strideH + extentH - inH);
    const int64_t pw = std::max<int64_t>(0, (ow - 1) * strideW + extentW - inW);
    const bool upper = autoPad == "SAME_UPPER";
    p.top = upper ? ph / 2 : ph - ph / 2;
    p.bottom = ph - p.top;
    p.left = upper ? pw / 2 : pw - pw / 2;
    p.right = pw - p.left;
  } else if (autoPad != "VALID") {
    fail("unknown auto_pad '" + autoPad + "'");
  }
  return p;
}

}  // namespace tessera::compiler::host
