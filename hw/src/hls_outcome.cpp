// fsim's errors for where the HLS design's stages stopped: one translation for the hls target and the zynq driver of the HLS bitstream.
#include "tessera/hw/hls_outcome.h"

#include <algorithm>

#include "tessera/hw/run_error.h"

namespace tessera::hw {

void explainHlsOutcome(const Config& cfg, const std::vector<Insn>& prog, const HlsRunOutcome& r, uint64_t waitCycles) {
  const uint32_t count = static_cast<uint32_t>(prog.size());
  // The design's queues carry bare instructions; a module's n-th instruction is the n-th of its
  // stage in program order, which names it in errors.
  std::vector<uint32_t> byStage[3];
  for (uint32_t i = 0; i < count; ++i) byStage[int(prog[i].stage())].push_back(i);

  auto pending = [&](int m) -> uint32_t { return byStage[m][r.retired[m]]; };
  auto hasPending = [&](int m) { return r.retired[m] < byStage[m].size(); };
  auto blockedBy = [&](int m) -> std::string {
    if (!r.holding[m]) return "";
    const auto q = static_cast<TokenQueue>(r.waitQueue[m]);
    return r.waitPush[m] ? run_error::waitsForSpace(q, cfg.depQueueDepth) : run_error::waitsForToken(q);
  };

  if (r.top == 2) {  // fault in compute
    const uint32_t idx = pending(1);
    if (r.fault == 2) throw run_error::budgetExceeded(idx, prog[idx], waitCycles, r.faultValue);
    throw run_error::sramIndexPastDepth(cfg, idx, prog[idx], r.faultUop, static_cast<run_error::Operand>(r.faultField),
                                        r.faultValue);
  }
  if (r.top == 3) throw run_error::missingFinish(count);
  if (r.top == 1) {
    run_error::Deadlock deadlock;
    uint32_t first = count;
    for (int m = 0; m < 3; ++m) {
      if (!hasPending(m) || !(r.holding[m] || r.queued[m])) continue;
      const uint32_t idx = pending(m);
      first = std::min(first, idx);
      std::string b = blockedBy(m);
      if (b.empty()) b = "cannot start";
      deadlock.stageBlocked(static_cast<Stage>(m), idx, prog[idx], b);
    }
    if (r.fetched < count) deadlock.fetchStalled(r.fetched, prog[r.fetched], cfg.insnQueueDepth);
    throw deadlock.error(first == count ? r.fetched : first);
  }
  // FINISH ran: like fsim, every other module must be idle and every token queue empty.
  const uint32_t finishIdx = byStage[1][r.retired[1] - 1];
  run_error::UnbalancedFinish left;
  for (int m = 0; m < 3; ++m)
    if (hasPending(m) && (r.holding[m] || r.queued[m]))
      left.neverExecuted(static_cast<Stage>(m), pending(m), prog[pending(m)], blockedBy(m));
  if (r.fetched < count) left.neverFetched(r.fetched, prog[r.fetched], count);
  for (int t = 0; t < 4; ++t)
    if (r.tokens[t]) left.tokensLeft(static_cast<TokenQueue>(t), r.tokens[t]);
  if (!left.empty()) throw left.error(finishIdx);
}

}  // namespace tessera::hw
