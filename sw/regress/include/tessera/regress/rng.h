// Deterministic pseudo-random numbers for the regression generator, identical on every platform.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::regress {

// xoshiro256** seeded through splitmix64. The standard library's distributions are
// implementation-defined, so a seed would not reproduce the same program across compilers;
// every draw here is plain integer arithmetic.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      w = z ^ (z >> 31);
    }
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [lo, hi], both inclusive (lo <= hi). Multiply-shift: the bias is below 2^-64 per
  // draw, irrelevant here, and the result never depends on a rejection loop.
  uint64_t range(uint64_t lo, uint64_t hi) {
    const uint64_t span = hi - lo + 1;
    if (span == 0) return next();  // the full 64-bit range
    return lo + static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * span) >> 64);
  }
  int64_t srange(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(range(0, static_cast<uint64_t>(hi - lo)));
  }
  // True with probability percent/100.
  bool chance(uint32_t percent) { return range(0, 99) < percent; }
  // Index drawn with the given relative weights (not all zero).
  size_t weighted(const std::vector<uint32_t>& weights) {
    uint64_t total = 0;
    for (uint32_t w : weights) total += w;
    uint64_t r = range(0, total - 1);
    for (size_t i = 0; i < weights.size(); ++i) {
      if (r < weights[i]) return i;
      r -= weights[i];
    }
    return weights.size() - 1;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace tessera::regress
