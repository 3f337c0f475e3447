// Per-instruction spans of a run on a timed target: which unit ran each instruction, and from when to when.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::hw {

// One instruction on one unit (host::TraceUnit: fetch, load, compute, its GEMM and ALU pipes,
// store), in cycles of its run: [begin, end), cycle 0 being the first cycle the CYCLES counter
// counts. On the RTL, begin is the cycle the unit's begin strobe is high and end the cycle after
// its end strobe (docs/rtl.md, "Instruction trace port").
struct InsnSpan {
  uint32_t insn = 0;
  uint32_t unit = 0;
  uint64_t begin = 0, end = 0;
  bool operator==(const InsnSpan& o) const {
    return insn == o.insn && unit == o.unit && begin == o.begin && end == o.end;
  }
  bool operator!=(const InsnSpan& o) const { return !(*this == o); }
};

// The spans of one run: every instruction once on fetch and once on the unit that executed it,
// ordered by unit, then by begin, then by instruction.
struct RunSpans {
  uint64_t cycles = 0;    // the run's cycle count (Counters::cycles)
  uint32_t insnCount = 0; // instructions in the run
  std::vector<InsnSpan> spans;
};

// What a trace port reports in one cycle for one unit: an instruction began or ended there.
struct TraceEvent {
  uint32_t insn = 0;
  uint32_t cycle = 0;  // run cycle (the port's trace_cycle_o)
  uint8_t unit = 0;
  bool end = false;
};

// Pairs each instruction's begin and end events per unit into spans (end = the end event's cycle
// + 1) and checks that every one of `insnCount` instructions began and ended once on fetch and
// once on exactly one other unit. Throws tessera::Error naming `model`, the instruction and the
// unit otherwise (a bug in the hardware model).
RunSpans spansFromEvents(const std::vector<TraceEvent>& events, uint32_t insnCount, uint64_t cycles,
                         const std::string& model);

}  // namespace tessera::hw
