// Lowering of a generated op list to a VTA stream: dependency tokens from conflicts, NOPs, FINISH; listing.
#include <algorithm>
#include <array>
#include <cstdio>
#include <map>

#include "tessera/hw/asm.h"
#include "tessera/hw/dram_timing.h"
#include "tessera/support/error.h"
#include "tessera/regress/check.h"
#include "tessera/regress/program.h"
#include "tessera/regress/rng.h"

namespace tessera::regress {

namespace {

constexpr int kLoad = 0, kCompute = 1, kStore = 2;

// The four token queues as (producer stage, consumer stage).
struct QueueDesc {
  int from, to;
};
// Indices into kQueues; g2l (1) and s2g (3) flow backwards, the two not named here.
constexpr int kL2G = 0, kG2S = 2;
constexpr QueueDesc kQueues[4] = {{kLoad, kCompute}, {kCompute, kLoad}, {kCompute, kStore}, {kStore, kCompute}};

void setPush(hw::Insn& in, int q) {
  if (q == kL2G || q == kG2S) in.pushNext = true;
  else in.pushPrev = true;
}

void setPop(hw::Insn& in, int q) {
  if (q == kL2G || q == kG2S) in.popPrev = true;
  else in.popNext = true;
}

// A zero-width LOAD/STORE of `stage`: moves nothing, carries flags. Some carry random garbage in
// the fields a NOP ignores, since only x_size = 0 makes it a NOP.
hw::Insn nopFor(int stage, Rng& rng, const hw::Config& cfg) {
  hw::Insn in;
  if (stage == kStore) {
    in.opcode = hw::Opcode::kStore;
    in.memType = static_cast<uint32_t>(hw::MemId::kOut);
  } else {
    in.opcode = hw::Opcode::kLoad;
    static const hw::MemId kLoadTypes[2] = {hw::MemId::kInp, hw::MemId::kWgt};
    static const hw::MemId kComputeTypes[3] = {hw::MemId::kUop, hw::MemId::kAcc, hw::MemId::kAcc8};
    in.memType = static_cast<uint32_t>(stage == kLoad ? kLoadTypes[rng.range(0, 1)] : kComputeTypes[rng.range(0, 2)]);
  }
  if (rng.chance(20)) {
    in.ySize = static_cast<uint32_t>(rng.range(0, 4));
    in.xStride = static_cast<uint32_t>(rng.range(0, 64));
    in.sramBase = static_cast<uint32_t>(rng.range(0, cfg.sramDepth(static_cast<hw::MemId>(in.memType)) - 1));
    in.dramBase = static_cast<uint32_t>(rng.range(0, 0xffffffffull));
    if (in.opcode == hw::Opcode::kLoad && in.memType != static_cast<uint32_t>(hw::MemId::kUop)) {
      in.yPad0 = static_cast<uint32_t>(rng.range(0, 2));
      in.xPad1 = static_cast<uint32_t>(rng.range(0, 2));
    }
  }
  return in;
}

struct Node {
  hw::Insn insn;
  int op = -1;         // index into Program::ops, -1 if lowering made it
  const char* why = "";  // for nodes lowering made
};

}  // namespace

const char* regionKindName(RegionKind kind) {
  switch (kind) {
    case RegionKind::kInsn: return "INSN";
    case RegionKind::kUop: return "UOP";
    case RegionKind::kInp: return "INP";
    case RegionKind::kWgt: return "WGT";
    case RegionKind::kAcc: return "ACC";
    case RegionKind::kAcc8: return "ACC_8BIT";
    case RegionKind::kOut: return "OUT";
  }
  return "?";
}

void lower(Program& p) {
  const size_t n = p.ops.size();
  std::vector<hw::Insn> opInsns(n);
  for (size_t i = 0; i < n; ++i) {
    opInsns[i] = p.ops[i].insn;
    opInsns[i].popPrev = opInsns[i].popNext = opInsns[i].pushPrev = opInsns[i].pushNext = false;
    if (opInsns[i].opcode == hw::Opcode::kFinish)
      throw Error("op " + std::to_string(p.ops[i].id), "FINISH is added by lowering, not generated");
  }
  const std::vector<Accesses> acc = analyze(p, opInsns);
  Rng rng(p.seed ^ 0x6c6f776572ull);  // "lower": NOP forms and extra tokens are reproducible per program
  std::vector<int> stage(n);
  for (size_t i = 0; i < n; ++i) stage[i] = static_cast<int>(opInsns[i].stage());

  // Orderings "op a completes before op b starts" with a before b and the stages different.
  std::vector<std::pair<int, int>> reqs;
  auto require = [&](int a, int b) {
    if (a >= 0 && stage[a] != stage[b]) reqs.push_back({a, b});
  };

  // SRAM: a read after the last write of its entry; a write after the last read of each other
  // stage since that write. Earlier accesses are covered by program order within their stage.
  const uint32_t depth[kBufCount] = {p.cfg.uopDepth, p.cfg.inpDepth, p.cfg.wgtDepth, p.cfg.accDepth};
  for (int b = 0; b < kBufCount; ++b) {
    std::vector<int> lastWriter(depth[b], -1);
    std::vector<int> lastReader[3];
    for (auto& v : lastReader) v.assign(depth[b], -1);
    for (size_t i = 0; i < n; ++i) {
      for (uint32_t e : acc[i].sramRead[b]) {
        require(lastWriter[e], static_cast<int>(i));
        lastReader[stage[i]][e] = static_cast<int>(i);
      }
      for (uint32_t e : acc[i].sramWrite[b]) {
        for (int s = 0; s < 3; ++s) {
          if (lastReader[s][e] != static_cast<int>(i)) require(lastReader[s][e], static_cast<int>(i));
          lastReader[s][e] = -1;
        }
        require(lastWriter[e], static_cast<int>(i));
        lastWriter[e] = static_cast<int>(i);
      }
    }
  }
  // DRAM: a load after the latest store of a byte it reads; a store after the latest load of
  // each stage that read a byte it writes.
  auto overlaps = [](const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
    for (const auto& x : a)
      for (const auto& y : b)
        if (x.lo < y.hi && y.lo < x.hi) return true;
    return false;
  };
  std::vector<int> storesSoFar, loadsSoFar;
  for (size_t i = 0; i < n; ++i) {
    if (!acc[i].dramRead.empty()) {
      for (auto it = storesSoFar.rbegin(); it != storesSoFar.rend(); ++it)
        if (overlaps(acc[*it].dramWrite, acc[i].dramRead)) {
          require(*it, static_cast<int>(i));
          break;
        }
      loadsSoFar.push_back(static_cast<int>(i));
    }
    if (!acc[i].dramWrite.empty()) {
      bool seen[3] = {false, false, false};
      for (auto it = loadsSoFar.rbegin(); it != loadsSoFar.rend(); ++it)
        if (!seen[stage[*it]] && overlaps(acc[*it].dramRead, acc[i].dramWrite)) {
          seen[stage[*it]] = true;
          require(*it, static_cast<int>(i));
        }
      storesSoFar.push_back(static_cast<int>(i));
    }
  }
  // The generator's extra orderings.
  std::map<uint32_t, int> indexOfId;
  for (size_t i = 0; i < n; ++i) indexOfId[p.ops[i].id] = static_cast<int>(i);
  for (const auto& e : p.edges) {
    auto f = indexOfId.find(e.from), t = indexOfId.find(e.to);
    if (f == indexOfId.end() || t == indexOfId.end()) continue;  // an end was shrunk away
    if (f->second >= t->second)
      throw Error("order edge " + std::to_string(e.from) + " -> " + std::to_string(e.to),
                  "the first op does not precede the second in the stream");
    require(f->second, t->second);
  }

  // Nodes in stream order. Load and store have no queue between them: such an ordering goes
  // through a compute NOP ("bridge") placed just before the later instruction.
  std::vector<int> bridgeBefore(n, -1);
  std::vector<Node> nodes;
  std::vector<int> nodeStage;
  std::vector<std::pair<int, int>> nodeReqs;  // in node indices, filled below
  {
    std::vector<bool> needsBridge(n, false);
    for (auto [a, b] : reqs)
      if (stage[a] != kCompute && stage[b] != kCompute) needsBridge[b] = true;
    std::vector<int> nodeOf(n);
    for (size_t i = 0; i < n; ++i) {
      if (needsBridge[i]) {
        bridgeBefore[i] = static_cast<int>(nodes.size());
        nodes.push_back({nopFor(kCompute, rng, p.cfg), -1, "bridge between load and store"});
        nodeStage.push_back(kCompute);
      }
      nodeOf[i] = static_cast<int>(nodes.size());
      nodes.push_back({opInsns[i], static_cast<int>(i), ""});
      nodeStage.push_back(stage[i]);
    }
    for (auto [a, b] : reqs) {
      if (bridgeBefore[b] >= 0 && stage[a] != kCompute) {
        nodeReqs.push_back({nodeOf[a], bridgeBefore[b]});
        nodeReqs.push_back({bridgeBefore[b], nodeOf[b]});
      } else {
        nodeReqs.push_back({nodeOf[a], nodeOf[b]});
      }
    }
    // FINISH waits for the last instruction of the load and store stages (compute is in order).
    hw::Insn finish;
    finish.opcode = hw::Opcode::kFinish;
    const int fin = static_cast<int>(nodes.size());
    int lastOf[3] = {-1, -1, -1};
    for (int k = 0; k < fin; ++k) lastOf[nodeStage[k]] = k;
    nodes.push_back({finish, -1, "FINISH"});
    nodeStage.push_back(kCompute);
    if (lastOf[kLoad] >= 0) nodeReqs.push_back({lastOf[kLoad], fin});
    if (lastOf[kStore] >= 0) nodeReqs.push_back({lastOf[kStore], fin});

    // Tokens, queue by queue. Consumers in stream order; each needs the token of a push at or
    // after its producer, i.e. (pushes are in order) at least as many pops as the index of the
    // first push at or after the producer. A new push goes on the producer itself, which is
    // after every earlier push because an earlier push at or after it would have satisfied the
    // requirement already.
    const size_t m = nodes.size();
    std::vector<std::array<int, 4>> popCount(m, {0, 0, 0, 0});
    std::vector<int> nodesOf[3];
    for (size_t k = 0; k < m; ++k) nodesOf[nodeStage[k]].push_back(static_cast<int>(k));
    for (int q = 0; q < 4; ++q) {
      std::map<int, int> latestProducer;  // consumer -> latest producer
      for (auto [a, b] : nodeReqs)
        if (nodeStage[a] == kQueues[q].from && nodeStage[b] == kQueues[q].to) {
          auto it = latestProducer.find(b);
          if (it == latestProducer.end()) latestProducer[b] = a;
          else it->second = std::max(it->second, a);
        }
      std::vector<int> pushes;
      int popped = 0;
      for (auto [b, a] : latestProducer) {
        int need;
        auto first = std::lower_bound(pushes.begin(), pushes.end(), a);
        if (first != pushes.end()) {
          need = static_cast<int>(first - pushes.begin()) + 1;
        } else {
          if (p.extraTokenPercent && rng.chance(p.extraTokenPercent)) {
            // Extra pushes on producer-stage instructions after the last push and before `a`;
            // being earlier in the queue, they are popped by this consumer too.
            const auto& xs = nodesOf[kQueues[q].from];
            auto lo = std::upper_bound(xs.begin(), xs.end(), pushes.empty() ? -1 : pushes.back());
            auto hi = std::lower_bound(xs.begin(), xs.end(), a);
            std::vector<int> between(lo, hi);
            const size_t extra = std::min<size_t>(between.size(), rng.range(1, 3));
            for (size_t k = 0; k < extra; ++k) std::swap(between[k], between[rng.range(k, between.size() - 1)]);
            between.resize(extra);
            std::sort(between.begin(), between.end());
            pushes.insert(pushes.end(), between.begin(), between.end());
          }
          pushes.push_back(a);
          need = static_cast<int>(pushes.size());
        }
        if (need > popped) {
          popCount[b][q] = need - popped;
          popped = need;
        }
      }
      for (int a : pushes) setPush(nodes[a].insn, q);
    }

    // Emit in stream order. A consumer pops one token per queue itself; further pops ride on NOPs
    // just before it. Running the stream in this order must never find a queue full (then no
    // order deadlocks: each stage is in order and blocks on its queues, so all orders end alike),
    // so a push that would overflow its queue is preceded by a consumer-stage NOP popping the
    // oldest token; the consumer that would have popped that token pops one less.
    const int cap = p.cfg.depQueueDepth;
    int outstanding[4] = {0, 0, 0, 0}, early[4] = {0, 0, 0, 0};
    p.insns.clear();
    p.insnOp.clear();
    auto emit = [&](const hw::Insn& in, int op) {
      p.insns.push_back(in);
      p.insnOp.push_back(op);
    };
    for (size_t k = 0; k < m; ++k) {
      hw::Insn& in = nodes[k].insn;
      const bool pushes[4] = {in.pushNext && nodeStage[k] == kLoad, in.pushPrev && nodeStage[k] == kCompute,
                              in.pushNext && nodeStage[k] == kCompute, in.pushPrev && nodeStage[k] == kStore};
      for (int q = 0; q < 4; ++q)
        for (; pushes[q] && outstanding[q] >= cap; --outstanding[q], ++early[q]) {
          hw::Insn nop = nopFor(kQueues[q].to, rng, p.cfg);
          setPop(nop, q);
          emit(nop, -1);
        }
      int pops[4];
      int extra = 0;
      for (int q = 0; q < 4; ++q) {
        const int credit = std::min(popCount[k][q], early[q]);
        early[q] -= credit;
        pops[q] = popCount[k][q] - credit;
        outstanding[q] -= pops[q];
        extra = std::max(extra, pops[q] - 1);
      }
      for (int j = 0; j < extra; ++j) {
        hw::Insn nop = nopFor(nodeStage[k], rng, p.cfg);
        for (int q = 0; q < 4; ++q)
          if (j < pops[q] - 1) setPop(nop, q);
        emit(nop, -1);
      }
      for (int q = 0; q < 4; ++q)
        if (pops[q] > 0) setPop(in, q);
      emit(in, nodes[k].op);
      for (int q = 0; q < 4; ++q) outstanding[q] += pushes[q];
    }
  }

  hw::Isa isa(p.cfg);
  Region& r = p.regions.back();
  if (r.kind != RegionKind::kInsn) throw Error("program seed " + std::to_string(p.seed), "no instruction region");
  r.init.assign(p.insns.size() * 16, 0);
  for (size_t i = 0; i < p.insns.size(); ++i)
    hw::Isa::rawToBytes(isa.encode(p.insns[i], "instruction " + std::to_string(i)), &r.init[16 * i]);
}

uint64_t estimateCycles(const hw::Config& cfg, const std::vector<hw::Insn>& insns) {
  const uint64_t bus = static_cast<uint64_t>(cfg.busBytes);
  const hw::DramTiming dram;
  uint64_t cycles = 0;
  for (const auto& in : insns) {
    cycles += 8;  // fetch, dispatch, token handshakes
    if (in.isMem() && !in.isNop()) {
      const uint64_t eb = static_cast<uint64_t>(cfg.dramElemBytes(static_cast<hw::MemId>(in.memType)));
      const uint64_t bytes = uint64_t(in.xSize) * in.ySize * eb;
      const uint64_t entries = in.opcode == hw::Opcode::kLoad ? hw::loadFootprint(in) : uint64_t(in.xSize) * in.ySize;
      // Beats, one burst latency of the timed targets' default DRAM per row (unhidden: a serial
      // bound), and one SRAM access per entry (padding included).
      const uint64_t latency = in.opcode == hw::Opcode::kLoad ? dram.readLatency : dram.writeLatency;
      cycles += (bytes + bus - 1) / bus + latency * uint64_t(in.ySize) + entries;
    } else if (in.opcode == hw::Opcode::kGemm || in.opcode == hw::Opcode::kAlu) {
      const uint64_t uops = uint64_t(in.iterOut) * in.iterIn * (in.uopEnd > in.uopBgn ? in.uopEnd - in.uopBgn : 0);
      const bool twoReads = in.opcode == hw::Opcode::kAlu && !in.useImm;
      cycles += uops * (twoReads ? 2 : 1) + 4;
    }
  }
  return cycles;
}

size_t workInstructions(const Program& p) {
  size_t n = 0;
  for (const auto& in : p.insns)
    if (!in.isNop() && in.opcode != hw::Opcode::kFinish) ++n;
  return n;
}

std::string listing(const Program& p) {
  hw::Isa isa(p.cfg);
  std::string s;
  char line[256];
  std::snprintf(line, sizeof line,
                "program seed %llu, config %s (%dx%dx%d), size %s: %zu instructions (%zu doing work), ~%llu cycles\n",
                static_cast<unsigned long long>(p.seed), p.cfg.name.c_str(), p.cfg.batch, p.cfg.blockIn,
                p.cfg.blockOut, p.size.c_str(), p.insns.size(), workInstructions(p),
                static_cast<unsigned long long>(estimateCycles(p.cfg, p.insns)));
  s += line;
  s += "regions:\n";
  for (const auto& r : p.regions) {
    std::snprintf(line, sizeof line, "  %-6s %-8s [0x%llx, 0x%llx) %zu bytes\n", r.name.c_str(),
                  regionKindName(r.kind), static_cast<unsigned long long>(r.base),
                  static_cast<unsigned long long>(r.end()), r.init.size());
    s += line;
  }
  std::snprintf(line, sizeof line, "stream at 0x%llx:\n", static_cast<unsigned long long>(p.insnBase()));
  s += line;
  const size_t n = p.insns.size();
  for (size_t i = 0; i < n; ++i) {
    const hw::Insn& in = p.insns[i];
    std::string text = std::to_string(i) + ": " + hw::disassemble(isa, in);
    const int op = i < p.insnOp.size() ? p.insnOp[i] : -1;
    if (op >= 0)
      text += "   # op " + std::to_string(p.ops[op].id) + ", block " + std::to_string(p.ops[op].block);
    else if (in.opcode != hw::Opcode::kFinish)
      text += "   # token carrier";
    s += text + "\n";
    if (in.opcode == hw::Opcode::kLoad && in.memType == static_cast<uint32_t>(hw::MemId::kUop) && !in.isNop()) {
      // The micro-ops this load brings in, read from the program's micro-op region.
      const uint64_t addr = uint64_t(in.dramBase) * 4;
      for (const auto& r : p.regions) {
        if (addr < r.base || addr + 4ull * in.xSize > r.end()) continue;
        for (uint32_t x = 0; x < in.xSize; ++x) {
          const uint8_t* b = &r.init[addr - r.base + 4ull * x];
          uint32_t w = uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
          s += "     uop[" + std::to_string(in.sramBase + x) + "] " + hw::disassembleUop(isa.decodeUop(w)) + "\n";
        }
        break;
      }
    }
  }
  return s;
}

}  // namespace tessera::regress
