// The host executor's float convolution and matrix product on OpenBLAS (im2col, then sgemm).
#include "library_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

namespace tessera::compiler::host::detail {

namespace {

// One thread: the same sums in the same order on every run (so calibrations repeat exactly), and
// no threads waiting for a core that ctest's other job holds (ResNet-18 calibrated on 16 images
// took 7.4 s wall with two threads on a busy machine, 2.3 s with one).
void useOneThread() {
  static const bool set = (openblas_set_num_threads(1), true);
  (void)set;
}

}  // namespace

void convolveFloat(const ConvGeometry& g, const float* x, const float* weights, const float* bias, float* y) {
  useOneThread();
  const int64_t cg = g.c / g.group, og = g.o / g.group, plane = g.outH * g.outW, k = cg * g.kh * g.kw;
  const bool direct = g.kh == 1 && g.kw == 1 && g.strideH == 1 && g.strideW == 1 && g.padTop == 0 && g.padLeft == 0 &&
                      g.outH == g.h && g.outW == g.w;
  // The im2col matrix covers a band of output rows at a time, at most about 4 MB: a whole VGG layer's
  // (576 x 50,176 floats) would be mapped afresh and faulted in by the kernel on every call.
  const int64_t bandRows = std::clamp<int64_t>((int64_t(1) << 20) / std::max<int64_t>(k * g.outW, 1), 1, g.outH);
  std::vector<float> col(direct ? 0 : size_t(k * bandRows * g.outW));
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t gi = 0; gi < g.group; ++gi) {
      const float* in = x + (b * g.c + gi * cg) * g.h * g.w;
      float* out = y + (b * g.o + gi * og) * plane;
      for (int64_t o = 0; o < og; ++o) std::fill(out + o * plane, out + (o + 1) * plane, bias ? bias[gi * og + o] : 0.0f);
      const float* w = weights + gi * og * k;
      if (direct) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(og), int(plane), int(k), 1.0f, w, int(k), in,
                    int(plane), 1.0f, out, int(plane));
        continue;
      }
      for (int64_t y0 = 0; y0 < g.outH; y0 += bandRows) {
        const int64_t rows = std::min(bandRows, g.outH - y0), width = rows * g.outW;
        // Row (ci, ky, kx) of the matrix: that tap's input for every output position of the band, 0 in the padding.
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t ky = 0; ky < g.kh; ++ky)
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              float* row = &col[size_t(((ci * g.kh + ky) * g.kw + kx) * width)];
              for (int64_t r = 0; r < rows; ++r) {
                const int64_t iy = (y0 + r) * g.strideH + ky * g.dilationH - g.padTop;
                float* dst = row + r * g.outW;
                if (iy < 0 || iy >= g.h) {
                  std::fill(dst, dst + g.outW, 0.0f);
                  continue;
                }
                const float* src = in + (ci * g.h + iy) * g.w;
                // The outputs [lo, hi) read inside the row; the others read padding.
                const int64_t off = kx * g.dilationW - g.padLeft, s = g.strideW;
                const int64_t lo = std::min(g.outW, off < 0 ? (-off + s - 1) / s : 0);
                const int64_t hi = std::max(lo, std::min(g.outW, off >= g.w ? 0 : (g.w - 1 - off) / s + 1));
                std::fill(dst, dst + lo, 0.0f);
                if (s == 1) std::copy(src + lo + off, src + hi + off, dst + lo);
                else
                  for (int64_t ox = lo; ox < hi; ++ox) dst[ox] = src[ox * s + off];
                std::fill(dst + hi, dst + g.outW, 0.0f);
              }
            }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(og), int(width), int(k), 1.0f, w, int(k), col.data(),
                    int(width), 1.0f, out + y0 * g.outW, int(plane));
      }
    }
}

void multiplyFloat(int64_t m, int64_t n, int64_t k, bool transA, bool transB, float alpha, const float* a, const float* b,
                   float* y) {
  useOneThread();
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, int(m), int(n), int(k),
              alpha, a, transA ? int(m) : int(k), b, transB ? int(k) : int(n), 0.0f, y, int(n));
}

}  // namespace tessera::compiler::host::detail
