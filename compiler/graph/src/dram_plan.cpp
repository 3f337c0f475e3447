// DRAM planning: a slot per activation and channel block, liveness in layer times, first fit by address in one arena.
#include "dram_plan.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

#include "tessera/compiler/op/dram_layout.h"
#include "passes.h"
#include "tessera/compiler/op/print_after_all.h"
#include "tessera/support/error.h"

namespace tessera::compiler::graph::detail {

using hw::MemId;
using ir::Graph;
using ir::Node;
using ir::Tensor;
using model::CompiledModel;
using op::ActivationLayout;
using op::printDumpBanner;

namespace {

// The NCHW extents of a tensor an operator reads or writes (a dense layer's [N,C] is [N,C,1,1]).
void extents(const Tensor& t, int* n, int* c, int* h, int* w) {
  *n = *c = *h = *w = 1;
  if (t.shape.size() >= 1) *n = int(t.shape[0]);
  if (t.shape.size() >= 2) *c = int(t.shape[1]);
  if (t.shape.size() >= 3) *h = int(t.shape[2]);
  if (t.shape.size() >= 4) *w = int(t.shape[3]);
}

void initSlot(const hw::Config& cfg, const Graph& g, Slot& s, const std::string& t, int block) {
  const Tensor& x = g.tensor(t);
  s.tensor = t;
  s.block = block;
  s.shape = x.shape;
  extents(x, &s.n, &s.c, &s.h, &s.w);
  s.bytes = ActivationLayout{s.n, s.c, s.h, s.w, cfg.batch, block}.bytes();
}

}  // namespace

std::string slotKey(size_t segment, const std::string& tensor, int block) {
  return std::to_string(segment) + "/" + tensor + "@" + std::to_string(block);
}

const Slot& DramPlan::slot(size_t segment, const std::string& tensor, int block) const {
  return slots.at(slotKey(segment, tensor, block));
}

uint64_t regionAlignment(const hw::Config& cfg) {
  uint64_t l = 64;
  for (int m = 0; m <= static_cast<int>(MemId::kAcc8); ++m) {
    const uint64_t e = uint64_t(cfg.dramElemBytes(static_cast<MemId>(m)));
    if (e) l = std::lcm(l, e);
  }
  return l;
}

uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

DramPlan planDram(const hw::Config& cfg, const Graph& g, const Partition& p, CompiledModel& m,
                  std::ostream* printAfterAll) {
  DramPlan plan;
  plan.alignment = regionAlignment(cfg);
  std::vector<std::string> alwaysLive;
  for (size_t si = 0; si < p.segments.size(); ++si) {
    const SegmentPlan& seg = p.segments[si];
    const int first = p.nodeTime.at(seg.nodes.front()), last = p.nodeTime.at(seg.nodes.back());
    std::set<std::string> produced;
    for (int ni : seg.nodes) {
      const Node& n = g.nodes[size_t(ni)];
      for (const auto& [t, block] : activationInputs(cfg, n)) {
        Slot& s = plan.slots[slotKey(si, t, block)];
        if (!produced.count(t) && s.bytes == 0) {
          initSlot(cfg, g, s, t, block);
          s.start = first;
          plan.inputsOf[si].push_back(slotKey(si, t, block));
        }
        s.end = std::max(s.end, p.nodeTime.at(ni));
      }
      const std::string& out = n.outputs[0];
      Slot& s = plan.slots[slotKey(si, out, cfg.blockOut)];
      initSlot(cfg, g, s, out, cfg.blockOut);
      s.start = s.end = p.nodeTime.at(ni);
      produced.insert(out);
      if (isScatter(n)) {
        // Its input's producer stores into it (link.cpp), so it lives from that layer on.
        if (!produced.count(n.inputs.at(0)))
          throw Error(g.origin, n.opType + " '" + n.name + "': its input '" + n.inputs[0] +
                                    "' is not produced in its accelerator segment");
        s.start = std::min(s.start, plan.slots.at(slotKey(si, n.inputs[0], cfg.blockOut)).start);
        // A dilate's zeros are never stored: they are the zeroed arena's, so nothing else may
        // ever use its bytes.
        if (scatterOf(g, n).needsZeros()) alwaysLive.push_back(slotKey(si, out, cfg.blockOut));
      }
      if (isConcat(n)) {
        // The output lives from its first slice's producer on; the slices follow one another. An
        // earlier concat of the segment whose inputs begin this one's (DenseNet's growing
        // concatenations) is itself the first slice, so every concat of the chain is a prefix of
        // one buffer and each input is stored once.
        uint64_t at = 0;
        size_t covered = 0;
        const Node* prefix = nullptr;
        for (int pi : seg.nodes) {
          if (pi == ni) break;
          const Node& c = g.nodes[size_t(pi)];
          if (isConcat(c) && c.inputs.size() < n.inputs.size() && c.inputs.size() > covered &&
              std::equal(c.inputs.begin(), c.inputs.end(), n.inputs.begin())) {
            prefix = &c;
            covered = c.inputs.size();
          }
        }
        if (prefix) {
          const std::string key = slotKey(si, prefix->outputs[0], cfg.blockOut);
          const Slot& in = plan.slots.at(key);
          s.start = std::min(s.start, in.start);
          plan.aliasOf[key] = {slotKey(si, out, cfg.blockOut), 0};
          at = in.bytes;
        }
        for (size_t k = covered; k < n.inputs.size(); ++k) {
          const std::string& t = n.inputs[k];
          const std::string key = slotKey(si, t, cfg.blockOut);
          const Slot& in = plan.slots.at(key);
          s.start = std::min(s.start, in.start);
          plan.aliasOf[key] = {slotKey(si, out, cfg.blockOut), at};
          at += in.bytes;
        }
        if (at != s.bytes)
          throw Error(g.origin, "concat '" + n.name + "': its inputs' " + std::to_string(at) + " bytes do not fill its " +
                                    std::to_string(s.bytes) + "-byte output");
      }
    }
    // Outputs: read by a later step or the caller, so they live to the segment's end.
    for (const std::string& t : produced) {
      bool usedOutside = std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end();
      for (int c : g.consumers(t))
        if (std::find(seg.nodes.begin(), seg.nodes.end(), c) == seg.nodes.end()) usedOutside = true;
      if (!usedOutside) continue;
      Slot& s = plan.slots[slotKey(si, t, cfg.blockOut)];
      s.end = last;
      plan.outputsOf[si].push_back(slotKey(si, t, cfg.blockOut));
    }
  }
  // A slice read after its concat's last reader (an earlier concat of a chain, read by its own
  // consumer) keeps the buffer alive: the buffer lives as long as anything in it.
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [key, to] : plan.aliasOf) {
      Slot& outer = plan.slots.at(to.first);
      const Slot& inner = plan.slots.at(key);
      if (inner.end > outer.end || inner.start < outer.start) {
        outer.end = std::max(outer.end, inner.end);
        outer.start = std::min(outer.start, inner.start);
        changed = true;
      }
    }
  }
  for (const std::string& key : alwaysLive) {
    plan.slots.at(key).start = std::numeric_limits<int>::min();
    plan.slots.at(key).end = std::numeric_limits<int>::max();
  }
  // First fit by address among slots whose lifetimes overlap.
  std::vector<Slot*> order;
  for (auto& kv : plan.slots)
    if (!plan.aliasOf.count(kv.first)) order.push_back(&kv.second);
  std::sort(order.begin(), order.end(), [](const Slot* a, const Slot* b) {
    return a->start != b->start ? a->start < b->start : a->tensor < b->tensor;
  });
  std::vector<Slot*> placed;
  uint64_t top = 0, noReuse = 0;
  for (Slot* s : order) {
    const uint64_t size = alignUp(s->bytes, plan.alignment);
    noReuse += size;
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (Slot* q : placed)
      if (q->start <= s->end && s->start <= q->end) busy.push_back({q->offset, q->offset + alignUp(q->bytes, plan.alignment)});
    std::sort(busy.begin(), busy.end());
    uint64_t at = 0;
    for (auto& b : busy) {
      if (at + size <= b.first) break;
      at = std::max(at, b.second);
    }
    s->offset = at;
    top = std::max(top, at + size);
    placed.push_back(s);
  }
  // Slices take their place in their concat's output (which may itself be a slice).
  std::function<uint64_t(const std::string&)> offsetOf = [&](const std::string& key) -> uint64_t {
    auto a = plan.aliasOf.find(key);
    return a == plan.aliasOf.end() ? plan.slots.at(key).offset : offsetOf(a->second.first) + a->second.second;
  };
  for (const auto& [key, to] : plan.aliasOf) plan.slots.at(key).offset = offsetOf(key);
  m.arenaBytes = top;
  m.arenaBytesWithoutReuse = noReuse;
  if (printAfterAll) {
    std::ostream& os = *printAfterAll;
    printDumpBanner(os, "DRAM planning");
    for (const auto& [key, to] : plan.aliasOf) {
      const Slot& a = plan.slots.at(key);
      os << "  [" << a.offset << ", " << a.offset + a.bytes << ") " << a.tensor << ": channels of concat output "
         << plan.slots.at(to.first).tensor << " from byte " << to.second << " (no copy)\n";
    }
    for (Slot* s : order)
      os << "  [" << s->offset << ", " << s->offset + s->bytes << ") " << s->tensor << " NCHW" << cfg.batch << "n"
         << s->block << "c " << s->n << "x" << s->c << "x" << s->h << "x" << s->w << ", live in layers " << s->start
         << ".." << s->end << "\n";
    os << "  activation arena " << top << " bytes (" << noReuse << " without reuse)\n";
  }
  return plan;
}

}  // namespace tessera::compiler::graph::detail
