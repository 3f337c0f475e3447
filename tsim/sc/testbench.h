// The SystemC testbench: clock and reset, AXI4-Lite host driver, AXI4 memory, around one pluggable hardware model.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <systemc>

#include "bench.h"
#include "ports.h"

namespace tessera::tsim::sc {

// Creates a hardware model named `name` for a bus of `busBytes` bytes (called during elaboration).
using HardwareFactory = std::function<std::unique_ptr<HardwareModel>(const char* name, int busBytes)>;

// The clock (10 ns period) and the synchronous reset. The clock runs only while the harness asks
// for cycles, so idle testbenches of other configs in the same kernel cost nothing. Each cycle:
// clk falls and cycleStart() fires (the bench drives its registered outputs), the model settles,
// clk rises (the bench samples and takes its edge, the model takes its edge), then the harness's
// stop condition is checked.
class ClockReset : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(ClockReset);
  ClockReset(sc_core::sc_module_name name, TopPorts& ports);

  // Asks for `cycles` cycles, the first `resetCycles` of them with rst_n low; `stop` (may be
  // empty) is asked after each cycle whether to stop early.
  void request(uint64_t cycles, uint64_t resetCycles, std::function<bool()> stop);
  // Cycles run since the last request.
  uint64_t cyclesDone() const { return done_; }
  // Whether the current cycle is a reset cycle (the bench drives every VALID low).
  bool inReset() const { return inReset_; }
  const sc_core::sc_event& cycleStart() const { return cycleStart_; }

 private:
  void tick();

  TopPorts& p_;
  sc_core::sc_event go_, cycleStart_;
  uint64_t left_ = 0, resetLeft_ = 0, done_ = 0;
  bool inReset_ = false;
  std::function<bool()> stop_;
};

class Testbench;

// The host CPU: drives the AXI4-Lite master outputs of the harness's LiteHost each cycle and
// clocks it with what the accelerator answered, so register accesses follow the same protocol as
// under tsim.
class HostDriver : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(HostDriver);
  HostDriver(sc_core::sc_module_name name, Testbench& tb);

 private:
  void run();
  Testbench& tb_;
};

// The DRAM: tsim's cycle-level AxiMemory (the attached harness's, over its hw::Dram) behind the
// AXI4 ports. Its outputs are registered: driven at the start of a cycle, updated at the edge.
class MemoryPort : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(MemoryPort);
  MemoryPort(sc_core::sc_module_name name, Testbench& tb);

 private:
  void drive();
  void sample();
  Testbench& tb_;
  BusWord wdata_;  // the sampled write beat AxiMemory reads during clock()
};

// One hardware model with its clock, host and memory. A harness (a tsim::Model) attaches its
// Bench (host state, AxiMemory, sampled signals, cycle count) and runs cycles; the testbench
// outlives every harness, so the next one attaches to the same elaborated hardware.
class Testbench : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Testbench);
  Testbench(sc_core::sc_module_name name, const HardwareFactory& factory, int busBytes);

  // Makes `bench` the one this testbench serves (nullptr: none).
  void attach(Bench* bench) { bench_ = bench; }
  Bench* attached() const { return bench_; }
  HardwareModel& model() { return *model_; }
  // Runs up to `cycles` cycles (the first `resetCycles` in reset) in the SystemC kernel; stops
  // early after a cycle in which the memory saw an AXI violation, the model stopped the
  // simulation, or (if `untilIrq`) irq was high. Returns the cycles run.
  uint64_t run(uint64_t cycles, uint64_t resetCycles, bool untilIrq);

  TopPorts ports;
  ClockReset clock;

 private:
  friend class HostDriver;
  friend class MemoryPort;
  void onEdge();

  std::unique_ptr<HardwareModel> model_;
  bool tracing_ = false;  // the attached bench traces instructions (set per run())
  HostDriver host_;
  MemoryPort memory_;
  Bench* bench_ = nullptr;
};

// The process's SystemC kernel and its testbenches. SystemC elaborates once per process and
// cannot add modules afterwards, so every testbench (one per registered model kind and config)
// is built together the first time one is needed, and lives until the process ends; harnesses
// take turns on them. The kernel is bound to the thread that started it.
class Kernel {
 public:
  static Kernel& get();
  // Adds a model kind (e.g. "hls") for a config before the kernel elaborates; throws afterwards.
  // The verilated RTL is registered as kind "rtl" for every config the build verilated to SystemC.
  static void registerModel(const std::string& kind, const std::string& config, int busBytes, HardwareFactory factory);
  // The testbench of model `kind` for `config`; throws if there is none or the caller is not the
  // kernel's thread.
  Testbench& testbench(const std::string& kind, const std::string& config);

 private:
  struct Entry {
    std::string kind, config;
    int busBytes;
    HardwareFactory factory;
    Testbench* bench = nullptr;
  };
  Kernel();
  static std::vector<Entry>& entries();
  static bool& elaborated();
  std::thread::id thread_;
};

}  // namespace tessera::tsim::sc
