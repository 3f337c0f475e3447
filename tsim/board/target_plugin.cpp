// The icebreaker-sim target plugin: the iCEBreaker board top verilated, driven through its UART host link by the same driver as the icebreaker target.
#include "sim_board.h"
#include "tessera/runtime/target_plugin.h"

TESSERA_TARGET_PLUGIN(registrar) {
  namespace ib = tessera::runtime::icebreaker;
  tessera::runtime::TargetInfo info;
  info.name = ib::kSimName;
  info.description = "the iCEBreaker board top (pico core + 128 KiB board memory + UART host link, the bitstream's "
                     "RTL) under Verilator, driven bit by bit through its UART lines (config pico; docs/fpga.md)";
  info.options = {{ib::kTimeoutKey, "seconds a run may take before it is reported as hung (default 60)"}};
  info.unsupportedReason = [](const tessera::hw::Config& cfg) { return ib::configProblem(cfg); };
  info.create = [](const tessera::hw::Config& cfg, tessera::hw::Dram& dram,
                   const tessera::runtime::TargetOptions& options) {
    const auto timeout = ib::timeoutOption(options);
    auto board = std::make_shared<tessera::icebreaker_sim::SimulatedBoard>();
    return ib::makeTarget(ib::kSimName, cfg, dram, std::make_unique<tessera::icebreaker_sim::SimChannel>(board),
                          timeout);
  };
  registrar.add(std::move(info));
}
