// GEMM and ALU inner loops: a portable version and AVX2, AVX-512BW and AVX-512 VNNI versions,
// each with the SRAM layout that lets its inner loop run without per-element decoding.
#include "fsim_kernels.h"

#include "tessera/support/error.h"

#include <cstring>
#include <type_traits>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#if __has_include(<sys/platform/x86.h>)
// glibc's header declares its functions with C's _Bool, which clang's C++ mode does not know.
#if defined(__clang__)
#define _Bool bool
#include <sys/platform/x86.h>
#undef _Bool
#else
#include <sys/platform/x86.h>
#endif
#endif
#endif

namespace tessera::hw::kernels {

namespace {

// Input rows are read as int32 groups of narrower lanes.
typedef int32_t __attribute__((may_alias)) AliasedI32;

// ---- Layout "pairs": inputs and weights widened to int16, weights as (k, k+1) pairs per output.
// Input entry: [batch][2 * pairs] int16. Weight entry: [pairs][blockOut][2] int16.

void packInpPairs(const Shape& sh, uint8_t* dst, const int8_t* src, uint64_t n) {
  for (uint64_t e = 0; e < n; ++e, dst += sh.inpEntryBytes, src += sh.batch * sh.blockIn) {
    int16_t* d = reinterpret_cast<int16_t*>(dst);
    for (int b = 0; b < sh.batch; ++b)
      for (int k = 0; k < 2 * sh.groups; ++k) d[b * 2 * sh.groups + k] = k < sh.blockIn ? src[b * sh.blockIn + k] : 0;
  }
}

void packWgtPairsOne(const Shape& sh, uint8_t* dst, const int8_t* src) {
  int16_t* d = reinterpret_cast<int16_t*>(dst);
  for (int p = 0; p < sh.groups; ++p)
    for (int o = 0; o < sh.blockOut; ++o)
      for (int h = 0; h < 2; ++h) {
        int k = 2 * p + h;
        d[(p * sh.blockOut + o) * 2 + h] = k < sh.blockIn ? src[o * sh.blockIn + k] : 0;
      }
}

void packWgtPairs(const Shape& sh, uint8_t* dst, const int8_t* src, uint64_t n) {
  for (uint64_t e = 0; e < n; ++e) packWgtPairsOne(sh, dst + e * sh.wgtEntryBytes, src + e * sh.blockIn * sh.blockOut);
}

// ---- Layout "quads" (VNNI): inputs biased to uint8 (x + 128), weights as (k..k+3) quads per
// output followed by int32 corr[o] = 128 * sum_k w[o][k], so that
// sum_k x*w = sum_k (x+128)*w - corr[o] with unsigned-by-signed 4-way dot products.
// Input entry: [batch][4 * quads] uint8. Weight entry: [quads][blockOut][4] int8, int32[blockOut].

// [[maybe_unused]]: only x86-64's VNNI backend packs quads; other architectures build the portable set.
[[maybe_unused]] void packInpQuads(const Shape& sh, uint8_t* dst, const int8_t* src, uint64_t n) {
  if (4 * sh.groups == sh.blockIn) {  // no padding lanes: a straight biasing copy of all n entries
    for (uint64_t i = 0; i < n * sh.batch * sh.blockIn; ++i) dst[i] = static_cast<uint8_t>(src[i]) ^ 0x80;
    return;
  }
  for (uint64_t e = 0; e < n; ++e, dst += sh.inpEntryBytes, src += sh.batch * sh.blockIn)
    for (int b = 0; b < sh.batch; ++b)
      for (int k = 0; k < 4 * sh.groups; ++k)
        dst[b * 4 * sh.groups + k] = static_cast<uint8_t>((k < sh.blockIn ? src[b * sh.blockIn + k] : 0) + 128);
}

void packWgtQuadsOne(const Shape& sh, uint8_t* dst, const int8_t* src) {
  int8_t* d = reinterpret_cast<int8_t*>(dst);
  int32_t corr[64];
  for (int o = 0; o < sh.blockOut; ++o) corr[o] = 0;
  for (int q = 0; q < sh.groups; ++q)
    for (int o = 0; o < sh.blockOut; ++o)
      for (int h = 0; h < 4; ++h) {
        int k = 4 * q + h;
        int8_t w = k < sh.blockIn ? src[o * sh.blockIn + k] : 0;
        d[(q * sh.blockOut + o) * 4 + h] = w;
        corr[o] += 128 * w;
      }
  std::memcpy(dst + sh.groups * sh.blockOut * 4, corr, sizeof(int32_t) * sh.blockOut);
}

[[maybe_unused]] void packWgtQuads(const Shape& sh, uint8_t* dst, const int8_t* src, uint64_t n) {
  for (uint64_t e = 0; e < n; ++e) packWgtQuadsOne(sh, dst + e * sh.wgtEntryBytes, src + e * sh.blockIn * sh.blockOut);
}

// Walks the two loops and the micro-ops of an instruction, binding each micro-op's entry indices
// to d (accumulator), s (source) and w (weight) for the statement that follows. A macro rather
// than a function taking a lambda, so the body is compiled for the target of the kernel using it.
#define TESSERA_FOR_EACH_UOP(l, uops, d, s, w)                                                      \
  for (uint32_t i_ = 0; i_ < (l).iterOut; ++i_)                                                     \
    for (uint32_t j_ = 0; j_ < (l).iterIn; ++j_)                                                    \
      for (uint64_t dOff_ = i_ * (l).dstOut + j_ * (l).dstIn, sOff_ = i_ * (l).srcOut + j_ * (l).srcIn, \
                    wOff_ = i_ * (l).wgtOut + j_ * (l).wgtIn, outer_ = 1;                           \
           outer_; outer_ = 0)                                                                      \
        for (uint32_t u_ = (l).uopBgn; u_ < (l).uopEnd; ++u_)                                       \
          for (uint64_t d = (uops)[u_].dst + dOff_, s = (uops)[u_].src + sOff_, w = (uops)[u_].wgt + wOff_, \
                        once_ = 1;                                                                  \
               once_; once_ = 0, (void)d, (void)s, (void)w)

// Kernels copy the loop and shape parameters into locals first: the accumulator stores could
// otherwise alias them, forcing a reload of every parameter for every micro-op.
#define TESSERA_LOCAL_PARAMS                                                                        \
  const Loops L = l;                                                                                \
  const int batch = sh.batch, accLanes = sh.accLanes, inpBytes = sh.inpEntryBytes,                 \
            wgtBytes = sh.wgtEntryBytes;                                                            \
  (void)batch; (void)accLanes; (void)inpBytes; (void)wgtBytes

void gemmGeneric(const Shape& sh, const Loops& l, const Uop* uops, int32_t* acc, const uint8_t* inp,
                 const uint8_t* wgt) {
  TESSERA_LOCAL_PARAMS;
  const int groups = sh.groups, blockOut = sh.blockOut;
  TESSERA_FOR_EACH_UOP(L, uops, d, s, w) {
    int32_t* a0 = acc + d * accLanes;
    const int16_t* x0 = reinterpret_cast<const int16_t*>(inp + s * inpBytes);
    const int16_t* wp = reinterpret_cast<const int16_t*>(wgt + w * wgtBytes);
    for (int b = 0; b < batch; ++b) {
      int32_t* a = a0 + b * blockOut;
      const int16_t* x = x0 + b * 2 * groups;
      for (int p = 0; p < groups; ++p) {
        const int32_t x0v = x[2 * p], x1v = x[2 * p + 1];
        const int16_t* wr = wp + p * blockOut * 2;
        // Accumulators wrap (int32, as the hardware's adders): add as unsigned, since a signed
        // overflow is undefined behaviour the optimizer may exploit.
        for (int o = 0; o < blockOut; ++o)
          a[o] = static_cast<int32_t>(uint32_t(a[o]) + uint32_t(x0v * wr[2 * o] + x1v * wr[2 * o + 1]));
      }
    }
  }
}

template <typename Op>
void aluGeneric(const Loops& l, const Uop* uops, int32_t* acc, int lanes, bool useImm, int32_t imm) {
  const Loops L = l;
  Op op;
  TESSERA_FOR_EACH_UOP(L, uops, d, s, w) {
    int32_t* dst = acc + d * lanes;
    const int32_t* src = acc + s * lanes;
    if (useImm) {
      for (int i = 0; i < lanes; ++i) dst[i] = op(dst[i], imm);
    } else {
      for (int i = 0; i < lanes; ++i) dst[i] = op(dst[i], src[i]);
    }
  }
}

struct OpMin { int32_t operator()(int32_t a, int32_t b) const { return a < b ? a : b; } };
struct OpMax { int32_t operator()(int32_t a, int32_t b) const { return a < b ? b : a; } };
struct OpAdd { int32_t operator()(int32_t a, int32_t b) const { return static_cast<int32_t>(uint32_t(a) + uint32_t(b)); } };
struct OpMul { int32_t operator()(int32_t a, int32_t b) const { return static_cast<int32_t>(uint32_t(a) * uint32_t(b)); } };
struct OpShr { int32_t operator()(int32_t a, int32_t b) const { return shiftRight(a, b); } };

template <typename Op>
inline void applyStep(int32_t* e, int lanes, int32_t imm) {
  Op op;
  for (int x = 0; x < lanes; ++x) e[x] = op(e[x], imm);
}

// The entries a chain visits are its micro-op's dst stepped by the dst factors, in program order.
void aluChainGeneric(const Loops& l, const Uop* uops, int32_t* acc, int lanes, const AluStep* steps, uint32_t n) {
  const uint64_t d0 = uops[l.uopBgn].dst;
  for (uint32_t i = 0; i < l.iterOut; ++i)
    for (uint32_t j = 0; j < l.iterIn; ++j) {
      int32_t* e = acc + (d0 + i * l.dstOut + j * l.dstIn) * uint64_t(lanes);
      for (uint32_t k = 0; k < n; ++k) switch (steps[k].op) {
          case 0: applyStep<OpMin>(e, lanes, steps[k].imm); break;
          case 1: applyStep<OpMax>(e, lanes, steps[k].imm); break;
          case 2: applyStep<OpAdd>(e, lanes, steps[k].imm); break;
          case 3: applyStep<OpShr>(e, lanes, steps[k].imm); break;
          default: applyStep<OpMul>(e, lanes, steps[k].imm); break;
        }
    }
}

// The vector chains take registers in blocks of kChainBlock and run each step over a whole block,
// so a step's opcode is dispatched once per block rather than once per register.
constexpr int kChainBlock = 8;

// Calls run(p, count, stride) for the registers of `width` lanes a chain visits, row by row: a
// row of consecutive entries is one run, a strided row of one-register entries another, and the
// registers of a wider entry one run each.
#define TESSERA_FOR_EACH_CHAIN_RUN(l, uops, acc, lanes, width, run)                            \
  do {                                                                                          \
    const uint64_t d0_ = (uops)[(l).uopBgn].dst, regs_ = uint64_t(lanes) / (width);             \
    for (uint32_t i_ = 0; i_ < (l).iterOut; ++i_) {                                             \
      int32_t* row_ = (acc) + (d0_ + i_ * (l).dstOut) * uint64_t(lanes);                        \
      if (((l).dstIn == 1 || (l).iterIn == 1) && (l).dstOut == (l).iterIn) {                    \
        run(row_, uint64_t((l).iterOut) * (l).iterIn * regs_, uint64_t(width));  /* one tile */  \
        break;                                                                                  \
      } else if ((l).dstIn == 1 || (l).iterIn == 1) {                                           \
        run(row_, (l).iterIn * regs_, uint64_t(width));                                         \
      } else if (regs_ == 1) {                                                                  \
        run(row_, uint64_t((l).iterIn), (l).dstIn * uint64_t(lanes));                           \
      } else {                                                                                  \
        for (uint32_t j_ = 0; j_ < (l).iterIn; ++j_)                                            \
          run(row_ + j_ * (l).dstIn * uint64_t(lanes), regs_, uint64_t(width));                 \
      }                                                                                         \
    }                                                                                           \
  } while (0)

#if defined(__x86_64__)
// The vector kernels are compiled for their instruction set (lambdas included) and only selected
// when the CPU has it. Clang has no `#pragma GCC target` and takes the attribute form instead.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
template <int N>
__attribute__((always_inline)) inline __m256i treeSum(const __m256i* m) {
  if constexpr (N == 1) {
    return m[0];
  } else {
    return _mm256_add_epi32(treeSum<N / 2>(m), treeSum<N - N / 2>(m + N / 2));
  }
}

// Pairs layout, 8 outputs per register. The products of all pairs are independent and summed as
// a tree so consecutive micro-ops overlap; inputs are broadcast from memory to save registers.
template <int kPairs, int kChunks>
void gemmAvx2(const Shape& sh, const Loops& l, const Uop* uops, int32_t* acc, const uint8_t* inp,
              const uint8_t* wgt) {
  TESSERA_LOCAL_PARAMS;
  TESSERA_FOR_EACH_UOP(L, uops, d, s, w) {
    int32_t* a0 = acc + d * accLanes;
    const uint8_t* x0 = inp + s * inpBytes;
    const int16_t* wp = reinterpret_cast<const int16_t*>(wgt + w * wgtBytes);
    for (int b = 0; b < batch; ++b) {
      const AliasedI32* xp = reinterpret_cast<const AliasedI32*>(x0 + b * 4 * kPairs);
      int32_t* a = a0 + b * kChunks * 8;
#pragma GCC unroll 8
      for (int c = 0; c < kChunks; ++c) {
        __m256i m[kPairs];
#pragma GCC unroll 32
        for (int p = 0; p < kPairs; ++p)
          m[p] = _mm256_madd_epi16(_mm256_set1_epi32(xp[p]),
                                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + p * kChunks * 16 + 16 * c)));
        __m256i* out = reinterpret_cast<__m256i*>(a + 8 * c);
        _mm256_storeu_si256(out, _mm256_add_epi32(_mm256_loadu_si256(out), treeSum<kPairs>(m)));
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
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vnni"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vnni")
#endif
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
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw")
#endif
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

// Pairs layout, 16 outputs per register.
template <int kPairs, int kChunks>
void gemmAvx512(const Shape& sh, const Loops& l, const Uop* uops, int32_t* acc, const uint8_t* inp,
                const uint8_t* wgt) {
  TESSERA_LOCAL_PARAMS;
  TESSERA_FOR_EACH_UOP(L, uops, d, s, w) {
    int32_t* a0 = acc + d * accLanes;
    const uint8_t* x0 = inp + s * inpBytes;
    const int16_t* wp = reinterpret_cast<const int16_t*>(wgt + w * wgtBytes);
    for (int b = 0; b < batch; ++b) {
      const AliasedI32* xp = reinterpret_cast<const AliasedI32*>(x0 + b * 4 * kPairs);
      int32_t* a = a0 + b * kChunks * 16;
#pragma GCC unroll 4
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
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

// The vector extensions this CPU and its OS support, asked once. Not __builtin_cpu_supports: that
// links libgcc's CPU model, whose constructor runs a dozen CPUID leaves at start-up in every
// process, and CPUID traps to the hypervisor on a VM (a third of a small fsim run's own CPU time).
// The C library has already asked at start-up; glibc 2.33+ shares its answer (usable: the CPU has
// it and the OS saves its registers).
struct CpuFeatures {
  bool avx2 = false, avx512bw = false, avx512vnni = false;
};

#if __has_include(<sys/platform/x86.h>)
CpuFeatures detectCpuFeatures() {
  CpuFeatures f;
  f.avx2 = CPU_FEATURE_ACTIVE(AVX2);
  f.avx512bw = CPU_FEATURE_ACTIVE(AVX512F) && CPU_FEATURE_ACTIVE(AVX512BW);
  f.avx512vnni = f.avx512bw && CPU_FEATURE_ACTIVE(AVX512_VNNI);
  return f;
}
#else
#pragma GCC push_options
#pragma GCC target("xsave")
unsigned long long readXcr0() { return _xgetbv(0); }
#pragma GCC pop_options

CpuFeatures detectCpuFeatures() {
  CpuFeatures f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(0, a, b, c, d);
  if (a < 7) return f;
  __cpuid(1, a, b, c, d);
  if (!(c & bit_OSXSAVE)) return f;
  // The OS must save the registers: XMM and YMM state (bits 1-2), and for AVX-512 the opmask and
  // upper ZMM state (bits 5-7).
  const unsigned long long xcr0 = readXcr0();
  const bool ymm = (xcr0 & 0x6) == 0x6, zmm = ymm && (xcr0 & 0xe0) == 0xe0;
  const bool avx = (c & bit_AVX) != 0;
  __cpuid_count(7, 0, a, b, c, d);
  f.avx2 = avx && ymm && (b & bit_AVX2);
  f.avx512bw = avx && zmm && (b & bit_AVX512F) && (b & bit_AVX512BW);
  f.avx512vnni = f.avx512bw && (c & bit_AVX512VNNI);
  return f;
}
#endif

bool cpuHas(const char* feature) {
  static const CpuFeatures features = detectCpuFeatures();
  if (!std::strcmp(feature, "avx2")) return features.avx2;
  if (!std::strcmp(feature, "avx512bw")) return features.avx512bw;
  if (!std::strcmp(feature, "avx512vnni")) return features.avx512vnni;
  return false;
}
#endif

// Picks gemm<G, C> for G groups (pairs or quads) and C register chunks, if instantiated.
template <template <int, int> class Pick>
GemmFn dispatch(int groups, int chunks) {
  GemmFn fn = nullptr;
  auto tryOne = [&](auto g, auto c) {
    if (!fn && groups == decltype(g)::value && chunks == decltype(c)::value) fn = Pick<decltype(g)::value, decltype(c)::value>::fn;
  };
  auto forChunks = [&](auto g) {
    tryOne(g, std::integral_constant<int, 1>());
    tryOne(g, std::integral_constant<int, 2>());
    tryOne(g, std::integral_constant<int, 4>());
  };
  forChunks(std::integral_constant<int, 1>());
  forChunks(std::integral_constant<int, 2>());
  forChunks(std::integral_constant<int, 4>());
  forChunks(std::integral_constant<int, 8>());
  forChunks(std::integral_constant<int, 16>());
  forChunks(std::integral_constant<int, 32>());
  return fn;
}

#if defined(__x86_64__)
template <int G, int C> struct PickVnni { static constexpr GemmFn fn = gemmVnni<G, C>; };
template <int G, int C> struct PickAvx512 { static constexpr GemmFn fn = gemmAvx512<G, C>; };
template <int G, int C> struct PickAvx2 { static constexpr GemmFn fn = gemmAvx2<G, C>; };
#endif

}  // namespace

// The fastest backend within `want` (auto: any) this CPU and shape allow, the portable one last.
static Backend pickBackend(int batch, int blockIn, int blockOut, const std::string& want) {
  [[maybe_unused]] auto allowed = [&](const char* name) { return want == "auto" || want == name; };  // x86-64 sets only
  Backend be;
  Shape& sh = be.shape;
  sh.batch = batch;
  sh.blockIn = blockIn;
  sh.blockOut = blockOut;
  sh.accLanes = batch * blockOut;
#if defined(__x86_64__)
  if (allowed("avx512-vnni") && cpuHas("avx512vnni") && blockOut % 16 == 0 && blockIn % 4 == 0) {
    sh.groups = blockIn / 4;
    if (GemmFn fn = dispatch<PickVnni>(sh.groups, blockOut / 16)) {
      be.name = "avx512-vnni";
      sh.inpEntryBytes = batch * 4 * sh.groups;
      sh.wgtEntryBytes = sh.groups * blockOut * 4 + 4 * blockOut;
      be.packInp = packInpQuads;
      be.packWgt = sh.groups == 4 && blockOut == 16 ? packWgtQuads16x16 : packWgtQuads;
      be.gemm = fn;
      return be;
    }
  }
#endif
  sh.groups = (blockIn + 1) / 2;
  sh.inpEntryBytes = batch * 4 * sh.groups;
  sh.wgtEntryBytes = sh.groups * blockOut * 4;
  be.packInp = packInpPairs;
  be.packWgt = packWgtPairs;
  be.name = "generic";
  be.gemm = gemmGeneric;
#if defined(__x86_64__)
  if (allowed("avx512bw") && cpuHas("avx512bw") && blockOut % 16 == 0) {
    if (GemmFn fn = dispatch<PickAvx512>(sh.groups, blockOut / 16)) {
      be.name = "avx512bw";
      be.gemm = fn;
      return be;
    }
  }
  if (allowed("avx2") && cpuHas("avx2") && blockOut % 8 == 0) {
    if (GemmFn fn = dispatch<PickAvx2>(sh.groups, blockOut / 8)) {
      be.name = "avx2";
      be.gemm = fn;
    }
  }
#endif
  return be;
}

std::string cpuProblem(const std::string& want) {
  if (want != "auto" && want != "generic" && want != "avx2" && want != "avx512bw" && want != "avx512-vnni")
    return "unknown kernel set (auto, generic, avx2, avx512bw, avx512-vnni)";
  if (want == "auto" || want == "generic") return "";
#if defined(__x86_64__)
  if (want == "avx2" && !cpuHas("avx2")) return "this CPU lacks AVX2";
  if (want == "avx512bw" && !cpuHas("avx512bw")) return "this CPU lacks AVX-512F/BW";
  if (want == "avx512-vnni" && !cpuHas("avx512vnni")) return "this CPU lacks AVX-512F/BW/VNNI";
  return "";
#else
  return "the vector kernel sets exist only on x86-64";
#endif
}

std::string unavailableReason(int batch, int blockIn, int blockOut, const std::string& want) {
  const std::string cpu = cpuProblem(want);
  if (!cpu.empty() || want == "auto" || want == "generic") return cpu;
  if (pickBackend(batch, blockIn, blockOut, want).name == want) return "";
  const char* needs = want == "avx2"       ? "BLOCK_OUT a multiple of 8"
                      : want == "avx512bw" ? "BLOCK_OUT a multiple of 16"
                                           : "BLOCK_OUT a multiple of 16 and BLOCK_IN of 4";
  return "no " + want + " kernels for BATCH=" + std::to_string(batch) + " BLOCK_IN=" + std::to_string(blockIn) +
         " BLOCK_OUT=" + std::to_string(blockOut) + " (they need " + needs + ")";
}

Backend selectBackend(int batch, int blockIn, int blockOut, const std::string& want) {
  const std::string why = unavailableReason(batch, blockIn, blockOut, want);
  if (!why.empty()) throw Error("fsim kernels=" + want, why);
  return pickBackend(batch, blockIn, blockOut, want);
}

namespace {
void widenGeneric(int32_t* __restrict d, const int8_t* __restrict s, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) d[i] = s[i];
}
void narrowGeneric(int8_t* __restrict d, const int32_t* __restrict s, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) d[i] = static_cast<int8_t>(s[i]);
}
}  // namespace

WidenFn selectWiden([[maybe_unused]] const std::string& want) {
#if defined(__x86_64__)
  if (want != "generic" && want != "avx2" && cpuHas("avx512bw")) return widenAvx512;
#endif
  return widenGeneric;
}

NarrowFn selectNarrow([[maybe_unused]] const std::string& want) {
#if defined(__x86_64__)
  if (want != "generic" && want != "avx2" && cpuHas("avx512bw")) return narrowAvx512;
#endif
  return narrowGeneric;
}

AluChainFn selectAluChain([[maybe_unused]] int lanes, [[maybe_unused]] const std::string& want) {
#if defined(__x86_64__)
  // As selectAlu: a forced set never runs ALU code of a wider set.
  if (want != "generic" && want != "avx2" && cpuHas("avx512bw") && lanes % 16 == 0) return aluChainAvx512;
  if (want != "generic" && cpuHas("avx2") && lanes % 8 == 0) return aluChainAvx2;
#endif
  return aluChainGeneric;
}

AluFn selectAlu(uint32_t op, [[maybe_unused]] int lanes, [[maybe_unused]] const std::string& want) {
#if defined(__x86_64__)
  // AVX-512 for the sets that have it (auto, avx512bw, avx512-vnni), AVX2 for avx2 and as the
  // fallback; a forced set never runs ALU code of a wider set.
  if (want != "generic" && want != "avx2" && cpuHas("avx512bw") && lanes % 16 == 0) {
    switch (op) {
      case 0: return aluAvx512<0>;
      case 1: return aluAvx512<1>;
      case 2: return aluAvx512<2>;
      case 3: return aluAvx512<3>;
      case 4: return aluAvx512<4>;
      default: break;
    }
  }
  if (want != "generic" && cpuHas("avx2") && lanes % 8 == 0) {
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
