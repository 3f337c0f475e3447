// tessera-host-gen: writes the host-interface contract's C++ header and docs table (used by the build).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tessera/hw/host_interface.h"

namespace {

// Rewrites `path` only when its content changes, so the build does not cascade.
bool writeIfChanged(const std::string& path, const std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str() == text) return true;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return false;
  out << text;
  return static_cast<bool>(out);
}

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
    if (!writeIfChanged(path, text)) {
      std::fprintf(stderr, "tessera-host-gen: error: %s: cannot write generated file\n", path.c_str());
      return 1;
    }
  }
  return 0;
}
