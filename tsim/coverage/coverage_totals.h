// tsim-cov's counts: every coverage model that ran adds its counters to its config's total, which the process writes when it exits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::tsim {

// Writes a config's summed counters as a Verilator coverage file (the config's model provides it:
// it loads the sums into a fresh model's counters and has Verilator write them).
using CoverageWriter = void (*)(const std::vector<uint64_t>& sums, const std::string& path);

// A coverage model of `config` will add counts for `dir`: creates the directory, and arranges for
// DIR/tsim-cov_CONFIG_HOST_PID.dat to be written at exit. Throws tessera::Error if the directory
// cannot be made, or the process already writes that config's coverage to another one.
void openCoverage(const std::string& config, const std::string& dir, CoverageWriter writer);
// Adds one model's counters (by index, as its verilated class numbers them) to the config's total.
void addCoverage(const std::string& config, const std::vector<uint64_t>& counts);

}  // namespace tessera::tsim
