// What the kernel sets of fsim_kernels_*.cpp share (loop walks, the SRAM layouts' packing) and
// the entry points each set gives the selection in fsim_kernels.cpp.
#pragma once

#include <cstdint>
#include <type_traits>

#include "fsim_kernels.h"

namespace tessera::hw::kernels {

// Input rows are read as int32 groups of narrower lanes.
typedef int32_t __attribute__((may_alias)) AliasedI32;

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

// Brackets a kernel set's code: everything between is compiled for the instruction sets `isa`
// (lambdas included) and only selected when the CPU has it. Clang has no `#pragma GCC target` and
// takes the attribute form instead.
#define TESSERA_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define TESSERA_TARGET_BEGIN(isa) \
  TESSERA_PRAGMA(clang attribute push(__attribute__((target(isa))), apply_to = function))
#define TESSERA_TARGET_END TESSERA_PRAGMA(clang attribute pop)
#else
#define TESSERA_TARGET_BEGIN(isa) TESSERA_PRAGMA(GCC push_options) TESSERA_PRAGMA(GCC target(isa))
#define TESSERA_TARGET_END TESSERA_PRAGMA(GCC pop_options)
#endif

// Pick<op>::fn for an ALU opcode: a set's ALU kernel template takes the opcode (MIN 0, MAX 1, ADD 2,
// SHR 3, MUL 4) as its argument.
template <template <int> class Pick>
AluFn aluByOpcode(uint32_t aluOp) {
  switch (static_cast<AluOp>(aluOp)) {
    case AluOp::kMin: return Pick<int(AluOp::kMin)>::fn;
    case AluOp::kMax: return Pick<int(AluOp::kMax)>::fn;
    case AluOp::kAdd: return Pick<int(AluOp::kAdd)>::fn;
    case AluOp::kShr: return Pick<int(AluOp::kShr)>::fn;
    default: return Pick<int(AluOp::kMul)>::fn;
  }
}

// Picks Pick<G, C>::fn for G groups (pairs or quads) and C register chunks, if instantiated: the
// kernel files instantiate their GEMM templates for these shapes only.
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

// The portable set (fsim_kernels_generic.cpp): the "pairs" layout and its GEMM, the ALU loops,
// and the "quads" layout's packing that the VNNI set shares.
namespace generic {
void packInpPairs(const Shape& sh, uint8_t* dst, const int8_t* src, uint64_t n);
void packWgtPairs(const Shape& sh, uint8_t* dst, const int8_t* src, uint64_t n);
void packInpQuads(const Shape& sh, uint8_t* dst, const int8_t* src, uint64_t n);
void packWgtQuads(const Shape& sh, uint8_t* dst, const int8_t* src, uint64_t n);
GemmFn gemm();
AluFn alu(uint32_t aluOp);
AluChainFn aluChain();
WidenFn widen();
NarrowFn narrow();
}  // namespace generic

#if defined(__x86_64__)
// The vector sets, each compiled for its instruction set and selected only when the CPU has it.
// gemm(groups, chunks) is null for a shape the set has no kernel for.
namespace avx2 {  // fsim_kernels_avx2.cpp: pairs layout, 8 lanes per register; needs lanes % 8 == 0
GemmFn gemm(int pairs, int chunks);
AluFn alu(uint32_t aluOp);
AluChainFn aluChain();
PackFn packWgt(const Shape& sh);
}  // namespace avx2
namespace avx512 {  // fsim_kernels_avx512.cpp: pairs layout, 16 lanes per register; needs lanes % 16 == 0
GemmFn gemm(int pairs, int chunks);
AluFn alu(uint32_t aluOp);
AluChainFn aluChain();
WidenFn widen();
NarrowFn narrow();
PackFn packWgt(const Shape& sh);
}  // namespace avx512
namespace vnni {  // fsim_kernels_vnni.cpp: quads layout; its ALU loops are the AVX-512 set's
GemmFn gemm(int quads, int chunks);
PackFn packWgt(const Shape& sh);
}  // namespace vnni
#endif

}  // namespace tessera::hw::kernels
