// The hls-sc model's AXI4 master port: bursts for the stages' DRAM transfers, read arbitration, data to and from a shadow image.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "ports.h"

namespace tessera::tsim::sc {

// The HLS stages read DRAM through m_axi adapters and write it through one; on the FPGA they sit
// behind an AXI interconnect on one HP port. This class plays adapters and interconnect: each
// stage queues transfers of whole bus words, which become INCR bursts of at most kMaxBurstBeats
// beats that never cross 4 KiB (Vitis HLS's default m_axi burst limit), at most kMaxOutstanding
// of them in flight per direction, read bursts granted round-robin between the readers. Read data
// lands in a shadow image of DRAM that the design's C++ reads and writes through its bus_t pointer,
// so every byte the design sees crossed the port; write data is taken from the shadow when the
// write is queued (as the store's SRAM holds it), so a later read into the shadow cannot change it.
//
// Port protocol: outputs are registered (clock() computes them at a rising edge, drive() writes
// them to the signals), RREADY and BREADY are always high, write data follows its address.
class AxiMaster {
 public:
  static constexpr uint32_t kMaxBurstBeats = 16;
  static constexpr uint32_t kMaxOutstanding = 16;
  enum Reader { kFetch = 0, kLoad = 1, kCompute = 2, kReaders = 3 };

  // `shadow` is the image of DRAM address 0 onwards (every address the port can reach).
  AxiMaster(int busBytes, uint8_t* shadow);

  // Queues a read of `beats` (> 0) bus words from bus-aligned `addr` for `reader`; returns its ticket.
  // Reads of one reader complete in the order they were queued.
  uint64_t read(int reader, uint64_t addr, uint32_t beats);
  bool readDone(int reader, uint64_t ticket) const { return completed_[reader] >= ticket; }
  // Queues a write of `beats` (> 0) bus words at bus-aligned `addr`, with the data the shadow holds
  // now; returns its ticket. A write is done when its last B response arrived.
  uint64_t write(uint64_t addr, uint32_t beats);
  bool writeDone(uint64_t ticket) const { return writesCompleted_ >= ticket; }

  // The first error response since reset: empty if none; for reads, the reader it answered.
  bool readError() const { return readErrorReader_ >= 0; }
  int readErrorReader() const { return readErrorReader_; }
  bool writeError() const { return writeError_; }

  bool idle() const;
  // Transfers completed since construction (reads and writes): changes when a ticket completes.
  uint64_t completions() const { return completions_; }
  uint64_t readBeats() const { return readBeats_; }
  uint64_t writeBeats() const { return writeBeats_; }

  // Drops every transfer (the accelerator is in reset); counters keep counting.
  void reset();
  // One rising edge: handshakes with the inputs sampled just before it, then the next outputs.
  void clock(const TopPorts& in);
  // Writes the registered outputs to the port signals.
  void drive(TopPorts& out) const;

 private:
  struct Burst {
    uint64_t addr = 0;
    uint32_t beats = 0;
    uint32_t done = 0;  // beats transferred
    int owner = 0;      // reader (reads)
    bool lastOfTransfer = false;
  };
  void split(std::deque<Burst>& to, int owner, uint64_t addr, uint32_t beats);

  const uint32_t busBytes_;
  const uint32_t sizeCode_;  // AxSIZE: log2 of the bus bytes
  uint8_t* const shadow_;

  std::deque<Burst> pendingReads_[kReaders];  // queued, address not yet issued
  std::deque<Burst> readsInFlight_;           // AR accepted, data outstanding (in order)
  uint64_t issued_[kReaders] = {}, completed_[kReaders] = {};
  int nextReader_ = 0;
  bool arValid_ = false;
  Burst ar_;

  std::deque<Burst> pendingWrites_;  // queued, address not yet issued
  std::deque<Burst> writeData_;      // AW accepted, data beats outstanding (in order)
  std::deque<Burst> writeResp_;      // data sent, B outstanding
  uint64_t writesIssued_ = 0, writesCompleted_ = 0;
  bool awValid_ = false, wValid_ = false;
  Burst aw_;
  BusWord wData_;
  std::vector<uint8_t> writeBytes_;  // data of the queued write beats, oldest first from writeHead_
  size_t writeHead_ = 0;
  bool wLast_ = false;

  int readErrorReader_ = -1;
  bool writeError_ = false;
  uint64_t readBeats_ = 0, writeBeats_ = 0;
  uint64_t completions_ = 0;
};

}  // namespace tessera::tsim::sc
