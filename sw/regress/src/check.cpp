// What each instruction touches, and the static validity check built on it (tokens, SRAM, DRAM races).
#include "tessera/regress/check.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <deque>

#include "tessera/support/error.h"
#include "tessera/hw/program.h"
#include "tessera/support/format.h"

namespace tessera::regress {

namespace {

const char* kBufferNames[kBufCount] = {"UOP", "INP", "WGT", "ACC"};

int bufferOf(uint32_t memType) {
  switch (static_cast<hw::MemId>(memType)) {
    case hw::MemId::kUop: return kBufUop;
    case hw::MemId::kInp: return kBufInp;
    case hw::MemId::kWgt: return kBufWgt;
    default: return kBufAcc;  // ACC, ACC_8BIT and OUT all live in the accumulator
  }
}

void sortUnique(std::vector<uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

void mergeRanges(std::vector<ByteRange>& v) {
  std::sort(v.begin(), v.end(), [](const ByteRange& a, const ByteRange& b) { return a.lo < b.lo; });
  std::vector<ByteRange> out;
  for (const auto& r : v) {
    if (!out.empty() && r.lo <= out.back().hi) out.back().hi = std::max(out.back().hi, r.hi);
    else out.push_back(r);
  }
  v.swap(out);
}

bool overlap(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].hi <= b[j].lo) ++i;
    else if (b[j].hi <= a[i].lo) ++j;
    else return true;
  }
  return false;
}

// The region wholly containing [lo, hi), or nullptr.
const Region* regionOf(const Program& p, uint64_t lo, uint64_t hi) {
  for (const auto& r : p.regions)
    if (lo >= r.base && hi <= r.end()) return &r;
  return nullptr;
}

}  // namespace

std::vector<Accesses> analyze(const Program& p, const std::vector<hw::Insn>& stream) {
  const hw::Config& cfg = p.cfg;
  hw::Isa isa(cfg);
  std::vector<hw::Uop> uops(cfg.uopDepth);
  std::vector<uint8_t> uopLoaded(cfg.uopDepth, 0);
  const uint32_t depth[kBufCount] = {cfg.uopDepth, cfg.inpDepth, cfg.wgtDepth, cfg.accDepth};
  std::vector<Accesses> out(stream.size());

  for (size_t i = 0; i < stream.size(); ++i) {
    const hw::Insn& in = stream[i];
    Accesses& a = out[i];
    auto where = [&] { return hw::insnName(i, in); };
    // Every DRAM row must lie inside one region of an allowed kind.
    auto dramRow = [&](uint64_t lo, uint64_t hi, bool write) -> const Region* {
      const Region* r = regionOf(p, lo, hi);
      if (!r)
        throw Error(where() + ", field dram_base", "DRAM row [" + hex(lo) + ", " + hex(hi) +
                                                       ") is not inside one region of the program");
      (write ? a.dramWrite : a.dramRead).push_back({lo, hi});
      return r;
    };

    if (in.isMem()) {
      if (in.isNop()) continue;
      const bool load = in.opcode == hw::Opcode::kLoad;
      const int buf = bufferOf(in.memType);
      const uint64_t eb = static_cast<uint64_t>(cfg.dramElemBytes(static_cast<hw::MemId>(in.memType)));
      const uint64_t entries = load ? hw::loadFootprint(in) : uint64_t(in.xSize) * in.ySize;
      if (in.sramBase + entries > depth[buf])
        throw Error(where() + ", field sram_base", std::string(kBufferNames[buf]) + " SRAM range [" +
                                                       std::to_string(in.sramBase) + ", " +
                                                       std::to_string(in.sramBase + entries) +
                                                       ") exceeds the buffer depth " + std::to_string(depth[buf]));
      auto& sram = load ? a.sramWrite[buf] : a.sramRead[buf];
      for (uint64_t e = 0; e < entries; ++e) sram.push_back(static_cast<uint32_t>(in.sramBase + e));
      for (uint32_t y = 0; y < in.ySize; ++y) {
        uint64_t lo = (uint64_t(in.dramBase) + uint64_t(y) * in.xStride) * eb;
        const Region* r = dramRow(lo, lo + uint64_t(in.xSize) * eb, !load);
        if (!load && r->kind != RegionKind::kOut)
          throw Error(where(), std::string("STORE writes region ") + r->name + " (" + regionKindName(r->kind) +
                                   "); only OUT regions may be written");
        if (load && buf == kBufUop) {
          if (r->kind != RegionKind::kUop)
            throw Error(where(), "LOAD.UOP reads region " + r->name + ", which is not a micro-op region");
          for (uint32_t x = 0; x < in.xSize; ++x) {
            const uint8_t* b = &r->init[lo - r->base + 4 * uint64_t(x)];
            uint32_t w = uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
            uops[in.sramBase + x] = isa.decodeUop(w);
            uopLoaded[in.sramBase + x] = 1;
          }
        }
      }
    } else if (in.opcode == hw::Opcode::kGemm || in.opcode == hw::Opcode::kAlu) {
      if (in.iterOut == 0 || in.iterIn == 0 || in.uopBgn >= in.uopEnd) continue;
      if (in.uopEnd > cfg.uopDepth)
        throw Error(where() + ", field uop_end", "uop_end " + std::to_string(in.uopEnd) +
                                                     " exceeds the micro-op buffer depth " + std::to_string(cfg.uopDepth));
      const bool gemm = in.opcode == hw::Opcode::kGemm;
      const bool reads = !(gemm && in.reset);
      const bool vector = !gemm && !in.useImm;
      for (uint32_t u = in.uopBgn; u < in.uopEnd; ++u) {
        a.sramRead[kBufUop].push_back(u);
        if (!uopLoaded[u])
          throw Error(where() + ", micro-op " + std::to_string(u),
                      "uses a micro-op that no earlier LOAD.UOP wrote (its fields, hence the indices, are undefined)");
      }
      for (uint32_t io = 0; io < in.iterOut; ++io)
        for (uint32_t ii = 0; ii < in.iterIn; ++ii)
          for (uint32_t u = in.uopBgn; u < in.uopEnd; ++u) {
            const hw::Uop& m = uops[u];
            uint64_t dst = m.dst + uint64_t(io) * in.dstFactorOut + uint64_t(ii) * in.dstFactorIn;
            uint64_t src = m.src + uint64_t(io) * in.srcFactorOut + uint64_t(ii) * in.srcFactorIn;
            uint64_t wgt = m.wgt + uint64_t(io) * in.wgtFactorOut + uint64_t(ii) * in.wgtFactorIn;
            auto range = [&](uint64_t idx, int buf, const char* field) {
              if (idx >= depth[buf])
                throw Error(where() + ", micro-op " + std::to_string(u) + " field " + field,
                            std::string(kBufferNames[buf]) + " index " + std::to_string(idx) + " at iteration (" +
                                std::to_string(io) + ", " + std::to_string(ii) + ") is past the buffer depth " +
                                std::to_string(depth[buf]));
              return static_cast<uint32_t>(idx);
            };
            uint32_t d = range(dst, kBufAcc, "dst");
            a.sramWrite[kBufAcc].push_back(d);
            if (reads) a.sramRead[kBufAcc].push_back(d);
            if (gemm && reads) {
              a.sramRead[kBufInp].push_back(range(src, kBufInp, "src"));
              a.sramRead[kBufWgt].push_back(range(wgt, kBufWgt, "wgt"));
            }
            // fsim (the specification) range-checks an ALU's source even when an immediate
            // replaces it; only a vector op reads it.
            if (!gemm) {
              const uint32_t s = range(src, kBufAcc, "src");
              if (vector) a.sramRead[kBufAcc].push_back(s);
            }
          }
    }
    for (int b = 0; b < kBufCount; ++b) {
      sortUnique(a.sramRead[b]);
      sortUnique(a.sramWrite[b]);
    }
    mergeRanges(a.dramRead);
    mergeRanges(a.dramWrite);
  }
  return out;
}

namespace {

// Token queues each instruction pops and pushes (the same table as the hardware's).
int popsOf(const hw::Insn& in, int* q) {
  int n = 0;
  switch (in.stage()) {
    case hw::Stage::kLoad: if (in.popNext) q[n++] = int(hw::TokenQueue::kComputeToLoad); break;
    case hw::Stage::kCompute:
      if (in.popPrev) q[n++] = int(hw::TokenQueue::kLoadToCompute);
      if (in.popNext) q[n++] = int(hw::TokenQueue::kStoreToCompute);
      break;
    case hw::Stage::kStore: if (in.popPrev) q[n++] = int(hw::TokenQueue::kComputeToStore); break;
  }
  return n;
}

int pushesOf(const hw::Insn& in, int* q) {
  int n = 0;
  switch (in.stage()) {
    case hw::Stage::kLoad: if (in.pushNext) q[n++] = int(hw::TokenQueue::kLoadToCompute); break;
    case hw::Stage::kCompute:
      if (in.pushPrev) q[n++] = int(hw::TokenQueue::kComputeToLoad);
      if (in.pushNext) q[n++] = int(hw::TokenQueue::kComputeToStore);
      break;
    case hw::Stage::kStore: if (in.pushPrev) q[n++] = int(hw::TokenQueue::kStoreToCompute); break;
  }
  return n;
}

using Clock = std::array<uint32_t, 3>;  // per stage: instructions of it complete before this point

}  // namespace

HappensBefore::HappensBefore(const Program& p) {
  const auto& prog = p.insns;
  const size_t n = prog.size();
  stage_.resize(n);
  pos_.resize(n);
  start_.resize(n);
  std::vector<Clock> done(n);
  uint32_t count[3] = {0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    stage_[i] = static_cast<int>(prog[i].stage());
    pos_[i] = count[stage_[i]]++;
  }
  const size_t insnCap = static_cast<size_t>(p.cfg.insnQueueDepth);
  const size_t tokenCap = static_cast<size_t>(p.cfg.depQueueDepth);
  std::deque<uint32_t> queues[3];
  std::deque<uint32_t> tokens[4];  // the instruction that pushed each token, oldest first
  int last[3] = {-1, -1, -1};
  size_t fetchPc = 0;
  auto blocked = [&](uint32_t i) {
    int q[2];
    int k = popsOf(prog[i], q);
    for (int j = 0; j < k; ++j)
      if (tokens[q[j]].empty()) return true;
    k = pushesOf(prog[i], q);
    for (int j = 0; j < k; ++j)
      if (tokens[q[j]].size() >= tokenCap) return true;
    return false;
  };
  auto issue = [&](uint32_t i) {
    const int s = stage_[i];
    Clock c = last[s] >= 0 ? done[last[s]] : Clock{0, 0, 0};
    int q[2];
    int k = popsOf(prog[i], q);
    for (int j = 0; j < k; ++j) {
      const Clock& d = done[tokens[q[j]].front()];
      tokens[q[j]].pop_front();
      for (int t = 0; t < 3; ++t) c[t] = std::max(c[t], d[t]);
    }
    start_[i] = c;
    c[s] = pos_[i] + 1;
    done[i] = c;
    k = pushesOf(prog[i], q);
    for (int j = 0; j < k; ++j) tokens[q[j]].push_back(i);
    last[s] = static_cast<int>(i);
  };
  // The stages run as far as tokens allow, FINISH only when nothing else can (as fsim does).
  for (;;) {
    bool moved = false;
    while (fetchPc < n && queues[stage_[fetchPc]].size() < insnCap) {
      queues[stage_[fetchPc]].push_back(static_cast<uint32_t>(fetchPc));
      ++fetchPc;
      moved = true;
    }
    for (int s : {0, 2, 1}) {
      auto& q = queues[s];
      while (!q.empty() && prog[q.front()].opcode != hw::Opcode::kFinish && !blocked(q.front())) {
        issue(q.front());
        q.pop_front();
        moved = true;
      }
    }
    if (moved) continue;
    auto& cq = queues[1];
    if (!cq.empty() && prog[cq.front()].opcode == hw::Opcode::kFinish && !blocked(cq.front())) {
      const uint32_t f = cq.front();
      cq.pop_front();
      issue(f);
      for (int t = 0; t < 4; ++t)
        if (!tokens[t].empty())
          throw Error("FINISH at instruction " + std::to_string(f),
                      std::to_string(tokens[t].size()) + " token(s) left on queue " +
                          hw::tokenQueueName(static_cast<hw::TokenQueue>(t)) + ", pushed first by " +
                          hw::insnName(tokens[t].front(), prog[tokens[t].front()]));
      for (int s = 0; s < 3; ++s)
        if (done[f][s] < count[s] || !queues[s].empty())
          throw Error("FINISH at instruction " + std::to_string(f),
                      std::string("does not wait for every ") + hw::stageName(static_cast<hw::Stage>(s)) +
                          " instruction through tokens; the device could signal done while one still runs");
      return;
    }
    uint32_t first = static_cast<uint32_t>(fetchPc);
    for (auto& q : queues)
      if (!q.empty()) first = std::min(first, q.front());
    throw Error("deadlock at instruction " + std::to_string(first),
                "no stage can make progress (a pop without a matching push, or a full queue)");
  }
}

void checkProgram(const Program& p) {
  if (p.regions.empty() || p.insnRegion().kind != RegionKind::kInsn)
    throw Error("program seed " + std::to_string(p.seed), "the last region must be the instruction region");
  // Regions: inside [page 1, 4 GiB), disjoint, page aligned but for the instruction stream, which
  // only needs whole instructions.
  for (size_t i = 0; i < p.regions.size(); ++i) {
    const Region& r = p.regions[i];
    const uint64_t align = r.kind == RegionKind::kInsn ? 16 : 4096;
    if (r.base % align || r.base < 4096 || r.end() > (uint64_t(1) << 32) || r.init.empty())
      throw Error("region " + r.name, "[" + hex(r.base) + ", " + hex(r.end()) + ") is empty, not " +
                                          (align == 16 ? "16-byte" : "page") + " aligned or not inside [0x1000, 4 GiB)");
    for (size_t j = 0; j < i; ++j)
      if (r.base < p.regions[j].end() && p.regions[j].base < r.end())
        throw Error("region " + r.name, "overlaps region " + p.regions[j].name);
  }
  // The stream: encodable, valid, FINISH exactly once and last, stored in the instruction region.
  hw::Isa isa(p.cfg);
  const auto& insns = p.insns;
  if (insns.empty() || insns.back().opcode != hw::Opcode::kFinish)
    throw Error("program seed " + std::to_string(p.seed), "the stream does not end with FINISH");
  if (p.insnRegion().init.size() != insns.size() * 16)
    throw Error("region " + p.insnRegion().name, "holds " + std::to_string(p.insnRegion().init.size()) +
                                                   " bytes for " + std::to_string(insns.size()) + " instructions");
  for (size_t i = 0; i < insns.size(); ++i) {
    if (insns[i].opcode == hw::Opcode::kFinish && i + 1 != insns.size())
      throw Error(hw::insnName(i, insns[i]), "FINISH before the end of the stream");
    isa.validate(insns[i], i);
    uint8_t bytes[16];
    hw::Isa::rawToBytes(isa.encode(insns[i], hw::insnName(i, insns[i])), bytes);
    if (!std::equal(bytes, bytes + 16, p.insnRegion().init.begin() + 16 * i))
      throw Error(hw::insnName(i, insns[i]), "the instruction region does not hold this instruction's encoding");
  }

  const std::vector<Accesses> acc = analyze(p, insns);
  const HappensBefore order(p);

  // SRAM: reads see a write, and cross-stage accesses of an entry are ordered. All writers of a
  // buffer are in one stage (load: INP/WGT; compute: UOP/ACC), so writes are ordered among
  // themselves by program order.
  for (int b = 0; b < kBufCount; ++b) {
    struct Touch {
      uint32_t entry, insn;
      bool write;
    };
    std::vector<Touch> touches;
    for (uint32_t i = 0; i < acc.size(); ++i) {
      for (uint32_t e : acc[i].sramRead[b]) touches.push_back({e, i, false});
      for (uint32_t e : acc[i].sramWrite[b]) touches.push_back({e, i, true});
    }
    std::sort(touches.begin(), touches.end(), [](const Touch& x, const Touch& y) {
      return x.entry != y.entry ? x.entry < y.entry : x.insn < y.insn;
    });
    for (size_t lo = 0; lo < touches.size();) {
      size_t hi = lo;
      while (hi < touches.size() && touches[hi].entry == touches[lo].entry) ++hi;
      for (size_t r = lo; r < hi; ++r) {
        if (touches[r].write) continue;
        const uint32_t reader = touches[r].insn;
        bool seen = false;
        for (size_t w = lo; w < hi; ++w) {
          if (!touches[w].write || touches[w].insn == reader) continue;
          const uint32_t writer = touches[w].insn;
          if (order.before(writer, reader)) seen = true;
          else if (!order.before(reader, writer))
            throw Error(hw::insnName(reader, insns[reader]),
                        std::string("reads ") + kBufferNames[b] + " entry " + std::to_string(touches[r].entry) +
                            " while " + hw::insnName(writer, insns[writer]) +
                            " in another stage writes it, with no token ordering the two");
        }
        if (!seen)
          throw Error(hw::insnName(reader, insns[reader]),
                      std::string("reads ") + kBufferNames[b] + " entry " + std::to_string(touches[r].entry) +
                          " before any instruction wrote it (SRAM contents are undefined until written)");
      }
      lo = hi;
    }
  }

  // DRAM: stores never overlap; a store and a load of the same byte are ordered.
  std::vector<uint32_t> stores, loads;
  for (uint32_t i = 0; i < acc.size(); ++i) {
    if (!acc[i].dramWrite.empty()) stores.push_back(i);
    if (!acc[i].dramRead.empty()) loads.push_back(i);
  }
  for (size_t a = 0; a < stores.size(); ++a) {
    const uint32_t s = stores[a];
    for (size_t b = 0; b < a; ++b)
      if (overlap(acc[s].dramWrite, acc[stores[b]].dramWrite))
        throw Error(hw::insnName(s, insns[s]), "writes DRAM bytes that " + hw::insnName(stores[b], insns[stores[b]]) +
                                                " also writes (stores must not overlap)");
    for (uint32_t l : loads)
      if (overlap(acc[s].dramWrite, acc[l].dramRead) && !order.ordered(s, l))
        throw Error(hw::insnName(l, insns[l]), "reads DRAM bytes that " + hw::insnName(s, insns[s]) +
                                                " writes, with no token ordering the two");
  }
}

}  // namespace tessera::regress
