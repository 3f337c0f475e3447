// VerilatedScModel<V>: one class verilated with --sc, adapted to the testbench's port bundle; instantiated per built config.
#pragma once

#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include <verilated.h>

#include "ports.h"
#include "tessera/gen/host_interface.h"
#include "tessera/support/error.h"

namespace tessera::tsim::sc {

// Bus data between the testbench's BusWord and the type Verilator chose for a port of that width
// (uint32_t up to 32 bits, uint64_t up to 64, sc_bv<W> beyond): little-endian lanes throughout.
inline void fromBytes(const uint8_t* src, size_t n, uint32_t& v) {
  v = 0;
  std::memcpy(&v, src, n < sizeof v ? n : sizeof v);
}
inline void fromBytes(const uint8_t* src, size_t n, uint64_t& v) {
  v = 0;
  std::memcpy(&v, src, n < sizeof v ? n : sizeof v);
}
template <int W>
void fromBytes(const uint8_t* src, size_t n, sc_dt::sc_bv<W>& v) {
  for (int i = 0; i * 4 < W; ++i) {
    uint32_t word = 0;
    if (size_t(i) * 4 < n) std::memcpy(&word, src + 4 * i, n - 4 * i < 4 ? n - 4 * i : 4);
    v.set_word(i, word);
  }
}
// 32-bit word `i` of a port Verilator gave one of those types (the trace port's indices).
inline uint32_t wordOf(uint32_t v, int i) { return i == 0 ? v : 0; }
inline uint32_t wordOf(uint64_t v, int i) { return i < 2 ? uint32_t(v >> (32 * i)) : 0; }
template <int W>
uint32_t wordOf(const sc_dt::sc_bv<W>& v, int i) {
  return 32 * i < W ? uint32_t(v.get_word(i)) : 0;
}
inline void toBytes(uint32_t v, uint8_t* dst, size_t cap) { std::memcpy(dst, &v, cap < sizeof v ? cap : sizeof v); }
inline void toBytes(uint64_t v, uint8_t* dst, size_t cap) { std::memcpy(dst, &v, cap < sizeof v ? cap : sizeof v); }
template <int W>
void toBytes(const sc_dt::sc_bv<W>& v, uint8_t* dst, size_t cap) {
  for (int i = 0; i * 32 < W && size_t(i) * 4 < cap; ++i) {
    const uint32_t word = v.get_word(i);
    std::memcpy(dst + 4 * i, &word, cap - 4 * i < 4 ? cap - 4 * i : 4);
  }
}

// The Verilator context of every SystemC model. Verilator's --sc constructors take the calling
// thread's current context, which a destroyed tsim model may have left dangling, so each model is
// constructed with this one made current. Never destroyed, like the models.
inline VerilatedContext* scContext() {
  static VerilatedContext* const kContext = new VerilatedContext;
  Verilated::threadContextp(kContext);
  return kContext;
}

template <class Port>
using PortData = typename std::remove_reference_t<Port>::data_type;

template <class V>
class VerilatedScModel final : public sc_core::sc_module, public HardwareModel {
 public:
  SC_HAS_PROCESS(VerilatedScModel);

  VerilatedScModel(sc_core::sc_module_name name, int busBytes)
      : sc_core::sc_module(name), busBytes_(busBytes), context_(scContext()), rtl_("rtl") {
    if (busBytes_ > BusWord::kMaxBytes)
      throw Error("rtl-sc model", "bus of " + std::to_string(busBytes) + " bytes exceeds the testbench's 1024 bits");
    // $stop and $error end the run with a tessera::Error instead of aborting the process.
    rtl_.contextp()->fatalOnError(false);
    // The data buses change type at the model's boundary; everything else binds directly.
    SC_METHOD(rdataIn);
    sensitive << rdataIn_;
    SC_METHOD(wdataOut);
    sensitive << wdata_ << wstrb_;
  }

  void bind(TopPorts& p) override {
    V& m = rtl_;
    m.clk_i(p.clk);
    m.rst_ni(p.rst_n);
    m.s_axil_awaddr_i(p.s_axil_awaddr);
    m.s_axil_awvalid_i(p.s_axil_awvalid);
    m.s_axil_awready_o(p.s_axil_awready);
    m.s_axil_wdata_i(p.s_axil_wdata);
    m.s_axil_wstrb_i(p.s_axil_wstrb);
    m.s_axil_wvalid_i(p.s_axil_wvalid);
    m.s_axil_wready_o(p.s_axil_wready);
    m.s_axil_bresp_o(p.s_axil_bresp);
    m.s_axil_bvalid_o(p.s_axil_bvalid);
    m.s_axil_bready_i(p.s_axil_bready);
    m.s_axil_araddr_i(p.s_axil_araddr);
    m.s_axil_arvalid_i(p.s_axil_arvalid);
    m.s_axil_arready_o(p.s_axil_arready);
    m.s_axil_rdata_o(p.s_axil_rdata);
    m.s_axil_rresp_o(p.s_axil_rresp);
    m.s_axil_rvalid_o(p.s_axil_rvalid);
    m.s_axil_rready_i(p.s_axil_rready);
    m.m_axi_araddr_o(p.m_axi_araddr);
    m.m_axi_arlen_o(p.m_axi_arlen);
    m.m_axi_arsize_o(p.m_axi_arsize);
    m.m_axi_arburst_o(p.m_axi_arburst);
    m.m_axi_arvalid_o(p.m_axi_arvalid);
    m.m_axi_arready_i(p.m_axi_arready);
    m.m_axi_rdata_i(rdata_);
    m.m_axi_rresp_i(p.m_axi_rresp);
    m.m_axi_rlast_i(p.m_axi_rlast);
    m.m_axi_rvalid_i(p.m_axi_rvalid);
    m.m_axi_rready_o(p.m_axi_rready);
    m.m_axi_awaddr_o(p.m_axi_awaddr);
    m.m_axi_awlen_o(p.m_axi_awlen);
    m.m_axi_awsize_o(p.m_axi_awsize);
    m.m_axi_awburst_o(p.m_axi_awburst);
    m.m_axi_awvalid_o(p.m_axi_awvalid);
    m.m_axi_awready_i(p.m_axi_awready);
    m.m_axi_wdata_o(wdata_);
    m.m_axi_wstrb_o(wstrb_);
    m.m_axi_wlast_o(p.m_axi_wlast);
    m.m_axi_wvalid_o(p.m_axi_wvalid);
    m.m_axi_wready_i(p.m_axi_wready);
    m.m_axi_bresp_i(p.m_axi_bresp);
    m.m_axi_bvalid_i(p.m_axi_bvalid);
    m.m_axi_bready_o(p.m_axi_bready);
    m.irq_o(p.irq);
    m.trace_begin_o(traceBegin_);
    m.trace_begin_insn_o(traceBeginInsn_);
    m.trace_end_o(traceEnd_);
    m.trace_end_insn_o(traceEndInsn_);
    m.trace_cycle_o(traceCycle_);
    rdataIn_(p.m_axi_rdata);
    wdataOut_(p.m_axi_wdata);
    wstrbOut_(p.m_axi_wstrb);
  }

  int busBytes() const override { return busBytes_; }

  std::string stopReason() const override {
    VerilatedContext* c = rtl_.contextp();
    if (c->gotError()) return "the RTL raised $error or $stop (see its message on stderr)";
    if (c->gotFinish()) return "the RTL executed $finish";
    return "";
  }
  void clearStop() override {
    rtl_.contextp()->gotFinish(false);
    rtl_.contextp()->gotError(false);
  }

  void traceTo(std::vector<hw::TraceEvent>* events) override { events_ = events; }
  // The values the trace port had through the cycle this rising edge ends, as tsim samples them.
  void sampleTrace() override {
    const uint32_t begins = uint32_t(traceBegin_.read()), ends = uint32_t(traceEnd_.read());
    if ((begins | ends) == 0 || !events_) return;
    const uint32_t cycle = uint32_t(traceCycle_.read());
    for (int u = 0; u < host::kNumTraceUnits; ++u) {
      if (begins >> u & 1) events_->push_back({wordOf(traceBeginInsn_.read(), u), cycle, uint8_t(u), false});
      if (ends >> u & 1) events_->push_back({wordOf(traceEndInsn_.read(), u), cycle, uint8_t(u), true});
    }
  }

 private:
  using RData = PortData<decltype(std::declval<V&>().m_axi_rdata_i)>;
  using WData = PortData<decltype(std::declval<V&>().m_axi_wdata_o)>;
  using WStrb = PortData<decltype(std::declval<V&>().m_axi_wstrb_o)>;
  using TraceMask = PortData<decltype(std::declval<V&>().trace_begin_o)>;
  using TraceInsns = PortData<decltype(std::declval<V&>().trace_begin_insn_o)>;
  using TraceCycle = PortData<decltype(std::declval<V&>().trace_cycle_o)>;

  void rdataIn() {
    RData v;
    fromBytes(rdataIn_.read().bytes(), size_t(busBytes_), v);
    rdata_.write(v);
  }
  void wdataOut() {
    BusWord w;
    toBytes(wdata_.read(), w.bytes(), size_t(busBytes_));
    wdataOut_.write(w);
    BusStrobe s;
    toBytes(wstrb_.read(), reinterpret_cast<uint8_t*>(s.words), size_t((busBytes_ + 7) / 8));
    wstrbOut_.write(s);
  }

  const int busBytes_;
  VerilatedContext* const context_;  // made current before rtl_ is constructed
  V rtl_;
  sc_core::sc_signal<RData> rdata_{"rdata_native"};
  sc_core::sc_signal<WData> wdata_{"wdata_native"};
  sc_core::sc_signal<WStrb> wstrb_{"wstrb_native"};
  sc_core::sc_in<BusWord> rdataIn_{"rdata_in"};
  sc_core::sc_out<BusWord> wdataOut_{"wdata_out"};
  sc_core::sc_out<BusStrobe> wstrbOut_{"wstrb_out"};
  // The trace port stays inside the adapter: only sampleTrace() reads it.
  sc_core::sc_signal<TraceMask> traceBegin_{"trace_begin"}, traceEnd_{"trace_end"};
  sc_core::sc_signal<TraceInsns> traceBeginInsn_{"trace_begin_insn"}, traceEndInsn_{"trace_end_insn"};
  sc_core::sc_signal<TraceCycle> traceCycle_{"trace_cycle"};
  std::vector<hw::TraceEvent>* events_ = nullptr;
};

}  // namespace tessera::tsim::sc
