// tessera-fake-zynq: a fake Zynq board for the zynq target: files standing in for the UIO registers, the u-dma-buf buffer and its sysfs attributes, served by tsim's RTL or by the HLS design's stage functions.
//
// With --bitstream hls the register file holds the HLS bitstream's four stage IPs (hls_map's
// windows and offsets) and each ap_start calls that stage function of hls/design, as the
// synthesized block would; the design's queues and SRAMs persist as the board's FIFOs and BRAMs.
//
// The register file mirrors the RTL's registers as tsim clocks them; the buffer file plays the
// CPU's view of the DMA buffer and this process's DRAM the device's: bytes cross from one to the
// other only where the driver asked for cache maintenance (sync_for_device before a run), and a
// run's STOREs come back into the buffer as a DMA write would. Every protocol slip of the driver
// (a run started without sync_for_device, results not synced for the CPU) is logged as a violation
// and makes the exit status 3.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fake_zynq_hls.h"
#include "tessera/gen/hls_register_map.h"
#include "tessera/gen/host_interface.h"
#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "tessera/hw/program.h"
#include "tessera/runtime/zynq.h"
#include "tessera/tsim/simulator.h"
#include "tessera/support/format.h"

namespace {

using tessera::Error;
using tessera::hex;
namespace hw = tessera::hw;
namespace host = tessera::host;
namespace zynq = tessera::runtime::zynq;

std::atomic<bool> gStop{false};
void onSignal(int) { gStop = true; }

const char* kUsage =
    "usage: tessera-fake-zynq --dir DIR [--config C] [--phys-base ADDR] [--size BYTES] [--window BYTES]\n"
    "                         [--bitstream rtl|hls] [--ignore-start] [--quiet]\n"
    "Creates DIR/regs, DIR/buffer and DIR/sysfs/ (phys_addr, size, sync_*) and serves them with tsim until\n"
    "SIGTERM or SIGINT. The zynq target's options: regs-file=DIR/regs,buffer=DIR/buffer,buffer-sysfs=DIR/sysfs.\n"
    "  --config C        config of the simulated bitstream (default: default)\n"
    "  --phys-base ADDR  physical address of the buffer (default 0x10000000)\n"
    "  --size BYTES      bytes of the buffer (default 33554432)\n"
    "  --window BYTES    bytes of the register file (default: the register window, 4096; hls: 262144)\n"
    "  --bitstream B     rtl (default): the RTL's registers served by tsim; hls: the HLS bitstream's four\n"
    "                    stage IPs served by the HLS design's stage functions (config default only)\n"
    "  --ignore-start    never start a run (a device that does not respond)\n"
    "  --quiet           no log line per run and sync\n"
    "Exit status: 0, 1 on bad arguments or files, 2 when the simulation failed, 3 when the driver broke\n"
    "the cache-maintenance protocol (each violation is on stderr).\n";

struct Args {
  std::string dir, config = "default";
  uint64_t physBase = 0x10000000, size = 32ull << 20, window = 0;
  bool ignoreStart = false, quiet = false, hls = false;
};

Args parseArgs(int argc, char** argv) {
  Args a;
  bool windowGiven = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(arg, "needs a value");
      return argv[++i];
    };
    if (arg == "--dir") a.dir = value();
    else if (arg == "--config") a.config = value();
    else if (arg == "--phys-base") a.physBase = zynq::parseAddress(value(), "--phys-base");
    else if (arg == "--size") a.size = zynq::parseAddress(value(), "--size");
    else if (arg == "--window") {
      a.window = zynq::parseAddress(value(), "--window");
      windowGiven = true;
    } else if (arg == "--bitstream") {
      const std::string b = value();
      if (b != "rtl" && b != "hls") throw Error("--bitstream " + b, "expected rtl or hls");
      a.hls = b == "hls";
    }
    else if (arg == "--ignore-start") a.ignoreStart = true;
    else if (arg == "--quiet") a.quiet = true;
    else if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else
      throw Error(arg, "unknown argument (--help lists them)");
  }
  if (a.dir.empty()) throw Error("--dir", "required");
  if (!windowGiven) a.window = a.hls ? zynq::hlsRegisterWindowBytes() : zynq::registerWindowBytes();
  if (a.hls && a.config != tessera::fake_zynq::hlsBitstreamConfig())
    throw Error("--config " + a.config, std::string("the fake HLS bitstream is compiled for config ") +
                                            tessera::fake_zynq::hlsBitstreamConfig() + " only");
  if (a.size == 0 || a.size % hw::Dram::kPageBytes) throw Error("--size", "must be a non-zero multiple of 4096");
  if (a.window < 64 || a.window % 4) throw Error("--window", "must be a multiple of 4, at least 64");
  if (a.hls && a.window < zynq::hlsRegisterWindowBytes())
    throw Error("--window " + std::to_string(a.window), "too small for the HLS bitstream's four stage IPs (" +
                                                          std::to_string(zynq::hlsRegisterWindowBytes()) + " bytes)");
  return a;
}

void writeFile(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f || std::fputs(text.c_str(), f) < 0 || std::fclose(f) != 0) throw Error(path, "cannot write");
}

std::string readFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return "";
  char buf[128] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  return std::string(buf, n);
}

// Made whole under another name and renamed into place: a driver still mapping an earlier board's
// file keeps that file, never one truncated under it (which would be SIGBUS there).
uint8_t* mapFile(const std::string& path, uint64_t bytes) {
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw Error(tmp, std::string("cannot create: ") + std::strerror(errno));
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) throw Error(tmp, std::string("cannot size: ") + std::strerror(errno));
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw Error(tmp, std::string("cannot map: ") + std::strerror(errno));
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw Error(path, std::string("cannot rename ") + tmp + " to it");
  return static_cast<uint8_t*>(p);
}

class FakeBoard {
 public:
  explicit FakeBoard(const Args& a)
      : args_(a), cfg_(hw::Config::load(a.config)), isa_(cfg_), dram_(cfg_), sim_(cfg_, dram_) {
    if (a.physBase % hw::Dram::kPageBytes || a.physBase == 0 || a.physBase + a.size > (uint64_t(1) << 32) ||
        a.physBase + a.size > dram_.span())
      throw Error("--phys-base " + hex(a.physBase), "the buffer must be page aligned, non-zero and below 4 GiB");
    ::mkdir(a.dir.c_str(), 0700);
    sysfs_ = a.dir + "/sysfs";
    ::mkdir(sysfs_.c_str(), 0700);
    regs_ = mapFile(a.dir + "/regs", a.window);
    buffer_ = mapFile(a.dir + "/buffer", a.size);
    writeFile(sysfs_ + "/phys_addr", hex(a.physBase) + "\n");
    writeFile(sysfs_ + "/size", std::to_string(a.size) + "\n");
    for (const char* f : {"sync_offset", "sync_size", "sync_direction", "sync_for_cpu", "sync_for_device"})
      writeFile(sysfs_ + "/" + f, "0\n");
    if (a.hls) {
      hls_ = tessera::fake_zynq::makeHlsBitstream();
      for (int ip = 0; ip < tessera::hls_map::kNumIps; ++ip) setReg(ipBase(ip) + tessera::hls_map::kApCtrl, tessera::hls_map::kApIdle);
    }
  }

  // Serves until a signal; returns the exit status.
  int serve() {
    std::printf("tessera-fake-zynq: config %s, buffer %s..%s; target options regs-file=%s/regs,buffer=%s/buffer,"
                "buffer-sysfs=%s\n",
                args_.config.c_str(), hex(args_.physBase).c_str(), hex(args_.physBase + args_.size).c_str(),
                args_.dir.c_str(), args_.dir.c_str(), sysfs_.c_str());
    std::fflush(stdout);
    writeFile(args_.dir + "/ready", std::to_string(::getpid()) + "\n");
    try {
      while (!gStop) {
        if (hls_) {
          if (!args_.ignoreStart && serveHlsStarts()) continue;
          std::this_thread::sleep_for(std::chrono::microseconds(20));
          continue;
        }
        if (!(reg(host::kRegCtrl) & host::kCtrlStart) || args_.ignoreStart) {
          std::this_thread::sleep_for(std::chrono::microseconds(100));
          continue;
        }
        runOnce();
      }
    } catch (const Error& e) {
      std::fprintf(stderr, "tessera-fake-zynq: the simulation failed: %s\n", e.what());
      return 2;
    }
    if (!takeCpuSync() && wroteLastRun_)
      violation("the results of the last run (" + std::to_string(runs_) + ") were never synced for the CPU");
    std::fprintf(stderr, "tessera-fake-zynq: %llu runs, %llu syncs for the device, %llu for the CPU, %llu violations\n",
                 static_cast<unsigned long long>(runs_), static_cast<unsigned long long>(deviceSyncs_),
                 static_cast<unsigned long long>(cpuSyncs_), static_cast<unsigned long long>(violations_));
    return violations_ ? 3 : 0;
  }

 private:
  uint32_t reg(uint32_t offset) const { return *reinterpret_cast<const volatile uint32_t*>(regs_ + offset); }
  void setReg(uint32_t offset, uint32_t value) {
    if (offset + 4 <= args_.window) *reinterpret_cast<volatile uint32_t*>(regs_ + offset) = value;
  }

  void violation(const std::string& what) {
    ++violations_;
    std::fprintf(stderr, "tessera-fake-zynq: violation: %s\n", what.c_str());
  }

  void log(const std::string& line) {
    if (args_.quiet) return;
    std::printf("tessera-fake-zynq: %s\n", line.c_str());
    std::fflush(stdout);
  }

  uint64_t attribute(const char* name) {
    return zynq::parseAddress(readFile(sysfs_ + "/" + name), sysfs_ + "/" + name);
  }

  // The driver's request in the sync_* attributes, clamped to the buffer.
  struct Range {
    uint64_t offset, bytes, direction;
  };
  Range request() {
    Range r{0, 0, 0};
    try {
      r = Range{attribute("sync_offset"), attribute("sync_size"), attribute("sync_direction")};
    } catch (const Error& e) {
      violation(std::string("unreadable sync request: ") + e.what());
      return r;
    }
    if (r.offset > args_.size) r.offset = args_.size;
    r.bytes = std::min(r.bytes, args_.size - r.offset);
    return r;
  }

  // The driver writes the sync attributes only between a run's done and the next start, while
  // this process waits: so they are read at a start, never while the driver may be writing them.
  // A CPU sync's range is overwritten by the next device sync before then; that one happened is
  // what its trigger, left at 1, still says.
  bool takeCpuSync() {
    if (readFile(sysfs_ + "/sync_for_cpu").rfind("1", 0) != 0) return false;
    writeFile(sysfs_ + "/sync_for_cpu", "0\n");
    ++cpuSyncs_;
    log("sync_for_cpu");
    return true;
  }

  // Mirrors every register but CTRL from the RTL into the file.
  void mirror() {
    for (uint32_t off = host::kRegCycles; off <= host::kRegFaultInfo; off += 4) setReg(off, sim_.readRegister(off));
    for (int m = 0; m < host::kNumModules; ++m) {
      setReg(host::kStatusBase + 4 * m, sim_.readRegister(host::kStatusBase + 4 * m));
      setReg(host::kInsnBase + 4 * m, sim_.readRegister(host::kInsnBase + 4 * m));
    }
    for (int q = 0; q < host::kNumTokenQueues; ++q)
      setReg(host::kTokensBase + 4 * q, sim_.readRegister(host::kTokensBase + 4 * q));
    for (int q = 0; q < host::kNumInsnQueues; ++q)
      setReg(host::kQueueBase + 4 * q, sim_.readRegister(host::kQueueBase + 4 * q));
    for (uint32_t off = host::kCountersBase; off < host::kCountersBase + 8 * host::kNumCounters; off += 4)
      setReg(off, sim_.readRegister(off));
  }

  bool settled() {
    auto state = [&](int m) {
      return sim_.readRegister(host::kStatusBase + 4 * m) & ((1u << host::kStatusStateBits) - 1);
    };
    const uint32_t fetch = state(host::kModuleFetch), compute = state(host::kModuleCompute);
    bool empty = true;
    for (int q = 0; q < host::kNumInsnQueues; ++q) empty &= sim_.readRegister(host::kQueueBase + 4 * q) == 0;
    return (fetch == host::kStateIdle || fetch == host::kStateAllDispatched) && state(host::kModuleLoad) == host::kStateIdle &&
           (compute == host::kStateIdle || compute == host::kStateHaltedAtFinish) &&
           state(host::kModuleStore) == host::kStateIdle && empty;
  }

  static uint32_t ipBase(int ip) { return static_cast<uint32_t>(ip) * tessera::hls_map::kIpStride; }

  // Every stage IP whose ap_start is set runs one call, as its block would; true if any did.
  bool serveHlsStarts() {
    namespace m = tessera::hls_map;
    bool any = false;
    for (int ip = 0; ip < m::kNumIps; ++ip) {
      uint8_t* w = regs_ + ipBase(ip);
      if (!(reg(ipBase(ip) + m::kApCtrl) & m::kApStart)) continue;
      any = true;
      setReg(ipBase(ip) + m::kApCtrl, 0);  // started: neither idle nor done
      // fetch from a fresh state (nothing dispatched, nothing held) begins a run.
      bool fresh = true;
      for (uint32_t i = 0; i < (m::fetch::kStIBits + 31) / 32; ++i) fresh &= reg(ipBase(ip) + m::fetch::kStI + 4 * i) == 0;
      if (ip == m::kFetch && fresh) beginHlsRun();
      const uint32_t storedBefore = ip == m::kStore ? storeRetired(w, m::store::kStI) : 0;
      const int rc = hls_->call(ip, w, dram_.raw(0));
      if (ip == m::kStore) copyStores(storedBefore, storeRetired(w, m::store::kStO));
      if (ip == m::kCompute && (rc == 5 || rc == 6))  // STAGE_DONE, STAGE_FAULT
        log("run " + std::to_string(runs_) + ": " + std::to_string(hlsCount_) + " instructions at " + hex(hlsAddr_) +
            (rc == 5 ? ", FINISH executed" : ", compute faulted"));
      __atomic_thread_fence(__ATOMIC_SEQ_CST);
      setReg(ipBase(ip) + m::kApCtrl, m::kApDone | m::kApIdle);
    }
    return any;
  }

  static uint32_t storeRetired(const uint8_t* w, uint32_t offset) {
    namespace ss = tessera::hls_map::stage_state;
    uint32_t v = 0;
    for (uint32_t b = 0; b < ss::kRetiredBits; ++b) {
      const uint32_t at = ss::kRetiredLsb + b;
      v |= ((*reinterpret_cast<const volatile uint32_t*>(w + offset + 4 * (at / 32)) >> (at % 32)) & 1u) << b;
    }
    return v;
  }

  // A run's start on the HLS bitstream: the same cache-maintenance checks as the RTL's start,
  // and its STOREs, which the store calls then write back into the buffer as they execute.
  void beginHlsRun() {
    namespace m = tessera::hls_map;
    ++runs_;
    const std::string name = "run " + std::to_string(runs_);
    if (!takeCpuSync() && wroteLastRun_)
      violation(name + " started, but the results of run " + std::to_string(runs_ - 1) + " were never synced for the CPU");
    wroteLastRun_ = false;
    syncForDevice(name);
    if (const uint64_t left = hls_->leftInQueues())
      violation(name + " started with " + std::to_string(left) + " instructions and tokens of an earlier run in the "
                       "stream FIFOs: the driver did not drain them");
    hlsCount_ = reg(ipBase(m::kFetch) + m::fetch::kInsnCount);
    hlsAddr_ = reg(ipBase(m::kFetch) + m::fetch::kInsnAddr) | uint64_t(reg(ipBase(m::kFetch) + m::fetch::kInsnAddr + 4)) << 32;
    hlsStores_.clear();
    try {
      for (const hw::Insn& in : hw::decodeProgram(isa_, dram_, hlsAddr_, hlsCount_))
        if (in.stage() == hw::Stage::kStore) hlsStores_.push_back(in);
    } catch (const Error&) {
      // An invalid program: the design still runs what it dispatches, but stores nothing the driver may read.
    }
  }

  // The DMA writes of the store stage's instructions [first, end) of this run land in the buffer.
  void copyStores(uint32_t first, uint32_t end) {
    for (uint32_t i = first; i < end && i < hlsStores_.size(); ++i) {
      const hw::Insn& in = hlsStores_[i];
      if (in.opcode != hw::Opcode::kStore) continue;
      const hw::DramRange r = hw::dramRange(in, cfg_);
      const uint64_t lo = std::max(r.first, args_.physBase), hi = std::min(r.end, args_.physBase + args_.size);
      if (hi <= lo) continue;
      std::memcpy(buffer_ + (lo - args_.physBase), dram_.raw(lo), hi - lo);
      wroteLastRun_ = true;
    }
  }

  void syncForDevice(const std::string& name) {
    if (readFile(sysfs_ + "/sync_for_device").rfind("1", 0) != 0) {
      violation(name + " started without sync_for_device: the device reads DRAM as the CPU's caches left it");
      return;
    }
    const Range r = request();
    writeFile(sysfs_ + "/sync_for_device", "0\n");
    ++deviceSyncs_;
    if (r.direction != zynq::kSyncToDevice && r.direction != zynq::kSyncBidirectional)
      violation(name + ": sync_for_device with sync_direction " + std::to_string(r.direction) + " (expected 1)");
    std::memcpy(dram_.raw(args_.physBase + r.offset), buffer_ + r.offset, r.bytes);
    log("sync_for_device [" + hex(r.offset) + ", " + hex(r.offset + r.bytes) + ")");
  }

  void runOnce() {
    ++runs_;
    const uint32_t addr = reg(host::kRegInsnAddr), count = reg(host::kRegInsnCount);
    const std::string name = "run " + std::to_string(runs_);
    if (!takeCpuSync() && wroteLastRun_)
      violation(name + " started, but the results of run " + std::to_string(runs_ - 1) + " were never synced for the CPU");
    wroteLastRun_ = false;
    syncForDevice(name);
    sim_.writeRegister(host::kRegInsnAddr, addr);
    sim_.writeRegister(host::kRegInsnCount, count);
    sim_.writeRegister(host::kRegCtrl, host::kCtrlStart);
    uint32_t ctrl = 0;
    for (uint64_t polls = 0;; ++polls) {
      if (gStop) return;
      ctrl = sim_.readRegister(host::kRegCtrl);
      if (ctrl & (host::kCtrlDone | host::kCtrlFault)) break;
      if (polls % 512 == 0) mirror();
    }
    // Modules FINISH did not wait for finish their work before the host is told.
    for (int i = 0; i < 100000 && !settled(); ++i) {
    }
    copyStoresBack(addr, count);
    mirror();
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    setReg(host::kRegCtrl, ctrl & ~host::kCtrlRunning);
    log(name + ": " + std::to_string(count) + " instructions at " + hex(addr) + ", " +
        ((ctrl & host::kCtrlFault) ? "fault cause " + std::to_string(reg(host::kRegFaultCause)) : std::string("done")) +
        " after " + std::to_string(reg(host::kRegCycles)) + " cycles");
  }

  // The DMA writes of the run's STOREs land in the buffer (the CPU sees them after it invalidates).
  void copyStoresBack(uint32_t addr, uint32_t count) {
    std::vector<hw::Insn> prog;
    try {
      prog = hw::decodeProgram(isa_, dram_, addr, count);
    } catch (const Error&) {
      return;  // an invalid program stored nothing the driver may read
    }
    for (const hw::Insn& in : prog) {
      if (in.opcode != hw::Opcode::kStore) continue;
      const hw::DramRange r = hw::dramRange(in, cfg_);
      const uint64_t first = std::max(r.first, args_.physBase), end = std::min(r.end, args_.physBase + args_.size);
      if (end <= first) continue;
      std::memcpy(buffer_ + (first - args_.physBase), dram_.raw(first), end - first);
      wroteLastRun_ = true;
    }
  }

  Args args_;
  hw::Config cfg_;
  hw::Isa isa_;
  hw::Dram dram_;
  tessera::tsim::Simulator sim_;
  std::string sysfs_;
  uint8_t* regs_ = nullptr;
  uint8_t* buffer_ = nullptr;
  uint64_t runs_ = 0, deviceSyncs_ = 0, cpuSyncs_ = 0, violations_ = 0;
  bool wroteLastRun_ = false;
  std::unique_ptr<tessera::fake_zynq::HlsBitstream> hls_;
  uint32_t hlsCount_ = 0;
  uint64_t hlsAddr_ = 0;
  std::vector<hw::Insn> hlsStores_;  // this run's store-stage instructions, in program order
};

}  // namespace

int main(int argc, char** argv) {
  Args args;
  try {
    args = parseArgs(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "tessera-fake-zynq: %s\n%s", e.what(), kUsage);
    return 1;
  }
  struct sigaction sa = {};
  sa.sa_handler = onSignal;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  try {
    FakeBoard board(args);
    return board.serve();
  } catch (const Error& e) {
    std::fprintf(stderr, "tessera-fake-zynq: %s\n", e.what());
    return 1;
  }
}
