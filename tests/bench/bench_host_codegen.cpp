// The host side of the shipped Fashion-MNIST models per image: the C++ executor against LLVM-generated code (ORC JIT, and the AOT object), on fsim.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>

#include "fashion_cnn_qdq.h"
#include "tessera/compiler/codegen/codegen.h"
#include "tessera/compiler/graph/compile.h"
#include "tessera/compiler/io/tensor_io.h"
#include "tessera/compiler/model/run.h"
#include "tessera/compiler/onnx/import.h"
#include "tessera/runtime/session.h"

namespace {

using namespace tessera;
using compiler::ir::Tensor;

const std::string kModels = TESSERA_SOURCE_DIR "/models/fashion_mnist/";

// One compiled model on fsim with the sample image, built once per model file.
struct Fixture {
  compiler::model::CompiledModel model;
  std::unique_ptr<runtime::Session> session;
  std::map<std::string, Tensor> inputs;
  explicit Fixture(const std::string& file) {
    const hw::Config cfg = hw::Config::load("default");
    model = compiler::graph::compile(cfg, compiler::onnx::importOnnx(kModels + file));
    session = std::make_unique<runtime::Session>("fsim", cfg);
    inputs[model.inputs.at(0).name] = compiler::io::readNpy(kModels + "sample_0.npy");
  }
};

Fixture& fixture(const std::string& file) {
  static std::map<std::string, std::unique_ptr<Fixture>> all;
  auto& f = all[file];
  if (!f) f = std::make_unique<Fixture>(file);
  return *f;
}

// Host time: each run's wall time less the time inside the target's segment runs (so packing,
// unpacking and every host operator count on both sides).
void report(benchmark::State& state, double hostSeconds, double runSeconds) {
  state.counters["host_us"] = benchmark::Counter(hostSeconds * 1e6 / double(state.iterations()));
  state.counters["run_us"] = benchmark::Counter(runSeconds * 1e6 / double(state.iterations()));
}

void BM_HostInterpreter(benchmark::State& state, const std::string& file) {
  Fixture& f = fixture(file);
  compiler::model::ModelRunner runner(f.model, *f.session);
  double host = 0, run = 0;
  for (auto _ : state) {
    const compiler::model::ModelRunResult r = runner.run(f.inputs);
    host += r.seconds - r.segmentSeconds;
    run += r.seconds;
  }
  report(state, host, run);
}

void BM_HostJit(benchmark::State& state, const std::string& file) {
  Fixture& f = fixture(file);
  const compiler::codegen::JitModel code(f.model, "bench");
  runtime::AotSession aot(code.descriptor(), *f.session);
  double host = 0, run = 0;
  for (auto _ : state) {
    const compiler::model::ModelRunResult r = compiler::codegen::runGenerated(f.model, code.descriptor(), aot.handle(), f.inputs);
    host += r.seconds - r.segmentSeconds;
    run += r.seconds;
  }
  report(state, host, run);
}

// The object `tessera compile --emit obj --triple x86_64-linux-gnu` wrote at build time (generic x86-64).
void BM_HostAot(benchmark::State& state) {
  Fixture& f = fixture("fashion_cnn_qdq.onnx");
  runtime::AotSession aot(fashion_cnn_qdq_model, *f.session);
  double host = 0, run = 0;
  for (auto _ : state) {
    const compiler::model::ModelRunResult r = compiler::codegen::runGenerated(f.model, fashion_cnn_qdq_model, aot.handle(), f.inputs);
    host += r.seconds - r.segmentSeconds;
    run += r.seconds;
  }
  report(state, host, run);
}

BENCHMARK_CAPTURE(BM_HostInterpreter, qdq, std::string("fashion_cnn_qdq.onnx"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_HostJit, qdq, std::string("fashion_cnn_qdq.onnx"))->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HostAot)->Name("BM_HostAot/qdq")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_HostInterpreter, qop, std::string("fashion_cnn_qop.onnx"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_HostJit, qop, std::string("fashion_cnn_qop.onnx"))->Unit(benchmark::kMicrosecond);
// The float file uncalibrated: every layer on the host (convolutions, pooling, Gemm).
BENCHMARK_CAPTURE(BM_HostInterpreter, float, std::string("fashion_cnn.onnx"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_HostJit, float, std::string("fashion_cnn.onnx"))->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
