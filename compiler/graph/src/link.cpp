// Linking: each layer compiled by the operator compiler, relocated into its regions, and chained to the next through a carrier.
#include "link.h"

#include <algorithm>

#include "tessera/compiler/op/dram_layout.h"

#include "passes.h"
#include "tessera/compiler/op/compile.h"
#include "tessera/compiler/op/print_after_all.h"
#include "tessera/support/error.h"

namespace tessera::compiler::graph::detail {

using hw::Insn;
using hw::MemId;
using hw::Opcode;
using ir::Graph;
using ir::Node;
using model::CompiledModel;
using model::LayerInfo;
using model::Segment;
using op::ActivationLayout;
using op::BufferRole;
using op::Operator;
using op::OperatorData;
using op::Program;
using op::ProgramBuffer;
using op::compile;
using op::formatSummary;
using op::printDumpBanner;

namespace {

const char* const kScatteredBufferPrefix = "scattered:";

// An upsample or dilate node reading a layer's output: the tensor it writes and where each entry goes.
struct ScatterTarget {
  std::string tensor;
  Scatter where;
};

// `prog` with its STOREs into "output" also writing each stored entry into every position it
// covers in each target's image (a buffer of its own per target, named kScatteredBufferPrefix +
// tensor), and without the original STOREs unless `keepOriginal`. A stored run of entries is cut
// at image rows; each piece becomes repeatY x repeatX STOREs whose DRAM rows are single entries
// stepX apart (or one contiguous row when stepX is 1). The replaced STORE's dependency pops go to
// the first instruction of its replacement and its pushes to the last, so the pipeline's token
// protocol is unchanged.
Program withScatteredStores(const Program& prog, const ActivationLayout& out, const std::vector<ScatterTarget>& targets,
                            bool keepOriginal) {
  Program p = prog;
  const int output = prog.bufferIndex("output");
  const uint32_t outputMem = prog.buffers[size_t(output)].memType;
  std::vector<int32_t> targetBuffer;
  for (const ScatterTarget& t : targets) {
    const ActivationLayout l{out.n, out.c, t.where.outH, t.where.outW, out.batch, out.block};
    ProgramBuffer b;
    b.name = kScatteredBufferPrefix + t.tensor;
    b.role = BufferRole::kOutput;
    b.memType = outputMem;
    b.bytes = l.bytes();
    b.layout = l.describe();
    targetBuffer.push_back(int32_t(p.buffers.size()));
    p.buffers.push_back(std::move(b));
  }
  p.insns.clear();
  p.insnBuffer.clear();
  const uint64_t planeEntries = uint64_t(out.h) * uint64_t(out.w);
  for (size_t i = 0; i < prog.insns.size(); ++i) {
    const Insn& in = prog.insns[i];
    if (in.opcode != Opcode::kStore || prog.insnBuffer[i] != output || in.isNop()) {
      p.insns.push_back(in);
      p.insnBuffer.push_back(prog.insnBuffer[i]);
      continue;
    }
    std::vector<std::pair<Insn, int32_t>> replacement;
    if (keepOriginal) replacement.push_back({in, output});
    for (size_t ti = 0; ti < targets.size(); ++ti) {
      const Scatter& sc = targets[ti].where;
      const uint64_t targetPlane = uint64_t(sc.outH) * uint64_t(sc.outW);
      for (uint32_t r = 0; r < in.ySize; ++r) {
        uint64_t entry = uint64_t(in.dramBase) + uint64_t(r) * in.xStride, sram = uint64_t(in.sramBase) + uint64_t(r) * in.xSize;
        for (uint64_t left = in.xSize; left > 0;) {
          const uint64_t plane = entry / planeEntries, y = entry % planeEntries / uint64_t(out.w),
                         x = entry % uint64_t(out.w);
          const uint64_t run = std::min<uint64_t>(left, uint64_t(out.w) - x);
          for (int dy = 0; dy < sc.repeatY; ++dy)
            for (int dx = 0; dx < sc.repeatX; ++dx) {
              Insn s = in;
              s.sramBase = uint32_t(sram);
              s.dramBase = uint32_t(plane * targetPlane +
                                    (uint64_t(sc.offsetY) + y * uint64_t(sc.stepY) + uint64_t(dy)) * uint64_t(sc.outW) +
                                    uint64_t(sc.offsetX) + x * uint64_t(sc.stepX) + uint64_t(dx));
              if (sc.stepX == 1) {
                s.ySize = 1, s.xSize = uint32_t(run), s.xStride = uint32_t(run);
              } else {
                s.ySize = uint32_t(run), s.xSize = 1, s.xStride = uint32_t(sc.stepX);
              }
              replacement.push_back({s, targetBuffer[ti]});
            }
          entry += run, sram += run, left -= run;
        }
      }
    }
    if (replacement.empty()) throw Error("link", "a STORE of '" + prog.op.name + "' has nothing to write");
    for (auto& r : replacement) r.first.popPrev = r.first.popNext = r.first.pushPrev = r.first.pushNext = false;
    replacement.front().first.popPrev = in.popPrev;
    replacement.front().first.popNext = in.popNext;
    replacement.back().first.pushPrev = in.pushPrev;
    replacement.back().first.pushNext = in.pushNext;
    for (const auto& [insn, buffer] : replacement) {
      p.insns.push_back(insn);
      p.insnBuffer.push_back(buffer);
    }
  }
  return p;
}

// Appends one compiled layer to its segment's stream: constants into the model's image, activation
// buffers relocated into their slots, and the FINISH of every layer but the last a carrier.
void linkLayer(const hw::Config& cfg, const Graph& g, const DramPlan& plan, CompiledModel& m, size_t si, Segment& seg,
               const Node& n, const Operator& op, const Program& prog, bool first, bool last, int layer) {
  LayerInfo info;
  info.name = n.name;
  info.kind = n.opType;
  info.onAccelerator = true;
  info.segment = int(si);
  info.macs = n.has("logical_macs") ? uint64_t(n.attrInt("logical_macs", 0)) : op.macs();
  info.paddedMacs = prog.summary.paddedMacs;
  info.dramReadBytes = prog.dramReadBytes(cfg);
  info.dramWriteBytes = prog.dramWriteBytes(cfg);
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
      const uint64_t at = alignUp(m.constantImage.size(), plan.alignment);
      m.constantImage.resize(at, 0);
      m.constantImage.insert(m.constantImage.end(), pb.data.begin(), pb.data.end());
      m.constantImage.resize(at + std::max<uint64_t>(pb.bytes, pb.data.size()), 0);
      where[b] = {0, at};
      info.constants.push_back({pb.name, pb.memType, at, pb.data.size()});
      continue;
    }
    std::string tensor;
    int block = cfg.blockOut;
    if (pb.name == "input") tensor = n.inputs[0], block = inputBlock(cfg, n);
    else if (pb.name == "input2") tensor = secondOperand(n), block = cfg.blockOut;
    else if (pb.name == "output") tensor = n.outputs[0];
    else if (pb.name.rfind(kScatteredBufferPrefix, 0) == 0) tensor = pb.name.substr(std::string(kScatteredBufferPrefix).size());
    else throw Error(g.origin, "node '" + n.name + "': unexpected program buffer '" + pb.name + "'");
    const Slot& s = plan.slot(si, tensor, block);
    if (s.bytes != pb.bytes)
      throw Error(g.origin, "node '" + n.name + "': buffer '" + pb.name + "' is " + std::to_string(pb.bytes) +
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
      const uint64_t elem = uint64_t(cfg.dramElemBytes(static_cast<MemId>(in.memType)));
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
  m.layers[size_t(layer)] = info;
}

// A concat's row in the layer table: no instructions and no DRAM traffic of its own (its producers
// stored into its slices).
void linkConcat(const hw::Config& cfg, const DramPlan& plan, CompiledModel& m, size_t si, Segment& seg, const Node& n,
                int layer) {
  LayerInfo info;
  info.name = n.name;
  info.kind = n.opType;
  info.onAccelerator = true;
  info.segment = int(si);
  const Slot& out = plan.slot(si, n.outputs[0], cfg.blockOut);
  std::string detail = "copy-free: ";
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Slot& in = plan.slot(si, n.inputs[i], cfg.blockOut);
    detail += (i ? ", " : "") + in.tensor + " [" + std::to_string(in.c) + " channels] at byte " +
              std::to_string(in.offset - out.offset);
    info.tensors.push_back(n.inputs[i]);
  }
  info.detail = detail + " of " + out.tensor + " [" + std::to_string(out.c) + " channels]";
  info.tensors.push_back(n.outputs[0]);
  info.insnBegin = info.insnEnd = uint32_t(seg.insns.size());
  seg.layers.push_back(layer);
  m.layers[size_t(layer)] = info;
}

// An upsample's or dilate's row in the layer table: no instructions of its own (its input's
// producer stored into its slot).
void linkScatter(const Graph& g, CompiledModel& m, size_t si, Segment& seg, const Node& n, int layer) {
  const Scatter sc = scatterOf(g, n);
  LayerInfo info;
  info.name = n.name;
  info.kind = n.opType;
  info.onAccelerator = true;
  info.segment = int(si);
  info.spec = n.attrs.at("spec").s;
  const int producer = g.producer(n.inputs.at(0));
  const std::string by = "stored by '" + (producer >= 0 ? g.nodes[size_t(producer)].name : std::string("?")) + "'";
  info.detail = isUpsample(n) ? "copy-free: nearest x" + std::to_string(sc.stepY) + "x" + std::to_string(sc.stepX) + ", " + by +
                                    " into every position it covers"
                              : "copy-free: pixels " + std::to_string(sc.stepY) + "x" + std::to_string(sc.stepX) +
                                    " apart in a " + std::to_string(sc.outH) + "x" + std::to_string(sc.outW) +
                                    " image of zeros, " + by;
  info.tensors = {n.inputs[0], n.outputs.at(0)};
  info.insnBegin = info.insnEnd = uint32_t(seg.insns.size());
  seg.layers.push_back(layer);
  m.layers[size_t(layer)] = info;
}

}  // namespace

void link(const hw::Config& cfg, const Graph& g, const Partition& p, const DramPlan& plan, CompiledModel& m,
          std::ostream* printAfterAll) {
  for (size_t si = 0; si < p.segments.size(); ++si) {
    Segment& seg = m.segments[si];
    auto inputs = plan.inputsOf.find(si), outputs = plan.outputsOf.find(si);
    if (inputs != plan.inputsOf.end())
      for (const std::string& k : inputs->second) seg.inputs.push_back(plan.slots.at(k));
    if (outputs != plan.outputsOf.end())
      for (const std::string& k : outputs->second) seg.outputs.push_back(plan.slots.at(k));
    const SegmentPlan& sp = p.segments[si];
    // A concat has no instructions: the layers around it link to each other.
    size_t firstCode = sp.nodes.size(), lastCode = 0;
    for (size_t li = 0; li < sp.nodes.size(); ++li)
      if (!hasNoCode(g.nodes[size_t(sp.nodes[li])])) {
        firstCode = std::min(firstCode, li);
        lastCode = li;
      }
    if (firstCode == sp.nodes.size())
      throw Error(g.origin, "accelerator segment " + std::to_string(si) + " has only concatenations, nothing to run");
    for (size_t li = 0; li < sp.nodes.size(); ++li) {
      const Node& n = g.nodes[size_t(sp.nodes[li])];
      if (isConcat(n)) {
        linkConcat(cfg, plan, m, si, seg, n, p.layerOfNode.at(sp.nodes[li]));
        continue;
      }
      if (isUpsample(n) || isDilate(n)) {
        linkScatter(g, m, si, seg, n, p.layerOfNode.at(sp.nodes[li]));
        continue;
      }
      const Operator op = acceleratorOperator(g, n);
      const OperatorData data = acceleratorConstants(g, n);
      Program prog;
      try {
        prog = compile(cfg, op, data);
      } catch (const Error& e) {
        throw Error(g.origin, "node '" + n.name + "' (" + op.describe() + "): " + e.reason());
      }
      // Upsamples and dilates reading this layer's output: its STOREs write their slots too (or instead).
      std::vector<ScatterTarget> upsamples;
      bool keepOriginal = std::find(g.outputs.begin(), g.outputs.end(), n.outputs[0]) != g.outputs.end();
      for (int c : g.consumers(n.outputs[0])) {
        const Node& cn = g.nodes[size_t(c)];
        const bool inSegment = std::find(sp.nodes.begin(), sp.nodes.end(), c) != sp.nodes.end();
        if ((isUpsample(cn) || isDilate(cn)) && inSegment) {
          upsamples.push_back({cn.outputs.at(0), scatterOf(g, cn)});
        } else {
          keepOriginal = true;
        }
      }
      if (!upsamples.empty()) {
        const Slot& s = plan.slot(si, n.outputs[0], cfg.blockOut);
        prog = withScatteredStores(prog, ActivationLayout{s.n, s.c, s.h, s.w, cfg.batch, cfg.blockOut}, upsamples,
                                   keepOriginal);
      }
      if (printAfterAll) {
        printDumpBanner(*printAfterAll, "lowering '" + n.name + "': " + op.describe());
        *printAfterAll << formatSummary(cfg, prog);
      }
      linkLayer(cfg, g, plan, m, si, seg, n, op, prog, li == firstCode, li == lastCode, p.layerOfNode.at(sp.nodes[li]));
    }
  }
}

}  // namespace tessera::compiler::graph::detail
