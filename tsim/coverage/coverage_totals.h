// The coverage models' counts (tsim-cov, icebreaker-sim-cov): every model that ran adds its counters to its design's total, which the process writes when it exits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::tsim {

// Writes a design's summed counters as a Verilator coverage file (its model provides it: it loads
// the sums into a fresh model's counters and has Verilator write them).
using CoverageWriter = void (*)(const std::vector<uint64_t>& sums, const std::string& path);

// A coverage model of the design `design` (TARGET_CONFIG: tsim-cov_default, icebreaker-sim-cov_pico)
// will add counts for `dir`: creates the directory, and arranges for DIR/DESIGN_HOST_PID.dat to
// be written at exit. Throws tessera::Error if the directory cannot be made, or the process
// already writes that design's coverage to another one.
void openCoverage(const std::string& design, const std::string& dir, CoverageWriter writer);
// Adds one model's counters (by index, as its verilated class numbers them) to the design's total.
void addCoverage(const std::string& design, const std::vector<uint64_t>& counts);

}  // namespace tessera::tsim
