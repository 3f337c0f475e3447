// Unit tests of tsim's AXI4 DRAM model, driven cycle by cycle without any RTL.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/tsim/axi_memory.h"

namespace {

using tessera::hw::Config;
using tessera::hw::Dram;
using tessera::tsim::AxiMasterSignals;
using tessera::tsim::AxiMemory;
using tessera::tsim::MemoryTiming;

// A master that is only a set of signals; tests change them between edges as RTL would.
struct Bench {
  explicit Bench(const char* config, MemoryTiming timing = MemoryTiming())
      : cfg(Config::load(config)), dram(cfg), mem(dram, cfg.busBytes, timing) {
    in.arsize = in.awsize = static_cast<uint8_t>(__builtin_ctz(cfg.busBytes));
    in.arburst = in.awburst = 1;
    in.wdata = wdata.data();
    for (uint32_t i = 0; i < 4096; ++i) dram.raw(0x2000)[i] = static_cast<uint8_t>(i * 7 + 1);
  }
  void clock() { mem.clock(in); }
  // Holds AR valid until it is accepted.
  void read(uint32_t addr, uint8_t len) {
    in.araddr = addr;
    in.arlen = len;
    in.arvalid = true;
    bool accepted = false;
    while (!accepted) {
      accepted = mem.outputs().arready;
      clock();
    }
    in.arvalid = false;
  }
  struct Beat {
    uint64_t cycle;
    std::vector<uint8_t> data;
    uint8_t resp;
    bool last;
  };
  // Collects `n` R beats with RREADY high, giving up after `limit` cycles.
  std::vector<Beat> collect(size_t n, uint64_t limit = 10000) {
    std::vector<Beat> beats;
    in.rready = true;
    for (uint64_t c = 0; c < limit && beats.size() < n; ++c) {
      const auto& o = mem.outputs();
      if (o.rvalid) beats.push_back({mem.cycle(), std::vector<uint8_t>(o.rdata, o.rdata + cfg.busBytes), o.rresp, o.rlast});
      clock();
    }
    return beats;
  }
  Config cfg;
  Dram dram;
  AxiMemory mem;
  AxiMasterSignals in;
  std::vector<uint8_t> wdata = std::vector<uint8_t>(128, 0);
};

TEST(AxiMemory, FirstReadBeatAfterLatencyThenOneBeatPerCycle) {
  Bench b("default");  // 64-bit bus, 8 bytes per cycle: one beat per cycle
  b.read(0x2000, 3);   // accepted at the edge that ends cycle 0
  auto beats = b.collect(4);
  ASSERT_EQ(beats.size(), 4u);
  EXPECT_EQ(beats[0].cycle, 40u) << "40 cycles from the AR handshake to the first R beat";
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(beats[i].cycle, 40u + i) << "beats back to back";
    EXPECT_EQ(beats[i].resp, 0);
    EXPECT_EQ(beats[i].last, i == 3);
    EXPECT_EQ(0, std::memcmp(beats[i].data.data(), b.dram.raw(0x2000 + 8 * i), 8)) << "beat " << i;
  }
  EXPECT_EQ(b.mem.readBeats(), 4u);
  EXPECT_TRUE(b.mem.idle());
}

TEST(AxiMemory, BandwidthLimitsBeatsOnANarrowBus) {
  {
    Bench b("small");  // 32-bit bus at the default 8 bytes per cycle: the bus is the limit
    b.read(0x2000, 15);
    auto beats = b.collect(16);
    ASSERT_EQ(beats.size(), 16u);
    EXPECT_EQ(beats.back().cycle - beats.front().cycle, 15u);
  }
  {
    MemoryTiming t;
    t.bytesPerCycle = 2;  // half a 4-byte beat per cycle
    Bench b("small", t);
    b.read(0x2000, 15);
    auto beats = b.collect(16);
    ASSERT_EQ(beats.size(), 16u);
    EXPECT_EQ(beats.back().cycle - beats.front().cycle, 30u) << "one beat every two cycles";
    EXPECT_EQ(0, std::memcmp(beats[5].data.data(), b.dram.raw(0x2000 + 4 * 5), 4));
  }
}

TEST(AxiMemory, OutstandingReadsAnswerInOrderWithLatencyOverlapped) {
  Bench b("default");
  b.read(0x2000, 1);
  b.read(0x2100, 2);
  b.read(0x2800, 0);
  auto beats = b.collect(6);
  ASSERT_EQ(beats.size(), 6u);
  const uint32_t addrs[6] = {0x2000, 0x2008, 0x2100, 0x2108, 0x2110, 0x2800};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(beats[i].cycle, 40u + i) << "the later bursts' latency overlaps the first's";
    EXPECT_EQ(0, std::memcmp(beats[i].data.data(), b.dram.raw(addrs[i]), 8)) << "beat " << i;
  }
  EXPECT_TRUE(beats[1].last && beats[4].last && beats[5].last && !beats[2].last);
}

TEST(AxiMemory, AcceptsOnlyMaxBurstsReads) {
  MemoryTiming t;
  t.maxBursts = 2;
  Bench b("default", t);
  b.read(0x2000, 0);
  b.read(0x2008, 0);
  EXPECT_FALSE(b.mem.outputs().arready) << "two bursts in flight";
  EXPECT_EQ(b.mem.readBurstsInFlight(), 2u);
  b.collect(1);
  EXPECT_TRUE(b.mem.outputs().arready) << "the first burst completed";
}

TEST(AxiMemory, WriteBurstHonoursStrobesAndAnswersAfterLatency) {
  Bench b("default");
  b.in.awaddr = 0x3000;
  b.in.awlen = 1;
  b.in.awvalid = true;
  b.clock();  // AW accepted
  b.in.awvalid = false;
  std::memset(b.dram.raw(0x3000), 0xee, 16);
  uint64_t lastBeat = 0;
  for (int beat = 0; beat < 2;) {
    for (int i = 0; i < 8; ++i) b.wdata[i] = static_cast<uint8_t>(0x10 * beat + i);
    b.in.wstrb[0] = beat == 0 ? 0xff : 0x0f;
    b.in.wlast = beat == 1;
    b.in.wvalid = true;
    const bool taken = b.mem.outputs().wready;
    lastBeat = b.mem.cycle();
    b.clock();
    if (taken) ++beat;
  }
  b.in.wvalid = false;
  const uint8_t want[16] = {0, 1, 2, 3, 4, 5, 6, 7, 0x10, 0x11, 0x12, 0x13, 0xee, 0xee, 0xee, 0xee};
  EXPECT_EQ(0, std::memcmp(b.dram.raw(0x3000), want, 16)) << "strobed-off lanes keep their bytes";
  EXPECT_EQ(b.mem.writeBeats(), 2u);
  b.in.bready = true;
  while (!b.mem.outputs().bvalid && b.mem.cycle() < 1000) b.clock();
  EXPECT_EQ(b.mem.cycle(), lastBeat + 40) << "B 40 cycles after the last W beat";
  EXPECT_EQ(b.mem.outputs().bresp, AxiMemory::kOkay);
  b.clock();
  EXPECT_TRUE(b.mem.idle());
}

TEST(AxiMemory, Page0IsAnsweredWithSlvErrAndRecorded) {
  Bench b("default");
  b.read(0x10, 1);
  auto beats = b.collect(2);
  ASSERT_EQ(beats.size(), 2u);
  EXPECT_EQ(beats[0].resp, AxiMemory::kSlvErr);
  EXPECT_EQ(beats[1].resp, AxiMemory::kSlvErr);
  EXPECT_NE(b.mem.firstError().find("read burst at 0x10"), std::string::npos) << b.mem.firstError();
  EXPECT_NE(b.mem.firstError().find("page 0"), std::string::npos) << b.mem.firstError();
  EXPECT_FALSE(b.mem.violated()) << "an error response is not a protocol violation";

  Bench w("default");
  w.in.awaddr = 0x800;
  w.in.awvalid = true;
  w.clock();
  w.in.awvalid = false;
  std::fill(w.wdata.begin(), w.wdata.end(), 0x5a);
  w.in.wstrb[0] = 0xff;
  w.in.wlast = w.in.wvalid = w.in.bready = true;
  w.clock();
  w.in.wvalid = false;
  while (!w.mem.outputs().bvalid && w.mem.cycle() < 1000) w.clock();
  EXPECT_EQ(w.mem.outputs().bresp, AxiMemory::kSlvErr);
  EXPECT_NE(w.mem.firstError().find("write burst at 0x800"), std::string::npos) << w.mem.firstError();
}

TEST(AxiMemory, FaultPageInjectsErrorsOnItsPageOnly) {
  MemoryTiming t;
  t.faultPage = 0x3010;  // the page 0x3000..0x3fff
  Bench b("default", t);
  b.read(0x2ff8, 0);  // the page before: fine
  b.read(0x3ff8, 0);  // the last beat of the faulty page
  auto beats = b.collect(2);
  ASSERT_EQ(beats.size(), 2u);
  EXPECT_EQ(beats[0].resp, AxiMemory::kOkay);
  EXPECT_EQ(beats[1].resp, AxiMemory::kSlvErr);
  EXPECT_EQ(b.mem.firstErrorAddress(), 0x3ff8u);
  EXPECT_NE(b.mem.firstError().find("errors are injected"), std::string::npos) << b.mem.firstError();
}

TEST(AxiMemory, BurstCrossing4KiBIsAViolation) {
  Bench b("default");
  b.in.araddr = 0x2ff8;
  b.in.arlen = 1;  // beats at 0x2ff8 and 0x3000
  b.in.arvalid = true;
  b.clock();
  ASSERT_TRUE(b.mem.violated());
  EXPECT_NE(b.mem.violation().find("crosses the 4 KiB boundary at 0x3000"), std::string::npos) << b.mem.violation();
}

TEST(AxiMemory, WrongBurstTypeOrSizeIsAViolation) {
  Bench b("default");
  b.in.araddr = 0x2000;
  b.in.arburst = 2;  // WRAP
  b.in.arvalid = true;
  b.clock();
  EXPECT_NE(b.mem.violation().find("burst type 2"), std::string::npos) << b.mem.violation();

  Bench s("default");
  s.in.araddr = 0x2000;
  s.in.arsize = 2;  // 4-byte beats on an 8-byte bus
  s.in.arvalid = true;
  s.clock();
  EXPECT_NE(s.mem.violation().find("full bus width"), std::string::npos) << s.mem.violation();
}

TEST(AxiMemory, MisplacedWlastIsAViolation) {
  Bench b("default");
  b.in.awaddr = 0x3000;
  b.in.awlen = 2;
  b.in.awvalid = true;
  b.clock();
  b.in.awvalid = false;
  b.in.wstrb[0] = 0xff;
  b.in.wvalid = b.in.wlast = true;  // WLAST on the first of three beats
  while (!b.mem.outputs().wready) b.clock();
  b.clock();
  ASSERT_TRUE(b.mem.violated());
  EXPECT_NE(b.mem.violation().find("WLAST on beat 1"), std::string::npos) << b.mem.violation();
}

TEST(AxiMemory, ValidDroppedBeforeReadyIsAViolation) {
  MemoryTiming t;
  t.maxBursts = 1;
  Bench b("default", t);
  b.read(0x2000, 0);
  b.in.araddr = 0x2040;
  b.in.arvalid = true;  // offered while the memory is full
  b.clock();
  EXPECT_FALSE(b.mem.violated());
  b.in.arvalid = false;  // withdrawn before arready: illegal
  b.clock();
  ASSERT_TRUE(b.mem.violated());
  EXPECT_NE(b.mem.violation().find("changed before arready"), std::string::npos) << b.mem.violation();
}

TEST(AxiMemory, RejectsImpossibleTiming) {
  Config cfg = Config::load("default");
  Dram dram(cfg);
  MemoryTiming t;
  t.readLatency = 0;
  EXPECT_THROW(AxiMemory(dram, cfg.busBytes, t), tessera::Error);
  t = MemoryTiming();
  t.maxBursts = 0;
  EXPECT_THROW(AxiMemory(dram, cfg.busBytes, t), tessera::Error);
}

}  // namespace
