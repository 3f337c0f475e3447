// Resize and ConvTranspose on the host, each output element computed as ONNX's reference does.
#include "upsampling.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "tessera/compiler/host/executor.h"
#include "tessera/support/error.h"

namespace tessera::compiler::host::detail {

using ir::DType;
using ir::Node;
using ir::Tensor;
using Shape = std::vector<int64_t>;

namespace {

std::string shapeText(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}

// The element count, saturating (an absurd size from a malformed file must not overflow).
int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) return std::numeric_limits<int64_t>::max();
    if (d && n > std::numeric_limits<int64_t>::max() / d) return std::numeric_limits<int64_t>::max();
    n *= d;
  }
  return n;
}

bool present(const std::vector<const Tensor*>& ins, size_t i) { return i < ins.size() && ins[i] && ins[i]->elements() > 0; }

// A constant input's values as doubles: shapes that depend on them must be known when compiling.
std::vector<double> constantValues(const Node& n, int64_t opset, const Tensor& t, const char* what) {
  const size_t have = t.dtype == DType::kFloat32 ? t.floats.size() : t.ints.size();
  if (int64_t(have) != t.elements())
    throw Error(n.label(opset), std::string(what) + " '" + t.name + "' must be a constant (Tessera compiles static shapes)");
  std::vector<double> v;
  for (size_t i = 0; i < have; ++i) v.push_back(t.dtype == DType::kFloat32 ? double(t.floats[i]) : double(t.ints[i]));
  return v;
}

// Where one output coordinate of one axis reads: up to two input indices (already clamped to the
// axis, as the reference's edge padding does) with their weights, or the extrapolation value.
struct Tap {
  int64_t index[2] = {0, 0};
  double weight[2] = {1, 0};
  int taps = 1;
  bool outside = false;
};

}  // namespace

Tensor resize(const Node& n, int64_t opset, const std::vector<const Tensor*>& ins, bool computeData) {
  auto fail = [&](const std::string& why) -> void { throw Error(n.label(opset), why); };
  if (ins.empty() || !ins[0]) fail("input 0 is missing");
  const Tensor& x = *ins[0];
  const Shape& in = x.shape;
  const size_t rank = in.size();
  const std::string mode = n.attrString("mode", "nearest");
  if (mode == "cubic") fail("mode 'cubic' is not supported (nearest and linear are)");
  if (mode != "nearest" && mode != "linear") fail("unknown mode '" + mode + "'");
  if (mode == "linear" && x.dtype != DType::kFloat32) fail("linear mode interpolates float32, not " + x.describe());
  const std::string transform = n.attrString("coordinate_transformation_mode", "half_pixel");
  static const char* const kTransforms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                            "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (std::find_if(std::begin(kTransforms), std::end(kTransforms), [&](const char* t) { return transform == t; }) ==
      std::end(kTransforms))
    fail("unknown coordinate_transformation_mode '" + transform + "'");
  const std::string nearestMode = n.attrString("nearest_mode", "round_prefer_floor");
  if (mode == "nearest" && nearestMode != "round_prefer_floor" && nearestMode != "round_prefer_ceil" && nearestMode != "floor" &&
      nearestMode != "ceil")
    fail("unknown nearest_mode '" + nearestMode + "'");
  const double extrapolation = n.attrFloat("extrapolation_value", 0.0f);

  // The output size per axis, and the scale the coordinate transformation divides by. With scales
  // the reference divides by the unrounded scale x input length, not by the output's length.
  const bool haveScales = present(ins, 2), haveSizes = present(ins, 3);
  if (haveScales == haveSizes) fail("needs exactly one of scales (input 2) and sizes (input 3)");
  Shape out(rank);
  std::vector<double> scale(rank), resizedLength(rank);
  if (haveScales) {
    const std::vector<double> s = constantValues(n, opset, *ins[2], "scales");
    if (s.size() != rank) fail("scales has " + std::to_string(s.size()) + " values for a rank-" + std::to_string(rank) + " input");
    for (size_t a = 0; a < rank; ++a) {
      if (!(s[a] > 0) || !std::isfinite(s[a])) fail("scale " + std::to_string(s[a]) + " of axis " + std::to_string(a) + " is not positive");
      scale[a] = s[a];
      resizedLength[a] = s[a] * double(in[a]);
      if (resizedLength[a] > double(int64_t(1) << 31)) fail("scale " + std::to_string(s[a]) + " makes axis " + std::to_string(a) + " implausibly large");
      out[a] = int64_t(std::floor(resizedLength[a]));
    }
  } else {
    const std::vector<double> s = constantValues(n, opset, *ins[3], "sizes");
    if (s.size() != rank) fail("sizes has " + std::to_string(s.size()) + " values for a rank-" + std::to_string(rank) + " input");
    for (size_t a = 0; a < rank; ++a) {
      if (s[a] < 1 || s[a] > double(int64_t(1) << 31)) fail("size " + std::to_string(int64_t(s[a])) + " of axis " + std::to_string(a) + " is out of range");
      out[a] = int64_t(s[a]);
      if (in[a] == 0) fail("axis " + std::to_string(a) + " of the input is empty");
      scale[a] = double(out[a]) / double(in[a]);
      resizedLength[a] = double(out[a]);
    }
  }
  std::vector<double> roi;
  if (transform == "tf_crop_and_resize") {
    if (!present(ins, 1)) fail("coordinate_transformation_mode tf_crop_and_resize needs the roi (input 1)");
    roi = constantValues(n, opset, *ins[1], "roi");
    if (roi.size() != 2 * rank) fail("roi has " + std::to_string(roi.size()) + " values, it needs " + std::to_string(2 * rank));
  }
  Tensor y;
  y.dtype = x.dtype;
  y.shape = out;
  y.hasShape = true;
  if (count(out) > int64_t(1) << 31) fail("the output " + shapeText(out) + " is implausibly large");
  if (!computeData) return y;

  // Each axis's taps, decided once per output coordinate.
  std::vector<std::vector<Tap>> taps(rank);
  for (size_t a = 0; a < rank; ++a) {
    const double len = double(in[a]), resized = resizedLength[a];
    for (int64_t o = 0; o < out[a]; ++o) {
      const double xr = double(o);
      double xo = 0;
      Tap t;
      if (transform == "half_pixel") {
        xo = (xr + 0.5) / scale[a] - 0.5;
      } else if (transform == "pytorch_half_pixel") {
        xo = resized == 1 ? -0.5 : (xr + 0.5) / scale[a] - 0.5;
      } else if (transform == "align_corners") {
        xo = resized == 1 ? 0.0 : xr * (len - 1) / (resized - 1);
      } else if (transform == "asymmetric") {
        xo = xr / scale[a];
      } else if (transform == "tf_half_pixel_for_nn") {
        xo = (xr + 0.5) / scale[a];
      } else {  // tf_crop_and_resize
        const double start = roi[a], end = roi[rank + a];
        xo = (resized == 1 ? (end - start) * (len - 1) / 2 : xr * (end - start) * (len - 1) / (resized - 1)) + start * (len - 1);
        t.outside = xo < 0 || xo > len - 1;
      }
      // The two neighbours left and right of xo; an integral xo is the right one with ratio 1
      // (the reference prefers the pixel on the left, so the ratio lies in (0, 1]).
      const int64_t hi = int64_t(std::ceil(xo)), lo = hi - 1;
      const double ratio = xo - double(lo);
      auto clampIndex = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in[a] - 1); };
      if (mode == "linear") {
        t.taps = 2;
        t.index[0] = clampIndex(lo), t.index[1] = clampIndex(hi);
        t.weight[0] = 1 - ratio, t.weight[1] = ratio;
      } else {
        bool takeRight = true;
        if (ratio != 1) {
          if (nearestMode == "round_prefer_floor") takeRight = ratio > 0.5;
          else if (nearestMode == "round_prefer_ceil") takeRight = ratio >= 0.5;
          else takeRight = nearestMode == "ceil";
        }
        t.index[0] = clampIndex(takeRight ? hi : lo);
      }
      taps[a].push_back(t);
    }
  }
  Shape stride(rank, 1);
  for (size_t a = rank; a-- > 1;) stride[a - 1] = stride[a] * in[a];
  const bool isFloat = x.dtype == DType::kFloat32;
  if (isFloat) y.floats.assign(size_t(count(out)), 0.0f);
  else y.ints.assign(size_t(count(out)), 0);
  // The value at one output coordinate: the outermost axis interpolates the inner axes' values, as
  // the reference nests its one-dimensional interpolations.
  std::vector<int64_t> coord(rank, 0);
  std::function<double(size_t, int64_t)> sample = [&](size_t a, int64_t base) -> double {
    if (a == rank) return isFloat ? double(x.floats[size_t(base)]) : double(x.ints[size_t(base)]);
    const Tap& t = taps[a][size_t(coord[a])];
    double v = 0;
    for (int k = 0; k < t.taps; ++k)
      if (t.weight[k] != 0 || t.taps == 1) v += t.weight[k] * sample(a + 1, base + t.index[k] * stride[a]);
    return v;
  };
  for (int64_t i = 0; i < count(out); ++i) {
    int64_t rest = i;
    bool outside = false;
    for (size_t a = rank; a-- > 0;) {
      coord[a] = rest % out[a];
      rest /= out[a];
      outside = outside || taps[a][size_t(coord[a])].outside;
    }
    if (isFloat) y.floats[size_t(i)] = float(outside ? extrapolation : sample(0, 0));
    else y.ints[size_t(i)] = outside ? int64_t(extrapolation) : int64_t(sample(0, 0));
  }
  return y;
}

Tensor convTranspose(const Node& n, int64_t opset, const std::vector<const Tensor*>& ins, bool computeData) {
  auto fail = [&](const std::string& why) -> void { throw Error(n.label(opset), why); };
  if (ins.size() < 2 || !ins[0] || !ins[1]) fail("needs the input and the weights");
  const Tensor &x = *ins[0], &w = *ins[1];
  if (x.dtype != DType::kFloat32 || w.dtype != DType::kFloat32) fail("takes float32 input and weights");
  if (x.shape.size() != 4 || w.shape.size() != 4)
    fail("only 2-D (N,C,H,W) transposed convolutions are supported, got input " + shapeText(x.shape) + " and weights " + shapeText(w.shape));
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t group = n.attrInt("group", 1);
  if (group < 1 || C % group || w.shape[0] != C)
    fail("channels " + std::to_string(C) + " and weights " + shapeText(w.shape) + " do not match group " + std::to_string(group));
  const int64_t CG = C / group, OG = w.shape[1], M = OG * group, KH = w.shape[2], KW = w.shape[3];
  const Shape ks = n.attrInts("kernel_shape", {KH, KW});
  if (ks != Shape{KH, KW}) fail("kernel_shape " + shapeText(ks) + " disagrees with the weights " + shapeText(w.shape));
  const Shape strides = n.attrInts("strides", {1, 1}), dil = n.attrInts("dilations", {1, 1});
  const Shape outPad = n.attrInts("output_padding", {0, 0});
  if (strides.size() != 2 || dil.size() != 2 || outPad.size() != 2) fail("strides, dilations and output_padding need two values");
  for (int a = 0; a < 2; ++a) {
    if (strides[a] < 1 || dil[a] < 1) fail("strides and dilations must be positive");
    if (strides[a] > 4096 || dil[a] > 4096 || outPad[a] > 4096) fail("strides, dilations and output_padding above 4096 are not supported");
    if (outPad[a] < 0 || outPad[a] >= std::max(strides[a], dil[a]))
      fail("output_padding " + std::to_string(outPad[a]) + " must be smaller than the stride or the dilation");
  }
  const int64_t inLen[2] = {H, W}, k[2] = {KH, KW};
  int64_t padBegin[2] = {0, 0}, outLen[2] = {0, 0};
  const std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER" && autoPad != "VALID")
    fail("unknown auto_pad '" + autoPad + "'");
  const Shape outputShape = n.attrInts("output_shape", {});
  if (!outputShape.empty() && outputShape.size() != 2 && outputShape.size() != 4)
    fail("output_shape " + shapeText(outputShape) + " needs the two spatial sizes");
  for (int a = 0; a < 2; ++a) {
    const int64_t full = strides[a] * (inLen[a] - 1) + outPad[a] + (k[a] - 1) * dil[a] + 1;
    if (!outputShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      // The padding that gives the requested size (SAME: input x stride), split as ONNX specifies:
      // the odd one at the end for SAME_UPPER, at the start otherwise.
      outLen[a] = !outputShape.empty() ? outputShape[outputShape.size() - 2 + size_t(a)] : inLen[a] * strides[a];
      const int64_t total = full - outLen[a];
      if (total < 0 && outputShape.empty()) fail("auto_pad cannot reach the output size");
      padBegin[a] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      if (total < 0) padBegin[a] = 0;  // output_shape larger than the full result: zeros at the end
    } else {
      const Shape pads = n.attrInts("pads", {0, 0, 0, 0});
      if (pads.size() != 4) fail("pads needs four values");
      if (autoPad == "NOTSET") padBegin[a] = pads[size_t(a)];
      const int64_t padEnd = autoPad == "NOTSET" ? pads[size_t(a) + 2] : 0;
      if (padBegin[a] < 0 || padEnd < 0) fail("pads must not be negative");
      outLen[a] = full - padBegin[a] - padEnd;
    }
    if (outLen[a] < 1) fail("the output would have no " + std::string(a ? "columns" : "rows"));
  }
  const Tensor* bias = ins.size() > 2 ? ins[2] : nullptr;
  if (bias && (bias->dtype != DType::kFloat32 || bias->elements() != M)) fail("the bias must have one float32 value per output channel");
  Tensor y;
  y.dtype = DType::kFloat32;
  y.shape = {N, M, outLen[0], outLen[1]};
  y.hasShape = true;
  if (count(y.shape) > int64_t(1) << 31) fail("the output " + shapeText(y.shape) + " is implausibly large");
  if (!computeData) return y;
  const int64_t OH = outLen[0], OW = outLen[1];
  // Each input element scatters its products; summed in double and rounded once, as Conv is here.
  std::vector<double> acc(size_t(N * M * OH * OW), 0.0);
  for (int64_t b = 0; b < N; ++b)
    for (int64_t ci = 0; ci < C; ++ci) {
      const int64_t g = ci / CG;
      for (int64_t o = 0; o < OG; ++o) {
        const int64_t m = g * OG + o;
        double* dst = &acc[size_t((b * M + m) * OH * OW)];
        for (int64_t ky = 0; ky < KH; ++ky)
          for (int64_t kx = 0; kx < KW; ++kx) {
            const double wv = double(w.floats[size_t(((ci * OG + o) * KH + ky) * KW + kx)]);
            if (wv == 0) continue;
            for (int64_t iy = 0; iy < H; ++iy) {
              const int64_t oy = iy * strides[0] + ky * dil[0] - padBegin[0];
              if (oy < 0 || oy >= OH) continue;
              const float* row = &x.floats[size_t(((b * C + ci) * H + iy) * W)];
              for (int64_t ix = 0; ix < W; ++ix) {
                const int64_t ox = ix * strides[1] + kx * dil[1] - padBegin[1];
                if (ox < 0 || ox >= OW) continue;
                dst[oy * OW + ox] += double(row[ix]) * wv;
              }
            }
          }
      }
    }
  y.floats.resize(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) y.floats[i] = float(acc[i] + (bias ? double(bias->floats[(i / size_t(OH * OW)) % size_t(M)]) : 0.0));
  return y;
}

}  // namespace tessera::compiler::host::detail
