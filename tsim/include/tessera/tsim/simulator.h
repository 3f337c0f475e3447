// tsim: the cycle-accurate simulator of the RTL accelerator (Verilator), with host and DRAM models.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/counters.h"
#include "tessera/hw/dram.h"
#include "tessera/tsim/axi_memory.h"

namespace tessera::tsim {

// Host register offsets of tessera_top (docs/rtl.md).
namespace reg {
constexpr uint32_t kCtrl = 0x000, kCycles = 0x004, kInsnCount = 0x008, kInsnAddr = 0x00c, kInsnAddrHi = 0x010;
constexpr uint32_t kFaultCause = 0x014, kFaultInsn = 0x018, kFaultInfo = 0x01c;
constexpr uint32_t kStatus = 0x020;   // + 4 * module (fetch, load, compute, store)
constexpr uint32_t kInsnIndex = 0x030;  // + 4 * module
constexpr uint32_t kTokens = 0x040;   // + 4 * token queue (L2C, C2L, C2S, S2C)
constexpr uint32_t kQueue = 0x050;    // + 4 * (module - 1): load, compute, store instruction queues
constexpr uint32_t kCounters = 0x100; // 64-bit counters, low word first
constexpr uint32_t kCntCycles = 0x100, kCntBusy = 0x108, kCntStall = 0x110;  // busy/stall: + 16 * module
constexpr uint32_t kCntReadBeats = 0x148, kCntWriteBeats = 0x150, kCntGemmUops = 0x158, kCntAluUops = 0x160;
constexpr uint32_t kCntRetired = 0x168;
}  // namespace reg

// Which hardware model is simulated, and how. All run against the same host, AxiMemory and run
// protocol; the two RTL engines give the same cycle counts.
enum class Engine {
  kVerilator,   // tsim: the RTL verilated to C++ and clocked by this library's loop (the fast one)
  kSystemC,     // rtl-sc: the RTL verilated to SystemC and hosted in the SystemC testbench (tsim/sc)
  kHlsSystemC,  // hls-sc: the HLS design (hls/design) as clocked SystemC processes in the same
                // testbench, with a cycle-approximate timing annotation (tsim/README.md, "Timing
                // annotation"; the design itself: hls/README.md)
};
// The runtime target name of an engine ("tsim", "rtl-sc", "hls-sc").
const char* engineTarget(Engine engine);

struct Options {
  std::string trace;       // FST waveform of the whole simulation; empty: none
  bool traceForce = false; // replace an existing trace file instead of refusing
  MemoryTiming memory;
  uint64_t watchdogCycles = 1000000;  // cycles without progress that make a run a deadlock; 0: never

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
