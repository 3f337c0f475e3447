// The iCEBreaker board top as the bitstream is built from it (or its netlist, for the gate-level regression), behind the harness.
#include "Vtessera_icebreaker_top__stamp.h"
#include "verilated_board_model.h"

namespace tessera::icebreaker_sim {

std::unique_ptr<BoardModel> makeRtlBoardModel() {
  return std::make_unique<VerilatedBoardModel<Vtessera_icebreaker_top>>();
}

SimulatedBoard::SimulatedBoard() : SimulatedBoard(makeRtlBoardModel()) {}

}  // namespace tessera::icebreaker_sim
