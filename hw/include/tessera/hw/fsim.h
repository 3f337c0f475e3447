// Behavioral simulator (fsim): the executable specification of the accelerator.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/counters.h"
#include "tessera/hw/dram.h"
#include "tessera/hw/isa.h"

namespace tessera::hw {

namespace kernels {
struct Shape {
  int batch, pairs, blockOut, accLanes, inpLanes, wgtLanes;
};
struct Loops;
using GemmFn = void (*)(const Shape&, const Loops&, const Uop*, int32_t*, const int16_t*, const int16_t*);
using AluFn = void (*)(const Loops&, const Uop*, int32_t*, int, bool, int32_t);
}  // namespace kernels

// Executes instruction streams against a Dram exactly as the hardware does, untimed: the three
// stages (load, compute, store) fed in order by fetch through bounded instruction queues and
// synchronized only by the four dependency-token queues. SRAM contents persist across runs, as on
// the device. Every fault (invalid field, SRAM or DRAM index out of range, deadlock, tokens left
// at FINISH) throws tessera::Error naming the instruction index and the field or queue.
class Fsim {
 public:
  Fsim(const Config& cfg, Dram& dram);

  // Runs `count` instructions starting at physical address `insnPhys`.
  void run(uint64_t insnPhys, uint32_t count);

  const Config& config() const { return cfg_; }
  const Counters& counters() const { return counters_; }
  void resetCounters() { counters_ = Counters(); }

  // SRAM inspection for tests and debugging.
  int32_t acc(uint32_t index, int lane) const { return acc_[size_t(index) * accLanes_ + lane]; }
  int8_t inp(uint32_t index, int b, int k) const;
  int8_t wgt(uint32_t index, int o, int k) const;
  Uop uop(uint32_t index) const { return uops_[index]; }

 private:
  void execute(const Insn& insn, size_t index);
  void execLoad(const Insn& insn, size_t index);
  void execStore(const Insn& insn, size_t index);
  void execGemm(const Insn& insn, size_t index);
  void execAlu(const Insn& insn, size_t index);
  static kernels::Loops loopsOf(const Insn& insn);
  void checkDram(const Insn& insn, size_t index, uint64_t elemBytes) const;
  // Highest index each micro-op field reaches over the loops; throws if past `depth`.
  void checkLoopIndices(const Insn& insn, size_t index) const;

  Config cfg_;
  Isa isa_;
  Dram& dram_;
  Counters counters_;

  int batch_, blockIn_, blockOut_;
  int pairs_;       // ceil(BLOCK_IN / 2): int16 pairs per input row
  int inpLanes_;    // batch * 2 * pairs
  int wgtLanes_;    // pairs * BLOCK_OUT * 2
  int accLanes_;    // batch * BLOCK_OUT
  // SRAMs. Inputs and weights are kept widened to int16 (weights transposed into (k, k+1) pairs
  // per output) so the GEMM inner loop is a chain of 16-bit multiply-adds with no per-element decode.
  std::vector<int16_t> inp16_;
  std::vector<int16_t> wgtPairs_;
  std::vector<int32_t> acc_;
  std::vector<Uop> uops_;
  // Raw DRAM bytes of each input and weight entry, to skip re-widening identical reloads.
  std::vector<uint8_t> inpRaw_, wgtRaw_;
  // Inner loops chosen once for this shape and host CPU.
  kernels::Shape shape_;
  kernels::GemmFn gemmKernel_ = nullptr;
  kernels::AluFn aluKernels_[5] = {};
};

}  // namespace tessera::hw
