// The remote protocol's wire layer: framing with deadlines over Asio and the field codecs.
#include "tessera/runtime/remote_wire.h"


#include "tessera/support/error.h"

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

bool Channel::runFor(const bool& done, std::chrono::milliseconds timeout) {
  io_.run_for(timeout);
  if (done) return true;
  // Closing cancels the operation; running again lets its handler see the cancellation.
  boost::system::error_code ignored;
  socket_.close(ignored);
  io_.restart();
  io_.run();
  return false;
}

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
  if (!runFor(done, timeout))
    throw WireError(peer_ + ": timed out after " + std::to_string(timeout.count() / 1000.0).substr(0, 5) + " s " + doing);
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
  if (!runFor(done, timeout))
    throw WireError(peer_ + ": no answer to the connection attempt within " + std::to_string(timeout.count() / 1000) + " s");
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

}  // namespace tessera::runtime::remote::wire
