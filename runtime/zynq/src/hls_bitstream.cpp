// The zynq target's driver of the HLS bitstream: the design's four stage IPs (fetch, load, compute, store, each a Vitis ap_ctrl_hs block at hls_map::kIpStride bytes from the next), scheduled from the host as tessera_hls_top schedules them in C simulation.
#include <algorithm>
#include <chrono>
#include <thread>

#include "board.h"
#include "tessera/gen/hls_register_map.h"
#include "tessera/hw/hls_outcome.h"
#include "tessera/hw/program.h"
#include "tessera/runtime/zynq.h"
#include "tessera/support/error.h"
#include "tessera/support/format.h"

namespace tessera::runtime::zynq {

uint64_t hlsRegisterWindowBytes() { return uint64_t(hls_map::kNumIps) * hls_map::kIpStride; }

namespace {

class HlsBitstreamTarget final : public ZynqTarget {
 public:
  HlsBitstreamTarget(const hw::Config& cfg, hw::Dram& dram, const BoardSettings& settings)
      : ZynqTarget(cfg, dram, settings, hlsRegisterWindowBytes(),
                   "the HLS bitstream's register window (its four stage IPs, bitstream=hls)") {
    checkHlsBlocks();
    board_.openBuffer();
  }

 private:
  void execute(const std::vector<hw::Insn>& prog, uint32_t count, StagedRun& staged, uint32_t waitCycles,
               const std::string& runWhat) override {
    const hw::HlsRunOutcome outcome = runHls(prog, staged.insnAddr(), count, waitCycles, runWhat);
    staged.copyBack();
    hw::explainHlsOutcome(board_.config(), prog, outcome, waitCycles);
    hw::Counters c = hw::countProgram(prog, board_.config());
    c.runs = 0;  // counted when the run began
    counters_ += c;
  }

  uint32_t reg(uint32_t offset) const { return board_.reg(offset); }
  void setReg(uint32_t offset, uint32_t value) { board_.setReg(offset, value); }

  static uint32_t ipBase(int ip) { return static_cast<uint32_t>(ip) * hls_map::kIpStride; }
  uint32_t ipReg(int ip, uint32_t offset) const { return reg(ipBase(ip) + offset); }
  void setIpReg(int ip, uint32_t offset, uint32_t value) { setReg(ipBase(ip) + offset, value); }
  void setIpReg64(int ip, uint32_t offset, uint64_t value) {
    setIpReg(ip, offset, static_cast<uint32_t>(value));
    setIpReg(ip, offset + 4, static_cast<uint32_t>(value >> 32));
  }
  std::string ipRegName(int ip, uint32_t offset, const char* name) const {
    return std::string(hls_map::kIpNames[ip]) + "'s " + name + " (offset " + hex(offset) + " of its window at " +
           hex(ipBase(ip)) + ")";
  }

  // Every stage block must read ap_idle and no ap_start before a run: anything else is another
  // bitstream's registers or a block still busy with a run that timed out.
  void checkHlsBlocks() const {
    for (int ip = 0; ip < hls_map::kNumIps; ++ip) {
      const uint32_t ctrl = ipReg(ip, hls_map::kApCtrl);
      if (!(ctrl & hls_map::kApIdle) || (ctrl & hls_map::kApStart))
        throw Error(board_.device(), ipRegName(ip, hls_map::kApCtrl, "AP_CTRL") + " reads " + hex(ctrl) +
                                 ", not an idle Vitis HLS block (ap_idle, 0x4, clear or ap_start set): not the HLS "
                                 "bitstream's register window (bitstream=hls; is it the RTL bitstream?), or a block "
                                 "still busy after a run timed out: reload the bitstream (docs/deploy.md)");
    }
  }

  using StateWords = std::vector<uint32_t>;
  static StateWords stateWords(uint32_t bits) { return StateWords((bits + 31) / 32, 0); }
  static uint64_t field(const StateWords& w, uint32_t lsb, uint32_t bits) {
    uint64_t v = 0;
    for (uint32_t b = 0; b < bits; ++b)
      if ((w[(lsb + b) / 32] >> ((lsb + b) % 32)) & 1) v |= uint64_t(1) << b;
    return v;
  }

  // One call of a stage function on its block: its state in, ap_start, ap_done, its state out.
  // Returns the stage_status_e the call returned.
  struct StageRegs {
    int ip;
    uint32_t stIn, stOut, stValid, apReturn, stBits;
  };
  int callStage(const StageRegs& regs, StateWords& state, std::chrono::steady_clock::time_point deadline,
                const std::string& runWhat) {
    const int ip = regs.ip;
    const uint32_t stIn = regs.stIn, stOut = regs.stOut, stValid = regs.stValid;
    for (size_t i = 0; i < state.size(); ++i) setIpReg(ip, stIn + 4 * static_cast<uint32_t>(i), state[i]);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);  // the arguments before the start
    setIpReg(ip, hls_map::kApCtrl, hls_map::kApStart);
    auto pause = std::chrono::microseconds(1);
    for (;;) {
      // ap_done clears when read: this read is the one that sees it.
      const uint32_t ctrl = ipReg(ip, hls_map::kApCtrl);
      if (ctrl & hls_map::kApDone) break;
      if (std::chrono::steady_clock::now() > deadline)
        throw Error(runWhat, "the HLS bitstream's block " + std::string(hls_map::kIpNames[ip]) +
                                 " never raised ap_done: " + ipRegName(ip, hls_map::kApCtrl, "AP_CTRL") + " reads " +
                                 hex(ctrl) + " after " + board_.timeoutText() + " (target option timeout=); reload the "
                                 "bitstream before the next run (docs/deploy.md)");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(200));
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    // Without ap_vld the call left its state as it read it.
    if (ipReg(ip, stValid) & 1)
      for (size_t i = 0; i < state.size(); ++i) state[i] = ipReg(ip, stOut + 4 * static_cast<uint32_t>(i));
    return static_cast<int>(ipReg(ip, regs.apReturn));
  }

  // The design's stages return whenever they would block and keep their progress in `st`, which
  // Vitis splits into st_i (read by a call) and st_o (left by it): so the host schedules them, as
  // tessera_hls_top does in C simulation, handing each call's st_o to its next call's st_i. A
  // round calls fetch, load, store, compute; FINISH is enabled once a round moves nothing.
  static constexpr StageRegs kFetchRegs{hls_map::kFetch, hls_map::fetch::kStI, hls_map::fetch::kStO,
                                        hls_map::fetch::kStOValid, hls_map::fetch::kApReturn, hls_map::fetch::kStIBits};
  static constexpr StageRegs kLoadRegs{hls_map::kLoad, hls_map::load::kStI, hls_map::load::kStO,
                                       hls_map::load::kStOValid, hls_map::load::kApReturn, hls_map::load::kStIBits};
  static constexpr StageRegs kComputeRegs{hls_map::kCompute, hls_map::compute::kStI, hls_map::compute::kStO,
                                          hls_map::compute::kStOValid, hls_map::compute::kApReturn,
                                          hls_map::compute::kStIBits};
  static constexpr StageRegs kStoreRegs{hls_map::kStore, hls_map::store::kStI, hls_map::store::kStO,
                                        hls_map::store::kStOValid, hls_map::store::kApReturn, hls_map::store::kStIBits};

  // The stream FIFOs outlive a run: a run that faulted or deadlocked (here or in a process that
  // died) leaves instructions and tokens in them, which the next run would execute. One drain
  // call of each reader empties them all (fetch only writes).
  void drainQueues(std::chrono::steady_clock::time_point deadline, const std::string& runWhat) {
    namespace m = hls_map;
    const std::pair<const StageRegs*, uint32_t> readers[] = {
        {&kLoadRegs, m::load::kDrain}, {&kComputeRegs, m::compute::kDrain}, {&kStoreRegs, m::store::kDrain}};
    for (const auto& [regs, drain] : readers) {
      StateWords none = stateWords(regs->stBits);
      setIpReg(regs->ip, drain, 1);
      callStage(*regs, none, deadline, runWhat);
      setIpReg(regs->ip, drain, 0);
    }
  }

  hw::HlsRunOutcome runHls(const std::vector<hw::Insn>& prog, uint64_t insnAddr, uint32_t count, uint32_t waitCycles,
                           const std::string& runWhat) {
    namespace m = hls_map;
    for (int ip = 0; ip < m::kNumIps; ++ip) {
      const uint32_t ctrl = ipReg(ip, m::kApCtrl);
      if (!(ctrl & m::kApIdle) || (ctrl & m::kApStart))
        throw Error(runWhat, "the HLS bitstream's block " + std::string(m::kIpNames[ip]) + " is still busy (" +
                                 ipRegName(ip, m::kApCtrl, "AP_CTRL") + " reads " + hex(ctrl) +
                                 "); an earlier run timed out: reload the bitstream (docs/deploy.md)");
    }
    const auto deadline = std::chrono::steady_clock::now() + board_.settings().timeout;
    drainQueues(deadline, runWhat);
    setIpReg(m::kFetch, m::fetch::kInsnCount, count);
    setIpReg64(m::kFetch, m::fetch::kInsnAddr, insnAddr);
    // Instructions carry physical addresses (relocated into the buffer): every m_axi base is 0.
    setIpReg(m::kFetch, m::fetch::kDram, 0);
    setIpReg(m::kLoad, m::load::kDram, 0);
    setIpReg(m::kCompute, m::compute::kDram, 0);
    setIpReg(m::kStore, m::store::kDram, 0);
    setIpReg(m::kCompute, m::compute::kFinishEnable, 0);
    setIpReg64(m::kCompute, m::compute::kWorkBudget, waitCycles);  // the hls target's micro-op budget

    StateWords fetchSt = stateWords(kFetchRegs.stBits), loadSt = stateWords(kLoadRegs.stBits),
               computeSt = stateWords(kComputeRegs.stBits), storeSt = stateWords(kStoreRegs.stBits);
    namespace ss = m::stage_state;
    namespace cs = m::compute_state;
    auto retired = [](const StateWords& w, uint32_t base) { return field(w, base + ss::kRetiredLsb, ss::kRetiredBits); };
    constexpr int kDone = 5, kFault = 6, kAtFinish = 4;  // stage_status_e
    bool finishEnabled = false;
    hw::HlsRunOutcome r;
    for (;;) {
      const uint64_t before = retired(fetchSt, 0) + retired(loadSt, 0) + retired(storeSt, 0) +
                              retired(computeSt, cs::kSLsb);
      callStage(kFetchRegs, fetchSt, deadline, runWhat);
      callStage(kLoadRegs, loadSt, deadline, runWhat);
      callStage(kStoreRegs, storeSt, deadline, runWhat);
      const int c = callStage(kComputeRegs, computeSt, deadline, runWhat);
      if (c == kDone) { r.top = 0; break; }
      if (c == kFault) { r.top = 2; break; }
      const uint64_t after = retired(fetchSt, 0) + retired(loadSt, 0) + retired(storeSt, 0) +
                             retired(computeSt, cs::kSLsb);
      if (after != before) continue;
      if (c == kAtFinish && !finishEnabled) {
        finishEnabled = true;
        setIpReg(m::kCompute, m::compute::kFinishEnable, 1);
        continue;
      }
      r.top = -1;  // decided below, once the queues are known
      break;
    }
    // What the host cannot read (the stream FIFOs' fill) follows from the program: each stage's
    // queue holds what fetch dispatched to it and the stage has not taken; each token queue what
    // the retired instructions pushed and popped.
    const StateWords* st[3] = {&loadSt, &computeSt, &storeSt};
    r.fetched = static_cast<uint32_t>(retired(fetchSt, 0));
    for (int s = 0; s < 3; ++s) {
      r.retired[s] = static_cast<uint32_t>(retired(*st[s], 0));
      r.holding[s] = field(*st[s], ss::kHoldingLsb, ss::kHoldingBits) != 0;
      r.waitQueue[s] = static_cast<uint32_t>(field(*st[s], ss::kWaitQueueLsb, ss::kWaitQueueBits));
    }
    r.waitPush[0] = r.waitQueue[0] == uint32_t(hw::TokenQueue::kLoadToCompute);
    r.waitPush[1] = r.waitQueue[1] == uint32_t(hw::TokenQueue::kComputeToLoad) ||
                    r.waitQueue[1] == uint32_t(hw::TokenQueue::kComputeToStore);
    r.waitPush[2] = r.waitQueue[2] == uint32_t(hw::TokenQueue::kStoreToCompute);
    uint32_t dispatched[3] = {}, seen[3] = {};
    int64_t tokens[4] = {};
    for (uint32_t i = 0; i < std::min<uint32_t>(r.fetched, count); ++i) {
      const hw::Insn& in = prog[i];
      const int s = int(in.stage());
      dispatched[s] += 1;
      if (seen[s]++ >= r.retired[s]) continue;  // not executed: its tokens did not move
      using Q = hw::TokenQueue;
      auto move = [&](bool flag, Q q, int delta) { if (flag) tokens[int(q)] += delta; };
      if (s == 0) { move(in.popNext, Q::kComputeToLoad, -1); move(in.pushNext, Q::kLoadToCompute, 1); }
      if (s == 1) {
        move(in.popPrev, Q::kLoadToCompute, -1); move(in.popNext, Q::kStoreToCompute, -1);
        move(in.pushPrev, Q::kComputeToLoad, 1); move(in.pushNext, Q::kComputeToStore, 1);
      }
      if (s == 2) { move(in.popPrev, Q::kComputeToStore, -1); move(in.pushPrev, Q::kStoreToCompute, 1); }
    }
    for (int s = 0; s < 3; ++s)
      r.queued[s] = dispatched[s] - std::min(dispatched[s], r.retired[s] + (r.holding[s] ? 1u : 0u));
    for (int q = 0; q < 4; ++q) r.tokens[q] = static_cast<uint32_t>(std::max<int64_t>(0, tokens[q]));
    if (r.top == -1) {
      const bool drained = r.fetched == count && !r.queued[0] && !r.queued[1] && !r.queued[2] && !r.holding[0] &&
                           !r.holding[1] && !r.holding[2];
      r.top = drained ? 3 : 1;
    }
    r.fault = static_cast<int>(field(computeSt, cs::kFaultLsb, cs::kFaultBits));
    r.faultField = static_cast<int>(field(computeSt, cs::kFaultFieldLsb, cs::kFaultFieldBits));
    r.faultUop = static_cast<uint32_t>(field(computeSt, cs::kFaultUopLsb, cs::kFaultUopBits));
    r.faultValue = field(computeSt, cs::kFaultValueLsb, cs::kFaultValueBits);
    return r;
  }
};

}  // namespace

std::unique_ptr<Target> makeHlsBitstreamTarget(const hw::Config& cfg, hw::Dram& dram, const BoardSettings& settings) {
  return std::make_unique<HlsBitstreamTarget>(cfg, dram, settings);
}

}  // namespace tessera::runtime::zynq
