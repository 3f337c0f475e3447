// The framing of the compiler's file formats (programs, compiled models): little-endian writing, bounds-checked reading, checksum and version.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/support/error.h"

namespace tessera::compiler::op {

inline uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

class BinaryWriter {
 public:
  void u32(uint32_t v) { for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i))); }
  void u64(uint64_t v) { for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i))); }
  void f64(double d) {
    uint64_t v;
    std::memcpy(&v, &d, 8);
    u64(v);
  }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    b.insert(b.end(), s.begin(), s.end());
  }
  void bytes(const std::vector<uint8_t>& d) {
    u64(d.size());
    b.insert(b.end(), d.begin(), d.end());
  }
  std::vector<uint8_t> b;
};

// Reads with a bounds check on every field, so a truncated or corrupt file is an error naming
// the field, never a read past the end.
class BinaryReader {
 public:
  BinaryReader(const std::vector<uint8_t>& b, size_t end, std::string origin)
      : b_(b), end_(end), origin_(std::move(origin)) {}
  const uint8_t* take(uint64_t n, const char* what) {
    if (n > end_ - pos_)
      throw Error(origin_, std::string("truncated at byte ") + std::to_string(pos_) + " reading " + what);
    const uint8_t* p = b_.data() + pos_;
    pos_ += n;
    return p;
  }
  uint32_t u32(const char* what) {
    const uint8_t* p = take(4, what);
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  }
  uint64_t u64(const char* what) {
    const uint8_t* p = take(8, what);
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
    return v;
  }
  double f64(const char* what) {
    const uint64_t v = u64(what);
    double d;
    std::memcpy(&d, &v, 8);
    return d;
  }
  std::string str(const char* what) {
    const uint32_t n = u32(what);
    const uint8_t* p = take(n, what);
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  std::vector<uint8_t> bytes(const char* what) {
    const uint64_t n = u64(what);
    const uint8_t* p = take(n, what);
    return std::vector<uint8_t>(p, p + n);
  }
  size_t pos() const { return pos_; }
  const std::string& origin() const { return origin_; }

 private:
  const std::vector<uint8_t>& b_;
  size_t end_, pos_ = 0;
  std::string origin_;
};

// A file of the compiler's formats: 8-byte magic, 32-bit version, body, 64-bit FNV-1a checksum of
// all that precedes it. Checks magic, checksum and version (naming `what` and the expected magic),
// and returns a reader positioned after the version and bounded before the checksum.
inline BinaryReader openChecked(const std::vector<uint8_t>& bytes, const char (&magic)[8], uint32_t version,
                                const std::string& what, const std::string& origin) {
  if (bytes.size() < 8 + 4 + 8 || std::memcmp(bytes.data(), magic, 8) != 0)
    throw Error(origin, "not a Tessera " + what + " (bad magic; expected " + std::string(magic, 8) + ")");
  const size_t body = bytes.size() - 8;
  uint64_t stored = 0;
  for (int i = 7; i >= 0; --i) stored = stored << 8 | bytes[body + size_t(i)];
  if (stored != fnv1a(bytes.data(), body)) throw Error(origin, "checksum mismatch: the file is corrupt or truncated");
  BinaryReader r(bytes, body, origin);
  r.take(8, "magic");
  const uint32_t found = r.u32("version");
  if (found != version)
    throw Error(origin, what + " format version " + std::to_string(found) + " is not supported (this build reads " +
                            std::to_string(version) + ")");
  return r;
}

}  // namespace tessera::compiler::op
