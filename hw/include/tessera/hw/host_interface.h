// The host-interface contract: register map, module states, fault causes, counters and queue names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::hw {

// One named value of the contract with the prose that documents it. `name` is UPPER_SNAKE; every
// generator derives its own spelling from it (kCamel in C++, CamelCase in SystemVerilog).
struct ContractEntry {
  std::string name;
  uint32_t value;
  std::string meaning;
  std::string access = "";  // registers only: "R" or "R/W"
};

// A dependency-token queue between two modules.
struct ContractQueue {
  std::string name;  // short name used by registers, RTL signals, docs and messages ("l2g")
  std::string from, to;
};

// A unit of the instruction trace port: what runs instructions, and when it takes and finishes one.
struct ContractTraceUnit {
  std::string name;   // UPPER_SNAKE, as for ContractEntry ("GEMM_PIPE")
  std::string label;  // how tools name its track ("compute: GEMM pipe")
  std::string begins, ends;  // the cycle its begin and end strobes are high in
};

// The single description every layer's copy is generated from (hw/src/host_interface.cpp).
struct HostInterface {
  int addrWidth;        // AXI4-Lite address bits
  int statusStateBits;  // status word: state in [statusStateBits-1:0], queue/module argument above
  int statusArgBits;
  std::vector<std::string> modules;      // fetch, load, compute, store (status/insn register order)
  std::vector<std::string> insnQueues;   // the instruction queues fetch fills (load, compute, store)
  std::vector<ContractQueue> tokenQueues;
  std::vector<ContractEntry> registers;  // byte offsets, in address order
  std::vector<ContractEntry> ctrlBits;   // CTRL bit positions
  std::vector<ContractEntry> states;     // module status states
  std::vector<ContractEntry> faultCauses;
  std::vector<ContractEntry> faultFields;  // FAULT_INFO field codes of an SRAM index fault
  std::vector<ContractEntry> counters;     // index i is the 64-bit counter at countersBase + 8 i
  std::vector<ContractTraceUnit> traceUnits;  // index i is bit i of tessera_top's trace strobes
  uint32_t statusBase, insnBase, tokensBase, queueBase, countersBase;
};

const HostInterface& hostInterface();

// "l2g (load->compute)": how messages and docs name token queue `index` (0..3).
std::string tokenQueueLabel(int index);

// Generators of the contract's consumers.
std::string generateHostCppHeader();   // constexpr namespace tessera::host
std::string generateHostSvPackage();   // package tessera_host_pkg
std::string generateHostDocsTable();   // the Markdown of docs/rtl.md's "Host registers" section body

}  // namespace tessera::hw
