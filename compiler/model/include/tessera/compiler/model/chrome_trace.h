// A model run as a Chrome trace-event file: layers, and each segment run's instructions per unit.
#pragma once

#include <string>

#include "tessera/compiler/model/compiled_model.h"
#include "tessera/compiler/model/run.h"

namespace tessera::compiler::model {

// The run as a Chrome trace-event file (JSON; opens in Perfetto or chrome://tracing). Process 1: one
// track of layers in execution order, each accelerator layer as long as its own cycles at
// `clockMhz` (run with layer cycles on a timed target), each host step as long as it took. With
// instruction spans, one more process per segment run, on the whole stream's cycles from where its
// first layer starts on the layer track: a track per unit (fetch, load, compute, its GEMM and ALU
// pipes, store; more where a unit's spans overlap, as load's do, so no track's slices overlap),
// each instruction a complete event named by its mnemonic, with its index, unit, layer and cycles. otherData says whether the instruction tracks are there, and why not.
std::string chromeTrace(const CompiledModel& model, const ModelRunResult& run, double clockMhz = 100.0);

}  // namespace tessera::compiler::model
