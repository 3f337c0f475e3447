// The JIT runtime: builds instruction streams with dependency flags and micro-op kernels, runs them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/dep_stream.h"
#include "tessera/hw/isa.h"
#include "tessera/runtime/target.h"

namespace tessera::runtime {

class Session;

// Pipeline stages as numbered by VTA's runtime (VTADepPush/VTADepPop queue ids).
enum : int { kLoadStage = 1, kComputeStage = 2, kStoreStage = 3 };

// A buffer in accelerator memory, as handed out by VTABufferAlloc.
struct DataBuffer {
  uint8_t* host = nullptr;
  uint64_t phys = 0;
  uint64_t size = 0;
};

// A recorded micro-op kernel: up to two loops around a sequence of micro-ops, and the fields of the
// GEMM/ALU instruction that runs it.
struct UopKernel {
  struct Loop {
    uint32_t extent, dstFactor, srcFactor, wgtFactor;
  };
  std::vector<hw::Uop> uops;
  std::vector<Loop> loops;
  int mode = -1;        // 0 GEMM, 1 ALU
  int reset = -1;
  int aluOp = -1;
  bool useImm = false;
  int32_t imm = 0;
  int openLoops = 0;
  std::string error;  // first error raised while recording (through the C API)
  // Placement in the micro-op SRAM while cached (begin == end: not cached).
  uint32_t sramBegin = 0, sramEnd = 0;
  bool cached() const { return sramBegin != sramEnd; }
};

// One thread's command queue: VTA's CommandQueue semantics. Errors throw tessera::Error.
class CommandQueue {
 public:
  explicit CommandQueue(Session& session);
  ~CommandQueue();
  CommandQueue(const CommandQueue&) = delete;
  CommandQueue& operator=(const CommandQueue&) = delete;

  void loadBuffer2D(const DataBuffer& src, uint32_t srcElemOffset, uint32_t xSize, uint32_t ySize, uint32_t xStride,
                    uint32_t xPadBefore, uint32_t yPadBefore, uint32_t xPadAfter, uint32_t yPadAfter,
                    uint32_t dstSramIndex, uint32_t dstMemoryType);
  void storeBuffer2D(uint32_t srcSramIndex, uint32_t srcMemoryType, const DataBuffer& dst, uint32_t dstElemOffset,
                     uint32_t xSize, uint32_t ySize, uint32_t xStride);
  void depPush(int from, int to);
  void depPop(int from, int to);

  // Micro-op kernels: `handle` identifies the call site, `signature` the variant.
  void pushGemmOp(void** handle, int (*finit)(void*), void* signature, int nbytes);
  void pushAluOp(void** handle, int (*finit)(void*), void* signature, int nbytes);
  // Recording, valid only inside finit.
  void uopLoopBegin(uint32_t extent, uint32_t dstFactor, uint32_t srcFactor, uint32_t wgtFactor);
  void uopLoopEnd();
  void uopPush(uint32_t mode, uint32_t resetOut, uint32_t dst, uint32_t src, uint32_t wgt, uint32_t opcode,
               uint32_t useImm, int32_t imm);

  // Drops everything queued since the last synchronize (instructions, pending pops, staged
  // micro-ops, the micro-op cache), e.g. after an error left a half-built stream.
  void discard();
  // Appends FINISH, runs on the device and resets the queues.
  void synchronize(uint32_t waitCycles);
  // Records an error raised by a C API call made from inside finit, reported after finit returns.
  void recordError(const std::string& what);
  bool recording() const { return recording_ != nullptr; }
  void setDebugFlags(int flags) { debugFlags_ = flags; }
  int debugFlags() const { return debugFlags_; }
  void setDebugStream(std::ostream* os) { debug_ = os; }

  Target& device() { return *device_; }
  // Instructions queued since the last synchronize (FINISH not yet appended).
  const std::vector<hw::Insn>& pendingInstructions() const { return stream_.insns(); }
  // The instruction stream of the last synchronize, as run.
  const std::vector<hw::Insn>& lastProgram() const { return lastProgram_; }
  // Physical address of the last program's instructions (valid until the next synchronize).
  uint64_t lastProgramPhys() const { return insnBuffer_.phys; }
  // Wall-clock seconds the device spent in the last synchronize, and in all of them.
  double lastRunSeconds() const { return lastRunSeconds_; }
  double totalRunSeconds() const { return totalRunSeconds_; }

 private:
  hw::Insn& create(int stage);
  void commitPendingPop(int stage);
  void rewriteForceSerial();
  void pushKernel(UopKernel& kernel, bool gemm);
  void recordKernel(void** handle, int (*finit)(void*), void* signature, int nbytes, bool gemm);
  void checkOverflow();
  void dumpKernel(const UopKernel& k) const;

  Session& session_;
  hw::Isa isa_;
  std::unique_ptr<Target> device_;
  // Instructions queued since the last synchronize, with VTA's runtime's flag folding.
  hw::DependencyStream stream_{hw::DependencyStream::Folding::kVtaRuntime};
  std::vector<hw::Insn> lastProgram_;
  // Micro-ops staged for this run, copied to uopBuffer_ at synchronize.
  std::vector<uint32_t> stagedUops_;
  std::vector<UopKernel*> cachedKernels_;
  uint32_t uopSramEnd_ = 0;
  DataBuffer insnBuffer_, uopBuffer_;
  DataBuffer* ownedBuffers_[2] = {nullptr, nullptr};
  uint32_t maxInsns_ = 0, maxUops_ = 0;
  // Kernels by call-site handle, then by signature bytes.
  std::map<void**, std::map<std::string, std::unique_ptr<UopKernel>>> kernels_;
  UopKernel* recording_ = nullptr;
  int debugFlags_ = 0;
  double lastRunSeconds_ = 0, totalRunSeconds_ = 0;
  std::ostream* debug_;
};

}  // namespace tessera::runtime
