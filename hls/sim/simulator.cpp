// The hls target's run protocol: validate as fsim does, run the design's C-simulation driver, explain its outcome.
#include "tessera/hls/simulator.h"

#include <algorithm>

#include "model.h"
#include "tessera/hw/built_configs.h"
#include "tessera/hw/error.h"
#include "tessera/hw/isa.h"
#include "tessera/hw/program.h"
#include "tessera/hw/run_error.h"

namespace tessera::hls {

namespace {

const hw::BuiltConfigs& built() {
  static const hw::BuiltConfigs kBuilt = [] {
    std::vector<std::string> names;
    for (int i = 0; i < kBuiltModelCount; ++i) names.push_back(kBuiltModels[i].config);
    return hw::BuiltConfigs(names);
  }();
  return kBuilt;
}

}  // namespace

Simulator::Simulator(const hw::Config& cfg, hw::Dram& dram) : cfg_(cfg), dram_(dram) {
  const std::string why = unsupportedReason(cfg);
  if (!why.empty()) throw Error("target hls", why);
  model_ = kBuiltModels[built().indexOf(cfg)].create();
}

Simulator::~Simulator() = default;

void Simulator::run(uint64_t insnPhys, uint32_t count, uint64_t waitCycles) {
  counters_.runs += 1;
  const hw::Isa isa(cfg_);
  // The same checks, in the same order and words, as fsim and tsim, before anything executes.
  const std::vector<hw::Insn> prog = hw::decodeProgram(isa, dram_, insnPhys, count);

  // The design's queues carry bare instructions; a module's n-th instruction is the n-th of its
  // stage in program order, which names it in errors.
  std::vector<uint32_t> byStage[3];
  for (uint32_t i = 0; i < count; ++i) byStage[int(prog[i].stage())].push_back(i);

  const RunOutcome r = model_->run(dram_.raw(0), insnPhys, count, waitCycles);

  auto pending = [&](int m) -> uint32_t { return byStage[m][r.retired[m]]; };
  auto hasPending = [&](int m) { return r.retired[m] < byStage[m].size(); };
  auto blockedBy = [&](int m) -> std::string {
    if (!r.holding[m]) return "";
    const auto q = static_cast<hw::TokenQueue>(r.waitQueue[m]);
    return r.waitPush[m] ? hw::run_error::waitsForSpace(q, cfg_.depQueueDepth) : hw::run_error::waitsForToken(q);
  };

  if (r.top == 2) {  // fault in compute
    const uint32_t idx = pending(1);
    if (r.fault == 2) throw hw::run_error::budgetExceeded(idx, prog[idx], waitCycles, r.faultValue);
    throw hw::run_error::sramIndexPastDepth(cfg_, idx, prog[idx], r.faultUop,
                                            static_cast<hw::run_error::Operand>(r.faultField), r.faultValue);
  }
  if (r.top == 3) throw hw::run_error::missingFinish(count);
  if (r.top == 1) {
    hw::run_error::Deadlock deadlock;
    uint32_t first = count;
    for (int m = 0; m < 3; ++m) {
      if (!hasPending(m) || !(r.holding[m] || r.queued[m])) continue;
      const uint32_t idx = pending(m);
      first = std::min(first, idx);
      std::string b = blockedBy(m);
      if (b.empty()) b = "cannot start";
      deadlock.stageBlocked(static_cast<hw::Stage>(m), idx, prog[idx], b);
    }
    if (r.fetched < count) deadlock.fetchStalled(r.fetched, prog[r.fetched], cfg_.insnQueueDepth);
    throw deadlock.error(first == count ? r.fetched : first);
  }
  // FINISH ran: like fsim, every other module must be idle and every token queue empty.
  const uint32_t finishIdx = byStage[1][r.retired[1] - 1];
  hw::run_error::UnbalancedFinish left;
  for (int m = 0; m < 3; ++m)
    if (hasPending(m) && (r.holding[m] || r.queued[m]))
      left.neverExecuted(static_cast<hw::Stage>(m), pending(m), prog[pending(m)], blockedBy(m));
  if (r.fetched < count) left.neverFetched(r.fetched, prog[r.fetched], count);
  for (int t = 0; t < 4; ++t)
    if (r.tokens[t]) left.tokensLeft(static_cast<hw::TokenQueue>(t), r.tokens[t]);
  if (!left.empty()) throw left.error(finishIdx);
  hw::Counters c = hw::countProgram(prog, cfg_);
  c.runs = 0;  // counted above, also for failed runs
  counters_ += c;
}

std::vector<std::string> Simulator::builtConfigs() { return built().names(); }

std::string Simulator::unsupportedReason(const hw::Config& cfg) {
  return built().unsupportedReason(cfg, "hls", "HLS design", "TESSERA_HLS_CONFIGS");
}

}  // namespace tessera::hls
