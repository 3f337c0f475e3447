// Behavioral simulator (fsim): the executable specification of the accelerator.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/counters.h"
#include "tessera/hw/dram.h"
#include "tessera/hw/isa.h"

namespace tessera::hw {

namespace detail {
class FastDecoder;

// Zero pages the host maps on first touch (mmap), or zeroed heap memory for small arrays.
void* allocateZeroed(size_t bytes);
void freeZeroed(void* p, size_t bytes);

// A zero-filled array of untouched zero pages: an SRAM costs host memory (and page faults) only
// where a program uses it.
template <typename T>
class ZeroedArray {
 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t n) : p_(static_cast<T*>(allocateZeroed(n * sizeof(T)))), n_(n) {}
  ZeroedArray(ZeroedArray&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; o.n_ = 0; }
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~ZeroedArray() { freeZeroed(p_, n_ * sizeof(T)); }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};
}

namespace kernels {
struct Loops;
// SRAM geometry of a GEMM backend: `groups` input lanes are packed per 32-bit word (2 for int16
// pairs, 4 for biased-uint8 quads); entries are stored in the backend's own layout.
struct Shape {
  int batch = 1, blockIn = 1, blockOut = 1, accLanes = 1, groups = 1, inpEntryBytes = 0, wgtEntryBytes = 0;
};
using GemmFn = void (*)(const Shape&, const Loops&, const Uop*, int32_t*, const uint8_t*, const uint8_t*);
using AluFn = void (*)(const Loops&, const Uop*, int32_t*, int, bool, int32_t);
// One of a chain of immediate ALU instructions over the same loops: its opcode and immediate.
struct AluStep {
  uint32_t op;
  int32_t imm;
};
// Applies steps [0, n) in order to each accumulator entry the loops reach through their one
// micro-op's dst, entry by entry. The caller makes sure no entry is reached twice; then the result
// is that of the n instructions run one after another.
using AluChainFn = void (*)(const Loops&, const Uop*, int32_t*, int lanes, const AluStep*, uint32_t n);
// Packs n consecutive DRAM elements into n consecutive SRAM entries.
using PackFn = void (*)(const Shape&, uint8_t* dst, const int8_t* src, uint64_t n);
struct Backend {
  const char* name = "generic";
  Shape shape;
  PackFn packInp = nullptr, packWgt = nullptr;
  GemmFn gemm = nullptr;
};
}  // namespace kernels

// Executes instruction streams against a Dram exactly as the hardware does, untimed: the three
// stages (load, compute, store) fed in order by fetch through bounded instruction queues and
// synchronized only by the four dependency-token queues. SRAM contents persist across runs, as on
// the device. Every fault (invalid field, SRAM or DRAM index out of range, deadlock, tokens left
// at FINISH) throws tessera::Error naming the instruction index and the field or queue.
class Fsim {
 public:
  // `kernelSet` picks the inner loops: "auto" (the fastest this CPU and shape allow) or one set by
  // name ("generic", "avx2", "avx512bw", "avx512-vnni"); a named set this CPU or shape cannot run
  // throws tessera::Error saying why.
  Fsim(const Config& cfg, Dram& dram, const std::string& kernelSet = "auto");
  ~Fsim();
  // Why `kernelSet` cannot run `cfg` on this CPU (unknown name, CPU lacks it, no kernels for the
  // shape); empty if it can.
  static std::string kernelSetProblem(const Config& cfg, const std::string& kernelSet);
  // Why this CPU cannot run `kernelSet` whatever the config; empty if it can.
  static std::string kernelSetCpuProblem(const std::string& kernelSet);

  // Runs `count` instructions starting at physical address `insnPhys`. A non-zero `waitCycles`
  // (VTADeviceRun's timeout) bounds the GEMM/ALU micro-ops executed, each of which takes at least
  // one cycle on the hardware; exceeding it is an error rather than an hours-long run.
  void run(uint64_t insnPhys, uint32_t count, uint64_t waitCycles = 0);

  const Config& config() const { return cfg_; }
  const Counters& counters() const { return counters_; }
  void resetCounters() { counters_ = Counters(); }

  // SRAM inspection for tests and debugging.
  int32_t acc(uint32_t index, int lane) const { return acc_[size_t(index) * accLanes_ + lane]; }
  int8_t inp(uint32_t index, int b, int k) const;
  int8_t wgt(uint32_t index, int o, int k) const;
  Uop uop(uint32_t index) const { return uops_[index]; }
  // Name of the GEMM backend in use ("avx512-vnni", "avx512bw", "avx2" or "generic").
  const char* backendName() const { return backend_.name; }

 private:
  void execute(const Insn& insn, size_t index);
  void execLoad(const Insn& insn, size_t index);
  void loadUops(uint32_t sramBase, uint32_t dramBase, uint32_t count);
  // LOAD's writes of n entries of an INP, WGT, ACC or ACC8 SRAM from DRAM bytes, or of zeros.
  void storeEntries(MemId id, uint64_t sramIdx, const uint8_t* src, uint64_t n);
  void clearEntries(MemId id, uint64_t sramIdx, uint64_t n);
  void prefetchDram(uint64_t phys, uint64_t bytes) const;
  void execStore(const Insn& insn, size_t index);
  void execGemm(const Insn& insn, size_t index);
  void execAlu(const Insn& insn, size_t index);
  // A chain of n immediate ALU instructions with `first`'s loops (see run): whether it may run as
  // one pass, and that pass.
  static constexpr uint32_t kMaxAluChain = 16;
  bool aluChainRunsAsOne(const Insn& first, uint32_t n) const;
  void execAluChain(const Insn& first, size_t index, const kernels::AluStep* steps, uint32_t n);
  static kernels::Loops loopsOf(const Insn& insn);
  void chargeWork(const Insn& insn, size_t index, uint64_t uops);
  // Highest index each micro-op field reaches over the loops; throws if past `depth`.
  void checkLoopIndices(const Insn& insn, size_t index) const;

  Config cfg_;
  Isa isa_;
  Dram& dram_;
  std::unique_ptr<detail::FastDecoder> decoder_;
  uint64_t elemBytes_[6] = {};  // DRAM bytes of an element, by memory type
  struct UopFields {
    uint32_t dstShift, dstMask, srcShift, srcMask, wgtShift, wgtMask;
  } uopFields_;  // the micro-op's bit layout, for LOAD.UOP
  struct Queued;
  class Scheduler;  // one run's fetch, instruction queues and token queues (fsim.cpp)
  std::vector<Queued> queueSlots_;  // the instruction queues' storage, kept from run to run
  Counters counters_;
  uint64_t workBudget_ = 0, workDone_ = 0;

  int batch_, blockIn_, blockOut_;
  int accLanes_;  // batch * BLOCK_OUT
  // The GEMM backend for this shape and CPU, and the SRAMs in its layouts. Inputs and weights
  // also keep their DRAM bytes: they are the architectural state, and an entry reloaded with the
  // same bytes (common for weights) is not repacked.
  kernels::Backend backend_;
  detail::ZeroedArray<uint8_t> inpPacked_, wgtPacked_;
  detail::ZeroedArray<uint8_t> inpRaw_, wgtRaw_;
  detail::ZeroedArray<int32_t> acc_;
  detail::ZeroedArray<Uop> uops_;
  kernels::AluFn aluKernels_[5] = {};
  kernels::AluChainFn aluChain_ = nullptr;
  void (*widen_)(int32_t*, const int8_t*, uint64_t) = nullptr;   // ACC_8BIT loads
  void (*narrow_)(int8_t*, const int32_t*, uint64_t) = nullptr;  // STOREs
};

}  // namespace tessera::hw
