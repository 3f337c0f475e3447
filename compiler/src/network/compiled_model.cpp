// Compiled models: their file format, and the runner that executes host steps and accelerator segments.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>

#include "../binary_io.h"
#include "tessera/compiler/host_ops.h"
#include "tessera/compiler/layout.h"
#include "tessera/compiler/program.h"
#include "tessera/compiler/network.h"
#include "tessera/gen/host_interface.h"
#include "tessera/hw/asm.h"
#include "tessera/support/error.h"
#include "tessera/runtime/session.h"
#include "tessera/support/file_io.h"

namespace tessera::compiler {

using detail::Reader;
using detail::Writer;
using graph::Attribute;
using graph::DType;
using graph::Node;
using graph::Tensor;

namespace {

constexpr char kMagic[8] = {'T', 'S', 'R', 'A', 'M', 'D', 'L', '1'};
constexpr uint32_t kVersion = 1;
// Sanity bound on any element count read from a file before allocating for it.
constexpr uint64_t kMaxElements = uint64_t(1) << 32;

void writeStrings(Writer& w, const std::vector<std::string>& v) {
  w.u32(uint32_t(v.size()));
  for (const auto& s : v) w.str(s);
}

std::vector<std::string> readStrings(Reader& r, const char* what) {
  const uint32_t n = r.u32(what);
  std::vector<std::string> v;
  for (uint32_t i = 0; i < n; ++i) v.push_back(r.str(what));
  return v;
}

int elementWidth(DType t) {
  switch (t) {
    case DType::kUInt8:
    case DType::kInt8: return 1;
    case DType::kInt32: return 4;
    default: return 8;
  }
}

void writeTensor(Writer& w, const Tensor& t) {
  w.str(t.name);
  w.u32(uint32_t(t.dtype));
  w.u32(t.hasShape);
  w.u32(t.isConstant);
  w.u32(uint32_t(t.shape.size()));
  for (int64_t d : t.shape) w.u64(uint64_t(d));
  w.u64(t.floats.size());
  for (float f : t.floats) {
    uint32_t v;
    std::memcpy(&v, &f, 4);
    w.u32(v);
  }
  // Integers at their own width, so int8 constants cost a byte each.
  w.u64(t.ints.size());
  const int width = elementWidth(t.dtype);
  for (int64_t v : t.ints)
    for (int i = 0; i < width; ++i) w.b.push_back(static_cast<uint8_t>(uint64_t(v) >> (8 * i)));
  w.u32(uint32_t(t.quant.scale.size()));
  for (float f : t.quant.scale) w.f64(f);
  w.u32(uint32_t(t.quant.zeroPoint.size()));
  for (int32_t z : t.quant.zeroPoint) w.u32(uint32_t(z));
  w.u32(uint32_t(t.quant.axis + 1));
}

// The largest tensor rank a compiled-model file holds.
constexpr uint32_t kMaxRank = 8;

Tensor readTensor(Reader& r) {
  Tensor t;
  t.name = r.str("tensor name");
  const uint32_t dt = r.u32("tensor dtype");
  if (dt > uint32_t(DType::kInt64)) throw Error(r.origin(), "tensor '" + t.name + "' has an invalid dtype");
  t.dtype = DType(dt);
  t.hasShape = r.u32("tensor flags") != 0;
  t.isConstant = r.u32("tensor flags") != 0;
  const uint32_t rank = r.u32("tensor rank");
  if (rank > kMaxRank) throw Error(r.origin(), "tensor '" + t.name + "' has rank " + std::to_string(rank));
  for (uint32_t i = 0; i < rank; ++i) t.shape.push_back(int64_t(r.u64("tensor shape")));
  const uint64_t nf = r.u64("tensor floats");
  if (nf > kMaxElements) throw Error(r.origin(), "tensor '" + t.name + "' is implausibly large");
  for (uint64_t i = 0; i < nf; ++i) {
    const uint32_t v = r.u32("tensor floats");
    float f;
    std::memcpy(&f, &v, 4);
    t.floats.push_back(f);
  }
  const uint64_t ni = r.u64("tensor ints");
  if (ni > kMaxElements) throw Error(r.origin(), "tensor '" + t.name + "' is implausibly large");
  const int width = elementWidth(t.dtype);
  const uint8_t* p = r.take(ni * uint64_t(width), "tensor ints");
  t.ints.resize(ni);
  for (uint64_t i = 0; i < ni; ++i) {
    uint64_t v = 0;
    for (int k = width - 1; k >= 0; --k) v = v << 8 | p[i * uint64_t(width) + uint64_t(k)];
    // Sign-extend the signed types from their width.
    if (t.dtype != DType::kUInt8 && width < 8 && (v >> (8 * width - 1)) & 1) v |= ~uint64_t(0) << (8 * width);
    t.ints[i] = int64_t(v);
  }
  const uint32_t ns = r.u32("tensor scales");
  for (uint32_t i = 0; i < ns; ++i) t.quant.scale.push_back(float(r.f64("tensor scale")));
  const uint32_t nz = r.u32("tensor zero points");
  for (uint32_t i = 0; i < nz; ++i) t.quant.zeroPoint.push_back(int32_t(r.u32("tensor zero point")));
  // Stored as axis + 1 (per-tensor quantization's -1 is 0); bounded by the largest rank a file
  // holds, so no corrupt value overflows the subtraction or indexes past a shape.
  const uint32_t axisPlusOne = r.u32("tensor axis");
  if (axisPlusOne > kMaxRank)
    throw Error(r.origin(), "tensor '" + t.name + "' has quantization axis " + std::to_string(int64_t(axisPlusOne) - 1) +
                                ", past any tensor's rank (at most " + std::to_string(kMaxRank) + ")");
  t.quant.axis = int(axisPlusOne) - 1;
  return t;
}

void writeNode(Writer& w, const Node& n) {
  w.str(n.name);
  w.str(n.opType);
  w.str(n.domain);
  writeStrings(w, n.inputs);
  writeStrings(w, n.outputs);
  w.u32(uint32_t(n.attrs.size()));
  for (const auto& kv : n.attrs) {
    const Attribute& a = kv.second;
    w.str(kv.first);
    w.u32(uint32_t(a.kind));
    w.u64(uint64_t(a.i));
    w.f64(a.f);
    w.str(a.s);
    w.u32(uint32_t(a.ints.size()));
    for (int64_t v : a.ints) w.u64(uint64_t(v));
    w.u32(uint32_t(a.floats.size()));
    for (float f : a.floats) w.f64(f);
    w.u32(a.tensor ? 1 : 0);
    if (a.tensor) writeTensor(w, *a.tensor);
  }
}

Node readNode(Reader& r) {
  Node n;
  n.name = r.str("node name");
  n.opType = r.str("node op type");
  n.domain = r.str("node domain");
  n.inputs = readStrings(r, "node inputs");
  n.outputs = readStrings(r, "node outputs");
  const uint32_t na = r.u32("node attributes");
  for (uint32_t i = 0; i < na; ++i) {
    const std::string key = r.str("attribute name");
    Attribute a;
    const uint32_t kind = r.u32("attribute kind");
    if (kind > uint32_t(Attribute::Kind::kTensor)) throw Error(r.origin(), "node '" + n.name + "': bad attribute kind");
    a.kind = Attribute::Kind(kind);
    a.i = int64_t(r.u64("attribute"));
    a.f = float(r.f64("attribute"));
    a.s = r.str("attribute");
    const uint32_t ni = r.u32("attribute ints");
    for (uint32_t k = 0; k < ni; ++k) a.ints.push_back(int64_t(r.u64("attribute ints")));
    const uint32_t nf = r.u32("attribute floats");
    for (uint32_t k = 0; k < nf; ++k) a.floats.push_back(float(r.f64("attribute floats")));
    if (r.u32("attribute tensor")) a.tensor = std::make_shared<Tensor>(readTensor(r));
    n.attrs[key] = a;
  }
  return n;
}

void writeSegmentTensor(Writer& w, const SegmentTensor& t) {
  w.str(t.tensor);
  w.u64(t.offset);
  for (int v : {t.n, t.c, t.h, t.w, t.block}) w.u32(uint32_t(v));
  w.u64(t.bytes);
  w.u32(uint32_t(t.shape.size()));
  for (int64_t d : t.shape) w.u64(uint64_t(d));
}

SegmentTensor readSegmentTensor(Reader& r) {
  SegmentTensor t;
  t.tensor = r.str("segment tensor");
  t.offset = r.u64("segment tensor offset");
  for (int* v : {&t.n, &t.c, &t.h, &t.w, &t.block}) *v = int(r.u32("segment tensor extent"));
  t.bytes = r.u64("segment tensor size");
  const uint32_t rank = r.u32("segment tensor rank");
  if (rank > 8) throw Error(r.origin(), "segment tensor '" + t.tensor + "' has rank " + std::to_string(rank));
  for (uint32_t i = 0; i < rank; ++i) t.shape.push_back(int64_t(r.u64("segment tensor shape")));
  return t;
}

}  // namespace

std::vector<uint8_t> CompiledModel::serialize() const {
  const hw::Config cfg = hw::Config::fromJson(configJson, "model config");
  const hw::Isa isa(cfg);
  Writer w;
  w.b.insert(w.b.end(), kMagic, kMagic + 8);
  w.u32(kVersion);
  w.str(configJson);
  w.str(source);
  w.u64(uint64_t(opset));
  w.str(quantization);
  w.u32(uint32_t(inputs.size()));
  for (const Tensor& t : inputs) writeTensor(w, t);
  w.u32(uint32_t(outputs.size()));
  for (const Tensor& t : outputs) writeTensor(w, t);
  w.u32(uint32_t(metadata.size()));
  for (const auto& kv : metadata) {
    w.str(kv.first);
    w.str(kv.second);
  }
  w.u32(uint32_t(constants.size()));
  for (const auto& kv : constants) writeTensor(w, kv.second);
  w.bytes(constantImage);
  w.u64(arenaBytes);
  w.u64(arenaBytesWithoutReuse);
  w.u32(uint32_t(segments.size()));
  for (const Segment& s : segments) {
    w.u32(uint32_t(s.insns.size()));
    for (size_t i = 0; i < s.insns.size(); ++i) {
      const hw::RawInsn raw = isa.encode(s.insns[i]);
      w.u64(raw.lo);
      w.u64(raw.hi);
      w.u32(uint32_t(int32_t(s.insnRegion[i])));
    }
    w.u32(uint32_t(s.inputs.size()));
    for (const auto& t : s.inputs) writeSegmentTensor(w, t);
    w.u32(uint32_t(s.outputs.size()));
    for (const auto& t : s.outputs) writeSegmentTensor(w, t);
    w.u32(uint32_t(s.layers.size()));
    for (int l : s.layers) w.u32(uint32_t(l));
  }
  w.u32(uint32_t(hostSteps.size()));
  for (const HostStep& h : hostSteps) writeNode(w, h.node);
  w.u32(uint32_t(steps.size()));
  for (const Step& s : steps) {
    w.u32(uint32_t(s.kind));
    w.u32(uint32_t(s.index));
    w.u32(uint32_t(s.layer + 1));
  }
  w.u32(uint32_t(layers.size()));
  for (const LayerInfo& l : layers) {
    w.str(l.name);
    w.str(l.kind);
    w.u32(l.onAccelerator);
    w.u32(uint32_t(l.segment + 1));
    w.u32(l.insnBegin);
    w.u32(l.insnEnd);
    for (uint64_t v : {l.macs, l.paddedMacs, l.dramReadBytes, l.dramWriteBytes}) w.u64(v);
    w.f64(l.estimatedCycles);
    w.str(l.detail);
    w.str(l.spec);
    writeStrings(w, l.tensors);
    w.u32(uint32_t(l.constants.size()));
    for (const auto& c : l.constants) {
      w.str(c.buffer);
      w.u32(c.memType);
      w.u64(c.offset);
      w.u64(c.bytes);
    }
  }
  w.u32(uint32_t(quantizationNotes.size()));
  for (const auto& q : quantizationNotes) {
    w.str(q.tensor);
    w.str(q.change);
    w.f64(q.maxAbsError);
  }
  w.u64(detail::fnv1a(w.b.data(), w.b.size()));
  return w.b;
}

CompiledModel CompiledModel::deserialize(const std::vector<uint8_t>& bytes, const std::string& origin) {
  Reader r = detail::openChecked(bytes, kMagic, kVersion, "compiled model", origin);
  const size_t body = bytes.size() - 8;
  CompiledModel m;
  m.configJson = r.str("config");
  const hw::Config cfg = hw::Config::fromJson(m.configJson, origin + ": config");
  const hw::Isa isa(cfg);
  m.source = r.str("source");
  m.opset = int64_t(r.u64("opset"));
  m.quantization = r.str("quantization");
  for (uint32_t i = 0, n = r.u32("inputs"); i < n; ++i) m.inputs.push_back(readTensor(r));
  for (uint32_t i = 0, n = r.u32("outputs"); i < n; ++i) m.outputs.push_back(readTensor(r));
  for (uint32_t i = 0, n = r.u32("metadata"); i < n; ++i) {
    std::string k = r.str("metadata key");
    m.metadata[k] = r.str("metadata value");
  }
  for (uint32_t i = 0, n = r.u32("constants"); i < n; ++i) {
    Tensor t = readTensor(r);
    m.constants[t.name] = std::move(t);
  }
  m.constantImage = r.bytes("constant image");
  m.arenaBytes = r.u64("arena size");
  m.arenaBytesWithoutReuse = r.u64("arena size");
  for (uint32_t si = 0, n = r.u32("segments"); si < n; ++si) {
    Segment s;
    const uint32_t ni = r.u32("instruction count");
    for (uint32_t i = 0; i < ni; ++i) {
      hw::RawInsn raw;
      raw.lo = r.u64("instruction");
      raw.hi = r.u64("instruction");
      const hw::Insn in = isa.decode(raw);
      isa.validate(in, i);
      const int32_t region = int32_t(r.u32("instruction region"));
      if (region < -1 || region > 1)
        throw Error(origin, "segment " + std::to_string(si) + " instruction " + std::to_string(i) + ": bad region");
      s.insns.push_back(in);
      s.insnRegion.push_back(int8_t(region));
    }
    for (uint32_t i = 0, k = r.u32("segment inputs"); i < k; ++i) s.inputs.push_back(readSegmentTensor(r));
    for (uint32_t i = 0, k = r.u32("segment outputs"); i < k; ++i) s.outputs.push_back(readSegmentTensor(r));
    for (uint32_t i = 0, k = r.u32("segment layers"); i < k; ++i) s.layers.push_back(int(r.u32("segment layer")));
    for (const auto* list : {&s.inputs, &s.outputs})
      for (const SegmentTensor& t : *list)
        if (t.offset + t.bytes > m.arenaBytes)
          throw Error(origin, "segment tensor '" + t.tensor + "' lies outside the activation arena");
    m.segments.push_back(std::move(s));
  }
  for (uint32_t i = 0, n = r.u32("host steps"); i < n; ++i) m.hostSteps.push_back({readNode(r)});
  for (uint32_t i = 0, n = r.u32("steps"); i < n; ++i) {
    Step s;
    const uint32_t kind = r.u32("step kind");
    if (kind > 1) throw Error(origin, "step " + std::to_string(i) + " has an invalid kind");
    s.kind = Step::Kind(kind);
    s.index = int(r.u32("step index"));
    s.layer = int(r.u32("step layer")) - 1;
    const size_t limit = s.kind == Step::Kind::kHost ? m.hostSteps.size() : m.segments.size();
    if (size_t(s.index) >= limit) throw Error(origin, "step " + std::to_string(i) + " refers to a missing step");
    m.steps.push_back(s);
  }
  for (uint32_t i = 0, n = r.u32("layers"); i < n; ++i) {
    LayerInfo l;
    l.name = r.str("layer name");
    l.kind = r.str("layer kind");
    l.onAccelerator = r.u32("layer flags") != 0;
    l.segment = int(r.u32("layer segment")) - 1;
    l.insnBegin = r.u32("layer instructions");
    l.insnEnd = r.u32("layer instructions");
    for (uint64_t* v : {&l.macs, &l.paddedMacs, &l.dramReadBytes, &l.dramWriteBytes}) *v = r.u64("layer figures");
    l.estimatedCycles = r.f64("layer figures");
    l.detail = r.str("layer detail");
    l.spec = r.str("layer spec");
    l.tensors = readStrings(r, "layer tensors");
    for (uint32_t k = 0, nc = r.u32("layer constants"); k < nc; ++k) {
      LayerInfo::ConstantRange c;
      c.buffer = r.str("layer constant");
      c.memType = r.u32("layer constant");
      c.offset = r.u64("layer constant");
      c.bytes = r.u64("layer constant");
      if (c.memType > 5) throw Error(origin, "layer '" + l.name + "' has a constant of invalid memory type");
      l.constants.push_back(c);
    }
    m.layers.push_back(l);
  }
  for (const Segment& s : m.segments)
    for (int l : s.layers)
      if (l < 0 || size_t(l) >= m.layers.size()) throw Error(origin, "a segment refers to a missing layer");
  for (const LayerInfo& l : m.layers)
    for (const auto& c : l.constants)
      if (c.offset + c.bytes > m.constantImage.size())
        throw Error(origin, "layer '" + l.name + "' refers to constants outside the constant image");
  for (uint32_t i = 0, n = r.u32("quantization notes"); i < n; ++i) {
    QuantizationNote q;
    q.tensor = r.str("note");
    q.change = r.str("note");
    q.maxAbsError = r.f64("note");
    m.quantizationNotes.push_back(q);
  }
  if (r.pos() != body) throw Error(origin, "unexpected bytes after the quantization notes");
  return m;
}

void CompiledModel::save(const std::string& path, bool overwrite) const {
  writeBinaryFile(path, serialize(), overwrite);
}

CompiledModel CompiledModel::load(const std::string& path) { return deserialize(readBinaryFile(path), path); }

// ---------------------------------------------------------------------------------------------

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
    if ((graph::isInteger(got.dtype) ? got.ints.size() : got.floats.size()) != size_t(want.elements()))
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
    std::vector<Tensor> outs = runHostNode(n, ins, m.opset);
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
      const std::vector<int8_t> packed = packActivations(l, nchw);
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
      values[st.tensor] = int8Tensor(st.tensor, st.shape, unpackActivations(l, packed));
    }
    if (options.layerCycles && spent.cycles) {
      // The layers again one by one, after the outputs are read: the arena's slots have been
      // reused by then, but the accelerator's timing does not depend on the data.
      for (int li : seg.layers) {
        const auto stream = impl.layerStream(li);
        const hw::Counters b = device.counters();
        device.run(stream.first->phys, stream.second, 0);
        result.layers[size_t(li)].cycles = device.counters().since(b).cycles;
      }
    }
  });
}

void ModelRunner::observeSegments(SegmentObserver observer) { impl_->observer = std::move(observer); }

std::string chromeTrace(const CompiledModel& m, const ModelRunResult& r, double clockMhz) {
  // Hand-written JSON: names are escaped; numbers are plain.
  auto escape = [](const std::string& s) {
    std::string o;
    for (char c : s) {
      if (c == '"' || c == '\\') o += '\\';
      if (static_cast<unsigned char>(c) < 0x20) continue;
      o += c;
    }
    return o;
  };
  auto micros = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", v);
    return std::string(buf);
  };
  auto meta = [&](const char* what, int pid, int tid, const std::string& args) {
    return ",{\"name\":\"" + std::string(what) + "\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
           (tid ? ",\"tid\":" + std::to_string(tid) : std::string()) + ",\"args\":{" + args + "}}";
  };
  std::string events = "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"layers\"}}";
  events += meta("process_name", 1, 0, "\"name\":\"layers (each accelerator layer's instructions run alone)\"");
  events += meta("process_sort_index", 1, 0, "\"sort_index\":0");
  double at = 0;
  std::vector<double> layerStart(m.layers.size(), 0);
  for (size_t i = 0; i < m.layers.size() && i < r.layers.size(); ++i) {
    const LayerInfo& l = m.layers[i];
    const double dur = l.onAccelerator ? double(r.layers[i].cycles) / clockMhz : r.layers[i].hostMicros;
    layerStart[i] = at;
    events += ",{\"name\":\"" + escape(l.name) + "\",\"cat\":\"" + (l.onAccelerator ? "accelerator" : "host") +
              "\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":" + micros(at) + ",\"dur\":" + micros(dur) +
              ",\"args\":{\"op\":\"" + escape(l.kind) + "\",\"macs\":" + std::to_string(l.macs) +
              ",\"cycles\":" + std::to_string(l.onAccelerator ? r.layers[i].cycles : 0) + "}}";
    at += dur;
  }

  // One process per segment run: its whole stream's cycles, from where its first layer starts on
  // the layer track (the layers run alone add up to a little more or less than the stream).
  std::string segmentsJson;
  for (size_t k = 0; k < r.segments.size(); ++k) {
    const SegmentSpans& ss = r.segments[k];
    const Segment& seg = m.segments.at(size_t(ss.segment));
    const int pid = 2 + int(k);
    const double start = seg.layers.empty() ? 0.0 : layerStart.at(size_t(seg.layers.front()));
    events += meta("process_name", pid, 0, "\"name\":\"segment " + std::to_string(ss.segment) + ": instructions (whole stream, " +
                                               std::to_string(ss.run.cycles) + " cycles)\"");
    events += meta("process_sort_index", pid, 0, "\"sort_index\":" + std::to_string(pid));
    // A track shows non-overlapping slices only (Perfetto and chrome://tracing nest the slices of
    // one thread), and load has up to three instructions in flight: each unit gets as many lanes
    // as it needs, the first free one taking the next span. Lane 0 of unit u is thread u + 1.
    std::vector<std::vector<uint64_t>> laneEnd(host::kNumTraceUnits);
    auto thread = [](uint32_t unit, size_t lane) { return int(1 + unit + size_t(host::kNumTraceUnits) * lane); };
    std::string spans;
    for (const hw::InsnSpan& sp : ss.run.spans) {
      if (sp.insn >= seg.insns.size() || sp.unit >= uint32_t(host::kNumTraceUnits))
        throw Error(m.source, "segment " + std::to_string(ss.segment) + ": a span of instruction " + std::to_string(sp.insn) +
                                  " on unit " + std::to_string(sp.unit) + ", which the segment or the trace port does not have");
      std::vector<uint64_t>& ends = laneEnd[sp.unit];
      size_t lane = 0;
      while (lane < ends.size() && ends[lane] > sp.begin) ++lane;
      if (lane == ends.size()) ends.push_back(0);
      ends[lane] = sp.end;
      const hw::Insn& in = seg.insns[sp.insn];
      const int li = sp.insn < ss.insnLayer.size() ? ss.insnLayer[sp.insn] : -1;
      const std::string name = hw::mnemonic(in) + (in.opcode == hw::Opcode::kGemm && in.reset ? " (reset)" : "");
      spans += ",{\"name\":\"" + name + "\",\"cat\":\"instruction\",\"ph\":\"X\",\"pid\":" + std::to_string(pid) +
               ",\"tid\":" + std::to_string(thread(sp.unit, lane)) + ",\"ts\":" + micros(start + double(sp.begin) / clockMhz) +
               ",\"dur\":" + micros(double(sp.end - sp.begin) / clockMhz) + ",\"args\":{\"insn\":" + std::to_string(sp.insn) +
               ",\"unit\":\"" + host::kTraceUnitNames[sp.unit] + "\",\"layer\":\"" +
               (li >= 0 ? escape(m.layers[size_t(li)].name) : std::string()) + "\",\"begin_cycle\":" +
               std::to_string(sp.begin) + ",\"end_cycle\":" + std::to_string(sp.end) + "}}";
    }
    for (uint32_t u = 0; u < uint32_t(host::kNumTraceUnits); ++u)
      for (size_t lane = 0; lane < std::max<size_t>(laneEnd[u].size(), 1); ++lane) {
        const std::string label = host::kTraceUnitNames[u] + (lane ? " (" + std::to_string(lane + 1) + ")" : std::string());
        events += meta("thread_name", pid, thread(u, lane), "\"name\":\"" + label + "\"");
        events += meta("thread_sort_index", pid, thread(u, lane), "\"sort_index\":" + std::to_string(16 * u + lane));
      }
    events += spans;
    segmentsJson += std::string(k ? "," : "") + "{\"segment\":" + std::to_string(ss.segment) + ",\"pid\":" + std::to_string(pid) +
                    ",\"cycles\":" + std::to_string(ss.run.cycles) + ",\"instructions\":" + std::to_string(ss.run.insnCount) +
                    ",\"start_us\":" + micros(start) + "}";
  }
  const char* note = "";
  switch (r.spans) {
    case ModelRunResult::Spans::kRecorded: note = "one process per segment run, a track per unit"; break;
    case ModelRunResult::Spans::kUnsupported:
      note = "none: the target reports no per-instruction spans (it is untimed, like fsim)";
      break;
    case ModelRunResult::Spans::kNotAsked: note = "none: the run did not record per-instruction spans"; break;
  }
  if (m.segments.empty()) note = "none: the model has no accelerator segment";
  const bool recorded = r.spans == ModelRunResult::Spans::kRecorded;
  return "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock_mhz\":" + std::to_string(clockMhz) + ",\"source\":\"" +
         escape(m.source) + "\",\"instruction_tracks\":" + (recorded ? "true" : "false") +
         ",\"instruction_tracks_note\":\"" + note + "\",\"segments\":[" + segmentsJson + "]},\"traceEvents\":[" + events + "]}\n";
}

ModelRunResult runReference(const CompiledModel& m, const std::map<std::string, Tensor>& inputs) {
  return executeSteps(m, inputs, [&](int si, std::map<std::string, Tensor>& values, ModelRunResult&) {
    const Segment& seg = m.segments[size_t(si)];
    for (int li : seg.layers) {
      const LayerInfo& l = m.layers[size_t(li)];
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
      if (p.op.kind == OpKind::kAdd || p.op.residual) data.input2 = int8Values(lookup(m, values, l.tensors.at(1)));
      const std::vector<int8_t> out = reference(p.op, data);
      const std::string& name = l.tensors.back();
      values[name] = int8Tensor(name, {p.op.batch, p.op.outChannels, p.op.outHeight(), p.op.outWidth()}, out);
    }
    for (const SegmentTensor& st : seg.outputs) values[st.tensor].shape = st.shape;
  });
}

}  // namespace tessera::compiler
