// Fuzz harness: arbitrary bytes as an ONNX model file through the importer and the host executor's shape inference.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/compiler/host/executor.h"
#include "tessera/compiler/onnx/import.h"
#include "tessera/support/error.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    compiler::ir::Graph g = compiler::onnx::importOnnxBytes(std::vector<uint8_t>(data, data + size), "fuzz.onnx");
    // Shape inference also computes every node whose inputs are constants (the shape chains
    // exporters write), so attributes and constant inputs reach the operators' own checks.
    compiler::host::inferShapes(g);
  } catch (const Error&) {
  }
  return 0;
}
