// tessera-fake-icebreaker: the simulated iCEBreaker board behind a pseudo-terminal, so the icebreaker target's serial path runs without a board (docs/fpga.md).
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sim_board.h"

namespace {

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--seconds N]\n"
               "Opens a pseudo-terminal, prints its path on stdout and serves the simulated iCEBreaker board\n"
               "on it for N seconds (default 600), for `--target icebreaker --target-option device=PATH`.\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  long seconds = 600;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      char* end = nullptr;
      seconds = std::strtol(argv[++i], &end, 10);
      if (*end || seconds <= 0) {
        std::fprintf(stderr, "tessera-fake-icebreaker: --seconds %s: expected a positive number\n", argv[i]);
        return 2;
      }
    } else {
      return usage(argv[0]);
    }
  }
  int master = -1, slave = -1;
  char name[256];
  if (::openpty(&master, &slave, name, nullptr, nullptr) != 0) {
    std::fprintf(stderr, "tessera-fake-icebreaker: openpty failed: %s\n", std::strerror(errno));
    return 1;
  }
  // Raw on both sides until the host sets its own mode: no byte is translated or echoed. The slave
  // stays open here so the master never reads end-of-file between two host programs.
  termios t;
  ::tcgetattr(slave, &t);
  ::cfmakeraw(&t);
  ::tcsetattr(slave, TCSANOW, &t);
  std::printf("%s\n", name);
  std::fflush(stdout);

  tessera::icebreaker_sim::SimulatedBoard board;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  // The board's clock runs freely while bytes move; after a long quiet spell it is paced by the
  // pty so an idle stand-in does not spin a core.
  constexpr uint64_t kChunk = 256;
  constexpr uint64_t kIdleCycles = uint64_t(1) << 20;
  uint64_t quietSince = 0;
  uint8_t buf[4096];
  while (std::chrono::steady_clock::now() < end) {
    const bool idle = board.cycles() - quietSince > kIdleCycles && board.lineIdle();
    pollfd p{master, POLLIN, 0};
    const int r = ::poll(&p, 1, idle ? 10 : 0);
    if (r > 0 && (p.revents & POLLIN)) {
      const ssize_t n = ::read(master, buf, sizeof buf);
      if (n > 0) {
        board.send(buf, static_cast<size_t>(n));
        quietSince = board.cycles();
      }
    }
    board.step(kChunk);
    const size_t out = board.takeReceived(buf, sizeof buf);
    for (size_t done = 0; done < out;) {
      const ssize_t w = ::write(master, buf + done, out - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        std::fprintf(stderr, "tessera-fake-icebreaker: write to the pty failed: %s\n", std::strerror(errno));
        return 1;
      }
      done += static_cast<size_t>(w);
    }
    if (out) quietSince = board.cycles();
  }
  return 0;
}
