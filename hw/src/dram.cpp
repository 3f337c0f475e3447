// Lazily backed physical address space and its first-fit contiguous allocator.
#include "tessera/hw/dram.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "tessera/support/format.h"

#include <vector>

namespace tessera::hw {

namespace {
}  // namespace

uint64_t Dram::expressibleSpan(const Config& cfg) {
  // Largest element index a LOAD/STORE can touch: dram_base + (y_size-1)*x_stride + x_size.
  uint64_t maxIndex = ((uint64_t(1) << kMemDramBaseBits) - 1) +
                      ((uint64_t(1) << kMemSizeBits) - 2) * ((uint64_t(1) << kMemStrideBits) - 1) +
                      ((uint64_t(1) << kMemSizeBits) - 1);
  uint64_t maxElem = 0;
  for (MemId id : {MemId::kUop, MemId::kWgt, MemId::kInp, MemId::kAcc, MemId::kOut, MemId::kAcc8})
    maxElem = std::max<uint64_t>(maxElem, cfg.dramElemBytes(id));
  uint64_t span = maxIndex * maxElem;
  return (span + kPageBytes - 1) / kPageBytes * kPageBytes;
}

Dram::Dram(const Config& cfg) {
  uint64_t want = expressibleSpan(cfg);
  // NORESERVE: nothing is committed until touched, so the whole ISA-visible space costs only
  // address space. Fall back to smaller spans on hosts that refuse the reservation.
  // A 32-bit process cannot reserve 4 GiB: it gets what it can down to 64 MiB, allocations stay
  // inside it, and fsim checks each LOAD/STORE's range there instead of relying on the reservation.
  const uint64_t smallest = sizeof(void*) < 8 ? uint64_t(64) << 20 : kAllocLimit;
  for (uint64_t span = want; span >= smallest; span /= 2) {
    void* p = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
      base_ = static_cast<uint8_t*>(p);
      span_ = span;
      break;
    }
  }
  if (!base_) throw Error("simulated DRAM", "cannot reserve " + hex(smallest) + " bytes of address space");
  free_[kAllocBase] = std::min(kAllocLimit, span_) - kAllocBase;
}

Dram::~Dram() {
  if (base_) ::munmap(base_, span_);
}

uint8_t* Dram::at(uint64_t phys, uint64_t bytes, const std::string& what) {
  return const_cast<uint8_t*>(static_cast<const Dram*>(this)->at(phys, bytes, what));
}

const uint8_t* Dram::at(uint64_t phys, uint64_t bytes, const std::string& what) const {
  if (phys > span_ || bytes > span_ - phys)
    throw Error(what, "DRAM range [" + hex(phys) + ", " + hex(phys + bytes) + ") lies outside the simulated " +
                          "physical address space [0, " + hex(span_) + ")");
  if (bytes > 0 && phys < kPageBytes)
    throw Error(what, "DRAM range [" + hex(phys) + ", " + hex(phys + bytes) +
                          ") touches page 0, which is unmapped (a null physical address?)");
  return base_ + phys;
}

void Dram::write(uint64_t phys, const void* src, uint64_t bytes, const std::string& what) {
  if (bytes) std::memcpy(at(phys, bytes, what), src, bytes);
}

uint64_t Dram::loadFile(uint64_t phys, const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path, "cannot open file for reading");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) throw Error(path, "cannot read the file's size");
  if (!S_ISREG(st.st_mode)) {  // a pipe or a device: read it whole, then copy
    const std::vector<uint8_t> bytes = [&] {
      std::vector<uint8_t> b;
      uint8_t buf[65536];
      for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
        if (n < 0) throw Error(path, "read error");
        b.insert(b.end(), buf, buf + n);
      }
      return b;
    }();
    write(phys, bytes.data(), bytes.size(), what);
    return bytes.size();
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  uint8_t* dst = at(phys, size, what);
  // Mapping costs a system call and a fault per 64 KiB read later; copying costs a fault per page
  // written now. Map the whole pages of files past 64 KiB.
  constexpr uint64_t kMapAtLeast = 64 * 1024;
  uint64_t mapped = 0;
  if (phys % kPageBytes == 0 && size >= kMapAtLeast) {
    mapped = size / kPageBytes * kPageBytes;
    void* p = ::mmap(dst, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
      // A failed MAP_FIXED may have unmapped the range: put the reservation back, then copy.
      mapped = 0;
      if (::mmap(dst, size / kPageBytes * kPageBytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
        throw Error(what, "cannot map the file and cannot restore simulated DRAM under it");
    }
  }
  for (uint64_t done = mapped; done < size;) {
    const ssize_t n = ::pread(fd, dst + done, size - done, static_cast<off_t>(done));
    if (n <= 0) throw Error(path, n == 0 ? "the file shrank while it was read" : "read error");
    done += static_cast<uint64_t>(n);
  }
  return size;
}

void Dram::read(uint64_t phys, void* dst, uint64_t bytes, const std::string& what) const {
  if (bytes) std::memcpy(dst, at(phys, bytes, what), bytes);
}

uint64_t Dram::alloc(uint64_t bytes) {
  if (bytes == 0) bytes = 1;
  uint64_t size = (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < size) continue;
    uint64_t start = it->first, left = it->second - size;
    free_.erase(it);
    if (left) free_[start + size] = left;
    allocs_[start] = size;
    // Fresh allocations read as zero, like newly mapped pages on a board.
    std::memset(base_ + start, 0, size);
    return start;
  }
  return 0;
}

void Dram::free(uint64_t phys) {
  auto it = allocs_.find(phys);
  if (it == allocs_.end())
    throw Error("free " + hex(phys), "address does not start a live DRAM allocation (double free?)");
  uint64_t start = it->first, size = it->second;
  allocs_.erase(it);
  // Give the pages back to the host so long runs do not grow without bound.
  ::madvise(base_ + start, size, MADV_DONTNEED);
  auto next = free_.lower_bound(start);
  if (next != free_.end() && start + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      prev->second += size;
      return;
    }
  }
  free_[start] = size;
}

uint64_t Dram::allocationContaining(uint64_t phys, uint64_t* size) const {
  auto it = allocs_.upper_bound(phys);
  if (it == allocs_.begin()) return 0;
  --it;
  if (phys >= it->first + it->second) return 0;
  if (size) *size = it->second;
  return it->first;
}

bool Dram::contains(const void* host) const {
  auto p = static_cast<const uint8_t*>(host);
  return p >= base_ && p < base_ + span_;
}

}  // namespace tessera::hw
