// Fuzz harness: arbitrary bytes as a compiled-model (.tsm) file.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "checksummed.h"
#include "tessera/compiler/model/compiled_model.h"
#include "tessera/support/error.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  compiler::model::CompiledModel m;
  try {
    m = compiler::model::CompiledModel::deserialize(fuzz::withChecksum(data, size), "fuzz.tsm");
  } catch (const Error&) {
    return 0;
  }
  // An accepted model is one the writer could have written: it must read back the same.
  const std::vector<uint8_t> written = m.serialize();
  try {
    if (compiler::model::CompiledModel::deserialize(written, "written back").serialize() != written) {
      std::fprintf(stderr, "tsm_file: a compiled model does not read back as written\n");
      std::abort();
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "tsm_file: an accepted model, written back, is refused: %s\n", e.what());
    std::abort();
  }
  return 0;
}
