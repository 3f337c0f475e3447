// The icebreaker-sim-cov target plugin: icebreaker-sim over the board top verilated with coverage (needs coverage=DIR).
#include "board_target.h"
#include "coverage_board_model.h"
#include "tessera/runtime/target_plugin.h"
#include "tessera/support/error.h"

TESSERA_TARGET_PLUGIN(registrar) {
  namespace sim = tessera::icebreaker_sim;
  namespace ib = tessera::runtime::icebreaker;
  registrar.add(sim::simulatedBoardTarget(
      ib::kSimCoverageName,
      "icebreaker-sim with line, toggle and cover-point coverage of the board top, the pico core and the board "
      "modules (config pico; needs coverage=DIR: docs/verification.md)",
      {{"coverage", "DIR (required): the directory the process's coverage file goes to when it exits "
                    "(icebreaker-sim-cov_pico_HOST_PID.dat; tessera coverage report DIR reads them)"}},
      [](const tessera::runtime::TargetOptions& options) {
        const auto dir = options.find("coverage");
        if (dir == options.end() || dir->second.empty())
          throw tessera::Error(std::string("target ") + ib::kSimCoverageName,
                               "needs the directory its coverage goes to: target option coverage=DIR");
        return sim::makeCoverageBoardModel(dir->second);
      }));
}
