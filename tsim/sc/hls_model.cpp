// The hls-sc hardware model: the HLS design's fetch, load, compute and store as clocked SystemC threads behind tessera_top's ports.
//
// Compiled once per config, like the design itself (TESSERA_HLS_NS names the config's copy of the
// design; TESSERA_HLS_SC_CONFIG its name; TESSERA_HLS_SC_FACTORY the factory this file defines).
#include <sys/mman.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "axi_master.h"
#include "ports.h"
#include "tessera/gen/host_interface.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "tessera_hls.h"

namespace tessera::tsim::sc {

namespace {

namespace d = TESSERA_HLS_NS;

static_assert(sizeof(d::bus_t) * 8 == VTA_BUS_WIDTH, "the shadow DRAM is read through bus_t*: one bus word each");
static_assert(VTA_INS_WIDTH == 128, "instructions are two 64-bit words");

// The timing annotation (tsim/README.md, "Timing annotation"). The design's C++ does the work of an
// instruction in zero time; the model charges the cycles its pipelined loops take at the II
// their pragmas ask for, and the DRAM transfers take place on the AXI port against the memory
// model, cycle by cycle.
namespace timing {
constexpr uint32_t kFetchBlock = 16;  // fetch reads instructions 16 at a time, at most two reads ahead
constexpr uint32_t kDispatch = 1;     // FETCH loop, II=1: one instruction into a queue per cycle
constexpr uint32_t kIssue = 1;        // take an instruction from the queue with its tokens
constexpr uint32_t kLoadDepth = 3;    // TILE loop pipeline depth (address, read word, SRAM write)
constexpr uint32_t kUopDepth = 2;     // LOAD_UOPS loop pipeline depth
constexpr uint32_t kComputeDepth = 5; // LOOP_UOP pipeline depth (micro-op, SRAM reads, GEMM/ALU, write)
constexpr uint32_t kStoreDepth = 2;   // STORE loop pipeline depth (SRAM read, W beat)
constexpr uint32_t kAluVectorII = 2;  // a vector ALU micro-op reads two accumulator rows: II=2
constexpr uint64_t kProgressChunk = 1024;  // long instructions report micro-ops in steps this long
}  // namespace timing

// Module status word states, modules and counters: the host-interface contract's (tessera::host).
enum State : uint32_t {
  kIdle = host::kStateIdle, kBusy = host::kStateBusy, kWaitPop = host::kStateWaitPop, kWaitPush = host::kStateWaitPush,
  kQueueFull = host::kStateFetchQueueFull, kHalted = host::kStateHaltedAtFinish, kAllDispatched = host::kStateAllDispatched
};
enum Module { kFetchM = host::kModuleFetch, kLoadM = host::kModuleLoad, kComputeM = host::kModuleCompute,
              kStoreM = host::kModuleStore };
constexpr int kCounters = host::kNumCounters;

struct Status {
  uint32_t state = kIdle, arg = 0, insn = 0;
  uint64_t busy = 0, stall = 0, since = 0;  // cycle counters and the edge the state began
};

// The 4 GiB the AXI port can address, as the design's bus_t array: reserved, paged in on touch.
class ShadowDram {
 public:
  static constexpr uint64_t kBytes = uint64_t(1) << 32;
  ShadowDram() {
    void* p = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw Error("hls-sc model", "cannot reserve 4 GiB of address space for its DRAM image");
    base_ = static_cast<uint8_t*>(p);
  }
  ~ShadowDram() { ::munmap(base_, kBytes); }
  ShadowDram(const ShadowDram&) = delete;
  ShadowDram& operator=(const ShadowDram&) = delete;
  uint8_t* bytes() const { return base_; }
  d::bus_t* words() const { return reinterpret_cast<d::bus_t*>(base_); }

 private:
  uint8_t* base_ = nullptr;
};

class HlsScModel final : public sc_core::sc_module, public HardwareModel {
 public:
  SC_HAS_PROCESS(HlsScModel);

  HlsScModel(sc_core::sc_module_name name, int busBytes)
      : sc_core::sc_module(name),
        cfg_(hw::Config::named(TESSERA_HLS_SC_CONFIG)),
        isa_(cfg_),
        a_(new d::accel_t()),
        axi_(busBytes, shadow_.bytes()) {
    if (busBytes != VTA_BUS_BYTES || cfg_.busBytes != VTA_BUS_BYTES)
      throw Error("hls-sc model for config " TESSERA_HLS_SC_CONFIG,
                  "built for a " + std::to_string(VTA_BUS_BYTES) + "-byte bus, asked for " + std::to_string(busBytes));
    SC_METHOD(onFall);
    sensitive << clk_.neg();
    dont_initialize();
    SC_METHOD(onRise);
    sensitive << clk_.pos();
    dont_initialize();
    // The stages: clocked threads (each wait() is one rising edge) that sleep on changed_ while
    // blocked, so a stalled stage costs nothing per cycle.
    SC_THREAD(fetchThread);
    sensitive << clk_.pos();
    async_reset_signal_is(rstN_, false);
    dont_initialize();
    SC_THREAD(loadThread);
    sensitive << clk_.pos();
    async_reset_signal_is(rstN_, false);
    dont_initialize();
    SC_THREAD(computeThread);
    sensitive << clk_.pos();
    async_reset_signal_is(rstN_, false);
    dont_initialize();
    SC_THREAD(storeThread);
    sensitive << clk_.pos();
    async_reset_signal_is(rstN_, false);
    dont_initialize();
  }

  void bind(TopPorts& p) override {
    clk_(p.clk);
    rstN_(p.rst_n);
    p_ = &p;
  }
  int busBytes() const override { return VTA_BUS_BYTES; }
  std::string stopReason() const override { return stopReason_; }
  void clearStop() override { stopReason_.clear(); }
  // No trace port: the stage threads record their instructions' events as they go.
  void traceTo(std::vector<hw::TraceEvent>* events) override { trace_ = events; }
  void sampleTrace() override {}

 private:
  // ------------------------------------------------------------------ clocking and registers

  // Counting falling edges gives every rising-edge process the same cycle number.
  void onFall() { ++edge_; }

  void onRise() {
    if (!rstN_.read()) {
      resetAll();
      axi_.reset();
      drive();
      return;
    }
    registerPort();
    if (startNow_) {
      startNow_ = false;
      startRun();
      notifyChange();
    } else if (running_) {
      ++cycles_;
      ++runCycles_;
      if (faultPending_) {
        running_ = false;
        fault_ = true;
      } else if (finishPending_) {
        running_ = false;
        done_ = true;
        // FINISH ends with the run's last counted cycle, as on the RTL.
        traceEvent(host::kTraceCompute, finishInsn_, true, runCycles_ - 1);
      }
    }
    const uint64_t completions = axi_.completions();
    axi_.clock(*p_);
    if (axi_.completions() != completions) notifyChange();
    drive();
  }

  void drive() {
    TopPorts& p = *p_;
    p.s_axil_awready.write(!awHave_);
    p.s_axil_wready.write(!wHave_);
    p.s_axil_bvalid.write(bValid_);
    p.s_axil_bresp.write(0);
    p.s_axil_arready.write(!rValid_);
    p.s_axil_rvalid.write(rValid_);
    p.s_axil_rresp.write(0);
    p.s_axil_rdata.write(rData_);
    p.irq.write(done_ || fault_);
    axi_.drive(p);
  }

  // AXI4-Lite slave with the RTL's behaviour: address and data latched separately, the write
  // done and answered once both are in, a read answered the cycle after its address.
  void registerPort() {
    const TopPorts& p = *p_;
    const bool doWrite = awHave_ && wHave_ && !bValid_;
    const bool awReady = !awHave_, wReady = !wHave_, arReady = !rValid_;
    if (doWrite) {
      awHave_ = wHave_ = false;
      bValid_ = true;
      writeRegister(awAddr_, wData_, wStrb_);
    } else if (bValid_ && p.s_axil_bready.read()) {
      bValid_ = false;
    }
    if (p.s_axil_awvalid.read() && awReady) {
      awHave_ = true;
      awAddr_ = p.s_axil_awaddr.read() & 0xffc;
    }
    if (p.s_axil_wvalid.read() && wReady) {
      wHave_ = true;
      wData_ = p.s_axil_wdata.read();
      wStrb_ = p.s_axil_wstrb.read();
    }
    if (p.s_axil_arvalid.read() && arReady) {
      rValid_ = true;
      rData_ = readRegister(p.s_axil_araddr.read() & 0xffc);
    } else if (rValid_ && p.s_axil_rready.read()) {
      rValid_ = false;
    }
  }

  static uint32_t merge(uint32_t old, uint32_t data, uint32_t strb) {
    uint32_t v = old;
    for (int i = 0; i < 4; ++i)
      if (strb >> i & 1) v = (v & ~(0xffu << 8 * i)) | (data & 0xffu << 8 * i);
    return v;
  }

  void writeRegister(uint32_t addr, uint32_t data, uint32_t strb) {
    switch (addr) {
      case host::kRegCtrl:
        if ((strb & 1) && (data & host::kCtrlStart) && !running_) startNow_ = true;
        break;
      case host::kRegInsnCount: insnCount_ = merge(insnCount_, data, strb); break;
      case host::kRegInsnAddr: insnAddr_ = merge(insnAddr_, data, strb); break;
      default: break;  // read-only or reserved: acknowledged and ignored, as by the RTL
    }
  }

  uint32_t moduleInsn(int m) const {
    if (m == kFetchM) return a_->fetch_st.retired.to_uint();
    const Status& s = status_[m];
    if (s.state == kIdle && !indices_[m - 1].empty()) return indices_[m - 1].front();
    return s.insn;
  }

  uint64_t counter(int i) {
    for (int m = 0; m < 4; ++m) account(m);
    switch (i) {
      case host::kCounterCycles: return runCycles_;
      case host::kCounterDramReadBeats: return axi_.readBeats() - beatsAtStart_[0];
      case host::kCounterDramWriteBeats: return axi_.writeBeats() - beatsAtStart_[1];
      case host::kCounterGemmUops: return gemmUops_;
      case host::kCounterAluUops: return aluUops_;
      case host::kCounterRetired: return retired_;
      default: {
        // The busy and stall counters alternate per module from kCounterFetchBusy.
        const int k = i - host::kCounterFetchBusy;
        return k % 2 == 0 ? status_[k / 2].busy : status_[k / 2].stall;
      }
    }
  }

  uint32_t readRegister(uint32_t addr) {
    switch (addr) {
      case host::kRegCtrl:
        return (fault_ ? host::kCtrlFault : 0u) | (done_ ? host::kCtrlDone : 0u) | (running_ ? host::kCtrlRunning : 0u);
      case host::kRegCycles: return cycles_;
      case host::kRegInsnCount: return insnCount_;
      case host::kRegInsnAddr: return insnAddr_;
      case host::kRegFaultCause: return faultCause_;
      case host::kRegFaultInsn: return faultInsn_;
      case host::kRegFaultInfo: return faultInfo_;
      default: break;
    }
    auto in = [addr](uint32_t base, int count) { return addr >= base && addr < base + 4 * uint32_t(count); };
    if (in(host::kStatusBase, host::kNumModules)) {
      const Status& s = status_[(addr - host::kStatusBase) / 4];
      return s.state | s.arg << host::kStatusStateBits;
    }
    if (in(host::kInsnBase, host::kNumModules)) return moduleInsn(int(addr - host::kInsnBase) / 4);
    if (in(host::kTokensBase, host::kNumTokenQueues))
      return uint32_t(tokenQueue(int(addr - host::kTokensBase) / 4).size());
    if (in(host::kQueueBase, host::kNumInsnQueues)) return uint32_t(insnQueue(int(addr - host::kQueueBase) / 4).size());
    if (addr >= host::kCountersBase && addr < host::kCountersBase + 8 * kCounters) {
      const uint64_t v = counter(int(addr - host::kCountersBase) / 8);
      return addr % 8 ? uint32_t(v >> 32) : uint32_t(v);
    }
    return 0;
  }

  void startRun() {
    running_ = true;
    done_ = fault_ = false;
    cycles_ = 0;
    faultCause_ = faultInsn_ = faultInfo_ = 0;
    faultPending_ = finishPending_ = false;
    halted_ = computeHalted_ = false;
    for (int m = 0; m < 4; ++m) {
      account(m);
      status_[m].busy = status_[m].stall = 0;
    }
    runCycles_ = 0;
    runStartEdge_ = edge_;
    beatsAtStart_[0] = axi_.readBeats();
    beatsAtStart_[1] = axi_.writeBeats();
    gemmUops_ = aluUops_ = retired_ = 0;
    d::reset_stage(a_->fetch_st);
    d::reset_stage(a_->load_st);
    d::reset_stage(a_->store_st);
    d::reset_compute(a_->compute_st);
    ++runId_;
  }

  void resetAll() {
    running_ = done_ = fault_ = startNow_ = false;
    faultPending_ = finishPending_ = halted_ = computeHalted_ = false;
    cycles_ = insnCount_ = insnAddr_ = 0;
    faultCause_ = faultInsn_ = faultInfo_ = 0;
    awHave_ = wHave_ = bValid_ = rValid_ = false;
    awAddr_ = wData_ = wStrb_ = rData_ = 0;
    for (int m = 0; m < 4; ++m) status_[m] = Status{kIdle, 0, 0, 0, 0, edge_};
    runCycles_ = gemmUops_ = aluUops_ = retired_ = 0;
    beatsAtStart_[0] = axi_.readBeats();
    beatsAtStart_[1] = axi_.writeBeats();
    a_->load_q.clear();
    a_->compute_q.clear();
    a_->store_q.clear();
    a_->l2c.clear();
    a_->c2l.clear();
    a_->c2s.clear();
    a_->s2c.clear();
    for (auto& q : pending_) q.clear();
    one_.clear();
    for (auto& i : indices_) i.clear();
    d::reset_stage(a_->fetch_st);
    d::reset_stage(a_->load_st);
    d::reset_stage(a_->store_st);
    d::reset_compute(a_->compute_st);
  }

  d::token_queue_t& tokenQueue(int q) {
    switch (q) {
      case d::Q_L2C: return a_->l2c;
      case d::Q_C2L: return a_->c2l;
      case d::Q_C2S: return a_->c2s;
      default: return a_->s2c;
    }
  }
  d::insn_queue_t& insnQueue(int stage) { return stage == 0 ? a_->load_q : stage == 1 ? a_->compute_q : a_->store_q; }

  // ------------------------------------------------------------------ accounting

  void account(int m) {
    Status& s = status_[m];
    const uint64_t cycles = edge_ - s.since;
    s.since = edge_;
    if (s.state == kBusy) s.busy += cycles;
    else if (s.state == kWaitPop || s.state == kWaitPush || s.state == kQueueFull) s.stall += cycles;
  }

  void setState(int m, uint32_t state, uint32_t arg = 0) {
    Status& s = status_[m];
    if (s.state == state && s.arg == arg) return;
    account(m);
    s.state = state;
    s.arg = arg;
  }

  // ------------------------------------------------------------------ instruction trace

  // The run cycle a thread woken at this rising edge works in: cycle 0 follows the edge that
  // started the run, as the RTL's first counted cycle follows the edge that sets running.
  uint64_t runCycle() const { return edge_ - runStartEdge_; }
  // An instruction begins on `unit` in run cycle `cycle`, or (end) its span there ends with that
  // cycle, as the RTL's end strobe would be high in it.
  void traceEvent(int unit, uint32_t insn, bool end, uint64_t cycle) {
    if (trace_) trace_->push_back({insn, uint32_t(cycle), uint8_t(unit), end});
  }
  // Its compute stage runs one instruction at a time; the units are those of the RTL's pipes.
  static int computeUnit(const hw::Insn& i) {
    if (i.opcode == hw::Opcode::kGemm) return i.reset ? host::kTraceAluPipe : host::kTraceGemmPipe;
    return i.opcode == hw::Opcode::kAlu ? host::kTraceAluPipe : host::kTraceCompute;
  }

  // Wakes every stage blocked on a queue, a token or a transfer; it looks again at the next edge.
  void notifyChange() { changed_.notify(sc_core::SC_ZERO_TIME); }
  void waitForChange() {
    wait(changed_);
    wait();
  }

  // The model found the design in a state it cannot be in: the simulation stops with this reason.
  void modelBug(const std::string& what) {
    if (stopReason_.empty()) stopReason_ = "hls-sc model: " + what + " (a bug in the model or the design)";
    halted_ = true;
    notifyChange();
  }

  void raiseFault(uint32_t cause, uint32_t insn, uint32_t info) {
    if (faultPending_) return;
    faultPending_ = true;
    faultCause_ = cause;
    faultInsn_ = insn;
    faultInfo_ = info;
    halted_ = true;
    notifyChange();
  }

  // ------------------------------------------------------------------ thread helpers

  hw::Insn decode(const d::insn_t& insn) const {
    hw::RawInsn raw;
    raw.lo = insn.range(63, 0).to_uint64();
    raw.hi = insn.range(127, 64).to_uint64();
    return isa_.decode(raw);
  }
  // Vector ALU micro-ops whose source row is the previous micro-op's and that micro-op did not
  // write it: LOOP_UOP uses the held row (tessera_hls.cpp), one cycle instead of two.
  uint64_t heldSourceReuses(const hw::Insn& i) const {
    uint64_t reuses = 0, prevSrc = 0, prevDst = 0;
    bool have = false;
    for (uint32_t o = 0; o < i.iterOut; ++o)
      for (uint32_t n = 0; n < i.iterIn; ++n)
        for (uint32_t u = i.uopBgn; u < i.uopEnd && u < VTA_UOP_BUFF_DEPTH; ++u) {
          const hw::Uop uop = isa_.decodeUop(uint32_t(a_->uop_mem[u].to_uint64()));
          const uint64_t dst = uint64_t(uop.dst) + uint64_t(o) * i.dstFactorOut + uint64_t(n) * i.dstFactorIn;
          const uint64_t src = uint64_t(uop.src) + uint64_t(o) * i.srcFactorOut + uint64_t(n) * i.srcFactorIn;
          if (have && src == prevSrc && prevDst != prevSrc) ++reuses;
          prevSrc = src;
          prevDst = dst;
          have = true;
        }
    return reuses;
  }


  // Bus words covering `bytes` bytes at `addr`: first word's address and count.
  struct Words {
    uint64_t addr;
    uint32_t beats;
  };
  static Words covering(uint64_t addr, uint64_t bytes) {
    const uint64_t first = addr / VTA_BUS_BYTES * VTA_BUS_BYTES;
    const uint64_t end = (addr + bytes + VTA_BUS_BYTES - 1) / VTA_BUS_BYTES * VTA_BUS_BYTES;
    return {first, uint32_t((end - first) / VTA_BUS_BYTES)};
  }
  static uint32_t wordsPerElem(int elemBytes) { return uint32_t((elemBytes + VTA_BUS_BYTES - 1) / VTA_BUS_BYTES); }

  // Reads every row of a LOAD's tile for `reader`; returns the last ticket (0: nothing read).
  uint64_t readTile(int reader, const hw::Insn& i, int elemBytes) {
    uint64_t ticket = 0;
    for (uint32_t y = 0; y < i.ySize; ++y) {
      const Words w = covering((uint64_t(i.dramBase) + uint64_t(y) * i.xStride) * uint64_t(elemBytes),
                               uint64_t(i.xSize) * uint64_t(elemBytes));
      ticket = axi_.read(reader, w.addr, w.beats);
    }
    return ticket;
  }

  // Cycles of the padded tile loop: II = bus words per element for data, 1 for padding.
  static uint64_t tileCycles(const hw::Insn& i, int elemBytes) {
    const uint64_t all = uint64_t(i.yPad0 + i.ySize + i.yPad1) * (i.xPad0 + i.xSize + i.xPad1);
    const uint64_t data = uint64_t(i.ySize) * i.xSize;
    return data * wordsPerElem(elemBytes) + (all - data);
  }

  // Waits until read `ticket` of `reader` has all its data. False if the run stopped or the port
  // answered an error (then the fault is raised for instruction `index`).
  bool awaitRead(int reader, uint64_t ticket, uint32_t index) {
    while (!axi_.readDone(reader, ticket)) {
      if (halted_) return false;
      waitForChange();
    }
    if (axi_.readError() && axi_.readErrorReader() == reader) {
      raiseFault(host::kFaultDramReadError, index, uint32_t(reader));
      return false;
    }
    return !halted_;
  }

  // Waits until edge `end`; false if the run stopped meanwhile.
  bool waitUntil(uint64_t end) {
    while (edge_ < end) {
      if (halted_) return false;
      wait(int(std::min<uint64_t>(end - edge_, timing::kProgressChunk)));
    }
    return !halted_;
  }

  // Waits until the instruction at the head of module `m` has its tokens and room for its pushes.
  bool awaitTokens(int m, const int (&pops)[2], const int (&pushes)[2]) {
    for (;;) {
      if (halted_) return false;
      int blockedOn = -1;
      uint32_t state = kBusy;
      for (int q : pops)
        if (q >= 0 && blockedOn < 0 && tokenQueue(q).empty()) {
          blockedOn = q;
          state = kWaitPop;
        }
      for (int q : pushes)
        if (q >= 0 && blockedOn < 0 && tokenQueue(q).full()) {
          blockedOn = q;
          state = kWaitPush;
        }
      if (blockedOn < 0) return true;
      setState(m, state, uint32_t(blockedOn));
      waitForChange();
    }
  }

  // Takes module `m`'s next instruction into its register; false if there is none to take.
  bool take(int m, d::insn_t& insn, uint32_t& index) {
    d::insn_queue_t& q = insnQueue(m - 1);
    if (halted_ || q.empty()) return false;
    insn = q.read();
    notifyChange();  // room in the queue for fetch
    index = indices_[m - 1].front();
    indices_[m - 1].pop_front();
    status_[m].insn = index;
    return true;
  }

  // An instruction of module `m` completes: its held-back token pushes become visible (only its
  // own: another stage's instruction may still be in progress with pushes held back).
  void complete(int m) {
    static const int kPushes[4][2] = {{-1, -1}, {d::Q_L2C, -1}, {d::Q_C2L, d::Q_C2S}, {d::Q_S2C, -1}};
    for (int q : kPushes[m])
      if (q >= 0)
        while (!pending_[q].empty()) tokenQueue(q).write(pending_[q].read());
    notifyChange();  // tokens pushed, and those the design popped made room
    ++retired_;
    setState(m, kBusy);
  }

  // The design's stage function ran on one instruction and must have retired it.
  bool retiredOne(const char* stage, int rc, const d::stage_state_t& st, uint32_t before, uint32_t index) {
    if ((rc == d::STAGE_IDLE || rc == d::STAGE_DONE) && st.holding == 0 && st.retired.to_uint() == before + 1) return true;
    modelBug(std::string(stage) + " returned status " + std::to_string(rc) + " on instruction " + std::to_string(index) +
             " although its tokens were available");
    return false;
  }

  // ------------------------------------------------------------------ the stages

  void fetchThread() {
    uint64_t seen = runId_;
    for (;;) {
      while (runId_ == seen) waitForChange();
      seen = runId_;
      fetchRun();
    }
  }

  void fetchRun() {
    const uint32_t count = insnCount_;
    const uint64_t base = insnAddr_;
    const uint64_t run = runId_;
    setState(kFetchM, kBusy);
    std::deque<std::pair<uint32_t, uint64_t>> blocks;  // (end index, read ticket), oldest first
    uint32_t requested = 0, have = 0;
    auto request = [&] {
      while (requested < count && blocks.size() < 2) {
        const uint32_t n = std::min(timing::kFetchBlock, count - requested);
        const Words w = covering(base + uint64_t(requested) * 16, uint64_t(n) * 16);
        blocks.emplace_back(requested + n, axi_.read(AxiMaster::kFetch, w.addr, w.beats));
        requested += n;
      }
    };
    request();
    while (a_->fetch_st.retired.to_uint() < count) {
      if (halted_ || runId_ != run) return;
      const uint32_t next = a_->fetch_st.retired.to_uint();
      if (next >= have) {
        setState(kFetchM, kBusy);
        if (!awaitRead(AxiMaster::kFetch, blocks.front().second, next)) return;
        have = blocks.front().first;
        blocks.pop_front();
        request();
        continue;
      }
      size_t sizes[3];
      for (int s = 0; s < 3; ++s) sizes[s] = insnQueue(s).size();
      const int rc = d::fetch(next + 1, base, shadow_.words(), a_->fetch_st, a_->load_q, a_->compute_q, a_->store_q);
      if (rc == d::STAGE_WAIT_INSN_Q) {
        setState(kFetchM, kQueueFull, a_->fetch_st.wait_queue.to_uint());
        waitForChange();
        continue;
      }
      int to = -1;
      for (int s = 0; s < 3; ++s)
        if (insnQueue(s).size() == sizes[s] + 1) to = s;
      if (to < 0 || a_->fetch_st.retired.to_uint() != next + 1) {
        modelBug("fetch did not dispatch instruction " + std::to_string(next));
        return;
      }
      indices_[to].push_back(next);
      traceEvent(host::kTraceFetch, next, false, runCycle());
      traceEvent(host::kTraceFetch, next, true, runCycle());
      notifyChange();
      setState(kFetchM, kBusy);
      wait(int(timing::kDispatch));
    }
    setState(kFetchM, kAllDispatched);
  }

  void loadThread() {
    for (;;) {
      d::insn_t insn;
      uint32_t index;
      if (!take(kLoadM, insn, index)) {
        setState(kLoadM, kIdle);
        waitForChange();
        continue;
      }
      const hw::Insn i = decode(insn);
      if (!awaitTokens(kLoadM, {i.popNext ? int(d::Q_C2L) : -1, -1}, {i.pushNext ? int(d::Q_L2C) : -1, -1})) continue;
      setState(kLoadM, kBusy);
      traceEvent(host::kTraceLoad, index, false, runCycle());
      wait(int(timing::kIssue));
      // The tile loop runs as the data arrives: it ends when both its iterations and the last
      // beat are through, plus the pipeline's depth.
      uint64_t end = edge_;
      if (i.xSize != 0) {
        const uint64_t start = edge_;
        const int elemBytes = cfg_.dramElemBytes(static_cast<hw::MemId>(i.memType));
        if (!awaitRead(AxiMaster::kLoad, readTile(AxiMaster::kLoad, i, elemBytes), index)) continue;
        end = std::max(start + tileCycles(i, elemBytes), edge_) + timing::kLoadDepth;
      }
      one_.write(insn);
      const uint32_t before = a_->load_st.retired.to_uint();
      const int rc = d::load(shadow_.words(), a_->load_st, one_, a_->c2l, pending_[d::Q_L2C], a_->inp_mem, a_->wgt_mem, 0);
      if (!retiredOne("load", rc, a_->load_st, before, index)) continue;
      if (!waitUntil(end)) continue;
      complete(kLoadM);
      traceEvent(host::kTraceLoad, index, true, runCycle() - 1);
    }
  }

  void computeThread() {
    for (;;) {
      d::insn_t insn;
      uint32_t index;
      if (computeHalted_ || !take(kComputeM, insn, index)) {
        if (!computeHalted_) setState(kComputeM, kIdle);
        waitForChange();
        continue;
      }
      const hw::Insn i = decode(insn);
      if (!awaitTokens(kComputeM, {i.popPrev ? int(d::Q_L2C) : -1, i.popNext ? int(d::Q_S2C) : -1},
                       {i.pushPrev ? int(d::Q_C2L) : -1, i.pushNext ? int(d::Q_C2S) : -1}))
        continue;
      setState(kComputeM, kBusy);
      traceEvent(computeUnit(i), index, false, runCycle());
      wait(int(timing::kIssue));
      const uint64_t start = edge_;
      uint64_t end = edge_, uops = 0;
      if (i.opcode == hw::Opcode::kLoad && i.xSize != 0) {
        uint64_t ticket, loop, depth;
        if (i.memType == uint32_t(hw::MemId::kUop)) {
          const Words w = covering(uint64_t(i.dramBase) * VTA_UOP_ELEM_BYTES, uint64_t(i.xSize) * VTA_UOP_ELEM_BYTES);
          ticket = axi_.read(AxiMaster::kCompute, w.addr, w.beats);
          loop = i.xSize;
          depth = timing::kUopDepth;
        } else {
          const int elemBytes = cfg_.dramElemBytes(static_cast<hw::MemId>(i.memType));
          ticket = readTile(AxiMaster::kCompute, i, elemBytes);
          loop = tileCycles(i, elemBytes);
          depth = timing::kLoadDepth;
        }
        if (!awaitRead(AxiMaster::kCompute, ticket, index)) continue;
        end = std::max(start + loop, edge_) + depth;
      } else if (i.opcode == hw::Opcode::kGemm || i.opcode == hw::Opcode::kAlu) {
        const uint64_t kernel = i.uopEnd > i.uopBgn ? i.uopEnd - i.uopBgn : 0;
        uops = uint64_t(i.iterOut) * i.iterIn * kernel;
        if (uops != 0) {
          const bool gemm = i.opcode == hw::Opcode::kGemm;
          const bool vector = !gemm && !i.useImm;
          const uint64_t ii = vector ? timing::kAluVectorII : 1;
          // CHECK_UOPS: one pass over the kernel (all index fields at once) before LOOP_UOP.
          end = start + kernel + uops * ii - (vector ? heldSourceReuses(i) : 0) + timing::kComputeDepth;
        }
      }
      one_.write(insn);
      const uint32_t before = a_->compute_st.s.retired.to_uint();
      const int rc = d::compute(shadow_.words(), a_->compute_st, one_, a_->l2c, pending_[d::Q_C2L], pending_[d::Q_C2S],
                                a_->s2c, 1, 0, a_->uop_mem, a_->inp_mem, a_->wgt_mem, a_->acc_mem, a_->out_mem, 0);
      if (rc == d::STAGE_FAULT) {
        one_.clear();
        const d::compute_state_t& st = a_->compute_st;
        raiseFault(host::kFaultSramIndex, index, uint32_t(st.fault_field.to_uint()) | st.fault_uop.to_uint() << 2);
        continue;
      }
      if (!retiredOne("compute", rc, a_->compute_st.s, before, index)) continue;
      if (!countMicroOps(i.opcode == hw::Opcode::kGemm, uops, start, end)) continue;
      complete(kComputeM);
      if (i.opcode != hw::Opcode::kFinish) traceEvent(computeUnit(i), index, true, runCycle() - 1);
      if (i.opcode == hw::Opcode::kFinish) {
        finishInsn_ = index;
        finishPending_ = true;
        computeHalted_ = true;
        setState(kComputeM, kHalted);
      }
    }
  }

  // Spends the cycles of a GEMM/ALU instruction until edge `end`, counting its micro-ops as they
  // go (the run protocol's watchdog watches them), all of them by the end.
  bool countMicroOps(bool gemm, uint64_t uops, uint64_t start, uint64_t end) {
    uint64_t& counter = gemm ? gemmUops_ : aluUops_;
    uint64_t counted = 0;
    while (edge_ < end) {
      if (halted_) return false;
      wait(int(std::min<uint64_t>(end - edge_, timing::kProgressChunk)));
      const uint64_t due = uops * (edge_ - start) / (end - start);
      counter += due - counted;
      counted = due;
    }
    counter += uops - counted;
    return !halted_;
  }

  void storeThread() {
    for (;;) {
      d::insn_t insn;
      uint32_t index;
      if (!take(kStoreM, insn, index)) {
        setState(kStoreM, kIdle);
        waitForChange();
        continue;
      }
      const hw::Insn i = decode(insn);
      if (!awaitTokens(kStoreM, {i.popPrev ? int(d::Q_C2S) : -1, -1}, {i.pushPrev ? int(d::Q_S2C) : -1, -1})) continue;
      setState(kStoreM, kBusy);
      traceEvent(host::kTraceStore, index, false, runCycle());
      wait(int(timing::kIssue));
      const uint64_t start = edge_;
      // The design reads the output SRAM into the DRAM image; the port then writes it out.
      one_.write(insn);
      const uint32_t before = a_->store_st.retired.to_uint();
      const int rc = d::store(shadow_.words(), a_->store_st, one_, a_->c2s, pending_[d::Q_S2C], a_->out_mem, 0);
      if (!retiredOne("store", rc, a_->store_st, before, index)) continue;
      uint64_t end = edge_;
      if (i.xSize != 0) {
        const int elemBytes = VTA_OUT_ELEM_BYTES;
        uint64_t ticket = 0;
        for (uint32_t y = 0; y < i.ySize; ++y) {
          const Words w = covering((uint64_t(i.dramBase) + uint64_t(y) * i.xStride) * uint64_t(elemBytes),
                                   uint64_t(i.xSize) * uint64_t(elemBytes));
          ticket = axi_.write(w.addr, w.beats);
        }
        // The STORE loop feeds the W beats: the instruction ends when its loop and the last B are through.
        end = start + uint64_t(i.ySize) * i.xSize * wordsPerElem(elemBytes) + timing::kStoreDepth;
        while (!axi_.writeDone(ticket)) {
          if (halted_) break;
          waitForChange();
        }
        if (halted_) continue;
        if (axi_.writeError()) {
          raiseFault(host::kFaultDramWriteError, index, 0);
          continue;
        }
      }
      if (!waitUntil(end)) continue;
      complete(kStoreM);
      traceEvent(host::kTraceStore, index, true, runCycle() - 1);
    }
  }

  // ------------------------------------------------------------------ state

  const hw::Config cfg_;
  const hw::Isa isa_;
  ShadowDram shadow_;
  std::unique_ptr<d::accel_t> a_;  // queues, stage state, SRAMs (kept across runs and resets)
  d::token_queue_t pending_[4];    // token pushes of the instruction in progress, per queue
  d::insn_queue_t one_;            // hands one instruction at a time to a stage function
  std::deque<uint32_t> indices_[3];  // program index of every queued instruction, per stage queue
  AxiMaster axi_;

  sc_core::sc_in<bool> clk_{"clk"}, rstN_{"rst_n"};
  sc_core::sc_event changed_{"changed"};
  TopPorts* p_ = nullptr;
  uint64_t edge_ = 0;
  std::string stopReason_;

  // Host registers and run state.
  bool awHave_ = false, wHave_ = false, bValid_ = false, rValid_ = false;
  uint32_t awAddr_ = 0, wData_ = 0, wStrb_ = 0, rData_ = 0;
  bool startNow_ = false, running_ = false, done_ = false, fault_ = false;
  uint32_t cycles_ = 0, insnCount_ = 0, insnAddr_ = 0;
  uint32_t faultCause_ = 0, faultInsn_ = 0, faultInfo_ = 0;
  bool faultPending_ = false, finishPending_ = false;
  bool halted_ = false;         // a fault or model error stopped every module
  bool computeHalted_ = false;  // compute executed FINISH and takes nothing more this run
  uint64_t runId_ = 0;
  uint64_t runStartEdge_ = 0;  // edge_ when the run started
  uint32_t finishInsn_ = 0;    // the FINISH compute executed, whose span ends with the run
  std::vector<hw::TraceEvent>* trace_ = nullptr;

  Status status_[4];
  uint64_t runCycles_ = 0, gemmUops_ = 0, aluUops_ = 0, retired_ = 0;
  uint64_t beatsAtStart_[2] = {0, 0};
};

}  // namespace

std::unique_ptr<HardwareModel> TESSERA_HLS_SC_FACTORY(const char* name, int busBytes) {
  return std::make_unique<HlsScModel>(name, busBytes);
}

}  // namespace tessera::tsim::sc
