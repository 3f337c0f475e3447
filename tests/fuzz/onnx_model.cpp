// Fuzz harness: arbitrary bytes as an ONNX model file through the importer.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/compiler/onnx/import.h"
#include "tessera/support/error.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)compiler::onnx::importOnnxBytes(std::vector<uint8_t>(data, data + size), "fuzz.onnx");
  } catch (const Error&) {
  }
  return 0;
}
