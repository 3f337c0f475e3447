// icebreaker-sim-cov's board model: the board top with coverage, counting into a directory.
#pragma once

#include <memory>
#include <string>

#include "sim_board.h"

namespace tessera::icebreaker_sim {

// The board top verilated with coverage; the process writes its counts (every such model's, added)
// to DIR/icebreaker-sim-cov_pico_HOST_PID.dat when it exits. Throws tessera::Error if DIR cannot be
// made or this process already counts into another directory.
std::unique_ptr<BoardModel> makeCoverageBoardModel(const std::string& dir);

}  // namespace tessera::icebreaker_sim
