// ONNX files (read with Debian's ONNX and protobuf libraries) into the graph IR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/compiler/ir/graph.h"

namespace tessera::compiler::onnx {

// Reads an ONNX model of opset 11 to 17. Initializers become constants; graph inputs need static
// shapes. Throws tessera::Error naming the file and the node, tensor or field on anything it cannot
// read (truncated or corrupt files, unsupported element types, external data, dynamic shapes,
// undefined tensors).
ir::Graph importOnnx(const std::string& path);
// The same for a model file's bytes already in memory; `origin` names it in errors.
ir::Graph importOnnxBytes(const std::vector<uint8_t>& bytes, const std::string& origin);

// Reads a serialized TensorProto (the ONNX node tests' input_N.pb / output_N.pb).
ir::Tensor readOnnxTensor(const std::string& path);

}  // namespace tessera::compiler::onnx
