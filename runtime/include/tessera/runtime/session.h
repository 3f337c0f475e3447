// Session: the one object holding what VTA's C API keeps globally (config, DRAM, target, queues).
#pragma once

#include <memory>
#include <map>
#include <mutex>
#include <thread>
#include <set>
#include <string>

#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/runtime/command_queue.h"
#include "tessera/runtime/target.h"

namespace tessera::runtime {

// A configured runtime: one hardware config, one simulated DRAM, one target name and its options.
// C++ users may create Sessions directly; the C ABI uses Session::global().
class Session {
 public:
  // Target options are those of $TESSERA_TARGET_OPTIONS ("key=value,key=value"), replaced key by
  // key by `options`. Throws if the target is unknown, cannot run `cfg` or rejects an option key.
  Session(const std::string& target, const hw::Config& cfg, const TargetOptions& options = TargetOptions());
  ~Session();

  const hw::Config& config() const { return cfg_; }
  const std::string& targetName() const { return target_; }
  hw::Dram& dram() { return *dram_; }

  const TargetOptions& targetOptions() const { return options_; }

  std::unique_ptr<Target> createDevice() { return createTarget(target_, cfg_, *dram_, options_); }

  // Buffers (thread-safe). Throws on exhaustion.
  DataBuffer* allocBuffer(uint64_t bytes);
  void freeBuffer(DataBuffer* buffer);
  // The DataBuffer for a handle, or throws naming `what` if it is not a live buffer of this session.
  DataBuffer& buffer(const void* handle, const char* what);
  bool isBuffer(const void* handle);
  // Raw VTAMemAlloc-style allocations: host pointer into DRAM.
  void* memAlloc(uint64_t bytes);
  void memFree(void* host);

  // The calling thread's command queue, created on first use.
  CommandQueue& threadQueue();
  // The calling thread's command queue if it has one.
  CommandQueue* existingThreadQueue();

  // The process-wide session behind the C ABI, created from $TESSERA_TARGET/$TESSERA_CONFIG
  // (and $TESSERA_TARGET_OPTIONS) on first use and replaced by reset().
  static Session& global();
  static void reset(const std::string& target, const std::string& config);
  static void shutdownQueues();

 private:
  std::string target_;
  hw::Config cfg_;
  TargetOptions options_;
  std::unique_ptr<hw::Dram> dram_;
  std::mutex mutex_;
  std::set<DataBuffer*> buffers_;
  std::map<std::thread::id, std::unique_ptr<CommandQueue>> queues_;
};

}  // namespace tessera::runtime
