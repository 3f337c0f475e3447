// The compiled model: accelerator segments, host steps, constants, the memory plan and the per-layer table; its file format.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/compiler/ir/graph.h"
#include "tessera/hw/isa.h"

namespace tessera::compiler::model {

// What quantization changed in a tensor relative to the file's own semantics.
struct QuantizationNote {
  std::string tensor;
  std::string change;   // e.g. "uint8 zero point 0 -> int8 symmetric, scale x2.008"
  double maxAbsError = 0;  // bound on the real-valued error it adds
};

// One row of the per-layer table: an accelerator operator or a host operation.
struct LayerInfo {
  std::string name;       // the ONNX node(s) it came from
  std::string kind;       // conv2d, dense, add, maxpool, avgpool, or the host op type
  bool onAccelerator = false;
  int segment = -1;       // accelerator segment index
  uint32_t insnBegin = 0, insnEnd = 0;  // the layer's instructions within its segment's stream
  uint64_t macs = 0, paddedMacs = 0;
  uint64_t dramReadBytes = 0, dramWriteBytes = 0;
  double estimatedCycles = 0;
  std::string detail;     // the operator's description or the host node's label
  // Accelerator layers: what the host reference needs to recompute them (runReference).
  std::string spec;                  // Operator::spec()
  std::vector<std::string> tensors;  // activation inputs, then the output (graph tensor names)
  struct ConstantRange {
    std::string buffer;  // the program buffer's name ("weights", "bias", ...)
    uint32_t memType = 0;
    uint64_t offset = 0, bytes = 0;  // within CompiledModel::constantImage
  };
  std::vector<ConstantRange> constants;
};

// A region of a segment's DRAM: constants are written once per session, activations live in the arena.
struct SegmentTensor {
  std::string tensor;   // graph tensor name (int8 NCHW logically)
  uint64_t offset = 0;  // bytes into the arena
  int n = 1, c = 1, h = 1, w = 1, block = 1;  // logical NCHW extents and channel block of its packed layout
  uint64_t bytes = 0;
  std::vector<int64_t> shape;  // the graph tensor's own shape (e.g. [N,C] for a dense output)
};

// Instructions of several layers in one stream with one FINISH; dram_base is relative to a region.
struct Segment {
  std::vector<hw::Insn> insns;
  std::vector<int8_t> insnRegion;  // per instruction: 0 constants, 1 arena, -1 none
  std::vector<SegmentTensor> inputs, outputs;
  std::vector<int> layers;  // indices into CompiledModel::layers
};

// A host step: one graph node run by the host executor.
struct HostStep {
  ir::Node node;
};

struct Step {
  enum class Kind { kHost, kSegment } kind = Kind::kHost;
  int index = 0;  // into hostSteps or segments
  int layer = -1; // host steps: their LayerInfo
};

// The `quantization` of a float model compiled without calibration: every layer runs in float on
// the host.
inline constexpr const char kFloatOnHost[] = "float (host)";

// Everything needed to run a network on one config: programs, constants in DRAM layout, host
// operations, the memory plan, input/output descriptions.
struct CompiledModel {
  std::string configJson;
  std::string source;                       // the model file it was compiled from
  int64_t opset = 0;                        // of the host steps' ONNX nodes
  std::vector<ir::Tensor> inputs, outputs;  // descriptions (name, dtype, shape; no data)
  std::map<std::string, std::string> metadata;
  std::map<std::string, ir::Tensor> constants;  // host steps' constant inputs
  std::vector<uint8_t> constantImage;       // the segments' constants region, in DRAM layout
  uint64_t arenaBytes = 0;                  // activations region (liveness-planned)
  uint64_t arenaBytesWithoutReuse = 0;      // what it would be with one slot per tensor
  std::vector<Segment> segments;
  std::vector<HostStep> hostSteps;
  std::vector<Step> steps;
  std::vector<LayerInfo> layers;
  std::vector<QuantizationNote> quantizationNotes;
  std::string quantization;  // kFloatOnHost, "post-training int8 (...)", "QDQ ...", "QOperator ..."

  std::vector<uint8_t> serialize() const;
  static CompiledModel deserialize(const std::vector<uint8_t>& bytes, const std::string& origin);
  void save(const std::string& path, bool overwrite) const;
  static CompiledModel load(const std::string& path);
};

// Where a compiled model's layers run, for the labels of every report: layer counts and the
// multiply-accumulates of each side.
struct Placement {
  size_t layers = 0, acceleratorLayers = 0;
  uint64_t macs = 0, acceleratorMacs = 0;

  size_t hostLayers() const { return layers - acceleratorLayers; }
  double acceleratorMacShare() const { return macs ? double(acceleratorMacs) / double(macs) : 0.0; }
};
Placement placementOf(const CompiledModel& m);

// The whole network's accelerator cycles as the operator compiler's cost model predicts them, without
// simulating: its estimates for the accelerator layers' chosen tilings, summed (docs/explore.md
// compares it with tsim's count across the explored space).
double predictedCycles(const CompiledModel& m);

}  // namespace tessera::compiler::model
