// The fake Zynq board's HLS bitstream: the HLS design's four stage functions behind their generated AXI4-Lite register maps.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tessera::fake_zynq {

// One HLS bitstream: the design's queues (the block design's stream FIFOs) and SRAMs, which
// persist across calls and runs as on the board.
class HlsBitstream {
 public:
  virtual ~HlsBitstream() = default;
  // One ap_start of stage IP `ip` (hls_map::Ip) whose AXI4-Lite window is at `window`: reads its
  // argument registers, calls the stage function over the DRAM image at `dramBase` (physical
  // address 0), writes ap_return and the state's st_o with its ap_vld. Returns the stage's status.
  virtual int call(int ip, uint8_t* window, uint8_t* dramBase) = 0;
  // Instructions and tokens left in the stream FIFOs (zero after a clean run).
  virtual uint64_t leftInQueues() const = 0;
};

// The configs the fake's HLS bitstream is compiled for.
const char* hlsBitstreamConfig();
std::unique_ptr<HlsBitstream> makeHlsBitstream();

}  // namespace tessera::fake_zynq
