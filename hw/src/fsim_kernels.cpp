// GEMM and ALU inner loops: portable versions and AVX2 versions specialized on the block shape.
#include "fsim_kernels.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessera::hw::kernels {

namespace {

// Walks the two loops and the micro-ops, handing each micro-op's rows to `body`.
template <typename Body>
inline void forEachUop(const Loops& l, const Uop* uops, Body body) {
  for (uint32_t i = 0; i < l.iterOut; ++i)
    for (uint32_t j = 0; j < l.iterIn; ++j) {
      const uint64_t d = i * l.dstOut + j * l.dstIn, s = i * l.srcOut + j * l.srcIn, w = i * l.wgtOut + j * l.wgtIn;
      for (uint32_t u = l.uopBgn; u < l.uopEnd; ++u) body(uops[u].dst + d, uops[u].src + s, uops[u].wgt + w);
    }
}

void gemmGeneric(const Shape& sh, const Loops& l, const Uop* uops, int32_t* acc, const int16_t* inp,
                 const int16_t* wgt) {
  forEachUop(l, uops, [&](uint64_t d, uint64_t s, uint64_t w) {
    int32_t* a0 = acc + d * sh.accLanes;
    const int16_t* x0 = inp + s * sh.inpLanes;
    const int16_t* wp = wgt + w * sh.wgtLanes;
    for (int b = 0; b < sh.batch; ++b) {
      int32_t* a = a0 + b * sh.blockOut;
      const int16_t* x = x0 + b * 2 * sh.pairs;
      for (int p = 0; p < sh.pairs; ++p) {
        const int32_t x0v = x[2 * p], x1v = x[2 * p + 1];
        const int16_t* wr = wp + p * sh.blockOut * 2;
        for (int o = 0; o < sh.blockOut; ++o) a[o] += x0v * wr[2 * o] + x1v * wr[2 * o + 1];
      }
    }
  });
}

template <typename Op>
void aluGeneric(const Loops& l, const Uop* uops, int32_t* acc, int lanes, bool useImm, int32_t imm) {
  Op op;
  forEachUop(l, uops, [&](uint64_t d, uint64_t s, uint64_t) {
    int32_t* dst = acc + d * lanes;
    const int32_t* src = acc + s * lanes;
    if (useImm) {
      for (int i = 0; i < lanes; ++i) dst[i] = op(dst[i], imm);
    } else {
      for (int i = 0; i < lanes; ++i) dst[i] = op(dst[i], src[i]);
    }
  });
}

struct OpMin { int32_t operator()(int32_t a, int32_t b) const { return a < b ? a : b; } };
struct OpMax { int32_t operator()(int32_t a, int32_t b) const { return a < b ? b : a; } };
struct OpAdd { int32_t operator()(int32_t a, int32_t b) const { return static_cast<int32_t>(uint32_t(a) + uint32_t(b)); } };
struct OpMul { int32_t operator()(int32_t a, int32_t b) const { return static_cast<int32_t>(uint32_t(a) * uint32_t(b)); } };
struct OpShr { int32_t operator()(int32_t a, int32_t b) const { return shiftRight(a, b); } };

#if defined(__x86_64__)
// The AVX2 kernels are compiled for AVX2 (lambdas included) and only selected when the CPU has it.
#pragma GCC push_options
#pragma GCC target("avx2")
// One micro-op row: acc[o] += sum over kPairs of (x[2p], x[2p+1]) . (w[o][2p], w[o][2p+1]).
// The products of all pairs are independent and summed as a tree, so consecutive micro-ops
// overlap in the CPU instead of waiting on one long add chain.
// Input rows are read as int32 (k, k+1) pairs of int16.
typedef int32_t __attribute__((may_alias)) AliasedI32;

template <int N>
__attribute__((always_inline)) inline __m256i treeSum(const __m256i* m) {
  if constexpr (N == 1) {
    return m[0];
  } else {
    return _mm256_add_epi32(treeSum<N / 2>(m), treeSum<N - N / 2>(m + N / 2));
  }
}

template <int kPairs, int kChunks>
__attribute__((always_inline)) inline void gemmRowAvx2(int32_t* a, const int16_t* x, const int16_t* w) {
  // Input pairs are broadcast straight from memory each time: holding them in registers would
  // spill the products.
  const AliasedI32* xp = reinterpret_cast<const AliasedI32*>(x);
#pragma GCC unroll 8
  for (int c = 0; c < kChunks; ++c) {
    __m256i m[kPairs];
#pragma GCC unroll 32
    for (int p = 0; p < kPairs; ++p)
      m[p] = _mm256_madd_epi16(_mm256_set1_epi32(xp[p]),
                               _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + p * kChunks * 16 + 16 * c)));
    __m256i* out = reinterpret_cast<__m256i*>(a + 8 * c);
    _mm256_storeu_si256(out, _mm256_add_epi32(_mm256_loadu_si256(out), treeSum<kPairs>(m)));
  }
}

template <int kPairs, int kChunks>
void gemmAvx2(const Shape& sh, const Loops& l, const Uop* uops, int32_t* acc, const int16_t* inp,
              const int16_t* wgt) {
  const int batch = sh.batch, accLanes = sh.accLanes, inpLanes = sh.inpLanes, wgtLanes = sh.wgtLanes;
  for (uint32_t i = 0; i < l.iterOut; ++i)
    for (uint32_t j = 0; j < l.iterIn; ++j) {
      const uint64_t d = i * l.dstOut + j * l.dstIn, s = i * l.srcOut + j * l.srcIn, w = i * l.wgtOut + j * l.wgtIn;
      for (uint32_t u = l.uopBgn; u < l.uopEnd; ++u) {
        int32_t* a = acc + (uops[u].dst + d) * accLanes;
        const int16_t* x = inp + (uops[u].src + s) * inpLanes;
        const int16_t* wp = wgt + (uops[u].wgt + w) * wgtLanes;
        for (int b = 0; b < batch; ++b) gemmRowAvx2<kPairs, kChunks>(a + b * kChunks * 8, x + b * 2 * kPairs, wp);
      }
    }
}

template <int kOp>
inline __m256i aluVec(__m256i a, __m256i b) {
  switch (kOp) {
    case 0: return _mm256_min_epi32(a, b);
    case 1: return _mm256_max_epi32(a, b);
    case 2: return _mm256_add_epi32(a, b);
    case 4: return _mm256_mullo_epi32(a, b);
    default: {
      const __m256i mask = _mm256_set1_epi32(31);
      __m256i right = _mm256_srav_epi32(a, _mm256_and_si256(b, mask));
      __m256i left = _mm256_sllv_epi32(a, _mm256_and_si256(_mm256_sub_epi32(_mm256_setzero_si256(), b), mask));
      return _mm256_blendv_epi8(right, left, _mm256_cmpgt_epi32(_mm256_setzero_si256(), b));
    }
  }
}

// Requires lanes % 8 == 0.
template <int kOp>
void aluAvx2(const Loops& l, const Uop* uops, int32_t* acc, int lanes, bool useImm,
                                             int32_t imm) {
  const __m256i immv = _mm256_set1_epi32(imm);
  forEachUop(l, uops, [&](uint64_t d, uint64_t s, uint64_t) {
    int32_t* dst = acc + d * lanes;
    const int32_t* src = acc + s * lanes;
    for (int i = 0; i < lanes; i += 8) {
      __m256i* p = reinterpret_cast<__m256i*>(dst + i);
      __m256i b = useImm ? immv : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
      _mm256_storeu_si256(p, aluVec<kOp>(_mm256_loadu_si256(p), b));
    }
  });
}

#pragma GCC pop_options

// AVX-512BW: one register holds 16 outputs x one (k, k+1) pair, halving the work of AVX2.
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw")
template <int N>
__attribute__((always_inline)) inline __m512i treeSum512(const __m512i* m) {
  if constexpr (N == 1) {
    return m[0];
  } else {
    return _mm512_add_epi32(treeSum512<N / 2>(m), treeSum512<N - N / 2>(m + N / 2));
  }
}

template <int kPairs, int kChunks>
void gemmAvx512(const Shape& sh, const Loops& l, const Uop* uops, int32_t* acc, const int16_t* inp,
                const int16_t* wgt) {
  const int batch = sh.batch, accLanes = sh.accLanes, inpLanes = sh.inpLanes, wgtLanes = sh.wgtLanes;
  for (uint32_t i = 0; i < l.iterOut; ++i)
    for (uint32_t j = 0; j < l.iterIn; ++j) {
      const uint64_t d = i * l.dstOut + j * l.dstIn, s = i * l.srcOut + j * l.srcIn, w = i * l.wgtOut + j * l.wgtIn;
      for (uint32_t u = l.uopBgn; u < l.uopEnd; ++u) {
        int32_t* a0 = acc + (uops[u].dst + d) * accLanes;
        const int16_t* x0 = inp + (uops[u].src + s) * inpLanes;
        const int16_t* wp = wgt + (uops[u].wgt + w) * wgtLanes;
        for (int b = 0; b < batch; ++b) {
          const AliasedI32* xp = reinterpret_cast<const AliasedI32*>(x0 + b * 2 * kPairs);
          int32_t* a = a0 + b * kChunks * 16;
#pragma GCC unroll 8
          for (int c = 0; c < kChunks; ++c) {
            __m512i m[kPairs];
#pragma GCC unroll 32
            for (int p = 0; p < kPairs; ++p)
              m[p] = _mm512_madd_epi16(_mm512_set1_epi32(xp[p]), _mm512_loadu_si512(wp + p * kChunks * 32 + 32 * c));
            _mm512_storeu_si512(a + 16 * c, _mm512_add_epi32(_mm512_loadu_si512(a + 16 * c), treeSum512<kPairs>(m)));
          }
        }
      }
    }
}
#pragma GCC pop_options

bool haveAvx512() { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"); }
bool haveAvx2() { return __builtin_cpu_supports("avx2"); }
#endif

}  // namespace

GemmFn selectGemm(const Shape& sh) {
#if defined(__x86_64__)
  if (haveAvx512()) {
#define TESSERA_GEMM_CASE(P, C) \
  if (sh.pairs == P && sh.blockOut == 16 * C) return gemmAvx512<P, C>;
#define TESSERA_GEMM_CASES(P) TESSERA_GEMM_CASE(P, 1) TESSERA_GEMM_CASE(P, 2) TESSERA_GEMM_CASE(P, 4)
    TESSERA_GEMM_CASES(1) TESSERA_GEMM_CASES(2) TESSERA_GEMM_CASES(4) TESSERA_GEMM_CASES(8) TESSERA_GEMM_CASES(16)
    TESSERA_GEMM_CASES(32)
#undef TESSERA_GEMM_CASES
#undef TESSERA_GEMM_CASE
  }
  if (haveAvx2()) {
#define TESSERA_GEMM_CASE(P, C) \
  if (sh.pairs == P && sh.blockOut == 8 * C) return gemmAvx2<P, C>;
#define TESSERA_GEMM_CASES(P) TESSERA_GEMM_CASE(P, 1) TESSERA_GEMM_CASE(P, 2) TESSERA_GEMM_CASE(P, 4) TESSERA_GEMM_CASE(P, 8)
    TESSERA_GEMM_CASES(1) TESSERA_GEMM_CASES(2) TESSERA_GEMM_CASES(4) TESSERA_GEMM_CASES(8) TESSERA_GEMM_CASES(16)
    TESSERA_GEMM_CASES(32)
#undef TESSERA_GEMM_CASES
#undef TESSERA_GEMM_CASE
  }
#endif
  return gemmGeneric;
}

AluFn selectAlu(uint32_t op, int lanes) {
#if defined(__x86_64__)
  if (haveAvx2() && lanes % 8 == 0) {
    switch (op) {
      case 0: return aluAvx2<0>;
      case 1: return aluAvx2<1>;
      case 2: return aluAvx2<2>;
      case 3: return aluAvx2<3>;
      case 4: return aluAvx2<4>;
      default: break;
    }
  }
#endif
  switch (op) {
    case 0: return aluGeneric<OpMin>;
    case 1: return aluGeneric<OpMax>;
    case 2: return aluGeneric<OpAdd>;
    case 3: return aluGeneric<OpShr>;
    default: return aluGeneric<OpMul>;
  }
}

}  // namespace tessera::hw::kernels
