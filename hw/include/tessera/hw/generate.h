// Generators of the headers rtl/, hls/ and C++ consumers include, from one Config.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/hw/config.h"

namespace tessera::hw {

// Every derived parameter as (NAME, value), in a stable order; the single list all generators
// and `tessera info` print from.
std::vector<std::pair<std::string, long long>> derivedParameters(const Config& cfg);

// C/C++ header: VTA_* macros with hw_spec_const.h names plus instruction field positions
// (TESSERA_<FORMAT>_<FIELD>_LO / _W) and a constexpr mirror in namespace tessera::gen.
std::string generateCppHeader(const Config& cfg);
// SystemVerilog include for rtl/: package tessera_config_pkg (every derived parameter as a localparam,
// the instruction formats as packed structs) and package tessera_host_pkg (the host contract).
std::string generateSvInclude(const Config& cfg);
// HLS header: plain C macros only (no namespaces), for hls/ and vendor tools.
std::string generateHlsHeader(const Config& cfg);
// Tcl fragment: `set TESSERA_* value` lines for the FPGA scripts.
std::string generateTcl(const Config& cfg);

}  // namespace tessera::hw
