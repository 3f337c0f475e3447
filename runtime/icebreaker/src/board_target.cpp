// The iCEBreaker driver's target: runs programs on the pico bitstream through the host link, over whatever byte channel it is given (a serial port, the simulated board's UART).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <thread>

#include "tessera/gen/host_interface.h"
#include "tessera/hw/isa.h"
#include "tessera/hw/program.h"
#include "tessera/hw/run_error.h"
#include "tessera/runtime/icebreaker.h"
#include "tessera/runtime/target_support.h"
#include "tessera/support/error.h"
#include "tessera/support/format.h"

namespace tessera::runtime::icebreaker {

namespace {

struct Range {
  uint64_t first, end;
};

// Sorted, overlapping and touching ranges joined.
std::vector<Range> merged(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.first < b.first; });
  std::vector<Range> out;
  for (const Range& r : ranges) {
    if (!out.empty() && r.first <= out.back().end) out.back().end = std::max(out.back().end, r.end);
    else out.push_back(r);
  }
  return out;
}

constexpr uint64_t kPage = hw::Dram::kPageBytes;

uint32_t stateOf(uint32_t status) { return status & ((1u << host::kStatusStateBits) - 1); }
uint32_t argOf(uint32_t status) { return status >> host::kStatusStateBits; }

// What the status registers show: every module's status and instruction index, the token counts and
// the instruction-queue occupancies. Two equal snapshots with no module busy mean nothing moved.
struct Snapshot {
  uint32_t status[host::kNumModules], insn[host::kNumModules], tokens[host::kNumTokenQueues],
      queued[host::kNumInsnQueues];
  bool operator==(const Snapshot& o) const {
    return std::equal(std::begin(status), std::end(status), o.status) &&
           std::equal(std::begin(insn), std::end(insn), o.insn) &&
           std::equal(std::begin(tokens), std::end(tokens), o.tokens) &&
           std::equal(std::begin(queued), std::end(queued), o.queued);
  }
  bool anyBusy() const {
    return std::any_of(std::begin(status), std::end(status), [](uint32_t s) { return stateOf(s) == host::kStateBusy; });
  }
};

// CTRL polls between two snapshots of a running accelerator: a deadlock is called after three equal
// snapshots with no module busy, so at least 2 x this many polls (each a round trip) of standstill.
constexpr int kPollsPerSnapshot = 16;

class BoardTarget : public Target {
 public:
  BoardTarget(std::string name, const hw::Config& cfg, hw::Dram& dram, std::unique_ptr<ByteChannel> channel,
              std::chrono::milliseconds timeout)
      : name_(std::move(name)), cfg_(cfg), isa_(cfg), dram_(dram), channel_(std::move(channel)), timeout_(timeout),
        link_(*channel_, std::min(timeout, std::chrono::milliseconds(5000))) {
    // A board left mid-request by an earlier process: let it drop that first (resync rule).
    channel_->quiet(2 * kIdleTimeoutBits);
    board_ = link_.hello();
    const uint32_t ctrl = link_.readReg(host::kRegCtrl);
    const uint32_t known = host::kCtrlRunning | host::kCtrlDone | host::kCtrlFault;
    if (ctrl & ~known)
      throw Error(channel_->describe(), "the accelerator's CTRL reads " + hex(ctrl) +
                                            ", which its host interface never shows (docs/rtl.md)");
  }

  std::string name() const override { return name_; }
  std::string variant() const override { return channel_->describe(); }
  hw::Counters counters() const override { return counters_; }
  void resetCounters() override { counters_ = hw::Counters(); }

  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override {
    counters_.runs += 1;
    const std::vector<hw::Insn> prog = hw::decodeRunnableProgram(isa_, dram_, insnPhys, count);
    const std::string runWhat = "run of " + std::to_string(count) + " instructions on " + channel_->describe();

    // The session's buffers lie anywhere below 4 GiB, the board memory is 128 KiB: the pages the
    // run touches are packed into it, each run of touching pages kept whole (so every
    // instruction's range stays contiguous and keeps its alignment), and every LOAD/STORE is
    // moved by its block's distance. The instructions follow in the next page.
    std::vector<Range> reads, writes;
    std::vector<size_t> rangeOf(prog.size(), SIZE_MAX);
    std::vector<Range> used;
    for (size_t i = 0; i < prog.size(); ++i) {
      const hw::DramRange r = hw::dramRange(prog[i], cfg_);
      if (r.end <= r.first) continue;
      dram_.at(r.first, r.end - r.first, hw::insnName(i, prog[i]));  // inside the session's address space
      (prog[i].opcode == hw::Opcode::kStore ? writes : reads).push_back({r.first, r.end});
      used.push_back({r.first / kPage * kPage, (r.end + kPage - 1) / kPage * kPage});
    }
    // Written ranges go in too: a STORE that writes part of a block leaves the rest as it was.
    reads.insert(reads.end(), writes.begin(), writes.end());
    const std::vector<Range> blocks = merged(used);
    std::vector<uint64_t> blockAt;
    uint64_t next = kPage;  // page 0 stays unused, as in the session's DRAM
    for (const Range& b : blocks) {
      blockAt.push_back(next);
      next += b.end - b.first;
    }
    const uint64_t insnAt = next;
    const uint64_t needed = insnAt + uint64_t(count) * 16;
    if (needed > board_.memBytes) {
      std::string where;
      for (const Range& b : blocks) where += (where.empty() ? "" : ", ") + ("[" + hex(b.first) + ", " + hex(b.end) + ")");
      throw Error(runWhat, "the run needs " + std::to_string(needed) + " bytes of board memory (its DRAM pages " +
                               (where.empty() ? std::string("none") : where) + " packed from " + hex(kPage) +
                               ", then " + std::to_string(uint64_t(count) * 16) +
                               " bytes of instructions) but the board memory window is [0x0, " +
                               hex(board_.memBytes) + "), " + std::to_string(board_.memBytes / 1024) +
                               " KiB: split the work into smaller runs");
    }
    auto boardAddress = [&](uint64_t phys) {
      for (size_t k = 0; k < blocks.size(); ++k)
        if (phys >= blocks[k].first && phys < blocks[k].end) return blockAt[k] + (phys - blocks[k].first);
      throw Error(runWhat, "internal error: " + hex(phys) + " lies in no packed block");
    };
    for (const Range& r : merged(reads))
      link_.writeMem(static_cast<uint32_t>(boardAddress(r.first)), dram_.raw(r.first), r.end - r.first);
    std::vector<uint8_t> code(uint64_t(count) * 16);
    for (size_t i = 0; i < prog.size(); ++i) {
      const hw::DramRange r = hw::dramRange(prog[i], cfg_);
      const hw::Insn moved =
          r.end > r.first
              ? movedDramBase(prog[i], i, static_cast<int64_t>(boardAddress(r.first)) - static_cast<int64_t>(r.first), cfg_)
              : prog[i];
      hw::Isa::rawToBytes(isa_.encode(moved, hw::insnName(i, prog[i])), code.data() + 16 * i);
    }
    link_.writeMem(static_cast<uint32_t>(insnAt), code.data(), code.size());

    const uint32_t before = link_.readReg(host::kRegCtrl);
    if (before & host::kCtrlRunning)
      throw Error(runWhat, "the accelerator is still running an earlier run (CTRL reads " + hex(before) +
                               "); reset the board");
    link_.writeReg(host::kRegInsnAddr, static_cast<uint32_t>(insnAt));
    link_.writeReg(host::kRegInsnCount, count);
    link_.writeReg(host::kRegCtrl, host::kCtrlStart);

    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    uint32_t ctrl = 0;
    Snapshot last{};
    int polls = 0, still = 0;
    for (;;) {
      // Each register read takes a round trip over the link: no pause is needed between polls.
      ctrl = link_.readReg(host::kRegCtrl);
      if (ctrl & (host::kCtrlDone | host::kCtrlFault)) break;
      if (++polls % kPollsPerSnapshot == 0) {
        // A deadlocked accelerator never finishes: its status registers stop moving with every
        // module idle or waiting, which is reported as fsim reports a deadlock.
        const Snapshot now = snapshot();
        still = !now.anyBusy() && now == last ? still + 1 : 0;
        last = now;
        if (still >= 2) throwDeadlock(prog, now, runWhat);
      }
      if (waitCycles && link_.readReg(host::kRegCycles) >= waitCycles)
        throw Error(runWhat, "the run exceeds wait_cycles=" + std::to_string(waitCycles) + " (CTRL reads " +
                                 hex(ctrl) + ")");
      if (std::chrono::steady_clock::now() > deadline)
        throw Error(runWhat, "no done or fault after " + std::to_string(timeout_.count()) +
                                 " ms (target option timeout=); CTRL reads " + hex(ctrl) + ", CYCLES " +
                                 std::to_string(link_.readReg(host::kRegCycles)));
    }
    if (ctrl & host::kCtrlFault) throwFault(prog);
    settle(deadline);
    checkBalanced(prog);
    for (const Range& r : merged(writes))
      link_.readMem(static_cast<uint32_t>(boardAddress(r.first)), dram_.raw(r.first), r.end - r.first);
    accountRun(prog, count);
  }

 private:
  uint64_t counter(host::Counter c) {
    const uint32_t at = host::kCountersBase + 8 * static_cast<uint32_t>(c);
    return link_.readReg(at) | uint64_t(link_.readReg(at + 4)) << 32;
  }

  // What a module's head waits on, in fsim's words when its status names a token queue.
  std::string whyBlocked(int module, uint32_t status) const {
    const uint32_t state = stateOf(status), arg = argOf(status);
    if (state == host::kStateWaitPop && arg < host::kNumTokenQueues)
      return hw::run_error::waitsForToken(static_cast<hw::TokenQueue>(arg));
    if (state == host::kStateWaitPush && arg < host::kNumTokenQueues)
      return hw::run_error::waitsForSpace(static_cast<hw::TokenQueue>(arg), cfg_.depQueueDepth);
    return std::string(host::kModuleNames[module]) + " in state " + std::to_string(state);
  }

  Snapshot snapshot() {
    Snapshot s{};
    for (int m = 0; m < host::kNumModules; ++m) {
      s.status[m] = link_.readReg(host::kStatusBase + 4 * m);
      s.insn[m] = link_.readReg(host::kInsnBase + 4 * m);
    }
    for (int q = 0; q < host::kNumTokenQueues; ++q) s.tokens[q] = link_.readReg(host::kTokensBase + 4 * q);
    for (int q = 0; q < host::kNumInsnQueues; ++q) s.queued[q] = link_.readReg(host::kQueueBase + 4 * q);
    return s;
  }

  // fsim's deadlock error from the status registers: each stage with instructions queued, what its
  // head waits on, and where fetch stalled.
  [[noreturn]] void throwDeadlock(const std::vector<hw::Insn>& prog, const Snapshot& s, const std::string& runWhat) {
    hw::run_error::Deadlock deadlock;
    uint64_t first = prog.size();
    for (int q = 0; q < host::kNumInsnQueues; ++q) {
      if (!s.queued[q]) continue;
      const int m = q + 1;  // the module of instruction queue q (load, compute, store)
      const uint32_t index = s.insn[m];
      if (index >= prog.size()) continue;
      deadlock.stageBlocked(static_cast<hw::Stage>(q), index, prog[index], whyBlocked(m, s.status[m]));
      first = std::min<uint64_t>(first, index);
    }
    const uint32_t fetched = s.insn[host::kModuleFetch];
    if (fetched < prog.size()) deadlock.fetchStalled(fetched, prog[fetched], cfg_.insnQueueDepth);
    if (first == prog.size()) {
      if (fetched >= prog.size())
        throw Error(runWhat, "the accelerator stopped moving with nothing queued (CTRL reads " +
                                 hex(link_.readReg(host::kRegCtrl)) + ") on " + channel_->describe());
      first = fetched;
    }
    throw deadlock.error(first);
  }

  // After done, modules FINISH did not wait for may still be storing: every module idle first, or
  // the status registers unchanged over two snapshots (what is left is reported by checkBalanced).
  void settle(std::chrono::steady_clock::time_point deadline) {
    Snapshot last{};
    bool first = true;
    for (;;) {
      const Snapshot now = snapshot();
      if (!first && !now.anyBusy() && now == last) return;
      first = false;
      last = now;
      const uint32_t fetch = stateOf(now.status[host::kModuleFetch]);
      const uint32_t load = stateOf(now.status[host::kModuleLoad]);
      const uint32_t compute = stateOf(now.status[host::kModuleCompute]);
      const uint32_t store = stateOf(now.status[host::kModuleStore]);
      const bool queuesEmpty = std::all_of(std::begin(now.queued), std::end(now.queued), [](uint32_t n) { return n == 0; });
      const bool idle = (fetch == host::kStateIdle || fetch == host::kStateAllDispatched) &&
                        load == host::kStateIdle &&
                        (compute == host::kStateIdle || compute == host::kStateHaltedAtFinish) &&
                        store == host::kStateIdle && queuesEmpty;
      if (idle || std::chrono::steady_clock::now() > deadline) return;
    }
  }

  static std::string nameOf(const std::vector<hw::Insn>& prog, uint32_t index) {
    return index < prog.size() ? hw::insnName(index, prog[index])
                               : "instruction " + std::to_string(index) + " (past the program's end)";
  }

  [[noreturn]] void throwFault(const std::vector<hw::Insn>& prog) {
    const uint32_t cause = link_.readReg(host::kRegFaultCause);
    const uint32_t index = link_.readReg(host::kRegFaultInsn);
    const uint32_t info = link_.readReg(host::kRegFaultInfo);
    const std::string when = " (the accelerator faulted after " + std::to_string(link_.readReg(host::kRegCycles)) +
                             " cycles on " + channel_->describe() + ")";
    switch (cause) {
      case host::kFaultSramIndex: {
        const uint32_t field = info & 3, uop = info >> 2;
        if (field > 2 || index >= prog.size())
          throw Error(nameOf(prog, index) + ", micro-op " + std::to_string(uop),
                      "SRAM index out of range in field code " + std::to_string(field) + when);
        throw hw::run_error::sramIndexPastDepth(cfg_, index, prog[index], uop,
                                                static_cast<hw::run_error::Operand>(field),
                                                hw::run_error::kUnknownIndex, when);
      }
      case host::kFaultDramReadError:
      case host::kFaultDramWriteError:
        throw Error(nameOf(prog, index), std::string("DRAM ") + (cause == host::kFaultDramReadError ? "read" : "write") +
                                             " error response from the board memory, which answers so past its " +
                                             hex(board_.memBytes) + " bytes" + when);
      default:
        throw Error(nameOf(prog, index),
                    "the accelerator reports fault cause " + std::to_string(cause) + ", which docs/rtl.md does not define" + when);
    }
  }

  // fsim's FINISH rule: every instruction executed and no token left on any queue.
  void checkBalanced(const std::vector<hw::Insn>& prog) {
    hw::run_error::UnbalancedFinish left;
    const uint32_t computeStatus = link_.readReg(host::kStatusBase + 4 * host::kModuleCompute);
    uint32_t finish = link_.readReg(host::kInsnBase + 4 * host::kModuleCompute);
    if (stateOf(computeStatus) != host::kStateHaltedAtFinish)
      finish = static_cast<uint32_t>(std::find_if(prog.begin(), prog.end(), [](const hw::Insn& i) {
                                       return i.opcode == hw::Opcode::kFinish;
                                     }) - prog.begin());
    for (int stage = 0; stage < host::kNumInsnQueues; ++stage) {
      const int m = stage + 1;
      const uint32_t st = stateOf(link_.readReg(host::kStatusBase + 4 * m));
      const uint32_t queued = link_.readReg(host::kQueueBase + 4 * stage);
      const bool done = (st == host::kStateIdle || (m == host::kModuleCompute && st == host::kStateHaltedAtFinish)) &&
                        queued == 0;
      if (done) continue;
      if (m == host::kModuleCompute && st == host::kStateHaltedAtFinish)
        left.computeAfterFinish(queued);
      else
        left.neverExecuted(static_cast<hw::Stage>(stage), nameOf(prog, link_.readReg(host::kInsnBase + 4 * m)),
                           whyBlocked(m, link_.readReg(host::kStatusBase + 4 * m)));
    }
    const uint32_t fetched = link_.readReg(host::kInsnBase + 4 * host::kModuleFetch);
    if (fetched < prog.size()) left.neverFetched(fetched, prog[fetched], prog.size());
    for (int q = 0; q < host::kNumTokenQueues; ++q)
      if (const uint32_t tokens = link_.readReg(host::kTokensBase + 4 * q))
        left.tokensLeft(static_cast<hw::TokenQueue>(q), tokens);
    if (!left.empty()) throw left.error(finish);
  }

  void accountRun(const std::vector<hw::Insn>& prog, uint32_t count) {
    // Untimed, as fsim: the board has no instruction-trace pins, and the runtime's contract is that
    // a target reports cycles exactly when it traces instructions (the CYCLES register is still
    // read for the timeout and wait_cycles checks).
    hw::Counters c = hw::countProgram(prog, cfg_);
    // The board's own count must agree with the program: registers read from the wrong place or a
    // board that ran something else would not.
    const uint64_t retired = counter(host::kCounterRetired);
    if (retired != count)
      throw Error("counters after a run of " + std::to_string(count) + " instructions",
                  channel_->describe() + " counted " + std::to_string(retired) + " retired instructions");
    c.runs = 0;  // counted when the run began
    counters_ += c;
  }

  std::string name_;
  hw::Config cfg_;
  hw::Isa isa_;
  hw::Dram& dram_;
  std::unique_ptr<ByteChannel> channel_;
  std::chrono::milliseconds timeout_;
  Link link_;
  BoardInfo board_;
  hw::Counters counters_;
};

}  // namespace

std::unique_ptr<Target> makeTarget(const std::string& name, const hw::Config& cfg, hw::Dram& dram,
                                   std::unique_ptr<ByteChannel> channel, std::chrono::milliseconds timeout) {
  return std::make_unique<BoardTarget>(name, cfg, dram, std::move(channel), timeout);
}

std::string configProblem(const hw::Config& cfg) {
  if (sameHardware(hw::Config::load(kBoardConfig), cfg)) return "";
  return std::string("the iCEBreaker board top is built for config ") + kBoardConfig + " only, not " + cfg.name;
}

std::chrono::milliseconds timeoutOption(const TargetOptions& options) {
  return secondsOption(options, kTimeoutKey, std::chrono::milliseconds(60000));
}

}  // namespace tessera::runtime::icebreaker
