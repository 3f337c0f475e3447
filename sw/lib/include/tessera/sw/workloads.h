// Reference workloads written against the VTA runtime API: blocked GEMM and ALU programs with host
// references. Used by the demo, the benchmarks and the cross-target tests.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/counters.h"
#include "tessera/runtime/target.h"

namespace tessera::sw {

// C[m][n] = clip((sum_k A[m][k] * B[n][k]) >> shift, -128, 127), int8 A and B, int32 accumulation.
// Without requantization C keeps the low byte of each int32 sum (STORE's narrowing).
struct GemmProblem {
  int m = 256, n = 256, k = 256;  // multiples of BATCH, BLOCK_OUT and BLOCK_IN respectively
  int shift = 8;                  // requantization shift (ALU SHR by immediate)
  bool requantize = true;         // the ALU epilogue (shift, clip); false: pure GEMM
  uint32_t seed = 1;
  bool doubleBuffer = true;       // overlap loads with compute through the token protocol
  bool uopCompression = true;     // micro-op loops (false: one micro-op per GEMM step)
  // Tile sizes in elements (multiples of BATCH, BLOCK_OUT, BLOCK_IN); 0: chosen by chooseGemmTiling.
  int tileM = 0, tileN = 0, tileK = 0;
};

// Tile sizes in blocks (BATCH rows, BLOCK_OUT columns, BLOCK_IN reduction elements) and the cycle
// estimate that chose them.
struct GemmTiling {
  int tb = 1, to = 1, tk = 1;
  double estimatedCycles = 0;
};
// The legal tiling (each tile fits its SRAM half when double-buffered) with the fewest estimated
// cycles under a simple model of the hardware: one GEMM micro-op per cycle, DRAM at the bus width
// per cycle after a fixed latency, loads overlapped with compute when double-buffered, and the
// accumulator reset, the ALU epilogue and the last store not overlapped. Tile sizes the problem
// fixes are kept (and checked).
GemmTiling chooseGemmTiling(const hw::Config& cfg, const GemmProblem& p);

struct WorkloadResult {
  bool correct = false;
  uint64_t mismatches = 0;
  std::string firstMismatch;  // "C[3][7]: got 12, expected 13"
  hw::Counters counters;       // of the runs this workload made
  double deviceSeconds = 0;    // wall time inside the device's run
  uint64_t macs = 0;
  std::string tiling;          // human-readable tile sizes chosen
};

// Called after a workload's program ran once, while its buffers and instructions are still in
// DRAM, so benchmarks can run the very same program again: device.run(insnPhys, count, 0).
using RerunHook = std::function<void(runtime::Target& device, uint64_t insnPhys, uint32_t count)>;

// Runs on the runtime's current session (TesseraInit / $TESSERA_TARGET / $TESSERA_CONFIG).
// Throws tessera::Error if the problem does not fit the configuration or the runtime fails.
WorkloadResult runBlockedGemm(const GemmProblem& p, const RerunHook& rerun = {});

// Host reference of runBlockedGemm's arithmetic, on row-major A [m][k], B [n][k]; returns C [m][n].
std::vector<int8_t> referenceGemm(const GemmProblem& p, const std::vector<int8_t>& a, const std::vector<int8_t>& b);

// 3x3 convolution, padding 1, stride 1, on one BATCH of NCHW activations in VTA's packed layouts:
// out = clip(conv(in, w) >> shift). Exercises 2D strided, padded input loads on every tile.
struct ConvProblem {
  int height = 14, width = 14;           // input = output spatial size
  int inChannels = 64, outChannels = 64;  // multiples of BLOCK_IN / BLOCK_OUT
  int shift = 8;
  uint32_t seed = 1;
};
WorkloadResult runConv3x3(const ConvProblem& p, const RerunHook& rerun = {});

// VTA's ALU hardware test: int32 A (and B) loaded into the accumulator, one ALU operation applied
// (with an immediate or element-wise with B), narrowed by STORE to int8 and checked.
struct AluProblem {
  uint32_t op = 2;      // MIN 0, MAX 1, ADD 2, SHR 3, MUL 4
  bool useImm = false;
  int32_t imm = 0;      // used when useImm
  int rows = 16;        // accumulator elements (BATCH x BLOCK_OUT each)
  uint32_t seed = 1;
  bool uopCompression = true;
};
WorkloadResult runAluTest(const AluProblem& p);
// Reference semantics of one ALU operation on 32-bit accumulator values.
int32_t referenceAlu(uint32_t op, int32_t a, int32_t b);

}  // namespace tessera::sw
