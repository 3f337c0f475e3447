// The remote protocol's wire layer: framing with deadlines over Asio, field codecs, SHA-256 and HMAC.
#include "tessera/runtime/remote_wire.h"

#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "tessera/support/error.h"
#include "tessera/support/file_io.h"

namespace tessera::runtime::remote::wire {

const char* msgName(uint8_t type) {
  switch (static_cast<Msg>(type)) {
    case Msg::kHello: return "HELLO";
    case Msg::kClientHello: return "CLIENT_HELLO";
    case Msg::kWelcome: return "WELCOME";
    case Msg::kQueued: return "QUEUED";
    case Msg::kError: return "ERROR";
    case Msg::kOpen: return "OPEN";
    case Msg::kOpened: return "OPENED";
    case Msg::kClose: return "CLOSE";
    case Msg::kWrite: return "WRITE";
    case Msg::kRun: return "RUN";
    case Msg::kHeartbeat: return "HEARTBEAT";
    case Msg::kData: return "DATA";
    case Msg::kRunDone: return "RUN_DONE";
    case Msg::kResetCounters: return "RESET_COUNTERS";
    case Msg::kCounters: return "COUNTERS";
    case Msg::kTrace: return "TRACE";
    case Msg::kTraceResult: return "TRACE_RESULT";
    case Msg::kTakeSpans: return "TAKE_SPANS";
    case Msg::kSpans: return "SPANS";
  }
  return "unknown";
}

// --- Field codecs ---

void Writer::u16(uint16_t v) {
  for (int i = 0; i < 2; ++i) buf_.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void Writer::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) buf_.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void Writer::u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void Writer::bytes(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  buf_.insert(buf_.end(), b, b + n);
}
void Writer::str(const std::string& s) {
  u32(static_cast<uint32_t>(s.size()));
  bytes(s.data(), s.size());
}

void Reader::need(size_t n, const char* field) {
  if (n > remaining())
    throw WireError("message " + msg_ + ": field '" + field + "' needs " + std::to_string(n) + " bytes, " +
                    std::to_string(remaining()) + " of the " + std::to_string(p_.size()) + "-byte payload are left");
}
uint8_t Reader::u8(const char* field) {
  need(1, field);
  return p_[pos_++];
}
uint64_t Reader::littleEndian(int bytes, const char* field) {
  need(size_t(bytes), field);
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p_[pos_ + size_t(i)];
  pos_ += size_t(bytes);
  return v;
}
uint16_t Reader::u16(const char* field) { return static_cast<uint16_t>(littleEndian(2, field)); }
uint32_t Reader::u32(const char* field) { return static_cast<uint32_t>(littleEndian(4, field)); }
uint64_t Reader::u64(const char* field) { return littleEndian(8, field); }
const uint8_t* Reader::bytes(size_t n, const char* field) {
  need(n, field);
  const uint8_t* p = p_.data() + pos_;
  pos_ += n;
  return p;
}
std::string Reader::str(const char* field, size_t limit) {
  const uint32_t n = u32(field);
  if (n > limit)
    throw WireError("message " + msg_ + ": field '" + field + "' is " + std::to_string(n) + " bytes, more than its limit of " +
                    std::to_string(limit));
  const uint8_t* p = bytes(n, field);
  return std::string(reinterpret_cast<const char*>(p), n);
}
void Reader::end() {
  if (remaining())
    throw WireError("message " + msg_ + ": " + std::to_string(remaining()) + " unexpected bytes after its last field");
}

// --- Channel ---

Channel::Channel(std::string peer) : socket_(io_), peer_(std::move(peer)) {}

template <class Start>
size_t Channel::complete(Start start, std::chrono::milliseconds timeout, const char* doing) {
  bool done = false;
  boost::system::error_code ec;
  size_t transferred = 0;
  start([&](const boost::system::error_code& e, size_t n) {
    ec = e;
    transferred = n;
    done = true;
  });
  io_.restart();
  io_.run_for(timeout);
  if (!done) {
    // Closing cancels the operation; running again lets its handler see the cancellation.
    boost::system::error_code ignored;
    socket_.close(ignored);
    io_.restart();
    io_.run();
    throw WireError(peer_ + ": timed out after " + std::to_string(timeout.count() / 1000.0).substr(0, 5) + " s " + doing);
  }
  lastWasEof_ = ec == asio::error::eof;
  if (ec) {
    boost::system::error_code ignored;
    socket_.close(ignored);
    if (ec == asio::error::eof || ec == asio::error::connection_reset || ec == asio::error::broken_pipe)
      throw WireError(peer_ + ": connection dropped by the peer " + doing);
    throw WireError(peer_ + ": " + ec.message() + " " + doing);
  }
  return transferred;
}

void Channel::connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  tcp::resolver resolver(io_);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) throw WireError(peer_ + ": cannot resolve host '" + host + "': " + ec.message());
  bool done = false;
  io_.restart();
  asio::async_connect(socket_, endpoints, [&](const boost::system::error_code& e, const tcp::endpoint&) {
    ec = e;
    done = true;
  });
  io_.run_for(timeout);
  if (!done) {
    boost::system::error_code ignored;
    socket_.close(ignored);
    io_.restart();
    io_.run();
    throw WireError(peer_ + ": no answer to the connection attempt within " + std::to_string(timeout.count() / 1000) + " s");
  }
  if (ec) throw WireError(peer_ + ": cannot connect: " + ec.message() + " (is `tessera serve` running there?)");
  socket_.set_option(tcp::no_delay(true), ec);
}

void Channel::send(Msg type, const std::vector<uint8_t>& payload, std::chrono::milliseconds timeout) {
  if (!socket_.is_open()) throw WireError(peer_ + ": connection already closed (the peer went away or broke the protocol earlier)");
  uint8_t header[kHeaderBytes] = {};
  const uint32_t n = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) header[i] = static_cast<uint8_t>(n >> (8 * i));
  header[4] = static_cast<uint8_t>(type);
  const std::string doing = std::string("sending ") + msgName(static_cast<uint8_t>(type));
  std::array<asio::const_buffer, 2> buffers = {asio::buffer(header), asio::buffer(payload)};
  complete([&](auto handler) { asio::async_write(socket_, buffers, handler); }, timeout, doing.c_str());
}

void Channel::readExact(uint8_t* dst, size_t n, std::chrono::milliseconds timeout, const char* doing) {
  // In pieces, so the deadline bounds a stall rather than the whole transfer.
  constexpr size_t kPiece = 256 * 1024;
  for (size_t done = 0; done < n;) {
    const size_t piece = std::min(kPiece, n - done);
    done += complete([&](auto handler) { asio::async_read(socket_, asio::buffer(dst + done, piece), handler); },
                     timeout, doing);
  }
}

Frame Channel::receive(uint32_t maxBytes, std::chrono::milliseconds waitTimeout, std::chrono::milliseconds stallTimeout) {
  if (!socket_.is_open()) throw WireError(peer_ + ": connection already closed (the peer went away or broke the protocol earlier)");
  uint8_t header[kHeaderBytes];
  // The first byte may be long in coming (a run); the rest of the header may not.
  try {
    readExact(header, 1, waitTimeout, "waiting for a message");
  } catch (const WireError&) {
    if (lastWasEof_) throw PeerClosed(peer_ + ": connection dropped by the peer");
    throw;
  }
  readExact(header + 1, kHeaderBytes - 1, stallTimeout, "in the middle of a message header");
  uint32_t n = 0;
  for (int i = 3; i >= 0; --i) n = (n << 8) | header[i];
  Frame f;
  f.type = header[4];
  // The caller still answers these two with an ERROR before it closes the connection.
  if (header[5] || header[6] || header[7]) {
    throw WireError(peer_ + ": malformed message header (reserved bytes not zero; not a Tessera remote peer, or "
                            "another protocol version)");
  }
  if (n > maxBytes) {
    throw WireError(peer_ + ": message " + msgName(f.type) + " of " + std::to_string(n) +
                    " bytes refused: larger than the limit of " + std::to_string(maxBytes) + " bytes");
  }
  f.payload.resize(n);
  readExact(f.payload.data(), n, stallTimeout, (std::string("in the middle of message ") + msgName(f.type)).c_str());
  return f;
}

void Channel::close() {
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

// --- Counters and spans ---

namespace {

// Every counter in a fixed order; a later protocol version may only append.
std::vector<uint64_t*> counterFields(hw::Counters& c) {
  std::vector<uint64_t*> f;
  for (auto& v : c.insns) f.push_back(&v);
  f.push_back(&c.nops);
  for (auto& v : c.loadBytes) f.push_back(&v);
  for (uint64_t* v : {&c.storeBytes, &c.gemmUops, &c.gemmResetUops, &c.macs, &c.aluUops, &c.aluElemOps, &c.cycles, &c.runs})
    f.push_back(v);
  for (auto& v : c.busyCycles) f.push_back(&v);
  for (auto& v : c.stallCycles) f.push_back(&v);
  f.push_back(&c.dramReadBeats);
  f.push_back(&c.dramWriteBeats);
  return f;
}

}  // namespace

void putCounters(Writer& w, const hw::Counters& c) {
  hw::Counters copy = c;
  const auto fields = counterFields(copy);
  w.u32(static_cast<uint32_t>(fields.size()));
  for (uint64_t* v : fields) w.u64(*v);
}

hw::Counters getCounters(Reader& r) {
  hw::Counters c;
  const auto fields = counterFields(c);
  const uint32_t n = r.u32("counter count");
  if (n != fields.size())
    throw WireError("counters: " + std::to_string(n) + " fields where this version has " + std::to_string(fields.size()));
  for (uint64_t* v : fields) *v = r.u64("counter");
  return c;
}

void putSpans(Writer& w, const std::vector<hw::RunSpans>& runs) {
  w.u32(static_cast<uint32_t>(runs.size()));
  for (const auto& run : runs) {
    w.u64(run.cycles);
    w.u32(run.insnCount);
    w.u32(static_cast<uint32_t>(run.spans.size()));
    for (const auto& s : run.spans) {
      w.u32(s.insn);
      w.u32(s.unit);
      w.u64(s.begin);
      w.u64(s.end);
    }
  }
}

std::vector<hw::RunSpans> getSpans(Reader& r) {
  const uint32_t runs = r.u32("run count");
  if (runs > r.remaining() / 16) throw WireError("spans: " + std::to_string(runs) + " runs cannot fit the message");
  std::vector<hw::RunSpans> out(runs);
  for (auto& run : out) {
    run.cycles = r.u64("cycles");
    run.insnCount = r.u32("instruction count");
    const uint32_t n = r.u32("span count");
    if (n > r.remaining() / 24) throw WireError("spans: " + std::to_string(n) + " spans cannot fit the message");
    run.spans.resize(n);
    for (auto& s : run.spans) {
      s.insn = r.u32("insn");
      s.unit = r.u32("unit");
      s.begin = r.u64("begin");
      s.end = r.u64("end");
    }
  }
  return out;
}

// --- SHA-256 (FIPS 180-4) and HMAC (RFC 2104) ---

namespace {

constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
    0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
    0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
    0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void compressBlock(uint32_t state[8], const uint8_t block[64]) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = uint32_t(block[4 * i]) << 24 | uint32_t(block[4 * i + 1]) << 16 | uint32_t(block[4 * i + 2]) << 8 | block[4 * i + 3];
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; ++i) {
    const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRoundConstants[i] + w[i];
    const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

}  // namespace

std::array<uint8_t, 32> sha256(const uint8_t* data, size_t n) {
  uint32_t state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  size_t full = n / 64;
  for (size_t i = 0; i < full; ++i) compressBlock(state, data + 64 * i);
  // The tail, the 0x80 marker and the message's bit length fill one or two final blocks.
  uint8_t tail[128] = {};
  const size_t rest = n - 64 * full;
  if (rest) std::memcpy(tail, data + 64 * full, rest);
  tail[rest] = 0x80;
  const size_t tailBlocks = rest + 1 + 8 <= 64 ? 1 : 2;
  const uint64_t bits = uint64_t(n) * 8;
  for (int i = 0; i < 8; ++i) tail[64 * tailBlocks - 1 - i] = static_cast<uint8_t>(bits >> (8 * i));
  for (size_t i = 0; i < tailBlocks; ++i) compressBlock(state, tail + 64 * i);
  std::array<uint8_t, 32> digest;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) digest[4 * i + j] = static_cast<uint8_t>(state[i] >> (24 - 8 * j));
  return digest;
}

std::array<uint8_t, 32> hmacSha256(const std::string& key, const std::vector<uint8_t>& message) {
  uint8_t block[64] = {};
  if (key.size() > 64) {
    const auto k = sha256(reinterpret_cast<const uint8_t*>(key.data()), key.size());
    std::memcpy(block, k.data(), k.size());
  } else {
    std::memcpy(block, key.data(), key.size());
  }
  std::vector<uint8_t> inner(64), outer(64);
  for (int i = 0; i < 64; ++i) {
    inner[i] = block[i] ^ 0x36;
    outer[i] = block[i] ^ 0x5c;
  }
  inner.insert(inner.end(), message.begin(), message.end());
  const auto innerDigest = sha256(inner.data(), inner.size());
  outer.insert(outer.end(), innerDigest.begin(), innerDigest.end());
  return sha256(outer.data(), outer.size());
}

bool equalConstantTime(const uint8_t* a, const uint8_t* b, size_t n) {
  uint8_t diff = 0;
  for (size_t i = 0; i < n; ++i) diff |= static_cast<uint8_t>(a[i] ^ b[i]);
  return diff == 0;
}

std::array<uint8_t, kNonceBytes> randomNonce() {
  std::random_device device;  // /dev/urandom on Linux
  std::array<uint8_t, kNonceBytes> nonce;
  for (size_t i = 0; i < nonce.size(); i += 4) {
    const uint32_t v = device();
    for (size_t j = 0; j < 4; ++j) nonce[i + j] = static_cast<uint8_t>(v >> (8 * j));
  }
  return nonce;
}

std::string readSecretFile(const std::string& path, const std::string& what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw Error(what + " " + path, "cannot open file for reading");
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    throw Error(what + " " + path, "readable by group or others; the secret must be private (chmod 600)");
  std::string secret;
  try {
    secret = readTextFile(path);
  } catch (const Error& e) {
    throw Error(what + " " + path, e.reason());
  }
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.empty()) throw Error(what + " " + path, "empty: a shared secret needs at least one byte");
  return secret;
}

std::vector<uint8_t> authMessage(const char* label, const uint8_t* serverNonce, const uint8_t* clientNonce) {
  std::vector<uint8_t> m(label, label + std::strlen(label));
  m.insert(m.end(), serverNonce, serverNonce + kNonceBytes);
  m.insert(m.end(), clientNonce, clientNonce + kNonceBytes);
  return m;
}

}  // namespace tessera::runtime::remote::wire
