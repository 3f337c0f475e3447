// Fuzz harness: arbitrary bytes as an ONNX model file, imported, then compiled whole for the default config with one calibration sample (the graph passes, partitioning, DRAM planning, linking).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/compiler/graph/compile.h"
#include "tessera/compiler/host/executor.h"
#include "tessera/compiler/onnx/import.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"

using namespace tessera;

namespace {

// Small enough to compile in well under a second: the harness is about the passes' handling of
// odd graphs, not the tiling search on large layers or calibrating with gigabytes of activations.
constexpr int64_t kMaxInputElements = 1 << 14;
constexpr int64_t kMaxConstantElements = 1 << 18;
constexpr int64_t kMaxTensorElements = 1 << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const hw::Config config = hw::Config::load("default");
  try {
    compiler::ir::Graph g = compiler::onnx::importOnnxBytes(std::vector<uint8_t>(data, data + size), "fuzz.onnx");
    compiler::host::inferShapes(g);
    if (g.inputs.size() != 1) return 0;
    compiler::ir::Tensor x = g.tensor(g.inputs[0]);
    if (!x.hasShape || x.dtype != compiler::ir::DType::kFloat32 || x.elements() <= 0 || x.elements() > kMaxInputElements)
      return 0;
    int64_t constants = 0;
    for (const auto& [name, t] : g.tensors) {
      if (!t.hasShape || t.elements() > kMaxTensorElements) return 0;
      if (t.isConstant) constants += t.elements() > 0 ? t.elements() : 0;
    }
    if (constants > kMaxConstantElements) return 0;
    // One sample: a ramp, so that every activation has a range.
    x.floats.resize(size_t(x.elements()));
    for (size_t i = 0; i < x.floats.size(); ++i) x.floats[i] = float(int(i % 17) - 8) / 8.0f;
    compiler::graph::Calibration calibration;
    calibration.origin = "fuzz";
    calibration.samples.push_back({{g.inputs[0], x}});
    compiler::graph::CompileOptions options;
    options.calibration = &calibration;
    compiler::graph::compile(config, g, options);
  } catch (const Error&) {
  }
  return 0;
}
