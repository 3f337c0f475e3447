// Generators of the headers rtl/, hls/ and C++ consumers include, from one Config.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/hw/axi.h"
#include "tessera/hw/config.h"
#include "tessera/hw/isa.h"

namespace tessera::hw {

// One of the ISA's enumerations (opcodes, ALU opcodes, memory ids) as the generators name it: VTA's
// hw_spec_const.h names and values for the C header, a typed enum in the SystemVerilog package,
// which is also the type of the instruction field `field`.
struct IsaEnum {
  struct Item {
    const char* name;
    long long value;
  };
  const char* type;        // the SystemVerilog enum type, e.g. opcode_e
  const char* widthParam;  // the derived parameter holding its width, e.g. OPCODE_BIT_WIDTH
  int bits;
  Field field;
  std::vector<Item> items;
};
const std::vector<IsaEnum>& isaEnums();

// Every derived parameter as (NAME, value), in a stable order; the single list all generators
// and `tessera info` print from.
std::vector<std::pair<std::string, long long>> derivedParameters(const Config& cfg);

// C/C++ header: VTA_* macros with hw_spec_const.h names plus instruction field positions
// (TESSERA_<FORMAT>_<FIELD>_LO / _W) and a constexpr mirror in namespace tessera::gen.
std::string generateCppHeader(const Config& cfg);
// SystemVerilog include for rtl/: package tessera_config_pkg (every derived parameter as a localparam,
// except the ISA's enumerations, which are typed enums; the AXI rules; the instruction formats as
// packed structs) and package tessera_host_pkg (the host contract).
std::string generateSvInclude(const Config& cfg);
// HLS header: plain C macros only (no namespaces), for hls/ and vendor tools.
std::string generateHlsHeader(const Config& cfg);
// Tcl fragment: `set TESSERA_* value` lines for the FPGA scripts.
std::string generateTcl(const Config& cfg);

}  // namespace tessera::hw
