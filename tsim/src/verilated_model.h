// The clocking harness over one verilated tessera_top class; instantiated once per built config.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <verilated.h>
#include <verilated_fst_c.h>

#include "bench.h"
#include "tessera/gen/host_interface.h"
#include "tessera/support/error.h"

namespace tessera::tsim {

// Copies `n` bytes into a verilated port of any width (IData, QData or VlWide<N>: all
// little-endian words on this host, which fsim already requires).
template <class T>
inline void putBytes(T& port, const uint8_t* src, size_t n) {
  std::memcpy(static_cast<void*>(&port), src, n);
}
template <class T>
inline const uint8_t* bytesOf(const T& port) {
  return reinterpret_cast<const uint8_t*>(&port);
}
// Reads up to 128 bits of a port into two words (the strobe of buses up to 1024 bits).
template <class T>
inline void getWords(const T& port, uint64_t* out) {
  out[0] = out[1] = 0;
  std::memcpy(out, static_cast<const void*>(&port), sizeof(T) < 16 ? sizeof(T) : 16);
}

// Whether a verilated class was built with waveform support (--trace-fst): the gate-level models
// are not, as a netlist's every internal wire would make the trace code huge.
template <class V, class = void>
struct HasFstTrace : std::false_type {};
template <class V>
struct HasFstTrace<V, std::void_t<decltype(std::declval<V&>().trace(static_cast<VerilatedFstC*>(nullptr), 0))>>
    : std::true_type {};

template <class V>
class VerilatedModel final : public Model {
 public:
  // `randomSeed` non-zero: every register and memory bit that no reset sets starts random (drawn
  // from that seed; the model must be verilated with --x-initial unique), as in hardware after
  // power-up, rather than zero.
  VerilatedModel(Bench& bench, int busBytes, const std::string& tracePath, uint64_t randomSeed = 0)
      : b_(bench), busBytes_(static_cast<size_t>(busBytes)), ctx_(std::make_unique<VerilatedContext>()) {
    if (randomSeed != 0) {
      ctx_->randReset(2);
      ctx_->randSeed(static_cast<int>(randomSeed & 0x7fffffff));
    }
    if (!tracePath.empty() && !HasFstTrace<V>::value)
      throw Error("trace " + tracePath, "this model was built without waveform support (trace it on tsim)");
    // Tracing must be allowed before the model exists; it costs nothing when no file is open.
    if (!tracePath.empty()) ctx_->traceEverOn(true);
    // $stop and $error end the run with a tessera::Error instead of aborting the process.
    ctx_->fatalOnError(false);
    // The model draws its initial values from the current context's random-reset settings.
    makeCurrent();
    m_ = std::make_unique<V>(ctx_.get(), "TOP");
    if (sizeof(m_->m_axi_rdata_i) < busBytes_ || sizeof(m_->m_axi_wdata_o) < busBytes_)
      throw Error("tsim model", "the verilated m_axi data ports are narrower than the config's " +
                                    std::to_string(busBytes) + "-byte bus: the model was built for another config");
    if (!tracePath.empty()) openTrace(tracePath);
  }

  ~VerilatedModel() override {
    closeTrace();
    m_->final();
    // Verilator 5.006's scopes (the model has them under --assert) unregister from the thread's
    // current context, not their own: with two models in a process that may be the other model's,
    // or a destroyed one's. Make it this model's while the model goes.
    Verilated::threadContextp(ctx_.get());
    m_.reset();
  }

  void reset(int cycles) override {
    makeCurrent();
    ctx_->gotFinish(false);
    ctx_->gotError(false);
    b_.host.reset();
    b_.mem.reset();
    m_->rst_ni = 0;
    for (int i = 0; i < cycles; ++i) {
      driveIdle();
      edge();
    }
    m_->rst_ni = 1;
    b_.irq = m_->irq_o;
  }

  void step() override {
    makeCurrent();
    cycle();
  }

  uint64_t stepUntilIrq(uint64_t maxCycles) override {
    makeCurrent();
    uint64_t n = 0;
    while (n < maxCycles) {
      cycle();
      ++n;
      if (b_.irq || b_.mem.violated() || ctx_->gotFinish() || ctx_->gotError()) break;
    }
    return n;
  }

  void stepCycles(uint64_t n) override {
    makeCurrent();
    for (uint64_t i = 0; i < n; ++i) {
      cycle();
      if (b_.mem.violated() || ctx_->gotFinish() || ctx_->gotError()) break;
    }
  }

  std::string stopReason() const override {
    if (ctx_->gotError()) return "the RTL raised $error or $stop (see its message on stderr)";
    if (ctx_->gotFinish()) return "the RTL executed $finish";
    return "";
  }

  void openTrace(const std::string& path) override {
    if constexpr (!HasFstTrace<V>::value) {
      throw Error("trace " + path, "this model was built without waveform support (trace it on tsim)");
    } else {
      openFst(path);
    }
  }

  void openFst(const std::string& path) {
    trace_ = std::make_unique<VerilatedFstC>();
    m_->trace(trace_.get(), 99);
    trace_->open(path.c_str());
    if (!trace_->isOpen()) {
      trace_.reset();
      throw Error("trace " + path, "cannot open the waveform file for writing");
    }
  }

  void closeTrace() override {
    if (trace_) trace_->close();
    trace_.reset();
  }

  // The verilated design (tsim-cov reads its coverage counters).
  V& top() { return *m_; }

 private:
  // A failing assertion's $error flags the thread's current context (the last one constructed),
  // so a model makes its own current before it evaluates: gotError() then names the right model.
  void makeCurrent() { Verilated::threadContextp(ctx_.get()); }

  // One cycle: the bench's registered outputs go to the ports, the design settles with the clock
  // low, the bench samples and takes its edge, then the design takes its rising edge.
  void cycle() {
    const AxiSlaveSignals& s = b_.mem.outputs();
    V& m = *m_;
    m.m_axi_arready_i = s.arready;
    m.m_axi_rvalid_i = s.rvalid;
    m.m_axi_rlast_i = s.rlast;
    m.m_axi_rresp_i = s.rresp;
    putBytes(m.m_axi_rdata_i, s.rdata, busBytes_);
    m.m_axi_awready_i = s.awready;
    m.m_axi_wready_i = s.wready;
    m.m_axi_bvalid_i = s.bvalid;
    m.m_axi_bresp_i = s.bresp;
    const LiteHost::Outputs& h = b_.host.outputs();
    m.s_axil_awaddr_i = h.awaddr;
    m.s_axil_awvalid_i = h.awvalid;
    m.s_axil_wdata_i = h.wdata;
    m.s_axil_wstrb_i = 0xf;
    m.s_axil_wvalid_i = h.wvalid;
    m.s_axil_bready_i = h.bready;
    m.s_axil_araddr_i = h.araddr;
    m.s_axil_arvalid_i = h.arvalid;
    m.s_axil_rready_i = h.rready;
    m.clk_i = 0;
    m.eval();
    if (trace_) trace_->dump(time_);
    time_ += 5;

    AxiMasterSignals& a = b_.axi;
    a.araddr = m.m_axi_araddr_o;
    a.arlen = m.m_axi_arlen_o;
    a.arsize = m.m_axi_arsize_o;
    a.arburst = m.m_axi_arburst_o;
    a.arvalid = m.m_axi_arvalid_o;
    a.rready = m.m_axi_rready_o;
    a.awaddr = m.m_axi_awaddr_o;
    a.awlen = m.m_axi_awlen_o;
    a.awsize = m.m_axi_awsize_o;
    a.awburst = m.m_axi_awburst_o;
    a.awvalid = m.m_axi_awvalid_o;
    a.wdata = bytesOf(m.m_axi_wdata_o);
    getWords(m.m_axi_wstrb_o, a.wstrb);
    a.wlast = m.m_axi_wlast_o;
    a.wvalid = m.m_axi_wvalid_o;
    a.bready = m.m_axi_bready_o;
    LiteSlaveSignals& l = b_.lite;
    l.awready = m.s_axil_awready_o;
    l.wready = m.s_axil_wready_o;
    l.bvalid = m.s_axil_bvalid_o;
    l.bresp = m.s_axil_bresp_o;
    l.arready = m.s_axil_arready_o;
    l.rvalid = m.s_axil_rvalid_o;
    l.rresp = m.s_axil_rresp_o;
    l.rdata = m.s_axil_rdata_o;
    b_.irq = m.irq_o;
    if (b_.trace.on) sampleTrace();
    b_.mem.clock(a);
    b_.host.clock(l);
    edgeOnly();
  }

  // The trace port's events of this cycle (the strobes are rare; most cycles end at the first test).
  void sampleTrace() {
    const V& m = *m_;
    const uint32_t begins = m.trace_begin_o, ends = m.trace_end_o;
    if ((begins | ends) == 0) return;
    const uint32_t cycle = m.trace_cycle_o;
    for (int u = 0; u < host::kNumTraceUnits; ++u) {
      if (begins >> u & 1) b_.trace.events.push_back({wordOf(m.trace_begin_insn_o, u), cycle, uint8_t(u), false});
      if (ends >> u & 1) b_.trace.events.push_back({wordOf(m.trace_end_insn_o, u), cycle, uint8_t(u), true});
    }
  }
  template <class T>
  static uint32_t wordOf(const T& port, int i) {
    uint32_t w;
    std::memcpy(&w, bytesOf(port) + 4 * i, 4);
    return w;
  }

  // Every input VALID low (reset).
  void driveIdle() {
    V& m = *m_;
    m.m_axi_arready_i = 0;
    m.m_axi_rvalid_i = 0;
    m.m_axi_awready_i = 0;
    m.m_axi_wready_i = 0;
    m.m_axi_bvalid_i = 0;
    m.s_axil_awvalid_i = 0;
    m.s_axil_wvalid_i = 0;
    m.s_axil_bready_i = 0;
    m.s_axil_arvalid_i = 0;
    m.s_axil_rready_i = 0;
  }

  void edge() {
    m_->clk_i = 0;
    m_->eval();
    if (trace_) trace_->dump(time_);
    time_ += 5;
    edgeOnly();
  }

  void edgeOnly() {
    m_->clk_i = 1;
    m_->eval();
    if (trace_) trace_->dump(time_);
    time_ += 5;
    ++b_.cycle;
  }

  Bench& b_;
  const size_t busBytes_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> m_;
  std::unique_ptr<VerilatedFstC> trace_;
  uint64_t time_ = 0;  // trace time: a 10-unit clock period
};

}  // namespace tessera::tsim
