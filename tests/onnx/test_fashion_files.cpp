// The shipped Fashion-MNIST QDQ and QOperator files (uint8 asymmetric activations): every target bit-exact with the host reference, and within one step of the files' own semantics.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "tessera/compiler/graph/compile.h"
#include "tessera/compiler/host/executor.h"
#include "tessera/compiler/io/tensor_io.h"
#include "tessera/compiler/model/run.h"
#include "tessera/compiler/onnx/import.h"
#include "tessera/hw/config.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/target.h"

namespace {

using tessera::compiler::ir::Tensor;

bool built(const std::string& target, const tessera::hw::Config& cfg) {
  for (const auto* t : tessera::runtime::availableTargets())
    if (t->name == target) return t->supports(cfg);
  return false;
}

// Test images 0..count-1 as the model takes them: [1, 1, 28, 28] float, pixel / 255.
std::vector<Tensor> images(int count) {
  const auto idx = tessera::compiler::io::readIdxImages("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz");
  std::vector<Tensor> out;
  for (int i = 0; i < count && i < idx.count; ++i) {
    Tensor t;
    t.name = "image";
    t.shape = {1, 1, 28, 28};
    t.hasShape = true;
    for (int64_t p = 0; p < 28 * 28; ++p) t.floats.push_back(float(idx.pixels[size_t(i) * 784 + size_t(p)]) / 255.0f);
    out.push_back(t);
  }
  return out;
}

class FashionFile : public ::testing::TestWithParam<std::string> {};

// A uint8 tensor with zero point z is held exactly as int8 q - 128 (zero point z - 128): the
// convolutions, the dense layer and the residual add take zero points, so nothing is widened and
// the logits stay within one step of the file's semantics (before exact zero points, the QOperator
// file's ReLU outputs lost a bit each: 95.7% within one step). The compiled model is bit-exact
// with its host reference on every target.
TEST_P(FashionFile, EveryTargetIsBitExactAndWithinOneStepOfTheFile) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/models/fashion_mnist/fashion_cnn_" + GetParam() + ".onnx";
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const auto g = tessera::compiler::onnx::importOnnx(path);
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");
  const auto m = tessera::compiler::graph::compile(cfg, g);
  EXPECT_EQ(m.segments.size(), 1u);
  for (const auto& note : m.quantizationNotes) ADD_FAILURE() << "widened: " << note.tensor << ": " << note.change;
  const std::string out = g.outputs.at(0);
  // The logits' step: the scale of the last DequantizeLinear (the quantized tensor they come from).
  float step = 0;
  for (const auto& n : g.nodes)
    if (n.opType == "DequantizeLinear" && g.tensor(n.inputs.at(1)).isConstant) step = g.tensor(n.inputs[1]).floats.at(0);
  ASSERT_GT(step, 0.0f);
  size_t within = 0, total = 0;
  const auto inputs = images(24);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::map<std::string, Tensor> in = {{g.inputs.at(0), inputs[i]}};
    const auto file = tessera::compiler::host::evaluate(g, in).at(out).floats;
    const auto reference = tessera::compiler::model::runReference(m, in).outputs.at(out).floats;
    ASSERT_EQ(reference.size(), file.size());
    for (size_t k = 0; k < file.size(); ++k, ++total)
      within += std::fabs(reference[k] - file[k]) <= step * 1.0001f;
    EXPECT_EQ(std::max_element(reference.begin(), reference.end()) - reference.begin(),
              std::max_element(file.begin(), file.end()) - file.begin())
        << "image " << i << ": top-1 differs from the file's";
    if (i >= 2) continue;  // every target on the first images
    for (const std::string target : {"fsim", "tsim", "hls", "hls-sc", "rtl-sc"}) {
      if (!built(target, cfg)) continue;
      tessera::runtime::Session session(target, cfg);
      tessera::compiler::model::ModelRunner runner(m, session);
      EXPECT_EQ(runner.run(in).outputs.at(out).floats, reference) << target << ", image " << i;
    }
  }
  std::printf("%s: %zu of %zu logits within one step of the file's semantics\n", GetParam().c_str(), within, total);
  EXPECT_GE(double(within), 0.99 * double(total));
}

INSTANTIATE_TEST_SUITE_P(Models, FashionFile, ::testing::Values("qdq", "qop"));

}  // namespace

// Where the layers run, as every report labels it: the host's convolutions and Gemm count their
// multiply-accumulates as the accelerator's layers do, so an all-host float model is 0% on the
// accelerator, not 100% of nothing.
TEST(FashionPlacement, HostLayersCountTheirMacs) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/models/fashion_mnist/fashion_cnn.onnx";
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const auto g = tessera::compiler::onnx::importOnnx(path);
  const tessera::hw::Config cfg = tessera::hw::Config::load("default");

  tessera::compiler::graph::Calibration calibration;
  calibration.origin = "test images";
  for (const Tensor& t : images(4)) calibration.samples.push_back({{"image", t}});
  tessera::compiler::graph::CompileOptions options;
  options.calibration = &calibration;
  const auto placed = tessera::compiler::model::placementOf(tessera::compiler::graph::compile(cfg, g, options));
  EXPECT_GT(placed.acceleratorLayers, 0u);
  EXPECT_LT(placed.acceleratorLayers, placed.layers);  // the quantize and dequantize edges stay on the host
  EXPECT_EQ(placed.acceleratorMacs, 1257536u);          // the demo's figure (README)
  EXPECT_EQ(placed.macs, placed.acceleratorMacs);

  const auto host = tessera::compiler::graph::compile(cfg, g);
  EXPECT_EQ(host.quantization, tessera::compiler::model::kFloatOnHost);
  const auto onHost = tessera::compiler::model::placementOf(host);
  EXPECT_EQ(onHost.acceleratorLayers, 0u);
  EXPECT_EQ(onHost.hostLayers(), host.layers.size());
  EXPECT_EQ(onHost.macs, placed.acceleratorMacs);  // the same convolutions and Gemm, counted on the host
  EXPECT_EQ(onHost.acceleratorMacShare(), 0.0);
}
