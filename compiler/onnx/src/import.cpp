// The ONNX importer: ModelProto -> ir::Graph with every field checked and every error naming where.
#include "tessera/compiler/onnx/import.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <set>

#include "tessera/support/error.h"
#include "tessera/support/file_io.h"

namespace tessera::compiler::onnx {

using ir::Attribute;
using ir::DType;
using ir::Graph;
using ir::Node;
using ir::Tensor;

namespace {

constexpr int64_t kMinOpset = 11, kMaxOpset = 17;
// Larger tensors than this are refused before allocating (a corrupt size field, not a model).
constexpr int64_t kMaxElements = int64_t(1) << 31;

DType dtypeOf(int32_t onnxType, const std::string& where) {
  switch (onnxType) {
    case ::onnx::TensorProto::FLOAT: return DType::kFloat32;
    case ::onnx::TensorProto::UINT8: return DType::kUInt8;
    case ::onnx::TensorProto::INT8: return DType::kInt8;
    case ::onnx::TensorProto::INT32: return DType::kInt32;
    case ::onnx::TensorProto::INT64: return DType::kInt64;
    case ::onnx::TensorProto::BOOL: return DType::kBool;
    default: break;
  }
  throw Error(where, "element type " + std::to_string(onnxType) + " (" +
                         ::onnx::TensorProto_DataType_Name(static_cast<::onnx::TensorProto_DataType>(onnxType)) +
                         ") is not supported (float32, uint8, int8, int32, int64, bool are)");
}

Tensor tensorFrom(const ::onnx::TensorProto& p, const std::string& where) {
  Tensor t;
  t.name = p.name();
  const std::string at = where + ": tensor '" + p.name() + "'";
  if (p.data_location() == ::onnx::TensorProto::EXTERNAL)
    throw Error(at, "uses external data files, which are not supported (save the model with its data inside)");
  t.dtype = dtypeOf(p.data_type(), at);
  t.hasShape = true;
  t.isConstant = true;
  int64_t n = 1;
  for (int64_t d : p.dims()) {
    if (d < 0) throw Error(at, "has a negative dimension " + std::to_string(d));
    t.shape.push_back(d);
    if (d && n > kMaxElements / d) throw Error(at, "is implausibly large");
    n *= d;
  }
  if (p.has_raw_data()) {
    const std::string& raw = p.raw_data();
    if (raw.size() != size_t(n) * ir::elementBytes(t.dtype))
      throw Error(at, "raw_data holds " + std::to_string(raw.size()) + " bytes, its shape needs " +
                          std::to_string(size_t(n) * ir::elementBytes(t.dtype)));
    t.appendElements(reinterpret_cast<const uint8_t*>(raw.data()), n);
    return t;
  }
  int64_t have = 0;
  if (t.dtype == DType::kFloat32) {
    t.floats.assign(p.float_data().begin(), p.float_data().end());
    have = p.float_data_size();
  } else if (t.dtype == DType::kInt64) {
    t.ints.assign(p.int64_data().begin(), p.int64_data().end());
    have = p.int64_data_size();
  } else {
    // uint8, int8, int32 and bool values live in int32_data.
    for (int32_t v : p.int32_data())
      t.ints.push_back(t.dtype == DType::kUInt8  ? int64_t(uint8_t(v))
                       : t.dtype == DType::kInt8 ? int64_t(int8_t(v))
                       : t.dtype == DType::kBool ? int64_t(v != 0)
                                                 : int64_t(v));
    have = p.int32_data_size();
  }
  if (have != n) throw Error(at, "holds " + std::to_string(have) + " values, its shape needs " + std::to_string(n));
  return t;
}

Attribute attributeFrom(const ::onnx::AttributeProto& a, const std::string& where) {
  Attribute r;
  switch (a.type()) {
    case ::onnx::AttributeProto::FLOAT: r.kind = Attribute::Kind::kFloat, r.f = a.f(); break;
    case ::onnx::AttributeProto::INT: r.kind = Attribute::Kind::kInt, r.i = a.i(); break;
    case ::onnx::AttributeProto::STRING: r.kind = Attribute::Kind::kString, r.s = a.s(); break;
    case ::onnx::AttributeProto::INTS: r.kind = Attribute::Kind::kInts, r.ints.assign(a.ints().begin(), a.ints().end()); break;
    case ::onnx::AttributeProto::FLOATS:
      r.kind = Attribute::Kind::kFloats, r.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case ::onnx::AttributeProto::TENSOR:
      r.kind = Attribute::Kind::kTensor;
      r.tensor = std::make_shared<Tensor>(tensorFrom(a.t(), where));
      break;
    default:
      throw Error(where, "attribute '" + a.name() + "' has type " +
                             ::onnx::AttributeProto_AttributeType_Name(a.type()) + ", which is not supported");
  }
  return r;
}

// A graph input's or output's declared type; inputs must have a static shape.
void declare(Graph& g, const ::onnx::ValueInfoProto& v, bool needShape, const std::string& where) {
  Tensor t;
  t.name = v.name();
  const std::string at = where + ": " + (needShape ? "input '" : "output '") + v.name() + "'";
  if (!v.type().has_tensor_type()) throw Error(at, "is not a tensor (sequences and maps are not supported)");
  const auto& tt = v.type().tensor_type();
  if (tt.elem_type() != 0) t.dtype = dtypeOf(tt.elem_type(), at);
  if (tt.has_shape()) {
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (!d.has_dim_value() || d.dim_value() <= 0) {
        if (!needShape) {
          t.shape.clear();
          break;
        }
        throw Error(at, "dimension " + std::to_string(i) + " is " +
                            (d.has_dim_param() ? "symbolic ('" + d.dim_param() + "')" : std::string("unknown")) +
                            "; Tessera compiles static shapes (export the model with a fixed batch and size)");
      }
      t.shape.push_back(d.dim_value());
    }
    t.hasShape = needShape || !t.shape.empty() || tt.shape().dim_size() == 0;
  } else if (needShape) {
    throw Error(at, "has no shape; Tessera compiles static shapes");
  }
  g.tensors[t.name] = t;
}

}  // namespace

Graph importOnnx(const std::string& path) { return importOnnxBytes(readBinaryFile(path), path); }

Graph importOnnxBytes(const std::vector<uint8_t>& bytes, const std::string& path) {
  if (bytes.empty()) throw Error(path, "is empty, not an ONNX model");
  ::onnx::ModelProto model;
  if (bytes.size() > size_t(INT32_MAX) || !model.ParseFromArray(bytes.data(), int(bytes.size())))
    throw Error(path, "is not a readable ONNX model (protobuf parsing failed: truncated or corrupt file?)");
  if (!model.has_graph()) throw Error(path, "holds no graph (not an ONNX model?)");
  Graph g;
  g.origin = path;
  g.name = model.graph().name();
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") g.opset = op.version();
  if (g.opset == 0) throw Error(path, "imports no opset of the default ONNX domain");
  if (g.opset < kMinOpset) {
    // An older model whose operators all kept their definition into opset 11 is an opset-11
    // model (QLinearConv, ConvInteger and friends have been unchanged since opset 10).
    static const std::set<std::string> unchanged = {"QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger",
                                                    "GlobalAveragePool", "QuantizeLinear", "DequantizeLinear",
                                                    "Relu", "Identity", "MatMul", "Add", "Sub", "Mul", "Transpose",
                                                    // unchanged since opset 6 (Erf: 9) but for added types
                                                    "Sigmoid", "HardSigmoid", "Tanh", "LeakyRelu", "Elu", "Erf",
                                                    // unchanged since opset 1
                                                    "Not",
                                                    // opset 9's, only deprecated by opset 10
                                                    "Upsample"};
    std::string blocker;
    for (const auto& n : model.graph().node())
      if (blocker.empty() && (!unchanged.count(n.op_type()) || !(n.domain().empty() || n.domain() == "ai.onnx")))
        blocker = n.op_type();
    if (blocker.empty()) {
      g.metadata["tessera.opset_note"] = "opset " + std::to_string(g.opset) + " read as 11 (its operators are unchanged)";
      g.opset = kMinOpset;
    } else {
      throw Error(path, "uses opset " + std::to_string(g.opset) + "; Tessera reads opsets " + std::to_string(kMinOpset) +
                            " to " + std::to_string(kMaxOpset) + " (" + blocker +
                            " changed since; convert the model with onnx.version_converter)");
    }
  }
  if (g.opset < kMinOpset || g.opset > kMaxOpset)
    throw Error(path, "uses opset " + std::to_string(g.opset) + "; Tessera reads opsets " + std::to_string(kMinOpset) +
                          " to " + std::to_string(kMaxOpset) + " (convert the model with onnx.version_converter)");
  for (const auto& kv : model.metadata_props()) g.metadata[kv.key()] = kv.value();
  const auto& gp = model.graph();
  std::set<std::string> defined;
  for (const auto& init : gp.initializer()) {
    if (init.name().empty()) throw Error(path, "an initializer has no name");
    g.tensors[init.name()] = tensorFrom(init, path);
    defined.insert(init.name());
  }
  for (const auto& in : gp.input()) {
    if (defined.count(in.name())) continue;  // an initializer listed as an input (older exporters): a constant
    declare(g, in, true, path);
    g.inputs.push_back(in.name());
    defined.insert(in.name());
  }
  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& np = gp.node(i);
    Node n;
    n.name = np.name().empty() ? np.op_type() + "_" + std::to_string(i) : np.name();
    n.opType = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    const std::string where = path + ": " + n.label(g.opset);
    for (const auto& in : np.input()) {
      if (!in.empty() && !defined.count(in))
        throw Error(where, "reads tensor '" + in + "', which no input, initializer or earlier node defines "
                                                  "(undefined, or the nodes are not in topological order)");
      n.inputs.push_back(in);
    }
    for (const auto& out : np.output()) {
      if (!out.empty()) {
        if (defined.count(out)) throw Error(where, "redefines tensor '" + out + "'");
        defined.insert(out);
        Tensor t;
        t.name = out;
        g.tensors[out] = t;
      }
      n.outputs.push_back(out);
    }
    for (const auto& a : np.attribute()) n.attrs[a.name()] = attributeFrom(a, where);
    g.nodes.push_back(std::move(n));
  }
  for (const auto& out : gp.output()) {
    if (!defined.count(out.name())) throw Error(path, "graph output '" + out.name() + "' is never computed");
    if (!g.tensor(out.name()).isConstant) {
      const Tensor computed = g.tensor(out.name());
      declare(g, out, false, path);
      g.tensors[out.name()].hasShape = false;
      (void)computed;
    }
    g.outputs.push_back(out.name());
  }
  if (g.outputs.empty()) throw Error(path, "the graph has no outputs");
  return g;
}

Tensor readOnnxTensor(const std::string& path) {
  const std::vector<uint8_t> bytes = readBinaryFile(path);
  ::onnx::TensorProto p;
  if (bytes.size() > size_t(INT32_MAX) || !p.ParseFromArray(bytes.data(), int(bytes.size())))
    throw Error(path, "is not a readable TensorProto (truncated or corrupt?)");
  Tensor t = tensorFrom(p, path);
  t.isConstant = false;
  return t;
}

}  // namespace tessera::compiler::onnx
