// Running a compiled model: on a session's target (ModelRunner) or on the host alone (runReference), and what a run reports.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/compiler/ir/graph.h"
#include "tessera/compiler/model/compiled_model.h"
#include "tessera/hw/counters.h"
#include "tessera/hw/insn_trace.h"

namespace tessera::runtime {
class Session;
}

namespace tessera::compiler::model {

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
  std::map<std::string, ir::Tensor> outputs;  // by graph output name, the model's output dtype
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
void checkModelInputs(const CompiledModel& model, const std::map<std::string, ir::Tensor>& inputs);

// Runs the model on the host only: every accelerator layer by compiler::op::reference() (exactly the
// accelerator's integer arithmetic), host steps as on a target. Every target must match it bit for bit.
ModelRunResult runReference(const CompiledModel& model, const std::map<std::string, ir::Tensor>& inputs);

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
  ModelRunResult run(const std::map<std::string, ir::Tensor>& inputs, const RunOptions& options);
  ModelRunResult run(const std::map<std::string, ir::Tensor>& inputs, bool layerCycles = false) {
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

}  // namespace tessera::compiler::model
