// Simulation-speed benchmarks: simulated GMAC/s of a blocked GEMM and a strided-load program, and
// fsim on streams shaped like other VTA toolchains' (sw/streams: tessera stream --list).
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "tessera/hw/dram.h"
#include "tessera/hw/fsim.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/tessera.h"
#include "tessera/streams/streams.h"
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

// fsim alone on a generated stream (tessera stream SHAPE), already in DRAM: re-runs of the same
// program, which reads the same inputs and writes the same outputs each time.
void BM_Stream(benchmark::State& state, const char* shape) {
  const tessera::hw::Config cfg = tessera::hw::Config::load(envOr("TESSERA_CONFIG", "default"));
  const tessera::streams::Stream s = tessera::streams::generate(cfg, shape, 1);
  tessera::hw::Dram dram(cfg);
  tessera::streams::place(s, dram);
  tessera::hw::Fsim sim(cfg, dram);
  for (auto _ : state) sim.run(s.insnBase(), s.insnCount());
  const auto& c = sim.counters();
  state.counters["insns"] = static_cast<double>(s.insnCount());
  state.counters["Minsn/s"] =
      benchmark::Counter(static_cast<double>(s.insnCount()) * state.iterations() / 1e6, benchmark::Counter::kIsRate);
  state.counters["GMAC/s"] =
      benchmark::Counter(static_cast<double>(c.macs) / 1e9, benchmark::Counter::kIsRate);
  state.counters["uop MB"] = static_cast<double>(s.regionBytes("uops")) / 1e6;
}

// The same from nothing each time: a fresh DRAM with the stream's images, a fresh fsim, the run
// (what tessera sim does besides starting the process and reading files).
void BM_StreamCold(benchmark::State& state, const char* shape) {
  const tessera::hw::Config cfg = tessera::hw::Config::load(envOr("TESSERA_CONFIG", "default"));
  const tessera::streams::Stream s = tessera::streams::generate(cfg, shape, 1);
  for (auto _ : state) {
    tessera::hw::Dram dram(cfg);
    tessera::streams::place(s, dram);
    tessera::hw::Fsim sim(cfg, dram);
    sim.run(s.insnBase(), s.insnCount());
  }
  state.counters["insns"] = static_cast<double>(s.insnCount());
}

#define TESSERA_STREAM_BENCH(name, shape)                                                         \
  BENCHMARK_CAPTURE(BM_Stream, name, shape)->Unit(benchmark::kMillisecond);                       \
  BENCHMARK_CAPTURE(BM_StreamCold, name, shape)->Unit(benchmark::kMillisecond)
TESSERA_STREAM_BENCH(matmul, "matmul");
TESSERA_STREAM_BENCH(lenet, "lenet");
TESSERA_STREAM_BENCH(maxpool, "maxpool");
TESSERA_STREAM_BENCH(pool_rows, "pool-rows");
TESSERA_STREAM_BENCH(eltwise_add, "eltwise-add");
TESSERA_STREAM_BENCH(eltwise_mul, "eltwise-mul");
TESSERA_STREAM_BENCH(gemm_loads, "gemm-loads");

}  // namespace

BENCHMARK_MAIN();
