// The icebreaker-sim-cov target plugin: icebreaker-sim over the board top verilated with coverage (needs coverage=DIR).
#include "coverage_board_model.h"
#include "sim_board.h"
#include "tessera/runtime/target_plugin.h"
#include "tessera/support/error.h"

TESSERA_TARGET_PLUGIN(registrar) {
  namespace ib = tessera::runtime::icebreaker;
  tessera::runtime::TargetInfo info;
  info.name = ib::kSimCoverageName;
  info.description = "icebreaker-sim with line, toggle and cover-point coverage of the board top, the pico core and "
                     "the board modules (config pico; needs coverage=DIR: docs/verification.md)";
  info.options = {{ib::kTimeoutKey, "seconds a run may take before it is reported as hung (default 60)"},
                  {"coverage", "DIR (required): the directory the process's coverage file goes to when it exits "
                               "(icebreaker-sim-cov_pico_HOST_PID.dat; tessera coverage report DIR reads them)"}};
  info.unsupportedReason = [](const tessera::hw::Config& cfg) { return ib::configProblem(cfg); };
  info.create = [](const tessera::hw::Config& cfg, tessera::hw::Dram& dram,
                   const tessera::runtime::TargetOptions& options) {
    const auto timeout = ib::timeoutOption(options);
    const auto dir = options.find("coverage");
    if (dir == options.end() || dir->second.empty())
      throw tessera::Error(std::string("target ") + ib::kSimCoverageName,
                           "needs the directory its coverage goes to: target option coverage=DIR");
    auto board = std::make_shared<tessera::icebreaker_sim::SimulatedBoard>(
        tessera::icebreaker_sim::makeCoverageBoardModel(dir->second));
    return ib::makeTarget(ib::kSimCoverageName, cfg, dram,
                          std::make_unique<tessera::icebreaker_sim::SimChannel>(board), timeout);
  };
  registrar.add(std::move(info));
}
