// The AVX2 kernel set: GEMM over the "pairs" layout and the ALU loops, 8 int32 lanes per register.
#include "fsim_kernels_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace tessera::hw::kernels::avx2 {

namespace {

TESSERA_TARGET_BEGIN("avx2")
template <int N>
__attribute__((always_inline)) inline __m256i treeSum(const __m256i* m) {
  if constexpr (N == 1) {
    return m[0];
  } else {
    return _mm256_add_epi32(treeSum<N / 2>(m), treeSum<N - N / 2>(m + N / 2));
  }
}

// One micro-op's sums over k for the 8 outputs of register chunk c: the products of all pairs are
// independent and summed as a tree so consecutive micro-ops overlap; inputs are broadcast from
// memory to save registers.
template <int kPairs, int kChunks>
__attribute__((always_inline)) inline __m256i pairsDot(const AliasedI32* xp, const int16_t* wp, int c) {
  __m256i m[kPairs];
#pragma GCC unroll 32
  for (int p = 0; p < kPairs; ++p)
    m[p] = _mm256_madd_epi16(_mm256_set1_epi32(xp[p]),
                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + p * kChunks * 16 + 16 * c)));
  return treeSum<kPairs>(m);
}

// Pairs layout, 8 outputs per register.
// With BATCH 1, consecutive micro-ops of one iteration that write the same accumulator entry are
// summed in registers and the entry is read and written once per run of them (see the AVX-512 set).
template <int kPairs, int kChunks>
void gemmAvx2(const Shape& sh, const Loops& l, const Uop* uops, int32_t* acc, const uint8_t* inp,
              const uint8_t* wgt) {
  TESSERA_LOCAL_PARAMS;
  if (batch == 1 && kChunks <= 4) {  // the sums stay in registers
    for (uint32_t i = 0; i < L.iterOut; ++i)
      for (uint32_t j = 0; j < L.iterIn; ++j) {
        const uint64_t dOff = i * L.dstOut + j * L.dstIn, sOff = i * L.srcOut + j * L.srcIn,
                       wOff = i * L.wgtOut + j * L.wgtIn;
        for (uint32_t u = L.uopBgn; u < L.uopEnd;) {
          const uint64_t d = uops[u].dst + dOff;
          __m256i* a = reinterpret_cast<__m256i*>(acc + d * accLanes);
          __m256i sum[kChunks];
#pragma GCC unroll 8
          for (int c = 0; c < kChunks; ++c) sum[c] = _mm256_loadu_si256(a + c);
          do {
            const AliasedI32* xp = reinterpret_cast<const AliasedI32*>(inp + (uops[u].src + sOff) * inpBytes);
            const int16_t* wp = reinterpret_cast<const int16_t*>(wgt + (uops[u].wgt + wOff) * wgtBytes);
#pragma GCC unroll 8
            for (int c = 0; c < kChunks; ++c) sum[c] = _mm256_add_epi32(sum[c], pairsDot<kPairs, kChunks>(xp, wp, c));
            ++u;
          } while (u < L.uopEnd && uops[u].dst + dOff == d);
#pragma GCC unroll 8
          for (int c = 0; c < kChunks; ++c) _mm256_storeu_si256(a + c, sum[c]);
        }
      }
    return;
  }
  TESSERA_FOR_EACH_UOP(L, uops, d, s, w) {
    int32_t* a0 = acc + d * accLanes;
    const uint8_t* x0 = inp + s * inpBytes;
    const int16_t* wp = reinterpret_cast<const int16_t*>(wgt + w * wgtBytes);
    for (int b = 0; b < batch; ++b) {
      const AliasedI32* xp = reinterpret_cast<const AliasedI32*>(x0 + b * 4 * kPairs);
      int32_t* a = a0 + b * kChunks * 8;
#pragma GCC unroll 8
      for (int c = 0; c < kChunks; ++c) {
        __m256i* out = reinterpret_cast<__m256i*>(a + 8 * c);
        _mm256_storeu_si256(out, _mm256_add_epi32(_mm256_loadu_si256(out), pairsDot<kPairs, kChunks>(xp, wp, c)));
      }
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
void aluAvx2(const Loops& l, const Uop* uops, int32_t* acc, int lanes, bool useImm, int32_t imm) {
  const Loops L = l;
  const __m256i immv = _mm256_set1_epi32(imm);
  if (lanes == 16 && L.uopEnd - L.uopBgn == 1) {
    // One micro-op per iteration, as in aluAvx512: a strided walk in program order.
    const uint64_t d0 = uops[L.uopBgn].dst, s0 = uops[L.uopBgn].src;
    const uint64_t dStep = L.dstIn * 16, sStep = L.srcIn * 16;
    for (uint32_t i = 0; i < L.iterOut; ++i) {
      int32_t* dp = acc + (d0 + i * L.dstOut) * 16;
      const int32_t* sp = acc + (s0 + i * L.srcOut) * 16;
      for (uint32_t j = 0; j < L.iterIn; ++j, dp += dStep, sp += sStep) {
        __m256i* lo = reinterpret_cast<__m256i*>(dp);
        const __m256i* slo = reinterpret_cast<const __m256i*>(sp);
        const __m256i b0 = useImm ? immv : _mm256_loadu_si256(slo), b1 = useImm ? immv : _mm256_loadu_si256(slo + 1);
        const __m256i r0 = aluVec<kOp>(_mm256_loadu_si256(lo), b0);
        const __m256i r1 = aluVec<kOp>(_mm256_loadu_si256(lo + 1), b1);
        _mm256_storeu_si256(lo, r0);
        _mm256_storeu_si256(lo + 1, r1);
      }
    }
    return;
  }
  TESSERA_FOR_EACH_UOP(L, uops, d, s, w) {
    int32_t* dst = acc + d * lanes;
    const int32_t* src = acc + s * lanes;
    for (int i = 0; i < lanes; i += 8) {
      __m256i* p = reinterpret_cast<__m256i*>(dst + i);
      __m256i b = useImm ? immv : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
      _mm256_storeu_si256(p, aluVec<kOp>(_mm256_loadu_si256(p), b));
    }
  }
}

// Runs the chain over kCount 8-lane registers at p, p + stride, ...
template <int kCount>
__attribute__((always_inline)) inline void chainRegsAvx2(int32_t* p, uint64_t stride, const AluStep* steps, uint32_t n) {
  __m256i v[kCount];
  for (int r = 0; r < kCount; ++r) v[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + r * stride));
  for (uint32_t k = 0; k < n; ++k) {
    const __m256i b = _mm256_set1_epi32(steps[k].imm);
    switch (steps[k].op) {
      case 0: for (int r = 0; r < kCount; ++r) v[r] = aluVec<0>(v[r], b); break;
      case 1: for (int r = 0; r < kCount; ++r) v[r] = aluVec<1>(v[r], b); break;
      case 2: for (int r = 0; r < kCount; ++r) v[r] = aluVec<2>(v[r], b); break;
      case 3: {  // one amount for every lane: one shift, right or left
        const int32_t imm = steps[k].imm;
        const __m128i amount = _mm_cvtsi32_si128(imm >= 0 ? imm & 31 : int32_t(-int64_t(imm) & 31));
        if (imm >= 0) for (int r = 0; r < kCount; ++r) v[r] = _mm256_sra_epi32(v[r], amount);
        else for (int r = 0; r < kCount; ++r) v[r] = _mm256_sll_epi32(v[r], amount);
        break;
      }
      default: for (int r = 0; r < kCount; ++r) v[r] = aluVec<4>(v[r], b); break;
    }
  }
  for (int r = 0; r < kCount; ++r) _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + r * stride), v[r]);
}

// The pairs layout of 16x16 weights: each half of the rows (eight rows of eight byte pairs) is
// transposed to eight pairs of eight rows by 16-bit unpacks, and each pair's 16 bytes are
// sign-extended to int16. Byte for byte what generic::packWgtPairs writes.
void packWgtPairs16x16(const Shape& sh, uint8_t* dst, const int8_t* src, uint64_t n) {
  for (uint64_t e = 0; e < n; ++e, dst += sh.wgtEntryBytes, src += 256)
    for (int half = 0; half < 2; ++half) {
      __m128i r[8];
      for (int o = 0; o < 8; ++o) r[o] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * (8 * half + o)));
      __m128i a[8], b[8];
      for (int k = 0; k < 4; ++k) {  // a[2k], a[2k+1]: rows 2k, 2k+1 interleaved, pairs 0-3 and 4-7
        a[2 * k] = _mm_unpacklo_epi16(r[2 * k], r[2 * k + 1]);
        a[2 * k + 1] = _mm_unpackhi_epi16(r[2 * k], r[2 * k + 1]);
      }
      for (int k = 0; k < 2; ++k)  // rows 4k..4k+3 of pairs (0, 1), (2, 3), (4, 5), (6, 7)
        for (int h = 0; h < 2; ++h) {
          b[4 * k + 2 * h] = _mm_unpacklo_epi32(a[4 * k + h], a[4 * k + 2 + h]);
          b[4 * k + 2 * h + 1] = _mm_unpackhi_epi32(a[4 * k + h], a[4 * k + 2 + h]);
        }
      for (int q = 0; q < 4; ++q) {  // pairs 2q, 2q + 1: rows 0-3 from b[q], rows 4-7 from b[4 + q]
        const __m128i even = _mm_unpacklo_epi64(b[q], b[4 + q]), odd = _mm_unpackhi_epi64(b[q], b[4 + q]);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 64 * (2 * q) + 32 * half), _mm256_cvtepi8_epi16(even));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 64 * (2 * q + 1) + 32 * half), _mm256_cvtepi8_epi16(odd));
      }
    }
}

// Requires lanes % 8 == 0.
void aluChainAvx2(const Loops& l, const Uop* uops, int32_t* acc, int lanes, const AluStep* steps, uint32_t n) {
  auto run = [&](int32_t* p, uint64_t count, uint64_t stride) {
    uint64_t r = 0;
    for (; r + kChainBlock <= count; r += kChainBlock) chainRegsAvx2<kChainBlock>(p + r * stride, stride, steps, n);
    if (count - r >= 4) chainRegsAvx2<4>(p + r * stride, stride, steps, n), r += 4;
    if (count - r >= 2) chainRegsAvx2<2>(p + r * stride, stride, steps, n), r += 2;
    if (count - r >= 1) chainRegsAvx2<1>(p + r * stride, stride, steps, n);
  };
  TESSERA_FOR_EACH_CHAIN_RUN(l, uops, acc, lanes, 8, run);
}
TESSERA_TARGET_END

template <int G, int C>
struct PickGemm {
  static constexpr GemmFn fn = gemmAvx2<G, C>;
};
template <int Op>
struct PickAlu {
  static constexpr AluFn fn = aluAvx2<Op>;
};

}  // namespace

GemmFn gemm(int pairs, int chunks) { return dispatch<PickGemm>(pairs, chunks); }

AluFn alu(uint32_t aluOp) { return aluByOpcode<PickAlu>(aluOp); }

AluChainFn aluChain() { return aluChainAvx2; }

PackFn packWgt(const Shape& sh) {
  return sh.groups == 8 && sh.blockIn == 16 && sh.blockOut == 16 ? packWgtPairs16x16 : generic::packWgtPairs;
}

}  // namespace tessera::hw::kernels::avx2
#endif
