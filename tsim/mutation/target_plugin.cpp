// The tsim-mut target plugin: the RTL with Yosys-planted mutations, behind tsim's harness and run protocol.
#include "tessera/runtime/target_plugin.h"
#include "tessera/tsim/simulator_target.h"

namespace tsim = tessera::tsim;

TESSERA_TARGET_PLUGIN(registrar) {
  registrar.add(tsim::simulatorTargetInfo(
      tsim::Engine::kMutant,
      "RTL with planted mutations, one active per run (Yosys mutate, verilated; configs " +
          tsim::builtConfigList(tsim::Engine::kMutant) + "; needs mutant=N: docs/verification.md)",
      false));
}
