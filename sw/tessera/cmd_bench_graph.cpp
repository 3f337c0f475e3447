// tessera bench resnet18's whole-network part: the real ResNet-18 graph through the graph compiler, run end to end.
#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "tessera/compiler/graph/compile.h"
#include "tessera/compiler/ir/resnet18.h"
#include "tessera/compiler/model/run.h"
#include "tessera/runtime/session.h"
#include "tessera/support/error.h"
#include "tessera/support/format.h"

namespace tessera::cli {

int benchResnet18Graph(runtime::Session& session, bool json) {
  const hw::Config& cfg = session.config();
  if (!json)
    std::printf("\nwhole network: ResNet-18 built as a float graph (seeded weights, BatchNorm folded), post-training "
                "quantized on one seeded image, compiled as one network\n");
  const auto t0 = std::chrono::steady_clock::now();
  compiler::ir::Graph g = compiler::ir::resnet18Graph(1);
  compiler::graph::Calibration calibration;
  calibration.origin = "seeded image";
  calibration.samples.push_back({{"data", compiler::ir::resnet18Input(7)}});
  compiler::graph::CompileOptions options;
  options.calibration = &calibration;
  const compiler::model::CompiledModel model = compiler::graph::compile(cfg, g, options);
  const double compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::map<std::string, compiler::ir::Tensor> input = {{"data", compiler::ir::resnet18Input(8)}};
  compiler::model::ModelRunner runner(model, session);
  const compiler::model::ModelRunResult r = runner.run(input, true);
  const compiler::model::ModelRunResult want = compiler::model::runReference(model, input);
  const bool ok = r.outputs.at("logits").floats == want.outputs.at("logits").floats;
  size_t accel = 0, host = 0;
  uint64_t macs = 0;
  for (const auto& l : model.layers) {
    (l.onAccelerator ? accel : host) += 1;
    if (l.onAccelerator) macs += l.macs;  // the utilization's numerator: what the GEMM core did
  }
  const double lanes = double(cfg.batch) * cfg.blockIn * cfg.blockOut;
  if (json) {
    nlohmann::json layers = nlohmann::json::array();
    for (size_t i = 0; i < model.layers.size(); ++i) {
      const auto& l = model.layers[i];
      nlohmann::json j = {{"name", l.name}, {"op", l.kind}, {"ran_on", l.onAccelerator ? "accelerator" : "host"}, {"macs", l.macs}};
      if (r.layers[i].cycles) {
        j["cycles"] = r.layers[i].cycles;
        if (l.macs) j["gemm_utilization"] = double(l.macs) / (double(r.layers[i].cycles) * lanes);
      }
      layers.push_back(j);
    }
    const nlohmann::json out = {{"benchmark", "resnet18"}, {"target", session.targetName()}, {"config", cfg.name},
                                {"layers_on_accelerator", accel}, {"host_steps", host}, {"segments", model.segments.size()},
                                {"macs", macs}, {"cycles", r.counters.cycles}, {"instructions", r.counters.totalInsns()},
                                {"run_seconds", r.seconds}, {"compile_seconds", compileSeconds},
                                {"bit_exact_with_host_reference", ok}, {"layers", layers}};
    std::printf("%s\n", out.dump(2).c_str());
    return ok ? 0 : 1;
  }
  std::printf("  %zu layers on the accelerator in %zu segment(s), %zu host steps (the float edges); %s MACs\n", accel,
              model.segments.size(), host, thousands(macs).c_str());
  if (r.counters.cycles)
    std::printf("  end to end: %s cycles, GEMM-core utilization %.1f%% of the whole network\n",
                thousands(r.counters.cycles).c_str(), 100.0 * double(macs) / (double(r.counters.cycles) * lanes));
  // The real graph's layers: the first convolution (C1) and the other convolutions (C2..C11's shapes).
  if (r.counters.cycles) {
    double c1Util = 0, restMacs = 0, restWeighted = 0;
    uint64_t c1Cycles = 0;
    bool first = true;
    for (size_t i = 0; i < model.layers.size(); ++i) {
      const auto& l = model.layers[i];
      const uint64_t cycles = r.layers[i].cycles;
      if (!l.onAccelerator || l.kind != "conv2d" || !cycles) continue;
      const double util = double(l.macs) / (double(cycles) * lanes);
      if (first) {
        c1Cycles = cycles;
        c1Util = util;
        first = false;
      } else {
        restMacs += double(l.macs);
        restWeighted += double(l.macs) * util;
      }
    }
    std::printf("  first convolution (C1, folded into channels): %s cycles, GEMM-core utilization %.1f%%; the other "
                "convolutions (C2..C11): MAC-weighted utilization %.1f%% (each layer run alone for its cycles)\n",
                thousands(c1Cycles).c_str(), 100.0 * c1Util, restMacs ? 100.0 * restWeighted / restMacs : 0.0);
  }
  std::printf("  %s instructions, run %.3f s wall on %s; compile (with calibration) %.3f s; check against the host "
              "reference: %s\n",
              thousands(r.counters.totalInsns()).c_str(), r.seconds, session.targetName().c_str(), compileSeconds,
              ok ? "bit-exact" : "MISMATCH");
  return ok ? 0 : 1;
}

}  // namespace tessera::cli
