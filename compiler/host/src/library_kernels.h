// The host executor's float convolution and matrix product on OpenBLAS, for FloatKernels::kLibrary.
#pragma once

#include <cstdint>

namespace tessera::compiler::host::detail {

// A 2-D convolution's geometry over N x C x H x W input and O x (C / group) x KH x KW weights.
struct ConvGeometry {
  int64_t n = 1, c = 1, h = 1, w = 1, o = 1, kh = 1, kw = 1, group = 1;
  int64_t strideH = 1, strideW = 1, dilationH = 1, dilationW = 1, padTop = 0, padLeft = 0, outH = 1, outW = 1;
};

// y[n][o][oy][ox] = bias[o] (or 0 without bias) + the window's products, summed in float by
// OpenBLAS's sgemm over an im2col matrix (no copy for a 1x1, stride-1, unpadded convolution).
void convolveFloat(const ConvGeometry& g, const float* x, const float* weights, const float* bias, float* y);

// y = alpha * op(a) * op(b) for row-major a (M x K, or K x M transposed) and b (K x N, or N x K
// transposed); y is M x N. Summed in float by OpenBLAS's sgemm.
void multiplyFloat(int64_t m, int64_t n, int64_t k, bool transA, bool transB, float alpha, const float* a, const float* b,
                   float* y);

}  // namespace tessera::compiler::host::detail
