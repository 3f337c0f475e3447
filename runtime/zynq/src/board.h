// The zynq drivers' shared layer: the register window (UIO, /dev/mem or a fake board's file), the u-dma-buf buffer each run is staged in, and the target both bitstreams' drivers derive from.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/counters.h"
#include "tessera/hw/dram.h"
#include "tessera/hw/isa.h"
#include "tessera/runtime/target.h"

namespace tessera::runtime::zynq {

// The target options (docs/deploy.md, "Target options").
constexpr const char* kUioKey = "uio";
constexpr const char* kDevMemKey = "devmem";
constexpr const char* kRegsFileKey = "regs-file";
constexpr const char* kBufferKey = "buffer";
constexpr const char* kBufferSysfsKey = "buffer-sysfs";
constexpr const char* kTimeoutKey = "timeout";
constexpr const char* kConfigKey = "config";
constexpr const char* kBitstreamKey = "bitstream";

// Where the registers and the buffer come from, from the target options.
struct BoardSettings {
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

// Throws tessera::Error naming the option that is malformed or contradicts another.
BoardSettings settingsOf(const TargetOptions& options);
// Why `cfg` is not the config of the bitstream named by the option config=; empty if it is.
std::string configMismatch(const hw::Config& cfg, const std::string& bitstreamConfig);

// An open file and a shared mapping of part of it, released together.
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // `sync`: O_SYNC, which asks /dev/mem and UIO for an uncached mapping, as device registers need.
  void open(const std::string& path, bool sync, const std::string& what);
  // Size of a regular file, or -1 for a device.
  int64_t regularFileSize() const;
  void map(uint64_t bytes, uint64_t offset, const std::string& what);
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
  DeviceLock(const MappedFile& device, std::chrono::milliseconds timeout, const std::string& runWhat);
  ~DeviceLock();
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

 private:
  int fd_;
};

// One board: its register window mapped, its DMA buffer mapped with the buffer's physical address
// and sysfs attributes known.
class Board {
 public:
  // Maps `windowBytes` of registers (`windowName` in errors); throws tessera::Error naming the
  // device or file that is missing or wrong.
  Board(const hw::Config& cfg, hw::Dram& dram, const BoardSettings& settings, uint64_t windowBytes,
        const std::string& windowName);
  // Maps the DMA buffer, once the driver has checked the registers are its bitstream's (so a wrong
  // bitstream is reported as such, not as a missing buffer); throws naming the attribute or file.
  void openBuffer();

  const hw::Config& config() const { return cfg_; }
  const hw::Isa& isa() const { return isa_; }
  hw::Dram& dram() const { return dram_; }
  const BoardSettings& settings() const { return settings_; }
  // The register window's device ("/dev/uio0", "/dev/mem@0x43c00000", "fake device FILE").
  const std::string& device() const { return device_; }
  const MappedFile& registers() const { return registers_; }
  uint64_t bufferPhys() const { return bufferPhys_; }
  uint64_t bufferBytes() const { return buffer_.size(); }
  // The option timeout=, as errors write it ("10 s").
  std::string timeoutText() const;

  uint32_t reg(uint32_t offset) const {
    return *reinterpret_cast<const volatile uint32_t*>(registers_.data() + offset);
  }
  void setReg(uint32_t offset, uint32_t value) {
    *reinterpret_cast<volatile uint32_t*>(registers_.data() + offset) = value;
  }
  uint64_t reg64(uint32_t offset) const { return reg(offset) | uint64_t(reg(offset + 4)) << 32; }

 private:
  friend class StagedRun;
  void openRegisters(uint64_t window, const std::string& windowName);
  // u-dma-buf's manual cache maintenance of [offset, offset + bytes): the range, the direction, then the trigger.
  void sync(const char* trigger, uint64_t offset, uint64_t bytes, int direction);

  hw::Config cfg_;
  hw::Isa isa_;
  hw::Dram& dram_;
  BoardSettings settings_;
  MappedFile registers_, buffer_;
  std::string device_, sysfs_;
  uint64_t bufferPhys_ = 0;
};

// One run's pages in the board's buffer, with the device locked (flock) against other threads' and
// processes' runs for as long as it lives. The buffer holds the session pages the run touches at
// the same distances from each other (the lowest at offset 0), so moving every DRAM address by one
// delta relocates the program; its instructions follow in the next page.
class StagedRun {
 public:
  StagedRun(Board& board, const std::vector<hw::Insn>& prog, uint64_t insnPhys, uint32_t count,
            const std::string& runWhat);
  StagedRun(const StagedRun&) = delete;
  StagedRun& operator=(const StagedRun&) = delete;

  // The physical address of the relocated instructions, for the bitstream's start registers.
  uint64_t insnAddr() const { return board_.bufferPhys() + insnOffset_; }
  // The pages the run's STOREs wrote, from the buffer into the session's DRAM after the CPU's
  // caches dropped their stale lines.
  void copyBack();

 private:
  void writeRelocated(const std::vector<hw::Insn>& prog, int64_t delta);

  Board& board_;
  std::vector<uint64_t> writtenPages_;
  uint64_t base_ = 0, insnOffset_ = 0;
  std::optional<DeviceLock> lock_;
};

// The zynq target over one bitstream: run() decodes the program with the checks every target
// makes and stages it; the bitstream's driver executes it.
class ZynqTarget : public Target {
 public:
  std::string name() const override;
  std::string variant() const override { return board_.device(); }
  hw::Counters counters() const override { return counters_; }
  void resetCounters() override { counters_ = hw::Counters(); }
  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) final;

 protected:
  ZynqTarget(const hw::Config& cfg, hw::Dram& dram, const BoardSettings& settings, uint64_t windowBytes,
             const std::string& windowName)
      : board_(cfg, dram, settings, windowBytes, windowName) {}
  // Runs the staged program on the bitstream, copies the written pages back and adds the run's
  // counters (its `runs` already counted); throws tessera::Error explaining a fault or a hang.
  virtual void execute(const std::vector<hw::Insn>& prog, uint32_t count, StagedRun& staged, uint32_t waitCycles,
                       const std::string& runWhat) = 0;

  Board board_;
  hw::Counters counters_;
};

// The drivers of the two bitstreams (rtl_bitstream.cpp, hls_bitstream.cpp).
std::unique_ptr<Target> makeRtlBitstreamTarget(const hw::Config& cfg, hw::Dram& dram, const BoardSettings& settings);
std::unique_ptr<Target> makeHlsBitstreamTarget(const hw::Config& cfg, hw::Dram& dram, const BoardSettings& settings);

}  // namespace tessera::runtime::zynq
