// tsim: the cycle-accurate simulator of the RTL accelerator (Verilator), with host and DRAM models.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/gen/host_interface.h"
#include "tessera/hw/config.h"
#include "tessera/hw/counters.h"
#include "tessera/hw/dram.h"
#include "tessera/hw/insn_trace.h"
#include "tessera/tsim/axi_memory.h"

namespace tessera::tsim {

// Register offsets, from the host-interface contract generated from hw/ (tessera::host).
namespace reg {
constexpr uint32_t kCtrl = host::kRegCtrl, kCycles = host::kRegCycles, kInsnCount = host::kRegInsnCount;
constexpr uint32_t kInsnAddr = host::kRegInsnAddr, kInsnAddrHi = host::kRegInsnAddrHi;
constexpr uint32_t kFaultCause = host::kRegFaultCause, kFaultInsn = host::kRegFaultInsn, kFaultInfo = host::kRegFaultInfo;
constexpr uint32_t kStatus = host::kStatusBase;   // + 4 * host::Module
constexpr uint32_t kInsnIndex = host::kInsnBase;  // + 4 * host::Module
constexpr uint32_t kTokens = host::kTokensBase;   // + 4 * host::TokenQueue
constexpr uint32_t kQueue = host::kQueueBase;     // + 4 * instruction queue (load, compute, store)
constexpr uint32_t kCounters = host::kCountersBase;  // 64-bit counters, low word first
constexpr uint32_t counter(host::Counter c) { return host::kCountersBase + 8 * static_cast<uint32_t>(c); }
constexpr uint32_t kCntCycles = counter(host::kCounterCycles), kCntBusy = counter(host::kCounterFetchBusy);
constexpr uint32_t kCntStall = counter(host::kCounterFetchStall);  // busy/stall: + 16 * module
constexpr uint32_t kCntReadBeats = counter(host::kCounterDramReadBeats), kCntWriteBeats = counter(host::kCounterDramWriteBeats);
constexpr uint32_t kCntGemmUops = counter(host::kCounterGemmUops), kCntAluUops = counter(host::kCounterAluUops);
constexpr uint32_t kCntRetired = counter(host::kCounterRetired);
}  // namespace reg

// Which hardware model is simulated, and how. All run against the same host, AxiMemory and run
// protocol; the two RTL engines give the same cycle counts.
enum class Engine {
  kVerilator,   // tsim: the RTL verilated to C++ and clocked by this library's loop (the fast one)
  kSystemC,     // rtl-sc: the RTL verilated to SystemC and hosted in the SystemC testbench (tsim/sc)
  kHlsSystemC,  // hls-sc: the HLS design (hls/design) as clocked SystemC processes in the same
                // testbench, with a cycle-approximate timing annotation (tsim/README.md, "Timing
                // annotation"; the design itself: hls/README.md)
  kGateLevel,       // gls: the Yosys-synthesized generic gate netlist of the RTL, verilated (gls/)
  kGateLevelIce40,  // gls-ice40: the iCE40-mapped netlist with Yosys' cell models, verilated (gls/)
  kCoverage,        // tsim-cov: the RTL verilated with line, toggle and cover-point coverage
                    // (tsim/coverage; docs/verification.md)
  kMutant,          // tsim-mut: the RTL with Yosys-planted mutations, one selected per simulator
                    // (tsim/mutation; docs/verification.md)
};
// The runtime target name of an engine ("tsim", "rtl-sc", "hls-sc", "gls", "gls-ice40", "tsim-cov",
// "tsim-mut").
const char* engineTarget(Engine engine);
// Whether an engine simulates a gate-level netlist (gls, gls-ice40).
bool isGateLevel(Engine engine);

struct Options {
  std::string trace;       // FST waveform of the whole simulation; empty: none
  bool traceForce = false; // replace an existing trace file instead of refusing
  MemoryTiming memory;
  uint64_t watchdogCycles = 1000000;  // cycles without progress that make a run a deadlock; 0: never
  std::string coverage;    // tsim-cov: the directory its coverage file goes to (required there)
  int64_t mutant = -1;     // tsim-mut: the planted mutation that is active, 0 for none (required there)

  // Options from target-option strings (`tessera sim --target-option k=v`,
  // TESSERA_TARGET_OPTIONS). Throws tessera::Error naming an unknown key or a bad value.
  static Options parse(const std::map<std::string, std::string>& keyValues);
  // Every key parse() accepts, with a line of help.
  static const std::vector<std::pair<std::string, std::string>>& keys();
};

// A hardware model (the RTL's tessera_top, verilated for the configs listed at build time, or the
// HLS design behind the same ports) clocked against a host that drives its AXI4-Lite registers and
// a DRAM model on its AXI4 master port, both over the same hw::Dram the runtime uses. A run validates the program as fsim does, starts the accelerator, and
// clocks it until done; faults, deadlocks, unbalanced programs and AXI rule violations throw
// tessera::Error naming the instruction, module and queue.
class Simulator {
 public:
  // Throws if the engine was not built for a config with `cfg`'s parameters, or the trace file
  // exists. kSystemC and kHlsSystemC: every such simulator of one model and config shares the
  // process's one SystemC testbench of it (SystemC elaborates once per process), taking it over,
  // with a reset, when another one used it last; it must be used from the thread that first used
  // SystemC, and does not trace.
  Simulator(const hw::Config& cfg, hw::Dram& dram, const Options& options = Options(),
            Engine engine = Engine::kVerilator);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Runs `count` instructions at physical address `insnPhys` until FINISH and every module is idle.
  // A non-zero `waitCycles` bounds the run's clock cycles.
  void run(uint64_t insnPhys, uint32_t count, uint64_t waitCycles = 0);

  // Counters of the runs since construction or resetCounters(): the instruction-level ones as
  // fsim counts them, the cycle-level ones from the RTL's counter registers.
  const hw::Counters& counters() const;
  void resetCounters();
  // Counters of the last successful run alone (cycles is its RTL cycle count): the timing report
  // that lets two engines or models be compared run by run.
  const hw::Counters& lastRun() const;

  // Instruction tracing (docs/rtl.md, "Instruction trace port"). While on, each successful run
  // records every instruction's span on fetch and on the unit that executed it, from the model's
  // trace port (tsim, rtl-sc: the RTL's, sampled every cycle) or its stage threads (hls-sc, whose
  // compute stage runs one instruction at a time: GEMMs show on the GEMM pipe, ALU instructions
  // and reset GEMMs on the ALU pipe, everything else on compute). Off, it costs nothing.
  void traceInstructions(bool on);
  // The spans of the runs recorded since the last call, oldest first; forgets them.
  std::vector<hw::RunSpans> takeSpans();

  // Host register access over AXI4-Lite (for tests and debugging); clocks the accelerator while the
  // transfer completes.
  uint32_t readRegister(uint32_t offset);
  void writeRegister(uint32_t offset, uint32_t value);
  // Rising clock edges since construction (reset included).
  uint64_t cycle() const;
  // The built config whose model this simulator uses.
  const std::string& modelConfig() const;

  // Names of the configs the RTL was verilated for in this build, for `engine`.
  static std::vector<std::string> builtConfigs(Engine engine = Engine::kVerilator);
  // Empty if a model was built for a config with all of `cfg`'s parameters; otherwise why not.
  static std::string unsupportedReason(const hw::Config& cfg, Engine engine = Engine::kVerilator);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::tsim
