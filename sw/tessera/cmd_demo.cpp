// tessera demo: blocked int8 GEMM plus ALU requantization through the runtime API, checked on the host.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "cli.h"
#include "tessera/support/error.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/tessera.h"
#include "tessera/sw/workloads.h"

namespace tessera::cli {

int cmdDemo(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string config, target;
  sw::GemmProblem p;
  addConfigOption(opts, &config);
  addTargetOption(opts, &target, "fsim");
  opts.add_options()
      ("m", po::value<int>(&p.m)->default_value(256), "rows of A and C")
      ("n", po::value<int>(&p.n)->default_value(256), "columns of C (rows of B)")
      ("k", po::value<int>(&p.k)->default_value(256), "reduction length")
      ("shift", po::value<int>(&p.shift)->default_value(8), "requantization shift")
      ("seed", po::value<uint32_t>(&p.seed)->default_value(1), "random seed of the operands")
      ("single-buffer", "do not overlap loads with compute")
      ("no-uop-compression", "one micro-op per GEMM step instead of micro-op loops")
      ("dump-insn", "print the instruction stream (VTA_DEBUG_DUMP_INSN)");
  po::variables_map vm;
  if (!parse("demo", "[--config C] [--target T] [--m M --n N --k K] [--shift S] [--seed S]", args, opts, nullptr, &vm))
    return 0;
  p.doubleBuffer = !vm.count("single-buffer");
  p.uopCompression = !vm.count("no-uop-compression");

  runtime::Session::reset(target, config);
  auto& session = runtime::Session::global();
  if (vm.count("dump-insn")) session.threadQueue().setDebugFlags(1 << 1);
  std::printf("tessera demo: C = clip((A x B^T) >> %d) with A %dx%d, B %dx%d int8, on target %s, config %s\n", p.shift,
              p.m, p.k, p.n, p.k, session.targetName().c_str(), session.config().name.c_str());
  // The first run includes one-time costs (page faults, SRAM packing); re-running the identical
  // program shows the steady-state simulation speed.
  double best = 0;
  auto r = sw::runBlockedGemm(p, [&](runtime::Target& dev, uint64_t phys, uint32_t count) {
    for (int i = 0; i < 5; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      dev.run(phys, count, 0);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (best == 0 || s < best) best = s;
    }
  });
  std::printf("%s\n\n%s", r.tiling.c_str(), r.counters.format().c_str());
  std::printf("\nMACs                     %llu\n", static_cast<unsigned long long>(r.macs));
  std::printf("device time              %.3f ms (first run), %.3f ms (best of 5 re-runs)\n", r.deviceSeconds * 1e3,
              best * 1e3);
  if (best > 0) std::printf("simulated GMAC/s         %.2f\n", r.macs / best / 1e9);
  if (r.counters.cycles)
    std::printf("cycles                   %llu\n", static_cast<unsigned long long>(r.counters.cycles));
  if (!r.correct) {
    std::printf("\nresult: MISMATCH in %llu of %d elements; first: %s\n", static_cast<unsigned long long>(r.mismatches),
                p.m * p.n, r.firstMismatch.c_str());
    return 1;
  }
  std::printf("\nresult: all %d outputs match the host reference\n", p.m * p.n);
  return 0;
}

}  // namespace tessera::cli
