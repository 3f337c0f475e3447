// Linking: each layer compiled by the operator compiler, relocated into its regions, and chained to the next through a carrier.
#include "link.h"

#include <algorithm>
#include <functional>

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

// A chain of scatter nodes from a layer's output: the tensor the last one writes and each one's
// movement, in order. Only the first may group channels into phases and only the last may repeat
// pixels (the quantizer forms no other chains), so each stage maps rows and columns affinely.
struct ScatterTarget {
  std::string tensor;
  std::vector<model::Scatter> stages;
};

// `prog` with its STOREs into "output" also writing each stored entry to where each target's chain
// of movements puts it (model/scatter.h; a buffer of its own per target, named
// kScatteredBufferPrefix + tensor), and without the original STOREs unless `keepOriginal`. A stored
// run of entries is cut at image rows; each piece becomes one STORE per repeated row and column
// (none where the row, or every column, falls outside an image on the way), whose DRAM rows are
// single entries apart by the product of the steps, or one contiguous row when that is 1. The
// replaced STORE's dependency pops go to the first instruction of its replacement and its pushes
// to the last (a zero-width STORE carries them if nothing is written), so the pipeline's token
// protocol is unchanged.
Program withScatteredStores(const Program& prog, const ActivationLayout& out, const std::vector<ScatterTarget>& targets,
                            bool keepOriginal, uint32_t maxXSize) {
  Program p = prog;
  const int output = prog.bufferIndex("output");
  const uint32_t outputMem = prog.buffers[size_t(output)].memType;
  std::vector<int32_t> targetBuffer;
  for (const ScatterTarget& t : targets) {
    const model::Scatter& first = t.stages.front();
    const model::Scatter& last = t.stages.back();
    if (out.c % first.phases() || (out.c / first.phases()) % out.block)
      throw Error("link", "'" + prog.op.name + "': its " + std::to_string(out.c) + " channels are not " +
                              std::to_string(first.phases()) + " groups of whole channel blocks");
    for (size_t k = 0; k < t.stages.size(); ++k)
      if ((k > 0 && t.stages[k].phases() != 1) || (k + 1 < t.stages.size() && (t.stages[k].repeatY != 1 || t.stages[k].repeatX != 1)))
        throw Error("link", "'" + prog.op.name + "': a chain of movements into '" + t.tensor + "' that stores cannot do");
    const ActivationLayout l{out.n, out.c / first.phases(), last.outH, last.outW, out.batch, out.block};
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
  const int64_t planeEntries = int64_t(out.h) * out.w, blocks = out.channelBlocks();
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
      const std::vector<model::Scatter>& stages = targets[ti].stages;
      const model::Scatter& last = stages.back();
      const int64_t groupBlocks = blocks / stages.front().phases();
      const int64_t targetPlane = int64_t(last.outH) * last.outW;
      for (uint32_t r = 0; r < in.ySize; ++r) {
        int64_t entry = int64_t(in.dramBase) + int64_t(r) * in.xStride, sram = int64_t(in.sramBase) + int64_t(r) * in.xSize;
        for (int64_t left = in.xSize; left > 0;) {
          const int64_t plane = entry / planeEntries, y = entry % planeEntries / out.w, x = entry % out.w;
          const int64_t run = std::min<int64_t>(left, out.w - x);
          const int64_t batchBlock = plane / blocks, block = plane % blocks;
          const int phase = int(block / groupBlocks);
          const int64_t toPlane = batchBlock * groupBlocks + block % groupBlocks;
          // Through every stage but the last (no repeats): the row, and columns x -> a*x + b
          // kept within [first, lastX].
          int64_t row = y, a = 1, b = 0, first = x, lastX = x + run - 1;
          bool inside = stages.front().lands(phase);
          for (size_t k = 0; k + 1 < stages.size() && inside; ++k) {
            const model::Scatter& sc = stages[k];
            const int ph = k == 0 ? phase : 0;
            row = sc.offsetYOf(ph) + row * sc.stepY;
            a *= sc.stepX;
            b = sc.offsetXOf(ph) + b * sc.stepX;
            while (first <= lastX && a * first + b < 0) ++first;
            while (lastX >= first && a * lastX + b >= sc.outW) --lastX;
            inside = row >= 0 && row < sc.outH && first <= lastX;
          }
          const int lastPhase = stages.size() == 1 ? phase : 0;
          for (int dy = 0; dy < last.repeatY && inside; ++dy) {
            const int64_t ty = last.offsetYOf(lastPhase) + row * last.stepY + dy;
            if (ty < 0 || ty >= last.outH) continue;
            for (int dx = 0; dx < last.repeatX; ++dx) {
              const int64_t fa = a * last.stepX, fb = last.offsetXOf(lastPhase) + b * last.stepX + dx;
              int64_t lo = first, hi = lastX;
              while (lo <= hi && fa * lo + fb < 0) ++lo;
              while (hi >= lo && fa * hi + fb >= last.outW) --hi;
              if (lo > hi) continue;
              Insn s = in;
              s.sramBase = uint32_t(sram + (lo - x));
              s.dramBase = uint32_t(toPlane * targetPlane + ty * last.outW + fa * lo + fb);
              const uint32_t count = uint32_t(hi - lo + 1);
              if (fa == 1) {
                s.ySize = 1, s.xSize = count, s.xStride = count;
              } else {
                s.ySize = count, s.xSize = 1, s.xStride = uint32_t(fa);
              }
              replacement.push_back({s, targetBuffer[ti]});
            }
          }
          entry += run, sram += run, left -= run;
        }
      }
    }
    // Pieces that continue one another in SRAM and in the same target's DRAM (rows of one entry
    // over a W = 1 image, a token's channels) become one STORE.
    std::vector<std::pair<Insn, int32_t>> merged;
    for (const auto& r : replacement) {
      if (!merged.empty()) {
        Insn& m = merged.back().first;
        const Insn& n = r.first;
        if (merged.back().second == r.second && m.ySize == 1 && n.ySize == 1 && n.sramBase == m.sramBase + m.xSize &&
            n.dramBase == m.dramBase + m.xSize && m.xSize + n.xSize <= maxXSize) {
          m.xSize += n.xSize;
          m.xStride = m.xSize;
          continue;
        }
      }
      merged.push_back(r);
    }
    replacement = std::move(merged);
    // A store whose entries all fall outside every target (cropped away) still carries its
    // dependency flags: a zero-width STORE moves nothing.
    if (replacement.empty()) {
      Insn nop = in;
      nop.xSize = 0, nop.ySize = 0;
      replacement.push_back({nop, output});
    }
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
  if (op.runtimeWeights) info.tensors.push_back(n.inputs.at(1));
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
    else if (pb.name == "weights" && op.runtimeWeights) tensor = n.inputs.at(1), block = cfg.blockOut;
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

// A movement's row in the layer table (upsample, dilate, interleave, select): no instructions of
// its own (the layer before stored into its slot).
void linkScatter(const Graph& g, CompiledModel& m, size_t si, Segment& seg, const Node& n, int layer) {
  const model::Scatter sc = scatterOf(g, n);
  LayerInfo info;
  info.name = n.name;
  info.kind = n.opType;
  info.onAccelerator = true;
  info.segment = int(si);
  info.spec = n.attrs.at("spec").s;
  // The layer whose stores do it: a chain of movements is done by the layer before the first.
  int producer = g.producer(n.inputs.at(0));
  while (producer >= 0 && isScatter(g.nodes[size_t(producer)])) producer = g.producer(g.nodes[size_t(producer)].inputs.at(0));
  const std::string by = "stored by '" + (producer >= 0 ? g.nodes[size_t(producer)].name : std::string("?")) + "'";
  auto pair = [](int a, int b) { return std::to_string(a) + "x" + std::to_string(b); };
  if (sc.kind == "upsample")
    info.detail = "copy-free: nearest x" + pair(sc.stepY, sc.stepX) + ", " + by + " into every position it covers";
  else if (sc.kind == "select")
    info.detail = "copy-free: channel group " + std::to_string(sc.kept) + " of " + std::to_string(sc.phases()) + ", " + by;
  else if (sc.kind == "dilate")
    info.detail = "copy-free: pixels " + pair(sc.stepY, sc.stepX) + " apart in a " + pair(sc.outH, sc.outW) +
                  " image of zeros, " + by;
  else
    info.detail = "copy-free: " + std::to_string(sc.phases()) + " stride phases interleaved into a " + pair(sc.outH, sc.outW) +
                  " image, " + by;
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
      if (isScatter(n)) {
        linkScatter(g, m, si, seg, n, p.layerOfNode.at(sp.nodes[li]));
        continue;
      }
      const Operator op = acceleratorOperator(g, n);
      const OperatorData data = acceleratorConstants(g, n);
      if (op.runtimeWeights && !op::weightsViewIsPacked(cfg, op))
        throw Error(g.origin, "node '" + n.name + "' (" + op.describe() + "): its weights tensor '" + n.inputs.at(1) +
                                  "' is not laid out as the weights in config " + cfg.name);
      Program prog;
      try {
        prog = compile(cfg, op, data);
      } catch (const Error& e) {
        throw Error(g.origin, "node '" + n.name + "' (" + op.describe() + "): " + e.reason());
      }
      // Scatter nodes reading this layer's output, and chains of them: its STOREs write the slot
      // of every one whose output something else reads (and its own output only if something
      // but scatter nodes reads it).
      std::vector<ScatterTarget> targets;
      bool keepOriginal = false;
      std::function<void(const std::string&, const std::vector<model::Scatter>&, bool*)> follow =
          [&](const std::string& t, const std::vector<model::Scatter>& chain, bool* readOtherwise) {
            *readOtherwise = std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end();
            for (int c : g.consumers(t)) {
              const Node& cn = g.nodes[size_t(c)];
              const bool inSegment = std::find(sp.nodes.begin(), sp.nodes.end(), c) != sp.nodes.end();
              if (!isScatter(cn) || !inSegment) {
                *readOtherwise = true;
                continue;
              }
              std::vector<model::Scatter> longer = chain;
              longer.push_back(scatterOf(g, cn));
              bool read = false;
              follow(cn.outputs.at(0), longer, &read);
              if (read) targets.push_back({cn.outputs[0], longer});
            }
          };
      follow(n.outputs[0], {}, &keepOriginal);
      if (!targets.empty()) {
        const Slot& s = plan.slot(si, n.outputs[0], cfg.blockOut);
        const int xBits = hw::InsnLayout(cfg).width(Opcode::kStore, hw::Field::kXSize);
        prog = withScatteredStores(prog, ActivationLayout{s.n, s.c, s.h, s.w, cfg.batch, cfg.blockOut}, targets, keepOriginal,
                                   uint32_t((uint64_t(1) << xBits) - 1));
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
