// The icebreaker target plugin: registers `icebreaker`, the pico bitstream on an iCEBreaker driven through its host link on a serial port, a device the listings leave out.
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "tessera/runtime/icebreaker.h"
#include "tessera/runtime/target_plugin.h"
#include "tessera/support/error.h"

namespace tessera::runtime::icebreaker {

namespace {

speed_t speedOf(uint32_t baud, const std::string& device) {
  switch (baud) {
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    case 230400: return B230400;
    case 460800: return B460800;
    case 921600: return B921600;
    case 1000000: return B1000000;
    case 2000000: return B2000000;
    case 3000000: return B3000000;
    default:
      throw Error("target option baud=" + std::to_string(baud) + " for " + device,
                  "not a rate termios offers (9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600, 1000000, "
                  "2000000, 3000000)");
  }
}

class SerialChannel : public ByteChannel {
 public:
  SerialChannel(const std::string& device, uint32_t baud) : device_(device), baud_(baud) {
    const speed_t speed = speedOf(baud, device);
    fd_ = ::open(device.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0) throw Error(device, std::string("cannot open the serial port: ") + std::strerror(errno));
    termios t;
    if (::tcgetattr(fd_, &t) != 0) {
      const int err = errno;
      ::close(fd_);
      throw Error(device, std::string("not a serial port (tcgetattr: ") + std::strerror(err) + ")");
    }
    // Two drivers on one board interleave their requests' bytes and read each other's replies: the
    // second is refused while the first holds the port.
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd_);
      throw Error(device, err == EWOULDBLOCK ? std::string("the serial port is in use by another process (it holds a lock on it)")
                                             : std::string("cannot lock the serial port: ") + std::strerror(err));
    }
    // Raw 8N1: no echo, no line editing, no flow control, no translation of any byte.
    ::cfmakeraw(&t);
    t.c_cflag |= CLOCAL | CREAD;
    t.c_cflag &= ~(CSTOPB | PARENB | CRTSCTS);
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    ::cfsetispeed(&t, speed);
    ::cfsetospeed(&t, speed);
    if (::tcsetattr(fd_, TCSANOW, &t) != 0) {
      const int err = errno;
      ::close(fd_);
      throw Error(device, std::string("cannot set raw mode at ") + std::to_string(baud) + " baud: " +
                              std::strerror(err));
    }
    ::tcflush(fd_, TCIOFLUSH);
  }
  ~SerialChannel() override { ::close(fd_); }

  void write(const uint8_t* data, size_t n) override {
    for (size_t done = 0; done < n;) {
      const ssize_t w = ::write(fd_, data + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno == EAGAIN) {
        pollFor(POLLOUT, 100);
        continue;
      }
      if (w < 0) throw Error(device_, std::string("write to the serial port failed: ") + std::strerror(errno));
      done += static_cast<size_t>(w);
    }
  }

  size_t read(uint8_t* data, size_t n, std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    size_t got = 0;
    while (got < n) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      if (!pollFor(POLLIN, static_cast<int>(left.count()))) continue;
      const ssize_t r = ::read(fd_, data + got, n - got);
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (r < 0) throw Error(device_, std::string("read from the serial port failed: ") + std::strerror(errno));
      if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a hung-up pty: wait out the timeout
      got += static_cast<size_t>(r);
    }
    return got;
  }

  void quiet(uint32_t bits) override {
    ::tcdrain(fd_);
    // Twice the line time, and never under 20 ms: the board counts from the last byte it received,
    // and a stand-in board behind a pty (tessera-fake-icebreaker) may wait for the scheduler.
    const auto micros = std::chrono::microseconds(std::max<uint64_t>(2000000ull * bits / baud_, 20000));
    std::this_thread::sleep_for(micros);
    ::tcflush(fd_, TCIFLUSH);
  }

  std::string describe() const override { return "serial port " + device_; }

 private:
  bool pollFor(short events, int ms) {
    pollfd p{fd_, events, 0};
    const int r = ::poll(&p, 1, ms);
    if (r < 0 && errno != EINTR) throw Error(device_, std::string("poll failed: ") + std::strerror(errno));
    return r > 0;
  }
  std::string device_;
  uint32_t baud_;
  int fd_ = -1;
};

constexpr const char* kDeviceKey = "device";
constexpr const char* kBaudKey = "baud";

TargetInfo serialTargetInfo() {
  TargetInfo info;
  info.name = kName;
  info.description = "the pico accelerator on an iCEBreaker (iCE40 UP5K bitstream), through its UART host link on a "
                     "serial port (config pico; docs/fpga.md)";
  info.options = {{kDeviceKey, "the serial port of the board (required), e.g. /dev/ttyUSB1"},
                  {kBaudKey, "the UART's baud rate (default 115200)"},
                  {kTimeoutKey, "seconds a run may take before it is reported as hung (default 60)"}};
  info.unsupportedReason = [](const hw::Config& cfg) { return configProblem(cfg); };
  info.create = [](const hw::Config& cfg, hw::Dram& dram, const TargetOptions& options) {
    const auto device = options.find(kDeviceKey);
    if (device == options.end() || device->second.empty())
      throw Error("target icebreaker", "give the board's serial port with --target-option device=/dev/ttyUSBn");
    uint32_t baud = 115200;
    if (const auto it = options.find(kBaudKey); it != options.end()) {
      char* end = nullptr;
      const unsigned long v = std::strtoul(it->second.c_str(), &end, 10);
      if (it->second.empty() || *end || v == 0 || v > 4000000)
        throw Error(std::string("target option ") + kBaudKey + "=" + it->second, "expected a baud rate such as 115200");
      baud = static_cast<uint32_t>(v);
    }
    const auto timeout = timeoutOption(options);
    return makeTarget(kName, cfg, dram, std::make_unique<SerialChannel>(device->second, baud), timeout);
  };
  return info;
}

}  // namespace

}  // namespace tessera::runtime::icebreaker

TESSERA_TARGET_PLUGIN(registrar) { registrar.add(tessera::runtime::icebreaker::serialTargetInfo()); }
