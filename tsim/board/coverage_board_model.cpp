// icebreaker-sim-cov's model: the iCEBreaker board top verilated with line, toggle and cover-point coverage, adding its counts to the process's total when it goes.
#include <algorithm>
#include <limits>
#include <vector>

#include <verilated_cov.h>

#include "Vtessera_icebreaker_top_cov__Syms.h"
#include "Vtessera_icebreaker_top_cov___024root.h"
#include "Vtessera_icebreaker_top_cov__stamp.h"
#include "coverage_board_model.h"
#include "coverage_totals.h"
#include "verilated_board_model.h"

namespace tessera::icebreaker_sim {

namespace {

using Top = Vtessera_icebreaker_top_cov;
constexpr size_t kCounters = sizeof(Vtessera_icebreaker_top_cov__Syms::__Vcoverage) /
                             sizeof(Vtessera_icebreaker_top_cov__Syms::__Vcoverage[0]);
// The file stem the process's counts go to (DIR/icebreaker-sim-cov_pico_HOST_PID.dat).
constexpr const char* kDesign = "icebreaker-sim-cov_pico";

// The totals as a coverage file: a fresh model's counters (32-bit, so saturated) hold them while
// Verilator writes every point's key and count.
void writeTotals(const std::vector<uint64_t>& sums, const std::string& path) {
  VerilatedContext ctx;
  Top top(&ctx, "TOP");
  for (size_t i = 0; i < kCounters && i < sums.size(); ++i)
    top.rootp->vlSymsp->__Vcoverage[i] =
        static_cast<uint32_t>(std::min<uint64_t>(sums[i], std::numeric_limits<uint32_t>::max()));
  ctx.coveragep()->write(path.c_str());
}

class CoverageBoardModel final : public VerilatedBoardModel<Top> {
 public:
  explicit CoverageBoardModel(const std::string& dir) { tsim::openCoverage(kDesign, dir, &writeTotals); }
  ~CoverageBoardModel() override {
    std::vector<uint64_t> counts(kCounters);
    for (size_t i = 0; i < kCounters; ++i) counts[i] = top().rootp->vlSymsp->__Vcoverage[i];
    tsim::addCoverage(kDesign, counts);
  }
};

}  // namespace

std::unique_ptr<BoardModel> makeCoverageBoardModel(const std::string& dir) {
  return std::make_unique<CoverageBoardModel>(dir);
}

}  // namespace tessera::icebreaker_sim
