// The trained shapes detector (scripts/models/train_detector.py): mAP@0.5 of the calibrated int8 model on a target against the float model's, over the evaluation set.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/compiler/detection/grid_detector.h"
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
namespace det = tessera::compiler::detection;
using tessera::compiler::ir::DType;
using tessera::compiler::ir::Tensor;

// Image i of a uint8 [N,3,H,W] stack as the model's input: float pixel/255.
Tensor imageInput(const Tensor& stack, int64_t i, const std::string& name) {
  Tensor t;
  t.name = name;
  t.dtype = DType::kFloat32;
  t.shape = {1, stack.shape[1], stack.shape[2], stack.shape[3]};
  t.hasShape = true;
  const int64_t per = t.elements();
  for (int64_t k = 0; k < per; ++k) t.floats.push_back(float(stack.ints[size_t(i * per + k)]) / 255.0f);
  return t;
}

// Scores down to 0.05 and NMS at 0.45, as train_detector.py evaluates the float model.
constexpr float kScoreThreshold = 0.05f, kNmsIou = 0.45f, kMatchIou = 0.5f;

// TESSERA_DETECTOR_DIR holds the model and its calibration images, TESSERA_DETECTOR_EVAL the
// evaluation set (train_detector.py --eval-set); the first TESSERA_DETECTOR_IMAGES of it run on
// TESSERA_DETECTOR_TARGET; the int8 mAP@0.5 must be within TESSERA_DETECTOR_MAX_DROP points of the
// float model's (the 2). Over the whole set the host's float mAP must also be PyTorch's
// (detector.json), so the float side is the model as trained.
TEST(Detector, QuantizedMapIsWithinTwoPointsOfTheFloatModel) {
  const fs::path dir = env("TESSERA_DETECTOR_DIR"), evalDir = env("TESSERA_DETECTOR_EVAL");
  const std::string target = env("TESSERA_DETECTOR_TARGET", "fsim");
  const int64_t wanted = std::atoll(env("TESSERA_DETECTOR_IMAGES", "200").c_str());
  const double maxDrop = std::atof(env("TESSERA_DETECTOR_MAX_DROP", "2.0").c_str());
  ASSERT_TRUE(fs::exists(dir / "detector.onnx")) << "set TESSERA_DETECTOR_DIR (ctest does)";
  ASSERT_TRUE(fs::exists(evalDir / "eval_images.npy")) << "set TESSERA_DETECTOR_EVAL (ctest's fixture writes it)";
  const auto g = tessera::compiler::onnx::importOnnx((dir / "detector.onnx").string());
  const Tensor images = tessera::compiler::io::readNpy((evalDir / "eval_images.npy").string());
  const Tensor truthRows = tessera::compiler::io::readNpy((evalDir / "eval_boxes.npy").string());
  const int64_t count = std::min(wanted, images.shape[0]);

  const Tensor calib = tessera::compiler::io::readNpy((dir / "calib.npy").string());
  tessera::compiler::graph::Calibration calibration;
  calibration.origin = (dir / "calib.npy").string();
  for (int64_t i = 0; i < calib.shape[0]; ++i) calibration.samples.push_back({{g.inputs[0], imageInput(calib, i, g.inputs[0])}});
  tessera::compiler::graph::CompileOptions options;
  options.calibration = &calibration;
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  const auto m = tessera::compiler::graph::compile(cfg, g, options);
  const auto placement = tessera::compiler::model::placementOf(m);
  EXPECT_GE(placement.acceleratorMacShare(), 0.99) << "share of the detector's MACs on the accelerator";
  // The neck's Resize and Concat cost no instructions: the layers before store into their places.
  EXPECT_EQ(m.segments.size(), 1u) << "the detector runs as one accelerator segment";
  if (!tessera::model_test::targetBuilt(target, cfg)) GTEST_SKIP() << "target " << target << " is not built";

  std::vector<det::ImageBoxes> truth, floatBoxes, quantBoxes;
  for (int64_t r = 0; r < truthRows.shape[0]; ++r) {
    const float* row = &truthRows.floats[size_t(r * 6)];
    if (int64_t(row[0]) >= count) continue;
    if (truth.empty() || truth.back().image != int64_t(row[0])) truth.push_back({int64_t(row[0]), {}});
    truth.back().boxes.push_back(det::Box{int64_t(row[1]), 1.0f, row[2], row[3], row[4], row[5]});
  }
  tessera::runtime::Session session(target, cfg);
  tessera::compiler::model::ModelRunner runner(m, session);
  const tessera::model_test::FsimTwin fsim(target, m, cfg);
  const std::string out = g.outputs.at(0);
  double runSeconds = 0;
  uint64_t cycles = 0;
  for (int64_t i = 0; i < count; ++i) {
    const Tensor in = imageInput(images, i, g.inputs[0]);
    const Tensor f = tessera::compiler::host::evaluate(g, {{g.inputs[0], in}}).at(out);
    const auto layout = det::gridLayout(f, in.shape[2], in.shape[3], "output");
    floatBoxes.push_back({i, det::nonMaxSuppression(det::decodeGrid(f, layout, kScoreThreshold), kNmsIou)});
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = runner.run({{g.inputs[0], in}});
    runSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cycles = r.counters.cycles;
    if (fsim.runner) {
      EXPECT_EQ(r.outputs.at(out).floats, fsim.runner->run({{g.inputs[0], in}}).outputs.at(out).floats) << "image " << i;
    }
    quantBoxes.push_back({i, det::nonMaxSuppression(det::decodeGrid(r.outputs.at(out), layout, kScoreThreshold), kNmsIou)});
  }
  const int64_t classes = det::gridLayout(tessera::compiler::host::evaluate(g, {{g.inputs[0], imageInput(images, 0, g.inputs[0])}}).at(out),
                                          images.shape[2], images.shape[3], "output").classes;
  const double floatMap = det::meanAveragePrecision(floatBoxes, truth, classes, kMatchIou);
  const double quantMap = det::meanAveragePrecision(quantBoxes, truth, classes, kMatchIou);
  std::printf("detector on %s: %zu segment(s), %.1f%% of %llu MACs on the accelerator; mAP@0.5 over %lld images: float %.2f, "
              "Tessera int8 %.2f (%+.2f points); %s cycles per image; %.2f ms per run\n",
              target.c_str(), m.segments.size(), 100.0 * placement.acceleratorMacShare(),
              static_cast<unsigned long long>(placement.macs), static_cast<long long>(count), 100 * floatMap, 100 * quantMap,
              100 * (quantMap - floatMap), cycles ? std::to_string(cycles).c_str() : "-", 1e3 * runSeconds / double(count));
  EXPECT_GE(100 * quantMap, 100 * floatMap - maxDrop) << "int8 mAP@0.5 against the float model's";
  if (count == 1000) {
    std::ifstream f(dir / "detector.json");
    const auto trained = nlohmann::json::parse(f);
    EXPECT_NEAR(floatMap, trained.at("float_map50").get<double>(), 0.002) << "the host's float mAP against PyTorch's";
  }
}

}  // namespace
