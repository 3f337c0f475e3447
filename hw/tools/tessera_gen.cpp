// tessera-gen: writes the generated headers for one configuration (used by the build).
#include <cstdio>
#include <string>

#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/generate.h"
#include "write_if_changed.h"

using tessera::hw::tools::writeIfChanged;

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: tessera-gen --config FILE|NAME [--cpp OUT.h] [--hls OUT.h] [--sv OUT.svh] [--tcl OUT.tcl]\n"
               "Generates the headers every layer includes from one hardware configuration.\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config, cpp, hls, sv, tcl;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") { usage(); return 0; }
    if (i + 1 >= argc) { std::fprintf(stderr, "tessera-gen: %s needs a value\n", a.c_str()); return usage(); }
    std::string v = argv[++i];
    if (a == "--config") config = v;
    else if (a == "--cpp") cpp = v;
    else if (a == "--hls") hls = v;
    else if (a == "--sv") sv = v;
    else if (a == "--tcl") tcl = v;
    else { std::fprintf(stderr, "tessera-gen: unknown argument '%s'\n", a.c_str()); return usage(); }
  }
  if (config.empty()) { std::fprintf(stderr, "tessera-gen: --config is required\n"); return usage(); }
  try {
    auto cfg = tessera::hw::Config::load(config);
    if (!cpp.empty()) writeIfChanged(cpp, tessera::hw::generateCppHeader(cfg));
    if (!hls.empty()) writeIfChanged(hls, tessera::hw::generateHlsHeader(cfg));
    if (!sv.empty()) writeIfChanged(sv, tessera::hw::generateSvInclude(cfg));
    if (!tcl.empty()) writeIfChanged(tcl, tessera::hw::generateTcl(cfg));
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera-gen: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
