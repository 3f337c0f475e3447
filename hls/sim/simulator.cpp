// The hls target's run protocol: validate as fsim does, run the design's C-simulation driver, explain its outcome.
#include "tessera/hls/simulator.h"

#include <algorithm>

#include "model.h"
#include "tessera/hw/error.h"
#include "tessera/hw/generate.h"
#include "tessera/hw/isa.h"
#include "tessera/hw/program.h"

namespace tessera::hls {

namespace {

// The derived parameters of every built config, computed once.
const std::vector<std::vector<std::pair<std::string, long long>>>& builtParameters() {
  static const auto all = [] {
    std::vector<std::vector<std::pair<std::string, long long>>> v;
    for (int i = 0; i < kBuiltModelCount; ++i)
      v.push_back(hw::derivedParameters(
          hw::Config::fromJson(hw::shippedConfigJson(kBuiltModels[i].config), kBuiltModels[i].config)));
    return v;
  }();
  return all;
}

int builtIndex(const hw::Config& cfg) {
  const auto want = hw::derivedParameters(cfg);
  const auto& built = builtParameters();
  for (size_t i = 0; i < built.size(); ++i)
    if (built[i] == want) return static_cast<int>(i);
  return -1;
}


const char* kStageNames[3] = {"load", "compute", "store"};

}  // namespace

Simulator::Simulator(const hw::Config& cfg, hw::Dram& dram) : cfg_(cfg), dram_(dram) {
  const std::string why = unsupportedReason(cfg);
  if (!why.empty()) throw Error("target hls", why);
  model_ = kBuiltModels[builtIndex(cfg)].create();
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
    const std::string q = hw::tokenQueueName(static_cast<hw::TokenQueue>(r.waitQueue[m]));
    return r.waitPush[m] ? "waits for space on queue " + q + ", which is full (" + std::to_string(cfg_.depQueueDepth) + " tokens)"
                         : "waits for a token on queue " + q + ", which is empty";
  };

  if (r.top == 2) {  // fault in compute
    const uint32_t idx = pending(1);
    const hw::Insn& in = prog[idx];
    if (r.fault == 2)
      throw Error(hw::insnName(idx, in), "the run exceeds wait_cycles=" + std::to_string(waitCycles) + ": at least " +
                                             std::to_string(r.faultValue) + " cycles of GEMM/ALU micro-ops by this instruction");
    const bool gemm = in.opcode == hw::Opcode::kGemm;
    static const hw::Field kOut[3] = {hw::Field::kDstFactorOut, hw::Field::kSrcFactorOut, hw::Field::kWgtFactorOut};
    const char* what[3] = {"accumulator (dst)", gemm ? "input (src)" : "accumulator (src)", "weight (wgt)"};
    const uint64_t depth[3] = {cfg_.accDepth, gemm ? cfg_.inpDepth : cfg_.accDepth, cfg_.wgtDepth};
    const int f = r.faultField;
    throw Error(hw::insnName(idx, in) + ", micro-op " + std::to_string(r.faultUop) + " with field " + hw::fieldName(kOut[f]) +
                    "/" + hw::fieldName(static_cast<hw::Field>(int(kOut[f]) + 1)),
                std::string("the ") + what[f] + " index reaches " + std::to_string(r.faultValue) +
                    " at the last loop iteration, past the buffer depth " + std::to_string(depth[f]));
  }
  if (r.top == 3)
    throw Error("run of " + std::to_string(count) + " instructions",
                "the program ended without a FINISH instruction; the device would never signal done");
  if (r.top == 1) {
    std::string why;
    uint32_t first = count;
    for (int m = 0; m < 3; ++m) {
      if (!hasPending(m) || !(r.holding[m] || r.queued[m])) continue;
      const uint32_t idx = pending(m);
      first = std::min(first, idx);
      std::string b = blockedBy(m);
      if (b.empty()) b = "cannot start";
      why += std::string(why.empty() ? "" : "; ") + kStageNames[m] + " stage: " + hw::insnName(idx, prog[idx]) + " " + b;
    }
    if (r.fetched < count) {
      const int s = int(prog[r.fetched].stage());
      why += std::string(why.empty() ? "" : "; ") + "fetch stalled at " + hw::insnName(r.fetched, prog[r.fetched]) +
             ": the " + kStageNames[s] + " instruction queue is full (" + std::to_string(cfg_.insnQueueDepth) + " entries)";
    }
    throw Error("deadlock at instruction " + std::to_string(first == count ? r.fetched : first),
                "no stage can make progress: " + why);
  }
  // FINISH ran: like fsim, every other module must be idle and every token queue empty.
  const uint32_t finishIdx = byStage[1][r.retired[1] - 1];
  std::string left;
  for (int m = 0; m < 3; ++m)
    if (hasPending(m) && (r.holding[m] || r.queued[m]))
      left += std::string("; ") + kStageNames[m] + " " + hw::insnName(pending(m), prog[pending(m)]) + " never executed (" +
              blockedBy(m) + ")";
  if (r.fetched < count)
    left += "; " + hw::insnName(r.fetched, prog[r.fetched]) + " and " + std::to_string(count - r.fetched - 1) +
            " more after it were never fetched";
  for (int t = 0; t < 4; ++t)
    if (r.tokens[t])
      left += "; " + std::to_string(r.tokens[t]) + " token(s) left on queue " + hw::tokenQueueName(static_cast<hw::TokenQueue>(t));
  if (!left.empty())
    throw Error("FINISH at instruction " + std::to_string(finishIdx), "the program is not balanced at FINISH" + left);
  hw::Counters c = hw::countProgram(prog, cfg_);
  c.runs = 0;  // counted above, also for failed runs
  counters_ += c;
}

std::vector<std::string> Simulator::builtConfigs() {
  std::vector<std::string> names;
  for (int i = 0; i < kBuiltModelCount; ++i) names.push_back(kBuiltModels[i].config);
  return names;
}

std::string Simulator::unsupportedReason(const hw::Config& cfg) {
  if (builtIndex(cfg) >= 0) return "";
  std::string names;
  for (const auto& n : builtConfigs()) names += (names.empty() ? "" : ", ") + n;
  return "hls is not built for config '" + cfg.name + "': the design is compiled only for configs " + names +
         " (add the config to TESSERA_HLS_CONFIGS and rebuild)";
}

}  // namespace tessera::hls
