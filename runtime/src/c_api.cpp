// The C ABI (VTA driver.h and runtime.h, Tessera extensions) over Session and CommandQueue.
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "tessera/support/error.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/tessera.h"
#include "vta/driver.h"
#include "vta/runtime.h"

using tessera::runtime::CommandQueue;
using tessera::runtime::DataBuffer;
using tessera::runtime::Session;
using tessera::runtime::Target;

namespace {

// Per-thread last error, the only state the C ABI adds to the global Session.
class ErrorBook {
 public:
  static ErrorBook& get() {
    static ErrorBook book;
    return book;
  }
  void set(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    errors_[std::this_thread::get_id()] = what;
  }
  const char* last() {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = errors_.find(std::this_thread::get_id());
    return it == errors_.end() ? nullptr : it->second.c_str();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    errors_.erase(std::this_thread::get_id());
  }

 private:
  std::mutex mutex_;
  std::map<std::thread::id, std::string> errors_;
};

// Records and prints an error; C callers see it through TesseraLastError().
void report(const std::string& what) {
  ErrorBook::get().set(what);
  std::fprintf(stderr, "tessera: error: %s\n", what.c_str());
}

// Runs `body`, turning exceptions into a recorded error and `failValue`.
template <typename R, typename F>
R guarded(R failValue, F body) {
  try {
    return body();
  } catch (const std::exception& e) {
    report(e.what());
    return failValue;
  }
}

template <typename F>
void guardedVoid(F body) {
  guarded<int>(0, [&] {
    body();
    return 0;
  });
}

// Commands on a queue that holds an unreported error are refused, so a failed call cannot be
// followed by a silently wrong run.
CommandQueue& queueOf(VTACommandHandle cmd) {
  CommandQueue& q = cmd ? *static_cast<CommandQueue*>(cmd) : Session::global().threadQueue();
  if (ErrorBook::get().last())
    throw tessera::Error("command queue", std::string("refusing work after an earlier error (clear it with "
                                                      "TesseraClearError): ") + ErrorBook::get().last());
  return q;
}

// Errors inside a kernel's finit are reported when VTAPush*Op returns; outside finit, at once.
template <typename F>
void recording(F body) {
  try {
    body();
  } catch (const std::exception& e) {
    try {
      CommandQueue& q = Session::global().threadQueue();
      if (q.recording()) {
        q.recordError(e.what());
        return;
      }
    } catch (const std::exception&) {
    }
    report(e.what());
  }
}

}  // namespace

extern "C" {

// ---- Tessera extensions ----

int TesseraInit(const char* target, const char* config) {
  ErrorBook::get().clear();
  return guarded<int>(1, [&] {
    Session::reset(target ? target : "", config ? config : "");
    return 0;
  });
}

const char* TesseraTargetName(void) {
  return guarded<const char*>(nullptr, [] { return Session::global().targetName().c_str(); });
}

const char* TesseraConfigName(void) {
  return guarded<const char*>(nullptr, [] { return Session::global().config().name.c_str(); });
}

const char* TesseraAvailableTargets(void) {
  static const std::string names = tessera::runtime::availableTargetNames();
  return names.c_str();
}

const char* TesseraLastError(void) { return ErrorBook::get().last(); }

void TesseraClearError(void) {
  ErrorBook::get().clear();
  // A failed call may have left a half-built stream; never run it.
  guardedVoid([] {
    if (CommandQueue* q = Session::global().existingThreadQueue()) q->discard();
  });
}

size_t TesseraCounters(char* json, size_t capacity) {
  return guarded<size_t>(0, [&] {
    std::string s = Session::global().threadQueue().device().counters().toJson();
    if (json && capacity) {
      size_t n = std::min(capacity - 1, s.size());
      std::memcpy(json, s.data(), n);
      json[n] = '\0';
    }
    return s.size();
  });
}

// ---- driver.h ----

VTADeviceHandle VTADeviceAlloc(void) {
  return guarded<VTADeviceHandle>(nullptr, [] { return static_cast<VTADeviceHandle>(Session::global().createDevice().release()); });
}

void VTADeviceFree(VTADeviceHandle handle) { delete static_cast<Target*>(handle); }

int VTADeviceRun(VTADeviceHandle device, vta_phy_addr_t insn_phy_addr, uint32_t insn_count, uint32_t wait_cycles) {
  return guarded<int>(1, [&] {
    if (!device) throw tessera::Error("VTADeviceRun", "device handle is NULL");
    static_cast<Target*>(device)->run(insn_phy_addr, insn_count, wait_cycles);
    return 0;
  });
}

void* VTAMemAlloc(size_t size, int cached) {
  (void)cached;  // simulated memory is coherent
  return guarded<void*>(nullptr, [&] {
    void* p = Session::global().memAlloc(size);
    if (!p) throw tessera::Error("VTAMemAlloc(" + std::to_string(size) + ")", "out of contiguous accelerator memory");
    return p;
  });
}

void VTAMemFree(void* buf) {
  if (!buf) return;
  guardedVoid([&] { Session::global().memFree(buf); });
}

vta_phy_addr_t VTAMemGetPhyAddr(void* buf) {
  return guarded<vta_phy_addr_t>(0, [&] {
    auto& dram = Session::global().dram();
    if (!dram.contains(buf)) throw tessera::Error("VTAMemGetPhyAddr", "pointer is not accelerator memory");
    return static_cast<vta_phy_addr_t>(dram.physOf(buf));
  });
}

void VTAMemCopyFromHost(void* dst, const void* src, size_t size) { std::memcpy(dst, src, size); }
void VTAMemCopyToHost(void* dst, const void* src, size_t size) { std::memcpy(dst, src, size); }
void VTAFlushCache(void*, vta_phy_addr_t, int) {}
void VTAInvalidateCache(void*, vta_phy_addr_t, int) {}
void VTAProgram(const char*) {}

// ---- runtime.h ----

void* VTABufferAlloc(size_t size) {
  return guarded<void*>(nullptr, [&] { return static_cast<void*>(Session::global().allocBuffer(size)); });
}

void VTABufferFree(void* buffer) {
  if (!buffer) return;
  guardedVoid([&] { Session::global().freeBuffer(&Session::global().buffer(buffer, "VTABufferFree")); });
}

void VTABufferCopy(const void* from, size_t from_offset, void* to, size_t to_offset, size_t size, int kind_mask) {
  guardedVoid([&] {
    Session& s = Session::global();
    const uint8_t* src = static_cast<const uint8_t*>(from);
    uint8_t* dst = static_cast<uint8_t*>(to);
    if (kind_mask & VTA_MEMCPY_D2H) {
      DataBuffer& b = s.buffer(from, "VTABufferCopy: from");
      if (from_offset > b.size || size > b.size - from_offset)
        throw tessera::Error("VTABufferCopy", "reads past the end of the source buffer");
      src = b.host;
    }
    if (kind_mask & VTA_MEMCPY_H2D) {
      DataBuffer& b = s.buffer(to, "VTABufferCopy: to");
      if (to_offset > b.size || size > b.size - to_offset)
        throw tessera::Error("VTABufferCopy", "writes past the end of the destination buffer");
      dst = b.host;
    }
    std::memmove(dst + to_offset, src + from_offset, size);
  });
}

void* VTABufferCPUPtr(VTACommandHandle, void* buffer) {
  Session& s = Session::global();
  return s.isBuffer(buffer) ? s.buffer(buffer, "VTABufferCPUPtr").host : buffer;
}

void VTAWriteBarrier(VTACommandHandle, void*, uint32_t, uint32_t, uint32_t) {}
void VTAReadBarrier(VTACommandHandle, void*, uint32_t, uint32_t, uint32_t) {}

VTACommandHandle VTATLSCommandHandle(void) {
  return guarded<VTACommandHandle>(nullptr, [] { return static_cast<VTACommandHandle>(&Session::global().threadQueue()); });
}

void VTARuntimeShutdown(void) {
  guardedVoid([] { Session::shutdownQueues(); });
}

void VTASetDebugMode(VTACommandHandle cmd, int debug_flag) {
  guardedVoid([&] { queueOf(cmd).setDebugFlags(debug_flag); });
}

void VTALoadBuffer2D(VTACommandHandle cmd, void* src_dram_addr, uint32_t src_elem_offset, uint32_t x_size,
                     uint32_t y_size, uint32_t x_stride, uint32_t x_pad_before, uint32_t y_pad_before,
                     uint32_t x_pad_after, uint32_t y_pad_after, uint32_t dst_sram_index, uint32_t dst_memory_type) {
  guardedVoid([&] {
    CommandQueue& q = queueOf(cmd);
    q.loadBuffer2D(Session::global().buffer(src_dram_addr, "VTALoadBuffer2D: src_dram_addr"), src_elem_offset, x_size,
                   y_size, x_stride, x_pad_before, y_pad_before, x_pad_after, y_pad_after, dst_sram_index,
                   dst_memory_type);
  });
}

void VTAStoreBuffer2D(VTACommandHandle cmd, uint32_t src_sram_index, uint32_t src_memory_type, void* dst_dram_addr,
                      uint32_t dst_elem_offset, uint32_t x_size, uint32_t y_size, uint32_t x_stride) {
  guardedVoid([&] {
    CommandQueue& q = queueOf(cmd);
    q.storeBuffer2D(src_sram_index, src_memory_type,
                    Session::global().buffer(dst_dram_addr, "VTAStoreBuffer2D: dst_dram_addr"), dst_elem_offset,
                    x_size, y_size, x_stride);
  });
}

void VTAUopPush(uint32_t mode, uint32_t reset_out, uint32_t dst_index, uint32_t src_index, uint32_t wgt_index,
                uint32_t opcode, uint32_t use_imm, int32_t imm_val) {
  recording([&] {
    Session::global().threadQueue().uopPush(mode, reset_out, dst_index, src_index, wgt_index, opcode, use_imm, imm_val);
  });
}

void VTAUopLoopBegin(uint32_t extent, uint32_t dst_factor, uint32_t src_factor, uint32_t wgt_factor) {
  recording([&] { Session::global().threadQueue().uopLoopBegin(extent, dst_factor, src_factor, wgt_factor); });
}

void VTAUopLoopEnd(void) {
  recording([&] { Session::global().threadQueue().uopLoopEnd(); });
}

int VTAPushGEMMOp(void** uop_handle, int (*finit)(void*), void* signature, int nbytes) {
  return guarded<int>(1, [&] {
    queueOf(nullptr).pushGemmOp(uop_handle, finit, signature, nbytes);
    return 0;
  });
}

int VTAPushALUOp(void** uop_handle, int (*finit)(void*), void* signature, int nbytes) {
  return guarded<int>(1, [&] {
    queueOf(nullptr).pushAluOp(uop_handle, finit, signature, nbytes);
    return 0;
  });
}

int VTADepPush(VTACommandHandle cmd, int from_qid, int to_qid) {
  return guarded<int>(1, [&] {
    queueOf(cmd).depPush(from_qid, to_qid);
    return 0;
  });
}

int VTADepPop(VTACommandHandle cmd, int from_qid, int to_qid) {
  return guarded<int>(1, [&] {
    queueOf(cmd).depPop(from_qid, to_qid);
    return 0;
  });
}

void VTASynchronize(VTACommandHandle cmd, uint32_t wait_cycles) {
  guardedVoid([&] { queueOf(cmd).synchronize(wait_cycles); });
}

}  // extern "C"
