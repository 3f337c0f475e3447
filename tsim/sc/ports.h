// The port-level interface of the SystemC testbench: tessera_top's signals, and what a hardware model implements.
#pragma once

#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include <systemc>

#include "tessera/hw/insn_trace.h"

namespace tessera::tsim::sc {

// A data beat of the AXI4 master bus, up to 1024 bits, lane 0 first. The testbench carries data
// in this one type whatever the config's bus width, so the bundle below is the same for every
// model; a model converts to its own port type (Verilator uses uint32_t, uint64_t or sc_bv).
struct BusWord {
  static constexpr int kMaxBytes = 128;
  uint64_t words[kMaxBytes / 8] = {};
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(words); }
  const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(words); }
  bool operator==(const BusWord& o) const { return std::memcmp(words, o.words, sizeof words) == 0; }
};
// The write strobe: one bit per byte lane, lane 0 in bit 0 of words[0].
struct BusStrobe {
  uint64_t words[2] = {0, 0};
  bool operator==(const BusStrobe& o) const { return words[0] == o.words[0] && words[1] == o.words[1]; }
};
// sc_signal<T> needs printing and tracing for any T.
std::ostream& operator<<(std::ostream& os, const BusWord& w);
std::ostream& operator<<(std::ostream& os, const BusStrobe& s);
void sc_trace(sc_core::sc_trace_file* tf, const BusWord& w, const std::string& name);
void sc_trace(sc_core::sc_trace_file* tf, const BusStrobe& s, const std::string& name);

// Every port of tessera_top (docs/rtl.md) as a signal, named by the port without its _i/_o
// suffix. Fields of 32 bits or fewer are uint32_t (Verilator's SystemC type for them), so a
// verilated model binds most of its ports directly.
struct TopPorts {
  sc_core::sc_signal<bool> clk{"clk"}, rst_n{"rst_n"};
  // AXI4-Lite slave: host registers.
  sc_core::sc_signal<uint32_t> s_axil_awaddr{"s_axil_awaddr"}, s_axil_wdata{"s_axil_wdata"},
      s_axil_wstrb{"s_axil_wstrb"}, s_axil_araddr{"s_axil_araddr"};
  sc_core::sc_signal<bool> s_axil_awvalid{"s_axil_awvalid"}, s_axil_wvalid{"s_axil_wvalid"},
      s_axil_bready{"s_axil_bready"}, s_axil_arvalid{"s_axil_arvalid"}, s_axil_rready{"s_axil_rready"};
  sc_core::sc_signal<bool> s_axil_awready{"s_axil_awready"}, s_axil_wready{"s_axil_wready"},
      s_axil_bvalid{"s_axil_bvalid"}, s_axil_arready{"s_axil_arready"}, s_axil_rvalid{"s_axil_rvalid"};
  sc_core::sc_signal<uint32_t> s_axil_bresp{"s_axil_bresp"}, s_axil_rresp{"s_axil_rresp"},
      s_axil_rdata{"s_axil_rdata"};
  // AXI4 master: DRAM.
  sc_core::sc_signal<uint32_t> m_axi_araddr{"m_axi_araddr"}, m_axi_arlen{"m_axi_arlen"},
      m_axi_arsize{"m_axi_arsize"}, m_axi_arburst{"m_axi_arburst"};
  sc_core::sc_signal<bool> m_axi_arvalid{"m_axi_arvalid"}, m_axi_arready{"m_axi_arready"};
  sc_core::sc_signal<BusWord> m_axi_rdata{"m_axi_rdata"};
  sc_core::sc_signal<uint32_t> m_axi_rresp{"m_axi_rresp"};
  sc_core::sc_signal<bool> m_axi_rlast{"m_axi_rlast"}, m_axi_rvalid{"m_axi_rvalid"}, m_axi_rready{"m_axi_rready"};
  sc_core::sc_signal<uint32_t> m_axi_awaddr{"m_axi_awaddr"}, m_axi_awlen{"m_axi_awlen"},
      m_axi_awsize{"m_axi_awsize"}, m_axi_awburst{"m_axi_awburst"};
  sc_core::sc_signal<bool> m_axi_awvalid{"m_axi_awvalid"}, m_axi_awready{"m_axi_awready"};
  sc_core::sc_signal<BusWord> m_axi_wdata{"m_axi_wdata"};
  sc_core::sc_signal<BusStrobe> m_axi_wstrb{"m_axi_wstrb"};
  sc_core::sc_signal<bool> m_axi_wlast{"m_axi_wlast"}, m_axi_wvalid{"m_axi_wvalid"}, m_axi_wready{"m_axi_wready"};
  sc_core::sc_signal<uint32_t> m_axi_bresp{"m_axi_bresp"};
  sc_core::sc_signal<bool> m_axi_bvalid{"m_axi_bvalid"}, m_axi_bready{"m_axi_bready"};
  sc_core::sc_signal<bool> irq{"irq"};
};

// A hardware model of tessera_top the testbench can host: the verilated RTL today, an HLS model
// later. The testbench drives clk, rst_n and every _i port and samples every _o port at the
// rising edge of clk, so the model must behave as synchronous logic clocked by clk's rising edge
// with synchronous active-low reset; its outputs may depend combinationally on its inputs (the
// testbench lets them settle before the edge). Models are sc_modules: they are created before
// the SystemC kernel elaborates (Kernel in testbench.h) and never destroyed before the process
// ends.
class HardwareModel {
 public:
  virtual ~HardwareModel() = default;
  // Binds every port of the model to `ports` (called once, during construction of the testbench).
  virtual void bind(TopPorts& ports) = 0;
  // Bytes of the AXI4 data bus the model was built for.
  virtual int busBytes() const = 0;
  // Why the model stopped the simulation by itself ($finish, $error, an assertion), or empty;
  // clearReason() forgets it (at reset).
  virtual std::string stopReason() const = 0;
  virtual void clearStop() = 0;
  // Instruction tracing (docs/rtl.md, "Instruction trace port"): while `events` is set, the model
  // appends the begin and end events of the instructions it runs to it (null: tracing off). The
  // testbench calls sampleTrace() at every rising edge of clk while tracing, before the edge takes
  // effect: a model with a trace port reads it there; one without records as its processes go.
  virtual void traceTo(std::vector<hw::TraceEvent>* events) = 0;
  virtual void sampleTrace() = 0;
};

}  // namespace tessera::tsim::sc
