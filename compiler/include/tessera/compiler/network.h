// The graph compiler: an imported graph through its passes to a compiled model, and the model's runner.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tessera/compiler/graph.h"
#include "tessera/hw/config.h"
#include "tessera/hw/counters.h"
#include "tessera/hw/insn_trace.h"
#include "tessera/hw/isa.h"

namespace tessera::runtime {
class Session;
}

namespace tessera::compiler {

// Sample inputs for post-training quantization: each sample maps every graph input to a tensor.
struct Calibration {
  std::vector<std::map<std::string, graph::Tensor>> samples;
  std::string origin;  // where the samples came from, for diagnostics
};

struct NetworkOptions {
  std::ostream* printAfterAll = nullptr;  // each pass's graph after it runs
  // Float models are quantized with it; without it, a float model's operators run on the host.
  const Calibration* calibration = nullptr;
  bool foldNarrowInput = true;  // fold a 1- to 3-channel first convolution's kernel into its channels
  bool fuseResidualAdds = true;  // run a residual add in its convolution's epilogue (docs/graph.md)
};

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
  graph::Node node;
};

struct Step {
  enum class Kind { kHost, kSegment } kind = Kind::kHost;
  int index = 0;  // into hostSteps or segments
  int layer = -1; // host steps: their LayerInfo
};

// Everything needed to run a network on one config: programs, constants in DRAM layout, host
// operations, the memory plan, input/output descriptions.
struct CompiledModel {
  std::string configJson;
  std::string source;                       // the model file it was compiled from
  int64_t opset = 0;                        // of the host steps' ONNX nodes
  std::vector<graph::Tensor> inputs, outputs;  // descriptions (name, dtype, shape; no data)
  std::map<std::string, std::string> metadata;
  std::map<std::string, graph::Tensor> constants;  // host steps' constant inputs
  std::vector<uint8_t> constantImage;       // the segments' constants region, in DRAM layout
  uint64_t arenaBytes = 0;                  // activations region (liveness-planned)
  uint64_t arenaBytesWithoutReuse = 0;      // what it would be with one slot per tensor
  std::vector<Segment> segments;
  std::vector<HostStep> hostSteps;
  std::vector<Step> steps;
  std::vector<LayerInfo> layers;
  std::vector<QuantizationNote> quantizationNotes;
  std::string quantization;  // "float (host)", "post-training int8", "QDQ", "QOperator"

  std::vector<uint8_t> serialize() const;
  static CompiledModel deserialize(const std::vector<uint8_t>& bytes, const std::string& origin);
  void save(const std::string& path, bool overwrite) const;
  static CompiledModel load(const std::string& path);
};

// Runs the passes (docs/graph.md) and lowers every accelerator segment. Throws tessera::Error
// naming the node, tensor or file on anything it cannot compile.
CompiledModel compileNetwork(const hw::Config& cfg, graph::Graph g, const NetworkOptions& options = NetworkOptions());

// The graph after quantization, for host-side reference runs of exactly what the accelerator
// computes is CompiledModel itself; `floatReference` evaluates the original float graph.

struct LayerTiming {
  uint64_t cycles = 0;        // timed targets, when asked: the layer's own instructions run alone
  double hostMicros = 0;      // host steps
};

// One accelerator segment's whole-stream run, instruction by instruction (timed targets).
struct SegmentSpans {
  int segment = 0;
  hw::RunSpans run;  // its cycles and every instruction's spans (fetch and the unit that ran it)
  std::vector<int> insnLayer;  // per instruction: its CompiledModel::layers index (LayerInfo's insnBegin/insnEnd), -1 if none
};

struct ModelRunResult {
  std::map<std::string, graph::Tensor> outputs;  // by graph output name, the model's output dtype
  std::vector<LayerTiming> layers;               // parallel to CompiledModel::layers
  hw::Counters counters;                         // all segments of this run
  double seconds = 0;                            // whole run, wall clock
  double segmentSeconds = 0;                     // of it, inside the target's whole-segment runs
  // RunOptions::instructionSpans: whether the target reported them (timed targets do), and then
  // one entry per segment run, in execution order.
  enum class Spans { kNotAsked, kUnsupported, kRecorded } spans = Spans::kNotAsked;
  std::vector<SegmentSpans> segments;
};

// What ModelRunner::run does besides computing the outputs.
struct RunOptions {
  // Timed targets: each accelerator layer's instructions run again alone (a FINISH in place of
  // the link to the next layer), giving LayerTiming::cycles.
  bool layerCycles = false;
  // Timed targets: each segment's whole-stream run records every instruction's spans
  // (ModelRunResult::segments); untimed ones record nothing (ModelRunResult::spans says which).
  bool instructionSpans = false;
};

// Checks that `inputs` are exactly the model's inputs, each with its shape, type and number of
// values; throws tessera::Error naming the model and the input otherwise.
void checkModelInputs(const CompiledModel& model, const std::map<std::string, graph::Tensor>& inputs);

// Runs the model on the host only: every accelerator layer by compiler::reference() (exactly the
// accelerator's integer arithmetic), host steps as on a target. Every target must match it bit for bit.
ModelRunResult runReference(const CompiledModel& model, const std::map<std::string, graph::Tensor>& inputs);

// The run as a Chrome trace-event file (JSON; opens in Perfetto or chrome://tracing). Process 1: one
// track of layers in execution order, each accelerator layer as long as its own cycles at
// `clockMhz` (run with layer cycles on a timed target), each host step as long as it took. With
// instruction spans, one more process per segment run, on the whole stream's cycles from where its
// first layer starts on the layer track: a track per unit (fetch, load, compute, its GEMM and ALU
// pipes, store; more where a unit's spans overlap, as load's do, so no track's slices overlap),
// each instruction a complete event named by its mnemonic, with its index, unit, layer and cycles. otherData says whether the instruction tracks are there, and why not.
std::string chromeTrace(const CompiledModel& model, const ModelRunResult& run, double clockMhz = 100.0);

// One accelerator segment as the device sees it, for tools that replay or inspect what it runs
// (tessera run --export-sim): every DRAM region its stream reads or writes, at its physical address,
// with a host view of its bytes that is valid during the observer's call.
struct SegmentRunView {
  struct Region {
    std::string name;  // "constants", "arena", "instructions", or an output's tensor name
    uint64_t phys = 0;
    const uint8_t* host = nullptr;
    uint64_t bytes = 0;
  };
  int segment = 0;
  std::vector<Region> regions;  // constants, arena (inputs packed in), instructions; disjoint
  uint64_t insnPhys = 0;
  uint32_t insnCount = 0;
  std::vector<Region> outputs;  // the segment's output tensors, packed, inside the arena
};
// Called with finished == false just before a segment's stream starts, and with true once it has run.
using SegmentObserver = std::function<void(const SegmentRunView& view, bool finished)>;

// A compiled model loaded into a session: constants written and instructions relocated once.
class ModelRunner {
 public:
  ModelRunner(const CompiledModel& model, runtime::Session& session);
  ~ModelRunner();
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  // Inputs by graph input name; float32 inputs of an int8 model are quantized on the host. Throws
  // naming the input if one is missing, unknown, or has the wrong shape or dtype. RunOptions say
  // what else to measure; the answer and ModelRunResult::counters come from the whole-segment
  // runs either way.
  ModelRunResult run(const std::map<std::string, graph::Tensor>& inputs, const RunOptions& options);
  ModelRunResult run(const std::map<std::string, graph::Tensor>& inputs, bool layerCycles = false) {
    RunOptions o;
    o.layerCycles = layerCycles;
    return run(inputs, o);
  }

  // Every later run calls `observer` around each whole-segment run (not around the per-layer
  // re-runs for cycles); an empty function removes it.
  void observeSegments(SegmentObserver observer);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::compiler
