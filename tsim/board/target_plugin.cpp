// The icebreaker-sim target plugin: the iCEBreaker board top verilated, driven through its UART host link by the same driver as the icebreaker target.
#include "board_target.h"
#include "tessera/runtime/target_plugin.h"

TESSERA_TARGET_PLUGIN(registrar) {
  namespace sim = tessera::icebreaker_sim;
  registrar.add(sim::simulatedBoardTarget(
      tessera::runtime::icebreaker::kSimName,
      "the iCEBreaker board top (pico core + 128 KiB board memory + UART host link, the bitstream's RTL) under "
      "Verilator, driven bit by bit through its UART lines (config pico; docs/fpga.md)",
      {}, [](const tessera::runtime::TargetOptions&) { return sim::makeRtlBoardModel(); }));
}
