// The CLI's number, address and range argument parsers (cli_args.h).
#include "cli_args.h"

#include <cstdio>

#include "tessera/support/error.h"
#include "tessera/support/format.h"

namespace tessera::cli {

namespace {

}  // namespace

uint64_t parseNumber(const std::string& text, const std::string& what) {
  if (text.empty()) throw Error(what, "empty number");
  size_t i = 0;
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) { base = 16; i = 2; }
  uint64_t v = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    int d = c >= '0' && c <= '9' ? c - '0' : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
          : base == 16 && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) throw Error(what, "'" + text + "' is not a decimal or 0x-hex number");
    if (v > (~uint64_t(0) - d) / base) throw Error(what, "'" + text + "' is too large");
    v = v * base + d;
  }
  return v;
}

InsnRange parseInsnRange(const std::string& spec) {
  const std::string what = "--insn " + spec;
  const auto colon = spec.find(':');
  if (colon == std::string::npos) throw Error(what, "expected ADDR:COUNT");
  InsnRange r;
  r.addr = parseNumber(spec.substr(0, colon), what + ": address");
  const uint64_t count = parseNumber(spec.substr(colon + 1), what + ": count");
  if (count == 0 || count > 0xffffffffull) throw Error(what, "count must be in [1, 2^32)");
  // Checked here, before any target sizes buffers by COUNT: past the limit no target can fetch.
  if (r.addr >= kInsnAddressLimit || count > (kInsnAddressLimit - r.addr) / 16)
    throw Error(what, "the instruction stream [" + hex(r.addr) + ", " + hex(r.addr + count * 16) + ") reaches past " +
                          hex(kInsnAddressLimit) + " (instruction addresses are 32-bit); from this address at most " +
                          std::to_string(r.addr >= kInsnAddressLimit ? 0 : (kInsnAddressLimit - r.addr) / 16) +
                          " instructions fit");
  r.count = static_cast<uint32_t>(count);
  return r;
}

LoadSpec parseLoadSpec(const std::string& spec) {
  const auto at = spec.rfind('@');
  if (at == std::string::npos || at == 0) throw Error("--load " + spec, "expected FILE@ADDR");
  LoadSpec l;
  l.file = spec.substr(0, at);
  l.addr = parseNumber(spec.substr(at + 1), "--load " + spec + ": address");
  return l;
}

DumpSpec parseDumpSpec(const std::string& spec) {
  const std::string what = "--dump " + spec;
  const auto c1 = spec.find(':');
  const auto c2 = c1 == std::string::npos ? std::string::npos : spec.find(':', c1 + 1);
  if (c2 == std::string::npos) throw Error(what, "expected ADDR:BYTES:FILE");
  DumpSpec d;
  d.addr = parseNumber(spec.substr(0, c1), what + ": address");
  d.bytes = parseNumber(spec.substr(c1 + 1, c2 - c1 - 1), what + ": size");
  d.file = spec.substr(c2 + 1);
  if (d.addr + d.bytes < d.addr) throw Error(what, "the range's end lies past 2^64");
  if (d.file.empty()) throw Error(what, "missing file name");
  return d;
}

}  // namespace tessera::cli
