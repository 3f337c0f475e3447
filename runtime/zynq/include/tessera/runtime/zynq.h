// The zynq target's board interface, shared with its fake board (tessera-fake-zynq): register window sizes, u-dma-buf's sync directions, and the address syntax of sysfs and the options (docs/deploy.md).
#pragma once

#include <cstdint>
#include <string>

namespace tessera::runtime::zynq {

constexpr const char* kName = "zynq";

// Bytes of the AXI4-Lite register window the RTL decodes (1 << host::kAddrWidth); a UIO map, a
// /dev/mem window or a fake register file smaller than this is refused.
uint64_t registerWindowBytes();
// Bytes of the HLS bitstream's register window: its four stage IPs, each hls_map::kIpStride apart.
uint64_t hlsRegisterWindowBytes();

// u-dma-buf's sync_direction values (the kernel's enum dma_data_direction).
constexpr int kSyncBidirectional = 0, kSyncToDevice = 1, kSyncFromDevice = 2;

// Parses "0x1f000000" (hex with 0x) or "520093696" (decimal) as sysfs and the options write
// addresses; throws tessera::Error naming `what` otherwise.
uint64_t parseAddress(const std::string& text, const std::string& what);

}  // namespace tessera::runtime::zynq
