// tessera-host-gen: writes the host-interface contract's C++ header and docs table (used by the build).
#include <cstdio>
#include <string>

#include "tessera/support/error.h"
#include "tessera/hw/host_interface.h"
#include "write_if_changed.h"

using tessera::hw::tools::writeIfChanged;

namespace {

int usage() {
  std::fprintf(stderr, "usage: tessera-host-gen [--cpp OUT.h] [--md OUT.md]\n"
                       "Generates the host-interface contract's C++ header and docs table from hw/.\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") { usage(); return 0; }
    if (i + 1 >= argc) { std::fprintf(stderr, "tessera-host-gen: %s needs a value\n", a.c_str()); return usage(); }
    std::string path = argv[++i], text;
    if (a == "--cpp") text = tessera::hw::generateHostCppHeader();
    else if (a == "--md") text = tessera::hw::generateHostDocsTable();
    else { std::fprintf(stderr, "tessera-host-gen: unknown argument '%s'\n", a.c_str()); return usage(); }
    try {
      writeIfChanged(path, text);
    } catch (const tessera::Error& e) {
      std::fprintf(stderr, "tessera-host-gen: error: %s\n", e.what());
      return 1;
    }
  }
  return 0;
}
