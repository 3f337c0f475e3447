// Unit tests of tessera::hw::Dram: the simulated physical address space and its allocator.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"

#include "error_of.h"

namespace {

using namespace tessera::hw;
using tessera::Error;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

using tessera::testutil::errorOf;

class DramTest : public ::testing::Test {
 protected:
  Config cfg = Config::load("small");
  Dram dram{cfg};
};

TEST_F(DramTest, SpanCoversAtLeastTheAllocatorRange) {
  EXPECT_GE(dram.span(), Dram::kAllocLimit);
  EXPECT_EQ(dram.span() % Dram::kPageBytes, 0u);
  // small: the largest element is 16 B; the highest index a LOAD can reach is
  // (2^32-1) + (2^16-2)*(2^16-1) + (2^16-1) = 8589803520, times 16 B = 137436856320 (page aligned).
  EXPECT_EQ(Dram::expressibleSpan(cfg), 137436856320ull);
  EXPECT_LE(dram.span(), Dram::expressibleSpan(cfg));
}

TEST_F(DramTest, AllocReturnsPageAlignedContiguousBlocks) {
  const uint64_t P = Dram::kPageBytes;
  uint64_t a = dram.alloc(1);
  uint64_t b = dram.alloc(5000);  // rounds up to 2 pages
  uint64_t c = dram.alloc(P);
  uint64_t d = dram.alloc(0);     // still one page
  // First fit from 4096 upward: 4096, 8192 (+8192), 16384, 20480.
  EXPECT_EQ(a, 4096u);
  EXPECT_EQ(b, 8192u);
  EXPECT_EQ(c, 16384u);
  EXPECT_EQ(d, 20480u);
  for (uint64_t x : {a, b, c, d}) {
    EXPECT_NE(x, 0u);
    EXPECT_GE(x, Dram::kAllocBase);
    EXPECT_EQ(x % P, 0u);
  }
  EXPECT_EQ(dram.liveAllocations(), 4u);
  uint64_t size = 0;
  EXPECT_EQ(dram.allocationContaining(b + 5000, &size), b);
  EXPECT_EQ(size, 2 * P);
  EXPECT_EQ(dram.allocationContaining(b + 2 * P), c);
  EXPECT_EQ(dram.allocationContaining(100), 0u);
  EXPECT_EQ(dram.allocationContaining(d + P), 0u);
}

TEST_F(DramTest, FreedBlocksAreReusedAndCoalesced) {
  const uint64_t P = Dram::kPageBytes;
  uint64_t a = dram.alloc(P), b = dram.alloc(P), c = dram.alloc(P), d = dram.alloc(P);
  ASSERT_EQ(a, 4096u);
  ASSERT_EQ(d, 16384u);
  dram.free(b);
  EXPECT_EQ(dram.alloc(P), b);  // the hole is reused first
  dram.free(b);
  dram.free(c);  // coalesces with the free block before it: [8192, 16384)
  EXPECT_EQ(dram.alloc(2 * P), b);
  dram.free(b);  // a two-page block
  dram.free(a);  // coalesces with the block after it: [4096, 16384)
  EXPECT_EQ(dram.alloc(3 * P), a);
  EXPECT_EQ(dram.liveAllocations(), 2u);
  // Three-way: free the outer two first, then the middle one joins them.
  dram.free(a);
  uint64_t x = dram.alloc(P), y = dram.alloc(P), z = dram.alloc(P);
  ASSERT_EQ(x, 4096u);
  ASSERT_EQ(y, 8192u);
  ASSERT_EQ(z, 12288u);
  dram.free(x);
  dram.free(z);
  dram.free(y);
  EXPECT_EQ(dram.alloc(3 * P), 4096u);
  // d was never freed: the next allocation goes after it.
  EXPECT_EQ(dram.alloc(P), d + P);
}

TEST_F(DramTest, FreshAllocationsReadAsZero) {
  uint64_t a = dram.alloc(64);
  std::vector<uint8_t> ones(64, 0xAB);
  dram.write(a, ones.data(), ones.size(), "test");
  dram.free(a);
  uint64_t b = dram.alloc(64);
  ASSERT_EQ(b, a);
  std::vector<uint8_t> back(64, 0xFF);
  dram.read(b, back.data(), back.size(), "test");
  EXPECT_EQ(back, std::vector<uint8_t>(64, 0));
}

TEST_F(DramTest, WriteReadAndHostPointers) {
  uint64_t a = dram.alloc(100);
  const char msg[] = "tessera";
  dram.write(a + 10, msg, sizeof msg, "test");
  char back[sizeof msg] = {};
  dram.read(a + 10, back, sizeof msg, "test");
  EXPECT_STREQ(back, "tessera");
  uint8_t* p = dram.at(a + 10, sizeof msg, "test");
  EXPECT_EQ(std::memcmp(p, msg, sizeof msg), 0);
  EXPECT_EQ(dram.raw(a + 10), p);
  EXPECT_TRUE(dram.contains(p));
  EXPECT_EQ(dram.physOf(p), a + 10);
  int local = 0;
  EXPECT_FALSE(dram.contains(&local));
}

TEST_F(DramTest, AllocFailsWithZeroWhenNoRangeFits) {
  // Everything below 4 GiB except page 0 is allocatable: one byte more does not fit. (Not
  // allocating the whole range here: alloc() zero-fills, which would commit 4 GiB of host memory.)
  EXPECT_EQ(dram.alloc(Dram::kAllocLimit - Dram::kAllocBase + 1), 0u);
  EXPECT_EQ(dram.liveAllocations(), 0u);
  EXPECT_EQ(dram.alloc(1), Dram::kAllocBase);
}

TEST_F(DramTest, PageZeroIsUnmapped) {
  std::string msg = errorOf([&] { dram.at(0, 1, "null load"); });
  EXPECT_TRUE(Contains(msg, "null load"));
  EXPECT_TRUE(Contains(msg, "page 0"));
  EXPECT_TRUE(Contains(errorOf([&] { dram.at(4095, 2, "w"); }), "page 0"));
  uint8_t b = 0;
  EXPECT_TRUE(Contains(errorOf([&] { dram.read(100, &b, 1, "r"); }), "page 0"));
  EXPECT_TRUE(Contains(errorOf([&] { dram.write(0, &b, 1, "w"); }), "page 0"));
  EXPECT_NO_THROW(dram.at(4096, 1, "ok"));
}

TEST_F(DramTest, RangePastSpanIsRejected) {
  const uint64_t s = dram.span();
  std::string msg = errorOf([&] { dram.at(s - 1, 2, "far"); });
  EXPECT_TRUE(Contains(msg, "far"));
  EXPECT_TRUE(Contains(msg, "outside"));
  EXPECT_TRUE(Contains(errorOf([&] { dram.at(s + 4096, 1, "far"); }), "outside"));
  // A huge length must not wrap around.
  EXPECT_TRUE(Contains(errorOf([&] { dram.at(8192, ~uint64_t(0) - 4096, "wrap"); }), "outside"));
  EXPECT_NO_THROW(dram.at(s - 1, 1, "last byte"));
}

TEST_F(DramTest, DoubleFreeAndBadFreeThrow) {
  uint64_t a = dram.alloc(3 * Dram::kPageBytes);
  dram.free(a);
  std::string msg = errorOf([&] { dram.free(a); });
  EXPECT_TRUE(Contains(msg, "double free"));
  EXPECT_TRUE(Contains(msg, "0x1000"));
  uint64_t b = dram.alloc(2 * Dram::kPageBytes);
  EXPECT_TRUE(Contains(errorOf([&] { dram.free(b + Dram::kPageBytes); }), "does not start"));
  EXPECT_TRUE(Contains(errorOf([&] { dram.free(0); }), "does not start"));
  EXPECT_EQ(dram.liveAllocations(), 1u);
}

TEST(Dram, EveryShippedConfigConstructs) {
  for (const auto& name : shippedConfigNames()) {
    SCOPED_TRACE(name);
    Config cfg = Config::load(name);
    Dram dram(cfg);
    EXPECT_GE(dram.span(), Dram::kAllocLimit);
    uint64_t a = dram.alloc(1);
    EXPECT_EQ(a, Dram::kAllocBase);
  }
}

}  // namespace
