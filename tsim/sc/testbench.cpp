// The SystemC testbench's processes, and the process-wide kernel that elaborates every testbench once.
#include "testbench.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/generate.h"

#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_ASAN 1
#endif
#endif
#if defined(TESSERA_ASAN)
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace tessera::tsim::sc {

namespace {

// SystemC 2.3.4 tells AddressSanitizer about each switch between its process stacks, but names
// the stack of the thread that called sc_start as [0, 0) when it switches back to it. Until told
// otherwise, ASan then cannot clean that stack after an exception (it warns "ignoring requested
// __asan_handle_no_return") and later calls trip over the unwound frames' stale red zones. After
// sc_start this thread's real stack is announced again and everything below the caller's frame,
// which holds no live frame, is cleaned.
void reannounceStackToAsan() {
#if defined(TESSERA_ASAN)
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* bottom = nullptr;
  size_t size = 0;
  const bool known = pthread_attr_getstack(&attr, &bottom, &size) == 0;
  pthread_attr_destroy(&attr);
  if (!known) return;
  void* fakeStack = nullptr;
  __sanitizer_start_switch_fiber(&fakeStack, bottom, size);
  __sanitizer_finish_switch_fiber(fakeStack, nullptr, nullptr);
  __asan_handle_no_return();
#endif
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const BusWord& w) {
  std::ostringstream s;
  s << std::hex;
  for (int i = BusWord::kMaxBytes / 8 - 1; i >= 0; --i) s << w.words[i] << (i ? "_" : "");
  return os << s.str();
}
std::ostream& operator<<(std::ostream& os, const BusStrobe& st) {
  std::ostringstream s;
  s << std::hex << st.words[1] << "_" << st.words[0];
  return os << s.str();
}
void sc_trace(sc_core::sc_trace_file* tf, const BusWord& w, const std::string& name) {
  for (int i = 0; i < BusWord::kMaxBytes / 8; ++i) sc_core::sc_trace(tf, w.words[i], name + "_" + std::to_string(i));
}
void sc_trace(sc_core::sc_trace_file* tf, const BusStrobe& s, const std::string& name) {
  sc_core::sc_trace(tf, s.words[0], name + "_0");
  sc_core::sc_trace(tf, s.words[1], name + "_1");
}

namespace {
const sc_core::sc_time kHalfPeriod(5, sc_core::SC_NS);
}

// --- clock and reset ---

ClockReset::ClockReset(sc_core::sc_module_name name, TopPorts& ports) : sc_core::sc_module(name), p_(ports) {
  SC_THREAD(tick);
}

void ClockReset::request(uint64_t cycles, uint64_t resetCycles, std::function<bool()> stop) {
  left_ = cycles;
  resetLeft_ = resetCycles;
  done_ = 0;
  stop_ = std::move(stop);
  go_.notify(sc_core::SC_ZERO_TIME);
}

void ClockReset::tick() {
  // Let every other process reach its first wait, so none misses the first cycleStart.
  wait(sc_core::SC_ZERO_TIME);
  for (;;) {
    while (left_ == 0) wait(go_);
    inReset_ = resetLeft_ > 0;
    p_.rst_n.write(!inReset_);
    p_.clk.write(false);
    cycleStart_.notify();
    wait(kHalfPeriod);
    p_.clk.write(true);
    wait(kHalfPeriod);  // the rising edge's processes have all run
    --left_;
    if (resetLeft_) --resetLeft_;
    ++done_;
    if (left_ && stop_ && stop_()) left_ = 0;
  }
}

// --- host ---

HostDriver::HostDriver(sc_core::sc_module_name name, Testbench& tb) : sc_core::sc_module(name), tb_(tb) {
  SC_THREAD(run);
}

void HostDriver::run() {
  TopPorts& p = tb_.ports;
  for (;;) {
    wait(tb_.clock.cycleStart());
    Bench* b = tb_.bench_;
    if (!b) continue;  // nobody attached: the cycle runs with the last values
    const bool idle = tb_.clock.inReset();
    const LiteHost::Outputs& h = b->host.outputs();
    p.s_axil_awaddr.write(h.awaddr);
    p.s_axil_awvalid.write(h.awvalid && !idle);
    p.s_axil_wdata.write(h.wdata);
    p.s_axil_wstrb.write(0xf);
    p.s_axil_wvalid.write(h.wvalid && !idle);
    p.s_axil_bready.write(h.bready && !idle);
    p.s_axil_araddr.write(h.araddr);
    p.s_axil_arvalid.write(h.arvalid && !idle);
    p.s_axil_rready.write(h.rready && !idle);
    wait(p.clk.posedge_event());
    if (idle) continue;
    LiteSlaveSignals& l = b->lite;
    l.awready = p.s_axil_awready.read();
    l.wready = p.s_axil_wready.read();
    l.bvalid = p.s_axil_bvalid.read();
    l.bresp = static_cast<uint8_t>(p.s_axil_bresp.read());
    l.arready = p.s_axil_arready.read();
    l.rvalid = p.s_axil_rvalid.read();
    l.rresp = static_cast<uint8_t>(p.s_axil_rresp.read());
    l.rdata = p.s_axil_rdata.read();
    b->host.clock(l);
  }
}

// --- memory ---

MemoryPort::MemoryPort(sc_core::sc_module_name name, Testbench& tb) : sc_core::sc_module(name), tb_(tb) {
  SC_METHOD(drive);
  sensitive << tb.clock.cycleStart();
  dont_initialize();
  SC_METHOD(sample);
  sensitive << tb.ports.clk.posedge_event();
  dont_initialize();
}

void MemoryPort::drive() {
  Bench* b = tb_.bench_;
  if (!b) return;
  TopPorts& p = tb_.ports;
  const int busBytes = tb_.model_->busBytes();
  if (tb_.clock.inReset()) {
    // Every READY and VALID low while the accelerator is in reset, as under tsim.
    p.m_axi_arready.write(false);
    p.m_axi_rvalid.write(false);
    p.m_axi_awready.write(false);
    p.m_axi_wready.write(false);
    p.m_axi_bvalid.write(false);
    return;
  }
  const AxiSlaveSignals& s = b->mem.outputs();
  p.m_axi_arready.write(s.arready);
  p.m_axi_rvalid.write(s.rvalid);
  p.m_axi_rlast.write(s.rlast);
  p.m_axi_rresp.write(s.rresp);
  BusWord r;
  std::memcpy(r.bytes(), s.rdata, static_cast<size_t>(busBytes));
  p.m_axi_rdata.write(r);
  p.m_axi_awready.write(s.awready);
  p.m_axi_wready.write(s.wready);
  p.m_axi_bvalid.write(s.bvalid);
  p.m_axi_bresp.write(s.bresp);
}

void MemoryPort::sample() {
  Bench* b = tb_.bench_;
  if (!b || tb_.clock.inReset()) return;
  const TopPorts& p = tb_.ports;
  AxiMasterSignals& a = b->axi;
  a.araddr = p.m_axi_araddr.read();
  a.arlen = static_cast<uint8_t>(p.m_axi_arlen.read());
  a.arsize = static_cast<uint8_t>(p.m_axi_arsize.read());
  a.arburst = static_cast<uint8_t>(p.m_axi_arburst.read());
  a.arvalid = p.m_axi_arvalid.read();
  a.rready = p.m_axi_rready.read();
  a.awaddr = p.m_axi_awaddr.read();
  a.awlen = static_cast<uint8_t>(p.m_axi_awlen.read());
  a.awsize = static_cast<uint8_t>(p.m_axi_awsize.read());
  a.awburst = static_cast<uint8_t>(p.m_axi_awburst.read());
  a.awvalid = p.m_axi_awvalid.read();
  a.wvalid = p.m_axi_wvalid.read();
  if (a.wvalid) wdata_ = p.m_axi_wdata.read();
  a.wdata = wdata_.bytes();
  const BusStrobe& st = p.m_axi_wstrb.read();
  a.wstrb[0] = st.words[0];
  a.wstrb[1] = st.words[1];
  a.wlast = p.m_axi_wlast.read();
  a.bready = p.m_axi_bready.read();
  b->mem.clock(a);
}

// --- testbench ---

Testbench::Testbench(sc_core::sc_module_name name, const HardwareFactory& factory, int busBytes)
    : sc_core::sc_module(name),
      clock("clock", ports),
      model_(factory("hw", busBytes)),
      host_("host", *this),
      memory_("memory", *this) {
  if (model_->busBytes() != busBytes)
    throw Error(std::string("SystemC testbench ") + basename(),
                "the hardware model has a " + std::to_string(model_->busBytes()) + "-byte bus, the config " +
                    std::to_string(busBytes));
  model_->bind(ports);
  SC_METHOD(onEdge);
  sensitive << ports.clk.posedge_event();
  dont_initialize();
}

void Testbench::onEdge() {
  if (!bench_) return;
  bench_->irq = ports.irq.read();
  if (tracing_) model_->sampleTrace();
  ++bench_->cycle;
}

uint64_t Testbench::run(uint64_t cycles, uint64_t resetCycles, bool untilIrq) {
  if (cycles == 0) return 0;
  tracing_ = bench_ && bench_->trace.on;
  model_->traceTo(tracing_ ? &bench_->trace.events : nullptr);
  clock.request(cycles, resetCycles, [this, untilIrq] {
    return (untilIrq && bench_->irq) || bench_->mem.violated() || !model_->stopReason().empty();
  });
  try {
    sc_core::sc_start();  // until the clock stops asking: nothing else has events
  } catch (...) {
    reannounceStackToAsan();
    throw;
  }
  reannounceStackToAsan();
  return clock.cyclesDone();
}

// --- kernel ---

std::vector<Kernel::Entry>& Kernel::entries() {
  static std::vector<Entry> kEntries;
  return kEntries;
}

bool& Kernel::elaborated() {
  static bool kElaborated = false;
  return kElaborated;
}

void Kernel::registerModel(const std::string& kind, const std::string& config, int busBytes, HardwareFactory factory) {
  if (elaborated())
    throw Error("SystemC model " + kind + " for config " + config,
                "registered after the SystemC kernel elaborated its testbenches (SystemC builds its hierarchy "
                "once per process): register every model before the first rtl-sc device");
  for (const Entry& e : entries())
    if (e.kind == kind && e.config == config)
      throw Error("SystemC model " + kind + " for config " + config, "registered twice");
  entries().push_back({kind, config, busBytes, std::move(factory), nullptr});
}

Kernel::Kernel() : thread_(std::this_thread::get_id()) {
  // SystemC prints its banner to stdout at elaboration; tessera's output is the user's.
  ::setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  for (int i = 0; i < kBuiltModelCount; ++i) {
    const BuiltModel& m = kBuiltModels[i];
    if (!m.createScHardware) continue;
    const int busBytes = hw::Config::named(m.config).busBytes;
    registerModel("rtl", m.config, busBytes, m.createScHardware);
  }
  for (int i = 0; i < kBuiltHlsScModelCount; ++i) {
    const BuiltHlsScModel& m = kBuiltHlsScModels[i];
    const int busBytes = hw::Config::named(m.config).busBytes;
    registerModel("hls", m.config, busBytes, m.createScHardware);
  }
  elaborated() = true;
  // The testbenches are never destroyed: SystemC tears its hierarchy down only at process exit.
  for (Entry& e : entries())
    e.bench = new Testbench(sc_core::sc_module_name((e.kind + "_" + e.config).c_str()), e.factory, e.busBytes);
}

Kernel& Kernel::get() {
  static Kernel* const kKernel = new Kernel();
  return *kKernel;
}

Testbench& Kernel::testbench(const std::string& kind, const std::string& config) {
  if (std::this_thread::get_id() != thread_)
    throw Error("rtl-sc", "the SystemC kernel belongs to the thread that first used it; SystemC runs one "
                          "simulation per process on one thread, so every rtl-sc device must be used from that thread");
  for (Entry& e : entries())
    if (e.kind == kind && e.config == config) return *e.bench;
  throw Error("SystemC testbench", "no model of kind " + kind + " for config " + config + " in this build");
}

}  // namespace tessera::tsim::sc

// libsystemc's own main() calls sc_main, so the library cannot be linked without one. tessera's
// programs have their own main and start SystemC through Kernel; if SystemC's main is ever the
// entry point, this says why nothing runs.
extern "C" int sc_main(int, char*[]) {
  std::fprintf(stderr, "tessera: SystemC's main() is not an entry point of tessera programs\n");
  return 1;
}
