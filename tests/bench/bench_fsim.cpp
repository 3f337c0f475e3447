// Simulation-speed benchmarks: simulated GMAC/s of a blocked GEMM and a strided-load program.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "tessera/runtime/session.h"
#include "tessera/runtime/tessera.h"
#include "tessera/sw/workloads.h"

namespace {

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// Runs the GEMM once through the runtime, then times re-runs of the identical program on the device.
void BM_BlockedGemm(benchmark::State& state) {
  tessera::runtime::Session::reset(envOr("TESSERA_TARGET", "fsim"), envOr("TESSERA_CONFIG", "default"));
  tessera::sw::GemmProblem p;
  p.m = p.n = p.k = static_cast<int>(state.range(0));
  p.doubleBuffer = state.range(1) != 0;
  auto r = tessera::sw::runBlockedGemm(p, [&](tessera::runtime::Target& dev, uint64_t phys, uint32_t count) {
    for (auto _ : state) dev.run(phys, count, 0);
  });
  if (!r.correct) state.SkipWithError(("wrong result: " + r.firstMismatch).c_str());
  state.counters["MACs"] = static_cast<double>(r.macs);
  state.counters["GMAC/s"] = benchmark::Counter(static_cast<double>(r.macs) * state.iterations() / 1e9,
                                                benchmark::Counter::kIsRate);
  state.SetLabel(r.tiling);
}
BENCHMARK(BM_BlockedGemm)->Args({256, 1})->Args({256, 0})->Args({512, 1})->Unit(benchmark::kMillisecond);

// Convolution-style program: many small strided, padded input loads per GEMM.
void BM_StridedLoadConv(benchmark::State& state) {
  tessera::runtime::Session::reset(envOr("TESSERA_TARGET", "fsim"), envOr("TESSERA_CONFIG", "default"));
  tessera::sw::ConvProblem p;
  p.height = p.width = static_cast<int>(state.range(0));
  p.inChannels = p.outChannels = static_cast<int>(state.range(1));
  auto r = tessera::sw::runConv3x3(p, [&](tessera::runtime::Target& dev, uint64_t phys, uint32_t count) {
    for (auto _ : state) dev.run(phys, count, 0);
  });
  if (!r.correct) state.SkipWithError(("wrong result: " + r.firstMismatch).c_str());
  state.counters["MACs"] = static_cast<double>(r.macs);
  state.counters["GMAC/s"] = benchmark::Counter(static_cast<double>(r.macs) * state.iterations() / 1e9,
                                                benchmark::Counter::kIsRate);
  state.counters["loads"] = static_cast<double>(r.counters.insns[0]);
  state.counters["load GB/s"] = benchmark::Counter(
      static_cast<double>(r.counters.totalLoadBytes()) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(r.tiling);
}
BENCHMARK(BM_StridedLoadConv)->Args({56, 64})->Args({14, 256})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
