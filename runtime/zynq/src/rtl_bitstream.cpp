// The zynq target's driver of the RTL bitstream: starts a run through the accelerator's host registers (docs/rtl.md), polls CTRL, and explains faults and hangs from the status registers.
#include <algorithm>
#include <chrono>
#include <thread>

#include "board.h"
#include "tessera/gen/host_interface.h"
#include "tessera/hw/program.h"
#include "tessera/hw/run_error.h"
#include "tessera/runtime/zynq.h"
#include "tessera/support/error.h"
#include "tessera/support/format.h"

namespace tessera::runtime::zynq {

uint64_t registerWindowBytes() { return uint64_t(1) << host::kAddrWidth; }

namespace {

// Module status states of the host-interface contract.
uint32_t stateOf(uint32_t status) { return status & ((1u << host::kStatusStateBits) - 1); }
uint32_t argOf(uint32_t status) { return (status >> host::kStatusStateBits) & ((1u << host::kStatusArgBits) - 1); }

class RtlBitstreamTarget final : public ZynqTarget {
 public:
  RtlBitstreamTarget(const hw::Config& cfg, hw::Dram& dram, const BoardSettings& settings)
      : ZynqTarget(cfg, dram, settings, registerWindowBytes(), "the accelerator's register window") {
    checkHostInterface();
    board_.openBuffer();
  }

 private:
  void execute(const std::vector<hw::Insn>& prog, uint32_t count, StagedRun& staged, uint32_t waitCycles,
               const std::string& runWhat) override {
    const uint32_t before = reg(host::kRegCtrl);
    if (before & host::kCtrlRunning)
      throw Error(runWhat, "the accelerator is still running an earlier run (CTRL reads " + hex(before) +
                               "); an earlier run timed out: reload the bitstream (docs/deploy.md)");
    setReg(host::kRegInsnAddr, static_cast<uint32_t>(staged.insnAddr()));
    setReg(host::kRegInsnCount, count);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);  // the buffer's bytes before the start
    setReg(host::kRegCtrl, host::kCtrlStart);

    const uint32_t ctrl = waitForDone(prog, runWhat, waitCycles);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (ctrl & host::kCtrlFault) throwFault(prog);
    settle();
    checkBalanced(prog);

    staged.copyBack();
    accountRun(prog, count);
  }

  uint32_t reg(uint32_t offset) const { return board_.reg(offset); }
  void setReg(uint32_t offset, uint32_t value) { board_.setReg(offset, value); }
  uint64_t counter(host::Counter c) const { return board_.reg64(host::kCountersBase + 8 * static_cast<uint32_t>(c)); }

  // Polls CTRL until done or fault; a run past the timeout, or past wait_cycles by the CYCLES
  // register, is reported with every module's status.
  uint32_t waitForDone(const std::vector<hw::Insn>& prog, const std::string& runWhat, uint32_t waitCycles) {
    const auto deadline = std::chrono::steady_clock::now() + board_.settings().timeout;
    auto pause = std::chrono::microseconds(5);
    for (;;) {
      const uint32_t ctrl = reg(host::kRegCtrl);
      if (ctrl & (host::kCtrlDone | host::kCtrlFault)) return ctrl;
      if (waitCycles && reg(host::kRegCycles) >= waitCycles)
        throw Error(runWhat, "the run exceeds wait_cycles=" + std::to_string(waitCycles) + ": still running after " +
                                 std::to_string(reg(host::kRegCycles)) + " cycles; " + describe(prog));
      if (std::chrono::steady_clock::now() > deadline)
        throw Error(runWhat, "no done or fault after " + board_.timeoutText() + " (target option timeout=); CTRL reads " +
                                 hex(ctrl) + ", CYCLES " + std::to_string(reg(host::kRegCycles)) + "; " +
                                 describe(prog));
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }

  bool settled() const {
    const uint32_t fetch = stateOf(reg(host::kStatusBase + 4 * host::kModuleFetch));
    const uint32_t load = stateOf(reg(host::kStatusBase + 4 * host::kModuleLoad));
    const uint32_t compute = stateOf(reg(host::kStatusBase + 4 * host::kModuleCompute));
    const uint32_t store = stateOf(reg(host::kStatusBase + 4 * host::kModuleStore));
    bool queuesEmpty = true;
    for (int q = 0; q < host::kNumInsnQueues; ++q) queuesEmpty &= reg(host::kQueueBase + 4 * q) == 0;
    return (fetch == host::kStateIdle || fetch == host::kStateAllDispatched) && load == host::kStateIdle &&
           (compute == host::kStateIdle || compute == host::kStateHaltedAtFinish) && store == host::kStateIdle &&
           queuesEmpty;
  }

  // After done, modules FINISH did not wait for may still be finishing their work: waits for
  // every module to be idle, within the timeout (checkBalanced() then says what is left).
  void settle() {
    const auto deadline = std::chrono::steady_clock::now() + board_.settings().timeout;
    while (!settled() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }

  static std::string nameOf(const std::vector<hw::Insn>& prog, uint32_t index) {
    return index < prog.size() ? hw::insnName(index, prog[index])
                               : "instruction " + std::to_string(index) + " (past the program's end)";
  }

  std::string blockedBy(uint32_t status) const {
    const uint32_t q = argOf(status);
    const bool known = q < static_cast<uint32_t>(host::kNumTokenQueues);
    const uint32_t tokens = known ? reg(host::kTokensBase + 4 * q) : 0;
    const std::string queue = known ? host::kTokenQueueNames[q] : "#" + std::to_string(q) + " (no such queue)";
    if (stateOf(status) == host::kStateWaitPop)
      return known && tokens == 0 ? hw::run_error::waitsForToken(static_cast<hw::TokenQueue>(q))
                                  : "waits for a token on queue " + queue + ", which holds " + std::to_string(tokens) +
                                        " token(s)";
    if (stateOf(status) == host::kStateWaitPush)
      return known && tokens == static_cast<uint32_t>(board_.config().depQueueDepth)
                 ? hw::run_error::waitsForSpace(static_cast<hw::TokenQueue>(q), board_.config().depQueueDepth)
                 : "waits for space on queue " + queue + ", which holds " + std::to_string(tokens) + " of " +
                       std::to_string(board_.config().depQueueDepth) + " tokens";
    return "";
  }

  std::string describeModule(int m, const std::vector<hw::Insn>& prog) const {
    const uint32_t status = reg(host::kStatusBase + 4 * m);
    const std::string mod = host::kModuleNames[m];
    const std::string insn = nameOf(prog, reg(host::kInsnBase + 4 * m));
    switch (stateOf(status)) {
      case host::kStateIdle: return mod + " idle";
      case host::kStateBusy:
        return m == host::kModuleFetch ? "fetch busy reading instructions (next to dispatch: " + insn + ")"
                                       : mod + " busy with " + insn;
      case host::kStateWaitPop:
      case host::kStateWaitPush:
        if (m != host::kModuleFetch) return mod + " " + insn + " " + blockedBy(status);
        break;
      case host::kStateFetchQueueFull:
        if (m == host::kModuleFetch && argOf(status) < static_cast<uint32_t>(host::kNumInsnQueues))
          return "fetch stalled at " + insn + ": the " + host::kInsnQueueNames[argOf(status)] +
                 " instruction queue is full (" + std::to_string(reg(host::kQueueBase + 4 * argOf(status))) + " of " +
                 std::to_string(board_.config().insnQueueDepth) + " entries)";
        break;
      case host::kStateHaltedAtFinish:
        if (m == host::kModuleCompute) return "compute halted at FINISH (" + insn + ")";
        break;
      case host::kStateAllDispatched:
        if (m == host::kModuleFetch) return "fetch dispatched all " + std::to_string(prog.size()) + " instructions";
        break;
      default: break;
    }
    return mod + " in state " + std::to_string(stateOf(status)) + " (status " + hex(status) +
           "), which docs/rtl.md does not define for it";
  }

  // Every module from its status registers, blocked ones first (tsim's words).
  std::string describe(const std::vector<hw::Insn>& prog) const {
    std::string blocked, rest;
    for (int m = 0; m < host::kNumModules; ++m) {
      const uint32_t st = stateOf(reg(host::kStatusBase + 4 * m));
      std::string& to = st == host::kStateWaitPop || st == host::kStateWaitPush || st == host::kStateFetchQueueFull
                            ? blocked
                            : rest;
      to += (to.empty() ? "" : "; ") + describeModule(m, prog);
    }
    return blocked + (blocked.empty() || rest.empty() ? "" : "; ") + rest;
  }

  [[noreturn]] void throwFault(const std::vector<hw::Insn>& prog) const {
    const uint32_t cause = reg(host::kRegFaultCause);
    const uint32_t index = reg(host::kRegFaultInsn);
    const uint32_t info = reg(host::kRegFaultInfo);
    const std::string insn = nameOf(prog, index);
    const std::string when =
        " (the accelerator faulted after " + std::to_string(reg(host::kRegCycles)) + " cycles)";
    switch (cause) {
      case host::kFaultSramIndex: {
        const uint32_t field = info & 3, uop = info >> 2;
        if (field > 2 || index >= prog.size())
          throw Error(insn + ", micro-op " + std::to_string(uop),
                      "SRAM index out of range in field code " + std::to_string(field) +
                          ", which docs/rtl.md does not define" + when);
        throw hw::run_error::sramIndexPastDepth(board_.config(), index, prog[index], uop,
                                                static_cast<hw::run_error::Operand>(field),
                                                hw::run_error::kUnknownIndex, when);
      }
      case host::kFaultDramReadError:
      case host::kFaultDramWriteError: {
        const bool read = cause == host::kFaultDramReadError;
        const std::string reader = read && (info & 3) < 3 ? std::string(" by ") + host::kModuleNames[info & 3] : "";
        // FAULT_INSN is the reading module's instruction index; for fetch, the one it was reading.
        const std::string where = read && (info & 3) == host::kModuleFetch ? "instruction fetch of " + insn : insn;
        throw Error(where, std::string("DRAM ") + (read ? "read" : "write") + " error response" + reader + when +
                              ": the interconnect refused an address inside the DMA buffer [" + hex(board_.bufferPhys()) +
                              ", " + hex(board_.bufferPhys() + board_.bufferBytes()) + ")");
      }
      default:
        throw Error(insn, "the accelerator reports fault cause " + std::to_string(cause) +
                              ", which docs/rtl.md does not define" + when);
    }
  }

  // fsim's FINISH rule: every instruction executed and no token left on any queue.
  void checkBalanced(const std::vector<hw::Insn>& prog) const {
    const uint32_t computeStatus = reg(host::kStatusBase + 4 * host::kModuleCompute);
    uint32_t finish = reg(host::kInsnBase + 4 * host::kModuleCompute);
    if (stateOf(computeStatus) != host::kStateHaltedAtFinish)
      finish = static_cast<uint32_t>(std::find_if(prog.begin(), prog.end(), [](const hw::Insn& i) {
                                       return i.opcode == hw::Opcode::kFinish;
                                     }) - prog.begin());
    hw::run_error::UnbalancedFinish left;
    for (int stage = 0; stage < host::kNumInsnQueues; ++stage) {
      const int m = stage + 1;
      const uint32_t status = reg(host::kStatusBase + 4 * m);
      const uint32_t st = stateOf(status);
      const uint32_t queued = reg(host::kQueueBase + 4 * stage);
      const bool done = (st == host::kStateIdle || (m == host::kModuleCompute && st == host::kStateHaltedAtFinish)) &&
                        queued == 0;
      if (done) continue;
      const std::string why = blockedBy(status);
      if (m == host::kModuleCompute && st == host::kStateHaltedAtFinish)
        left.computeAfterFinish(queued);
      else
        left.neverExecuted(static_cast<hw::Stage>(stage), nameOf(prog, reg(host::kInsnBase + 4 * m)),
                           why.empty() ? describeModule(m, prog) : why);
    }
    const uint32_t fetched = reg(host::kInsnBase + 4 * host::kModuleFetch);
    if (fetched < prog.size()) left.neverFetched(fetched, prog[fetched], prog.size());
    for (int q = 0; q < host::kNumTokenQueues; ++q)
      if (const uint32_t tokens = reg(host::kTokensBase + 4 * q))
        left.tokensLeft(static_cast<hw::TokenQueue>(q), tokens);
    if (!left.empty()) throw left.error(finish);
  }

  void accountRun(const std::vector<hw::Insn>& prog, uint32_t count) {
    hw::Counters c = hw::countProgram(prog, board_.config());
    c.cycles = counter(host::kCounterCycles);
    for (int m = 0; m < host::kNumModules; ++m) {
      c.busyCycles[m] = counter(static_cast<host::Counter>(host::kCounterFetchBusy + 2 * m));
      c.stallCycles[m] = counter(static_cast<host::Counter>(host::kCounterFetchStall + 2 * m));
    }
    c.dramReadBeats = counter(host::kCounterDramReadBeats);
    c.dramWriteBeats = counter(host::kCounterDramWriteBeats);
    // The device's own counts must agree with the program's: a disagreement means registers read
    // from the wrong place or a device that ran something else.
    auto disagree = [&](const char* what, uint64_t device, uint64_t program) {
      if (device != program)
        throw Error("counters after a run of " + std::to_string(count) + " instructions",
                    board_.device() + " counted " + std::to_string(device) + " " + what + " but the program has " +
                        std::to_string(program));
    };
    disagree("GEMM micro-ops", counter(host::kCounterGemmUops), c.gemmUops + c.gemmResetUops);
    disagree("ALU micro-ops", counter(host::kCounterAluUops), c.aluUops);
    disagree("retired instructions", counter(host::kCounterRetired), count);
    c.runs = 0;  // counted when the run began
    counters_ += c;
  }

  // The RTL's CTRL never reads bits above fault, nor fault without a cause. A Vitis HLS block's
  // ap_ctrl (the HLS bitstream's stages) reads ap_idle, bit 2, when idle: refused here rather than
  // driven into a timeout.
  void checkHostInterface() const {
    const uint32_t ctrl = reg(host::kRegCtrl);
    const uint32_t known = host::kCtrlRunning | host::kCtrlDone | host::kCtrlFault;
    const bool faultWithoutCause = (ctrl & host::kCtrlFault) && reg(host::kRegFaultCause) == host::kFaultNone;
    if ((ctrl & ~known) || faultWithoutCause || ((ctrl & host::kCtrlDone) && (ctrl & host::kCtrlFault)))
      throw Error(board_.device(), "CTRL reads " + hex(ctrl) + " with FAULT_CAUSE " + hex(reg(host::kRegFaultCause)) +
                               ", which the accelerator's host interface never shows (docs/rtl.md, \"Host registers\"): "
                               "not the RTL bitstream's register window (an HLS bitstream's stage reads ap_idle = 0x4 "
                               "there: give the target option bitstream=hls for it, docs/deploy.md)");
  }
};

}  // namespace

std::unique_ptr<Target> makeRtlBitstreamTarget(const hw::Config& cfg, hw::Dram& dram, const BoardSettings& settings) {
  return std::make_unique<RtlBitstreamTarget>(cfg, dram, settings);
}

}  // namespace tessera::runtime::zynq
