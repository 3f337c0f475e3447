// Unit tests of the C-simulation ap_int.h: narrow values against built-in integers, wide values against a byte-wise reference.
#include <ap_int.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

TEST(ApInt, NarrowWrapAndSign) {
  ap_uint<8> a = 250;
  a += 10;
  EXPECT_EQ(a.to_uint(), 4u);
  ap_int<8> b = 127;
  b += 1;
  EXPECT_EQ(b.to_int(), -128);
  ap_int<8> c = ap_uint<8>(0xff);
  EXPECT_EQ(c.to_int(), -1);
  EXPECT_EQ(ap_uint<4>(-1).to_uint(), 15u);
  EXPECT_EQ(ap_int<32>(ap_int<8>(-5)).to_int(), -5);   // sign extension
  EXPECT_EQ(ap_uint<32>(ap_int<8>(-5)).to_uint(), 0xfffffffbu);
  EXPECT_EQ(sizeof(ap_uint<32>), 4u);
  EXPECT_EQ(sizeof(ap_uint<64>), 8u);
  EXPECT_EQ(sizeof(ap_uint<2048>), 256u);
}

TEST(ApInt, ResultWidthsGrowLikeXilinx) {
  ap_uint<8> a = 200, b = 100;
  auto s = a + b;  // 9 bits: no wrap
  EXPECT_EQ(decltype(s)::width, 9);
  EXPECT_EQ(s.to_uint(), 300u);
  auto p = a * b;
  EXPECT_EQ(decltype(p)::width, 16);
  EXPECT_EQ(p.to_uint(), 20000u);
  ap_int<8> x = -128, y = -128;
  EXPECT_EQ((x * y).to_int(), 16384);
  auto d = ap_uint<8>(1) - ap_uint<8>(2);
  EXPECT_EQ(d.to_int64(), 511);  // unsigned difference wraps modulo 2^9
  EXPECT_EQ((ap_int<8>(1) - ap_uint<8>(2)).to_int(), -1);
}

TEST(ApInt, ComparisonsMixSignedness) {
  EXPECT_TRUE(ap_int<8>(-1) < ap_uint<8>(0));
  EXPECT_TRUE(ap_uint<8>(255) > ap_int<8>(-1));
  EXPECT_TRUE(ap_int<32>(-5) < 0);
  EXPECT_TRUE(ap_uint<100>(3) == 3);
  EXPECT_TRUE(ap_uint<100>(3) != ap_uint<7>(4));
  EXPECT_TRUE(ap_int<200>(-1) <= ap_int<3>(-1));
  EXPECT_TRUE(ap_int<200>(-1) >= ap_int<3>(-1));
}

TEST(ApInt, ShiftsKeepTheType) {
  ap_int<32> a = -256;
  EXPECT_EQ((a >> 4).to_int(), -16);  // arithmetic
  EXPECT_EQ((ap_uint<32>(0x80000000u) >> 31).to_uint(), 1u);
  EXPECT_EQ((ap_int<32>(1) << 31).to_int(), INT32_MIN);
  EXPECT_EQ((ap_int<32>(3) << 32).to_int(), 0);  // shifted out of the width
  ap_uint<200> w = 1;
  w <<= 150;
  EXPECT_TRUE(w[150]);
  EXPECT_FALSE(w[149]);
  EXPECT_EQ((w >> 150).to_uint64(), 1u);
  EXPECT_EQ((ap_int<200>(-1) >> 199).to_int(), -1);
}

TEST(ApInt, BitAndRangeAccess) {
  ap_uint<16> a = 0;
  a[3] = true;
  EXPECT_EQ(a.to_uint(), 8u);
  a.range(15, 8) = 0xab;
  EXPECT_EQ(a.to_uint(), 0xab08u);
  EXPECT_EQ(a.range(11, 4).to_uint(), 0xb0u);
  ap_int<8> s = a.range(15, 8);  // reinterpreted as signed
  EXPECT_EQ(s.to_int(), int8_t(0xab));
  ap_uint<2048> row = 0;
  row.range(1000, 937) = ap_uint<64>(0x0123456789abcdefull);
  EXPECT_EQ(row.range(1000, 937).to_uint64(), 0x0123456789abcdefull);
  EXPECT_EQ(row.range(944, 937).to_uint(), 0xefu);
  row.range(7, 0) = -1;
  EXPECT_EQ(row.range(7, 0).to_uint(), 0xffu);
  EXPECT_FALSE(row[8]);
  const ap_uint<12> hi = 0xabc;
  const ap_uint<4> lo = 0xd;
  EXPECT_EQ(hi.concat(lo).to_uint(), 0xabcdu);
}

// Reference arithmetic modulo 2^W on little-endian bytes, independent of the header's limb code.
using Bytes = std::vector<uint8_t>;

Bytes refAdd(const Bytes& a, const Bytes& b, bool sub) {
  Bytes r(a.size());
  int carry = sub ? 1 : 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const int s = a[i] + (sub ? 255 - b[i] : b[i]) + carry;
    r[i] = uint8_t(s);
    carry = s >> 8;
  }
  return r;
}

Bytes refMul(const Bytes& a, const Bytes& b) {
  Bytes r(a.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    unsigned carry = 0;
    for (size_t j = 0; i + j < a.size(); ++j) {
      const unsigned t = unsigned(a[i]) * b[j] + r[i + j] + carry;
      r[i + j] = uint8_t(t);
      carry = t >> 8;
    }
  }
  return r;
}

template <int W>
ap_uint<W> fromBytes(const Bytes& b) {
  ap_uint<W> v = 0;
  for (int i = 0; i < W / 8; ++i) v.range(8 * i + 7, 8 * i) = b[i];
  return v;
}

template <int W>
Bytes toBytes(const ap_int_base<W, false>& v) {
  Bytes b(W / 8);
  for (int i = 0; i < W / 8; ++i) b[i] = uint8_t(v.range(8 * i + 7, 8 * i).to_uint());
  return b;
}

template <int W>
void wideArithmetic(uint32_t seed) {
  std::mt19937 rng(seed);
  for (int t = 0; t < 200; ++t) {
    Bytes a(W / 8), b(W / 8);
    for (auto& x : a) x = uint8_t(rng());
    for (auto& x : b) x = uint8_t(rng());
    if (t % 4 == 0) std::fill(a.begin(), a.end(), 0xff);  // carries through every limb
    const ap_uint<W> x = fromBytes<W>(a), y = fromBytes<W>(b);
    EXPECT_EQ(toBytes<W>(ap_uint<W>(x + y)), refAdd(a, b, false)) << "W=" << W << " t=" << t;
    EXPECT_EQ(toBytes<W>(ap_uint<W>(x - y)), refAdd(a, b, true)) << "W=" << W << " t=" << t;
    EXPECT_EQ(toBytes<W>(ap_uint<W>(x * y)), refMul(a, b)) << "W=" << W << " t=" << t;
    // Bitwise, shifts and ordering against the same bytes.
    Bytes andB(a.size());
    for (size_t i = 0; i < a.size(); ++i) andB[i] = a[i] & b[i];
    EXPECT_EQ(toBytes<W>(ap_uint<W>(x & y)), andB);
    const int sh = int(rng() % W);
    ap_uint<W> back = (x << sh) >> sh;
    ap_uint<W> mask = ap_uint<W>(~ap_uint<W>(0)) >> sh;
    EXPECT_EQ(toBytes<W>(back), toBytes<W>(ap_uint<W>(x & mask))) << "shift " << sh;
    bool less = false;
    for (int i = W / 8 - 1; i >= 0; --i)
      if (a[i] != b[i]) { less = a[i] < b[i]; break; }
    EXPECT_EQ(x < y, less);
    EXPECT_TRUE(ap_uint<W>(ap_uint<W>(x + y) - y) == x);  // the difference is W+1 bits wide: truncate it
  }
}

TEST(ApInt, WideArithmeticAgainstReference) {
  wideArithmetic<64>(1);
  wideArithmetic<128>(2);
  wideArithmetic<192>(3);
  wideArithmetic<2048>(4);
  wideArithmetic<4096>(5);
}

TEST(ApInt, WideSignedValues) {
  ap_int<4096> m = -1;
  EXPECT_TRUE(m < 0);
  EXPECT_EQ((m * m).to_int(), 1);
  ap_int<4096> big = ap_int<4096>(1) << 4000;
  EXPECT_TRUE(big > 0);
  EXPECT_TRUE(-big < 0);
  EXPECT_EQ(ap_int<4096>(-big + big).to_bool(), false);
  EXPECT_EQ((ap_int<4096>(-7) >> 1).to_int(), -4);
}

}  // namespace
