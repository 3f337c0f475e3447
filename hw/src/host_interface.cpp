// The single source of the host-interface contract and the generators of its C++, SystemVerilog and docs copies.
#include "tessera/hw/host_interface.h"

#include <cctype>
#include <cstdio>

namespace tessera::hw {

namespace {

HostInterface build() {
  HostInterface h;
  h.addrWidth = 12;
  h.statusStateBits = 4;
  h.statusArgBits = 4;
  h.modules = {"fetch", "load", "compute", "store"};
  h.insnQueues = {"load", "compute", "store"};
  // VTA's names: g is the GEMM (compute) module.
  h.tokenQueues = {{"l2g", "load", "compute"}, {"g2l", "compute", "load"},
                   {"g2s", "compute", "store"}, {"s2g", "store", "compute"}};
  h.statusBase = 0x020;
  h.insnBase = 0x030;
  h.tokensBase = 0x040;
  h.queueBase = 0x050;
  h.countersBase = 0x100;

  h.ctrlBits = {{"START", 0, "write 1: start a run (ignored while running)"},
                {"RUNNING", 0, "a run is in progress"},
                {"DONE", 1, "the last run completed (cleared at the next start)"},
                {"FAULT", 2, "the last run faulted (cleared at the next start)"}};
  h.states = {{"IDLE", 0, "idle (its instruction queue is empty)"},
              {"BUSY", 1, "busy (executing)"},
              {"WAIT_POP", 2, "waiting to pop a token from token queue [7:4]"},
              {"WAIT_PUSH", 3, "waiting for space to push a token on token queue [7:4]"},
              {"FETCH_QUEUE_FULL", 4,
               "fetch only: waiting for space in the instruction queue [7:4] (0 load, 1 compute, 2 store)"},
              {"HALTED_AT_FINISH", 5, "compute only: halted at FINISH"},
              {"ALL_DISPATCHED", 6, "fetch only: all instructions dispatched"}};
  h.faultCauses = {{"NONE", 0, "no fault"},
                   {"SRAM_INDEX", 1, "GEMM/ALU SRAM index out of range"},
                   {"DRAM_READ_ERROR", 2, "DRAM read error response"},
                   {"DRAM_WRITE_ERROR", 3, "DRAM write error response"}};
  h.faultFields = {{"DST", 0, "dst"}, {"SRC", 1, "src"}, {"WGT", 2, "wgt"}};

  h.counters = {{"CYCLES", 0, "cycles"}};
  for (const auto& m : h.modules) {
    std::string up;
    for (char c : m) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    h.counters.push_back({up + "_BUSY", 0, m + " busy"});
    h.counters.push_back({up + "_STALL", 0, m + " stall"});
  }
  h.counters.push_back({"DRAM_READ_BEATS", 0, "DRAM read beats"});
  h.counters.push_back({"DRAM_WRITE_BEATS", 0, "DRAM write beats"});
  h.counters.push_back({"GEMM_UOPS", 0, "GEMM micro-ops (including reset)"});
  h.counters.push_back({"ALU_UOPS", 0, "ALU micro-ops"});
  h.counters.push_back({"RETIRED", 0, "instructions retired (all modules, FINISH included)"});
  for (size_t i = 0; i < h.counters.size(); ++i) h.counters[i].value = static_cast<uint32_t>(i);

  // Every instruction begins and ends once on fetch and once on exactly one of the others.
  h.traceUnits = {
      {"FETCH", "fetch", "it dispatches the instruction to its module's queue", "the same cycle"},
      {"LOAD", "load", "it takes a LOAD INP/WGT from its queue with its tokens",
       "the loader reports its last SRAM write done: it retires and pushes its token (several are in flight)"},
      {"COMPUTE", "compute",
       "the compute sequencer takes a LOAD UOP/ACC/ACC_8BIT, FINISH or other instruction it runs itself, with its "
       "tokens",
       "it retires it; FINISH: the cycle the host registers see it, the run's last counted cycle"},
      {"GEMM_PIPE", "compute: GEMM pipe",
       "the GEMM pipe starts executing a GEMM, after any footprint scan and wait",
       "the pipe has drained after its last micro-op's write: done (it may retire later)"},
      {"ALU_PIPE", "compute: ALU pipe",
       "the ALU pipe starts executing an ALU instruction or reset GEMM, after any footprint scan and wait",
       "the pipe has drained after its last micro-op's write: done (it may retire later)"},
      {"STORE", "store", "it takes a STORE from its queue with its tokens",
       "it retires after its last write response has come back, pushing its token"}};

  auto upper = [](const std::string& s) {
    std::string u;
    for (char c : s) u += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return u;
  };
  h.registers = {
      {"CTRL", 0x000,
       "write bit 0 = 1: start a run (ignored while running). Read: bit 0 running, bit 1 done, bit 2 fault. "
       "Done and fault clear at the next start.",
       "R/W"},
      {"CYCLES", 0x004, "cycles of the current or last run (low 32 bits)", "R"},
      {"INSN_COUNT", 0x008, "number of 16-byte instructions to fetch", "R/W"},
      {"INSN_ADDR", 0x00c, "byte address of the first instruction (16-byte aligned)", "R/W"},
      {"INSN_ADDR_HI", 0x010, "reads 0 (32-bit DRAM addresses)", "R"},
      {"FAULT_CAUSE", 0x014, "the fault cause (below)", "R"},
      {"FAULT_INSN", 0x018, "index of the faulting instruction", "R"},
      {"FAULT_INFO", 0x01c,
       "cause SRAM_INDEX: bits [1:0] the field (0 dst, 1 src, 2 wgt), bits [31:2] the micro-op index; "
       "cause DRAM_READ_ERROR: bits [1:0] the reading module (0 fetch, 1 load, 2 compute); otherwise 0",
       "R"},
  };
  for (size_t m = 0; m < h.modules.size(); ++m)
    h.registers.push_back({"STATUS_" + upper(h.modules[m]), h.statusBase + 4 * uint32_t(m),
                           "status word of the " + h.modules[m] + " module (below)", "R"});
  for (size_t m = 0; m < h.modules.size(); ++m)
    h.registers.push_back({"INSN_" + upper(h.modules[m]), h.insnBase + 4 * uint32_t(m),
                           m == 0 ? std::string("index of the next instruction fetch will dispatch")
                                  : "index of the " + h.modules[m] + " module's current or next instruction",
                           "R"});
  for (size_t q = 0; q < h.tokenQueues.size(); ++q)
    h.registers.push_back({"TOKENS_" + upper(h.tokenQueues[q].name), h.tokensBase + 4 * uint32_t(q),
                           "tokens in queue " + h.tokenQueues[q].name + " (" + h.tokenQueues[q].from + "->" +
                               h.tokenQueues[q].to + ")",
                           "R"});
  for (size_t q = 0; q < h.insnQueues.size(); ++q)
    h.registers.push_back({"QUEUE_" + upper(h.insnQueues[q]), h.queueBase + 4 * uint32_t(q),
                           "entries in the " + h.insnQueues[q] + " instruction queue", "R"});
  h.registers.push_back({"COUNTERS", h.countersBase,
                         "64-bit counters (below), low word at +0, high word at +4; cleared at start", "R"});
  return h;
}

// UPPER_SNAKE or lower name to CamelCase ("WAIT_POP" -> "WaitPop", "l2g" -> "L2g").
std::string camel(const std::string& name) {
  std::string s;
  bool up = true;
  for (char c : name) {
    if (c == '_' || c == ' ') { up = true; continue; }
    s += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
            : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    up = false;
  }
  return s;
}

std::string hex3(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%03x", v);
  return b;
}

const char* kBanner = "Generated by tessera-host-gen from hw/src/host_interface.cpp; do not edit: change that table instead.";

}  // namespace

const HostInterface& hostInterface() {
  static const HostInterface h = build();
  return h;
}

std::string tokenQueueLabel(int index) {
  const auto& q = hostInterface().tokenQueues.at(static_cast<size_t>(index));
  return q.name + " (" + q.from + "->" + q.to + ")";
}

std::string generateHostCppHeader() {
  const HostInterface& h = hostInterface();
  std::string s = std::string("// ") + kBanner + "\n#pragma once\n\n#include <cstdint>\n\nnamespace tessera::host {\n\n";
  s += "// Register byte offsets of the AXI4-Lite slave.\n";
  s += "inline constexpr int kAddrWidth = " + std::to_string(h.addrWidth) + ";\n";
  for (const auto& r : h.registers) s += "inline constexpr uint32_t kReg" + camel(r.name) + " = " + hex3(r.value) + ";\n";
  s += "inline constexpr uint32_t kStatusBase = " + hex3(h.statusBase) + ", kInsnBase = " + hex3(h.insnBase) +
       ", kTokensBase = " + hex3(h.tokensBase) + ", kQueueBase = " + hex3(h.queueBase) +
       ";  // + 4 * index\n";
  s += "inline constexpr uint32_t kCountersBase = " + hex3(h.countersBase) + ";  // + 8 * Counter\n\n";
  s += "// CTRL bits.\n";
  for (const auto& b : h.ctrlBits) s += "inline constexpr uint32_t kCtrl" + camel(b.name) + " = 1u << " + std::to_string(b.value) + ";\n";
  s += "\n// Status word: state in the low bits, the token queue (or, for fetch, instruction queue) above.\n";
  s += "inline constexpr int kStatusStateBits = " + std::to_string(h.statusStateBits) +
       ", kStatusArgBits = " + std::to_string(h.statusArgBits) + ";\n";
  s += "enum State : uint32_t {\n";
  for (const auto& e : h.states) s += "  kState" + camel(e.name) + " = " + std::to_string(e.value) + ",\n";
  s += "};\n\nenum FaultCause : uint32_t {\n";
  for (const auto& e : h.faultCauses) s += "  kFault" + camel(e.name) + " = " + std::to_string(e.value) + ",\n";
  s += "};\n\n// FAULT_INFO bits [1:0] of an SRAM_INDEX fault.\nenum FaultField : uint32_t {\n";
  for (const auto& e : h.faultFields) s += "  kFaultField" + camel(e.name) + " = " + std::to_string(e.value) + ",\n";
  s += "};\n\n// 64-bit counters at kCountersBase + 8 * index.\nenum Counter : int {\n";
  for (const auto& e : h.counters) s += "  kCounter" + camel(e.name) + " = " + std::to_string(e.value) + ",\n";
  s += "};\ninline constexpr int kNumCounters = " + std::to_string(h.counters.size()) + ";\n\n";
  s += "enum Module : int {";
  for (size_t i = 0; i < h.modules.size(); ++i)
    s += std::string(i ? ", " : " ") + "kModule" + camel(h.modules[i]) + " = " + std::to_string(i);
  s += " };\ninline constexpr int kNumModules = " + std::to_string(h.modules.size()) + ";\n";
  s += "inline constexpr const char* kModuleNames[kNumModules] = {";
  for (size_t i = 0; i < h.modules.size(); ++i) s += std::string(i ? ", " : "") + "\"" + h.modules[i] + "\"";
  s += "};\n\n// Instruction queues fetch fills, indexed by stage.\ninline constexpr int kNumInsnQueues = " +
       std::to_string(h.insnQueues.size()) + ";\n";
  s += "inline constexpr const char* kInsnQueueNames[kNumInsnQueues] = {";
  for (size_t i = 0; i < h.insnQueues.size(); ++i) s += std::string(i ? ", " : "") + "\"" + h.insnQueues[i] + "\"";
  s += "};\n\n// Units of tessera_top's instruction trace port: bit i of its strobes, slice i of its indices.\n";
  s += "enum TraceUnit : int {";
  for (size_t i = 0; i < h.traceUnits.size(); ++i)
    s += std::string(i ? ", " : " ") + "kTrace" + camel(h.traceUnits[i].name) + " = " + std::to_string(i);
  s += " };\ninline constexpr int kNumTraceUnits = " + std::to_string(h.traceUnits.size()) + ";\n";
  s += "inline constexpr const char* kTraceUnitNames[kNumTraceUnits] = {";
  for (size_t i = 0; i < h.traceUnits.size(); ++i) s += std::string(i ? ", " : "") + "\"" + h.traceUnits[i].label + "\"";
  s += "};\n\n// Dependency-token queues.\nenum TokenQueue : int {";
  for (size_t i = 0; i < h.tokenQueues.size(); ++i)
    s += std::string(i ? ", " : " ") + "kQueue" + camel(h.tokenQueues[i].name) + " = " + std::to_string(i);
  s += " };\ninline constexpr int kNumTokenQueues = " + std::to_string(h.tokenQueues.size()) + ";\n";
  s += "inline constexpr const char* kTokenQueueNames[kNumTokenQueues] = {";
  for (size_t i = 0; i < h.tokenQueues.size(); ++i)
    s += std::string(i ? ", " : "") + "\"" + tokenQueueLabel(static_cast<int>(i)) + "\"";
  s += "};\n\n}  // namespace tessera::host\n";
  return s;
}

std::string generateHostSvPackage() {
  const HostInterface& h = hostInterface();
  const std::string aw = std::to_string(h.addrWidth);
  const std::string sb = std::to_string(h.statusStateBits), ab = std::to_string(h.statusArgBits);
  std::string s = std::string("// ") + kBanner + "\npackage tessera_host_pkg;\n\n";
  s += "  localparam int unsigned RegAddrWidth = " + aw + ";\n";
  for (const auto& r : h.registers)
    s += "  localparam logic [" + aw + "-1:0] Reg" + camel(r.name) + " = " + aw + "'h" + hex3(r.value).substr(2) + ";\n";
  s += "  localparam logic [" + aw + "-1:0] RegStatusBase = " + aw + "'h" + hex3(h.statusBase).substr(2) +
       ", RegInsnBase = " + aw + "'h" + hex3(h.insnBase).substr(2) + ",\n                                RegTokensBase = " +
       aw + "'h" + hex3(h.tokensBase).substr(2) + ", RegQueueBase = " + aw + "'h" + hex3(h.queueBase).substr(2) +
       ", RegCountersBase = " + aw + "'h" + hex3(h.countersBase).substr(2) + ";\n\n";
  for (const auto& b : h.ctrlBits) s += "  localparam int unsigned CtrlBit" + camel(b.name) + " = " + std::to_string(b.value) + ";\n";
  s += "\n  localparam int unsigned StatusStateBits = " + sb + ";\n";
  s += "  localparam int unsigned StatusArgBits = " + ab + ";\n";
  s += "  typedef logic [" + sb + "-1:0] state_t;\n";
  for (const auto& e : h.states) s += "  localparam state_t State" + camel(e.name) + " = " + sb + "'d" + std::to_string(e.value) + ";\n";
  s += "  // A module's status word: the state, and the token or instruction queue it concerns.\n";
  s += "  typedef struct packed {\n    logic [" + ab + "-1:0] arg;\n    state_t state;\n  } status_t;\n\n";
  s += "  localparam int unsigned FaultCauseBits = 4;\n";
  for (const auto& e : h.faultCauses)
    s += "  localparam logic [FaultCauseBits-1:0] Fault" + camel(e.name) + " = 4'd" + std::to_string(e.value) + ";\n";
  for (const auto& e : h.faultFields)
    s += "  localparam logic [1:0] FaultField" + camel(e.name) + " = 2'd" + std::to_string(e.value) + ";\n";
  s += "\n  localparam int unsigned NumCounters = " + std::to_string(h.counters.size()) + ";\n";
  for (const auto& e : h.counters) s += "  localparam int unsigned Counter" + camel(e.name) + " = " + std::to_string(e.value) + ";\n";
  s += "\n  localparam int unsigned NumModules = " + std::to_string(h.modules.size()) + ";\n";
  for (size_t i = 0; i < h.modules.size(); ++i)
    s += "  localparam int unsigned Module" + camel(h.modules[i]) + " = " + std::to_string(i) + ";\n";
  s += "  localparam int unsigned NumInsnQueues = " + std::to_string(h.insnQueues.size()) + ";\n";
  for (size_t i = 0; i < h.insnQueues.size(); ++i)
    s += "  localparam int unsigned InsnQueue" + camel(h.insnQueues[i]) + " = " + std::to_string(i) + ";\n";
  s += "  // Units of the instruction trace port: bit i of its strobes, slice i of its indices.\n";
  s += "  localparam int unsigned NumTraceUnits = " + std::to_string(h.traceUnits.size()) + ";\n";
  for (size_t i = 0; i < h.traceUnits.size(); ++i)
    s += "  localparam int unsigned Trace" + camel(h.traceUnits[i].name) + " = " + std::to_string(i) + ";\n";
  s += "  localparam int unsigned NumTokenQueues = " + std::to_string(h.tokenQueues.size()) + ";\n";
  s += "  typedef logic [" + ab + "-1:0] token_queue_t;\n";
  for (size_t i = 0; i < h.tokenQueues.size(); ++i)
    s += "  localparam token_queue_t Queue" + camel(h.tokenQueues[i].name) + " = " + ab + "'d" + std::to_string(i) +
         ";  // " + h.tokenQueues[i].from + "->" + h.tokenQueues[i].to + "\n";
  s += "\nendpackage\n";
  return s;
}

std::string generateHostDocsTable() {
  const HostInterface& h = hostInterface();
  std::string s = std::string("<!-- ") + kBanner + " -->\n\n";
  s += "| offset | name | access | meaning |\n|---|---|---|---|\n";
  for (const auto& r : h.registers)
    s += "| " + hex3(r.value) + (r.name == "COUNTERS" ? ".." : "") + " | " + r.name + " | " + r.access + " | " +
         r.meaning + " |\n";
  s += "\nStatus word: bits [" + std::to_string(h.statusStateBits - 1) + ":0] the state, bits [" +
       std::to_string(h.statusStateBits + h.statusArgBits - 1) + ":" + std::to_string(h.statusStateBits) +
       "] the token queue involved (";
  for (size_t i = 0; i < h.tokenQueues.size(); ++i)
    s += std::string(i ? ", " : "") + std::to_string(i) + " " + tokenQueueLabel(static_cast<int>(i));
  s += ").\n\n| state | name | meaning |\n|---|---|---|\n";
  for (const auto& e : h.states) s += "| " + std::to_string(e.value) + " | " + e.name + " | " + e.meaning + " |\n";
  s += "\n| fault cause | name | meaning |\n|---|---|---|\n";
  for (const auto& e : h.faultCauses) s += "| " + std::to_string(e.value) + " | " + e.name + " | " + e.meaning + " |\n";
  s += "\n| counter offset | name | counts |\n|---|---|---|\n";
  for (const auto& e : h.counters)
    s += "| " + hex3(h.countersBase + 8 * e.value) + " | " + e.name + " | " + e.meaning + " |\n";
  s += "\nUnits of the instruction trace port (section \"Instruction trace port\" below): unit i is bit i of "
       "`trace_begin_o`/`trace_end_o` and bits [32i+31:32i] of `trace_begin_insn_o`/`trace_end_insn_o`.\n\n| unit | name | track | begin strobe: the cycle | end strobe: the cycle |\n"
       "|---|---|---|---|---|\n";
  for (size_t i = 0; i < h.traceUnits.size(); ++i) {
    const ContractTraceUnit& u = h.traceUnits[i];
    s += "| " + std::to_string(i) + " | " + u.name + " | " + u.label + " | " + u.begins + " | " + u.ends + " |\n";
  }
  return s;
}

}  // namespace tessera::hw
