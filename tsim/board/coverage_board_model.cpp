// icebreaker-sim-cov's model: the iCEBreaker board top verilated with line, toggle and cover-point coverage, adding its counts to the process's total when it goes.
#include "Vtessera_icebreaker_top_cov__Syms.h"
#include "Vtessera_icebreaker_top_cov___024root.h"
#include "Vtessera_icebreaker_top_cov__stamp.h"
#include "coverage_board_model.h"
#include "coverage_counters.h"
#include "coverage_totals.h"
#include "verilated_board_model.h"

namespace tessera::icebreaker_sim {

namespace {

using Top = Vtessera_icebreaker_top_cov;
using Syms = Vtessera_icebreaker_top_cov__Syms;
// The file stem the process's counts go to (DIR/icebreaker-sim-cov_pico_HOST_PID.dat).
constexpr const char* kDesign = "icebreaker-sim-cov_pico";

class CoverageBoardModel final : public VerilatedBoardModel<Top> {
 public:
  explicit CoverageBoardModel(const std::string& dir) {
    tsim::openCoverage(kDesign, dir, &tsim::writeCoverageTotals<Top, Syms>);
  }
  ~CoverageBoardModel() override { tsim::addCoverage(kDesign, tsim::coverageCounts<Syms>(top())); }
};

}  // namespace

std::unique_ptr<BoardModel> makeCoverageBoardModel(const std::string& dir) {
  return std::make_unique<CoverageBoardModel>(dir);
}

}  // namespace tessera::icebreaker_sim
