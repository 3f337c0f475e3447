// A verilated coverage model's counters, read and written the same way by every coverage model (tsim-cov, icebreaker-sim-cov).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <verilated.h>
#include <verilated_cov.h>

namespace tessera::tsim {

// How many coverage counters the verilated model whose symbol table is Syms has.
template <class Syms>
constexpr size_t coverageCounterCount() {
  return sizeof(Syms::__Vcoverage) / sizeof(Syms::__Vcoverage[0]);
}

// A running model's counters, by index.
template <class Syms, class Top>
std::vector<uint64_t> coverageCounts(const Top& top) {
  std::vector<uint64_t> counts(coverageCounterCount<Syms>());
  for (size_t i = 0; i < counts.size(); ++i) counts[i] = top.rootp->vlSymsp->__Vcoverage[i];
  return counts;
}

// A CoverageWriter (coverage_totals.h) for model Top: a fresh model's counters (32-bit, so
// saturated) hold the sums while Verilator writes every point's key and count.
template <class Top, class Syms>
void writeCoverageTotals(const std::vector<uint64_t>& sums, const std::string& path) {
  VerilatedContext ctx;
  Top top(&ctx, "TOP");
  for (size_t i = 0; i < coverageCounterCount<Syms>() && i < sums.size(); ++i)
    top.rootp->vlSymsp->__Vcoverage[i] =
        static_cast<uint32_t>(std::min<uint64_t>(sums[i], std::numeric_limits<uint32_t>::max()));
  ctx.coveragep()->write(path.c_str());
}

}  // namespace tessera::tsim
