// The run protocol of tsim: validate, start over AXI4-Lite, clock to done, watch for deadlock, account.
#include "tessera/tsim/simulator.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "bench.h"
#include "tessera/hw/axi.h"
#include "tessera/hw/built_configs.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "tessera/hw/program.h"
#include "tessera/hw/run_error.h"
#include "tessera/support/format.h"

namespace tessera::tsim {

namespace {

constexpr int kResetCycles = 8;
constexpr uint64_t kLiteTimeout = 1000;      // cycles one register transfer may take
constexpr uint64_t kWatchInterval = 4096;    // cycles between progress samples

const char* const* const kModules = host::kModuleNames;
constexpr uint32_t kTokenQueues = host::kNumTokenQueues;
const char* const* const kStages = host::kInsnQueueNames;

// Module status states: the host-interface contract's.
enum State : uint32_t {
  kIdle = host::kStateIdle, kBusy = host::kStateBusy, kWaitPop = host::kStateWaitPop, kWaitPush = host::kStateWaitPush,
  kFetchQueueFull = host::kStateFetchQueueFull, kHaltedAtFinish = host::kStateHaltedAtFinish,
  kAllDispatched = host::kStateAllDispatched
};

std::string queueName(uint32_t q) {
  return q < kTokenQueues ? host::kTokenQueueNames[q] : "#" + std::to_string(q) + " (no such queue)";
}


bool fileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The configs each engine was built for, computed once.
const hw::BuiltConfigs& builtFor(Engine engine) {
  static const auto kAll = [] {
    std::vector<std::vector<std::string>> names(7);
    for (int i = 0; i < kBuiltModelCount; ++i) {
      names[0].push_back(kBuiltModels[i].config);
#ifdef TESSERA_HAVE_RTL_SC
      if (kBuiltModels[i].createScHardware) names[1].push_back(kBuiltModels[i].config);
#endif
    }
#ifdef TESSERA_HAVE_RTL_SC
    for (int i = 0; i < kBuiltHlsScModelCount; ++i) names[2].push_back(kBuiltHlsScModels[i].config);
#endif
    for (int i = 0; i < kBuiltGlsModelCount; ++i)
      names[static_cast<int>(kBuiltGlsModels[i].engine)].push_back(kBuiltGlsModels[i].config);
    for (int i = 0; i < kBuiltCoverageModelCount; ++i)
      names[static_cast<int>(Engine::kCoverage)].push_back(kBuiltCoverageModels[i].config);
    for (int i = 0; i < kBuiltMutantModelCount; ++i)
      names[static_cast<int>(Engine::kMutant)].push_back(kBuiltMutantModels[i].config);
    std::vector<hw::BuiltConfigs> all;
    for (const auto& n : names) all.emplace_back(n);
    return all;
  }();
  return kAll[static_cast<int>(engine)];
}

// Register values describing where every module is, read in one go.
struct Snapshot {
  uint32_t status[host::kNumModules], insn[host::kNumModules], tokens[host::kNumTokenQueues],
      queue[host::kNumInsnQueues];
  uint32_t state(int m) const { return status[m] & ((1u << host::kStatusStateBits) - 1); }
  uint32_t arg(int m) const {
    return (status[m] >> host::kStatusStateBits) & ((1u << host::kStatusArgBits) - 1);
  }
};

// Progress counters: if none of them moves, nothing is happening.
struct Progress {
  uint32_t words[5];
  bool operator==(const Progress& o) const { return std::equal(words, words + 5, o.words); }
};

}  // namespace

struct Simulator::Impl {
  Impl(const hw::Config& c, hw::Dram& d, const Options& o, Engine e)
      : cfg(c), isa(c), dram(d), opt(o), bench(d, c.busBytes, o.memory), name(engineTarget(e)) {}

  hw::Config cfg;
  hw::Isa isa;
  hw::Dram& dram;
  Options opt;
  Bench bench;
  std::unique_ptr<Model> model;
  std::string built;
  const std::string name;  // the target's name, for messages
  hw::Counters counters, lastCounters;
  std::vector<hw::RunSpans> spans;  // runs traced and not yet taken

  // Stops the run if the memory saw an AXI violation or the RTL stopped the simulation.
  void checkHealthy() {
    if (bench.mem.violated()) throw Error(name + " DRAM port", bench.mem.violation());
    const std::string why = model->stopReason();
    if (!why.empty()) throw Error(name + " at cycle " + std::to_string(bench.cycle), why);
  }

  uint32_t read(uint32_t offset) {
    bench.host.startRead(static_cast<uint16_t>(offset));
    for (uint64_t n = 0; !bench.host.readDone(); ++n) {
      if (n == kLiteTimeout)
        throw Error("register read at " + hex(offset),
                    "the AXI4-Lite port did not answer within " + std::to_string(kLiteTimeout) + " cycles");
      model->step();
      checkHealthy();
    }
    if (bench.host.resp() != 0)
      throw Error("register read at " + hex(offset), "answered with response " + std::to_string(bench.host.resp()));
    return bench.host.data();
  }

  void write(uint32_t offset, uint32_t value) {
    bench.host.startWrite(static_cast<uint16_t>(offset), value);
    for (uint64_t n = 0; !bench.host.writeDone(); ++n) {
      if (n == kLiteTimeout)
        throw Error("register write of " + hex(value) + " to " + hex(offset),
                    "the AXI4-Lite port did not answer within " + std::to_string(kLiteTimeout) + " cycles");
      model->step();
      checkHealthy();
    }
    if (bench.host.resp() != 0)
      throw Error("register write to " + hex(offset), "answered with response " + std::to_string(bench.host.resp()));
  }

  uint64_t read64(uint32_t offset) {
    const uint64_t lo = read(offset);
    return lo | uint64_t(read(offset + 4)) << 32;
  }

  Progress progress() {
    Progress p;
    const uint32_t regs[5] = {reg::kCntRetired, reg::kCntGemmUops, reg::kCntAluUops, reg::kCntReadBeats,
                              reg::kCntWriteBeats};
    for (int i = 0; i < 5; ++i) p.words[i] = read(regs[i]);
    return p;
  }

  Snapshot snapshot() {
    Snapshot s;
    for (int m = 0; m < 4; ++m) s.status[m] = read(reg::kStatus + 4 * m);
    for (int m = 0; m < 4; ++m) s.insn[m] = read(reg::kInsnIndex + 4 * m);
    for (int q = 0; q < host::kNumTokenQueues; ++q) s.tokens[q] = read(reg::kTokens + 4 * q);
    for (int m = 0; m < 3; ++m) s.queue[m] = read(reg::kQueue + 4 * m);
    return s;
  }

  static std::string nameOf(const std::vector<hw::Insn>& prog, uint32_t index) {
    return index < prog.size() ? hw::insnName(index, prog[index])
                               : "instruction " + std::to_string(index) + " (past the program's end)";
  }

  // Why a module's head instruction cannot go on, in fsim's words ("waits for a token on queue
  // l2g (load->compute), which is empty").
  std::string blockedBy(const Snapshot& s, int m) const {
    const uint32_t q = s.arg(m);
    const uint32_t tokens = q < kTokenQueues ? s.tokens[q] : 0;
    // A clocked queue can be caught between a pop and a push: say what it holds when that is not
    // the plain empty or full of fsim's words.
    if (s.state(m) == kWaitPop)
      return q < kTokenQueues && tokens == 0
                 ? hw::run_error::waitsForToken(static_cast<hw::TokenQueue>(q))
                 : "waits for a token on queue " + queueName(q) + ", which holds " + std::to_string(tokens) + " token(s)";
    if (s.state(m) == kWaitPush)
      return q < kTokenQueues && tokens == static_cast<uint32_t>(cfg.depQueueDepth)
                 ? hw::run_error::waitsForSpace(static_cast<hw::TokenQueue>(q), cfg.depQueueDepth)
                 : "waits for space on queue " + queueName(q) + ", which holds " + std::to_string(tokens) + " of " +
                       std::to_string(cfg.depQueueDepth) + " tokens";
    return "";
  }

  std::string describeModule(const Snapshot& s, int m, const std::vector<hw::Insn>& prog) const {
    const std::string mod = kModules[m];
    const uint32_t st = s.state(m);
    const std::string insn = nameOf(prog, s.insn[m]);
    switch (st) {
      case kIdle:
        // Idle with instructions queued: the module did not take its head (a hardware bug the
        // words above cannot name), so say what waits there and what the token queues hold.
        if (m != 0 && s.queue[m - 1] != 0) {
          std::string tokens;
          for (uint32_t q = 0; q < kTokenQueues; ++q)
            tokens += (tokens.empty() ? "" : ", ") + queueName(q) + " " + std::to_string(s.tokens[q]);
          return mod + " idle with " + std::to_string(s.queue[m - 1]) + " instruction(s) queued (head " + insn +
                 "; tokens: " + tokens + ")";
        }
        return mod + " idle";
      case kBusy:
        if (m == 0) return "fetch busy reading instructions (next to dispatch: " + insn + ")";
        return mod + " busy with " + insn;
      case kWaitPop:
      case kWaitPush:
        if (m != 0) return mod + " " + insn + " " + blockedBy(s, m);
        break;
      case kFetchQueueFull:
        if (m == 0 && s.arg(m) < 3)
          return "fetch stalled at " + insn + ": the " + kStages[s.arg(m)] + " instruction queue is full (" +
                 std::to_string(s.queue[s.arg(m)]) + " of " + std::to_string(cfg.insnQueueDepth) + " entries)";
        break;
      case kHaltedAtFinish:
        if (m == 2) return "compute halted at FINISH (" + insn + ")";
        break;
      case kAllDispatched:
        if (m == 0) return "fetch dispatched all " + std::to_string(prog.size()) + " instructions";
        break;
    }
    return mod + " in state " + std::to_string(st) + " (status " + hex(s.status[m]) +
           "), which docs/rtl.md does not define for it";
  }

  // Every module, blocked ones first, then the DRAM.
  std::string describe(const Snapshot& s, const std::vector<hw::Insn>& prog) const {
    std::string blocked, rest;
    for (int m = 0; m < 4; ++m) {
      const uint32_t st = s.state(m);
      std::string& to = st == kWaitPop || st == kWaitPush || st == kFetchQueueFull ? blocked : rest;
      to += (to.empty() ? "" : "; ") + describeModule(s, m, prog);
    }
    std::string all = blocked + (blocked.empty() || rest.empty() ? "" : "; ") + rest;
    const AxiMemory& mem = bench.mem;
    if (!mem.idle())
      all += "; DRAM: " + std::to_string(mem.readBurstsInFlight()) + " read and " +
             std::to_string(mem.writeBurstsInFlight()) + " write burst(s) in flight";
    return all;
  }

  [[noreturn]] void throwFault(const std::vector<hw::Insn>& prog, uint64_t insnPhys, uint64_t cycles) {
    const uint32_t cause = read(reg::kFaultCause);
    const uint32_t index = read(reg::kFaultInsn);
    const uint32_t info = read(reg::kFaultInfo);
    std::string insn = nameOf(prog, index);
    const std::string when = " (the accelerator faulted after " + std::to_string(cycles) + " cycles)";
    switch (cause) {
      case host::kFaultSramIndex: {
        const uint32_t field = info & 3, uop = info >> 2;
        if (field > 2 || index >= prog.size())
          throw Error(insn + ", micro-op " + std::to_string(uop),
                      "SRAM index out of range in field code " + std::to_string(field) + ", which docs/rtl.md does not define" + when);
        throw hw::run_error::sramIndexPastDepth(cfg, index, prog[index], uop, static_cast<hw::run_error::Operand>(field),
                                                hw::run_error::kUnknownIndex, when);
      }
      case host::kFaultDramReadError:
      case host::kFaultDramWriteError: {
        const std::string& err = bench.mem.firstError();
        // An error on the program's own bytes is fetch's, whatever instruction the RTL names.
        const uint64_t at = bench.mem.firstErrorAddress();
        if (cause == host::kFaultDramReadError && !err.empty() && at >= insnPhys && at < insnPhys + 16 * uint64_t(prog.size()))
          insn = "instruction fetch of " + nameOf(prog, static_cast<uint32_t>((at - insnPhys) / 16));
        throw Error(insn, std::string("DRAM ") + (cause == host::kFaultDramReadError ? "read" : "write") + " error response" + when + ": " +
                              (err.empty() ? "the memory model answered no access with an error (a bug in the hardware model)" : err));
      }
      default:
        throw Error(insn, "the RTL reports fault cause " + std::to_string(cause) + ", which docs/rtl.md does not define" + when);
    }
  }

  // After done, lets modules that FINISH did not wait for complete, until every module is idle
  // (or nothing moves any more: the program is unbalanced and the check below says how).
  void drain() {
    const uint64_t stallLimit =
        kWatchInterval + 16 * uint64_t(std::max(opt.memory.readLatency, opt.memory.writeLatency));
    const uint64_t begin = bench.cycle;
    Progress last = progress();
    uint64_t lastMove = bench.cycle;
    for (;;) {
      const Snapshot s = snapshot();
      const bool settled = (s.state(0) == kIdle || s.state(0) == kAllDispatched) && s.state(1) == kIdle &&
                           (s.state(2) == kIdle || s.state(2) == kHaltedAtFinish) && s.state(3) == kIdle &&
                           s.queue[0] == 0 && s.queue[1] == 0 && s.queue[2] == 0;
      if (settled && bench.mem.idle()) return;
      model->stepCycles(256);
      checkHealthy();
      const Progress p = progress();
      if (!(p == last)) {
        last = p;
        lastMove = bench.cycle;
      } else if (bench.cycle - lastMove > stallLimit) {
        return;
      }
      if (bench.cycle - begin > std::max(opt.watchdogCycles, stallLimit)) return;
    }
  }

  // fsim's FINISH rule: every instruction executed and no token left on any queue.
  void checkBalanced(const std::vector<hw::Insn>& prog) {
    const Snapshot s = snapshot();
    uint32_t finish = s.insn[2];
    if (s.state(2) != kHaltedAtFinish)
      finish = static_cast<uint32_t>(std::find_if(prog.begin(), prog.end(), [](const hw::Insn& i) {
                                       return i.opcode == hw::Opcode::kFinish;
                                     }) - prog.begin());
    hw::run_error::UnbalancedFinish left;
    for (int stage = 0; stage < 3; ++stage) {
      const int m = stage + 1;
      const uint32_t st = s.state(m);
      const bool done = (st == kIdle || (m == 2 && st == kHaltedAtFinish)) && s.queue[stage] == 0;
      if (done) continue;
      const std::string why = blockedBy(s, m);
      if (m == 2 && st == kHaltedAtFinish)
        left.computeAfterFinish(s.queue[stage]);
      else
        left.neverExecuted(static_cast<hw::Stage>(stage), nameOf(prog, s.insn[m]),
                           why.empty() ? describeModule(s, m, prog) : why);
    }
    const uint32_t fetched = read(reg::kInsnIndex);
    if (fetched < prog.size()) left.neverFetched(fetched, prog[fetched], prog.size());
    for (uint32_t q = 0; q < kTokenQueues; ++q)
      if (s.tokens[q]) left.tokensLeft(static_cast<hw::TokenQueue>(q), s.tokens[q]);
    if (!left.empty()) throw left.error(finish);
  }

  void execute(const std::vector<hw::Insn>& prog, uint64_t insnPhys, uint64_t waitCycles) {
    const uint32_t count = static_cast<uint32_t>(prog.size());
    // Only a run started through writeRegister() can be going; CTRL would ignore our start.
    if (read(reg::kCtrl) & host::kCtrlRunning)
      throw Error("run of " + std::to_string(count) + " instructions",
                  "the accelerator is still running a run started through its registers");
    bench.trace.events.clear();
    write(reg::kInsnAddr, static_cast<uint32_t>(insnPhys));
    write(reg::kInsnCount, count);
    const uint64_t start = bench.cycle;
    write(reg::kCtrl, 1);

    // Clock to irq_o, sampling the progress counters between stretches of free-running cycles.
    // A DRAM answer may legitimately take the configured latency, so the watchdog never fires
    // sooner than a few of those.
    const uint64_t watchdog =
        opt.watchdogCycles ? std::max(opt.watchdogCycles, 4 * uint64_t(std::max(opt.memory.readLatency,
                                                                                opt.memory.writeLatency)) + 64)
                           : 0;
    const uint64_t interval = watchdog ? std::clamp<uint64_t>(watchdog / 4, 64, kWatchInterval) : kWatchInterval;
    Progress last = progress();
    uint64_t lastMove = bench.cycle;
    while (!bench.irq) {
      uint64_t chunk = interval;
      if (waitCycles) chunk = std::min(chunk, start + waitCycles > bench.cycle ? start + waitCycles - bench.cycle : 1);
      model->stepUntilIrq(chunk);
      checkHealthy();
      if (bench.irq) break;
      const uint64_t elapsed = bench.cycle - start;
      if (waitCycles && elapsed >= waitCycles)
        throw Error("run of " + std::to_string(count) + " instructions",
                    "the run exceeds wait_cycles=" + std::to_string(waitCycles) + ": still running after " +
                        std::to_string(elapsed) + " cycles; " + describe(snapshot(), prog));
      const Progress p = progress();
      if (!(p == last)) {
        last = p;
        lastMove = bench.cycle;
      } else if (watchdog && bench.cycle - lastMove >= watchdog) {
        throw hw::run_error::deadlockAfterCycles(bench.cycle - start, bench.cycle - lastMove, describe(snapshot(), prog));
      }
    }

    const uint32_t ctrl = read(reg::kCtrl);
    if (ctrl & host::kCtrlFault) throwFault(prog, insnPhys, bench.cycle - start);
    if (!(ctrl & host::kCtrlDone))
      throw Error("CTRL register", "irq_o is high but CTRL reads " + hex(ctrl) +
                                       ", neither done (bit 1) nor fault (bit 2): docs/rtl.md says irq_o = done | fault");
    drain();
    // The host registers take no fault once the run is done, so an error response to an access
    // FINISH did not wait for (a load or store with no token to FINISH) sets no bit; the memory
    // model saw it, and the run must not pass as if the data were good.
    if (!bench.mem.firstError().empty())
      throw Error("run of " + std::to_string(count) + " instructions",
                  "DRAM error response after FINISH, to an access FINISH did not wait for: " + bench.mem.firstError());
    checkBalanced(prog);

    hw::Counters c = hw::countProgram(prog, cfg);
    c.cycles = read64(reg::kCntCycles);
    for (int m = 0; m < 4; ++m) {
      c.busyCycles[m] = read64(reg::kCntBusy + 16 * m);
      c.stallCycles[m] = read64(reg::kCntStall + 16 * m);
    }
    c.dramReadBeats = read64(reg::kCntReadBeats);
    c.dramWriteBeats = read64(reg::kCntWriteBeats);
    const uint64_t gemm = read64(reg::kCntGemmUops), alu = read64(reg::kCntAluUops), retired = read64(reg::kCntRetired);
    auto disagree = [&](const char* what, uint64_t rtl, uint64_t program) {
      if (rtl != program)
        throw Error("counters after a run of " + std::to_string(count) + " instructions",
                    name + " counted " + std::to_string(rtl) + " " + what + " but the program has " +
                        std::to_string(program) + " (a bug in the hardware model)");
    };
    disagree("GEMM micro-ops", gemm, c.gemmUops + c.gemmResetUops);
    disagree("ALU micro-ops", alu, c.aluUops);
    disagree("retired instructions", retired, count);
    if (bench.trace.on) {
      spans.push_back(hw::spansFromEvents(bench.trace.events, count, c.cycles, name));
      bench.trace.events.clear();
    }
    counters += c;
    lastCounters = c;
    lastCounters.runs = 1;
  }
};

bool isGateLevel(Engine engine) { return engine == Engine::kGateLevel || engine == Engine::kGateLevelIce40; }

const char* engineTarget(Engine engine) {
  switch (engine) {
    case Engine::kSystemC: return "rtl-sc";
    case Engine::kHlsSystemC: return "hls-sc";
    case Engine::kGateLevel: return "gls";
    case Engine::kGateLevelIce40: return "gls-ice40";
    case Engine::kCoverage: return "tsim-cov";
    case Engine::kMutant: return "tsim-mut";
    default: return "tsim";
  }
}

Simulator::Simulator(const hw::Config& cfg, hw::Dram& dram, const Options& options, Engine engine) {
  const std::string why = unsupportedReason(cfg, engine);
  if (!why.empty()) throw Error(std::string("target ") + engineTarget(engine), why);
  if (engine == Engine::kSystemC && !options.trace.empty())
    throw Error("trace " + options.trace, "rtl-sc writes no waveforms; trace the same RTL with the tsim target");
  if (engine == Engine::kHlsSystemC && !options.trace.empty())
    throw Error("trace " + options.trace, "hls-sc writes no waveforms");
  if (engine == Engine::kCoverage && !options.trace.empty())
    throw Error("trace " + options.trace, "tsim-cov writes no waveforms; trace the same RTL with the tsim target");
  if (engine == Engine::kMutant && !options.trace.empty())
    throw Error("trace " + options.trace, "tsim-mut writes no waveforms; trace the RTL with the tsim target");
  if (engine != Engine::kMutant && options.mutant >= 0)
    throw Error("target option mutant=" + std::to_string(options.mutant),
                std::string(engineTarget(engine)) + " plants no mutations; the tsim-mut target does");
  if (engine != Engine::kCoverage && !options.coverage.empty())
    throw Error("target option coverage=" + options.coverage,
                std::string(engineTarget(engine)) + " counts no coverage; the tsim-cov target does");
  if (!options.trace.empty() && !options.traceForce && fileExists(options.trace))
    throw Error("trace " + options.trace, "refusing to overwrite an existing file (give trace-force=1 to replace it)");
  impl_ = std::make_unique<Impl>(cfg, dram, options, engine);
  const int index = builtFor(engine).indexOf(cfg);
  impl_->built = builtFor(engine).names()[index];
  if (engine == Engine::kCoverage) {
    if (options.coverage.empty())
      throw Error("target tsim-cov", "needs the directory its coverage goes to: target option coverage=DIR "
                                     "(tessera regress --coverage DIR sets it)");
    for (int i = 0; i < kBuiltCoverageModelCount; ++i)
      if (impl_->built == kBuiltCoverageModels[i].config)
        impl_->model = kBuiltCoverageModels[i].create(impl_->bench, cfg.busBytes, options.coverage);
  } else if (engine == Engine::kMutant) {
    for (int i = 0; i < kBuiltMutantModelCount; ++i) {
      if (impl_->built != kBuiltMutantModels[i].config) continue;
      const int count = kBuiltMutantModels[i].mutants();
      if (options.mutant < 0)
        throw Error("target tsim-mut", "needs the mutation to activate: target option mutant=N, 1 to " +
                                           std::to_string(count) + " (0: none; docs/verification.md)");
      if (options.mutant > count)
        throw Error("target option mutant=" + std::to_string(options.mutant),
                    "the " + impl_->built + " mutant model carries mutations 1 to " + std::to_string(count));
      impl_->model = kBuiltMutantModels[i].create(impl_->bench, cfg.busBytes, static_cast<int>(options.mutant));
    }
  } else if (isGateLevel(engine)) {
    for (int i = 0; i < kBuiltGlsModelCount; ++i)
      if (kBuiltGlsModels[i].engine == engine && impl_->built == kBuiltGlsModels[i].config)
        impl_->model = kBuiltGlsModels[i].create(impl_->bench, cfg.busBytes, options.trace);
  } else
#ifdef TESSERA_HAVE_RTL_SC
  if (engine != Engine::kVerilator)
    impl_->model = createScBenchModel(impl_->bench, engine == Engine::kSystemC ? "rtl" : "hls", impl_->built);
  else
#endif
    impl_->model = kBuiltModels[index].create(impl_->bench, cfg.busBytes, options.trace);
  impl_->model->reset(kResetCycles);
}

Simulator::~Simulator() = default;

void Simulator::run(uint64_t insnPhys, uint32_t count, uint64_t waitCycles) {
  Impl& s = *impl_;
  s.counters.runs += 1;
  // The same checks, in the same order and words, as fsim; then what only the RTL requires.
  const std::vector<hw::Insn> prog = hw::decodeProgram(s.isa, s.dram, insnPhys, count);
  if (insnPhys % 16)
    throw Error("instruction fetch at " + hex(insnPhys), "the program address is not 16-byte aligned, as the RTL's fetch requires");
  if (insnPhys + uint64_t(count) * 16 > hw::kAxiAddressLimit)
    throw Error("instruction fetch of " + std::to_string(count) + " instructions at " + hex(insnPhys),
                "reaches past 4 GiB; the RTL's AXI addresses are 32-bit");
  for (uint32_t i = 0; i < count; ++i) {
    const hw::DramRange r = hw::dramRange(prog[i], s.cfg);
    if (r.end > hw::kAxiAddressLimit)
      throw Error(hw::insnName(i, prog[i]) + ", field dram_base",
                  "the DRAM range [" + hex(r.first) + ", " + hex(r.end) + ") reaches past 4 GiB; the RTL's AXI addresses are 32-bit");
  }
  if (std::none_of(prog.begin(), prog.end(), [](const hw::Insn& i) { return i.opcode == hw::Opcode::kFinish; }))
    throw hw::run_error::missingFinish(count);
  try {
    s.execute(prog, insnPhys, waitCycles);
  } catch (...) {
    // Whatever state the failed run left (tokens, half-done bursts) must not leak into the next.
    s.model->reset(kResetCycles);
    throw;
  }
}

const hw::Counters& Simulator::counters() const { return impl_->counters; }
void Simulator::resetCounters() { impl_->counters = hw::Counters(); }
const hw::Counters& Simulator::lastRun() const { return impl_->lastCounters; }
void Simulator::traceInstructions(bool on) {
  impl_->bench.trace.on = on;
  if (!on) impl_->bench.trace.events.clear();
}
std::vector<hw::RunSpans> Simulator::takeSpans() { return std::exchange(impl_->spans, {}); }
uint32_t Simulator::readRegister(uint32_t offset) { return impl_->read(offset); }
void Simulator::writeRegister(uint32_t offset, uint32_t value) { impl_->write(offset, value); }
uint64_t Simulator::cycle() const { return impl_->bench.cycle; }
const std::string& Simulator::modelConfig() const { return impl_->built; }

std::vector<std::string> Simulator::builtConfigs(Engine engine) { return builtFor(engine).names(); }

std::string Simulator::unsupportedReason(const hw::Config& cfg, Engine engine) {
  const std::string target = engineTarget(engine);
  if (isGateLevel(engine)) {
    if (builtFor(engine).empty())
      return target + " is not built in this library (the gls plugin has the gate-level models: gls/README.md)";
    return builtFor(engine).unsupportedReason(cfg, target, "gate-level netlist", "TESSERA_GLS_CONFIGS");
  }
  if (engine == Engine::kMutant) {
    if (builtFor(engine).empty())
      return target + " is not built in this library (the tsim-mut plugin has the mutant models: tsim/README.md)";
    return builtFor(engine).unsupportedReason(cfg, target, "mutant model", "TESSERA_TSIM_MUT_CONFIGS");
  }
  if (engine == Engine::kCoverage) {
    if (builtFor(engine).empty())
      return target + " is not built in this library (the tsim-cov plugin has the coverage models: tsim/README.md)";
    return builtFor(engine).unsupportedReason(cfg, target, "coverage model", "TESSERA_TSIM_COV_CONFIGS");
  }
  if (builtFor(engine).empty() && engine != Engine::kVerilator)
    return target + " is not built (it needs SystemC: apt-get install libsystemc-dev, then reconfigure)";
  const bool hls = engine == Engine::kHlsSystemC;
  return builtFor(engine).unsupportedReason(cfg, target, hls ? "HLS model" : "RTL model",
                                            hls ? "TESSERA_HLS_CONFIGS" : "TESSERA_TSIM_CONFIGS");
}

}  // namespace tessera::tsim
