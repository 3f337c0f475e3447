// The tsim-cov target plugin: the RTL verilated with coverage, behind tsim's harness and run protocol.
#include "tessera/runtime/target_plugin.h"
#include "tessera/tsim/simulator_target.h"

namespace tsim = tessera::tsim;

TESSERA_TARGET_PLUGIN(registrar) {
  registrar.add(tsim::simulatorTargetInfo(
      tsim::Engine::kCoverage,
      "RTL simulator with line, toggle and cover-point coverage (Verilator; the same cycles as tsim, several times "
      "slower; configs " + tsim::builtConfigList(tsim::Engine::kCoverage) +
          "; needs coverage=DIR: docs/verification.md)",
      false));
}
