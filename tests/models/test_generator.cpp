// The trained DCGAN generator (scripts/models/train_dcgan.py): the float model as PyTorch computed it, and the calibrated int8 model on a target against the float one by PSNR.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <memory>
#include <string>

#include "tessera/compiler/graph/compile.h"
#include "tessera/compiler/host/executor.h"
#include "tessera/compiler/io/tensor_io.h"
#include "tessera/compiler/model/compiled_model.h"
#include "tessera/compiler/model/run.h"
#include "tessera/compiler/onnx/import.h"
#include "tessera/hw/config.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/target.h"
#include "model_test_support.h"

namespace {

namespace fs = std::filesystem;
using tessera::model_test::env;
using tessera::compiler::ir::Tensor;

// Images in [-1,1]: the peak-to-peak range is 2.
double psnr(const std::vector<float>& got, const std::vector<float>& want) {
  double se = 0;
  for (size_t i = 0; i < got.size(); ++i) se += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
  const double mse = se / double(got.size());
  return mse > 0 ? 10.0 * std::log10(4.0 / mse) : 99.0;
}

Tensor sample(const Tensor& stacked, int64_t i) {
  Tensor t = stacked;
  t.shape[0] = 1;
  const int64_t per = stacked.elements() / stacked.shape[0];
  t.floats.assign(stacked.floats.begin() + i * per, stacked.floats.begin() + (i + 1) * per);
  return t;
}

fs::path modelDir() { return env("TESSERA_GENERATOR_DIR"); }

tessera::compiler::ir::Graph load() {
  const fs::path model = modelDir() / "generator.onnx";
  if (!fs::exists(model)) throw std::runtime_error(model.string() + " is missing: set TESSERA_GENERATOR_DIR (ctest does)");
  return tessera::compiler::onnx::importOnnx(model.string());
}

// The host's float execution of the file gives what PyTorch gave for the reference latents: the
// float side of the comparison below is the model as trained.
TEST(Generator, FloatModelAgreesWithPyTorch) {
  const auto g = load();
  const Tensor latents = tessera::compiler::io::readNpy((modelDir() / "reference_latents.npy").string());
  const Tensor images = tessera::compiler::io::readNpy((modelDir() / "reference_images.npy").string());
  ASSERT_EQ(latents.shape[0], images.shape[0]);
  double worst = 99, maxDiff = 0;
  for (int64_t i = 0; i < latents.shape[0]; ++i) {
    const auto out = tessera::compiler::host::evaluate(g, {{g.inputs[0], sample(latents, i)}});
    const std::vector<float>& got = out.at(g.outputs[0]).floats;
    const std::vector<float> want = sample(images, i).floats;
    worst = std::min(worst, psnr(got, want));
    for (size_t k = 0; k < got.size(); ++k) maxDiff = std::max(maxDiff, std::fabs(double(got[k]) - want[k]));
  }
  std::printf("generator: host float execution vs PyTorch, worst PSNR %.1f dB (figures above 99 print as 99), largest difference %.3g, "
              "over %lld latents\n", worst, maxDiff, static_cast<long long>(latents.shape[0]));
  EXPECT_GE(worst, 80.0);
}

// TESSERA_GENERATOR_SAMPLES latents drawn N(0,1) from a fixed seed (not the calibration ones),
// each run on TESSERA_GENERATOR_TARGET after calibrating on the 16 shipped calibration latents;
// the mean PSNR against the float model must reach TESSERA_GENERATOR_MIN_PSNR (the 30 dB).
TEST(Generator, QuantizedOutputsMatchTheFloatModel) {
  const std::string target = env("TESSERA_GENERATOR_TARGET", "fsim");
  const int samples = std::atoi(env("TESSERA_GENERATOR_SAMPLES", "100").c_str());
  const double minPsnr = std::atof(env("TESSERA_GENERATOR_MIN_PSNR", "30").c_str());
  const auto g = load();
  tessera::compiler::graph::Calibration calibration;
  calibration.origin = (modelDir() / "calib").string();
  const std::vector<fs::path> files = tessera::model_test::npyFiles(calibration.origin);
  ASSERT_EQ(files.size(), 16u);
  for (const fs::path& f : files) calibration.samples.push_back({{g.inputs[0], tessera::compiler::io::readNpy(f.string())}});
  tessera::compiler::graph::CompileOptions options;
  options.calibration = &calibration;
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  const auto m = tessera::compiler::graph::compile(cfg, g, options);
  const auto placement = tessera::compiler::model::placementOf(m);
  EXPECT_GE(placement.acceleratorMacShare(), 0.99) << "share of the generator's MACs on the accelerator";
  // The zero insertion before each transposed convolution but the first is done by the layer
  // before's stores (a dilate, docs/graph.md), so the four layers run as one segment.
  EXPECT_EQ(m.segments.size(), 1u) << "accelerator segments";
  if (!tessera::model_test::targetBuilt(target, cfg)) GTEST_SKIP() << "target " << target << " is not built";

  tessera::runtime::Session session(target, cfg);
  tessera::compiler::model::ModelRunner runner(m, session);
  const tessera::model_test::FsimTwin fsim(target, m, cfg);
  std::mt19937 rng(2026);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Tensor latent;
  latent.name = g.inputs[0];
  latent.dtype = tessera::compiler::ir::DType::kFloat32;
  latent.shape = m.inputs.at(0).shape;
  latent.hasShape = true;
  double sum = 0, worst = 99, runSeconds = 0;
  uint64_t cycles = 0;
  for (int i = 0; i < samples; ++i) {
    latent.floats.resize(size_t(latent.elements()));
    for (float& v : latent.floats) v = normal(rng);
    const auto want = tessera::compiler::host::evaluate(g, {{g.inputs[0], latent}}).at(g.outputs[0]).floats;
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = runner.run({{g.inputs[0], latent}});
    runSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cycles = r.counters.cycles;
    if (fsim.runner) {
      EXPECT_EQ(r.outputs.at(g.outputs[0]).floats, fsim.runner->run({{g.inputs[0], latent}}).outputs.at(g.outputs[0]).floats)
          << "latent " << i;
    }
    const double p = psnr(r.outputs.at(g.outputs[0]).floats, want);
    sum += p;
    worst = std::min(worst, p);
  }
  const double mean = sum / samples;
  std::printf("generator on %s: %zu segment(s), %.1f%% of %llu MACs on the accelerator; PSNR against the float model "
              "mean %.2f dB, worst %.2f dB over %d latents; %s cycles per image; %.2f ms per run\n",
              target.c_str(), m.segments.size(), 100.0 * placement.acceleratorMacShare(),
              static_cast<unsigned long long>(placement.macs), mean, worst, samples,
              cycles ? std::to_string(cycles).c_str() : "-", 1e3 * runSeconds / samples);
  EXPECT_GE(mean, minPsnr) << "mean PSNR of the int8 generator against the float one";
}

}  // namespace
