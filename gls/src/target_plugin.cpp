// The gls plugin: registers gls (the generic gate-level netlist) and gls-ice40 (the iCE40-mapped one) with the runtime.
#include "tessera/runtime/target_plugin.h"
#include "tessera/tsim/simulator_target.h"

namespace {

namespace tsim = tessera::tsim;

// A Yosys netlist of the RTL, verilated and clocked by tsim's harness: the same run protocol,
// registers and counters as tsim, so results and cycle counts compare with tsim's one for one.
std::string description(tsim::Engine engine) {
  const std::string what = engine == tsim::Engine::kGateLevel
                               ? "Yosys generic gate-level netlist of the RTL"
                               : "Yosys iCE40 netlist of the RTL (LUT4, carry, DFF and EBR cell models; multiplies in LUTs)";
  return what + " under Verilator, random power-up state (TESSERA_GLS_SEED), tsim's harness and cycles; configs " +
         tsim::builtConfigList(engine);
}

}  // namespace

TESSERA_TARGET_PLUGIN(registrar) {
  // The netlists are verilated without trace support: no waveform options.
  for (const tsim::Engine engine : {tsim::Engine::kGateLevel, tsim::Engine::kGateLevelIce40})
    if (!tsim::Simulator::builtConfigs(engine).empty())
      registrar.add(tsim::simulatorTargetInfo(engine, description(engine), false));
}
