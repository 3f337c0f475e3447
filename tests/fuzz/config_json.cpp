// Fuzz harness: arbitrary text as a config JSON; an accepted config must round-trip through toJson and derive an ISA and DRAM span.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  hw::Config cfg;
  try {
    cfg = hw::Config::fromJson(text, "fuzz.json");
  } catch (const Error&) {
    return 0;
  }
  const std::string json = cfg.toJson();
  try {
    const hw::Config again = hw::Config::fromJson(json, "fuzz.json (written back)");
    if (again.toJson() != json) {
      std::fprintf(stderr, "config_json: toJson is not stable:\n%s\n%s\n", json.c_str(), again.toJson().c_str());
      std::abort();
    }
    const hw::Isa isa(cfg);
    (void)isa;
    (void)hw::Dram::expressibleSpan(cfg);
  } catch (const Error& e) {
    std::fprintf(stderr, "config_json: an accepted config's own JSON is refused: %s\n%s\n", e.what(), json.c_str());
    std::abort();
  }
  return 0;
}
