// The model runner: host steps on the host executor, segments on a session's target, and the host-only reference run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>

#include "tessera/compiler/host/executor.h"
#include "tessera/compiler/model/run.h"
#include "tessera/compiler/model/scatter.h"
#include "tessera/compiler/op/dram_layout.h"
#include "tessera/compiler/op/program.h"
#include "tessera/hw/isa.h"
#include "tessera/runtime/session.h"
#include "tessera/support/error.h"

namespace tessera::compiler::model {

using ir::DType;
using ir::Node;
using ir::Tensor;
using op::ActivationLayout;
using op::BufferRole;
using op::OpKind;
using op::Operator;
using op::OperatorData;
using op::Program;
using op::ProgramBuffer;
using op::weightsView;

struct ModelRunner::Impl {
  const CompiledModel& model;
  runtime::Session& session;
  hw::Config cfg;
  runtime::DataBuffer* constants = nullptr;
  runtime::DataBuffer* arena = nullptr;
  std::vector<runtime::DataBuffer*> code;
  std::map<int, std::pair<runtime::DataBuffer*, uint32_t>> layerCode;  // by layer: stream and length
  SegmentObserver observer;

  Impl(const CompiledModel& m, runtime::Session& s) : model(m), session(s), cfg(s.config()) {}
  ~Impl() {
    for (auto& kv : layerCode) session.freeBuffer(kv.second.first);
    for (auto* b : code) session.freeBuffer(b);
    if (arena) session.freeBuffer(arena);
    if (constants) session.freeBuffer(constants);
  }

  hw::Insn relocate(const Segment& s, size_t i) const {
    hw::Insn in = s.insns[i];
    if (s.insnRegion[i] >= 0) {
      const runtime::DataBuffer* region = s.insnRegion[i] == 0 ? constants : arena;
      const uint64_t elem = uint64_t(cfg.dramElemBytes(static_cast<hw::MemId>(in.memType)));
      if (region->phys % elem)
        throw Error(model.source, "DRAM region is not aligned to " + std::to_string(elem) + "-byte elements");
      in.dramBase = static_cast<uint32_t>(in.dramBase + region->phys / elem);
    }
    return in;
  }

  // One layer's instructions as a stream of their own: the wait on the previous layer dropped,
  // the link to the next one a FINISH again.
  std::pair<runtime::DataBuffer*, uint32_t> layerStream(int layer) {
    auto it = layerCode.find(layer);
    if (it != layerCode.end()) return it->second;
    const LayerInfo& l = model.layers[size_t(layer)];
    const Segment& s = model.segments[size_t(l.segment)];
    const hw::Isa isa(cfg);
    const uint32_t n = l.insnEnd - l.insnBegin;
    runtime::DataBuffer* c = session.allocBuffer(std::max<uint32_t>(n, 1) * 16);
    for (uint32_t k = 0; k < n; ++k) {
      hw::Insn in = relocate(s, l.insnBegin + k);
      if (k == 0 && l.insnBegin > 0 && in.opcode == hw::Opcode::kLoad && in.xSize == 0) in.popNext = false;
      if (k + 1 == n && in.opcode != hw::Opcode::kFinish) {
        const bool popPrev = in.popPrev, popNext = in.popNext;
        in = hw::Insn();
        in.opcode = hw::Opcode::kFinish;
        in.popPrev = popPrev;
        in.popNext = popNext;
      }
      hw::Isa::rawToBytes(isa.encode(in, "layer '" + l.name + "' instruction " + std::to_string(k)), c->host + 16 * k);
    }
    return layerCode[layer] = {c, n};
  }

  SegmentRunView view(int si) const {
    const Segment& s = model.segments[size_t(si)];
    const runtime::DataBuffer* c = code[size_t(si)];
    SegmentRunView v;
    v.segment = si;
    v.regions = {{"constants", constants->phys, constants->host, constants->size},
                 {"arena", arena->phys, arena->host, arena->size},
                 {"instructions", c->phys, c->host, uint64_t(s.insns.size()) * 16}};
    v.insnPhys = c->phys;
    v.insnCount = static_cast<uint32_t>(s.insns.size());
    for (const SegmentTensor& st : s.outputs)
      v.outputs.push_back({st.tensor, arena->phys + st.offset, arena->host + st.offset, st.bytes});
    return v;
  }

  void load() {
    if (cfg.toJson() != model.configJson)
      throw Error(model.source, "the model was compiled for another configuration than the session's (" + cfg.name + ")");
    constants = session.allocBuffer(std::max<uint64_t>(model.constantImage.size(), 1));
    arena = session.allocBuffer(std::max<uint64_t>(model.arenaBytes, 1));
    // Zeroed once: a dilate's slot keeps the zeros between the pixels its producer stores.
    std::memset(arena->host, 0, arena->size);
    // A model with no constants has an empty image, whose data() may be null (memcpy's UB).
    if (!model.constantImage.empty())
      std::memcpy(constants->host, model.constantImage.data(), model.constantImage.size());
    const hw::Isa isa(cfg);
    for (size_t si = 0; si < model.segments.size(); ++si) {
      const Segment& s = model.segments[si];
      runtime::DataBuffer* c = session.allocBuffer(std::max<size_t>(s.insns.size(), 1) * 16);
      code.push_back(c);
      for (size_t i = 0; i < s.insns.size(); ++i)
        hw::Isa::rawToBytes(isa.encode(relocate(s, i), "segment " + std::to_string(si) + " instruction " + std::to_string(i)),
                            c->host + 16 * i);
    }
  }

};

ModelRunner::ModelRunner(const CompiledModel& model, runtime::Session& session)
    : impl_(std::make_unique<Impl>(model, session)) {
  impl_->load();
}

ModelRunner::~ModelRunner() = default;

namespace {

using SegmentFn = std::function<void(int segment, std::map<std::string, Tensor>& values, ModelRunResult& result)>;

const Tensor& lookup(const CompiledModel& m, const std::map<std::string, Tensor>& values, const std::string& name) {
  auto it = values.find(name);
  if (it != values.end()) return it->second;
  auto c = m.constants.find(name);
  if (c != m.constants.end()) return c->second;
  throw Error(m.source, "tensor '" + name + "' is not computed before it is used");
}

std::vector<int8_t> int8Values(const Tensor& t) {
  std::vector<int8_t> v(t.ints.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int8_t>(t.ints[i]);
  return v;
}

Tensor int8Tensor(const std::string& name, const std::vector<int64_t>& shape, const std::vector<int8_t>& v) {
  Tensor t;
  t.name = name;
  t.dtype = DType::kInt8;
  t.shape = shape;
  t.hasShape = true;
  t.ints.assign(v.begin(), v.end());
  return t;
}

}  // namespace

void checkModelInputs(const CompiledModel& m, const std::map<std::string, Tensor>& inputs) {
  for (const Tensor& want : m.inputs) {
    auto it = inputs.find(want.name);
    if (it == inputs.end()) throw Error(m.source, "input '" + want.name + "' (" + want.describe() + ") is not given");
    const Tensor& got = it->second;
    if (got.shape != want.shape || got.dtype != want.dtype)
      throw Error(m.source, "input '" + want.name + "' is " + got.describe() + ", the model takes " + want.describe());
    if ((ir::isInteger(got.dtype) ? got.ints.size() : got.floats.size()) != size_t(want.elements()))
      throw Error(m.source, "input '" + want.name + "' holds a different number of values than its shape says");
  }
  for (const auto& kv : inputs)
    if (std::none_of(m.inputs.begin(), m.inputs.end(), [&](const Tensor& t) { return t.name == kv.first; }))
      throw Error(m.source, "the model has no input named '" + kv.first + "'");
}

namespace {

// Checks the inputs, runs every step in order (host steps here, segments by `segment`), returns the outputs.
ModelRunResult executeSteps(const CompiledModel& m, const std::map<std::string, Tensor>& inputs, const SegmentFn& segment) {
  const auto start = std::chrono::steady_clock::now();
  checkModelInputs(m, inputs);
  std::map<std::string, Tensor> values;
  for (const Tensor& want : m.inputs) values[want.name] = inputs.at(want.name);
  ModelRunResult result;
  result.layers.resize(m.layers.size());
  for (const Step& step : m.steps) {
    if (step.kind == Step::Kind::kSegment) {
      segment(step.index, values, result);
      continue;
    }
    const Node& n = m.hostSteps[size_t(step.index)].node;
    std::vector<const Tensor*> ins;
    for (const std::string& in : n.inputs) ins.push_back(in.empty() ? nullptr : &lookup(m, values, in));
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Tensor> outs = host::runHostNode(n, ins, m.opset);
    if (step.layer >= 0)
      result.layers[size_t(step.layer)].hostMicros =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    for (size_t i = 0; i < outs.size() && i < n.outputs.size(); ++i)
      if (!n.outputs[i].empty()) {
        outs[i].name = n.outputs[i];
        values[n.outputs[i]] = std::move(outs[i]);
      }
  }
  for (const Tensor& want : m.outputs) {
    Tensor out = lookup(m, values, want.name);
    out.isConstant = false;
    result.outputs[want.name] = std::move(out);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

ActivationLayout layoutOf(const SegmentTensor& st, int batch) {
  ActivationLayout l;
  l.n = st.n;
  l.c = st.c;
  l.h = st.h;
  l.w = st.w;
  l.batch = batch;
  l.block = st.block;
  return l;
}

// Turns instruction tracing on for one run of a device and off again, however the run ends, so
// later runs of the session's device record nothing.
class SpanRecording {
 public:
  SpanRecording(runtime::Target& device, bool wanted) : device_(device), on_(wanted && device.traceInstructions(true)) {}
  ~SpanRecording() {
    if (on_) device_.traceInstructions(false);
  }
  SpanRecording(const SpanRecording&) = delete;
  SpanRecording& operator=(const SpanRecording&) = delete;
  bool on() const { return on_; }

 private:
  runtime::Target& device_;
  const bool on_;
};

}  // namespace

ModelRunResult ModelRunner::run(const std::map<std::string, Tensor>& inputs, const RunOptions& options) {
  Impl& impl = *impl_;
  const CompiledModel& m = impl.model;
  runtime::Target& device = impl.session.threadQueue().device();
  return executeSteps(m, inputs, [&](int si, std::map<std::string, Tensor>& values, ModelRunResult& result) {
    const Segment& seg = m.segments[size_t(si)];
    for (const SegmentTensor& st : seg.inputs) {
      const std::vector<int8_t> nchw = int8Values(lookup(m, values, st.tensor));
      const ActivationLayout l = layoutOf(st, impl.cfg.batch);
      if (nchw.size() != uint64_t(l.n) * l.c * l.h * l.w)
        throw Error(m.source, "tensor '" + st.tensor + "' has " + std::to_string(nchw.size()) + " values, segment " +
                                  std::to_string(si) + " expects " + std::to_string(uint64_t(l.n) * l.c * l.h * l.w));
      const std::vector<int8_t> packed = op::packActivations(l, nchw);
      std::memcpy(impl.arena->host + st.offset, packed.data(), packed.size());
    }
    SegmentRunView view;
    if (impl.observer) {
      view = impl.view(si);
      impl.observer(view, false);
    }
    const hw::Counters before = device.counters();
    {
      const SpanRecording recording(device, options.instructionSpans);
      const auto runStart = std::chrono::steady_clock::now();
      device.run(impl.code[size_t(si)]->phys, static_cast<uint32_t>(seg.insns.size()), 0);
      result.segmentSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - runStart).count();
      if (recording.on()) {
        std::vector<hw::RunSpans> runs = device.takeInstructionSpans();
        if (runs.size() != 1)
          throw Error(m.source, "segment " + std::to_string(si) + ": target " + device.name() + " recorded " +
                                    std::to_string(runs.size()) + " traced runs for one run");
        SegmentSpans ss;
        ss.segment = si;
        ss.run = std::move(runs[0]);
        ss.insnLayer.assign(seg.insns.size(), -1);
        for (int li : seg.layers) {
          const LayerInfo& l = m.layers[size_t(li)];
          for (uint32_t i = l.insnBegin; i < l.insnEnd && i < seg.insns.size(); ++i) ss.insnLayer[i] = li;
        }
        result.segments.push_back(std::move(ss));
        result.spans = ModelRunResult::Spans::kRecorded;
      } else if (options.instructionSpans) {
        result.spans = ModelRunResult::Spans::kUnsupported;
      }
    }
    const hw::Counters spent = device.counters().since(before);
    if (impl.observer) impl.observer(view, true);
    result.counters += spent;
    for (const SegmentTensor& st : seg.outputs) {
      const ActivationLayout l = layoutOf(st, impl.cfg.batch);
      std::vector<int8_t> packed(l.bytes());
      std::memcpy(packed.data(), impl.arena->host + st.offset, packed.size());
      values[st.tensor] = int8Tensor(st.tensor, st.shape, op::unpackActivations(l, packed));
    }
    if (options.layerCycles && spent.cycles) {
      // The layers again one by one, after the outputs are read: the arena's slots have been
      // reused by then, but the accelerator's timing does not depend on the data.
      for (int li : seg.layers) {
        if (impl.model.layers[size_t(li)].insnBegin == impl.model.layers[size_t(li)].insnEnd) continue;  // a concat or a scatter (upsample, dilate, interleave)
        const auto stream = impl.layerStream(li);
        const hw::Counters b = device.counters();
        device.run(stream.first->phys, stream.second, 0);
        result.layers[size_t(li)].cycles = device.counters().since(b).cycles;
      }
    }
  });
}

void ModelRunner::observeSegments(SegmentObserver observer) { impl_->observer = std::move(observer); }

ModelRunResult runReference(const CompiledModel& m, const std::map<std::string, Tensor>& inputs) {
  return executeSteps(m, inputs, [&](int si, std::map<std::string, Tensor>& values, ModelRunResult&) {
    const Segment& seg = m.segments[size_t(si)];
    for (int li : seg.layers) {
      const LayerInfo& l = m.layers[size_t(li)];
      if (l.kind == "concat") {  // its inputs along the channels (NCHW)
        std::vector<Tensor> parts;
        for (size_t i = 0; i + 1 < l.tensors.size(); ++i) parts.push_back(lookup(m, values, l.tensors[i]));
        std::vector<int64_t> shape = parts.at(0).shape;
        if (shape.size() != 4) throw Error(m.source, "concat '" + l.name + "': inputs are not NCHW");
        shape[1] = 0;
        for (const Tensor& t : parts) shape[1] += t.shape.at(1);
        std::vector<int8_t> out;
        out.reserve(size_t(shape[0] * shape[1] * shape[2] * shape[3]));
        for (int64_t b = 0; b < shape[0]; ++b)
          for (const Tensor& t : parts) {
            const std::vector<int8_t> v = int8Values(t);
            const size_t image = v.size() / size_t(shape[0]);
            out.insert(out.end(), v.begin() + int64_t(size_t(b) * image), v.begin() + int64_t(size_t(b + 1) * image));
          }
        values[l.tensors.back()] = int8Tensor(l.tensors.back(), shape, out);
        continue;
      }
      if (isScatterKind(l.kind)) {  // where the producer's stores put each entry
        const Tensor in = lookup(m, values, l.tensors.at(0));
        if (in.shape.size() != 4) throw Error(m.source, l.kind + " '" + l.name + "': its input is not NCHW");
        const Scatter sc = parseScatter(l.kind, l.spec, in.shape[2], in.shape[3], m.source + ": layer '" + l.name + "'");
        if (in.shape[1] % sc.phases())
          throw Error(m.source, l.kind + " '" + l.name + "': " + std::to_string(in.shape[1]) + " channels are not " +
                                    std::to_string(sc.phases()) + " equal groups");
        const std::vector<int8_t> out = applyScatter(sc, int8Values(in), in.shape[0], in.shape[1], in.shape[2], in.shape[3]);
        values[l.tensors.back()] =
            int8Tensor(l.tensors.back(), {in.shape[0], in.shape[1] / sc.phases(), sc.outH, sc.outW}, out);
        continue;
      }
      Program p;
      p.configJson = m.configJson;
      p.op = Operator::parse(l.spec, m.source + ": layer '" + l.name + "'");
      for (const auto& c : l.constants) {
        ProgramBuffer b;
        b.name = c.buffer;
        b.role = BufferRole::kConstant;
        b.memType = c.memType;
        b.bytes = c.bytes;
        b.data.assign(m.constantImage.begin() + int64_t(c.offset), m.constantImage.begin() + int64_t(c.offset + c.bytes));
        p.buffers.push_back(std::move(b));
      }
      OperatorData data = p.constants();
      data.input = int8Values(lookup(m, values, l.tensors.at(0)));
      if (p.op.kind == OpKind::kAdd || p.op.kind == OpKind::kScale || p.op.residual)
        data.input2 = int8Values(lookup(m, values, l.tensors.at(1)));
      // Weights given as an activation: the tensor before the output (op::weightsView's reading).
      if (p.op.runtimeWeights) {
        if (l.tensors.size() < 3) throw Error(m.source, "layer '" + l.name + "': its weights tensor is not recorded");
        data.weights = weightsView(p.op, int8Values(lookup(m, values, l.tensors[l.tensors.size() - 2])));
      }
      const std::vector<int8_t> out = reference(p.op, data);
      const std::string& name = l.tensors.back();
      values[name] = int8Tensor(name, {p.op.batch, p.op.outChannels, p.op.outHeight(), p.op.outWidth()}, out);
    }
    for (const SegmentTensor& st : seg.outputs) values[st.tensor].shape = st.shape;
  });
}

}  // namespace tessera::compiler::model
