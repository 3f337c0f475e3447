// The simulated-board targets' registration (icebreaker-sim, icebreaker-sim-cov): the icebreaker driver over a SimulatedBoard.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim_board.h"
#include "tessera/runtime/target.h"

namespace tessera::icebreaker_sim {

// Builds a run's board model from the target's options.
using BoardModelFactory = std::function<std::unique_ptr<BoardModel>(const runtime::TargetOptions&)>;

// Target `name` (config pico only): each device is a SimulatedBoard over the model `makeModel` makes,
// reached through the icebreaker driver's UART protocol. Takes timeout=SECONDS and `extraOptions`.
runtime::TargetInfo simulatedBoardTarget(std::string name, std::string description,
                                         std::vector<std::pair<std::string, std::string>> extraOptions,
                                         BoardModelFactory makeModel);

}  // namespace tessera::icebreaker_sim
