// The test bench around one verilated tessera_top: host AXI4-Lite master, DRAM slave, clocking interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/insn_trace.h"
#include "tessera/tsim/axi_memory.h"
#include "tessera/tsim/simulator.h"

namespace tessera::tsim {

namespace sc {
class HardwareModel;  // sc/ports.h: a hardware model of the SystemC testbench
}

// What the accelerator drives on its AXI4-Lite slave port, sampled before a clock edge.
struct LiteSlaveSignals {
  bool awready = false, wready = false, bvalid = false, arready = false, rvalid = false;
  uint8_t bresp = 0, rresp = 0;
  uint32_t rdata = 0;
};

// The host CPU's side of the register port: one register access at a time, each channel's
// VALID held until its handshake, as an AXI4-Lite master must.
class LiteHost {
 public:
  struct Outputs {
    uint16_t awaddr = 0, araddr = 0;
    uint32_t wdata = 0;
    bool awvalid = false, wvalid = false, bready = false, arvalid = false, rready = false;
  };
  const Outputs& outputs() const { return out_; }

  void startWrite(uint16_t addr, uint32_t data) {
    out_.awaddr = addr;
    out_.wdata = data;
    out_.awvalid = out_.wvalid = out_.bready = true;
    writeDone_ = false;
  }
  void startRead(uint16_t addr) {
    out_.araddr = addr;
    out_.arvalid = out_.rready = true;
    readDone_ = false;
  }
  bool writeDone() const { return writeDone_; }
  bool readDone() const { return readDone_; }
  uint8_t resp() const { return resp_; }
  uint32_t data() const { return data_; }

  // One rising edge given the accelerator's outputs before it.
  void clock(const LiteSlaveSignals& in) {
    if (out_.awvalid && in.awready) out_.awvalid = false;
    if (out_.wvalid && in.wready) out_.wvalid = false;
    if (out_.bready && in.bvalid) {
      out_.bready = false;
      resp_ = in.bresp;
      writeDone_ = true;
    }
    if (out_.arvalid && in.arready) out_.arvalid = false;
    if (out_.rready && in.rvalid) {
      out_.rready = false;
      resp_ = in.rresp;
      data_ = in.rdata;
      readDone_ = true;
    }
  }
  void reset() { *this = LiteHost(); }

 private:
  Outputs out_;
  bool writeDone_ = true, readDone_ = true;
  uint8_t resp_ = 0;
  uint32_t data_ = 0;
};

// Instruction tracing (Simulator::traceInstructions): while `on`, the model appends what its trace
// port reports each cycle to `events` (the harness clears them when a run starts).
struct InsnTraceLog {
  bool on = false;
  std::vector<hw::TraceEvent> events;
};

// Everything around the model that does not depend on its verilated class.
struct Bench {
  Bench(hw::Dram& dram, int busBytes, const MemoryTiming& timing) : mem(dram, busBytes, timing) {}
  AxiMemory mem;
  LiteHost host;
  AxiMasterSignals axi;  // the accelerator's master outputs, sampled each cycle
  LiteSlaveSignals lite;
  bool irq = false;
  uint64_t cycle = 0;  // rising edges since construction
  InsnTraceLog trace;
};

// One verilated tessera_top, clocked against a Bench. Implemented by VerilatedModel<V> for each
// config the build verilated.
class Model {
 public:
  virtual ~Model() = default;
  // Holds rst_ni low for `cycles` edges with every VALID from the bench low.
  virtual void reset(int cycles) = 0;
  // One clock cycle: drive the bench's outputs, settle, sample, rising edge.
  virtual void step() = 0;
  // Steps until irq_o is high, the memory saw a protocol violation, the RTL stopped the
  // simulation, or `maxCycles` have passed.
  // Returns the cycles stepped.
  virtual uint64_t stepUntilIrq(uint64_t maxCycles) = 0;
  // Steps `n` cycles, or fewer if the memory saw a violation or the RTL stopped the simulation.
  virtual void stepCycles(uint64_t n) = 0;
  // Why the simulation stopped by itself ($finish, $stop, $error in the RTL), or empty.
  virtual std::string stopReason() const = 0;
  // Starts an FST waveform of every signal from now on (the file must not be open elsewhere).
  virtual void openTrace(const std::string& path) = 0;
  // Flushes and closes the waveform, if any.
  virtual void closeTrace() = 0;
};

// A built config: its name, and a factory for its model.
struct BuiltModel {
  const char* config;
  // `busBytes` is the config's bus width; a non-empty `tracePath` opens an FST waveform.
  std::unique_ptr<Model> (*create)(Bench& bench, int busBytes, const std::string& tracePath);
  // The same RTL verilated to SystemC, as a hardware model of the SystemC testbench (rtl-sc); null
  // when the build has no SystemC.
  std::unique_ptr<sc::HardwareModel> (*createScHardware)(const char* name, int busBytes);
};
// Every config verilated into this build (tsim/CMakeLists.txt generates the list).
extern const BuiltModel kBuiltModels[];
extern const int kBuiltModelCount;

// The RTL verilated with coverage (tsim/coverage), in the tsim-cov plugin's build only: its config
// and its factory, whose model adds its counts to the process's, written to `coverageDir` when the
// process exits (tsim/coverage/coverage_totals.h).
struct BuiltCoverageModel {
  const char* config;
  std::unique_ptr<Model> (*create)(Bench& bench, int busBytes, const std::string& coverageDir);
};
extern const BuiltCoverageModel kBuiltCoverageModels[];
extern const int kBuiltCoverageModelCount;

// The RTL with planted mutations (tsim/mutation), in the tsim-mut plugin's build only: its config,
// how many mutations it carries (known once the build planted them), and its factory, whose model
// activates mutation `mutant` (1 to mutants(); 0: none).
struct BuiltMutantModel {
  const char* config;
  int (*mutants)();
  std::unique_ptr<Model> (*create)(Bench& bench, int busBytes, int mutant);
};
extern const BuiltMutantModel kBuiltMutantModels[];
extern const int kBuiltMutantModelCount;

// A gate-level netlist of the RTL (gls/), verilated like the RTL and clocked by the same harness:
// its config, its flavour (the engine it is for) and its factory. tsim's own build has none; the gls
// plugin's build has no RTL models.
struct BuiltGlsModel {
  const char* config;
  Engine engine;  // Engine::kGateLevel or Engine::kGateLevelIce40
  std::unique_ptr<Model> (*create)(Bench& bench, int busBytes, const std::string& tracePath);
};
extern const BuiltGlsModel kBuiltGlsModels[];
extern const int kBuiltGlsModelCount;
// The seed of the gate-level models' random power-up values (gls/src/registry.cpp.in; the gls
// plugin's build only).
uint64_t glsSeed();

// The HLS design as a hardware model of the SystemC testbench (hls-sc), for each config the hls
// layer compiled the design for; empty in builds without SystemC.
struct BuiltHlsScModel {
  const char* config;
  std::unique_ptr<sc::HardwareModel> (*createScHardware)(const char* name, int busBytes);
};
extern const BuiltHlsScModel kBuiltHlsScModels[];
extern const int kBuiltHlsScModelCount;

// A Model over the SystemC testbench of model `kind` ("rtl" or "hls") for `config`
// (sc/sc_model.cpp; only in builds with SystemC): the run protocol is the same, the clocking is
// the SystemC kernel's.
std::unique_ptr<Model> createScBenchModel(Bench& bench, const std::string& kind, const std::string& config);

}  // namespace tessera::tsim
