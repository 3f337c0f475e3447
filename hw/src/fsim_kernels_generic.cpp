// The portable kernel set: GEMM over the "pairs" layout, the ALU loops and the chain, plain C++
// the compiler vectorizes for the baseline of any host; and the packing of both layouts.
#include <cstring>

#include "fsim_kernels_impl.h"

namespace tessera::hw::kernels {

namespace {

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

}  // namespace

namespace generic {

// ---- Layout "pairs": inputs and weights widened to int16, weights as (k, k+1) pairs per output.
// Input entry: [batch][2 * pairs] int16. Weight entry: [pairs][blockOut][2] int16.

// The packing functions read the shape into locals first: their byte stores could otherwise
// alias it, forcing a reload of every parameter for every byte and keeping the loops scalar.
void packInpPairs(const Shape& sh, uint8_t* __restrict dst, const int8_t* __restrict src, uint64_t n) {
  const int batch = sh.batch, blockIn = sh.blockIn, lanes = 2 * sh.groups, entryBytes = sh.inpEntryBytes;
  for (uint64_t e = 0; e < n; ++e, dst += entryBytes, src += batch * blockIn) {
    int16_t* d = reinterpret_cast<int16_t*>(dst);
    for (int b = 0; b < batch; ++b)
      for (int k = 0; k < lanes; ++k) d[b * lanes + k] = k < blockIn ? src[b * blockIn + k] : 0;
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

void packInpQuads(const Shape& sh, uint8_t* __restrict dst, const int8_t* __restrict src, uint64_t n) {
  const int batch = sh.batch, blockIn = sh.blockIn, lanes = 4 * sh.groups, entryBytes = sh.inpEntryBytes;
  if (lanes == blockIn) {  // no padding lanes: a straight biasing copy of all n entries
    const uint64_t bytes = n * uint64_t(batch) * uint64_t(blockIn);
    for (uint64_t i = 0; i < bytes; ++i) dst[i] = static_cast<uint8_t>(src[i]) ^ 0x80;
    return;
  }
  for (uint64_t e = 0; e < n; ++e, dst += entryBytes, src += batch * blockIn)
    for (int b = 0; b < batch; ++b)
      for (int k = 0; k < lanes; ++k)
        dst[b * lanes + k] = static_cast<uint8_t>((k < blockIn ? src[b * blockIn + k] : 0) + 128);
}

namespace {

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

}  // namespace

void packWgtQuads(const Shape& sh, uint8_t* dst, const int8_t* src, uint64_t n) {
  for (uint64_t e = 0; e < n; ++e) packWgtQuadsOne(sh, dst + e * sh.wgtEntryBytes, src + e * sh.blockIn * sh.blockOut);
}

namespace {

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

void widenGeneric(int32_t* __restrict d, const int8_t* __restrict s, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) d[i] = s[i];
}
void narrowGeneric(int8_t* __restrict d, const int32_t* __restrict s, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) d[i] = static_cast<int8_t>(s[i]);
}

}  // namespace

GemmFn gemm() { return gemmGeneric; }

AluFn alu(uint32_t aluOp) {
  switch (static_cast<AluOp>(aluOp)) {
    case AluOp::kMin: return aluGeneric<OpMin>;
    case AluOp::kMax: return aluGeneric<OpMax>;
    case AluOp::kAdd: return aluGeneric<OpAdd>;
    case AluOp::kShr: return aluGeneric<OpShr>;
    default: return aluGeneric<OpMul>;
  }
}

AluChainFn aluChain() { return aluChainGeneric; }
WidenFn widen() { return widenGeneric; }
NarrowFn narrow() { return narrowGeneric; }

}  // namespace generic

}  // namespace tessera::hw::kernels
