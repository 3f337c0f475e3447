// Turns a trace port's begin and end events into per-instruction spans, checking that each instruction ran once.
#include "tessera/hw/insn_trace.h"

#include <algorithm>
#include <tuple>

#include "tessera/gen/host_interface.h"
#include "tessera/support/error.h"

namespace tessera::hw {

namespace {

constexpr uint64_t kNone = ~uint64_t(0);

// Where one instruction has been seen: on fetch, and on the unit that executed it.
struct Seen {
  uint64_t fetchBegin = kNone, fetchEnd = kNone;
  int unit = -1;
  uint64_t begin = kNone, end = kNone;
};

}  // namespace

RunSpans spansFromEvents(const std::vector<TraceEvent>& events, uint32_t insnCount, uint64_t cycles,
                         const std::string& model) {
  const std::string where = model + " instruction trace";
  auto unitName = [](int u) { return std::string(host::kTraceUnitNames[u]); };
  auto bug = [&](uint32_t insn, const std::string& what) {
    return Error(where, "instruction " + std::to_string(insn) + " " + what + " (a bug in the hardware model)");
  };
  std::vector<Seen> seen(insnCount);
  for (const TraceEvent& e : events) {
    if (e.unit >= host::kNumTraceUnits)
      throw Error(where, "an event of unit " + std::to_string(e.unit) + ", which docs/rtl.md does not define");
    if (e.insn >= insnCount)
      throw bug(e.insn, "has an event on " + unitName(e.unit) + " but the run has " + std::to_string(insnCount) +
                            " instructions");
    Seen& s = seen[e.insn];
    const bool fetch = e.unit == host::kTraceFetch;
    uint64_t& begin = fetch ? s.fetchBegin : s.begin;
    uint64_t& end = fetch ? s.fetchEnd : s.end;
    if (!fetch && s.unit >= 0 && s.unit != e.unit)
      throw bug(e.insn, (e.end ? "ended on " : "began on ") + unitName(e.unit) + " after beginning on " + unitName(s.unit));
    if (!e.end) {
      if (begin != kNone) throw bug(e.insn, "began twice on " + unitName(e.unit));
      begin = e.cycle;
      if (!fetch) s.unit = e.unit;
    } else {
      if (begin == kNone) throw bug(e.insn, "ended on " + unitName(e.unit) + " without beginning there");
      if (end != kNone) throw bug(e.insn, "ended twice on " + unitName(e.unit));
      if (e.cycle < begin)
        throw bug(e.insn, "ended on " + unitName(e.unit) + " in cycle " + std::to_string(e.cycle) +
                              ", before it began there in cycle " + std::to_string(begin));
      end = uint64_t(e.cycle) + 1;
    }
  }
  RunSpans r;
  r.cycles = cycles;
  r.insnCount = insnCount;
  r.spans.reserve(2 * size_t(insnCount));
  for (uint32_t i = 0; i < insnCount; ++i) {
    const Seen& s = seen[i];
    if (s.fetchEnd == kNone) throw bug(i, s.fetchBegin == kNone ? "was never dispatched by fetch" : "never ended on fetch");
    if (s.end == kNone)
      throw bug(i, s.unit < 0 ? "never began on an executing unit" : "never ended on " + unitName(s.unit));
    r.spans.push_back({i, uint32_t(host::kTraceFetch), s.fetchBegin, s.fetchEnd});
    r.spans.push_back({i, uint32_t(s.unit), s.begin, s.end});
  }
  std::sort(r.spans.begin(), r.spans.end(), [](const InsnSpan& a, const InsnSpan& b) {
    return std::tie(a.unit, a.begin, a.insn) < std::tie(b.unit, b.begin, b.insn);
  });
  return r;
}

}  // namespace tessera::hw
