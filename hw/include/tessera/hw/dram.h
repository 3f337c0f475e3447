// Simulated physical DRAM shared by every simulated target, with a contiguous-memory allocator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "tessera/hw/config.h"

namespace tessera::hw {

// A physical address space covering every address a configuration's instructions can express,
// reserved as virtual memory and backed by the host only where it is touched. Page 0 is left
// unmapped, as on VTA's simulator: any access to it is an error, so a null physical address in a
// program is caught.
class Dram {
 public:
  static constexpr uint64_t kPageBytes = 4096;
  // Allocations are physically contiguous and page aligned, below 4 GiB (VTA's 32-bit
  // vta_phy_addr_t), from kAllocBase upward.
  static constexpr uint64_t kAllocBase = kPageBytes;
  static constexpr uint64_t kAllocLimit = uint64_t(1) << 32;

  explicit Dram(const Config& cfg);
  ~Dram();
  Dram(const Dram&) = delete;
  Dram& operator=(const Dram&) = delete;

  // Bytes of physical address space covered: [0, span()).
  uint64_t span() const { return span_; }
  // Highest end address a configuration's LOAD/STORE instructions can reach.
  static uint64_t expressibleSpan(const Config& cfg);

  // Host pointer to [phys, phys + bytes); throws tessera::Error naming `what` if the range leaves
  // the address space or touches the unmapped page 0.
  uint8_t* at(uint64_t phys, uint64_t bytes, const std::string& what);
  const uint8_t* at(uint64_t phys, uint64_t bytes, const std::string& what) const;
  // Unchecked translation for ranges already validated.
  uint8_t* raw(uint64_t phys) { return base_ + phys; }

  void write(uint64_t phys, const void* src, uint64_t bytes, const std::string& what);
  // Places the bytes of the file at `path` at `phys` (as write() would) and returns their number.
  // The whole pages of a large file at a page-aligned address are mapped copy-on-write from the
  // host's page cache instead of copied: no host memory of their own until the simulation writes
  // them. A mapped file must keep its size while the Dram lives (the host raises SIGBUS otherwise).
  uint64_t loadFile(uint64_t phys, const std::string& path, const std::string& what);
  void read(uint64_t phys, void* dst, uint64_t bytes, const std::string& what) const;

  // Contiguous allocator. alloc() returns 0 when no contiguous range of `bytes` is free.
  uint64_t alloc(uint64_t bytes);
  // Frees an allocation by its start address; throws if `phys` does not start one.
  void free(uint64_t phys);
  // Start of the allocation containing `phys`, or 0 if none does.
  uint64_t allocationContaining(uint64_t phys, uint64_t* size = nullptr) const;
  size_t liveAllocations() const { return allocs_.size(); }

  // Host pointer <-> physical address for pointers inside the address space.
  bool contains(const void* host) const;
  uint64_t physOf(const void* host) const { return static_cast<uint64_t>(static_cast<const uint8_t*>(host) - base_); }

 private:
  uint8_t* base_ = nullptr;
  uint64_t span_ = 0;
  std::map<uint64_t, uint64_t> allocs_;  // start -> size (rounded to pages)
  std::map<uint64_t, uint64_t> free_;    // start -> size, coalesced
};

}  // namespace tessera::hw
