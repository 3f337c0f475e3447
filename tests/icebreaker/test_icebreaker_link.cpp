// The iCEBreaker host-link protocol against the verilated board top: every command, the error statuses, the resync rule and the link's own error reports.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim_board.h"
#if TESSERA_TEST_COVERAGE
#include <cstdlib>

#include "coverage_board_model.h"
#endif
#include "tessera/gen/host_interface.h"
#include "tessera/hw/asm.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"

namespace {

namespace ib = tessera::runtime::icebreaker;
using tessera::icebreaker_sim::SimChannel;
using tessera::icebreaker_sim::SimulatedBoard;

// The plain board model, or (tessera_icebreaker_coverage_tests, scripts/coverage.sh) the coverage
// one counting into $TESSERA_TEST_COVERAGE_DIR.
std::shared_ptr<SimulatedBoard> makeBoard() {
#if TESSERA_TEST_COVERAGE
  const char* dir = std::getenv("TESSERA_TEST_COVERAGE_DIR");
  if (!dir || !*dir) throw tessera::Error("TESSERA_TEST_COVERAGE_DIR", "not set: the directory the coverage goes to");
  return std::make_shared<SimulatedBoard>(tessera::icebreaker_sim::makeCoverageBoardModel(dir));
#else
  return std::make_shared<SimulatedBoard>();
#endif
}

class IcebreakerLink : public ::testing::Test {
 protected:
  IcebreakerLink() : channel_(makeBoard()), link_(channel_, std::chrono::milliseconds(2000)) {}
  // Hello still answers: the link is in sync.
  void expectInSync() {
    const ib::BoardInfo info = link_.hello();
    EXPECT_EQ(info.version, ib::kVersion);
  }
  SimChannel channel_;
  ib::Link link_;
};

TEST_F(IcebreakerLink, HelloDescribesTheBoard) {
  const ib::BoardInfo info = link_.hello();
  EXPECT_EQ(info.version, 1u);
  EXPECT_EQ(info.memBytes, 131072u);
  EXPECT_EQ(info.maxBlock, 256u);
  EXPECT_EQ(info.regAddrWidth, uint32_t(tessera::host::kAddrWidth));
}

TEST_F(IcebreakerLink, MemoryBlocksRoundTripAtAnyAlignment) {
  std::vector<uint8_t> data(700);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 37 + 11);
  link_.writeMem(0x1003, data.data(), data.size());  // three blocks, starting mid-word
  std::vector<uint8_t> back(data.size());
  link_.readMem(0x1003, back.data(), back.size());
  EXPECT_EQ(back, data);
  // The bytes around the written range were not touched by the byte-lane writes.
  uint8_t edge[2] = {0xee, 0xee};
  link_.readMem(0x1002, edge, 1);
  link_.readMem(0x1003 + 700, edge + 1, 1);
  EXPECT_EQ(edge[0], 0);
  EXPECT_EQ(edge[1], 0);
  // The last byte of the window is reachable.
  const uint8_t last = 0x5c;
  link_.writeMem(131071, &last, 1);
  uint8_t got = 0;
  link_.readMem(131071, &got, 1);
  EXPECT_EQ(got, last);
}

TEST_F(IcebreakerLink, RegistersReadBackThroughTheAcceleratorsHostPort) {
  link_.writeReg(tessera::host::kRegInsnCount, 0x1234);
  link_.writeReg(tessera::host::kRegInsnAddr, 0xabcd0);
  EXPECT_EQ(link_.readReg(tessera::host::kRegInsnCount), 0x1234u);
  EXPECT_EQ(link_.readReg(tessera::host::kRegInsnAddr), 0xabcd0u);
  EXPECT_EQ(link_.readReg(tessera::host::kRegCtrl), 0u);  // idle, never run
  // Every bit both ways, as tessera_top's register map test writes them.
  for (const uint32_t v : {0xffffffffu, 0u, 0xedcba987u, 0x6543210fu}) {
    link_.writeReg(tessera::host::kRegInsnCount, v);
    link_.writeReg(tessera::host::kRegInsnAddr, ~v);
    EXPECT_EQ(link_.readReg(tessera::host::kRegInsnCount), v);
    EXPECT_EQ(link_.readReg(tessera::host::kRegInsnAddr), ~v);
  }
}

TEST_F(IcebreakerLink, UnknownCommandIsRefusedAndTheLinkResyncs) {
  EXPECT_EQ(link_.transact(0x7f, 0, 0, {}, 0).status, ib::kBadCommand);
  EXPECT_EQ(link_.transact(0x00, 0, 0, {}, 0).status, ib::kBadCommand);
  expectInSync();
  EXPECT_EQ(link_.status().errors, 2u);
  EXPECT_EQ(link_.status().errors, 0u);  // reading the status cleared it
}

TEST_F(IcebreakerLink, BadLengthsAreRefused) {
  EXPECT_EQ(link_.transact(ib::kReadMem, 0x100, 0, {}, 0).status, ib::kBadLength);
  EXPECT_EQ(link_.transact(ib::kReadMem, 0x100, 257, {}, 257).status, ib::kBadLength);
  EXPECT_EQ(link_.transact(ib::kReadReg, 0, 2, {}, 2).status, ib::kBadLength);
  EXPECT_EQ(link_.transact(ib::kHello, 0, 1, {}, ib::kHelloBytes).status, ib::kBadLength);
  // A refused write's payload, sync bytes and all, is drained rather than read as requests.
  const std::vector<uint8_t> payload(300, ib::kRequestSync);
  EXPECT_EQ(link_.transact(ib::kWriteMem, 0x100, 300, payload, 0).status, ib::kBadLength);
  expectInSync();
  uint8_t byte = 0xff;
  link_.readMem(0x100, &byte, 1);
  EXPECT_EQ(byte, 0) << "the refused write wrote";
}

TEST_F(IcebreakerLink, AddressesOutsideTheWindowsAreRefused) {
  EXPECT_EQ(link_.transact(ib::kReadMem, 131072, 1, {}, 1).status, ib::kBadAddress);
  EXPECT_EQ(link_.transact(ib::kReadMem, 131071, 2, {}, 2).status, ib::kBadAddress);  // ends past it
  EXPECT_EQ(link_.transact(ib::kReadMem, 0xffffffff, 16, {}, 16).status, ib::kBadAddress);  // wraps in 32 bits
  EXPECT_EQ(link_.transact(ib::kWriteMem, 0x20000, 4, {1, 2, 3, 4}, 0).status, ib::kBadAddress);
  EXPECT_EQ(link_.transact(ib::kReadReg, 1u << tessera::host::kAddrWidth, 4, {}, 4).status, ib::kBadAddress);
  EXPECT_EQ(link_.transact(ib::kReadReg, 0x2, 4, {}, 4).status, ib::kBadAddress);  // not word aligned
  expectInSync();
  // The driver's own calls name the request and the status.
  try {
    link_.readReg(0x1002);
    FAIL() << "an unaligned register read succeeded";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("READ_REG 0x1002"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("BAD_ADDRESS"), std::string::npos) << e.what();
  }
}

TEST_F(IcebreakerLink, GarbageThenQuietThenHelloResyncs) {
  // Line noise, a stray sync byte and a cut-off request: all dropped once the line is quiet.
  const uint8_t garbage[] = {0x00, 0xff, 0x13, ib::kRequestSync, 0x04, 0x00};
  channel_.write(garbage, sizeof garbage);
  channel_.quiet(2 * ib::kIdleTimeoutBits);
  expectInSync();
  EXPECT_GE(link_.status().errors, 1u) << "the cut-off request was not counted";
  // A break on the line is a framing error the status reports.
  channel_.board().sendBreak(40 * tessera::icebreaker_sim::kClksPerBit);
  channel_.quiet(2 * ib::kIdleTimeoutBits);
  EXPECT_TRUE(link_.status().frameErrorSeen);
  expectInSync();
}

TEST_F(IcebreakerLink, AGlitchShorterThanHalfABitIsNotAStartBit) {
  link_.status();  // clears what an earlier request left
  // One cycle low, then a bit time high, then a request: the receiver re-samples the line half a
  // bit after the glitch, finds it high and is idle again when the request's start bit comes. Taken
  // for a start bit, the glitch would have the receiver mid-byte then, and the request would desync.
  channel_.board().sendBreak(1);
  channel_.quiet(1);
  expectInSync();
  const ib::BoardStatus s = link_.status();
  EXPECT_FALSE(s.frameErrorSeen);
  EXPECT_EQ(s.errors, 0u);
}

TEST_F(IcebreakerLink, WithoutTheQuietTimeGarbageDesyncsTheNextRequest) {
  // The resync rule is needed: a stray sync byte right before a request swallows its first bytes.
  const uint8_t stray = ib::kRequestSync;
  channel_.write(&stray, 1);
  uint8_t frame[] = {ib::kRequestSync, ib::kHello, 0, 0, 0, 0, 0, 0};
  channel_.write(frame, sizeof frame);
  uint8_t reply[2] = {};
  ASSERT_EQ(channel_.read(reply, 2, std::chrono::milliseconds(2000)), 2u);
  EXPECT_EQ(reply[0], ib::kReplySync);
  EXPECT_NE(reply[1], ib::kOk) << "the board read the stray byte's frame as a valid HELLO";
  channel_.quiet(2 * ib::kIdleTimeoutBits);
  expectInSync();
}

TEST_F(IcebreakerLink, TheErrorCountSaturatesAt255) {
  link_.status();
  for (int i = 0; i < 260; ++i) EXPECT_EQ(link_.transact(0x7f, 0, 0, {}, 0).status, ib::kBadCommand);
  EXPECT_EQ(link_.status().errors, 255u) << "the count wrapped or stopped short";
  EXPECT_EQ(link_.status().errors, 0u);
}

TEST_F(IcebreakerLink, WritesToReadOnlyAndReservedRegistersAreIgnored) {
  // Acknowledged and dropped: the last word of the register window, a counter, FAULT_INSN, CYCLES;
  // the writable INSN_COUNT and INSN_ADDR keep what was written to them.
  link_.writeReg(tessera::host::kRegInsnCount, 0x1234u);
  link_.writeReg(tessera::host::kRegInsnAddr, 0x5670u);
  link_.writeReg((1u << tessera::host::kAddrWidth) - 4, 0xffffffffu);
  link_.writeReg(tessera::host::kCountersBase + 8 * tessera::host::kCounterRetired, 0x1234u);
  link_.writeReg(tessera::host::kRegFaultInsn, 0xffffffffu);
  link_.writeReg(tessera::host::kRegCycles, 0xffffffffu);
  EXPECT_EQ(link_.readReg((1u << tessera::host::kAddrWidth) - 4), 0u);
  EXPECT_EQ(link_.readReg(tessera::host::kCountersBase + 8 * tessera::host::kCounterRetired), 0u);
  EXPECT_EQ(link_.readReg(tessera::host::kRegFaultInsn), 0u);
  EXPECT_EQ(link_.readReg(tessera::host::kRegCycles), 0u);
  EXPECT_EQ(link_.readReg(tessera::host::kRegCtrl), 0u) << "a write to a reserved word started a run";
  EXPECT_EQ(link_.readReg(tessera::host::kRegInsnCount), 0x1234u);
  EXPECT_EQ(link_.readReg(tessera::host::kRegInsnAddr), 0x5670u);
}

TEST_F(IcebreakerLink, NoReplyIsAClearErrorNotAHang) {
  // A link that never answers: a board held silent by a long break.
  channel_.board().sendBreak(uint64_t(1) << 40);
  ib::Link slow(channel_, std::chrono::milliseconds(200));
  try {
    slow.hello();
    FAIL() << "hello succeeded on a dead line";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no reply within 200 ms"), std::string::npos) << e.what();
  }
}

// The pico core's faults, raised by programs the driver would never send (it packs every range into
// the window): the host registers say what and where, as tessera_top's do.
class PicoFaults : public IcebreakerLink {
 protected:
  // Assembles `text` for config pico, writes it at `at` and starts it; returns CTRL once done or faulted.
  uint32_t run(const std::string& text, uint32_t at, uint32_t count = 0) {
    start(text, at, count);
    for (int poll = 0; poll < 200; ++poll) {
      const uint32_t ctrl = link_.readReg(tessera::host::kRegCtrl);
      if (ctrl & (tessera::host::kCtrlDone | tessera::host::kCtrlFault)) return ctrl;
    }
    ADD_FAILURE() << "no done or fault after 200 polls";
    return 0;
  }
  void start(const std::string& text, uint32_t at, uint32_t count = 0) {
    const uint32_t n = write(text, at);
    link_.writeReg(tessera::host::kRegInsnAddr, at);
    link_.writeReg(tessera::host::kRegInsnCount, count ? count : n);
    link_.writeReg(tessera::host::kRegCtrl, tessera::host::kCtrlStart);
  }
  // Assembles `text` for config pico and writes its instructions at `at`, its micro-ops at 0x4000;
  // returns the instruction count.
  uint32_t write(const std::string& text, uint32_t at) {
    const tessera::hw::Isa isa(tessera::hw::Config::load("pico"));
    const tessera::hw::Assembly prog = tessera::hw::assemble(isa, text, "test");
    std::vector<uint8_t> bytes(16 * prog.insns.size());
    for (size_t i = 0; i < prog.insns.size(); ++i) tessera::hw::Isa::rawToBytes(prog.insns[i], &bytes[16 * i]);
    link_.writeMem(at, bytes.data(), bytes.size());
    std::vector<uint8_t> uops(4 * prog.uops.size());
    for (size_t i = 0; i < prog.uops.size(); ++i)
      for (int b = 0; b < 4; ++b) uops[4 * i + b] = static_cast<uint8_t>(prog.uops[i] >> (8 * b));
    if (!uops.empty()) link_.writeMem(0x4000, uops.data(), uops.size());
    return static_cast<uint32_t>(prog.insns.size());
  }
  // Runs the whole 128 KiB memory as 8,192 instructions (its zeros are LOAD.UOPs of no elements)
  // with `last` as the last one and no FINISH: the stream ends stuck once all of it retired, and
  // the head position of `last`'s queue (INSN register of `module`) has walked to 8,192.
  void expectHeadWalksTheWholeMemory(const std::string& last, uint32_t module) {
    write(last + " deps=- sram_base=0 dram_base=0 y_size=0 x_size=0 x_stride=0\n", 0x1fff0);
    link_.writeReg(tessera::host::kRegInsnAddr, 0);
    link_.writeReg(tessera::host::kRegInsnCount, 0x2000);
    link_.writeReg(tessera::host::kRegCtrl, tessera::host::kCtrlStart);
    auto retired = [&] { return link_.readReg(tessera::host::kCountersBase + 8 * tessera::host::kCounterRetired); };
    for (int poll = 0; poll < 5000 && retired() != 0x2000; ++poll) {
    }
    EXPECT_EQ(retired(), 0x2000u);
    EXPECT_EQ(link_.readReg(tessera::host::kRegCtrl) & (tessera::host::kCtrlDone | tessera::host::kCtrlFault), 0u);
    EXPECT_EQ(link_.readReg(tessera::host::kInsnBase + 4 * module), 0x2000u) << last;
  }
  void expectFault(uint32_t cause, uint32_t insn, uint32_t info) {
    EXPECT_EQ(link_.readReg(tessera::host::kRegFaultCause), cause);
    EXPECT_EQ(link_.readReg(tessera::host::kRegFaultInsn), insn);
    EXPECT_EQ(link_.readReg(tessera::host::kRegFaultInfo), info);
  }
};

TEST_F(PicoFaults, ADeadlockWithAFullQueueStaysVisibleInTheStatusRegisters) {
  // Every LOAD pops a token compute never pushes: the first waits, fetch fills the load queue and
  // stalls on it, and nothing can move. The core neither finishes nor faults; the status words say
  // why, as tessera_top's do.
  const int depth = tessera::hw::Config::load("pico").insnQueueDepth;
  std::string text;
  for (int i = 0; i < depth + 2; ++i) text += "LOAD.INP deps=pop_next sram_base=0 dram_base=0x1000 y_size=1 x_size=1 x_stride=1\n";
  text += "FINISH\n";
  start(text, 0x4000);
  uint32_t fetch = 0;
  for (int poll = 0; poll < 200 && (fetch & 0xf) != tessera::host::kStateFetchQueueFull; ++poll)
    fetch = link_.readReg(tessera::host::kRegStatusFetch);
  EXPECT_EQ(fetch & 0xf, tessera::host::kStateFetchQueueFull) << "fetch status " << fetch;
  EXPECT_EQ(link_.readReg(tessera::host::kRegStatusLoad) & 0xf, tessera::host::kStateWaitPop);
  const uint32_t ctrl = link_.readReg(tessera::host::kRegCtrl);
  EXPECT_EQ(ctrl & (tessera::host::kCtrlDone | tessera::host::kCtrlFault), 0u) << "CTRL " << ctrl;
}

TEST_F(PicoFaults, LoadPastTheBoardMemoryIsADramReadFault) {
  // Input row 0x8000 starts at byte 0x20000, the first byte past the 128 KiB memory.
  EXPECT_EQ(run("LOAD.INP deps=- sram_base=0 dram_base=0x8000 y_size=1 x_size=1 x_stride=1\nFINISH\n", 0x1000),
            tessera::host::kCtrlFault);
  expectFault(tessera::host::kFaultDramReadError, 0, tessera::host::kModuleLoad);
}

TEST_F(PicoFaults, AnAddressPast32BitsFaultsRatherThanWrapping) {
  // Weight block 0x10000000 is byte 2^32: kept to 32 bits it would read address 0 without a fault.
  EXPECT_EQ(run("LOAD.WGT deps=- sram_base=0 dram_base=0x10000000 y_size=1 x_size=1 x_stride=1\nFINISH\n",
                0x1000),
            tessera::host::kCtrlFault);
  expectFault(tessera::host::kFaultDramReadError, 0, tessera::host::kModuleLoad);
}

TEST_F(PicoFaults, StorePastTheBoardMemoryIsADramWriteFault) {
  EXPECT_EQ(run("STORE.OUT deps=- sram_base=0 dram_base=0x8001 y_size=1 x_size=1 x_stride=1\nFINISH\n", 0x1000),
            tessera::host::kCtrlFault);
  expectFault(tessera::host::kFaultDramWriteError, 0, 0);
}

TEST_F(PicoFaults, FetchPastTheBoardMemoryIsAFetchFault) {
  // Instruction 0 is the last 16 bytes of the memory (zeros: a LOAD.UOP of no elements); instruction 1 is past it.
  EXPECT_EQ(run("LOAD.UOP deps=- sram_base=0 dram_base=0 y_size=0 x_size=0 x_stride=0\n", 0x1fff0, 3),
            tessera::host::kCtrlFault);
  expectFault(tessera::host::kFaultDramReadError, 1, tessera::host::kModuleFetch);
}

TEST_F(PicoFaults, SramIndexFaultNamesTheMicroOpAndField) {
  // Micro-op 1's accumulator index reaches 60 + 2 * 100 = 260 at the last iteration: past the 256 rows.
  const std::string text =
      "LOAD.UOP deps=- sram_base=0 dram_base=0x1000 y_size=1 x_size=2 x_stride=2\n"
      "GEMM deps=- reset=0 uop_bgn=0 uop_end=2 iter_out=3 iter_in=1 dst_factor_out=100 src_factor_out=1\n"
      "FINISH\nUOP dst=0 src=3 wgt=0\nUOP dst=60 src=3 wgt=0\n";
  EXPECT_EQ(run(text, 0x5000), tessera::host::kCtrlFault);
  expectFault(tessera::host::kFaultSramIndex, 1, (1u << 2) | tessera::host::kFaultFieldDst);
}

TEST_F(PicoFaults, ARunCountsItsRetiredInstructionsAndMicroOps) {
  const std::string text =
      "LOAD.UOP deps=- sram_base=0 dram_base=0x1000 y_size=1 x_size=2 x_stride=2\n"
      "GEMM deps=- reset=0 uop_bgn=0 uop_end=2 iter_out=3 iter_in=2 dst_factor_out=4 src_factor_out=4\n"
      "ALU.ADD deps=- uop_bgn=0 uop_end=1 iter_out=1 iter_in=5 dst_factor_in=1 use_imm=1 imm=3\n"
      "FINISH\nUOP dst=0 src=0 wgt=0\nUOP dst=1 src=1 wgt=1\n";
  EXPECT_EQ(run(text, 0x5000), tessera::host::kCtrlDone);
  auto counter = [&](int c) { return link_.readReg(tessera::host::kCountersBase + 8 * c); };
  EXPECT_EQ(counter(tessera::host::kCounterRetired), 4u);
  EXPECT_EQ(counter(tessera::host::kCounterGemmUops), 12u);
  EXPECT_EQ(counter(tessera::host::kCounterAluUops), 5u);
  EXPECT_EQ(link_.readReg(tessera::host::kCountersBase + 8 * tessera::host::kCounterRetired + 4), 0u);
  EXPECT_EQ(link_.readReg(tessera::host::kStatusBase + 4 * tessera::host::kModuleCompute) & 15u,
            uint32_t(tessera::host::kStateHaltedAtFinish));
  EXPECT_EQ(link_.readReg(tessera::host::kInsnBase + 4 * tessera::host::kModuleCompute), 3u);
  EXPECT_GT(link_.readReg(tessera::host::kRegCycles), 12u * 26u);
}

TEST_F(PicoFaults, TokensAndQueuesFillToTheirDepths) {
  // Fetch stalls on a full store queue, then on a full compute and a full load queue; every token
  // queue fills to the 512 it holds, and the one push past that (the lone STORE's) waits, shown as
  // WaitPush on s2g, until compute pops.
  const int depth = tessera::hw::Config::load("pico").insnQueueDepth;
  const std::string none = " sram_base=0 dram_base=0 y_size=0 x_size=0 x_stride=0\n";
  std::string text;
  auto repeat = [&](int n, const std::string& line) {
    for (int i = 0; i < n; ++i) text += line;
  };
  repeat(depth, "LOAD.INP deps=push_next" + none);
  repeat(depth, "STORE.OUT deps=pop_prev|push_prev" + none);
  repeat(depth, "LOAD.UOP deps=pop_prev|push_next" + none);
  repeat(1, "STORE.OUT deps=push_prev" + none);
  repeat(depth + 1, "LOAD.UOP deps=pop_next|push_prev" + none);
  repeat(depth + 1, "LOAD.INP deps=pop_next" + none);
  text += "FINISH\n";
  uint32_t storeStatus = 0;
  start(text, 0x100);
  uint32_t ctrl = 0;
  for (int poll = 0; poll < 2000 && !(ctrl & (tessera::host::kCtrlDone | tessera::host::kCtrlFault)); ++poll) {
    ctrl = link_.readReg(tessera::host::kRegCtrl);
    const uint32_t store = link_.readReg(tessera::host::kStatusBase + 4 * tessera::host::kModuleStore);
    if ((store & 15u) == tessera::host::kStateWaitPush) storeStatus = store;
  }
  ASSERT_EQ(ctrl & (tessera::host::kCtrlDone | tessera::host::kCtrlFault), tessera::host::kCtrlDone);
  EXPECT_EQ(storeStatus, (uint32_t(tessera::host::kRegTokensS2g - tessera::host::kTokensBase) / 4) << 4 |
                             tessera::host::kStateWaitPush);
  EXPECT_EQ(link_.readReg(tessera::host::kCountersBase + 8 * tessera::host::kCounterRetired),
            uint32_t(5 * depth + 4));
  for (int t = 0; t < 4; ++t) EXPECT_EQ(link_.readReg(tessera::host::kTokensBase + 4 * t), 0u) << "token queue " << t;
}

TEST_F(PicoFaults, InstructionIndicesReachTheWholeBoardMemory) {
  // 8,192 instructions fill the 128 KiB memory; its zeros are LOAD.UOPs of no elements. The last
  // three are a LOAD, a STORE and FINISH, so each queue's head walks the whole stream.
  write("LOAD.INP deps=- sram_base=0 dram_base=0 y_size=0 x_size=0 x_stride=0\n"
        "STORE.OUT deps=- sram_base=0 dram_base=0 y_size=0 x_size=0 x_stride=0\nFINISH\n",
        0x1ffd0);
  const uint32_t count = 0x20000 / 16;
  auto runFrom = [&](uint32_t addr, uint32_t n) {
    link_.writeReg(tessera::host::kRegInsnAddr, addr);
    link_.writeReg(tessera::host::kRegInsnCount, n);
    link_.writeReg(tessera::host::kRegCtrl, tessera::host::kCtrlStart);
    uint32_t ctrl = 0;
    for (int poll = 0; poll < 5000 && !(ctrl & (tessera::host::kCtrlDone | tessera::host::kCtrlFault)); ++poll)
      ctrl = link_.readReg(tessera::host::kRegCtrl);
    return ctrl & (tessera::host::kCtrlDone | tessera::host::kCtrlFault);
  };
  ASSERT_EQ(runFrom(0x1ffd0, 3), tessera::host::kCtrlDone);
  ASSERT_EQ(runFrom(0, count), tessera::host::kCtrlDone);
  EXPECT_EQ(link_.readReg(tessera::host::kCountersBase + 8 * tessera::host::kCounterRetired), count);
  EXPECT_EQ(link_.readReg(tessera::host::kInsnBase + 4 * tessera::host::kModuleFetch), count);
  // One more instruction is past the memory: fetch faults at index 8,192, then (the stream moved up
  // 16 bytes) at 8,191.
  ASSERT_EQ(runFrom(0, count + 1), tessera::host::kCtrlFault);
  expectFault(tessera::host::kFaultDramReadError, count, tessera::host::kModuleFetch);
  ASSERT_EQ(runFrom(0x10, count), tessera::host::kCtrlFault);
  expectFault(tessera::host::kFaultDramReadError, count - 1, tessera::host::kModuleFetch);
  // A stream at the top of the 32-bit address space, not aligned: refused at its first read.
  ASSERT_EQ(runFrom(0xfffffff3u, 1), tessera::host::kCtrlFault);
  expectFault(tessera::host::kFaultDramReadError, 0, tessera::host::kModuleFetch);
}

TEST_F(PicoFaults, TheLoadHeadWalksTheWholeMemory) {
  expectHeadWalksTheWholeMemory("LOAD.INP", tessera::host::kModuleLoad);
}
TEST_F(PicoFaults, TheStoreHeadWalksTheWholeMemory) {
  expectHeadWalksTheWholeMemory("STORE.OUT", tessera::host::kModuleStore);
}
TEST_F(PicoFaults, TheComputeHeadWalksTheWholeMemory) {
  expectHeadWalksTheWholeMemory("LOAD.UOP", tessera::host::kModuleCompute);
}

TEST_F(PicoFaults, WalksAndLoopsAtTheirLongest) {
  // Rows: 65,535 of one element re-read at stride 0 between 15 padding rows on each side (65,565
  // rows); loops: 16,383 outer, then 16,383 inner iterations. Then a row of 65,535 elements with
  // 15 padding columns each side (after the loops: it waits for their token), which faults at
  // data element 32,768: byte 0x20000.
  const std::string text =
      "LOAD.INP deps=- sram_base=0 dram_base=0 y_size=65535 x_size=1 x_stride=0 y_pad_0=15 y_pad_1=15\n"
      "ALU.ADD deps=- uop_bgn=0 uop_end=1 iter_out=16383 iter_in=1 use_imm=1 imm=1\n"
      "ALU.ADD deps=push_prev uop_bgn=0 uop_end=1 iter_out=1 iter_in=16383 use_imm=1 imm=1\n"
      "LOAD.INP deps=pop_next sram_base=0 dram_base=0 y_size=1 x_size=65535 x_stride=65535 x_pad_0=15 x_pad_1=15\n"
      "FINISH\nUOP dst=0 src=0 wgt=0\n";
  const uint32_t n = write(text, 0x5000);
  link_.writeReg(tessera::host::kRegInsnAddr, 0x5000);
  link_.writeReg(tessera::host::kRegInsnCount, n);
  link_.writeReg(tessera::host::kRegCtrl, tessera::host::kCtrlStart);
  uint32_t ctrl = 0;
  for (int poll = 0; poll < 20000 && !(ctrl & (tessera::host::kCtrlDone | tessera::host::kCtrlFault)); ++poll)
    ctrl = link_.readReg(tessera::host::kRegCtrl);
  ASSERT_EQ(ctrl, tessera::host::kCtrlFault);
  expectFault(tessera::host::kFaultDramReadError, 3, tessera::host::kModuleLoad);
  EXPECT_EQ(link_.readReg(tessera::host::kCountersBase + 8 * tessera::host::kCounterAluUops), 2u * 16383u);
  EXPECT_GT(link_.readReg(tessera::host::kRegCycles), 1u << 20);
}

TEST_F(PicoFaults, LoopOffsetsPastTheBufferFaultBeforeAnyWrite) {
  // The largest destination offset, 2 * 150 = 300, and (sticky past the check width) 16,382 * 255.
  for (const char* loop : {"iter_out=3 iter_in=1 dst_factor_out=150", "iter_out=16383 iter_in=1 dst_factor_out=255"}) {
    const std::string text = "LOAD.UOP deps=- sram_base=0 dram_base=0x1000 y_size=1 x_size=1 x_stride=1\n"
                             "GEMM deps=- reset=1 uop_bgn=0 uop_end=1 " + std::string(loop) +
                             "\nFINISH\nUOP dst=0 src=0 wgt=0\n";
    EXPECT_EQ(run(text, 0x5000), tessera::host::kCtrlFault) << loop;
    expectFault(tessera::host::kFaultSramIndex, 1, tessera::host::kFaultFieldDst);
  }
}

TEST_F(PicoFaults, TheLastMicroOpOfTheBufferFaultsWithItsIndex) {
  // 512 micro-ops fill the buffer; a GEMM over all of them runs, then one whose loop takes micro-op
  // 511's weight index (127) to 128, past the 128 weight blocks.
  std::string text =
      "LOAD.UOP deps=- sram_base=0 dram_base=0x1000 y_size=1 x_size=512 x_stride=512\n"
      "GEMM deps=- reset=0 uop_bgn=0 uop_end=512 iter_out=1 iter_in=1\n"
      "GEMM deps=- reset=0 uop_bgn=0 uop_end=512 iter_out=2 iter_in=1 wgt_factor_out=1\nFINISH\n";
  for (int u = 0; u < 511; ++u) text += "UOP dst=0 src=0 wgt=0\n";
  text += "UOP dst=0 src=0 wgt=127\n";
  EXPECT_EQ(run(text, 0x5000), tessera::host::kCtrlFault);
  expectFault(tessera::host::kFaultSramIndex, 2, (511u << 2) | tessera::host::kFaultFieldWgt);
}

}  // namespace
