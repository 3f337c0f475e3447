// The host register map over AXI4-Lite, register by register: reset values, the writable ones, and writes the read-only ones ignore.
//
// Built twice: for tsim (tests/tsim) and for tsim-cov (tests/coverage, TESSERA_TEST_COVERAGE set),
// where it is also the coverage regression's directed register test; tsim-cov then writes its
// counts to $TESSERA_TEST_COVERAGE_DIR (a temporary directory when unset).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tessera/gen/host_interface.h"
#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/tsim/simulator.h"

namespace {

namespace host = tessera::host;
using tessera::hw::Config;
using tessera::hw::Dram;
using tessera::tsim::Engine;
using tessera::tsim::Options;
using tessera::tsim::Simulator;

#ifdef TESSERA_TEST_COVERAGE
constexpr Engine kEngine = Engine::kCoverage;
#else
constexpr Engine kEngine = Engine::kVerilator;
#endif

Options engineOptions() {
  Options o;
#ifdef TESSERA_TEST_COVERAGE
  const char* dir = std::getenv("TESSERA_TEST_COVERAGE_DIR");
  o.coverage = dir && *dir ? dir : (std::filesystem::temp_directory_path() /
                                    ("tessera_register_map_cov_" + std::to_string(::getpid()))).string();
#endif
  return o;
}

// Every read-only register word of the map: the scalar ones and the per-module, per-queue and
// counter arrays.
std::vector<uint32_t> readOnlyWords() {
  std::vector<uint32_t> words = {host::kRegCycles, host::kRegInsnAddrHi, host::kRegFaultCause, host::kRegFaultInsn,
                                 host::kRegFaultInfo};
  for (int m = 0; m < host::kNumModules; ++m) {
    words.push_back(host::kStatusBase + 4 * m);
    words.push_back(host::kInsnBase + 4 * m);
  }
  for (int t = 0; t < host::kNumTokenQueues; ++t) words.push_back(host::kTokensBase + 4 * t);
  for (int q = 0; q < host::kNumInsnQueues; ++q) words.push_back(host::kQueueBase + 4 * q);
  for (int c = 0; c < 2 * host::kNumCounters; ++c) words.push_back(host::kCountersBase + 4 * c);
  return words;
}

class RegisterMap : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Simulator::unsupportedReason(cfg, kEngine).empty())
      GTEST_SKIP() << Simulator::unsupportedReason(cfg, kEngine);
  }
  Config cfg = Config::load("default");
  Dram dram{cfg};
};

TEST_F(RegisterMap, EveryRegisterReadsItsResetValue) {
  Simulator sim(cfg, dram, engineOptions(), kEngine);
  EXPECT_EQ(sim.readRegister(host::kRegCtrl), 0u);
  EXPECT_EQ(sim.readRegister(host::kRegInsnCount), 0u);
  EXPECT_EQ(sim.readRegister(host::kRegInsnAddr), 0u);
  // Idle modules (state code 0) at instruction 0, empty queues, zero counters.
  for (uint32_t w : readOnlyWords()) EXPECT_EQ(sim.readRegister(w), 0u) << "register " << w;
}

TEST_F(RegisterMap, WritesReachOnlyTheWritableRegistersUnderTheirStrobes) {
  Simulator sim(cfg, dram, engineOptions(), kEngine);
  // Every bit of both ways: the complements first, then the values the checks below keep.
  sim.writeRegister(host::kRegInsnCount, 0xedcba987);
  sim.writeRegister(host::kRegInsnAddr, 0x6543210f);
  EXPECT_EQ(sim.readRegister(host::kRegInsnCount), 0xedcba987u);
  EXPECT_EQ(sim.readRegister(host::kRegInsnAddr), 0x6543210fu);
  sim.writeRegister(host::kRegInsnCount, 0x12345678);
  sim.writeRegister(host::kRegInsnAddr, 0x9abcdef0);
  EXPECT_EQ(sim.readRegister(host::kRegInsnCount), 0x12345678u);
  EXPECT_EQ(sim.readRegister(host::kRegInsnAddr), 0x9abcdef0u);
  // Every other word, and words past the map, take the write (it is acknowledged) and keep their value.
  std::vector<uint32_t> words = readOnlyWords();
  words.push_back(0x05c);  // reserved, between the queue words and the counters
  words.push_back(0xffc);  // the map's last word
  for (uint32_t w : words) {
    sim.writeRegister(w, 0xa5a5a5a5);
    EXPECT_EQ(sim.readRegister(w), 0u) << "register " << w << " is read-only";
  }
  EXPECT_EQ(sim.readRegister(host::kRegInsnCount), 0x12345678u) << "a write elsewhere changed INSN_COUNT";
  EXPECT_EQ(sim.readRegister(host::kRegInsnAddr), 0x9abcdef0u) << "a write elsewhere changed INSN_ADDR";
  EXPECT_EQ(sim.readRegister(host::kRegCtrl), 0u) << "nothing started";
}

}  // namespace
