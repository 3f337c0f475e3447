// The timed targets' default DRAM (one Zynq-7000 HP port) and the transfer-time rule every estimate of it uses.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tessera::hw {

// Latency and bandwidth of the DRAM behind the accelerator's AXI master port. The defaults model
// one Zynq-7000 HP port: 64 bits at the fabric clock each way, about 40 cycles from an address to
// its first data beat, 16 bursts in flight. tsim's memory model runs these; the compiler's cost
// model, the workloads' tiling search and the regression's cycle estimates assume them.
struct DramTiming {
  uint32_t readLatency = 40;   // cycles from an AR handshake to its first R beat (>= 1)
  uint32_t writeLatency = 40;  // cycles from a burst's last W beat to its B response (>= 1)
  double bytesPerCycle = 8;    // peak bytes per cycle of each direction; a beat never exceeds the bus
  uint32_t maxBursts = 16;     // read bursts, and separately write bursts, in flight at once

  // Peak bytes per cycle on a bus of `busBytes`: the memory's rate, capped by one beat a cycle.
  double busRate(int busBytes) const { return std::min<double>(bytesPerCycle, busBytes); }

  // Cycles to read `rows` rows of `rowBytes` each as one burst per row, once the first burst is
  // under way: a row costs its beats at the bus rate or, when rows are short, its share of the
  // latency among the bursts in flight.
  double rowReadCycles(double rows, double rowBytes, int busBytes) const {
    const double beats = std::ceil(rowBytes / busBytes);
    return rows * std::max(beats * busBytes / busRate(busBytes), (readLatency + beats) / maxBursts);
  }
};

}  // namespace tessera::hw
