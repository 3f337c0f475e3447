// The simulated-board targets' registration: the icebreaker driver over a SimulatedBoard of any board model.
#include "board_target.h"

namespace tessera::icebreaker_sim {

runtime::TargetInfo simulatedBoardTarget(std::string name, std::string description,
                                         std::vector<std::pair<std::string, std::string>> extraOptions,
                                         BoardModelFactory makeModel) {
  namespace ib = runtime::icebreaker;
  runtime::TargetInfo info;
  info.name = name;
  info.description = std::move(description);
  info.options = {{ib::kTimeoutKey, "seconds a run may take before it is reported as hung (default 60)"}};
  info.options.insert(info.options.end(), extraOptions.begin(), extraOptions.end());
  info.unsupportedReason = [](const hw::Config& cfg) { return ib::configProblem(cfg); };
  info.create = [name, makeModel](const hw::Config& cfg, hw::Dram& dram, const runtime::TargetOptions& options) {
    const auto timeout = ib::timeoutOption(options);
    auto board = std::make_shared<SimulatedBoard>(makeModel(options));
    return ib::makeTarget(name, cfg, dram, std::make_unique<SimChannel>(board), timeout);
  };
  return info;
}

}  // namespace tessera::icebreaker_sim
