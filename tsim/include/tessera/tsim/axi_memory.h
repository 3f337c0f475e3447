// Cycle-level AXI4 slave over the simulated DRAM: the memory the RTL accelerator's master port sees.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/hw/dram.h"
#include "tessera/hw/dram_timing.h"

namespace tessera::tsim {

// What the accelerator drives on its AXI4 master port, sampled before a clock edge.
struct AxiMasterSignals {
  uint32_t araddr = 0;
  uint8_t arlen = 0, arsize = 0, arburst = 0;
  bool arvalid = false;
  bool rready = false;
  uint32_t awaddr = 0;
  uint8_t awlen = 0, awsize = 0, awburst = 0;
  bool awvalid = false;
  const uint8_t* wdata = nullptr;  // bus-width bytes, lane 0 first; read only during clock()
  uint64_t wstrb[2] = {0, 0};      // one bit per byte lane (up to 128 lanes, a 1024-bit bus)
  bool wlast = false, wvalid = false;
  bool bready = false;
};

// What the memory drives. Registered: it changes only at clock edges, as a synchronous slave's
// outputs do, so the accelerator may depend on it combinationally.
struct AxiSlaveSignals {
  bool arready = false;
  bool rvalid = false, rlast = false;
  uint8_t rresp = 0;
  const uint8_t* rdata = nullptr;  // bus-width bytes; never null
  bool awready = false, wready = false;
  bool bvalid = false;
  uint8_t bresp = 0;
};

// The DRAM's latency and bandwidth (hw::DramTiming's defaults), and fault injection.
struct MemoryTiming : hw::DramTiming {
  // Bursts touching the 4 KiB page at this address are answered SLVERR, so the accelerator's error
  // path can be exercised with valid programs. 0: none.
  uint64_t faultPage = 0;
};

// AXI4 slave: INCR bursts of up to 256 beats at full bus width, several read bursts outstanding
// and answered in order (one ID), write data after its address, one B response per burst.
// Accesses outside the DRAM or into page 0 are answered SLVERR and the first is remembered;
// a master breaking an AXI rule (burst crossing 4 KiB, wrong burst type or size, WLAST in the
// wrong place, VALID dropped or address changed before READY) is recorded as a violation.
// All state is in fixed rings sized at construction: clock() never allocates.
class AxiMemory {
 public:
  static constexpr uint8_t kOkay = 0, kSlvErr = 2;

  AxiMemory(hw::Dram& dram, int busBytes, const MemoryTiming& timing);

  // The memory's outputs for the current cycle.
  const AxiSlaveSignals& outputs() const { return out_; }
  // One rising clock edge, given the master's outputs just before it: transfers whose VALID and
  // READY were both high take place, and the outputs for the next cycle are computed.
  void clock(const AxiMasterSignals& in) {
    // Most cycles of a compute-bound run touch no channel: only time and credit move, and the
    // outputs stay as they are (ready to accept, nothing to answer).
    if (!(in.arvalid | in.awvalid | in.wvalid | out_.rvalid | out_.bvalid) && rCount_ == 0 && wCount_ == 0 &&
        bCount_ == 0 && violation_.empty()) {
      ++now_;
      rCredit_ = rCredit_ + creditPerCycle_ < creditCap_ ? rCredit_ + creditPerCycle_ : creditCap_;
      wCredit_ = wCredit_ + creditPerCycle_ < creditCap_ ? wCredit_ + creditPerCycle_ : creditCap_;
      arWaiting_ = awWaiting_ = wWaiting_ = false;
      return;
    }
    clockBusy(in);
  }
  // Drops every burst in flight and the recorded errors (the accelerator is being reset).
  void reset();

  bool idle() const { return rCount_ == 0 && wCount_ == 0 && bCount_ == 0; }
  uint32_t readBurstsInFlight() const { return rCount_; }
  uint32_t writeBurstsInFlight() const { return wCount_ + bCount_; }
  uint64_t readBeats() const { return readBeats_; }
  uint64_t writeBeats() const { return writeBeats_; }
  uint64_t cycle() const { return now_; }

  // The first access answered with SLVERR since reset, e.g. "read burst at 0x10 (4 beats of 8
  // bytes) at cycle 12: touches page 0, which is unmapped"; empty if none.
  const std::string& firstError() const { return firstError_; }
  // Where that access started (the address the master gave); meaningless if there was none.
  uint64_t firstErrorAddress() const { return firstErrorAddr_; }
  // The first AXI rule the master broke, with the cycle; empty if none. Once set, the memory
  // stops answering (the run is over).
  bool violated() const { return !violation_.empty(); }
  const std::string& violation() const { return violation_; }

 private:
  struct Burst {
    uint64_t base = 0;     // address of beat 0, aligned down to the bus width
    uint32_t addr = 0;     // address as the master gave it
    uint32_t beats = 0;
    uint32_t done = 0;     // beats transferred
    uint64_t readyAt = 0;  // first cycle its next response may appear
    bool error = false;
  };
  // Checks a burst's type, size and 4 KiB rule; decides SLVERR. Returns false on a violation.
  bool accept(Burst& b, bool write, uint32_t addr, uint8_t len, uint8_t size, uint8_t burst);
  void clockBusy(const AxiMasterSignals& in);
  void violate(const std::string& what);
  void presentRead();

  hw::Dram& dram_;
  const uint32_t busBytes_;
  const uint32_t logBusBytes_;
  const MemoryTiming timing_;
  const uint32_t beatCost_, creditPerCycle_, creditCap_;  // bandwidth credit in 1/256 bytes
  const uint32_t cap_;                                    // ring capacity (maxBursts)
  AxiSlaveSignals out_;
  uint64_t now_ = 0;

  std::vector<Burst> rRing_, wRing_, bRing_;  // reads in flight; writes awaiting data; awaiting B
  uint32_t rHead_ = 0, rCount_ = 0, wHead_ = 0, wCount_ = 0, bHead_ = 0, bCount_ = 0;
  uint32_t rCredit_ = 0, wCredit_ = 0;
  uint64_t readBeats_ = 0, writeBeats_ = 0;

  // Handshake stability: what the master offered at the last edge without READY.
  bool arWaiting_ = false, awWaiting_ = false, wWaiting_ = false;
  uint32_t arAddr_ = 0, awAddr_ = 0;
  uint8_t arLen_ = 0, awLen_ = 0;
  bool wLast_ = false;

  std::string firstError_, violation_;
  uint64_t firstErrorAddr_ = 0;
  std::vector<uint8_t> zeros_;  // the data of error beats
};

}  // namespace tessera::tsim
