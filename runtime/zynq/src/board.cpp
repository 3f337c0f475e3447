// The zynq drivers' shared layer: options, the register window and DMA buffer mappings, u-dma-buf's cache maintenance, and staging a run's pages with its program relocated.
#include "board.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "tessera/hw/axi.h"
#include "tessera/hw/program.h"
#include "tessera/runtime/target_support.h"
#include "tessera/runtime/zynq.h"
#include "tessera/support/error.h"
#include "tessera/support/format.h"

namespace tessera::runtime::zynq {

uint64_t parseAddress(const std::string& text, const std::string& what) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ' || t.back() == '\r')) t.pop_back();
  const bool hexadecimal = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  const std::string digits = hexadecimal ? t.substr(2) : t;
  if (digits.empty() || digits.size() > 16 ||
      digits.find_first_not_of(hexadecimal ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos)
    throw Error(what, "'" + t + "' is not an address (0x followed by hex digits, or decimal digits)");
  return std::strtoull(digits.c_str(), nullptr, hexadecimal ? 16 : 10);
}

namespace {

constexpr uint64_t kPage = hw::Dram::kPageBytes;

std::string errnoText() { return std::strerror(errno); }

std::string readText(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path, "cannot open " + what + ": " + errnoText());
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  const int err = errno;
  ::close(fd);
  if (n < 0) throw Error(path, "cannot read " + what + ": " + std::strerror(err));
  return std::string(buf, static_cast<size_t>(n));
}

// One write, as `echo VALUE > FILE` does: sysfs acts on it when write() returns.
void writeText(const std::string& path, const std::string& text, const std::string& what) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw Error(path, "cannot open " + what + " for writing: " + errnoText());
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    throw Error(path, "cannot write " + what + ": " + (n < 0 ? std::string(std::strerror(err)) : "short write"));
}

bool isDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The /sys/class/uio/uioN directory and /dev/uioN of the option uio= (a device or a name).
std::pair<std::string, std::string> findUio(const std::string& uio) {
  const std::string classDir = "/sys/class/uio";
  if (uio.rfind("/dev/", 0) == 0) {
    const std::string node = uio.substr(5);
    return {classDir + "/" + node, uio};
  }
  std::string found;
  DIR* d = ::opendir(classDir.c_str());
  if (d) {
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::string name;
      try {
        name = readText(classDir + "/" + e->d_name + "/name", "UIO device name");
      } catch (const Error&) {
        continue;
      }
      while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
      if (name == uio) {
        ::closedir(d);
        return {classDir + "/" + e->d_name, std::string("/dev/") + e->d_name};
      }
      found += (found.empty() ? "" : ", ") + std::string(e->d_name) + " '" + name + "'";
    }
    ::closedir(d);
  }
  throw Error(uio == "tessera" ? "UIO device 'tessera' (the default of target option uio=)" : "target option uio=" + uio,
              "no UIO device of that name in " + classDir + " (" + (found.empty() ? "none there" : "found " + found) +
                  "); is the overlay loaded and uio_pdrv_genirq bound with of_id=generic-uio? (docs/deploy.md)");
}

// The pages, sorted, that the ranges touch.
std::vector<uint64_t> pagesOf(std::vector<hw::DramRange> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const hw::DramRange& a, const hw::DramRange& b) { return a.first < b.first; });
  std::vector<uint64_t> pages;
  uint64_t next = 0;
  for (const auto& r : ranges)
    for (uint64_t p = std::max(r.first / kPage, next); p * kPage < r.end; ++p) {
      pages.push_back(p);
      next = p + 1;
    }
  return pages;
}

uint64_t roundUpToPage(uint64_t v) { return (v + kPage - 1) / kPage * kPage; }

}  // namespace

BoardSettings settingsOf(const TargetOptions& options) {
  BoardSettings s;
  int sources = 0;
  if (auto it = options.find(kUioKey); it != options.end()) {
    if (it->second.empty()) throw Error(std::string("target option ") + kUioKey, "empty (expected /dev/uioN or a UIO name)");
    s.uio = it->second;
    ++sources;
  }
  if (auto it = options.find(kDevMemKey); it != options.end()) {
    s.registers = BoardSettings::Registers::kDevMem;
    s.devMemAddress = parseAddress(it->second, std::string("target option ") + kDevMemKey);
    if (s.devMemAddress % kPage)
      throw Error(std::string("target option ") + kDevMemKey + "=" + it->second,
                  "the register window's physical address must be page aligned (" + std::to_string(kPage) + " bytes)");
    ++sources;
  }
  if (auto it = options.find(kRegsFileKey); it != options.end()) {
    if (it->second.empty()) throw Error(std::string("target option ") + kRegsFileKey, "empty (expected a FILE)");
    s.registers = BoardSettings::Registers::kFile;
    s.regsFile = it->second;
    ++sources;
  }
  if (sources > 1)
    throw Error("target zynq", std::string("give one of the options ") + kUioKey + ", " + kDevMemKey + " and " +
                                   kRegsFileKey + ", not several: they name the register window");
  if (auto it = options.find(kBufferKey); it != options.end()) s.buffer = it->second;
  if (auto it = options.find(kBufferSysfsKey); it != options.end()) s.bufferSysfs = it->second;
  s.timeout = secondsOption(options, kTimeoutKey, s.timeout);
  if (auto it = options.find(kConfigKey); it != options.end()) s.config = it->second;
  if (auto it = options.find(kBitstreamKey); it != options.end()) {
    if (it->second == "hls") s.bitstream = BoardSettings::Bitstream::kHls;
    else if (it->second != "rtl")
      throw Error(std::string("target option ") + kBitstreamKey + "=" + it->second,
                  "expected rtl (the RTL bitstream, the default) or hls (the HLS bitstream's four stage IPs)");
  }
  return s;
}

std::string configMismatch(const hw::Config& cfg, const std::string& bitstreamConfig) {
  if (bitstreamConfig.empty() || sameHardware(hw::Config::load(bitstreamConfig), cfg)) return "";
  return "the bitstream runs config " + bitstreamConfig + " (target option config=), not " + cfg.name;
}

// --- MappedFile, DeviceLock

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
  if (fd_ >= 0) ::close(fd_);
}

void MappedFile::open(const std::string& path, bool sync, const std::string& what) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC | (sync ? O_SYNC : 0));
  if (fd_ < 0)
    throw Error(path, "cannot open " + what + ": " + errnoText() +
                          (errno == EACCES ? " (docs/deploy.md, \"Permissions\")" : ""));
  path_ = path;
}

int64_t MappedFile::regularFileSize() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  return st.st_size;
}

void MappedFile::map(uint64_t bytes, uint64_t offset, const std::string& what) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(offset));
  if (p == MAP_FAILED)
    throw Error(path_, "cannot map " + std::to_string(bytes) + " bytes of " + what + " at offset " + hex(offset) +
                           ": " + errnoText());
  data_ = static_cast<uint8_t*>(p);
  size_ = bytes;
}

DeviceLock::DeviceLock(const MappedFile& device, std::chrono::milliseconds timeout, const std::string& runWhat)
    : fd_(device.fd()) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      throw Error(runWhat, "cannot lock " + device.path() + ": " + errnoText());
    if (std::chrono::steady_clock::now() > deadline)
      throw Error(runWhat, "the device is busy: another run holds " + device.path() +
                               " (another thread or process) past the timeout");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

DeviceLock::~DeviceLock() { ::flock(fd_, LOCK_UN); }

// --- Board

Board::Board(const hw::Config& cfg, hw::Dram& dram, const BoardSettings& settings, uint64_t windowBytes,
             const std::string& windowName)
    : cfg_(cfg), isa_(cfg), dram_(dram), settings_(settings) {
  openRegisters(windowBytes, windowName);
}

std::string Board::timeoutText() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", settings_.timeout.count() / 1000.0);
  return buf;
}

void Board::openRegisters(uint64_t window, const std::string& windowName) {
  switch (settings_.registers) {
    case BoardSettings::Registers::kUio: {
      const auto [sysfs, node] = findUio(settings_.uio);
      const std::string sizeFile = sysfs + "/maps/map0/size";
      const uint64_t mapBytes = parseAddress(readText(sizeFile, "the UIO register map's size"), sizeFile);
      if (mapBytes < window)
        throw Error(node, "its register map 0 is " + std::to_string(mapBytes) + " bytes (" + sizeFile +
                              "), smaller than " + windowName + " of " + std::to_string(window) +
                              " bytes: the device tree node's reg size is wrong (docs/deploy.md)");
      registers_.open(node, true, "the UIO device");
      registers_.map(window, 0, "the UIO register map 0");
      device_ = node;
      break;
    }
    case BoardSettings::Registers::kDevMem:
      registers_.open("/dev/mem", true, "physical memory");
      registers_.map(window, settings_.devMemAddress, "the register window");
      device_ = "/dev/mem@" + hex(settings_.devMemAddress);
      break;
    case BoardSettings::Registers::kFile: {
      registers_.open(settings_.regsFile, false, "the fake device's register file");
      const int64_t bytes = registers_.regularFileSize();
      if (bytes < 0) throw Error(settings_.regsFile, "regs-file must be a regular file (a fake device's registers)");
      if (static_cast<uint64_t>(bytes) != window)
        throw Error(settings_.regsFile, "the register file holds " + std::to_string(bytes) + " bytes; " + windowName +
                                            " is " + std::to_string(window) +
                                            " bytes (is it a register file made by tessera-fake-zynq?)");
      registers_.map(window, 0, "the fake device's register file");
      device_ = "fake device " + settings_.regsFile;
      break;
    }
  }
}
void Board::openBuffer() {
  std::string sysfs = settings_.bufferSysfs;
  if (sysfs.empty()) {
    const size_t slash = settings_.buffer.rfind('/');
    const std::string node = settings_.buffer.substr(slash == std::string::npos ? 0 : slash + 1);
    for (const char* cls : {"/sys/class/u-dma-buf/", "/sys/class/udmabuf/"})
      if (isDirectory(cls + node)) sysfs = cls + node;
    if (sysfs.empty())
      throw Error(settings_.buffer, "no u-dma-buf attributes for it in /sys/class/u-dma-buf/" + node +
                                        " or /sys/class/udmabuf/" + node +
                                        "; is the u-dma-buf module loaded? (docs/deploy.md), or name the attribute "
                                        "directory with buffer-sysfs=DIR");
  }
  sysfs_ = sysfs;
  bufferPhys_ = parseAddress(readText(sysfs + "/phys_addr", "the buffer's physical address"), sysfs + "/phys_addr");
  const uint64_t bytes = parseAddress(readText(sysfs + "/size", "the buffer's size"), sysfs + "/size");
  if (bufferPhys_ % kPage || bufferPhys_ == 0)
    throw Error(sysfs + "/phys_addr", hex(bufferPhys_) + " is not a page-aligned, non-zero physical address");
  if (bytes < 2 * kPage)
    throw Error(sysfs + "/size", std::to_string(bytes) + " bytes is too small a DMA buffer (at least " +
                                     std::to_string(2 * kPage) + ")");
  if (bufferPhys_ + bytes > hw::kAxiAddressLimit)
    throw Error(settings_.buffer, "the buffer [" + hex(bufferPhys_) + ", " + hex(bufferPhys_ + bytes) +
                                      ") reaches past 4 GiB; the accelerator's AXI addresses are 32-bit");
  // Instructions address DRAM in elements: the buffer's base must be a whole number of each.
  for (hw::MemId id : {hw::MemId::kUop, hw::MemId::kWgt, hw::MemId::kInp, hw::MemId::kAcc, hw::MemId::kOut,
                       hw::MemId::kAcc8})
    if (bufferPhys_ % static_cast<uint64_t>(cfg_.dramElemBytes(id)))
      throw Error(sysfs + "/phys_addr", hex(bufferPhys_) + " is not a multiple of the " +
                                            hw::memIdName(static_cast<uint32_t>(id)) + " element size (" +
                                            std::to_string(cfg_.dramElemBytes(id)) + " bytes)");
  buffer_.open(settings_.buffer, false, "the DMA buffer");
  const int64_t fileBytes = buffer_.regularFileSize();
  if (fileBytes >= 0 && static_cast<uint64_t>(fileBytes) < bytes)
    throw Error(settings_.buffer, "holds " + std::to_string(fileBytes) + " bytes but " + sysfs + "/size says " +
                                      std::to_string(bytes));
  buffer_.map(bytes, 0, "the DMA buffer");
}

void Board::sync(const char* trigger, uint64_t offset, uint64_t bytes, int direction) {
  bytes = std::min(bytes, buffer_.size() - offset);
  writeText(sysfs_ + "/sync_offset", std::to_string(offset), "the sync offset");
  writeText(sysfs_ + "/sync_size", std::to_string(bytes), "the sync size");
  writeText(sysfs_ + "/sync_direction", std::to_string(direction), "the sync direction");
  writeText(sysfs_ + "/" + trigger, "1", trigger);
}

// --- StagedRun

StagedRun::StagedRun(Board& board, const std::vector<hw::Insn>& prog, uint64_t insnPhys, uint32_t count,
                     const std::string& runWhat)
    : board_(board) {
  const hw::Config& cfg = board.config();
  const uint64_t insnBytes = uint64_t(count) * static_cast<uint64_t>(cfg.insnBytes);
  // The pages the run reads (its instructions, LOAD sources) and writes (STORE targets). Written
  // pages are read too: a STORE that writes part of a page must leave the rest as the session has it.
  std::vector<hw::DramRange> readRanges{{insnPhys, insnPhys + insnBytes}}, writeRanges;
  for (const hw::Insn& in : prog) {
    const hw::DramRange r = hw::dramRange(in, cfg);
    if (r.end > r.first) (in.opcode == hw::Opcode::kStore ? writeRanges : readRanges).push_back(r);
  }
  readRanges.insert(readRanges.end(), writeRanges.begin(), writeRanges.end());
  const std::vector<uint64_t> readPages = pagesOf(readRanges);
  writtenPages_ = pagesOf(writeRanges);
  base_ = readPages.front() * kPage;  // readPages includes the instructions
  insnOffset_ = (readPages.back() + 1) * kPage - base_;
  const uint64_t insnEnd = insnOffset_ + insnBytes;
  if (insnEnd > board.bufferBytes())
    throw Error(runWhat, "the run needs " + std::to_string(insnEnd) + " bytes of the DMA buffer " +
                             board.settings().buffer + " (its data spans [" + hex(base_) + ", " +
                             hex(base_ + insnOffset_) + "), then " + std::to_string(insnBytes) +
                             " bytes of instructions) but the buffer holds " + std::to_string(board.bufferBytes()) +
                             " bytes; give u-dma-buf a larger size (docs/deploy.md)");
  // One run at a time per device: other threads' targets and other processes share the registers
  // and the buffer.
  lock_.emplace(board.registers(), board.settings().timeout, runWhat);
  for (uint64_t page : readPages)
    std::memcpy(board.buffer_.data() + (page * kPage - base_), board.dram().raw(page * kPage), kPage);
  writeRelocated(prog, static_cast<int64_t>(board.bufferPhys()) - static_cast<int64_t>(base_));
  board.sync("sync_for_device", 0, roundUpToPage(insnEnd), kSyncToDevice);
}

// Every LOAD/STORE's dram_base moved by `delta` bytes, in the instructions' own units (elements of
// their memory type).
void StagedRun::writeRelocated(const std::vector<hw::Insn>& prog, int64_t delta) {
  const hw::Config& cfg = board_.config();
  for (size_t i = 0; i < prog.size(); ++i) {
    const hw::Insn& in = prog[i];
    // In range: the moved bytes lie inside the buffer, below 4 GiB.
    const hw::Insn moved = in.isMem() && !in.isNop() && in.ySize != 0 ? movedDramBase(in, i, delta, cfg) : in;
    hw::Isa::rawToBytes(board_.isa().encode(moved, hw::insnName(i, prog[i])),
                        board_.buffer_.data() + insnOffset_ + static_cast<uint64_t>(cfg.insnBytes) * i);
  }
}

void StagedRun::copyBack() {
  if (writtenPages_.empty()) return;
  const uint64_t first = writtenPages_.front() * kPage - base_, end = (writtenPages_.back() + 1) * kPage - base_;
  board_.sync("sync_for_cpu", first, end - first, kSyncFromDevice);
  for (uint64_t page : writtenPages_)
    std::memcpy(board_.dram().raw(page * kPage), board_.buffer_.data() + (page * kPage - base_), kPage);
}

// --- ZynqTarget

std::string ZynqTarget::name() const { return kName; }

void ZynqTarget::run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) {
  counters_.runs += 1;
  // The same checks, in the same order and words, as fsim and tsim before anything moves.
  const std::vector<hw::Insn> prog = hw::decodeRunnableProgram(board_.isa(), board_.dram(), insnPhys, count);
  const std::string runWhat = "run of " + std::to_string(count) + " instructions on " + board_.device();
  StagedRun staged(board_, prog, insnPhys, count, runWhat);
  execute(prog, count, staged, waitCycles, runWhat);
}

}  // namespace tessera::runtime::zynq
