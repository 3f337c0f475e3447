// The hls-sc model's AXI4 master: burst splitting, round-robin read grants, in-order completion.
#include "axi_master.h"

#include <cstring>

#include "tessera/hw/axi.h"
#include "tessera/support/error.h"

namespace tessera::tsim::sc {

namespace {
constexpr uint32_t kIncr = 1;

uint32_t log2Exact(uint32_t v) {
  uint32_t s = 0;
  while ((1u << s) < v) ++s;
  return s;
}
}  // namespace

AxiMaster::AxiMaster(int busBytes, uint8_t* shadow)
    : busBytes_(uint32_t(busBytes)), sizeCode_(log2Exact(uint32_t(busBytes))), shadow_(shadow) {
  if (busBytes <= 0 || busBytes > BusWord::kMaxBytes || (1 << sizeCode_) != busBytes)
    throw Error("hls-sc AXI master", "a bus of " + std::to_string(busBytes) +
                                         " bytes is not a power of two up to " + std::to_string(BusWord::kMaxBytes));
}

void AxiMaster::split(std::deque<Burst>& to, int owner, uint64_t addr, uint32_t beats) {
  while (beats > 0) {
    const uint64_t toPage = (hw::kAxiPageBytes - addr % hw::kAxiPageBytes) / busBytes_;
    uint32_t n = beats < kMaxBurstBeats ? beats : kMaxBurstBeats;
    if (n > toPage) n = uint32_t(toPage);
    Burst b;
    b.addr = addr;
    b.beats = n;
    b.owner = owner;
    beats -= n;
    addr += uint64_t(n) * busBytes_;
    b.lastOfTransfer = beats == 0;
    to.push_back(b);
  }
}

uint64_t AxiMaster::read(int reader, uint64_t addr, uint32_t beats) {
  if (beats == 0) throw Error("hls-sc AXI master", "a read of zero beats (a model bug)");
  const uint64_t ticket = ++issued_[reader];
  split(pendingReads_[reader], reader, addr, beats);
  return ticket;
}

uint64_t AxiMaster::write(uint64_t addr, uint32_t beats) {
  if (beats == 0) throw Error("hls-sc AXI master", "a write of zero beats (a model bug)");
  const uint64_t ticket = ++writesIssued_;
  split(pendingWrites_, 0, addr, beats);
  if (writeHead_ == writeBytes_.size() || writeHead_ > (1u << 20)) {
    writeBytes_.erase(writeBytes_.begin(), writeBytes_.begin() + long(writeHead_));
    writeHead_ = 0;
  }
  writeBytes_.insert(writeBytes_.end(), shadow_ + addr, shadow_ + addr + uint64_t(beats) * busBytes_);
  return ticket;
}

bool AxiMaster::idle() const {
  for (int r = 0; r < kReaders; ++r)
    if (!pendingReads_[r].empty()) return false;
  return readsInFlight_.empty() && !arValid_ && pendingWrites_.empty() && writeData_.empty() && writeResp_.empty() &&
         !awValid_ && !wValid_;
}

void AxiMaster::reset() {
  for (int r = 0; r < kReaders; ++r) {
    pendingReads_[r].clear();
    issued_[r] = completed_[r] = 0;
  }
  readsInFlight_.clear();
  nextReader_ = 0;
  arValid_ = false;
  pendingWrites_.clear();
  writeData_.clear();
  writeResp_.clear();
  writesIssued_ = writesCompleted_ = 0;
  writeBytes_.clear();
  writeHead_ = 0;
  awValid_ = wValid_ = wLast_ = false;
  readErrorReader_ = -1;
  writeError_ = false;
}

void AxiMaster::clock(const TopPorts& in) {
  // Reads: address handshake, then a data beat, then the next address.
  if (arValid_ && in.m_axi_arready.read()) {
    readsInFlight_.push_back(ar_);
    arValid_ = false;
  }
  if (in.m_axi_rvalid.read() && !readsInFlight_.empty()) {
    Burst& b = readsInFlight_.front();
    std::memcpy(shadow_ + b.addr + uint64_t(b.done) * busBytes_, in.m_axi_rdata.read().bytes(), busBytes_);
    if (in.m_axi_rresp.read() != 0 && readErrorReader_ < 0) readErrorReader_ = b.owner;
    ++readBeats_;
    if (++b.done == b.beats) {
      if (b.lastOfTransfer) {
        ++completed_[b.owner];
        ++completions_;
      }
      readsInFlight_.pop_front();
    }
  }
  if (!arValid_ && readsInFlight_.size() < kMaxOutstanding) {
    for (int k = 0; k < kReaders; ++k) {
      const int r = (nextReader_ + k) % kReaders;
      if (pendingReads_[r].empty()) continue;
      ar_ = pendingReads_[r].front();
      pendingReads_[r].pop_front();
      arValid_ = true;
      nextReader_ = (r + 1) % kReaders;
      break;
    }
  }

  // Writes: address, data beats of the oldest addressed burst, responses in order.
  if (awValid_ && in.m_axi_awready.read()) {
    writeData_.push_back(aw_);
    awValid_ = false;
  }
  if (wValid_ && in.m_axi_wready.read()) {
    wValid_ = false;
    ++writeBeats_;
    Burst& b = writeData_.front();
    if (++b.done == b.beats) {
      writeResp_.push_back(b);
      writeData_.pop_front();
    }
  }
  if (in.m_axi_bvalid.read() && !writeResp_.empty()) {
    if (in.m_axi_bresp.read() != 0) writeError_ = true;
    if (writeResp_.front().lastOfTransfer) {
      ++writesCompleted_;
      ++completions_;
    }
    writeResp_.pop_front();
  }
  if (!awValid_ && !pendingWrites_.empty() && writeData_.size() + writeResp_.size() < kMaxOutstanding) {
    aw_ = pendingWrites_.front();
    pendingWrites_.pop_front();
    awValid_ = true;
  }
  if (!wValid_ && !writeData_.empty()) {
    const Burst& b = writeData_.front();
    std::memcpy(wData_.bytes(), writeBytes_.data() + writeHead_, busBytes_);
    writeHead_ += busBytes_;
    wLast_ = b.done + 1 == b.beats;
    wValid_ = true;
  }
}

void AxiMaster::drive(TopPorts& out) const {
  out.m_axi_araddr.write(uint32_t(ar_.addr));
  out.m_axi_arlen.write(ar_.beats ? ar_.beats - 1 : 0);
  out.m_axi_arsize.write(sizeCode_);
  out.m_axi_arburst.write(kIncr);
  out.m_axi_arvalid.write(arValid_);
  out.m_axi_rready.write(true);
  out.m_axi_awaddr.write(uint32_t(aw_.addr));
  out.m_axi_awlen.write(aw_.beats ? aw_.beats - 1 : 0);
  out.m_axi_awsize.write(sizeCode_);
  out.m_axi_awburst.write(kIncr);
  out.m_axi_awvalid.write(awValid_);
  out.m_axi_wdata.write(wData_);
  BusStrobe strobe;
  for (uint32_t lane = 0; lane < busBytes_; ++lane) strobe.words[lane / 64] |= uint64_t(1) << (lane % 64);
  out.m_axi_wstrb.write(strobe);
  out.m_axi_wlast.write(wLast_);
  out.m_axi_wvalid.write(wValid_);
  out.m_axi_bready.write(true);
}

}  // namespace tessera::tsim::sc
