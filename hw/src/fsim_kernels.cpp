// Which kernel set runs: the CPU's vector extensions, the shape each set has kernels for, and a
// named set forced by fsim's `kernels` option. The sets themselves are fsim_kernels_*.cpp.
#include "fsim_kernels.h"

#include "fsim_kernels_impl.h"
#include "tessera/support/error.h"

#include <cstring>

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

#if defined(__x86_64__)
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
    if (GemmFn fn = vnni::gemm(sh.groups, blockOut / 16)) {
      be.name = "avx512-vnni";
      sh.inpEntryBytes = batch * 4 * sh.groups;
      sh.wgtEntryBytes = sh.groups * blockOut * 4 + 4 * blockOut;
      be.packInp = generic::packInpQuads;
      be.packWgt = vnni::packWgt(sh);
      be.gemm = fn;
      return be;
    }
  }
#endif
  sh.groups = (blockIn + 1) / 2;
  sh.inpEntryBytes = batch * 4 * sh.groups;
  sh.wgtEntryBytes = sh.groups * blockOut * 4;
  be.packInp = generic::packInpPairs;
  be.packWgt = generic::packWgtPairs;
  be.name = "generic";
  be.gemm = generic::gemm();
#if defined(__x86_64__)
  if (allowed("avx512bw") && cpuHas("avx512bw") && blockOut % 16 == 0) {
    if (GemmFn fn = avx512::gemm(sh.groups, blockOut / 16)) {
      be.name = "avx512bw";
      be.gemm = fn;
      be.packWgt = avx512::packWgt(sh);
      return be;
    }
  }
  if (allowed("avx2") && cpuHas("avx2") && blockOut % 8 == 0) {
    if (GemmFn fn = avx2::gemm(sh.groups, blockOut / 8)) {
      be.name = "avx2";
      be.gemm = fn;
      be.packWgt = avx2::packWgt(sh);
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

WidenFn selectWiden([[maybe_unused]] const std::string& want) {
#if defined(__x86_64__)
  if (want != "generic" && want != "avx2" && cpuHas("avx512bw")) return avx512::widen();
#endif
  return generic::widen();
}

NarrowFn selectNarrow([[maybe_unused]] const std::string& want) {
#if defined(__x86_64__)
  if (want != "generic" && want != "avx2" && cpuHas("avx512bw")) return avx512::narrow();
#endif
  return generic::narrow();
}

AluChainFn selectAluChain([[maybe_unused]] int lanes, [[maybe_unused]] const std::string& want) {
#if defined(__x86_64__)
  // As selectAlu: a forced set never runs ALU code of a wider set.
  if (want != "generic" && want != "avx2" && cpuHas("avx512bw") && lanes % 16 == 0) return avx512::aluChain();
  if (want != "generic" && cpuHas("avx2") && lanes % 8 == 0) return avx2::aluChain();
#endif
  return generic::aluChain();
}

AluFn selectAlu(uint32_t op, [[maybe_unused]] int lanes, [[maybe_unused]] const std::string& want) {
#if defined(__x86_64__)
  // AVX-512 for the sets that have it (auto, avx512bw, avx512-vnni), AVX2 for avx2 and as the
  // fallback; a forced set never runs ALU code of a wider set.
  if (want != "generic" && want != "avx2" && cpuHas("avx512bw") && lanes % 16 == 0) return avx512::alu(op);
  if (want != "generic" && cpuHas("avx2") && lanes % 8 == 0) return avx2::alu(op);
#endif
  return generic::alu(op);
}

}  // namespace tessera::hw::kernels
