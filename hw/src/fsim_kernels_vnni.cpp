// The AVX-512 VNNI kernel set: GEMM over the "quads" layout (biased uint8 inputs, int8 weight quads
// with correction terms), one VPDPBUSD per 64 multiply-accumulates.
#include "fsim_kernels_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace tessera::hw::kernels::vnni {

namespace {

TESSERA_TARGET_BEGIN("avx512f,avx512bw,avx512vnni")
// Quads layout, 16 outputs per register: one VNNI instruction does 64 multiply-accumulates.
// With BATCH 1, consecutive micro-ops of one iteration that write the same accumulator entry (a
// kernel walking a reduction) are summed in registers, with independent chains per quad, and the
// entry is read and written once per run of them: the same wrapping int32 sums in another order.
template <int kQuads, int kChunks>
void gemmVnni(const Shape& sh, const Loops& l, const Uop* uops, int32_t* acc, const uint8_t* inp,
              const uint8_t* wgt) {
  TESSERA_LOCAL_PARAMS;
  if (batch == 1) {
    constexpr int kChains = kChunks == 1 ? (kQuads < 4 ? kQuads : 4) : (kQuads < 2 ? kQuads : 2);
    for (uint32_t i = 0; i < L.iterOut; ++i)
      for (uint32_t j = 0; j < L.iterIn; ++j) {
        const uint64_t dOff = i * L.dstOut + j * L.dstIn, sOff = i * L.srcOut + j * L.srcIn,
                       wOff = i * L.wgtOut + j * L.wgtIn;
        for (uint32_t u = L.uopBgn; u < L.uopEnd;) {
          const uint64_t d = uops[u].dst + dOff;
          int32_t* a = acc + d * accLanes;
          __m512i sum[kChunks][kChains], corrSum[kChunks];
#pragma GCC unroll 4
          for (int c = 0; c < kChunks; ++c) {
            sum[c][0] = _mm512_loadu_si512(a + 16 * c);
            for (int k = 1; k < kChains; ++k) sum[c][k] = _mm512_setzero_si512();
            corrSum[c] = _mm512_setzero_si512();
          }
          do {
            const AliasedI32* xq = reinterpret_cast<const AliasedI32*>(inp + (uops[u].src + sOff) * inpBytes);
            const uint8_t* wp = wgt + (uops[u].wgt + wOff) * wgtBytes;
            const int32_t* corr = reinterpret_cast<const int32_t*>(wp + kQuads * kChunks * 64);
#pragma GCC unroll 4
            for (int c = 0; c < kChunks; ++c) {
              corrSum[c] = _mm512_add_epi32(corrSum[c], _mm512_loadu_si512(corr + 16 * c));
#pragma GCC unroll 32
              for (int q = 0; q < kQuads; ++q)
                sum[c][q % kChains] = _mm512_dpbusd_epi32(sum[c][q % kChains], _mm512_set1_epi32(xq[q]),
                                                          _mm512_loadu_si512(wp + (q * kChunks + c) * 64));
            }
            ++u;
          } while (u < L.uopEnd && uops[u].dst + dOff == d);
#pragma GCC unroll 4
          for (int c = 0; c < kChunks; ++c) {
            __m512i t = sum[c][0];
            for (int k = 1; k < kChains; ++k) t = _mm512_add_epi32(t, sum[c][k]);
            _mm512_storeu_si512(a + 16 * c, _mm512_sub_epi32(t, corrSum[c]));
          }
        }
      }
    return;
  }
  TESSERA_FOR_EACH_UOP(L, uops, d, s, w) {
    int32_t* a0 = acc + d * accLanes;
    const uint8_t* x0 = inp + s * inpBytes;
    const uint8_t* wp = wgt + w * wgtBytes;
    const int32_t* corr = reinterpret_cast<const int32_t*>(wp + kQuads * kChunks * 64);
    for (int b = 0; b < batch; ++b) {
      const AliasedI32* xq = reinterpret_cast<const AliasedI32*>(x0 + b * 4 * kQuads);
      int32_t* a = a0 + b * kChunks * 16;
#pragma GCC unroll 4
      for (int c = 0; c < kChunks; ++c) {
        // Two independent accumulation chains halve the dependent latency.
        __m512i s0 = _mm512_sub_epi32(_mm512_loadu_si512(a + 16 * c), _mm512_loadu_si512(corr + 16 * c));
        __m512i s1 = _mm512_setzero_si512();
#pragma GCC unroll 32
        for (int q = 0; q < kQuads; ++q) {
          __m512i wv = _mm512_loadu_si512(wp + (q * kChunks + c) * 64);
          if (q % 2 == 0) s0 = _mm512_dpbusd_epi32(s0, _mm512_set1_epi32(xq[q]), wv);
          else s1 = _mm512_dpbusd_epi32(s1, _mm512_set1_epi32(xq[q]), wv);
        }
        _mm512_storeu_si512(a + 16 * c, _mm512_add_epi32(s0, s1));
      }
    }
  }
}

// The quads layout of 16x16 weights (four quads, one register of outputs): the 16x4 matrix of
// k-quads transposed with two-source permutes, and the correction terms summed by VNNI against
// ones. Byte for byte what packWgtQuads writes.
void packWgtQuads16x16(const Shape& sh, uint8_t* dst, const int8_t* src, uint64_t n) {
  // Lane o of quad q's register is source dword o * 4 + q: rows 0-7 come from the first two
  // source registers (indices 0-31), rows 8-15 from the last two, blended by lane.
  alignas(64) static const int32_t kIdx[4][16] = {
      {0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28},
      {1, 5, 9, 13, 17, 21, 25, 29, 1, 5, 9, 13, 17, 21, 25, 29},
      {2, 6, 10, 14, 18, 22, 26, 30, 2, 6, 10, 14, 18, 22, 26, 30},
      {3, 7, 11, 15, 19, 23, 27, 31, 3, 7, 11, 15, 19, 23, 27, 31}};
  const __m512i ones = _mm512_set1_epi8(1);
  for (uint64_t e = 0; e < n; ++e, dst += sh.wgtEntryBytes, src += 256) {
    const __m512i z0 = _mm512_loadu_si512(src), z1 = _mm512_loadu_si512(src + 64), z2 = _mm512_loadu_si512(src + 128),
                  z3 = _mm512_loadu_si512(src + 192);
    __m512i sums = _mm512_setzero_si512();
    for (int q = 0; q < 4; ++q) {
      const __m512i idx = _mm512_load_si512(kIdx[q]);
      const __m512i lo = _mm512_permutex2var_epi32(z0, idx, z1), hi = _mm512_permutex2var_epi32(z2, idx, z3);
      const __m512i out = _mm512_mask_blend_epi32(0xff00, lo, hi);
      _mm512_storeu_si512(dst + 64 * q, out);
      sums = _mm512_dpbusd_epi32(sums, ones, out);
    }
    _mm512_storeu_si512(dst + 256, _mm512_maskz_slli_epi32(0xffff, sums, 7));  // (maskz: GCC 12 warns on the plain form)
  }
}
TESSERA_TARGET_END

template <int G, int C>
struct PickGemm {
  static constexpr GemmFn fn = gemmVnni<G, C>;
};

}  // namespace

GemmFn gemm(int quads, int chunks) { return dispatch<PickGemm>(quads, chunks); }

PackFn packWgt(const Shape& sh) {
  return sh.groups == 4 && sh.blockOut == 16 ? packWgtQuads16x16 : generic::packWgtQuads;
}

}  // namespace tessera::hw::kernels::vnni
#endif
