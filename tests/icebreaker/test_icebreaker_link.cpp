// The iCEBreaker host-link protocol against the verilated board top: every command, the error statuses, the resync rule and the link's own error reports.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim_board.h"
#include "tessera/gen/host_interface.h"
#include "tessera/hw/error.h"

namespace {

namespace ib = tessera::runtime::icebreaker;
using tessera::icebreaker_sim::SimChannel;
using tessera::icebreaker_sim::SimulatedBoard;

class IcebreakerLink : public ::testing::Test {
 protected:
  IcebreakerLink()
      : channel_(std::make_shared<SimulatedBoard>()), link_(channel_, std::chrono::milliseconds(2000)) {}
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

}  // namespace
