// The AXI4 memory model: bursts, in-order responses, latency and bandwidth over the simulated DRAM.
#include "tessera/tsim/axi_memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "tessera/support/error.h"
#include "tessera/support/format.h"

namespace tessera::tsim {

namespace {

uint32_t log2Exact(uint32_t v) {
  uint32_t l = 0;
  while ((1u << l) < v) ++l;
  return l;
}

}  // namespace

AxiMemory::AxiMemory(hw::Dram& dram, int busBytes, const MemoryTiming& timing)
    : dram_(dram),
      busBytes_(static_cast<uint32_t>(busBytes)),
      logBusBytes_(log2Exact(static_cast<uint32_t>(busBytes))),
      timing_(timing),
      beatCost_(static_cast<uint32_t>(busBytes) * 256),
      creditPerCycle_(static_cast<uint32_t>(std::lround(timing.bytesPerCycle * 256))),
      creditCap_(std::max(beatCost_, creditPerCycle_)),
      cap_(timing.maxBursts) {
  if (busBytes < 4 || busBytes > 128 || (1u << logBusBytes_) != busBytes_)
    throw Error("AXI memory model", "bus width of " + std::to_string(busBytes) + " bytes is not a power of two in [4, 128]");
  if (timing.readLatency < 1 || timing.writeLatency < 1)
    throw Error("AXI memory model", "latencies must be at least 1 cycle (a registered slave)");
  if (creditPerCycle_ < 1 || timing.bytesPerCycle > 4096)
    throw Error("AXI memory model", "bytes per cycle must be in [1/256, 4096]");
  if (cap_ < 1 || cap_ > 1024) throw Error("AXI memory model", "outstanding bursts must be in [1, 1024]");
  rRing_.resize(cap_);
  wRing_.resize(cap_);
  bRing_.resize(cap_);
  zeros_.assign(busBytes_, 0);
  reset();
}

void AxiMemory::reset() {
  rHead_ = rCount_ = wHead_ = wCount_ = bHead_ = bCount_ = 0;
  rCredit_ = wCredit_ = creditCap_;
  arWaiting_ = awWaiting_ = wWaiting_ = false;
  firstError_.clear();
  violation_.clear();
  out_ = AxiSlaveSignals();
  out_.rdata = zeros_.data();
  out_.arready = out_.awready = true;
}

void AxiMemory::violate(const std::string& what) {
  if (violation_.empty()) violation_ = "AXI4 rule broken by the accelerator at cycle " + std::to_string(now_) + ": " + what;
}

bool AxiMemory::accept(Burst& b, bool write, uint32_t addr, uint8_t len, uint8_t size, uint8_t burst) {
  const char* kind = write ? "write" : "read";
  b.addr = addr;
  b.beats = uint32_t(len) + 1;
  b.done = 0;
  b.base = addr & ~uint64_t(busBytes_ - 1);
  b.error = false;
  // Built only when something is wrong: accepting a burst must not allocate.
  auto what = [&] { return std::string(kind) + " burst at " + hex(addr) + " (" + std::to_string(b.beats) + " beats)"; };
  if (burst != 1) {
    violate(what() + " has burst type " + std::to_string(burst) + "; only INCR (1) is allowed");
    return false;
  }
  if (size != logBusBytes_) {
    violate(what() + " has size " + std::to_string(size) + " (" + std::to_string(1u << size) +
            " bytes per beat); bursts must use the full bus width of " + std::to_string(busBytes_) + " bytes");
    return false;
  }
  const uint64_t end = b.base + uint64_t(b.beats) * busBytes_;
  if ((b.base >> 12) != ((end - 1) >> 12)) {
    violate(what() + " crosses the 4 KiB boundary at " + hex((b.base | 0xfff) + 1));
    return false;
  }
  const uint64_t fault = timing_.faultPage & ~uint64_t(hw::Dram::kPageBytes - 1);
  const bool injected = timing_.faultPage && b.base < fault + hw::Dram::kPageBytes && end > fault;
  if (b.base < hw::Dram::kPageBytes || end > dram_.span() || injected) {
    b.error = true;
    if (firstError_.empty()) firstErrorAddr_ = addr;
    if (firstError_.empty())
      firstError_ = what() + " of " + std::to_string(busBytes_) + " bytes each at cycle " + std::to_string(now_) + ": " +
                    (b.base < hw::Dram::kPageBytes ? "touches page 0, which is unmapped"
                     : injected ? "touches the page at " + hex(fault) + ", where errors are injected (mem-fault-page)"
                                : "leaves the simulated DRAM, which ends at " + hex(dram_.span()));
  }
  return true;
}

void AxiMemory::presentRead() {
  const Burst& b = rRing_[rHead_];
  out_.rvalid = true;
  out_.rlast = b.done + 1 == b.beats;
  out_.rresp = b.error ? kSlvErr : kOkay;
  out_.rdata = b.error ? zeros_.data() : dram_.raw(b.base + uint64_t(b.done) * busBytes_);
  rCredit_ -= beatCost_;
}

void AxiMemory::clockBusy(const AxiMasterSignals& in) {
  if (!violation_.empty()) {  // frozen: the harness stops the run at the first violation
    ++now_;
    return;
  }
  // A master must hold VALID and its payload until READY (AXI A3.2.1).
  if (arWaiting_ && (!in.arvalid || in.araddr != arAddr_ || in.arlen != arLen_))
    violate("m_axi_arvalid, araddr or arlen changed before arready (was " + hex(arAddr_) + ", " +
            std::to_string(arLen_ + 1) + " beats)");
  if (awWaiting_ && (!in.awvalid || in.awaddr != awAddr_ || in.awlen != awLen_))
    violate("m_axi_awvalid, awaddr or awlen changed before awready (was " + hex(awAddr_) + ", " +
            std::to_string(awLen_ + 1) + " beats)");
  if (wWaiting_ && (!in.wvalid || in.wlast != wLast_)) violate("m_axi_wvalid or wlast changed before wready");

  const bool arFire = in.arvalid && out_.arready;
  const bool rFire = out_.rvalid && in.rready;
  const bool awFire = in.awvalid && out_.awready;
  const bool wFire = in.wvalid && out_.wready;
  const bool bFire = out_.bvalid && in.bready;
  arWaiting_ = in.arvalid && !out_.arready;
  arAddr_ = in.araddr;
  arLen_ = in.arlen;
  awWaiting_ = in.awvalid && !out_.awready;
  awAddr_ = in.awaddr;
  awLen_ = in.awlen;
  wWaiting_ = in.wvalid && !out_.wready;
  wLast_ = in.wlast;

  if (rFire) {
    Burst& b = rRing_[rHead_];
    ++b.done;
    ++readBeats_;
    out_.rvalid = false;
    if (b.done == b.beats) {
      rHead_ = rHead_ + 1 == cap_ ? 0 : rHead_ + 1;
      --rCount_;
    }
  }
  if (arFire) {
    uint32_t slot = rHead_ + rCount_;
    if (slot >= cap_) slot -= cap_;
    Burst& b = rRing_[slot];
    if (accept(b, false, in.araddr, in.arlen, in.arsize, in.arburst)) {
      b.readyAt = now_ + timing_.readLatency;
      ++rCount_;
    }
  }
  if (wFire) {
    Burst& b = wRing_[wHead_];
    if (!b.error) {
      uint8_t* dst = dram_.raw(b.base + uint64_t(b.done) * busBytes_);
      const uint64_t full = busBytes_ >= 64 ? ~uint64_t(0) : (uint64_t(1) << busBytes_) - 1;
      const uint64_t fullHi = busBytes_ > 64 ? (busBytes_ == 128 ? ~uint64_t(0) : (uint64_t(1) << (busBytes_ - 64)) - 1) : 0;
      if (in.wstrb[0] == full && in.wstrb[1] == fullHi) {
        std::memcpy(dst, in.wdata, busBytes_);
      } else {
        for (uint32_t lane = 0; lane < busBytes_; ++lane)
          if ((in.wstrb[lane >> 6] >> (lane & 63)) & 1) dst[lane] = in.wdata[lane];
      }
    }
    ++b.done;
    ++writeBeats_;
    wCredit_ -= beatCost_;
    const bool last = b.done == b.beats;
    if (in.wlast != last)
      violate("write burst at " + hex(b.addr) + " of " + std::to_string(b.beats) + " beats has " +
              (in.wlast ? "WLAST on beat " + std::to_string(b.done) : "no WLAST on its last beat"));
    if (last) {
      uint32_t slot = bHead_ + bCount_;
      if (slot >= cap_) slot -= cap_;
      bRing_[slot] = b;
      bRing_[slot].readyAt = now_ + timing_.writeLatency;
      ++bCount_;
      wHead_ = wHead_ + 1 == cap_ ? 0 : wHead_ + 1;
      --wCount_;
    }
  }
  if (awFire) {
    uint32_t slot = wHead_ + wCount_;
    if (slot >= cap_) slot -= cap_;
    if (accept(wRing_[slot], true, in.awaddr, in.awlen, in.awsize, in.awburst)) ++wCount_;
  }
  if (bFire) {
    bHead_ = bHead_ + 1 == cap_ ? 0 : bHead_ + 1;
    --bCount_;
    out_.bvalid = false;
  }

  // The next cycle begins: bandwidth credit accrues, then the outputs for it are decided.
  ++now_;
  rCredit_ = std::min(rCredit_ + creditPerCycle_, creditCap_);
  wCredit_ = std::min(wCredit_ + creditPerCycle_, creditCap_);
  out_.arready = rCount_ < cap_;
  if (!out_.rvalid && rCount_ && rRing_[rHead_].readyAt <= now_ && rCredit_ >= beatCost_) presentRead();
  out_.awready = wCount_ + bCount_ < cap_;
  out_.wready = wCount_ > 0 && wCredit_ >= beatCost_;
  if (!out_.bvalid && bCount_ && bRing_[bHead_].readyAt <= now_) {
    out_.bvalid = true;
    out_.bresp = bRing_[bHead_].error ? kSlvErr : kOkay;
  }
}

}  // namespace tessera::tsim
