// Measures remote execution against local: round-trip latency of a tiny program, DRAM transfer rate and wall time of a large one.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/support/error.h"
#include "tessera/runtime/target.h"
#include "tessera/streams/streams.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace rt = tessera::runtime;

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

uint64_t pagesOf(uint64_t bytes) { return (bytes + tessera::hw::Dram::kPageBytes - 1) / tessera::hw::Dram::kPageBytes; }

struct Timing {
  double firstMs = 0, medianMs = 0, rerunChangedMs = 0;
};

// One run on fresh DRAM (everything crosses the wire), `reps` runs with nothing changed (only the
// round trip), and one run after every input byte changed (all inputs cross again).
Timing measure(const std::string& target, const tessera::streams::Stream& s, int reps) {
  tessera::hw::Dram dram(s.cfg);
  tessera::streams::place(s, dram);
  auto device = rt::createTarget(target, s.cfg, dram);
  Timing t;
  auto t0 = Clock::now();
  device->run(s.insnBase(), s.insnCount(), 0);
  t.firstMs = msSince(t0);
  std::vector<double> runs;
  for (int i = 0; i < reps; ++i) {
    t0 = Clock::now();
    device->run(s.insnBase(), s.insnCount(), 0);
    runs.push_back(msSince(t0));
  }
  std::sort(runs.begin(), runs.end());
  t.medianMs = runs.empty() ? 0 : runs[runs.size() / 2];
  for (size_t r = 0; r + 1 < s.regions.size(); ++r) {
    uint8_t* p = dram.raw(s.regions[r].base);
    if (s.regions[r].name == "uops") continue;  // keep the program valid
    for (size_t i = 0; i < s.regions[r].bytes.size(); ++i) p[i] ^= 1;
  }
  t0 = Clock::now();
  device->run(s.insnBase(), s.insnCount(), 0);
  t.rerunChangedMs = msSince(t0);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: tessera_remote_bench REMOTE_TARGET [TINY_SHAPE] [LARGE_SHAPE] [LARGE_SCALE] [REPS]\n"
                 "  e.g. tessera_remote_bench remote:127.0.0.1:9095/fsim matmul eltwise-add 12 200\n");
    return 2;
  }
  const std::string remote = argv[1];
  const std::string tinyShape = argc > 2 ? argv[2] : "matmul";
  const std::string largeShape = argc > 3 ? argv[3] : "eltwise-add";
  const double scale = argc > 4 ? std::atof(argv[4]) : 12;
  const int reps = argc > 5 ? std::atoi(argv[5]) : 200;
  try {
    const auto cfg = tessera::hw::Config::load("default");
    const std::string local = remote.substr(remote.rfind('/') + 1);
    for (const auto& [shape, sc, n] : {std::make_tuple(tinyShape, 1.0, reps), std::make_tuple(largeShape, scale, 5)}) {
      const auto s = tessera::streams::generate(cfg, shape, 1, sc);
      uint64_t up = 0, down = 0;
      for (const auto& r : s.regions) up += pagesOf(r.bytes.size()) * tessera::hw::Dram::kPageBytes;
      for (const auto& o : s.outputs) down += pagesOf(o.bytes) * tessera::hw::Dram::kPageBytes;
      const Timing l = measure(local, s, n);
      const Timing r = measure(remote, s, n);
      std::printf("%s scale %g: %u instructions, %.2f MB to the server (pages), %.2f MB back\n", shape.c_str(), sc,
                  s.insnCount(), up / 1e6, down / 1e6);
      std::printf("  %-34s first run %9.3f ms   unchanged re-run (median of %d) %8.3f ms   inputs changed %9.3f ms\n",
                  local.c_str(), l.firstMs, n, l.medianMs, l.rerunChangedMs);
      std::printf("  %-34s first run %9.3f ms   unchanged re-run (median of %d) %8.3f ms   inputs changed %9.3f ms\n",
                  remote.c_str(), r.firstMs, n, r.medianMs, r.rerunChangedMs);
      std::printf("  round-trip overhead %.3f ms; first run moves %.1f MB/s (all bytes over the remote wall time)\n",
                  r.medianMs - l.medianMs, (up + down) / 1e6 / (r.firstMs / 1e3));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera_remote_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
