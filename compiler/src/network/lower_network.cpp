// The graph compiler's driver: passes, partitioning into segments, DRAM planning, lowering and linking.
#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>

#include "passes.h"
#include "tessera/compiler/compile.h"
#include "tessera/compiler/host_ops.h"
#include "tessera/compiler/layout.h"
#include "tessera/compiler/network.h"
#include "tessera/support/error.h"

namespace tessera::compiler {

using graph::Graph;
using graph::Node;
using graph::Tensor;
using hw::Insn;
using hw::MemId;
using hw::Opcode;

namespace {

void dump(const NetworkOptions& o, const char* pass, const Graph& g) {
  if (!o.printAfterAll) return;
  *o.printAfterAll << "*** IR dump after " << pass << " ***\n" << g.print() << "\n";
}

// Every DRAM element size of the config divides this, so a region offset that is a multiple of it
// is a whole number of elements for any instruction.
uint64_t regionAlignment(const hw::Config& cfg) {
  uint64_t l = 64;
  for (int m = 0; m <= static_cast<int>(MemId::kAcc8); ++m) {
    const uint64_t e = uint64_t(cfg.dramElemBytes(static_cast<MemId>(m)));
    if (e) l = std::lcm(l, e);
  }
  return l;
}

uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

struct Slot {
  std::string tensor;
  int block = 0;
  int n = 1, c = 1, h = 1, w = 1;
  uint64_t bytes = 0;
  int start = 0, end = 0;  // layer times (inclusive)
  uint64_t offset = 0;
  std::vector<int64_t> shape;
};

// The NCHW extents of a tensor an operator reads or writes (a dense layer's [N,C] is [N,C,1,1]).
void extents(const Tensor& t, int* n, int* c, int* h, int* w) {
  *n = *c = *h = *w = 1;
  if (t.shape.size() >= 1) *n = int(t.shape[0]);
  if (t.shape.size() >= 2) *c = int(t.shape[1]);
  if (t.shape.size() >= 3) *h = int(t.shape[2]);
  if (t.shape.size() >= 4) *w = int(t.shape[3]);
}

struct SegmentPlan {
  std::vector<int> nodes;  // graph node indices
};

class Linker {
 public:
  Linker(const hw::Config& cfg, const Graph& g, CompiledModel& m, const NetworkOptions& o)
      : cfg_(cfg), g_(g), m_(m), o_(o), align_(regionAlignment(cfg)) {}

  void run() {
    partition();
    planMemory();
    lower();
  }

 private:
  bool readsInputBlocks(const Node& n) const { return n.opType == "conv2d" || n.opType == "dense"; }
  int inputBlock(const Node& n) const { return readsInputBlocks(n) ? cfg_.blockIn : cfg_.blockOut; }
  // A layer's second activation operand (add's b, a fused residual add's residual), or "": it is in
  // the accumulator's 8-bit layout, BLOCK_OUT channels a block.
  static const std::string& secondOperand(const Node& n) {
    static const std::string none;
    if (n.opType == "add") return n.inputs.at(1);
    if (readsResidual(n)) return n.inputs[7];
    return none;
  }
  static bool readsResidual(const Node& n) {
    return (n.opType == "conv2d" || n.opType == "dense") && n.inputs.size() > 7 && !n.inputs[7].empty();
  }
  // The activations a layer reads, each with the channel block of its layout.
  std::vector<std::pair<std::string, int>> activationInputs(const Node& n) const {
    std::vector<std::pair<std::string, int>> in = {{n.inputs.at(0), inputBlock(n)}};
    if (!secondOperand(n).empty()) in.push_back({secondOperand(n), cfg_.blockOut});
    return in;
  }

  void partition() {
    std::set<std::string> producedInSegment;
    int layerTime = 0;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (detail::isAccelerator(n)) {
        // A convolution reading another accelerator output needs BLOCK_IN == BLOCK_OUT to share
        // its DRAM layout; otherwise the host repacks it between two segments.
        bool chains = !current_.nodes.empty();
        if (chains && readsInputBlocks(n) && cfg_.blockIn != cfg_.blockOut && producedInSegment.count(n.inputs[0]))
          chains = false;
        if (!chains) closeSegment(producedInSegment);
        current_.nodes.push_back(int(i));
        // The table lists layers in execution order; lowering fills this row in.
        layerOfNode_[int(i)] = int(m_.layers.size());
        m_.layers.emplace_back();
        for (const std::string& o : n.outputs) producedInSegment.insert(o);
      } else {
        closeSegment(producedInSegment);
        Step s;
        s.kind = Step::Kind::kHost;
        s.index = int(m_.hostSteps.size());
        m_.hostSteps.push_back({n});
        LayerInfo info;
        info.name = n.name;
        info.kind = n.opType;
        info.detail = n.label(g_.opset);
        s.layer = int(m_.layers.size());
        m_.layers.push_back(info);
        m_.steps.push_back(s);
        for (const std::string& in : n.inputs)
          if (!in.empty() && g_.tensor(in).isConstant) m_.constants[in] = g_.tensor(in);
      }
      nodeTime_[int(i)] = layerTime++;
    }
    closeSegment(producedInSegment);
    if (o_.printAfterAll) {
      std::ostream& os = *o_.printAfterAll;
      os << "*** IR dump after partitioning ***\n";
      for (const Step& s : m_.steps) {
        if (s.kind == Step::Kind::kHost) {
          os << "host: " << m_.hostSteps[size_t(s.index)].node.label(g_.opset) << "\n";
          continue;
        }
        os << "accelerator segment " << s.index << " (one instruction stream):\n";
        for (int ni : plans_[size_t(s.index)].nodes) os << "  " << g_.nodes[size_t(ni)].opType << " '" << g_.nodes[size_t(ni)].name << "'\n";
      }
      os << "\n";
    }
  }

  void closeSegment(std::set<std::string>& produced) {
    produced.clear();
    if (current_.nodes.empty()) return;
    Step s;
    s.kind = Step::Kind::kSegment;
    s.index = int(plans_.size());
    plans_.push_back(current_);
    m_.segments.emplace_back();
    m_.steps.push_back(s);
    current_ = SegmentPlan();
  }

  // Slots: each activation a segment touches, per channel block; liveness in layer times.
  void planMemory() {
    for (size_t si = 0; si < plans_.size(); ++si) {
      const SegmentPlan& p = plans_[si];
      const int first = nodeTime_.at(p.nodes.front()), last = nodeTime_.at(p.nodes.back());
      std::set<std::string> produced;
      for (int ni : p.nodes) {
        const Node& n = g_.nodes[size_t(ni)];
        for (const auto& [t, block] : activationInputs(n)) {
          Slot& s = slot(si, t, block);
          if (!produced.count(t) && s.bytes == 0) {
            initSlot(s, t, block);
            s.start = first;
            inputsOf_[si].push_back(key(si, t, block));
          }
          s.end = std::max(s.end, nodeTime_.at(ni));
        }
        const std::string& out = n.outputs[0];
        Slot& s = slot(si, out, cfg_.blockOut);
        initSlot(s, out, cfg_.blockOut);
        s.start = s.end = nodeTime_.at(ni);
        produced.insert(out);
      }
      // Outputs: read by a later step or the caller, so they live to the segment's end.
      for (const std::string& t : produced) {
        bool usedOutside = std::find(g_.outputs.begin(), g_.outputs.end(), t) != g_.outputs.end();
        for (int c : g_.consumers(t))
          if (std::find(p.nodes.begin(), p.nodes.end(), c) == p.nodes.end()) usedOutside = true;
        if (!usedOutside) continue;
        Slot& s = slot(si, t, cfg_.blockOut);
        s.end = last;
        outputsOf_[si].push_back(key(si, t, cfg_.blockOut));
      }
    }
    // First fit by address among slots whose lifetimes overlap.
    std::vector<Slot*> order;
    for (auto& kv : slots_) order.push_back(&kv.second);
    std::sort(order.begin(), order.end(), [](const Slot* a, const Slot* b) {
      return a->start != b->start ? a->start < b->start : a->tensor < b->tensor;
    });
    std::vector<Slot*> placed;
    uint64_t top = 0, noReuse = 0;
    for (Slot* s : order) {
      const uint64_t size = alignUp(s->bytes, align_);
      noReuse += size;
      std::vector<std::pair<uint64_t, uint64_t>> busy;
      for (Slot* p : placed)
        if (p->start <= s->end && s->start <= p->end) busy.push_back({p->offset, p->offset + alignUp(p->bytes, align_)});
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
    m_.arenaBytes = top;
    m_.arenaBytesWithoutReuse = noReuse;
    if (o_.printAfterAll) {
      std::ostream& os = *o_.printAfterAll;
      os << "*** IR dump after DRAM planning ***\n";
      for (Slot* s : order)
        os << "  [" << s->offset << ", " << s->offset + s->bytes << ") " << s->tensor << " NCHW" << cfg_.batch << "n"
           << s->block << "c " << s->n << "x" << s->c << "x" << s->h << "x" << s->w << ", live in layers " << s->start
           << ".." << s->end << "\n";
      os << "  activation arena " << top << " bytes (" << noReuse << " without reuse)\n\n";
    }
  }

  std::string key(size_t seg, const std::string& t, int block) const {
    return std::to_string(seg) + "/" + t + "@" + std::to_string(block);
  }
  Slot& slot(size_t seg, const std::string& t, int block) { return slots_[key(seg, t, block)]; }
  void initSlot(Slot& s, const std::string& t, int block) {
    const Tensor& x = g_.tensor(t);
    s.tensor = t;
    s.block = block;
    s.shape = x.shape;
    extents(x, &s.n, &s.c, &s.h, &s.w);
    ActivationLayout l;
    l.n = s.n;
    l.c = s.c;
    l.h = s.h;
    l.w = s.w;
    l.batch = cfg_.batch;
    l.block = block;
    s.bytes = l.bytes();
  }

  SegmentTensor describe(const Slot& s) const {
    SegmentTensor t;
    t.tensor = s.tensor;
    t.offset = s.offset;
    t.n = s.n;
    t.c = s.c;
    t.h = s.h;
    t.w = s.w;
    t.block = s.block;
    t.bytes = s.bytes;
    t.shape = s.shape;
    return t;
  }

  void lower() {
    for (size_t si = 0; si < plans_.size(); ++si) {
      Segment& seg = m_.segments[si];
      for (const std::string& k : inputsOf_[si]) seg.inputs.push_back(describe(slots_.at(k)));
      for (const std::string& k : outputsOf_[si]) seg.outputs.push_back(describe(slots_.at(k)));
      const SegmentPlan& p = plans_[si];
      for (size_t li = 0; li < p.nodes.size(); ++li) {
        const Node& n = g_.nodes[size_t(p.nodes[li])];
        const Operator op = detail::acceleratorOperator(g_, n);
        const OperatorData data = detail::acceleratorConstants(g_, n);
        Program prog;
        try {
          prog = compile(cfg_, op, data);
        } catch (const Error& e) {
          throw Error(g_.origin, "node '" + n.name + "' (" + op.describe() + "): " + e.reason());
        }
        if (o_.printAfterAll) *o_.printAfterAll << "*** lowered '" << n.name << "': " << op.describe() << " ***\n"
                                                 << formatSummary(cfg_, prog) << "\n";
        link(si, seg, n, op, prog, li == 0, li + 1 == p.nodes.size(), layerOfNode_.at(p.nodes[li]));
      }
    }
  }

  void link(size_t si, Segment& seg, const Node& n, const Operator& op, const Program& prog, bool first, bool last,
            int layer) {
    LayerInfo info;
    info.name = n.name;
    info.kind = n.opType;
    info.onAccelerator = true;
    info.segment = int(si);
    info.macs = n.has("logical_macs") ? uint64_t(n.attrInt("logical_macs", 0)) : op.macs();
    info.paddedMacs = prog.summary.paddedMacs;
    info.dramReadBytes = prog.dramReadBytes(cfg_);
    info.dramWriteBytes = prog.dramWriteBytes(cfg_);
    info.estimatedCycles = prog.summary.estimatedCycles;
    info.detail = op.describe();
    info.spec = op.spec();
    info.tensors.push_back(n.inputs[0]);
    if (!secondOperand(n).empty()) info.tensors.push_back(secondOperand(n));
    info.tensors.push_back(n.outputs[0]);
    info.insnBegin = uint32_t(seg.insns.size());
    // Region and byte offset of each program buffer.
    std::vector<std::pair<int, uint64_t>> where(prog.buffers.size());
    for (size_t b = 0; b < prog.buffers.size(); ++b) {
      const ProgramBuffer& pb = prog.buffers[b];
      if (pb.role == BufferRole::kConstant) {
        const uint64_t at = alignUp(m_.constantImage.size(), align_);
        m_.constantImage.resize(at, 0);
        m_.constantImage.insert(m_.constantImage.end(), pb.data.begin(), pb.data.end());
        m_.constantImage.resize(at + std::max<uint64_t>(pb.bytes, pb.data.size()), 0);
        where[b] = {0, at};
        info.constants.push_back({pb.name, pb.memType, at, pb.data.size()});
        continue;
      }
      std::string tensor;
      int block = cfg_.blockOut;
      if (pb.name == "input") tensor = n.inputs[0], block = inputBlock(n);
      else if (pb.name == "input2") tensor = secondOperand(n), block = cfg_.blockOut;
      else if (pb.name == "output") tensor = n.outputs[0];
      else throw Error(g_.origin, "node '" + n.name + "': unexpected program buffer '" + pb.name + "'");
      const Slot& s = slots_.at(key(si, tensor, block));
      if (s.bytes != pb.bytes)
        throw Error(g_.origin, "node '" + n.name + "': buffer '" + pb.name + "' is " + std::to_string(pb.bytes) +
                                   " bytes, its tensor's slot " + std::to_string(s.bytes));
      where[b] = {1, s.offset};
    }
    // The previous layer's last compute step pushed a token to load: wait for it, so this layer's
    // loads see every store of the previous one and never overwrite buffers it still reads.
    if (!first) {
      Insn carrier;
      carrier.opcode = Opcode::kLoad;
      carrier.memType = static_cast<uint32_t>(MemId::kInp);
      carrier.popNext = true;
      seg.insns.push_back(carrier);
      seg.insnRegion.push_back(-1);
    }
    for (size_t i = 0; i < prog.insns.size(); ++i) {
      Insn in = prog.insns[i];
      int8_t region = -1;
      if (prog.insnBuffer[i] >= 0) {
        const auto& w = where[size_t(prog.insnBuffer[i])];
        const uint64_t elem = uint64_t(cfg_.dramElemBytes(static_cast<MemId>(in.memType)));
        in.dramBase = static_cast<uint32_t>(in.dramBase + w.second / elem);
        region = static_cast<int8_t>(w.first);
      }
      if (in.opcode == Opcode::kFinish && !last) {
        // FINISH's pops (the last load and store) stay; a compute carrier takes them and tells load.
        Insn carrier;
        carrier.opcode = Opcode::kLoad;
        carrier.memType = static_cast<uint32_t>(MemId::kUop);
        carrier.popPrev = in.popPrev;
        carrier.popNext = in.popNext;
        carrier.pushPrev = true;
        in = carrier;
      }
      seg.insns.push_back(in);
      seg.insnRegion.push_back(region);
    }
    info.insnEnd = uint32_t(seg.insns.size());
    seg.layers.push_back(layer);
    m_.layers[size_t(layer)] = info;
  }

  const hw::Config& cfg_;
  const Graph& g_;
  CompiledModel& m_;
  const NetworkOptions& o_;
  const uint64_t align_;
  SegmentPlan current_;
  std::vector<SegmentPlan> plans_;
  std::map<int, int> nodeTime_;
  std::map<int, int> layerOfNode_;
  std::map<std::string, Slot> slots_;
  std::map<size_t, std::vector<std::string>> inputsOf_, outputsOf_;
};

}  // namespace

CompiledModel compileNetwork(const hw::Config& cfg, Graph g, const NetworkOptions& options) {
  CompiledModel m;
  m.configJson = cfg.toJson();
  m.source = g.origin;
  m.opset = g.opset;
  m.metadata = g.metadata;
  for (const std::string& in : g.inputs) {
    Tensor t = g.tensor(in);
    t.floats.clear();
    t.ints.clear();
    m.inputs.push_back(t);
  }
  inferShapes(g);
  dump(options, "shape inference", g);
  for (const std::string& out : g.outputs) {
    Tensor t = g.tensor(out);
    t.floats.clear();
    t.ints.clear();
    m.outputs.push_back(t);
  }
  detail::foldConstants(g);
  dump(options, "constant folding", g);
  detail::foldBatchNorm(g);
  dump(options, "BatchNorm folding", g);
  std::string kind;
  const bool quantized = detail::recognizeQuantized(cfg, g, m.quantizationNotes, kind);
  dump(options, "QDQ recognition", g);
  if (quantized) {
    m.quantization = kind;
  } else if (options.calibration) {
    detail::quantizeFloat(cfg, g, *options.calibration);
    m.quantization = "post-training int8 (" + std::to_string(options.calibration->samples.size()) + " calibration samples)";
    dump(options, "quantization and fusion", g);
  } else {
    m.quantization = "float (host)";
  }
  if (options.foldNarrowInput) {
    detail::foldNarrowInputs(cfg, g);
    dump(options, "layout", g);
  }
  if (options.fuseResidualAdds && detail::fuseResidualAdds(g) > 0) dump(options, "residual fusion", g);
  Linker(cfg, g, m, options).run();
  // Outputs that folded to constants are answered from the model's constants.
  for (const std::string& out : g.outputs)
    if (g.tensor(out).isConstant) m.constants[out] = g.tensor(out);
  return m;
}

}  // namespace tessera::compiler
