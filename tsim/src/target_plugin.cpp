// The tsim target plugin: registers tsim, and rtl-sc and hls-sc where SystemC was built, with the runtime.
#include "tessera/runtime/target_plugin.h"
#include "tessera/tsim/simulator_target.h"

namespace {

namespace tsim = tessera::tsim;

// The RTL under Verilator, cycle-accurate, for the configs the build verilated: clocked by tsim's
// own loop (tsim) or hosted in the SystemC testbench (rtl-sc), or the HLS design in that testbench
// (hls-sc); same run protocol and counters.
std::string description(tsim::Engine engine) {
  const std::string names = tsim::builtConfigList(engine);
  if (engine == tsim::Engine::kSystemC)
    return "RTL in the SystemC testbench (Verilator --sc, cycle-accurate, same cycles as tsim; configs " + names +
           "; one SystemC kernel per process)";
  if (engine == tsim::Engine::kHlsSystemC)
    return "HLS design as clocked SystemC processes in the same testbench (cycle-approximate; configs " + names +
           "; one SystemC kernel per process)";
  return "RTL simulator (Verilator, cycle-accurate; configs " + names + ")";
}

}  // namespace

TESSERA_TARGET_PLUGIN(registrar) {
  // Waveforms come from tsim's own loop only.
  registrar.add(tsim::simulatorTargetInfo(tsim::Engine::kVerilator, description(tsim::Engine::kVerilator), true));
  // The SystemC engines only in builds that found SystemC (the manifest lists them then too).
  for (const tsim::Engine engine : {tsim::Engine::kSystemC, tsim::Engine::kHlsSystemC})
    if (!tsim::Simulator::builtConfigs(engine).empty())
      registrar.add(tsim::simulatorTargetInfo(engine, description(engine), false));
}
