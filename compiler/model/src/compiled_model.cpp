// The compiled-model file: every field written little-endian and read back with bounds checks (docs/graph.md).
#include <cstring>

#include "tessera/compiler/model/compiled_model.h"
#include "tessera/compiler/op/binary_io.h"
#include "tessera/hw/isa.h"
#include "tessera/support/error.h"
#include "tessera/support/file_io.h"

namespace tessera::compiler::model {

using op::BinaryReader;
using op::BinaryWriter;
using op::fnv1a;
using op::openChecked;
using ir::Attribute;
using ir::DType;
using ir::Node;
using ir::Tensor;

namespace {

constexpr char kMagic[8] = {'T', 'S', 'R', 'A', 'M', 'D', 'L', '1'};
constexpr uint32_t kVersion = 1;
// Sanity bound on any element count read from a file before allocating for it.
constexpr uint64_t kMaxElements = uint64_t(1) << 32;

void writeStrings(BinaryWriter& w, const std::vector<std::string>& v) {
  w.u32(uint32_t(v.size()));
  for (const auto& s : v) w.str(s);
}

std::vector<std::string> readStrings(BinaryReader& r, const char* what) {
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

void writeTensor(BinaryWriter& w, const Tensor& t) {
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

Tensor readTensor(BinaryReader& r) {
  Tensor t;
  t.name = r.str("tensor name");
  const uint32_t dt = r.u32("tensor dtype");
  if (dt > uint32_t(DType::kBool)) throw Error(r.origin(), "tensor '" + t.name + "' has an invalid dtype");
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

void writeNode(BinaryWriter& w, const Node& n) {
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

Node readNode(BinaryReader& r) {
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

void writeSegmentTensor(BinaryWriter& w, const SegmentTensor& t) {
  w.str(t.tensor);
  w.u64(t.offset);
  for (int v : {t.n, t.c, t.h, t.w, t.block}) w.u32(uint32_t(v));
  w.u64(t.bytes);
  w.u32(uint32_t(t.shape.size()));
  for (int64_t d : t.shape) w.u64(uint64_t(d));
}

SegmentTensor readSegmentTensor(BinaryReader& r) {
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
  BinaryWriter w;
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
  w.u64(fnv1a(w.b.data(), w.b.size()));
  return w.b;
}

CompiledModel CompiledModel::deserialize(const std::vector<uint8_t>& bytes, const std::string& origin) {
  BinaryReader r = openChecked(bytes, kMagic, kVersion, "compiled model", origin);
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

Placement placementOf(const CompiledModel& m) {
  Placement p;
  for (const LayerInfo& l : m.layers) {
    ++p.layers;
    p.macs += l.macs;
    if (!l.onAccelerator) continue;
    ++p.acceleratorLayers;
    p.acceleratorMacs += l.macs;
  }
  return p;
}

double predictedCycles(const CompiledModel& m) {
  double cycles = 0;
  for (const LayerInfo& l : m.layers)
    if (l.onAccelerator) cycles += l.estimatedCycles;
  return cycles;
}

}  // namespace tessera::compiler::model
