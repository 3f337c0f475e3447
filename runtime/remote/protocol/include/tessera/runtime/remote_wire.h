// The remote protocol's wire layer: frames over TCP with bounded sizes and timeouts, field encoding, and the challenge-response's HMAC-SHA-256.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/asio.hpp>

#include "tessera/hw/counters.h"
#include "tessera/hw/insn_trace.h"

namespace tessera::runtime::remote::wire {

namespace asio = boost::asio;
using asio::ip::tcp;

// Message types (docs/remote.md, "Messages"). S: sent by the server, C: by the client.
enum class Msg : uint8_t {
  kHello = 1,          // S: magic, version, server nonce, auth required, max message, served target
  kClientHello = 2,    // C: magic, version, client nonce, client name, MAC
  kWelcome = 3,        // S: the device is yours; server MAC
  kQueued = 4,         // S: position, holder (repeated while waiting)
  kError = 5,          // S: where, reason (the connection closes after it unless inside a run's reply)
  kOpen = 6,           // C: config JSON, target options
  kOpened = 7,         // S: device id, target name, variant
  kClose = 8,          // C: device id (no reply)
  kWrite = 9,          // C: device id, pages (no reply; a failure is reported by the next reply)
  kRun = 10,           // C: device id, insn phys, count, wait cycles, write-back page ranges
  kHeartbeat = 11,     // S: a run is still going
  kData = 12,          // S: device id, pages the run changed
  kRunDone = 13,       // S: device id, ok, where, reason, counters
  kResetCounters = 14, // C: device id -> kCounters
  kCounters = 15,      // S: counters
  kTrace = 16,         // C: device id, on -> kTraceResult
  kTraceResult = 17,   // S: bool
  kTakeSpans = 18,     // C: device id -> kSpans
  kSpans = 19,         // S: runs of spans
};
const char* msgName(uint8_t type);

constexpr char kMagic[4] = {'T', 'S', 'R', 'P'};
constexpr size_t kHeaderBytes = 8;   // u32 payload length, u8 type, 3 zero bytes
constexpr size_t kNonceBytes = 32;
constexpr size_t kMacBytes = 32;
// Pages travel in chunks of at most this many payload bytes, whatever the peers' limits.
constexpr size_t kChunkBytes = 4u << 20;
// A server sends kHeartbeat (or kQueued) at least this often while a client waits on it.
constexpr std::chrono::milliseconds kHeartbeatPeriod{1000};
// Smallest message limit either end accepts: a full chunk plus its framing fits.
constexpr uint32_t kMinMessageBytes = kChunkBytes + 4096;

// Thrown when the peer breaks the protocol or the connection fails; the text names the peer.
struct WireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The peer closed the connection between messages: the normal end of a session.
struct PeerClosed : WireError {
  using WireError::WireError;
};

// Appends little-endian fields.
class Writer {
 public:
  void u8(uint8_t v) { buf_.push_back(v); }
  void u16(uint16_t v);
  void u32(uint32_t v);
  void u64(uint64_t v);
  void bytes(const void* p, size_t n);
  void str(const std::string& s);  // u32 length, then the bytes
  std::vector<uint8_t>& buffer() { return buf_; }
  size_t size() const { return buf_.size(); }

 private:
  std::vector<uint8_t> buf_;
};

// Reads fields of one message's payload; running past its end throws WireError naming the
// message and the field.
class Reader {
 public:
  Reader(const std::vector<uint8_t>& payload, std::string message) : p_(payload), msg_(std::move(message)) {}
  uint8_t u8(const char* field);
  uint16_t u16(const char* field);
  uint32_t u32(const char* field);
  uint64_t u64(const char* field);
  const uint8_t* bytes(size_t n, const char* field);
  // A string of at most `limit` bytes.
  std::string str(const char* field, size_t limit = 1u << 20);
  size_t remaining() const { return p_.size() - pos_; }
  // Throws unless every byte was read: trailing bytes mean the peer and we disagree on the layout.
  void end();

 private:
  void need(size_t n, const char* field);
  // The next `bytes` bytes as an unsigned little-endian number.
  uint64_t littleEndian(int bytes, const char* field);
  const std::vector<uint8_t>& p_;
  size_t pos_ = 0;
  std::string msg_;
};

struct Frame {
  uint8_t type = 0;
  std::vector<uint8_t> payload;
};

// One TCP connection with frame I/O. Every operation has a deadline: a read gives up when no byte
// arrived for `timeout`, a write when the peer took none for as long; the socket is closed then.
// Not thread-safe: one thread at a time.
class Channel {
 public:
  explicit Channel(std::string peer);
  // Connects to host:port within `timeout`.
  void connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);
  tcp::socket& socket() { return socket_; }
  asio::io_context& context() { return io_; }
  const std::string& peer() const { return peer_; }
  void setPeer(std::string peer) { peer_ = std::move(peer); }

  void send(Msg type, const std::vector<uint8_t>& payload, std::chrono::milliseconds timeout);
  // Receives one frame whose payload is at most `maxBytes`; a larger announced length is refused
  // before anything is allocated for it. `waitTimeout` bounds the wait for the frame's first byte,
  // `stallTimeout` every later wait for more bytes.
  Frame receive(uint32_t maxBytes, std::chrono::milliseconds waitTimeout, std::chrono::milliseconds stallTimeout);
  bool isOpen() const { return socket_.is_open(); }
  void close();

 private:
  // Runs the started operation until its handler set `done`, for at most `timeout`; past it, closes
  // the socket (cancelling the operation) and returns false.
  bool runFor(const bool& done, std::chrono::milliseconds timeout);
  // Runs one asynchronous read or write to completion or `timeout`.
  template <class Start>
  size_t complete(Start start, std::chrono::milliseconds timeout, const char* doing);
  void readExact(uint8_t* dst, size_t n, std::chrono::milliseconds timeout, const char* doing);

  asio::io_context io_;
  tcp::socket socket_;
  std::string peer_;
  bool lastWasEof_ = false;
};

// Page lists of kWrite and kData: u32 count, then per page u64 phys, u32 length (<= 4096), bytes.
struct PageRef {
  uint64_t phys;
  uint32_t length;
  const uint8_t* data;
};

void putCounters(Writer& w, const hw::Counters& c);
hw::Counters getCounters(Reader& r);
void putSpans(Writer& w, const std::vector<hw::RunSpans>& runs);
std::vector<hw::RunSpans> getSpans(Reader& r);

// The challenge-response (auth.cpp, on OpenSSL's libcrypto). HMAC-SHA-256 (RFC 2104) of `message`
// under `key`.
std::array<uint8_t, kMacBytes> hmacSha256(const std::string& key, const std::vector<uint8_t>& message);
// Compares without an early exit, so the time taken does not reveal how many bytes matched.
bool equalConstantTime(const uint8_t* a, const uint8_t* b, size_t n);
// kNonceBytes from the system's cryptographic random generator.
std::array<uint8_t, kNonceBytes> randomNonce();
// The secret of a --secret-file / remote.secret-file: the file's bytes, trailing newlines
// dropped; throws tessera::Error if unreadable, empty, or readable by group or others.
std::string readSecretFile(const std::string& path, const std::string& what);

// What each side MACs: a label, then the server's and the client's nonces.
std::vector<uint8_t> authMessage(const char* label, const uint8_t* serverNonce, const uint8_t* clientNonce);

}  // namespace tessera::runtime::remote::wire
