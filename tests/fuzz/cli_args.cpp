// Fuzz harness: arbitrary text through the CLI's number, address and range parsers, checking what they accept.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli_args.h"
#include "tessera/support/error.h"

namespace {

using namespace tessera;

[[noreturn]] void fail(const std::string& arg, const char* what) {
  std::fprintf(stderr, "cli_args: '%s': %s\n", arg.c_str(), what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string arg(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 4) {
      case 0: {
        const uint64_t v = cli::parseNumber(arg, "fuzz");
        // Accepted text is digits only (after 0x), and parses to the value it spells.
        const bool hex = arg.size() > 2 && arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X');
        const uint64_t again = std::strtoull(arg.c_str(), nullptr, hex ? 16 : 10);
        if (again != v) fail(arg, "parses to another value than strtoull's");
        break;
      }
      case 1: {
        const cli::InsnRange r = cli::parseInsnRange(arg);
        if (r.count == 0) fail(arg, "accepted with no instructions");
        if (r.addr + uint64_t(r.count) * 16 > cli::kInsnAddressLimit) fail(arg, "accepted past the address limit");
        break;
      }
      case 2: {
        const cli::LoadSpec l = cli::parseLoadSpec(arg);
        if (l.file.empty()) fail(arg, "accepted without a file name");
        break;
      }
      default: {
        const cli::DumpSpec d = cli::parseDumpSpec(arg);
        if (d.file.empty()) fail(arg, "accepted without a file name");
        if (d.addr + d.bytes < d.addr) fail(arg, "accepted a range that wraps");
        break;
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
