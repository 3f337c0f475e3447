// The iCEBreaker driver (docs/fpga.md): the host link's byte protocol (rtl/board/tessera_board_link.sv) and a target that speaks it over any byte channel, shared by the icebreaker and icebreaker-sim plugins.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/runtime/target.h"

namespace tessera::runtime::icebreaker {

constexpr const char* kName = "icebreaker";
constexpr const char* kSimName = "icebreaker-sim";
// icebreaker-sim with coverage (tsim/board; needs coverage=DIR).
constexpr const char* kSimCoverageName = "icebreaker-sim-cov";
// The config the board top is built for (hw/configs/boards/pico.json, the pico core's): the only one
// either target runs.
constexpr const char* kBoardConfig = "pico";

// Protocol version 1 (docs/fpga.md, "iCEBreaker host link"). A request is the sync byte, a command,
// a 32-bit address and a 16-bit length (little-endian), then `length` payload bytes for writes; a
// reply is the reply sync byte, a status byte and, on success, the command's payload.
constexpr uint8_t kVersion = 1;
constexpr uint8_t kRequestSync = 0xA5;
constexpr uint8_t kReplySync = 0x5A;
enum Command : uint8_t {
  kHello = 0x01,
  kReadReg = 0x02,
  kWriteReg = 0x03,
  kReadMem = 0x04,
  kWriteMem = 0x05,
  kStatus = 0x06,
};
enum Status : uint8_t {
  kOk = 0x00,
  kBadCommand = 0x01,
  kBadLength = 0x02,
  kBadAddress = 0x03,
  kBusError = 0x04,
};
// The board drops a partial request, and ends the drain after an error, once the line has been
// quiet this many bit times (the resync rule).
constexpr uint32_t kIdleTimeoutBits = 64;
constexpr size_t kHelloBytes = 4, kStatusBytes = 2, kRegBytes = 4;

std::string statusName(uint8_t status);

// A byte pipe to a board: a serial port, or the simulated board's UART lines.
class ByteChannel {
 public:
  virtual ~ByteChannel() = default;
  virtual void write(const uint8_t* data, size_t n) = 0;
  // Reads up to `n` bytes, waiting at most `timeout` for all of them; returns how many arrived.
  virtual size_t read(uint8_t* data, size_t n, std::chrono::milliseconds timeout) = 0;
  // Keeps the line quiet for at least `bits` bit times, then drops whatever was received.
  virtual void quiet(uint32_t bits) = 0;
  // Names the channel in errors ("serial port /dev/ttyUSB1", "simulated board").
  virtual std::string describe() const = 0;
};

struct BoardInfo {
  uint32_t version = 0;
  uint64_t memBytes = 0;
  uint32_t maxBlock = 0;
  uint32_t regAddrWidth = 0;
};

struct BoardStatus {
  bool irq = false, frameErrorSeen = false, overrunSeen = false;
  uint32_t errors = 0;  // refused or dropped requests since the last STATUS (saturates at 255)
};

struct Reply {
  uint8_t status = 0;
  std::vector<uint8_t> payload;
};

// The host side of the protocol over one channel.
class Link {
 public:
  Link(ByteChannel& channel, std::chrono::milliseconds replyTimeout) : channel_(channel), timeout_(replyTimeout) {}
  // One request as given, unchecked (the tests send bad ones on purpose). `replyPayload` is what a
  // successful reply carries; a refused request is followed by the quiet time of the resync rule.
  Reply transact(uint8_t command, uint32_t address, uint16_t length, const std::vector<uint8_t>& payload,
                 size_t replyPayload);
  // These throw tessera::Error naming the request and the status unless it succeeds.
  BoardInfo hello();
  uint32_t readReg(uint32_t offset);
  void writeReg(uint32_t offset, uint32_t value);
  // Whole ranges, split into blocks of the board's largest (hello() first).
  void readMem(uint32_t address, uint8_t* out, size_t n);
  void writeMem(uint32_t address, const uint8_t* data, size_t n);
  BoardStatus status();
  ByteChannel& channel() { return channel_; }

 private:
  void expectOk(const Reply& r, const std::string& request);
  ByteChannel& channel_;
  std::chrono::milliseconds timeout_;
  uint32_t maxBlock_ = 0;
};

// A driver target over `channel`: each run packs the DRAM pages the program uses into the board
// memory (moving its LOAD/STOREs to match), starts the accelerator through its registers, polls for
// done and copies the stored ranges back. `name` is the registered target name.
std::unique_ptr<Target> makeTarget(const std::string& name, const hw::Config& cfg, hw::Dram& dram,
                                   std::unique_ptr<ByteChannel> channel, std::chrono::milliseconds timeout);

// Why `cfg` is not the board's config; empty if it is.
std::string configProblem(const hw::Config& cfg);
// The option timeout=SECONDS (default 60 s) both targets take; throws tessera::Error on a bad value.
constexpr const char* kTimeoutKey = "timeout";
std::chrono::milliseconds timeoutOption(const TargetOptions& options);

}  // namespace tessera::runtime::icebreaker
