// The graph IR: tensors with shapes, dtypes and quantization parameters, and nodes in topological order.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tessera::compiler::ir {

// Element types the importer, the passes and the host executor handle.
// kBool holds 0 or 1 in `ints`, one byte per element in files and generated code.
enum class DType { kFloat32, kUInt8, kInt8, kInt32, kInt64, kBool };

// "float32", "uint8", "int8", "int32", "int64", "bool".
const char* dtypeName(DType t);
bool isInteger(DType t);
size_t elementBytes(DType t);

// Linear quantization: real = scale * (q - zeroPoint). One entry = per tensor; otherwise one per
// index of `axis` (per channel).
struct Quant {
  std::vector<float> scale;
  std::vector<int32_t> zeroPoint;
  int axis = -1;  // -1 per tensor

  bool present() const { return !scale.empty(); }
  bool perTensor() const { return scale.size() == 1; }
};

struct Tensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;  // empty: a scalar (when hasShape) or unknown (when not)
  bool hasShape = false;       // false until the importer or shape inference knows every dimension

  // Constant data (initializers, Constant nodes, folded values), row-major: float32 values in
  // `floats`, every integer type in `ints` (uint8/int8/int32/int64 all widen exactly).
  bool isConstant = false;
  std::vector<float> floats;
  std::vector<int64_t> ints;

  Quant quant;  // for int8/uint8 values that carry their own quantization (set by the passes)

  int64_t elements() const;  // product of the shape (1 for a scalar), INT64_MAX past it
  // Appends `count` little-endian elements of the tensor's dtype from `bytes` (files, C callers).
  void appendElements(const uint8_t* bytes, int64_t count);
  // The data as little-endian elements of the tensor's dtype.
  std::vector<uint8_t> elementBytes() const;
  // "float32[1,3,224,224]", with " const" and " q(scale=..., zp=...)" when they apply.
  std::string describe() const;
};

struct Attribute {
  enum class Kind { kInt, kFloat, kString, kInts, kFloats, kTensor } kind = Kind::kInt;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::shared_ptr<Tensor> tensor;
};

struct Node {
  std::string name;    // the file's node name, or "<opType>_<index>" when it has none
  std::string opType;  // ONNX operator names; passes add Tessera's own (docs/graph.md lists them)
  std::string domain;  // "" for the ONNX default domain
  std::vector<std::string> inputs;   // tensor names; "" marks an omitted optional input
  std::vector<std::string> outputs;
  std::map<std::string, Attribute> attrs;

  bool has(const std::string& attr) const { return attrs.count(attr) != 0; }
  int64_t attrInt(const std::string& attr, int64_t fallback) const;
  float attrFloat(const std::string& attr, float fallback) const;
  std::string attrString(const std::string& attr, const std::string& fallback) const;
  std::vector<int64_t> attrInts(const std::string& attr, const std::vector<int64_t>& fallback) const;
  // "Conv 'conv1' (opset 13)"-style label used by every diagnostic about the node.
  std::string label(int64_t opset) const;
};

struct Graph {
  std::string name;
  std::string origin;  // the file it came from, for diagnostics
  int64_t opset = 0;   // of the default ONNX domain
  std::map<std::string, Tensor> tensors;  // every value by name: inputs, constants, intermediates, outputs
  std::vector<Node> nodes;                // topological order
  std::vector<std::string> inputs;        // graph inputs in order (constants excluded)
  std::vector<std::string> outputs;
  std::map<std::string, std::string> metadata;  // the model's metadata_props

  Tensor& tensor(const std::string& name);  // throws tessera::Error naming the tensor if unknown
  const Tensor& tensor(const std::string& name) const;
  bool hasTensor(const std::string& name) const { return tensors.count(name) != 0; }
  // Index of the node producing `tensor`, or -1 (graph inputs, constants).
  int producer(const std::string& tensor) const;
  // Indices of the nodes reading `tensor`.
  std::vector<int> consumers(const std::string& tensor) const;
  // Drops tensors no node, input or output refers to.
  void pruneTensors();
  // The whole graph as text: inputs, constants (shape only), one line per node with its inputs'
  // and outputs' descriptions and attributes, outputs. Every pass's --print-after-all dump.
  std::string print() const;
};

}  // namespace tessera::compiler::ir
