// One torchvision architecture from scripts/models/make_zoo.py: compiled from float with calibration, run whole on a target, its outputs against the float model's.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>

#include "tessera/compiler/graph/compile.h"
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

std::vector<size_t> topK(const std::vector<float>& v, size_t k) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), size_t(0));
  k = std::min(k, v.size());
  std::partial_sort(idx.begin(), idx.begin() + long(k), idx.end(), [&](size_t a, size_t b) { return v[a] > v[b]; });
  idx.resize(k);
  return idx;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
}

// TESSERA_ZOO_DIR holds the exported files, TESSERA_ZOO_ARCH names the architecture,
// TESSERA_ZOO_TARGET the target (fsim by default), TESSERA_ZOO_MIN_MAC_SHARE the share of MACs that
// must run on the accelerator, TESSERA_ZOO_MIN_COSINE the cosine similarity every output must reach
// (the 0.98 by default), TESSERA_ZOO_TOP5=0 leaves out the top-5 containment check (for an
// architecture documented as missing it), TESSERA_ZOO_MAX_SEGMENTS the most accelerator segments the
// compiled model may have (1 by default: only the edges on the host), TESSERA_ZOO_CALIBRATION how
// many calibration files to use, TESSERA_ZOO_CALIBRATION_METHOD how their ranges are taken (minmax
// by default).
TEST(ZooArchitecture, RunsWholeAndAgreesWithTheFloatModel) {
  const std::string dir = env("TESSERA_ZOO_DIR"), arch = env("TESSERA_ZOO_ARCH"), target = env("TESSERA_ZOO_TARGET", "fsim");
  ASSERT_FALSE(dir.empty() || arch.empty()) << "set TESSERA_ZOO_DIR and TESSERA_ZOO_ARCH (ctest does)";
  const fs::path model = fs::path(dir) / (arch + ".onnx");
  ASSERT_TRUE(fs::exists(model)) << model << " is missing: scripts/models/make_zoo.py writes it (ctest's fixture runs it)";
  const double minShare = std::atof(env("TESSERA_ZOO_MIN_MAC_SHARE", "0.99").c_str());
  const double minCosine = std::atof(env("TESSERA_ZOO_MIN_COSINE", "0.98").c_str());
  const bool checkTop5 = env("TESSERA_ZOO_TOP5", "1") != "0";
  const size_t maxSegments = size_t(std::atoi(env("TESSERA_ZOO_MAX_SEGMENTS", "1").c_str()));
  const size_t calibrationCount = size_t(std::atoi(env("TESSERA_ZOO_CALIBRATION", "8").c_str()));
  const std::string method = env("TESSERA_ZOO_CALIBRATION_METHOD", "minmax");

  const auto t0 = std::chrono::steady_clock::now();
  const auto g = tessera::compiler::onnx::importOnnx(model.string());
  ASSERT_EQ(g.inputs.size(), 1u);
  tessera::compiler::graph::Calibration calibration;
  calibration.origin = (fs::path(dir) / (arch + "_calib")).string();
  tessera::compiler::graph::parseCalibrationMethod(method, "TESSERA_ZOO_CALIBRATION_METHOD", calibration);
  std::vector<fs::path> files = tessera::model_test::npyFiles(calibration.origin);
  ASSERT_GE(files.size(), calibrationCount);
  files.resize(calibrationCount);
  for (const fs::path& f : files) calibration.samples.push_back({{g.inputs[0], tessera::compiler::io::readNpy(f.string())}});
  tessera::compiler::graph::CompileOptions options;
  options.calibration = &calibration;
  const tessera::hw::Config cfg = tessera::hw::Config::load(env("TESSERA_ZOO_CONFIG", "default"));
  const auto m = tessera::compiler::graph::compile(cfg, g, options);
  const double compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto placement = tessera::compiler::model::placementOf(m);

  if (!tessera::model_test::targetBuilt(target, cfg)) GTEST_SKIP() << "target " << target << " is not built";
  tessera::runtime::Session session(target, cfg);
  tessera::compiler::model::ModelRunner runner(m, session);
  double worstCosine = 1.0, runSeconds = 0;
  bool containedAll = true;
  size_t inputs = 0;
  for (;; ++inputs) {
    const fs::path in = fs::path(dir) / (arch + "_input_" + std::to_string(inputs) + ".npy");
    const fs::path ref = fs::path(dir) / (arch + "_float_" + std::to_string(inputs) + ".npy");
    if (!fs::exists(in)) break;
    const Tensor want = tessera::compiler::io::readNpy(ref.string());
    const auto r0 = std::chrono::steady_clock::now();
    const auto r = runner.run({{g.inputs[0], tessera::compiler::io::readNpy(in.string())}});
    runSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count();
    const std::vector<float>& got = r.outputs.at(g.outputs.at(0)).floats;
    ASSERT_EQ(got.size(), want.floats.size());
    const double c = cosine(got, want.floats);
    worstCosine = std::min(worstCosine, c);
    EXPECT_GE(c, minCosine) << arch << " input " << inputs << ": cosine similarity to the float model";
    const size_t floatTop1 = topK(want.floats, 1).at(0);
    const std::vector<size_t> top5 = topK(got, 5);
    const bool contained = std::find(top5.begin(), top5.end(), floatTop1) != top5.end();
    containedAll = containedAll && contained;
    if (checkTop5) {
      EXPECT_TRUE(contained) << arch << " input " << inputs << ": the float model's top-1 (" << floatTop1
                             << ") is not in Tessera's top-5";
    }
  }
  ASSERT_GT(inputs, 0u) << "no " << arch << "_input_0.npy";
  std::printf("zoo %s on %s: compiled in %.2f s (%zu calibration samples, %s); %zu segment(s); %zu of %zu layers and %.1f%% "
              "of MACs on the accelerator; worst cosine %.4f over %zu input(s); float top-1 in the top-5: %s; %.2f s per run\n",
              arch.c_str(), target.c_str(), compileSeconds, calibrationCount, method.c_str(), m.segments.size(), placement.acceleratorLayers,
              placement.layers, 100.0 * placement.acceleratorMacShare(), worstCosine, inputs, containedAll ? "always" : "NOT always",
              runSeconds / double(inputs));
  EXPECT_GE(placement.acceleratorMacShare(), minShare) << arch << ": share of MACs on the accelerator";
  EXPECT_LE(m.segments.size(), maxSegments) << arch << ": accelerator segments (host steps between them split the network)";
}

}  // namespace
