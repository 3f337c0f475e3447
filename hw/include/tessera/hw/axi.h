// The AXI4 rules the accelerator's DRAM master keeps, for the RTL's generated package and the C++ models of its bus.
#pragma once

#include <cstdint>

namespace tessera::hw {

// AMBA AXI A3.4.1: no burst crosses a 4 KiB page, and an INCR burst has at most 256 beats; the INCR
// burst type and the OKAY and SLVERR responses (A3.4.1, A3.4.4). The SystemVerilog package carries
// them as AXI_*.
inline constexpr int kAxiPageBits = 12;
inline constexpr int kAxiPageBytes = 1 << kAxiPageBits;
inline constexpr int kAxiMaxBurstBeats = 256;
inline constexpr int kAxiBurstIncr = 1;
inline constexpr int kAxiRespOkay = 0;
inline constexpr int kAxiRespSlvErr = 2;

// The accelerator's AXI addresses are 32 bits wide: nothing it reads or writes may lie at or past this.
inline constexpr uint64_t kAxiAddressLimit = uint64_t(1) << 32;

}  // namespace tessera::hw
