// The graph IR's helpers: dtype names, tensor descriptions, attribute access, graph queries and the text dump.
#include "tessera/compiler/ir/graph.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

#include "tessera/support/error.h"

namespace tessera::compiler::ir {

const char* dtypeName(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
  }
  return "invalid";
}

bool isInteger(DType t) { return t != DType::kFloat32; }

size_t elementBytes(DType t) {
  switch (t) {
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kBool: return 1;
    case DType::kFloat32:
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
  }
  return 1;
}

void Tensor::appendElements(const uint8_t* b, int64_t count) {
  const size_t width = ir::elementBytes(dtype);
  for (int64_t i = 0; i < count; ++i, b += width) {
    uint64_t v = 0;
    for (size_t k = width; k-- > 0;) v = v << 8 | b[k];
    switch (dtype) {
      case DType::kFloat32: {
        const uint32_t bits = static_cast<uint32_t>(v);
        float f;
        std::memcpy(&f, &bits, 4);
        floats.push_back(f);
        break;
      }
      case DType::kUInt8: ints.push_back(int64_t(uint8_t(v))); break;
      case DType::kInt8: ints.push_back(int64_t(int8_t(v))); break;
      case DType::kInt32: ints.push_back(int64_t(int32_t(v))); break;
      case DType::kInt64: ints.push_back(int64_t(v)); break;
      case DType::kBool: ints.push_back(v != 0); break;
    }
  }
}

std::vector<uint8_t> Tensor::elementBytes() const {
  const size_t width = ir::elementBytes(dtype);
  const size_t n = dtype == DType::kFloat32 ? floats.size() : ints.size();
  std::vector<uint8_t> out(n * width);
  for (size_t i = 0; i < n; ++i) {
    uint64_t v;
    if (dtype == DType::kFloat32) {
      uint32_t bits;
      std::memcpy(&bits, &floats[i], 4);
      v = bits;
    } else {
      v = uint64_t(ints[i]);
    }
    for (size_t k = 0; k < width; ++k) out[i * width + k] = static_cast<uint8_t>(v >> (8 * k));
  }
  return out;
}

namespace {

// Six significant digits: enough to tell scales apart in a dump, and the same text on every host.
std::string formatFloat(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

template <typename T, typename Format>
std::string formatList(const std::vector<T>& values, Format format, size_t limit = SIZE_MAX) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i == limit) {
      out += ",... (" + std::to_string(values.size()) + " values)";
      break;
    }
    if (i) out += ",";
    out += format(values[i]);
  }
  return out + "]";
}

std::string formatInt(int64_t v) { return std::to_string(v); }

const char* kindName(Attribute::Kind k) {
  switch (k) {
    case Attribute::Kind::kInt: return "an int";
    case Attribute::Kind::kFloat: return "a float";
    case Attribute::Kind::kString: return "a string";
    case Attribute::Kind::kInts: return "a list of ints";
    case Attribute::Kind::kFloats: return "a list of floats";
    case Attribute::Kind::kTensor: return "a tensor";
  }
  return "invalid";
}

// The attribute `name` of `node` if present, after checking it is of the kind the caller reads.
const Attribute* findAttr(const Node& node, const std::string& name, Attribute::Kind expected) {
  auto it = node.attrs.find(name);
  if (it == node.attrs.end()) return nullptr;
  if (it->second.kind != expected)
    throw Error(node.opType + " '" + node.name + "'", "attribute '" + name + "' is " +
                                                          kindName(it->second.kind) + ", expected " +
                                                          kindName(expected));
  return &it->second;
}

std::string formatAttr(const Attribute& a) {
  switch (a.kind) {
    case Attribute::Kind::kInt: return std::to_string(a.i);
    case Attribute::Kind::kFloat: return formatFloat(a.f);
    case Attribute::Kind::kString: return "\"" + a.s + "\"";
    case Attribute::Kind::kInts: return formatList(a.ints, formatInt);
    case Attribute::Kind::kFloats: return formatList(a.floats, formatFloat);
    case Attribute::Kind::kTensor: return a.tensor ? a.tensor->describe() : "<no tensor>";
  }
  return "?";
}

}  // namespace

int64_t Tensor::elements() const {
  // Saturating: a malformed file's shape must not wrap into a small count.
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  return n;
}

std::string Tensor::describe() const {
  std::string out = dtypeName(dtype);
  if (!hasShape && shape.empty()) {
    out += "[?]";
  } else {
    out += "[";
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i) out += ",";
      // A dimension not yet known (shape inference still to run) shows as '?'.
      out += shape[i] < 0 ? "?" : std::to_string(shape[i]);
    }
    out += "]";
  }
  if (isConstant) out += " const";
  if (quant.present()) {
    out += " q(";
    if (quant.perTensor()) {
      out += "scale=" + formatFloat(quant.scale[0]);
      out += ", zp=" + (quant.zeroPoint.empty() ? std::string("0") : std::to_string(quant.zeroPoint[0]));
    } else {
      // Per-channel parameters can run to hundreds of values; the first few identify them.
      constexpr size_t kShown = 4;
      out += "axis=" + std::to_string(quant.axis);
      out += ", scale=" + formatList(quant.scale, formatFloat, kShown);
      out += ", zp=" + formatList(quant.zeroPoint, [](int32_t v) { return std::to_string(v); }, kShown);
    }
    out += ")";
  }
  return out;
}

int64_t Node::attrInt(const std::string& attr, int64_t fallback) const {
  const Attribute* a = findAttr(*this, attr, Attribute::Kind::kInt);
  return a ? a->i : fallback;
}

float Node::attrFloat(const std::string& attr, float fallback) const {
  const Attribute* a = findAttr(*this, attr, Attribute::Kind::kFloat);
  return a ? a->f : fallback;
}

std::string Node::attrString(const std::string& attr, const std::string& fallback) const {
  const Attribute* a = findAttr(*this, attr, Attribute::Kind::kString);
  return a ? a->s : fallback;
}

std::vector<int64_t> Node::attrInts(const std::string& attr, const std::vector<int64_t>& fallback) const {
  const Attribute* a = findAttr(*this, attr, Attribute::Kind::kInts);
  return a ? a->ints : fallback;
}

std::string Node::label(int64_t opset) const {
  std::string op = domain.empty() ? opType : domain + "." + opType;
  return op + " '" + name + "' (opset " + std::to_string(opset) + ")";
}

Tensor& Graph::tensor(const std::string& tensorName) {
  auto it = tensors.find(tensorName);
  if (it == tensors.end()) throw Error(origin, "no tensor named '" + tensorName + "' in the graph");
  return it->second;
}

const Tensor& Graph::tensor(const std::string& tensorName) const {
  auto it = tensors.find(tensorName);
  if (it == tensors.end()) throw Error(origin, "no tensor named '" + tensorName + "' in the graph");
  return it->second;
}

int Graph::producer(const std::string& tensorName) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& out : nodes[i].outputs)
      if (out == tensorName) return static_cast<int>(i);
  return -1;
}

std::vector<int> Graph::consumers(const std::string& tensorName) const {
  std::vector<int> result;
  if (tensorName.empty()) return result;  // "" marks omitted inputs, never a real tensor
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& in : nodes[i].inputs)
      if (in == tensorName) {
        result.push_back(static_cast<int>(i));
        break;
      }
  return result;
}

void Graph::pruneTensors() {
  std::set<std::string> used(inputs.begin(), inputs.end());
  used.insert(outputs.begin(), outputs.end());
  for (const Node& n : nodes) {
    used.insert(n.inputs.begin(), n.inputs.end());
    used.insert(n.outputs.begin(), n.outputs.end());
  }
  for (auto it = tensors.begin(); it != tensors.end();) {
    if (used.count(it->first))
      ++it;
    else
      it = tensors.erase(it);
  }
}

std::string Graph::print() const {
  std::ostringstream out;
  auto value = [&](const std::string& tensorName) {
    if (tensorName.empty()) return std::string("<omitted>");
    auto it = tensors.find(tensorName);
    return "%" + tensorName + ": " + (it == tensors.end() ? std::string("<undefined>") : it->second.describe());
  };
  out << "graph '" << name << "' (opset " << opset;
  if (!origin.empty()) out << ", from " << origin;
  out << ")\n";
  out << "inputs:\n";
  for (const std::string& in : inputs) out << "  " << value(in) << "\n";
  out << "constants:\n";
  for (const auto& [tensorName, t] : tensors)
    if (t.isConstant) out << "  " << value(tensorName) << "\n";
  out << "nodes:\n";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    out << "  [" << i << "] " << n.label(opset) << "\n";
    for (const std::string& in : n.inputs) out << "      in  " << value(in) << "\n";
    for (const std::string& o : n.outputs) out << "      out " << value(o) << "\n";
    if (!n.attrs.empty()) {
      out << "      attrs";
      for (const auto& [attrName, a] : n.attrs) out << " " << attrName << "=" << formatAttr(a);
      out << "\n";
    }
  }
  out << "outputs:\n";
  for (const std::string& o : outputs) out << "  " << value(o) << "\n";
  if (!metadata.empty()) {
    out << "metadata:\n";
    for (const auto& [key, v] : metadata) out << "  " << key << " = " << v << "\n";
  }
  return out.str();
}

}  // namespace tessera::compiler::ir
