// Shared by the tsim, rtl-sc and hls-sc tests: what every run's instruction spans must satisfy.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <vector>

#include "tessera/gen/host_interface.h"
#include "tessera/hw/insn_trace.h"

namespace tessera::hw {
// How gtest shows a span in a failed comparison.
inline void PrintTo(const InsnSpan& s, std::ostream* os) {
  *os << "insn " << s.insn << " on " << host::kTraceUnitNames[s.unit] << " [" << s.begin << ", " << s.end << ")";
}
}  // namespace tessera::hw

namespace tessera::tsim::testing {

// The span of instruction `insn` on `unit`; a failure if there is not exactly one.
inline hw::InsnSpan spanOf(const hw::RunSpans& r, uint32_t insn, int unit) {
  hw::InsnSpan found;
  int n = 0;
  for (const hw::InsnSpan& s : r.spans)
    if (s.insn == insn && int(s.unit) == unit) {
      found = s;
      ++n;
    }
  EXPECT_EQ(n, 1) << "instruction " << insn << " on " << host::kTraceUnitNames[unit];
  return found;
}

inline bool overlap(const hw::InsnSpan& a, const hw::InsnSpan& b) { return a.begin < b.end && b.begin < a.end; }

// What holds for every run: each instruction once on fetch (one cycle, in program order) and once
// on exactly one executing unit; begin before end; no two spans of one fetch, compute sequencer,
// pipe or store overlap, and the sequencer never runs beside a pipe; everything within the run.
inline void expectWellFormed(const hw::RunSpans& r) {
  std::vector<int> onFetch(r.insnCount), onUnit(r.insnCount);
  std::map<int, std::vector<hw::InsnSpan>> byUnit;
  for (const hw::InsnSpan& s : r.spans) {
    ASSERT_LT(s.insn, r.insnCount);
    ASSERT_LT(int(s.unit), host::kNumTraceUnits);
    EXPECT_LT(s.begin, s.end) << "instruction " << s.insn << " on " << host::kTraceUnitNames[s.unit];
    EXPECT_LE(s.end, r.cycles) << "instruction " << s.insn << " on " << host::kTraceUnitNames[s.unit];
    (s.unit == host::kTraceFetch ? onFetch : onUnit)[s.insn]++;
    byUnit[int(s.unit)].push_back(s);
  }
  for (uint32_t i = 0; i < r.insnCount; ++i) {
    EXPECT_EQ(onFetch[i], 1) << "instruction " << i << " on fetch";
    EXPECT_EQ(onUnit[i], 1) << "instruction " << i << " on executing units";
  }
  for (uint32_t i = 0; i < r.insnCount; ++i) {
    const hw::InsnSpan f = spanOf(r, i, host::kTraceFetch);
    EXPECT_EQ(f.end, f.begin + 1) << "fetch dispatches in one cycle";
    if (i) {
      EXPECT_GT(f.begin, spanOf(r, i - 1, host::kTraceFetch).begin) << "fetch dispatches in program order";
    }
  }
  for (const int unit : {host::kTraceFetch, host::kTraceCompute, host::kTraceGemmPipe, host::kTraceAluPipe, host::kTraceStore})
    for (const hw::InsnSpan& a : byUnit[unit])
      for (const hw::InsnSpan& b : byUnit[unit])
        if (a.insn < b.insn) {
          EXPECT_FALSE(overlap(a, b)) << host::kTraceUnitNames[unit] << " runs instructions " << a.insn << " and "
                                      << b.insn << " at once";
        }
  for (const hw::InsnSpan& seq : byUnit[host::kTraceCompute])
    for (const int pipe : {host::kTraceGemmPipe, host::kTraceAluPipe})
      for (const hw::InsnSpan& p : byUnit[pipe])
        EXPECT_FALSE(overlap(seq, p)) << "the compute sequencer runs instruction " << seq.insn << " beside "
                                      << host::kTraceUnitNames[pipe] << "'s " << p.insn;
}

}  // namespace tessera::tsim::testing
