// The graph compiler: an imported graph through its passes to a compiled model.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "tessera/compiler/ir/graph.h"
#include "tessera/compiler/model/compiled_model.h"
#include "tessera/hw/config.h"

namespace tessera::compiler::graph {

// Sample inputs for post-training quantization: each sample maps every graph input to a tensor.
// How an activation's range is taken from the calibration samples (docs/graph.md compares them):
// the largest magnitude seen (kMinMax); the magnitude below which `percentile` percent of all
// values seen lie (kPercentile), which clips rare outliers for a finer step; or the clipping whose
// 128-level quantization keeps the distribution of magnitudes closest in KL divergence (kEntropy);
// or the clipping with the least expected squared quantization error (kMse).
enum class CalibrationMethod { kMinMax, kPercentile, kEntropy, kMse };

struct Calibration {
  std::vector<std::map<std::string, ir::Tensor>> samples;
  std::string origin;  // where the samples came from, for diagnostics
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 99.99;
};

// "minmax", "entropy", "mse", or "percentile" with an optional ":P" (0 < P <= 100, default 99.99).
// Throws tessera::Error naming `where` for anything else.
void parseCalibrationMethod(const std::string& text, const std::string& where, Calibration& c);

// How a ConvTranspose becomes a convolution (docs/graph.md): whichever the cost model estimates
// faster, or always over the zero-inserted input, or as stride phases where they apply.
enum class TransposedConvolutionForm { kCostModel, kZeroInsertion, kStridePhases };

struct CompileOptions {
  std::ostream* printAfterAll = nullptr;  // each pass's graph after it runs
  // Float models are quantized with it; without it, a float model's operators run on the host.
  const Calibration* calibration = nullptr;
  bool foldNarrowInput = true;  // fold a 1- to 3-channel first convolution's kernel into its channels
  bool fuseResidualAdds = true;  // run a residual add in its convolution's epilogue (docs/graph.md)
  TransposedConvolutionForm transposedConvolutions = TransposedConvolutionForm::kCostModel;
};

// Whether `g` has float convolutions or matrix products with constant weights, which post-training
// quantization takes to the accelerator: compiled without a calibration, they run in float on the
// host (quantization model::kFloatOnHost).
bool calibrationApplies(const ir::Graph& g);

// Runs the passes (docs/graph.md), then partitions the graph, plans DRAM and links every accelerator
// segment. Throws tessera::Error naming the node, tensor or file on anything it cannot compile.
model::CompiledModel compile(const hw::Config& cfg, ir::Graph g, const CompileOptions& options = CompileOptions());

}  // namespace tessera::compiler::graph
