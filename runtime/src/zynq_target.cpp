// The zynq target: drives the RTL accelerator's AXI4-Lite registers through a memory mapping and stages each run's DRAM in a u-dma-buf buffer.
#include "tessera/runtime/zynq.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "tessera/gen/hls_register_map.h"
#include "tessera/gen/host_interface.h"
#include "tessera/support/error.h"
#include "tessera/hw/hls_outcome.h"
#include "tessera/hw/isa.h"
#include "tessera/hw/program.h"
#include "tessera/hw/run_error.h"
#include "tessera/support/format.h"

namespace tessera::runtime::zynq {

uint64_t registerWindowBytes() { return uint64_t(1) << host::kAddrWidth; }

uint64_t hlsRegisterWindowBytes() { return uint64_t(hls_map::kNumIps) * hls_map::kIpStride; }

uint64_t parseAddress(const std::string& text, const std::string& what) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ' || t.back() == '\r')) t.pop_back();
  const bool hexadecimal = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  const std::string digits = hexadecimal ? t.substr(2) : t;
  if (digits.empty() || digits.size() > 16 ||
      digits.find_first_not_of(hexadecimal ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos)
    throw Error(what, "'" + t + "' is not an address (0x followed by hex digits, or decimal digits)");
  return std::strtoull(digits.c_str(), nullptr, hexadecimal ? 16 : 10);
}

namespace {

constexpr uint64_t kPage = hw::Dram::kPageBytes;
constexpr uint64_t kAxiLimit = uint64_t(1) << 32;  // the RTL's AXI addresses are 32-bit

constexpr const char* kUioKey = "uio";
constexpr const char* kDevMemKey = "devmem";
constexpr const char* kRegsFileKey = "regs-file";
constexpr const char* kBufferKey = "buffer";
constexpr const char* kBufferSysfsKey = "buffer-sysfs";
constexpr const char* kTimeoutKey = "timeout";
constexpr const char* kConfigKey = "config";
constexpr const char* kBitstreamKey = "bitstream";

std::string errnoText() { return std::strerror(errno); }

std::string readText(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path, "cannot open " + what + ": " + errnoText());
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  const int err = errno;
  ::close(fd);
  if (n < 0) throw Error(path, "cannot read " + what + ": " + std::strerror(err));
  return std::string(buf, static_cast<size_t>(n));
}

// One write, as `echo VALUE > FILE` does: sysfs acts on it when write() returns.
void writeText(const std::string& path, const std::string& text, const std::string& what) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw Error(path, "cannot open " + what + " for writing: " + errnoText());
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    throw Error(path, "cannot write " + what + ": " + (n < 0 ? std::string(std::strerror(err)) : "short write"));
}

bool isDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// An open file and a shared mapping of part of it, released together.
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile() {
    if (data_) ::munmap(data_, size_);
    if (fd_ >= 0) ::close(fd_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // O_SYNC asks /dev/mem and UIO for an uncached mapping, as device registers need.
  void open(const std::string& path, bool sync, const std::string& what) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC | (sync ? O_SYNC : 0));
    if (fd_ < 0)
      throw Error(path, "cannot open " + what + ": " + errnoText() +
                            (errno == EACCES ? " (docs/deploy.md, \"Permissions\")" : ""));
    path_ = path;
  }
  // Size of a regular file, or -1 for a device.
  int64_t regularFileSize() const {
    struct stat st;
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    return st.st_size;
  }
  void map(uint64_t bytes, uint64_t offset, const std::string& what) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(offset));
    if (p == MAP_FAILED)
      throw Error(path_, "cannot map " + std::to_string(bytes) + " bytes of " + what + " at offset " + hex(offset) +
                             ": " + errnoText());
    data_ = static_cast<uint8_t*>(p);
    size_ = bytes;
  }
  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

// An exclusive flock(2) on the register device or file for one run, waited for up to the timeout.
class DeviceLock {
 public:
  DeviceLock(const MappedFile& device, std::chrono::milliseconds timeout, const std::string& runWhat) : fd_(device.fd()) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR)
        throw Error(runWhat, "cannot lock " + device.path() + ": " + errnoText());
      if (std::chrono::steady_clock::now() > deadline)
        throw Error(runWhat, "the device is busy: another run holds " + device.path() +
                                 " (another thread or process) past the timeout");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~DeviceLock() { ::flock(fd_, LOCK_UN); }
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

 private:
  int fd_;
};

// Where the registers and the buffer come from, from the target options.
struct Settings {
  enum class Registers { kUio, kDevMem, kFile } registers = Registers::kUio;
  std::string uio = "tessera";  // /dev/uioN or a UIO device name
  uint64_t devMemAddress = 0;
  std::string regsFile;
  std::string buffer = "/dev/udmabuf0";
  std::string bufferSysfs;
  std::chrono::milliseconds timeout{10000};
  std::string config;
  // Which bitstream's registers: the RTL's host interface, or the HLS design's four stage IPs.
  enum class Bitstream { kRtl, kHls } bitstream = Bitstream::kRtl;
};

Settings settingsOf(const TargetOptions& options) {
  Settings s;
  int sources = 0;
  if (auto it = options.find(kUioKey); it != options.end()) {
    if (it->second.empty()) throw Error(std::string("target option ") + kUioKey, "empty (expected /dev/uioN or a UIO name)");
    s.uio = it->second;
    ++sources;
  }
  if (auto it = options.find(kDevMemKey); it != options.end()) {
    s.registers = Settings::Registers::kDevMem;
    s.devMemAddress = parseAddress(it->second, std::string("target option ") + kDevMemKey);
    if (s.devMemAddress % kPage)
      throw Error(std::string("target option ") + kDevMemKey + "=" + it->second,
                  "the register window's physical address must be page aligned (" + std::to_string(kPage) + " bytes)");
    ++sources;
  }
  if (auto it = options.find(kRegsFileKey); it != options.end()) {
    if (it->second.empty()) throw Error(std::string("target option ") + kRegsFileKey, "empty (expected a FILE)");
    s.registers = Settings::Registers::kFile;
    s.regsFile = it->second;
    ++sources;
  }
  if (sources > 1)
    throw Error("target zynq", std::string("give one of the options ") + kUioKey + ", " + kDevMemKey + " and " +
                                   kRegsFileKey + ", not several: they name the register window");
  if (auto it = options.find(kBufferKey); it != options.end()) s.buffer = it->second;
  if (auto it = options.find(kBufferSysfsKey); it != options.end()) s.bufferSysfs = it->second;
  if (auto it = options.find(kTimeoutKey); it != options.end()) {
    char* end = nullptr;
    const double seconds = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end || !(seconds > 0) || seconds > 1e6)
      throw Error(std::string("target option ") + kTimeoutKey + "=" + it->second, "expected a number of seconds in (0, 1e6]");
    s.timeout = std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000)));
  }
  if (auto it = options.find(kConfigKey); it != options.end()) s.config = it->second;
  if (auto it = options.find(kBitstreamKey); it != options.end()) {
    if (it->second == "hls") s.bitstream = Settings::Bitstream::kHls;
    else if (it->second != "rtl")
      throw Error(std::string("target option ") + kBitstreamKey + "=" + it->second,
                  "expected rtl (the RTL bitstream, the default) or hls (the HLS bitstream's four stage IPs)");
  }
  return s;
}

// Why `cfg` is not the config of the bitstream named by the option config=; empty if it is.
std::string configMismatch(const hw::Config& cfg, const std::string& bitstreamConfig) {
  if (bitstreamConfig.empty()) return "";
  hw::Config board = hw::Config::load(bitstreamConfig);
  hw::Config session = cfg;
  board.name.clear();
  board.description.clear();
  session.name.clear();
  session.description.clear();
  if (board.toJson() == session.toJson()) return "";
  return "the bitstream runs config " + bitstreamConfig + " (target option config=), not " + cfg.name;
}

// The /sys/class/uio/uioN directory and /dev/uioN of the option uio= (a device or a name).
std::pair<std::string, std::string> findUio(const std::string& uio) {
  const std::string classDir = "/sys/class/uio";
  if (uio.rfind("/dev/", 0) == 0) {
    const std::string node = uio.substr(5);
    return {classDir + "/" + node, uio};
  }
  std::string found;
  DIR* d = ::opendir(classDir.c_str());
  if (d) {
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::string name;
      try {
        name = readText(classDir + "/" + e->d_name + "/name", "UIO device name");
      } catch (const Error&) {
        continue;
      }
      while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
      if (name == uio) {
        ::closedir(d);
        return {classDir + "/" + e->d_name, std::string("/dev/") + e->d_name};
      }
      found += (found.empty() ? "" : ", ") + std::string(e->d_name) + " '" + name + "'";
    }
    ::closedir(d);
  }
  throw Error(uio == "tessera" ? "UIO device 'tessera' (the default of target option uio=)" : "target option uio=" + uio,
              "no UIO device of that name in " + classDir + " (" + (found.empty() ? "none there" : "found " + found) +
                  "); is the overlay loaded and uio_pdrv_genirq bound with of_id=generic-uio? (docs/deploy.md)");
}

// Module status states of the host-interface contract.
uint32_t stateOf(uint32_t status) { return status & ((1u << host::kStatusStateBits) - 1); }
uint32_t argOf(uint32_t status) { return (status >> host::kStatusStateBits) & ((1u << host::kStatusArgBits) - 1); }

class ZynqTarget : public Target {
 public:
  ZynqTarget(const hw::Config& cfg, hw::Dram& dram, const TargetOptions& options)
      : cfg_(cfg), isa_(cfg), dram_(dram), settings_(settingsOf(options)) {
    openRegisters();
    if (hls()) checkHlsBlocks();
    else checkHostInterface();
    openBuffer();
  }

  std::string name() const override { return kName; }
  std::string variant() const override { return device_; }
  hw::Counters counters() const override { return counters_; }
  void resetCounters() override { counters_ = hw::Counters(); }

  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override {
    counters_.runs += 1;
    // The same checks, in the same order and words, as fsim and tsim before anything moves.
    const std::vector<hw::Insn> prog = hw::decodeRunnableProgram(isa_, dram_, insnPhys, count);
    const std::string runWhat = "run of " + std::to_string(count) + " instructions on " + device_;

    // The buffer holds the session pages this run touches at the same distances from each other
    // (the lowest one at offset 0), so moving every DRAM address by one delta relocates the
    // program; its instructions follow in the next page.
    std::vector<uint64_t> readPages, writtenPages;
    pagesOfRun(prog, insnPhys, count, &readPages, &writtenPages);
    const uint64_t base = readPages.front() * kPage;  // readPages includes the instructions
    const uint64_t insnOffset = (readPages.back() + 1) * kPage - base;
    const uint64_t insnEnd = insnOffset + uint64_t(count) * 16;
    if (insnEnd > buffer_.size())
      throw Error(runWhat, "the run needs " + std::to_string(insnEnd) + " bytes of the DMA buffer " + settings_.buffer +
                               " (its data spans [" + hex(base) + ", " + hex(base + insnOffset) + "), then " +
                               std::to_string(uint64_t(count) * 16) + " bytes of instructions) but the buffer holds " +
                               std::to_string(buffer_.size()) + " bytes; give u-dma-buf a larger size (docs/deploy.md)");
    // One run at a time per device: other threads' targets and other processes share the
    // registers and the buffer.
    const DeviceLock lock(registers_, settings_.timeout, runWhat);
    for (uint64_t page : readPages) std::memcpy(buffer_.data() + (page * kPage - base), dram_.raw(page * kPage), kPage);
    writeRelocated(prog, insnOffset, static_cast<int64_t>(bufferPhys_) - static_cast<int64_t>(base));
    sync("sync_for_device", 0, roundUpToPage(insnEnd), kSyncToDevice);

    if (hls()) {
      const hw::HlsRunOutcome outcome = runHls(prog, bufferPhys_ + insnOffset, count, waitCycles, runWhat);
      copyBack(writtenPages, base);
      hw::explainHlsOutcome(cfg_, prog, outcome, waitCycles);
      hw::Counters c = hw::countProgram(prog, cfg_);
      c.runs = 0;  // counted when the run began
      counters_ += c;
      return;
    }
    const uint32_t before = reg(host::kRegCtrl);
    if (before & host::kCtrlRunning)
      throw Error(runWhat, "the accelerator is still running an earlier run (CTRL reads " + hex(before) +
                               "); an earlier run timed out: reload the bitstream (docs/deploy.md)");
    setReg(host::kRegInsnAddr, static_cast<uint32_t>(bufferPhys_ + insnOffset));
    setReg(host::kRegInsnCount, count);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);  // the buffer's bytes before the start
    setReg(host::kRegCtrl, host::kCtrlStart);

    const uint32_t ctrl = waitForDone(prog, runWhat, waitCycles);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (ctrl & host::kCtrlFault) throwFault(prog);
    settle();
    checkBalanced(prog);

    copyBack(writtenPages, base);
    accountRun(prog, count);
  }

 private:
  bool hls() const { return settings_.bitstream == Settings::Bitstream::kHls; }

  // The pages the run's STOREs wrote, from the buffer into the session's DRAM after the CPU's
  // caches dropped their stale lines.
  void copyBack(const std::vector<uint64_t>& writtenPages, uint64_t base) {
    if (writtenPages.empty()) return;
    const uint64_t first = writtenPages.front() * kPage - base, end = (writtenPages.back() + 1) * kPage - base;
    sync("sync_for_cpu", first, end - first, kSyncFromDevice);
    for (uint64_t page : writtenPages)
      std::memcpy(dram_.raw(page * kPage), buffer_.data() + (page * kPage - base), kPage);
  }

  // --- The HLS bitstream: four Vitis ap_ctrl_hs blocks (hls/design/tessera_hls.cpp's fetch,
  // load, compute, store), each at its own window of hls_map::kIpStride bytes.

  static uint32_t ipBase(int ip) { return static_cast<uint32_t>(ip) * hls_map::kIpStride; }
  uint32_t ipReg(int ip, uint32_t offset) const { return reg(ipBase(ip) + offset); }
  void setIpReg(int ip, uint32_t offset, uint32_t value) { setReg(ipBase(ip) + offset, value); }
  void setIpReg64(int ip, uint32_t offset, uint64_t value) {
    setIpReg(ip, offset, static_cast<uint32_t>(value));
    setIpReg(ip, offset + 4, static_cast<uint32_t>(value >> 32));
  }
  std::string ipRegName(int ip, uint32_t offset, const char* name) const {
    return std::string(hls_map::kIpNames[ip]) + "'s " + name + " (offset " + hex(offset) + " of its window at " +
           hex(ipBase(ip)) + ")";
  }

  // Every stage block must read ap_idle and no ap_start before a run: anything else is another
  // bitstream's registers or a block still busy with a run that timed out.
  void checkHlsBlocks() const {
    for (int ip = 0; ip < hls_map::kNumIps; ++ip) {
      const uint32_t ctrl = ipReg(ip, hls_map::kApCtrl);
      if (!(ctrl & hls_map::kApIdle) || (ctrl & hls_map::kApStart))
        throw Error(device_, ipRegName(ip, hls_map::kApCtrl, "AP_CTRL") + " reads " + hex(ctrl) +
                                 ", not an idle Vitis HLS block (ap_idle, 0x4, clear or ap_start set): not the HLS "
                                 "bitstream's register window (bitstream=hls; is it the RTL bitstream?), or a block "
                                 "still busy after a run timed out: reload the bitstream (docs/deploy.md)");
    }
  }

  using StateWords = std::vector<uint32_t>;
  static StateWords stateWords(uint32_t bits) { return StateWords((bits + 31) / 32, 0); }
  static uint64_t field(const StateWords& w, uint32_t lsb, uint32_t bits) {
    uint64_t v = 0;
    for (uint32_t b = 0; b < bits; ++b)
      if ((w[(lsb + b) / 32] >> ((lsb + b) % 32)) & 1) v |= uint64_t(1) << b;
    return v;
  }

  // One call of a stage function on its block: its state in, ap_start, ap_done, its state out.
  // Returns the stage_status_e the call returned.
  struct StageRegs {
    int ip;
    uint32_t stIn, stOut, stValid, apReturn, stBits;
  };
  int callStage(const StageRegs& regs, StateWords& state, std::chrono::steady_clock::time_point deadline,
                const std::string& runWhat) {
    const int ip = regs.ip;
    const uint32_t stIn = regs.stIn, stOut = regs.stOut, stValid = regs.stValid;
    for (size_t i = 0; i < state.size(); ++i) setIpReg(ip, stIn + 4 * static_cast<uint32_t>(i), state[i]);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);  // the arguments before the start
    setIpReg(ip, hls_map::kApCtrl, hls_map::kApStart);
    auto pause = std::chrono::microseconds(1);
    for (;;) {
      // ap_done clears when read: this read is the one that sees it.
      const uint32_t ctrl = ipReg(ip, hls_map::kApCtrl);
      if (ctrl & hls_map::kApDone) break;
      if (std::chrono::steady_clock::now() > deadline)
        throw Error(runWhat, "the HLS bitstream's block " + std::string(hls_map::kIpNames[ip]) +
                                 " never raised ap_done: " + ipRegName(ip, hls_map::kApCtrl, "AP_CTRL") + " reads " +
                                 hex(ctrl) + " after " + seconds() + " (target option timeout=); reload the "
                                 "bitstream before the next run (docs/deploy.md)");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(200));
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    // Without ap_vld the call left its state as it read it.
    if (ipReg(ip, stValid) & 1)
      for (size_t i = 0; i < state.size(); ++i) state[i] = ipReg(ip, stOut + 4 * static_cast<uint32_t>(i));
    return static_cast<int>(ipReg(ip, regs.apReturn));
  }

  // The design's stages return whenever they would block and keep their progress in `st`, which
  // Vitis splits into st_i (read by a call) and st_o (left by it): so the host schedules them, as
  // tessera_hls_top does in C simulation, handing each call's st_o to its next call's st_i. A
  // round calls fetch, load, store, compute; FINISH is enabled once a round moves nothing.
  static constexpr StageRegs kFetchRegs{hls_map::kFetch, hls_map::fetch::kStI, hls_map::fetch::kStO,
                                        hls_map::fetch::kStOValid, hls_map::fetch::kApReturn, hls_map::fetch::kStIBits};
  static constexpr StageRegs kLoadRegs{hls_map::kLoad, hls_map::load::kStI, hls_map::load::kStO,
                                       hls_map::load::kStOValid, hls_map::load::kApReturn, hls_map::load::kStIBits};
  static constexpr StageRegs kComputeRegs{hls_map::kCompute, hls_map::compute::kStI, hls_map::compute::kStO,
                                          hls_map::compute::kStOValid, hls_map::compute::kApReturn,
                                          hls_map::compute::kStIBits};
  static constexpr StageRegs kStoreRegs{hls_map::kStore, hls_map::store::kStI, hls_map::store::kStO,
                                        hls_map::store::kStOValid, hls_map::store::kApReturn, hls_map::store::kStIBits};

  // The stream FIFOs outlive a run: a run that faulted or deadlocked (here or in a process that
  // died) leaves instructions and tokens in them, which the next run would execute. One drain
  // call of each reader empties them all (fetch only writes).
  void drainQueues(std::chrono::steady_clock::time_point deadline, const std::string& runWhat) {
    namespace m = hls_map;
    const std::pair<const StageRegs*, uint32_t> readers[] = {
        {&kLoadRegs, m::load::kDrain}, {&kComputeRegs, m::compute::kDrain}, {&kStoreRegs, m::store::kDrain}};
    for (const auto& [regs, drain] : readers) {
      StateWords none = stateWords(regs->stBits);
      setIpReg(regs->ip, drain, 1);
      callStage(*regs, none, deadline, runWhat);
      setIpReg(regs->ip, drain, 0);
    }
  }

  hw::HlsRunOutcome runHls(const std::vector<hw::Insn>& prog, uint64_t insnAddr, uint32_t count, uint32_t waitCycles,
                           const std::string& runWhat) {
    namespace m = hls_map;
    for (int ip = 0; ip < m::kNumIps; ++ip) {
      const uint32_t ctrl = ipReg(ip, m::kApCtrl);
      if (!(ctrl & m::kApIdle) || (ctrl & m::kApStart))
        throw Error(runWhat, "the HLS bitstream's block " + std::string(m::kIpNames[ip]) + " is still busy (" +
                                 ipRegName(ip, m::kApCtrl, "AP_CTRL") + " reads " + hex(ctrl) +
                                 "); an earlier run timed out: reload the bitstream (docs/deploy.md)");
    }
    const auto deadline = std::chrono::steady_clock::now() + settings_.timeout;
    drainQueues(deadline, runWhat);
    setIpReg(m::kFetch, m::fetch::kInsnCount, count);
    setIpReg64(m::kFetch, m::fetch::kInsnAddr, insnAddr);
    // Instructions carry physical addresses (relocated into the buffer): every m_axi base is 0.
    setIpReg(m::kFetch, m::fetch::kDram, 0);
    setIpReg(m::kLoad, m::load::kDram, 0);
    setIpReg(m::kCompute, m::compute::kDram, 0);
    setIpReg(m::kStore, m::store::kDram, 0);
    setIpReg(m::kCompute, m::compute::kFinishEnable, 0);
    setIpReg64(m::kCompute, m::compute::kWorkBudget, waitCycles);  // the hls target's micro-op budget

    StateWords fetchSt = stateWords(kFetchRegs.stBits), loadSt = stateWords(kLoadRegs.stBits),
               computeSt = stateWords(kComputeRegs.stBits), storeSt = stateWords(kStoreRegs.stBits);
    namespace ss = m::stage_state;
    namespace cs = m::compute_state;
    auto retired = [](const StateWords& w, uint32_t base) { return field(w, base + ss::kRetiredLsb, ss::kRetiredBits); };
    constexpr int kDone = 5, kFault = 6, kAtFinish = 4;  // stage_status_e
    bool finishEnabled = false;
    hw::HlsRunOutcome r;
    for (;;) {
      const uint64_t before = retired(fetchSt, 0) + retired(loadSt, 0) + retired(storeSt, 0) +
                              retired(computeSt, cs::kSLsb);
      callStage(kFetchRegs, fetchSt, deadline, runWhat);
      callStage(kLoadRegs, loadSt, deadline, runWhat);
      callStage(kStoreRegs, storeSt, deadline, runWhat);
      const int c = callStage(kComputeRegs, computeSt, deadline, runWhat);
      if (c == kDone) { r.top = 0; break; }
      if (c == kFault) { r.top = 2; break; }
      const uint64_t after = retired(fetchSt, 0) + retired(loadSt, 0) + retired(storeSt, 0) +
                             retired(computeSt, cs::kSLsb);
      if (after != before) continue;
      if (c == kAtFinish && !finishEnabled) {
        finishEnabled = true;
        setIpReg(m::kCompute, m::compute::kFinishEnable, 1);
        continue;
      }
      r.top = -1;  // decided below, once the queues are known
      break;
    }
    // What the host cannot read (the stream FIFOs' fill) follows from the program: each stage's
    // queue holds what fetch dispatched to it and the stage has not taken; each token queue what
    // the retired instructions pushed and popped.
    const StateWords* st[3] = {&loadSt, &computeSt, &storeSt};
    r.fetched = static_cast<uint32_t>(retired(fetchSt, 0));
    for (int s = 0; s < 3; ++s) {
      r.retired[s] = static_cast<uint32_t>(retired(*st[s], 0));
      r.holding[s] = field(*st[s], ss::kHoldingLsb, ss::kHoldingBits) != 0;
      r.waitQueue[s] = static_cast<uint32_t>(field(*st[s], ss::kWaitQueueLsb, ss::kWaitQueueBits));
    }
    r.waitPush[0] = r.waitQueue[0] == uint32_t(hw::TokenQueue::kLoadToCompute);
    r.waitPush[1] = r.waitQueue[1] == uint32_t(hw::TokenQueue::kComputeToLoad) ||
                    r.waitQueue[1] == uint32_t(hw::TokenQueue::kComputeToStore);
    r.waitPush[2] = r.waitQueue[2] == uint32_t(hw::TokenQueue::kStoreToCompute);
    uint32_t dispatched[3] = {}, seen[3] = {};
    int64_t tokens[4] = {};
    for (uint32_t i = 0; i < std::min<uint32_t>(r.fetched, count); ++i) {
      const hw::Insn& in = prog[i];
      const int s = int(in.stage());
      dispatched[s] += 1;
      if (seen[s]++ >= r.retired[s]) continue;  // not executed: its tokens did not move
      using Q = hw::TokenQueue;
      auto move = [&](bool flag, Q q, int delta) { if (flag) tokens[int(q)] += delta; };
      if (s == 0) { move(in.popNext, Q::kComputeToLoad, -1); move(in.pushNext, Q::kLoadToCompute, 1); }
      if (s == 1) {
        move(in.popPrev, Q::kLoadToCompute, -1); move(in.popNext, Q::kStoreToCompute, -1);
        move(in.pushPrev, Q::kComputeToLoad, 1); move(in.pushNext, Q::kComputeToStore, 1);
      }
      if (s == 2) { move(in.popPrev, Q::kComputeToStore, -1); move(in.pushPrev, Q::kStoreToCompute, 1); }
    }
    for (int s = 0; s < 3; ++s)
      r.queued[s] = dispatched[s] - std::min(dispatched[s], r.retired[s] + (r.holding[s] ? 1u : 0u));
    for (int q = 0; q < 4; ++q) r.tokens[q] = static_cast<uint32_t>(std::max<int64_t>(0, tokens[q]));
    if (r.top == -1) {
      const bool drained = r.fetched == count && !r.queued[0] && !r.queued[1] && !r.queued[2] && !r.holding[0] &&
                           !r.holding[1] && !r.holding[2];
      r.top = drained ? 3 : 1;
    }
    r.fault = static_cast<int>(field(computeSt, cs::kFaultLsb, cs::kFaultBits));
    r.faultField = static_cast<int>(field(computeSt, cs::kFaultFieldLsb, cs::kFaultFieldBits));
    r.faultUop = static_cast<uint32_t>(field(computeSt, cs::kFaultUopLsb, cs::kFaultUopBits));
    r.faultValue = field(computeSt, cs::kFaultValueLsb, cs::kFaultValueBits);
    return r;
  }

  static uint64_t roundUpToPage(uint64_t v) { return (v + kPage - 1) / kPage * kPage; }

  uint32_t reg(uint32_t offset) const {
    return *reinterpret_cast<const volatile uint32_t*>(registers_.data() + offset);
  }
  void setReg(uint32_t offset, uint32_t value) {
    *reinterpret_cast<volatile uint32_t*>(registers_.data() + offset) = value;
  }
  uint64_t reg64(uint32_t offset) const { return reg(offset) | uint64_t(reg(offset + 4)) << 32; }
  uint64_t counter(host::Counter c) const { return reg64(host::kCountersBase + 8 * static_cast<uint32_t>(c)); }

  void openRegisters() {
    const uint64_t window = hls() ? hlsRegisterWindowBytes() : registerWindowBytes();
    const std::string windowName = hls() ? "the HLS bitstream's register window (its four stage IPs, bitstream=hls)"
                                         : "the accelerator's register window";
    switch (settings_.registers) {
      case Settings::Registers::kUio: {
        const auto [sysfs, node] = findUio(settings_.uio);
        const std::string sizeFile = sysfs + "/maps/map0/size";
        const uint64_t mapBytes = parseAddress(readText(sizeFile, "the UIO register map's size"), sizeFile);
        if (mapBytes < window)
          throw Error(node, "its register map 0 is " + std::to_string(mapBytes) + " bytes (" + sizeFile +
                                "), smaller than " + windowName + " of " + std::to_string(window) +
                                " bytes: the device tree node's reg size is wrong (docs/deploy.md)");
        registers_.open(node, true, "the UIO device");
        registers_.map(window, 0, "the UIO register map 0");
        device_ = node;
        break;
      }
      case Settings::Registers::kDevMem:
        registers_.open("/dev/mem", true, "physical memory");
        registers_.map(window, settings_.devMemAddress, "the register window");
        device_ = "/dev/mem@" + hex(settings_.devMemAddress);
        break;
      case Settings::Registers::kFile: {
        registers_.open(settings_.regsFile, false, "the fake device's register file");
        const int64_t bytes = registers_.regularFileSize();
        if (bytes < 0) throw Error(settings_.regsFile, "regs-file must be a regular file (a fake device's registers)");
        if (static_cast<uint64_t>(bytes) != window)
          throw Error(settings_.regsFile, "the register file holds " + std::to_string(bytes) +
                                              " bytes; " + windowName + " is " + std::to_string(window) +
                                              " bytes (is it a register file made by tessera-fake-zynq?)");
        registers_.map(window, 0, "the fake device's register file");
        device_ = "fake device " + settings_.regsFile;
        break;
      }
    }
  }

  // The RTL's CTRL never reads bits above fault, nor fault without a cause. A Vitis HLS block's
  // ap_ctrl (the HLS bitstream's stages) reads ap_idle, bit 2, when idle: refused here rather than
  // driven into a timeout.
  void checkHostInterface() const {
    const uint32_t ctrl = reg(host::kRegCtrl);
    const uint32_t known = host::kCtrlRunning | host::kCtrlDone | host::kCtrlFault;
    const bool faultWithoutCause = (ctrl & host::kCtrlFault) && reg(host::kRegFaultCause) == host::kFaultNone;
    if ((ctrl & ~known) || faultWithoutCause || ((ctrl & host::kCtrlDone) && (ctrl & host::kCtrlFault)))
      throw Error(device_, "CTRL reads " + hex(ctrl) + " with FAULT_CAUSE " + hex(reg(host::kRegFaultCause)) +
                               ", which the accelerator's host interface never shows (docs/rtl.md, \"Host registers\"): "
                               "not the RTL bitstream's register window (an HLS bitstream's stage reads ap_idle = 0x4 "
                               "there: give the target option bitstream=hls for it, docs/deploy.md)");
  }

  void openBuffer() {
    std::string sysfs = settings_.bufferSysfs;
    if (sysfs.empty()) {
      const size_t slash = settings_.buffer.rfind('/');
      const std::string node = settings_.buffer.substr(slash == std::string::npos ? 0 : slash + 1);
      for (const char* cls : {"/sys/class/u-dma-buf/", "/sys/class/udmabuf/"})
        if (isDirectory(cls + node)) sysfs = cls + node;
      if (sysfs.empty())
        throw Error(settings_.buffer, "no u-dma-buf attributes for it in /sys/class/u-dma-buf/" + node +
                                          " or /sys/class/udmabuf/" + node +
                                          "; is the u-dma-buf module loaded? (docs/deploy.md), or name the attribute "
                                          "directory with buffer-sysfs=DIR");
    }
    sysfs_ = sysfs;
    bufferPhys_ = parseAddress(readText(sysfs + "/phys_addr", "the buffer's physical address"), sysfs + "/phys_addr");
    const uint64_t bytes = parseAddress(readText(sysfs + "/size", "the buffer's size"), sysfs + "/size");
    if (bufferPhys_ % kPage || bufferPhys_ == 0)
      throw Error(sysfs + "/phys_addr", hex(bufferPhys_) + " is not a page-aligned, non-zero physical address");
    if (bytes < 2 * kPage)
      throw Error(sysfs + "/size", std::to_string(bytes) + " bytes is too small a DMA buffer (at least " +
                                       std::to_string(2 * kPage) + ")");
    if (bufferPhys_ + bytes > kAxiLimit)
      throw Error(settings_.buffer, "the buffer [" + hex(bufferPhys_) + ", " + hex(bufferPhys_ + bytes) +
                                        ") reaches past 4 GiB; the accelerator's AXI addresses are 32-bit");
    // Instructions address DRAM in elements: the buffer's base must be a whole number of each.
    for (hw::MemId id : {hw::MemId::kUop, hw::MemId::kWgt, hw::MemId::kInp, hw::MemId::kAcc, hw::MemId::kOut,
                         hw::MemId::kAcc8})
      if (bufferPhys_ % static_cast<uint64_t>(cfg_.dramElemBytes(id)))
        throw Error(sysfs + "/phys_addr", hex(bufferPhys_) + " is not a multiple of the " +
                                              hw::memIdName(static_cast<uint32_t>(id)) + " element size (" +
                                              std::to_string(cfg_.dramElemBytes(id)) + " bytes)");
    buffer_.open(settings_.buffer, false, "the DMA buffer");
    const int64_t fileBytes = buffer_.regularFileSize();
    if (fileBytes >= 0 && static_cast<uint64_t>(fileBytes) < bytes)
      throw Error(settings_.buffer, "holds " + std::to_string(fileBytes) + " bytes but " + sysfs + "/size says " +
                                        std::to_string(bytes));
    buffer_.map(bytes, 0, "the DMA buffer");
  }

  // u-dma-buf's manual cache maintenance: the range, the direction, then the trigger.
  void sync(const char* trigger, uint64_t offset, uint64_t bytes, int direction) {
    bytes = std::min(bytes, buffer_.size() - offset);
    writeText(sysfs_ + "/sync_offset", std::to_string(offset), "the sync offset");
    writeText(sysfs_ + "/sync_size", std::to_string(bytes), "the sync size");
    writeText(sysfs_ + "/sync_direction", std::to_string(direction), "the sync direction");
    writeText(sysfs_ + "/" + trigger, "1", trigger);
  }

  // The session pages a run reads (its instructions, LOAD sources) and writes (STORE targets),
  // each sorted. Written pages are read too: a STORE that writes part of a page must leave the
  // rest as the session has it.
  void pagesOfRun(const std::vector<hw::Insn>& prog, uint64_t insnPhys, uint32_t count, std::vector<uint64_t>* reads,
                  std::vector<uint64_t>* writes) const {
    std::vector<hw::DramRange> readRanges{{insnPhys, insnPhys + uint64_t(count) * 16}}, writeRanges;
    for (const hw::Insn& in : prog) {
      const hw::DramRange r = hw::dramRange(in, cfg_);
      if (r.end > r.first) (in.opcode == hw::Opcode::kStore ? writeRanges : readRanges).push_back(r);
    }
    readRanges.insert(readRanges.end(), writeRanges.begin(), writeRanges.end());
    auto pagesOf = [](std::vector<hw::DramRange> ranges, std::vector<uint64_t>* pages) {
      std::sort(ranges.begin(), ranges.end(), [](const hw::DramRange& a, const hw::DramRange& b) { return a.first < b.first; });
      uint64_t next = 0;
      for (const auto& r : ranges)
        for (uint64_t p = std::max(r.first / kPage, next); p * kPage < r.end; ++p) {
          pages->push_back(p);
          next = p + 1;
        }
    };
    pagesOf(readRanges, reads);
    pagesOf(writeRanges, writes);
  }

  // The program with every LOAD/STORE's dram_base moved by `delta` bytes, in the instructions'
  // own units (elements of their memory type).
  void writeRelocated(const std::vector<hw::Insn>& prog, uint64_t offset, int64_t delta) {
    for (size_t i = 0; i < prog.size(); ++i) {
      hw::Insn moved = prog[i];
      if (moved.isMem() && !moved.isNop() && moved.ySize != 0) {
        const int64_t eb = cfg_.dramElemBytes(static_cast<hw::MemId>(moved.memType));
        if (delta % eb)
          throw Error(hw::insnName(i, prog[i]) + ", field dram_base",
                      "cannot move it by " + std::to_string(delta) + " bytes, not a whole number of " +
                          std::to_string(eb) + "-byte elements");
        // In range: the moved bytes lie inside the buffer, below 4 GiB.
        moved.dramBase = static_cast<uint32_t>(static_cast<int64_t>(moved.dramBase) + delta / eb);
      }
      hw::Isa::rawToBytes(isa_.encode(moved, hw::insnName(i, prog[i])), buffer_.data() + offset + 16 * i);
    }
  }

  // Polls CTRL until done or fault; a run past the timeout, or past wait_cycles by the CYCLES
  // register, is reported with every module's status.
  uint32_t waitForDone(const std::vector<hw::Insn>& prog, const std::string& runWhat, uint32_t waitCycles) {
    const auto deadline = std::chrono::steady_clock::now() + settings_.timeout;
    auto pause = std::chrono::microseconds(5);
    for (;;) {
      const uint32_t ctrl = reg(host::kRegCtrl);
      if (ctrl & (host::kCtrlDone | host::kCtrlFault)) return ctrl;
      if (waitCycles && reg(host::kRegCycles) >= waitCycles)
        throw Error(runWhat, "the run exceeds wait_cycles=" + std::to_string(waitCycles) + ": still running after " +
                                 std::to_string(reg(host::kRegCycles)) + " cycles; " + describe(prog));
      if (std::chrono::steady_clock::now() > deadline)
        throw Error(runWhat, "no done or fault after " + seconds() + " (target option timeout=); CTRL reads " +
                                 hex(ctrl) + ", CYCLES " + std::to_string(reg(host::kRegCycles)) + "; " +
                                 describe(prog));
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }

  std::string seconds() const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", settings_.timeout.count() / 1000.0);
    return buf;
  }

  bool settled() const {
    const uint32_t fetch = stateOf(reg(host::kStatusBase + 4 * host::kModuleFetch));
    const uint32_t load = stateOf(reg(host::kStatusBase + 4 * host::kModuleLoad));
    const uint32_t compute = stateOf(reg(host::kStatusBase + 4 * host::kModuleCompute));
    const uint32_t store = stateOf(reg(host::kStatusBase + 4 * host::kModuleStore));
    bool queuesEmpty = true;
    for (int q = 0; q < host::kNumInsnQueues; ++q) queuesEmpty &= reg(host::kQueueBase + 4 * q) == 0;
    return (fetch == host::kStateIdle || fetch == host::kStateAllDispatched) && load == host::kStateIdle &&
           (compute == host::kStateIdle || compute == host::kStateHaltedAtFinish) && store == host::kStateIdle &&
           queuesEmpty;
  }

  // After done, modules FINISH did not wait for may still be finishing their work: waits for
  // every module to be idle, within the timeout (checkBalanced() then says what is left).
  void settle() {
    const auto deadline = std::chrono::steady_clock::now() + settings_.timeout;
    while (!settled() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }

  static std::string nameOf(const std::vector<hw::Insn>& prog, uint32_t index) {
    return index < prog.size() ? hw::insnName(index, prog[index])
                               : "instruction " + std::to_string(index) + " (past the program's end)";
  }

  std::string blockedBy(uint32_t status) const {
    const uint32_t q = argOf(status);
    const bool known = q < static_cast<uint32_t>(host::kNumTokenQueues);
    const uint32_t tokens = known ? reg(host::kTokensBase + 4 * q) : 0;
    const std::string queue = known ? host::kTokenQueueNames[q] : "#" + std::to_string(q) + " (no such queue)";
    if (stateOf(status) == host::kStateWaitPop)
      return known && tokens == 0 ? hw::run_error::waitsForToken(static_cast<hw::TokenQueue>(q))
                                  : "waits for a token on queue " + queue + ", which holds " + std::to_string(tokens) +
                                        " token(s)";
    if (stateOf(status) == host::kStateWaitPush)
      return known && tokens == static_cast<uint32_t>(cfg_.depQueueDepth)
                 ? hw::run_error::waitsForSpace(static_cast<hw::TokenQueue>(q), cfg_.depQueueDepth)
                 : "waits for space on queue " + queue + ", which holds " + std::to_string(tokens) + " of " +
                       std::to_string(cfg_.depQueueDepth) + " tokens";
    return "";
  }

  std::string describeModule(int m, const std::vector<hw::Insn>& prog) const {
    const uint32_t status = reg(host::kStatusBase + 4 * m);
    const std::string mod = host::kModuleNames[m];
    const std::string insn = nameOf(prog, reg(host::kInsnBase + 4 * m));
    switch (stateOf(status)) {
      case host::kStateIdle: return mod + " idle";
      case host::kStateBusy:
        return m == host::kModuleFetch ? "fetch busy reading instructions (next to dispatch: " + insn + ")"
                                       : mod + " busy with " + insn;
      case host::kStateWaitPop:
      case host::kStateWaitPush:
        if (m != host::kModuleFetch) return mod + " " + insn + " " + blockedBy(status);
        break;
      case host::kStateFetchQueueFull:
        if (m == host::kModuleFetch && argOf(status) < static_cast<uint32_t>(host::kNumInsnQueues))
          return "fetch stalled at " + insn + ": the " + host::kInsnQueueNames[argOf(status)] +
                 " instruction queue is full (" + std::to_string(reg(host::kQueueBase + 4 * argOf(status))) + " of " +
                 std::to_string(cfg_.insnQueueDepth) + " entries)";
        break;
      case host::kStateHaltedAtFinish:
        if (m == host::kModuleCompute) return "compute halted at FINISH (" + insn + ")";
        break;
      case host::kStateAllDispatched:
        if (m == host::kModuleFetch) return "fetch dispatched all " + std::to_string(prog.size()) + " instructions";
        break;
      default: break;
    }
    return mod + " in state " + std::to_string(stateOf(status)) + " (status " + hex(status) +
           "), which docs/rtl.md does not define for it";
  }

  // Every module from its status registers, blocked ones first (tsim's words).
  std::string describe(const std::vector<hw::Insn>& prog) const {
    std::string blocked, rest;
    for (int m = 0; m < host::kNumModules; ++m) {
      const uint32_t st = stateOf(reg(host::kStatusBase + 4 * m));
      std::string& to = st == host::kStateWaitPop || st == host::kStateWaitPush || st == host::kStateFetchQueueFull
                            ? blocked
                            : rest;
      to += (to.empty() ? "" : "; ") + describeModule(m, prog);
    }
    return blocked + (blocked.empty() || rest.empty() ? "" : "; ") + rest;
  }

  [[noreturn]] void throwFault(const std::vector<hw::Insn>& prog) const {
    const uint32_t cause = reg(host::kRegFaultCause);
    const uint32_t index = reg(host::kRegFaultInsn);
    const uint32_t info = reg(host::kRegFaultInfo);
    const std::string insn = nameOf(prog, index);
    const std::string when =
        " (the accelerator faulted after " + std::to_string(reg(host::kRegCycles)) + " cycles)";
    switch (cause) {
      case host::kFaultSramIndex: {
        const uint32_t field = info & 3, uop = info >> 2;
        if (field > 2 || index >= prog.size())
          throw Error(insn + ", micro-op " + std::to_string(uop),
                      "SRAM index out of range in field code " + std::to_string(field) +
                          ", which docs/rtl.md does not define" + when);
        throw hw::run_error::sramIndexPastDepth(cfg_, index, prog[index], uop,
                                                static_cast<hw::run_error::Operand>(field),
                                                hw::run_error::kUnknownIndex, when);
      }
      case host::kFaultDramReadError:
      case host::kFaultDramWriteError: {
        const bool read = cause == host::kFaultDramReadError;
        const std::string reader = read && (info & 3) < 3 ? std::string(" by ") + host::kModuleNames[info & 3] : "";
        // FAULT_INSN is the reading module's instruction index; for fetch, the one it was reading.
        const std::string where = read && (info & 3) == host::kModuleFetch ? "instruction fetch of " + insn : insn;
        throw Error(where, std::string("DRAM ") + (read ? "read" : "write") + " error response" + reader + when +
                              ": the interconnect refused an address inside the DMA buffer [" + hex(bufferPhys_) +
                              ", " + hex(bufferPhys_ + buffer_.size()) + ")");
      }
      default:
        throw Error(insn, "the accelerator reports fault cause " + std::to_string(cause) +
                              ", which docs/rtl.md does not define" + when);
    }
  }

  // fsim's FINISH rule: every instruction executed and no token left on any queue.
  void checkBalanced(const std::vector<hw::Insn>& prog) const {
    const uint32_t computeStatus = reg(host::kStatusBase + 4 * host::kModuleCompute);
    uint32_t finish = reg(host::kInsnBase + 4 * host::kModuleCompute);
    if (stateOf(computeStatus) != host::kStateHaltedAtFinish)
      finish = static_cast<uint32_t>(std::find_if(prog.begin(), prog.end(), [](const hw::Insn& i) {
                                       return i.opcode == hw::Opcode::kFinish;
                                     }) - prog.begin());
    hw::run_error::UnbalancedFinish left;
    for (int stage = 0; stage < host::kNumInsnQueues; ++stage) {
      const int m = stage + 1;
      const uint32_t status = reg(host::kStatusBase + 4 * m);
      const uint32_t st = stateOf(status);
      const uint32_t queued = reg(host::kQueueBase + 4 * stage);
      const bool done = (st == host::kStateIdle || (m == host::kModuleCompute && st == host::kStateHaltedAtFinish)) &&
                        queued == 0;
      if (done) continue;
      const std::string why = blockedBy(status);
      if (m == host::kModuleCompute && st == host::kStateHaltedAtFinish)
        left.computeAfterFinish(queued);
      else
        left.neverExecuted(static_cast<hw::Stage>(stage), nameOf(prog, reg(host::kInsnBase + 4 * m)),
                           why.empty() ? describeModule(m, prog) : why);
    }
    const uint32_t fetched = reg(host::kInsnBase + 4 * host::kModuleFetch);
    if (fetched < prog.size()) left.neverFetched(fetched, prog[fetched], prog.size());
    for (int q = 0; q < host::kNumTokenQueues; ++q)
      if (const uint32_t tokens = reg(host::kTokensBase + 4 * q))
        left.tokensLeft(static_cast<hw::TokenQueue>(q), tokens);
    if (!left.empty()) throw left.error(finish);
  }

  void accountRun(const std::vector<hw::Insn>& prog, uint32_t count) {
    hw::Counters c = hw::countProgram(prog, cfg_);
    c.cycles = counter(host::kCounterCycles);
    for (int m = 0; m < host::kNumModules; ++m) {
      c.busyCycles[m] = counter(static_cast<host::Counter>(host::kCounterFetchBusy + 2 * m));
      c.stallCycles[m] = counter(static_cast<host::Counter>(host::kCounterFetchStall + 2 * m));
    }
    c.dramReadBeats = counter(host::kCounterDramReadBeats);
    c.dramWriteBeats = counter(host::kCounterDramWriteBeats);
    // The device's own counts must agree with the program's: a disagreement means registers read
    // from the wrong place or a device that ran something else.
    auto disagree = [&](const char* what, uint64_t device, uint64_t program) {
      if (device != program)
        throw Error("counters after a run of " + std::to_string(count) + " instructions",
                    device_ + " counted " + std::to_string(device) + " " + what + " but the program has " +
                        std::to_string(program));
    };
    disagree("GEMM micro-ops", counter(host::kCounterGemmUops), c.gemmUops + c.gemmResetUops);
    disagree("ALU micro-ops", counter(host::kCounterAluUops), c.aluUops);
    disagree("retired instructions", counter(host::kCounterRetired), count);
    c.runs = 0;  // counted when the run began
    counters_ += c;
  }

  hw::Config cfg_;
  hw::Isa isa_;
  hw::Dram& dram_;
  Settings settings_;
  MappedFile registers_, buffer_;
  std::string device_, sysfs_;
  uint64_t bufferPhys_ = 0;
  hw::Counters counters_;
};

}  // namespace

TargetInfo zynqTargetInfo() {
  TargetInfo info;
  info.name = kName;
  info.description = "the RTL accelerator on a Zynq board: registers through UIO or /dev/mem, DRAM staged in a "
                     "u-dma-buf buffer (docs/deploy.md)";
  info.create = [](const hw::Config& cfg, hw::Dram& dram, const TargetOptions& options) {
    return std::unique_ptr<Target>(new ZynqTarget(cfg, dram, options));
  };
  info.options = {
      {kUioKey, "/dev/uioN, or the name of a UIO device in /sys/class/uio/*/name (default: tessera)"},
      {kDevMemKey, "0xADDRESS: map the register window from /dev/mem at this physical address instead of UIO"},
      {kRegsFileKey, "FILE standing in for the register window: a fake device (tessera-fake-zynq)"},
      {kBufferKey, "the u-dma-buf device (default /dev/udmabuf0), or a fake device's buffer file"},
      {kBufferSysfsKey, "DIR of the buffer's phys_addr, size and sync_* attributes (default "
                        "/sys/class/u-dma-buf/NAME, else /sys/class/udmabuf/NAME)"},
      {kTimeoutKey, "seconds a run may take before it is reported as hung, with every module's status (default 10)"},
      {kConfigKey, "the config the bitstream was built for (name or JSON file); sessions of another config are refused"},
      {kBitstreamKey, "rtl (default): the RTL bitstream's registers; hls: the HLS bitstream's four stage IPs "
                      "(fetch, load, compute, store, each a Vitis ap_ctrl_hs block)"}};
  info.optionsProblem = [](const hw::Config& cfg, const TargetOptions& options) {
    const auto it = options.find(kConfigKey);
    return it == options.end() ? std::string() : configMismatch(cfg, it->second);
  };
  return info;
}

}  // namespace tessera::runtime::zynq
