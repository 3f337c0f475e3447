// Simulation-speed benchmarks of the RTL simulator: simulated cycles per second of wall time.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "tessera/runtime/session.h"
#include "tessera/sw/workloads.h"

namespace {

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// Reports the device's cycles per re-run and the simulation rate in cycles per second.
void reportCycles(benchmark::State& state, tessera::runtime::Target& dev, const tessera::hw::Counters& before,
                  const tessera::sw::WorkloadResult& r, uint64_t idealCycles) {
  const auto ran = dev.counters().since(before);
  const double perRun = state.iterations() ? static_cast<double>(ran.cycles) / state.iterations() : 0;
  state.counters["cycles"] = perRun;
  state.counters["util %"] = perRun > 0 ? 100.0 * static_cast<double>(idealCycles) / perRun : 0;
  state.counters["cycles/s"] = benchmark::Counter(static_cast<double>(ran.cycles), benchmark::Counter::kIsRate);
  if (!r.correct) state.SkipWithError(("wrong result: " + r.firstMismatch).c_str());
}

void BM_TsimBlockedGemm(benchmark::State& state) {
  tessera::runtime::Session::reset(envOr("TESSERA_TARGET", "tsim"), envOr("TESSERA_CONFIG", "default"));
  const auto& cfg = tessera::runtime::Session::global().config();
  tessera::sw::GemmProblem p;
  p.m = p.n = p.k = static_cast<int>(state.range(0));
  p.requantize = state.range(1) != 0;
  // Third argument: with instruction tracing, whose spans are taken (and dropped) after every run.
  const bool traced = state.range(2) != 0;
  tessera::hw::Counters before;
  tessera::runtime::Target* device = nullptr;
  size_t spans = 0;
  auto r = tessera::sw::runBlockedGemm(p, [&](tessera::runtime::Target& dev, uint64_t phys, uint32_t count) {
    device = &dev;
    before = dev.counters();
    if (traced && !dev.traceInstructions(true)) state.SkipWithError("the target does not trace instructions");
    for (auto _ : state) {
      dev.run(phys, count, 0);
      for (const auto& run : dev.takeInstructionSpans()) spans += run.spans.size();
    }
    dev.traceInstructions(false);
  });
  reportCycles(state, *device, before, r, r.macs / (uint64_t(cfg.batch) * cfg.blockIn * cfg.blockOut));
  if (traced) state.counters["spans"] = state.iterations() ? double(spans) / double(state.iterations()) : 0;
  state.SetLabel(r.tiling + (traced ? ", traced" : ""));
}
BENCHMARK(BM_TsimBlockedGemm)->Args({256, 0, 0})->Args({256, 1, 0})->Args({256, 0, 1})->Unit(benchmark::kMillisecond);

void BM_TsimConv3x3(benchmark::State& state) {
  tessera::runtime::Session::reset(envOr("TESSERA_TARGET", "tsim"), envOr("TESSERA_CONFIG", "default"));
  const auto& cfg = tessera::runtime::Session::global().config();
  tessera::sw::ConvProblem p;
  p.height = p.width = static_cast<int>(state.range(0));
  p.inChannels = p.outChannels = static_cast<int>(state.range(1));
  tessera::hw::Counters before;
  tessera::runtime::Target* device = nullptr;
  auto r = tessera::sw::runConv3x3(p, [&](tessera::runtime::Target& dev, uint64_t phys, uint32_t count) {
    device = &dev;
    before = dev.counters();
    for (auto _ : state) dev.run(phys, count, 0);
  });
  reportCycles(state, *device, before, r, r.macs / (uint64_t(cfg.batch) * cfg.blockIn * cfg.blockOut));
}
BENCHMARK(BM_TsimConv3x3)->Args({14, 256})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
