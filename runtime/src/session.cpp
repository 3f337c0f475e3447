// Session: buffers, per-thread command queues, and the process-wide session behind the C ABI.
#include "tessera/runtime/session.h"

#include <cstdlib>

#include "tessera/support/error.h"

namespace tessera::runtime {

Session::Session(const std::string& target, const hw::Config& cfg, const TargetOptions& options)
    : target_(target), cfg_(cfg) {
  const char* env = std::getenv("TESSERA_TARGET_OPTIONS");
  options_ = parseTargetOptions(env ? env : "", "TESSERA_TARGET_OPTIONS");
  for (const auto& [key, value] : options) options_[key] = value;
  // Fail now, not at the first run, if the target does not exist, cannot run this config or
  // does not know an option.
  checkTarget(findTarget(target), cfg_, options_);
  dram_ = std::make_unique<hw::Dram>(cfg);
}

Session::~Session() {
  queues_.clear();  // queues free their buffers into the DRAM before it goes away
  for (DataBuffer* b : buffers_) delete b;
}

DataBuffer* Session::allocBuffer(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t phys = dram_->alloc(bytes);
  if (!phys)
    throw Error("buffer allocation of " + std::to_string(bytes) + " bytes",
                "no contiguous range of that size is free in the 4 GiB allocatable DRAM");
  auto* b = new DataBuffer{dram_->raw(phys), phys, bytes};
  buffers_.insert(b);
  return b;
}

void Session::freeBuffer(DataBuffer* buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!buffers_.count(buffer)) throw Error("VTABufferFree", "not a live buffer handle (double free?)");
  dram_->free(buffer->phys);
  buffers_.erase(buffer);
  delete buffer;
}

DataBuffer& Session::buffer(const void* handle, const char* what) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = buffers_.find(const_cast<DataBuffer*>(static_cast<const DataBuffer*>(handle)));
  if (it == buffers_.end()) throw Error(what, "not a buffer handle returned by VTABufferAlloc");
  return **it;
}

bool Session::isBuffer(const void* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  return buffers_.count(const_cast<DataBuffer*>(static_cast<const DataBuffer*>(handle))) != 0;
}

void* Session::memAlloc(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t phys = dram_->alloc(bytes);
  return phys ? dram_->raw(phys) : nullptr;
}

void Session::memFree(void* host) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dram_->contains(host)) throw Error("VTAMemFree", "pointer is not accelerator memory");
  dram_->free(dram_->physOf(host));
}

CommandQueue& Session::threadQueue() {
  std::unique_lock<std::mutex> lock(mutex_);
  auto& q = queues_[std::this_thread::get_id()];
  if (!q) {
    lock.unlock();  // the queue allocates its buffers through this session
    auto fresh = std::make_unique<CommandQueue>(*this);
    lock.lock();
    q = std::move(fresh);
  }
  return *q;
}

CommandQueue* Session::existingThreadQueue() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = queues_.find(std::this_thread::get_id());
  return it == queues_.end() ? nullptr : it->second.get();
}

namespace {

// Everything VTA's C API keeps in globals, in one place.
struct GlobalState {
  std::mutex mutex;
  std::unique_ptr<Session> session;
};

GlobalState& state() {
  static GlobalState s;
  return s;
}

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace

namespace {
void releaseGlobalSession() {
  auto& s = state();
  std::unique_ptr<Session> doomed;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    doomed.swap(s.session);
  }
}
}  // namespace

namespace detail {
// Called after each plugin is loaded (targets.cpp): exit handlers and static destructors run in
// reverse order of registration, so the session ends before the plugin's static objects, which a
// target still in it uses when destroyed (tsim closing its waveform). The state is constructed
// first, so its own destructor runs after the handler, never before.
void releaseGlobalSessionBeforePluginStatics() {
  state();
  std::atexit(&releaseGlobalSession);
}
}  // namespace detail

Session& Session::global() {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.session)
    s.session = std::make_unique<Session>(envOr("TESSERA_TARGET", "fsim"),
                                          hw::Config::load(envOr("TESSERA_CONFIG", "default")));
  return *s.session;
}

void Session::reset(const std::string& target, const std::string& config) {
  auto& s = state();
  std::string t = target.empty() ? envOr("TESSERA_TARGET", "fsim") : target;
  std::string c = config.empty() ? envOr("TESSERA_CONFIG", "default") : config;
  auto fresh = std::make_unique<Session>(t, hw::Config::load(c));
  std::lock_guard<std::mutex> lock(s.mutex);
  s.session = std::move(fresh);
}

void Session::shutdownQueues() {
  Session& g = global();
  std::map<std::thread::id, std::unique_ptr<CommandQueue>> doomed;
  {
    std::lock_guard<std::mutex> lock(g.mutex_);
    doomed.swap(g.queues_);
  }
  doomed.clear();  // queues free their buffers through the session, outside the lock
}

}  // namespace tessera::runtime
