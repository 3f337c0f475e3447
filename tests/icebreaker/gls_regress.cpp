// Random programs on the iCEBreaker bitstream's gate-level netlist (synth_ice40 as make bitstream-icebreaker runs it, verilated with Yosys' cell models) against fsim, through the icebreaker driver and the simulated UART.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "sim_board.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/regress/generator.h"
#include "tessera/regress/runner.h"
#include "tessera/runtime/icebreaker.h"

int main(int argc, char** argv) {
  namespace ib = tessera::runtime::icebreaker;
  namespace rg = tessera::regress;
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PROGRAMS SEED\n", argv[0]);
    return 2;
  }
  const int programs = std::atoi(argv[1]);
  const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  try {
    const tessera::hw::Config cfg = tessera::hw::Config::load(ib::kBoardConfig);
    std::vector<rg::TargetSpec> targets{rg::parseTargetSpec("fsim")};
    targets.push_back({"icebreaker-gls", [](const tessera::hw::Config& c, tessera::hw::Dram& dram) {
                         auto board = std::make_shared<tessera::icebreaker_sim::SimulatedBoard>();
                         return ib::makeTarget("icebreaker-gls", c, dram,
                                               std::make_unique<tessera::icebreaker_sim::SimChannel>(board),
                                               std::chrono::milliseconds(120000));
                       }});
    int mismatches = 0;
    for (int i = 0; i < programs; ++i) {
      const rg::Program p = rg::generate(cfg, seed + i, rg::Size::kSmall);
      const rg::Trial t = rg::runTrial(p, targets);
      if (t.mismatch) {
        ++mismatches;
        std::printf("seed %llu: %s\n%s\n", static_cast<unsigned long long>(seed + i), t.mismatch->summary.c_str(),
                    t.mismatch->detail.c_str());
      }
    }
    std::printf("gate-level netlist: %d programs, %d mismatches\n", programs, mismatches);
    return mismatches == 0 && programs > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gls_regress: %s\n", e.what());
    return 1;
  }
}
