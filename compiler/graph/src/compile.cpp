// The graph compiler's driver: the passes in order, then partitioning, DRAM planning and linking.
#include <sstream>

#include "dram_plan.h"
#include "link.h"
#include "passes.h"
#include "partition.h"
#include "tessera/compiler/graph/compile.h"
#include "tessera/compiler/host/executor.h"
#include "tessera/compiler/op/print_after_all.h"
#include "tessera/support/error.h"

namespace tessera::compiler::graph {

using host::inferShapes;
using ir::Graph;
using ir::Tensor;
using model::CompiledModel;
using op::printDumpBanner;

namespace {

void dump(const CompileOptions& o, const char* pass, const Graph& g) {
  if (!o.printAfterAll) return;
  printDumpBanner(*o.printAfterAll, pass);
  *o.printAfterAll << g.print();
}

}  // namespace

void parseCalibrationMethod(const std::string& text, const std::string& where, Calibration& c) {
  if (text == "minmax" || text == "entropy" || text == "mse") {
    c.method = text == "minmax" ? CalibrationMethod::kMinMax
               : text == "entropy" ? CalibrationMethod::kEntropy
                                   : CalibrationMethod::kMse;
    return;
  }
  const std::string prefix = "percentile";
  if (text.compare(0, prefix.size(), prefix) != 0 || (text.size() > prefix.size() && text[prefix.size()] != ':'))
    throw Error(where, "unknown calibration method '" + text + "' (minmax, entropy, mse, percentile or percentile:P)");
  c.method = CalibrationMethod::kPercentile;
  if (text.size() <= prefix.size()) return;
  const std::string p = text.substr(prefix.size() + 1);
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(p, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != p.size() || p.empty() || !(v > 0 && v <= 100))
    throw Error(where, "percentile '" + p + "' must be a number above 0 and at most 100");
  c.percentile = v;
}

bool calibrationApplies(const Graph& g) {
  for (const ir::Node& n : g.nodes) {
    if (!n.domain.empty() || (n.opType != "Conv" && n.opType != "Gemm" && n.opType != "MatMul") || n.inputs.size() < 2)
      continue;
    const Tensor& w = g.tensor(n.inputs[1]);
    if (w.isConstant && w.dtype == ir::DType::kFloat32) return true;
  }
  return false;
}

CompiledModel compile(const hw::Config& cfg, Graph g, const CompileOptions& options) {
  CompiledModel m;
  m.configJson = cfg.toJson();
  m.source = g.origin;
  m.opset = g.opset;
  m.metadata = g.metadata;
  for (const std::string& in : g.inputs) {
    Tensor t = g.tensor(in);
    t.floats.clear();
    t.ints.clear();
    m.inputs.push_back(t);
  }
  inferShapes(g);
  dump(options, "shape inference", g);
  for (const std::string& out : g.outputs) {
    Tensor t = g.tensor(out);
    t.floats.clear();
    t.ints.clear();
    m.outputs.push_back(t);
  }
  detail::foldConstants(g);
  dump(options, "constant folding", g);
  if (options.calibration) {
    detail::transposedConvolutionsAsConvolutions(cfg, g, options.transposedConvolutions);
    dump(options, "transposed convolutions as convolutions", g);
  }
  detail::foldBatchNorm(g);
  dump(options, "BatchNorm folding", g);
  detail::spatialMeansAsPools(g);
  dump(options, "spatial means as pools", g);
  std::string kind;
  const bool quantized = detail::recognizeQuantized(cfg, g, m.quantizationNotes, kind);
  dump(options, "QDQ recognition", g);
  if (quantized) {
    m.quantization = kind;
  } else if (options.calibration) {
    detail::batchNormsAsDepthwise(g);
    dump(options, "BatchNorm as depthwise", g);
    detail::channelMixesAsMaps(cfg, g);
    dump(options, "channel mixes as maps", g);
    detail::rowProductsAsConvolutions(cfg, g);
    dump(options, "row products as convolutions", g);
    detail::activationProductsAsConvolutions(cfg, g);
    dump(options, "activation products as convolutions", g);
    detail::quantizeFloat(cfg, g, *options.calibration);
    const Calibration& c = *options.calibration;
    std::string method;
    if (c.method == CalibrationMethod::kPercentile) {
      std::ostringstream p;
      p << ", percentile " << c.percentile;
      method = p.str();
    } else if (c.method == CalibrationMethod::kEntropy) {
      method = ", entropy";
    } else if (c.method == CalibrationMethod::kMse) {
      method = ", mse";
    }
    m.quantization = "post-training int8 (" + std::to_string(c.samples.size()) + " calibration samples" + method + ")";
    dump(options, "quantization and fusion", g);
  } else {
    m.quantization = model::kFloatOnHost;
  }
  if (options.foldNarrowInput) {
    detail::foldNarrowInputs(cfg, g);
    dump(options, "narrow-input fold", g);
  }
  if (options.fuseResidualAdds && detail::fuseResidualAdds(g) > 0) dump(options, "residual fusion", g);
  const detail::Partition p = detail::partition(cfg, g, m, options.printAfterAll);
  const detail::DramPlan plan = detail::planDram(cfg, g, p, m, options.printAfterAll);
  detail::link(cfg, g, p, plan, m, options.printAfterAll);
  // Calibrated, but nothing went to the accelerator: say what really runs.
  if (options.calibration && m.segments.empty() && m.quantization.rfind("post-training", 0) == 0)
    m.quantization = std::string(model::kFloatOnHost) + ": no layer fits the accelerator, the calibration was not used";
  // Outputs that folded to constants are answered from the model's constants.
  for (const std::string& out : g.outputs)
    if (g.tensor(out).isConstant) m.constants[out] = g.tensor(out);
  return m;
}

}  // namespace tessera::compiler::graph
