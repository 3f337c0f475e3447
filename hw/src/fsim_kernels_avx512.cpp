// The AVX-512BW kernel set: GEMM over the "pairs" layout, the ALU loops and the chain (which the
// VNNI set uses too), ACC_8BIT widening and STORE narrowing, 16 int32 lanes per register.
#include "fsim_kernels_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace tessera::hw::kernels::avx512 {

namespace {

TESSERA_TARGET_BEGIN("avx512f,avx512bw")
template <int N>
__attribute__((always_inline)) inline __m512i treeSum512(const __m512i* m) {
  if constexpr (N == 1) {
    return m[0];
  } else {
    return _mm512_add_epi32(treeSum512<N / 2>(m), treeSum512<N - N / 2>(m + N / 2));
  }
}

// The maskz forms with every lane set: GCC 12's plain forms pass an undefined vector that
// -Wmaybe-uninitialized reports.
template <int kOp>
inline __m512i aluVec512(__m512i a, __m512i b) {
  constexpr __mmask16 kAll = 0xffff;
  switch (kOp) {
    case 0: return _mm512_maskz_min_epi32(kAll, a, b);
    case 1: return _mm512_maskz_max_epi32(kAll, a, b);
    case 2: return _mm512_maskz_add_epi32(kAll, a, b);
    case 4: return _mm512_maskz_mullo_epi32(kAll, a, b);
    default: {
      const __m512i mask = _mm512_set1_epi32(31), zero = _mm512_setzero_si512();
      const __m512i right = _mm512_maskz_srav_epi32(kAll, a, _mm512_and_si512(b, mask));
      const __m512i left = _mm512_maskz_sllv_epi32(kAll, a, _mm512_and_si512(_mm512_sub_epi32(zero, b), mask));
      return _mm512_mask_blend_epi32(_mm512_cmpgt_epi32_mask(zero, b), right, left);
    }
  }
}

// Two-source permute indices of the pairs transpose below: T gathers output rows 0-7 (or 8-15) of
// four pairs from two source registers of four rows each; U joins the halves of two pairs.
struct PairsIdx {
  alignas(64) int16_t t[2][32];  // pairs 0-3, 4-7: lane 8q + o <- row o, pair q
  alignas(64) int16_t u[2][32];  // pairs (0, 1), (2, 3) of a T: lane 16q + o <- row o of pair q
};
constexpr PairsIdx pairsIdx() {
  PairsIdx x{};
  for (int half = 0; half < 2; ++half)
    for (int lane = 0; lane < 32; ++lane) {
      const int q = 4 * half + lane / 8, o = lane % 8;
      x.t[half][lane] = static_cast<int16_t>(o < 4 ? o * 8 + q : 32 + (o - 4) * 8 + q);
      const int q2 = 2 * half + lane / 16, o2 = lane % 16;
      x.u[half][lane] = static_cast<int16_t>(o2 < 8 ? q2 * 8 + o2 : 32 + q2 * 8 + (o2 - 8));
    }
  return x;
}

// The pairs layout of 16x16 weights: the 16 rows of eight byte pairs transposed to eight pairs of
// 16 rows with 16-bit permutes, each pair's 32 bytes sign-extended to int16. Byte for byte what
// generic::packWgtPairs writes.
void packWgtPairs16x16(const Shape& sh, uint8_t* dst, const int8_t* src, uint64_t n) {
  static constexpr PairsIdx kIdx = pairsIdx();
  const __m512i t0 = _mm512_load_si512(kIdx.t[0]), t1 = _mm512_load_si512(kIdx.t[1]);
  const __m512i u0 = _mm512_load_si512(kIdx.u[0]), u1 = _mm512_load_si512(kIdx.u[1]);
  for (uint64_t e = 0; e < n; ++e, dst += sh.wgtEntryBytes, src += 256) {
    const __m512i z0 = _mm512_loadu_si512(src), z1 = _mm512_loadu_si512(src + 64), z2 = _mm512_loadu_si512(src + 128),
                  z3 = _mm512_loadu_si512(src + 192);
    // Rows 0-7 and 8-15 of pairs 0-3 and 4-7.
    const __m512i lo03 = _mm512_permutex2var_epi16(z0, t0, z1), lo47 = _mm512_permutex2var_epi16(z0, t1, z1);
    const __m512i hi03 = _mm512_permutex2var_epi16(z2, t0, z3), hi47 = _mm512_permutex2var_epi16(z2, t1, z3);
    const __m512i pairs[4] = {_mm512_permutex2var_epi16(lo03, u0, hi03), _mm512_permutex2var_epi16(lo03, u1, hi03),
                              _mm512_permutex2var_epi16(lo47, u0, hi47), _mm512_permutex2var_epi16(lo47, u1, hi47)};
    for (int k = 0; k < 4; ++k) {  // pairs 2k and 2k + 1, 64 bytes each
      _mm512_storeu_si512(dst + 128 * k, _mm512_cvtepi8_epi16(_mm512_maskz_extracti64x4_epi64(0xff, pairs[k], 0)));
      _mm512_storeu_si512(dst + 128 * k + 64, _mm512_cvtepi8_epi16(_mm512_maskz_extracti64x4_epi64(0xff, pairs[k], 1)));
    }
  }
}

void widenAvx512(int32_t* d, const int8_t* s, uint64_t n) {
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_si512(d + i, _mm512_maskz_cvtepi8_epi32(0xffff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
  for (; i < n; ++i) d[i] = s[i];
}

void narrowAvx512(int8_t* d, const int32_t* s, uint64_t n) {
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm512_maskz_cvtepi32_epi8(0xffff, _mm512_loadu_si512(s + i)));
  for (; i < n; ++i) d[i] = static_cast<int8_t>(s[i]);
}

// Requires lanes % 16 == 0: one register per 16 lanes (a whole BATCH 1 x 16 entry per operation).
// With 16 lanes, consecutive micro-ops of one iteration that write the same entry (a reduction
// such as a pooling window) keep it in a register: read once, written once, and a micro-op whose
// source is that entry reads the register.
template <int kOp>
void aluAvx512(const Loops& l, const Uop* uops, int32_t* acc, int lanes, bool useImm, int32_t imm) {
  const Loops L = l;
  const __m512i immv = _mm512_set1_epi32(imm);
  if (lanes == 16 && L.uopEnd - L.uopBgn == 1) {
    // One micro-op per iteration (elementwise streams): a strided walk, one entry at a time in
    // program order, so a source that overlaps earlier destinations reads what they were given.
    const uint64_t d0 = uops[L.uopBgn].dst, s0 = uops[L.uopBgn].src;
    const uint64_t dStep = L.dstIn * 16, sStep = L.srcIn * 16;
    for (uint32_t i = 0; i < L.iterOut; ++i) {
      int32_t* dp = acc + (d0 + i * L.dstOut) * 16;
      const int32_t* sp = acc + (s0 + i * L.srcOut) * 16;
      if (useImm) {
        for (uint32_t j = 0; j < L.iterIn; ++j, dp += dStep)
          _mm512_storeu_si512(dp, aluVec512<kOp>(_mm512_loadu_si512(dp), immv));
      } else {
        for (uint32_t j = 0; j < L.iterIn; ++j, dp += dStep, sp += sStep)
          _mm512_storeu_si512(dp, aluVec512<kOp>(_mm512_loadu_si512(dp), _mm512_loadu_si512(sp)));
      }
    }
    return;
  }
  if (lanes == 16) {
    for (uint32_t i = 0; i < L.iterOut; ++i)
      for (uint32_t j = 0; j < L.iterIn; ++j) {
        const uint64_t dOff = i * L.dstOut + j * L.dstIn, sOff = i * L.srcOut + j * L.srcIn;
        for (uint32_t u = L.uopBgn; u < L.uopEnd;) {
          const uint64_t d = uops[u].dst + dOff;
          __m512i cur = _mm512_loadu_si512(acc + d * 16);
          do {
            const uint64_t s = uops[u].src + sOff;
            const __m512i b = useImm ? immv : s == d ? cur : _mm512_loadu_si512(acc + s * 16);
            cur = aluVec512<kOp>(cur, b);
            ++u;
          } while (u < L.uopEnd && uops[u].dst + dOff == d);
          _mm512_storeu_si512(acc + d * 16, cur);
        }
      }
    return;
  }
  TESSERA_FOR_EACH_UOP(L, uops, d, s, w) {
    int32_t* dst = acc + d * lanes;
    const int32_t* src = acc + s * lanes;
    for (int i = 0; i < lanes; i += 16) {
      const __m512i b = useImm ? immv : _mm512_loadu_si512(src + i);
      _mm512_storeu_si512(dst + i, aluVec512<kOp>(_mm512_loadu_si512(dst + i), b));
    }
  }
}

// Runs the chain over kCount 16-lane registers at p, p + stride, ...
template <int kCount>
__attribute__((always_inline)) inline void chainRegsAvx512(int32_t* p, uint64_t stride, const AluStep* steps, uint32_t n) {
  __m512i v[kCount];
  for (int r = 0; r < kCount; ++r) v[r] = _mm512_loadu_si512(p + r * stride);
  for (uint32_t k = 0; k < n; ++k) {
    const __m512i b = _mm512_set1_epi32(steps[k].imm);
    switch (steps[k].op) {
      case 0: for (int r = 0; r < kCount; ++r) v[r] = aluVec512<0>(v[r], b); break;
      case 1: for (int r = 0; r < kCount; ++r) v[r] = aluVec512<1>(v[r], b); break;
      case 2: for (int r = 0; r < kCount; ++r) v[r] = aluVec512<2>(v[r], b); break;
      case 3: {  // one amount for every lane: one shift, right or left
        const int32_t imm = steps[k].imm;
        const __m128i amount = _mm_cvtsi32_si128(imm >= 0 ? imm & 31 : int32_t(-int64_t(imm) & 31));
        if (imm >= 0) for (int r = 0; r < kCount; ++r) v[r] = _mm512_maskz_sra_epi32(0xffff, v[r], amount);
        else for (int r = 0; r < kCount; ++r) v[r] = _mm512_maskz_sll_epi32(0xffff, v[r], amount);
        break;
      }
      default: for (int r = 0; r < kCount; ++r) v[r] = aluVec512<4>(v[r], b); break;
    }
  }
  for (int r = 0; r < kCount; ++r) _mm512_storeu_si512(p + r * stride, v[r]);
}

// Requires lanes % 16 == 0.
void aluChainAvx512(const Loops& l, const Uop* uops, int32_t* acc, int lanes, const AluStep* steps, uint32_t n) {
  auto run = [&](int32_t* p, uint64_t count, uint64_t stride) {
    uint64_t r = 0;
    for (; r + kChainBlock <= count; r += kChainBlock) chainRegsAvx512<kChainBlock>(p + r * stride, stride, steps, n);
    if (count - r >= 4) chainRegsAvx512<4>(p + r * stride, stride, steps, n), r += 4;
    if (count - r >= 2) chainRegsAvx512<2>(p + r * stride, stride, steps, n), r += 2;
    if (count - r >= 1) chainRegsAvx512<1>(p + r * stride, stride, steps, n);
  };
  TESSERA_FOR_EACH_CHAIN_RUN(l, uops, acc, lanes, 16, run);
}

// One micro-op's sums over k for the 16 outputs of register chunk c: the products of all pairs are
// independent and summed as a tree, so consecutive micro-ops overlap.
template <int kPairs, int kChunks>
__attribute__((always_inline)) inline __m512i pairsDot512(const AliasedI32* xp, const int16_t* wp, int c) {
  __m512i m[kPairs];
#pragma GCC unroll 32
  for (int p = 0; p < kPairs; ++p)
    m[p] = _mm512_madd_epi16(_mm512_set1_epi32(xp[p]), _mm512_loadu_si512(wp + p * kChunks * 32 + 32 * c));
  return treeSum512<kPairs>(m);
}

// Pairs layout, 16 outputs per register. With BATCH 1, consecutive micro-ops of one iteration
// that write the same accumulator entry (a kernel walking a reduction) are summed in registers and
// the entry is read and written once per run of them, as in the VNNI set: otherwise each micro-op's
// sum would wait for the previous one's store of the same entry.
template <int kPairs, int kChunks>
void gemmAvx512(const Shape& sh, const Loops& l, const Uop* uops, int32_t* acc, const uint8_t* inp,
                const uint8_t* wgt) {
  TESSERA_LOCAL_PARAMS;
  if (batch == 1) {
    for (uint32_t i = 0; i < L.iterOut; ++i)
      for (uint32_t j = 0; j < L.iterIn; ++j) {
        const uint64_t dOff = i * L.dstOut + j * L.dstIn, sOff = i * L.srcOut + j * L.srcIn,
                       wOff = i * L.wgtOut + j * L.wgtIn;
        for (uint32_t u = L.uopBgn; u < L.uopEnd;) {
          const uint64_t d = uops[u].dst + dOff;
          int32_t* a = acc + d * accLanes;
          __m512i sum[kChunks];
#pragma GCC unroll 4
          for (int c = 0; c < kChunks; ++c) sum[c] = _mm512_loadu_si512(a + 16 * c);
          do {
            const AliasedI32* xp = reinterpret_cast<const AliasedI32*>(inp + (uops[u].src + sOff) * inpBytes);
            const int16_t* wp = reinterpret_cast<const int16_t*>(wgt + (uops[u].wgt + wOff) * wgtBytes);
#pragma GCC unroll 4
            for (int c = 0; c < kChunks; ++c) sum[c] = _mm512_add_epi32(sum[c], pairsDot512<kPairs, kChunks>(xp, wp, c));
            ++u;
          } while (u < L.uopEnd && uops[u].dst + dOff == d);
#pragma GCC unroll 4
          for (int c = 0; c < kChunks; ++c) _mm512_storeu_si512(a + 16 * c, sum[c]);
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
      int32_t* a = a0 + b * kChunks * 16;
#pragma GCC unroll 4
      for (int c = 0; c < kChunks; ++c)
        _mm512_storeu_si512(a + 16 * c, _mm512_add_epi32(_mm512_loadu_si512(a + 16 * c), pairsDot512<kPairs, kChunks>(xp, wp, c)));
    }
  }
}
TESSERA_TARGET_END

template <int G, int C>
struct PickGemm {
  static constexpr GemmFn fn = gemmAvx512<G, C>;
};
template <int Op>
struct PickAlu {
  static constexpr AluFn fn = aluAvx512<Op>;
};

}  // namespace

GemmFn gemm(int pairs, int chunks) { return dispatch<PickGemm>(pairs, chunks); }

AluFn alu(uint32_t aluOp) { return aluByOpcode<PickAlu>(aluOp); }

AluChainFn aluChain() { return aluChainAvx512; }
WidenFn widen() { return widenAvx512; }
NarrowFn narrow() { return narrowAvx512; }

PackFn packWgt(const Shape& sh) {
  return sh.groups == 8 && sh.blockIn == 16 && sh.blockOut == 16 ? packWgtPairs16x16 : generic::packWgtPairs;
}

}  // namespace tessera::hw::kernels::avx512
#endif
