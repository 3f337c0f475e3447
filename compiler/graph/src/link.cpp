// Linking: each layer compiled by the operator compiler, relocated into its regions, and chained to the next through a carrier.
#include "link.h"

#include <algorithm>

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
using op::BufferRole;
using op::Operator;
using op::OperatorData;
using op::Program;
using op::ProgramBuffer;
using op::compile;
using op::formatSummary;
using op::printDumpBanner;

namespace {

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
      if (!isConcat(g.nodes[size_t(sp.nodes[li])])) {
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
      const Operator op = acceleratorOperator(g, n);
      const OperatorData data = acceleratorConstants(g, n);
      Program prog;
      try {
        prog = compile(cfg, op, data);
      } catch (const Error& e) {
        throw Error(g.origin, "node '" + n.name + "' (" + op.describe() + "): " + e.reason());
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
