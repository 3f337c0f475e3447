// Model inputs and calibration samples read from files, for the model commands (cmd_graph.cpp) and explore.
#pragma once

#include <string>

#include "tessera/compiler/graph/compile.h"
#include "tessera/compiler/model/compiled_model.h"

namespace tessera::cli {

bool isOnnxFile(const std::string& path);
// An image, PGM/PNG or .npy file converted to what input `want` takes (float inputs get pixel / 255).
compiler::ir::Tensor readInputFile(const std::string& path, const compiler::ir::Tensor& want);
// A directory of .npy samples (sorted by name), a stacked .npy or an IDX image file: its first `count` samples.
compiler::graph::Calibration loadCalibration(const std::string& path, const compiler::model::CompiledModel& shape, int count);
// Input descriptions of an ONNX model, before compiling it (for reading calibration data).
compiler::model::CompiledModel describeInputs(const compiler::ir::Graph& g);

}  // namespace tessera::cli
