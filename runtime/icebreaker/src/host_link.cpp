// The iCEBreaker host link's client side: requests and replies of the byte protocol of rtl/board/tessera_board_link.sv over any byte channel.
#include "tessera/runtime/icebreaker.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "tessera/support/error.h"
#include "tessera/support/format.h"

namespace tessera::runtime::icebreaker {

namespace {

const char* commandName(uint8_t command) {
  switch (command) {
    case kHello: return "HELLO";
    case kReadReg: return "READ_REG";
    case kWriteReg: return "WRITE_REG";
    case kReadMem: return "READ_MEM";
    case kWriteMem: return "WRITE_MEM";
    case kStatus: return "STATUS";
    default: return "command";
  }
}

void putLe(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint32_t getLe32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t(p[3]) << 24; }

}  // namespace

std::string statusName(uint8_t status) {
  switch (status) {
    case kOk: return "OK";
    case kBadCommand: return "BAD_COMMAND";
    case kBadLength: return "BAD_LENGTH";
    case kBadAddress: return "BAD_ADDRESS";
    case kBusError: return "BUS_ERROR";
    default: return "unknown status " + hex(status);
  }
}

Reply Link::transact(uint8_t command, uint32_t address, uint16_t length, const std::vector<uint8_t>& payload,
                     size_t replyPayload) {
  std::vector<uint8_t> frame{kRequestSync, command};
  putLe(frame, address, 4);
  putLe(frame, length, 2);
  frame.insert(frame.end(), payload.begin(), payload.end());
  channel_.write(frame.data(), frame.size());
  const std::string what = std::string(commandName(command)) + " " + hex(command) + " at " + hex(address) +
                           " length " + std::to_string(length) + " on " + channel_.describe();
  uint8_t head[2];
  const size_t got = channel_.read(head, 2, timeout_);
  if (got < 2)
    throw Error(what, "no reply within " + std::to_string(timeout_.count()) + " ms (" + std::to_string(got) +
                          " of 2 bytes): is the board programmed, at this baud rate, and the device the right one?");
  if (head[0] != kReplySync)
    throw Error(what, "the reply began with " + hex(head[0]) + ", not the reply sync byte " + hex(kReplySync) +
                          ": the link lost sync (wrong baud rate, or another program on the port)");
  Reply r;
  r.status = head[1];
  if (r.status != kOk) {
    // The board drains the rest of a refused request until the line is quiet (resync rule).
    channel_.quiet(2 * kIdleTimeoutBits);
    return r;
  }
  r.payload.resize(replyPayload);
  const size_t n = channel_.read(r.payload.data(), replyPayload, timeout_);
  if (n < replyPayload)
    throw Error(what, "the reply stopped after " + std::to_string(n) + " of its " + std::to_string(replyPayload) +
                          " payload bytes");
  return r;
}

void Link::expectOk(const Reply& r, const std::string& request) {
  if (r.status != kOk)
    throw Error(request + " on " + channel_.describe(), "the board answered " + statusName(r.status));
}

BoardInfo Link::hello() {
  const Reply r = transact(kHello, 0, 0, {}, kHelloBytes);
  expectOk(r, "HELLO");
  BoardInfo info;
  info.version = r.payload[0];
  info.memBytes = uint64_t(1) << r.payload[1];
  info.maxBlock = 1u << r.payload[2];
  info.regAddrWidth = r.payload[3];
  if (info.version != kVersion)
    throw Error("HELLO on " + channel_.describe(), "the board speaks protocol version " +
                                                       std::to_string(info.version) + "; this driver speaks " +
                                                       std::to_string(kVersion));
  maxBlock_ = info.maxBlock;
  return info;
}

uint32_t Link::readReg(uint32_t offset) {
  const Reply r = transact(kReadReg, offset, kRegBytes, {}, kRegBytes);
  expectOk(r, "READ_REG " + hex(offset));
  return getLe32(r.payload.data());
}

void Link::writeReg(uint32_t offset, uint32_t value) {
  std::vector<uint8_t> data;
  putLe(data, value, 4);
  expectOk(transact(kWriteReg, offset, kRegBytes, data, 0), "WRITE_REG " + hex(offset));
}

void Link::readMem(uint32_t address, uint8_t* out, size_t n) {
  if (!maxBlock_) hello();
  for (size_t done = 0; done < n;) {
    const size_t block = std::min<size_t>(n - done, maxBlock_);
    const uint32_t at = address + static_cast<uint32_t>(done);
    const Reply r = transact(kReadMem, at, static_cast<uint16_t>(block), {}, block);
    expectOk(r, "READ_MEM " + hex(at) + " length " + std::to_string(block));
    std::memcpy(out + done, r.payload.data(), block);
    done += block;
  }
}

void Link::writeMem(uint32_t address, const uint8_t* data, size_t n) {
  if (!maxBlock_) hello();
  for (size_t done = 0; done < n;) {
    const size_t block = std::min<size_t>(n - done, maxBlock_);
    const uint32_t at = address + static_cast<uint32_t>(done);
    const std::vector<uint8_t> bytes(data + done, data + done + block);
    expectOk(transact(kWriteMem, at, static_cast<uint16_t>(block), bytes, 0),
             "WRITE_MEM " + hex(at) + " length " + std::to_string(block));
    done += block;
  }
}

BoardStatus Link::status() {
  const Reply r = transact(kStatus, 0, 0, {}, kStatusBytes);
  expectOk(r, "STATUS");
  BoardStatus s;
  s.irq = r.payload[0] & 1;
  s.frameErrorSeen = r.payload[0] & 2;
  s.overrunSeen = r.payload[0] & 4;
  s.errors = r.payload[1];
  return s;
}

}  // namespace tessera::runtime::icebreaker
