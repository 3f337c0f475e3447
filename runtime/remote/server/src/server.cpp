// The server behind `tessera serve`: one device, one client at a time, others queued; runs requests on real targets.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <unordered_set>
#include <thread>

#include <sys/socket.h>

#include "tessera/runtime/remote_server.h"
#include "tessera/runtime/remote_wire.h"
#include "tessera/support/error.h"

namespace tessera::runtime::remote {

using std::chrono::milliseconds;

namespace {

// Connections beyond the holder and the queue that may be mid-handshake at once; more are closed
// unanswered, so a flood costs no more than this many threads.
constexpr unsigned kHandshakeSlack = 8;
constexpr milliseconds kHandshakeTimeout{10000};

std::string clock() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&now));
  return buf;
}

// An error to report to the client: fatal ones end the connection.
struct Refusal {
  bool fatal;
  std::string where, reason;
};

}  // namespace

struct Server::Impl {
  ServeOptions opt;
  std::string secret;
  bool fixedConfig = false;
  hw::Config config;
  milliseconds idle{60000};

  wire::asio::io_context io;
  wire::tcp::acceptor acceptor{io};
  std::thread acceptThread;

  std::mutex mutex;
  std::condition_variable changed;
  std::string holder;            // who holds the device; empty: free
  std::deque<uint64_t> queue;    // tickets of the clients waiting, first served first
  uint64_t tickets = 0;
  std::set<int> sockets;         // open client sockets, shut down by stop()
  unsigned connections = 0;      // connection threads alive
  bool stopping = false;
  std::mutex logMutex;

  void log(const std::string& line) {
    if (!opt.log) return;
    std::lock_guard<std::mutex> lock(logMutex);
    *opt.log << "tessera serve: " << clock() << " " << line << std::endl;
  }

  void accept();
  void serve(std::unique_ptr<wire::Channel> ch);
  void handshake(wire::Channel& ch, std::string* clientName);
  void acquire(wire::Channel& ch, const std::string& who);
  void release();
  void requests(wire::Channel& ch);
};

namespace {

void sendError(wire::Channel& ch, const Refusal& r, milliseconds timeout) {
  wire::Writer w;
  w.u8(r.fatal ? 1 : 0);
  w.str(r.where);
  w.str(r.reason);
  ch.send(wire::Msg::kError, w.buffer(), timeout);
}

struct Device {
  std::unique_ptr<hw::Dram> dram;
  std::unique_ptr<Target> target;
  // A WRITE that failed, reported by the next RUN.
  std::unique_ptr<Refusal> pending;
  uint64_t pagesReceived = 0;  // since the last run, for the log
  // Every page the client sent: a run may write back only those, so a client cannot make the
  // server snapshot more memory than it sent.
  std::unordered_set<uint64_t> known;
};

uint64_t pageLength(const hw::Dram& dram, uint64_t phys) { return std::min<uint64_t>(hw::Dram::kPageBytes, dram.span() - phys); }

}  // namespace

void Server::Impl::accept() {
  auto ch = std::make_unique<wire::Channel>("client");
  wire::Channel* raw = ch.get();
  acceptor.async_accept(raw->socket(), [this, ch = std::move(ch)](const boost::system::error_code& ec) mutable {
    if (ec) {
      if (ec != wire::asio::error::operation_aborted) accept();
      return;
    }
    boost::system::error_code ignored;
    const auto remote = ch->socket().remote_endpoint(ignored);
    ch->setPeer("client " + remote.address().to_string() + ":" + std::to_string(remote.port()));
    ch->socket().set_option(wire::tcp::no_delay(true), ignored);
    std::unique_lock<std::mutex> lock(mutex);
    if (connections >= 1 + opt.queueLimit + kHandshakeSlack) {
      lock.unlock();
      log(ch->peer() + ": refused unanswered (" + std::to_string(connections) + " connections open)");
      ch->close();
    } else {
      ++connections;
      sockets.insert(ch->socket().native_handle());
      lock.unlock();
      std::thread(&Impl::serve, this, std::move(ch)).detach();
    }
    accept();
  });
}

void Server::Impl::handshake(wire::Channel& ch, std::string* clientName) {
  const auto serverNonce = wire::randomNonce();
  wire::Writer hello;
  hello.bytes(wire::kMagic, 4);
  hello.u16(kProtocolVersion);
  hello.bytes(serverNonce.data(), serverNonce.size());
  hello.u8(secret.empty() ? 0 : 1);
  hello.u32(opt.maxMessageBytes);
  hello.str(opt.target);
  hello.str("tessera serve");
  const milliseconds timeout = std::min(idle, kHandshakeTimeout);
  ch.send(wire::Msg::kHello, hello.buffer(), timeout);
  const wire::Frame f = ch.receive(64 * 1024, timeout, timeout);
  if (f.type != static_cast<uint8_t>(wire::Msg::kClientHello))
    throw Refusal{true, "", "protocol error: expected CLIENT_HELLO, got " + std::string(wire::msgName(f.type)) + " (type " +
                                std::to_string(f.type) + ")"};
  wire::Reader r(f.payload, "CLIENT_HELLO");
  if (std::memcmp(r.bytes(4, "magic"), wire::kMagic, 4) != 0)
    throw Refusal{true, "", "protocol error: CLIENT_HELLO lacks the magic bytes TSRP (not a Tessera remote client)"};
  const uint16_t version = r.u16("version");
  if (version != kProtocolVersion)
    throw Refusal{true, "", "protocol version mismatch: the client speaks version " + std::to_string(version) +
                                ", this server speaks version " + std::to_string(kProtocolVersion) +
                                " (run the same Tessera release on both ends)"};
  const uint8_t* clientNonce = r.bytes(wire::kNonceBytes, "nonce");
  *clientName = r.str("client name", 256);
  // It goes into the log and into other clients' busy messages: printable characters only.
  for (char& c : *clientName)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  const bool hasMac = r.u8("has mac") != 0;
  const uint8_t* mac = hasMac ? r.bytes(wire::kMacBytes, "mac") : nullptr;
  r.end();
  std::array<uint8_t, wire::kMacBytes> proof{};
  if (!secret.empty()) {
    const auto expected = wire::hmacSha256(secret, wire::authMessage("tessera-remote client", serverNonce.data(), clientNonce));
    if (!mac || !wire::equalConstantTime(mac, expected.data(), wire::kMacBytes))
      throw Refusal{true, "", std::string("authentication failed: ") +
                                  (mac ? "wrong shared secret" : "this server requires a shared secret")};
    proof = wire::hmacSha256(secret, wire::authMessage("tessera-remote server", serverNonce.data(), clientNonce));
  }
  ch.setPeer(ch.peer() + " (" + *clientName + ")");
  // WELCOME waits until the device is ours; keep the proof for it.
  wire::Writer welcome;
  welcome.u8(secret.empty() ? 0 : 1);
  if (!secret.empty()) welcome.bytes(proof.data(), proof.size());
  acquire(ch, ch.peer());
  ch.send(wire::Msg::kWelcome, welcome.buffer(), idle);
}

void Server::Impl::acquire(wire::Channel& ch, const std::string& who) {
  const std::string me = who + " since " + clock();
  std::unique_lock<std::mutex> lock(mutex);
  const uint64_t ticket = ++tickets;
  if (holder.empty() && queue.empty()) {
    holder = me;
    return;
  }
  if (queue.size() >= opt.queueLimit)
    throw Refusal{true, "", "device busy: held by " + holder + "; " + std::to_string(queue.size()) +
                                " client(s) already queued, the server's limit (--queue)"};
  queue.push_back(ticket);
  log(who + ": queued behind " + holder);
  for (;;) {
    if (stopping) throw Refusal{true, "", "the server is shutting down"};
    if (holder.empty() && queue.front() == ticket) {
      queue.pop_front();
      holder = me;
      return;
    }
    const auto at = std::find(queue.begin(), queue.end(), ticket);
    wire::Writer w;
    w.u32(static_cast<uint32_t>(at - queue.begin() + 1));
    w.str(holder);
    lock.unlock();
    try {
      // Doubles as a liveness check: a queued client that went away is dropped from the queue.
      ch.send(wire::Msg::kQueued, w.buffer(), idle);
    } catch (...) {
      lock.lock();
      queue.erase(std::find(queue.begin(), queue.end(), ticket));
      changed.notify_all();
      throw;
    }
    lock.lock();
    changed.wait_for(lock, wire::kHeartbeatPeriod);
  }
}

void Server::Impl::release() {
  std::lock_guard<std::mutex> lock(mutex);
  holder.clear();
  changed.notify_all();
}

void Server::Impl::serve(std::unique_ptr<wire::Channel> ch) {
  const int fd = ch->socket().native_handle();
  bool held = false;
  try {
    std::string clientName;
    try {
      handshake(*ch, &clientName);
      held = true;
      log(ch->peer() + ": holds the device");
      requests(*ch);
    } catch (const wire::PeerClosed&) {
      log(ch->peer() + ": disconnected");
    } catch (const wire::WireError& e) {
      // Framing broken or peer gone: say why if the peer still listens. The text names the peer.
      const std::string what = e.what();
      throw Refusal{true, "", what.rfind(ch->peer() + ": ", 0) == 0 ? what.substr(ch->peer().size() + 2) : what};
    }
  } catch (const Refusal& r) {
    log(ch->peer() + ": " + (r.where.empty() ? r.reason : r.where + ": " + r.reason));
    try {
      if (ch->isOpen()) sendError(*ch, r, milliseconds(1000));
    } catch (const std::exception&) {
    }
  } catch (const std::exception& e) {
    log(ch->peer() + ": internal error: " + e.what());
  }
  if (held) {
    release();
    log(ch->peer() + ": released the device");
  }
  std::lock_guard<std::mutex> lock(mutex);
  sockets.erase(fd);
  ch->close();
  --connections;
  changed.notify_all();
}

void Server::Impl::requests(wire::Channel& ch) {
  std::map<uint32_t, Device> devices;
  uint32_t nextDevice = 1;
  uint32_t id = 0;  // the device the current request names
  auto deviceOf = [&](wire::Reader& r) -> Device& {
    id = r.u32("device");
    const auto it = devices.find(id);
    if (it == devices.end()) throw Refusal{true, "", "protocol error: no open device " + std::to_string(id)};
    return it->second;
  };
  auto reply = [&](wire::Msg type, wire::Writer& w) { ch.send(type, w.buffer(), idle); };
  for (;;) {
    const wire::Frame f = ch.receive(opt.maxMessageBytes, idle, idle);
    wire::Reader r(f.payload, wire::msgName(f.type));
    switch (static_cast<wire::Msg>(f.type)) {
      case wire::Msg::kOpen: {
        const std::string json = r.str("config", 64 * 1024);
        TargetOptions options = opt.targetOptions;
        const uint32_t n = r.u32("option count");
        std::vector<std::pair<std::string, std::string>> asked;
        for (uint32_t i = 0; i < n; ++i) {
          std::string k = r.str("option key", 1024);
          asked.emplace_back(std::move(k), r.str("option value", 64 * 1024));
        }
        r.end();
        try {
          if (devices.size() >= opt.maxDevicesPerClient)
            throw Error("OPEN", "this client already has " + std::to_string(devices.size()) + " devices open, the server's limit");
          hw::Config cfg = hw::Config::fromJson(json, "the client's config");
          if (fixedConfig && cfg.toJson() != config.toJson())
            throw Error("config " + cfg.name, "this server's device runs config " + config.name + " only (tessera serve --config)");
          for (const auto& [k, v] : asked) {
            if (std::find(opt.clientOptionKeys.begin(), opt.clientOptionKeys.end(), k) == opt.clientOptionKeys.end())
              throw Error("target option '" + k + "'", "the server does not let clients set it (tessera serve --client-option " + k + ")");
            options[k] = v;
          }
          Device d;
          d.dram = std::make_unique<hw::Dram>(cfg);
          d.target = createTarget(opt.target, cfg, *d.dram, options);
          const uint32_t opened = nextDevice++;
          wire::Writer w;
          w.u32(opened);
          w.str(d.target->variant());
          devices.emplace(opened, std::move(d));
          reply(wire::Msg::kOpened, w);
        } catch (const Error& e) {
          sendError(ch, Refusal{false, e.where(), e.reason()}, idle);
        }
        break;
      }
      case wire::Msg::kClose: {
        const uint32_t closing = r.u32("device");
        r.end();
        devices.erase(closing);
        break;
      }
      case wire::Msg::kWrite: {
        Device& d = deviceOf(r);
        const uint32_t n = r.u32("page count");
        for (uint32_t i = 0; i < n; ++i) {
          const uint64_t phys = r.u64("phys");
          const uint32_t len = r.u32("length");
          const uint8_t* bytes = r.bytes(len, "page bytes");
          if (d.pending) continue;
          try {
            if (phys % hw::Dram::kPageBytes || phys >= d.dram->span() || len != pageLength(*d.dram, phys))
              throw Error("WRITE page at " + std::to_string(phys), std::to_string(len) + " bytes is not a whole page of DRAM");
            d.dram->write(phys, bytes, len, "WRITE page at " + std::to_string(phys));
            ++d.pagesReceived;
            d.known.insert(phys);
          } catch (const Error& e) {
            d.pending = std::make_unique<Refusal>(Refusal{false, e.where(), e.reason()});
          }
        }
        r.end();
        break;
      }
      case wire::Msg::kRun: {
        Device& d = deviceOf(r);
        const uint64_t insnPhys = r.u64("insn phys");
        const uint32_t count = r.u32("count");
        const uint32_t waitCycles = r.u32("wait cycles");
        const uint32_t ranges = r.u32("range count");
        std::vector<uint64_t> pages;  // physical addresses of the pages the run may write
        for (uint32_t i = 0; i < ranges; ++i) {
          const uint64_t first = r.u64("range start");
          const uint64_t n = r.u64("range pages");
          if (first % hw::Dram::kPageBytes || first == 0 || first >= d.dram->span() ||
              n > (d.dram->span() - first + hw::Dram::kPageBytes - 1) / hw::Dram::kPageBytes)
            throw Refusal{true, "", "protocol error: RUN write-back range of " + std::to_string(n) + " pages at " +
                                        std::to_string(first) + " leaves DRAM"};
          if (pages.size() + n > d.known.size())
            throw Refusal{true, "", "protocol error: RUN write-back ranges cover more pages than the client sent"};
          for (uint64_t p = 0; p < n; ++p) {
            const uint64_t phys = first + p * hw::Dram::kPageBytes;
            if (!d.known.count(phys))
              throw Refusal{true, "", "protocol error: RUN write-back page at " + std::to_string(phys) +
                                          " was never sent by the client"};
            pages.push_back(phys);
          }
        }
        r.end();
        bool ok = true;
        Refusal failure{false, "", ""};
        if (d.pending) {
          ok = false;
          failure = *d.pending;
          d.pending.reset();
        } else {
          std::vector<uint8_t> before;
          before.reserve(pages.size() * hw::Dram::kPageBytes);
          for (uint64_t phys : pages) {
            const uint8_t* p = d.dram->raw(phys);
            before.insert(before.end(), p, p + pageLength(*d.dram, phys));
          }
          // Heartbeats while the target runs, so the client can tell a long run from a dead server.
          std::mutex beatMutex;
          std::condition_variable beatStop;
          bool done = false;
          std::thread beat([&] {
            std::unique_lock<std::mutex> lock(beatMutex);
            while (!beatStop.wait_for(lock, wire::kHeartbeatPeriod, [&] { return done; })) {
              try {
                ch.send(wire::Msg::kHeartbeat, {}, idle);
              } catch (const std::exception&) {
                return;  // the sends after the run report it
              }
            }
          });
          const auto started = std::chrono::steady_clock::now();
          if (opt.logRuns)
            log(ch.peer() + ": device " + std::to_string(id) + " runs " + std::to_string(count) + " instructions, " +
                std::to_string(d.pagesReceived) + " pages received");
          d.pagesReceived = 0;
          try {
            d.target->run(insnPhys, count, waitCycles);
          } catch (const Error& e) {
            ok = false;
            failure = Refusal{false, e.where(), e.reason()};
          } catch (const std::exception& e) {
            ok = false;
            failure = Refusal{false, "", e.what()};
          }
          {
            std::lock_guard<std::mutex> lock(beatMutex);
            done = true;
          }
          beatStop.notify_all();
          beat.join();
          // The pages the run changed, whether it completed or failed part way.
          wire::Writer chunk;
          uint32_t inChunk = 0;
          auto flush = [&] {
            if (!inChunk) return;
            wire::Writer w;
            w.u32(id);
            w.u32(inChunk);
            w.bytes(chunk.buffer().data(), chunk.size());
            chunk.buffer().clear();
            inChunk = 0;
            ch.send(wire::Msg::kData, w.buffer(), idle);
          };
          size_t offset = 0;
          uint64_t changedPages = 0;
          for (uint64_t phys : pages) {
            const uint64_t len = pageLength(*d.dram, phys);
            const uint8_t* now = d.dram->raw(phys);
            if (std::memcmp(now, before.data() + offset, len) != 0) {
              ++changedPages;
              if (chunk.size() + 12 + len > wire::kChunkBytes) {
                flush();
              }
              chunk.u64(phys);
              chunk.u32(static_cast<uint32_t>(len));
              chunk.bytes(now, len);
              ++inChunk;
            }
            offset += len;
          }
          flush();
          if (opt.logRuns)
            log(ch.peer() + ": device " + std::to_string(id) + " ran in " +
                std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()).substr(0, 6) +
                " s, " + std::to_string(changedPages) + " pages changed" + (ok ? "" : ", failed: " + failure.reason));
        }
        wire::Writer w;
        w.u32(id);
        w.u8(ok ? 1 : 0);
        w.str(failure.where);
        w.str(failure.reason);
        wire::putCounters(w, d.target->counters());
        reply(wire::Msg::kRunDone, w);
        break;
      }
      case wire::Msg::kResetCounters: {
        Device& d = deviceOf(r);
        r.end();
        d.target->resetCounters();
        wire::Writer w;
        wire::putCounters(w, d.target->counters());
        reply(wire::Msg::kCounters, w);
        break;
      }
      case wire::Msg::kTrace: {
        Device& d = deviceOf(r);
        const bool on = r.u8("on") != 0;
        r.end();
        wire::Writer w;
        w.u8(d.target->traceInstructions(on) ? 1 : 0);
        reply(wire::Msg::kTraceResult, w);
        break;
      }
      case wire::Msg::kTakeSpans: {
        Device& d = deviceOf(r);
        r.end();
        wire::Writer w;
        wire::putSpans(w, d.target->takeInstructionSpans());
        reply(wire::Msg::kSpans, w);
        break;
      }
      default:
        throw Refusal{true, "", "protocol error: unexpected message " + std::string(wire::msgName(f.type)) + " (type " +
                                    std::to_string(f.type) + ") from a client"};
    }
  }
}

Server::Server(const ServeOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.opt = options;
  if (options.maxMessageBytes < wire::kMinMessageBytes)
    throw Error("message size limit " + std::to_string(options.maxMessageBytes),
                "below the protocol's minimum of " + std::to_string(wire::kMinMessageBytes) + " (one page chunk)");
  if (!(options.idleTimeoutSeconds > 0) || options.idleTimeoutSeconds > 1e6)
    throw Error("idle timeout", "expected a number of seconds in (0, 1e6]");
  s.idle = milliseconds(static_cast<int64_t>(options.idleTimeoutSeconds * 1000));
  if (s.idle <= wire::kHeartbeatPeriod)
    throw Error("idle timeout", "must exceed the heartbeat period of 1 s");
  if (isRemoteName(options.target)) throw Error("served target " + options.target, "a server cannot serve another server's device");
  const TargetInfo& info = findTarget(options.target);
  if (!options.config.empty()) {
    s.fixedConfig = true;
    s.config = hw::Config::load(options.config);
    checkTarget(info, s.config, options.targetOptions);
  }
  if (!options.secretFile.empty()) s.secret = wire::readSecretFile(options.secretFile, "server secret file");
  boost::system::error_code ec;
  const auto address = wire::asio::ip::make_address(options.bind, ec);
  if (ec) throw Error("bind address " + options.bind, "not an IP address: " + ec.message());
  const wire::tcp::endpoint endpoint(address, options.port);
  s.acceptor.open(endpoint.protocol(), ec);
  if (!ec) s.acceptor.set_option(wire::tcp::acceptor::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(endpoint, ec);
  if (!ec) s.acceptor.listen(wire::asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error("address " + options.bind + " port " + std::to_string(options.port), "cannot listen: " + ec.message());
  s.accept();
  if (options.onListening) options.onListening(options.bind, port());
  s.acceptThread = std::thread([&s] { s.io.run(); });
}

Server::~Server() {
  stop();
  if (impl_->acceptThread.joinable()) impl_->acceptThread.join();
  // Connection threads hold pointers into impl_: wait until the last one has left.
  std::unique_lock<std::mutex> lock(impl_->mutex);
  impl_->changed.wait(lock, [&] { return impl_->connections == 0; });
}

uint16_t Server::port() const { return impl_->acceptor.local_endpoint().port(); }

void Server::wait() {
  if (impl_->acceptThread.joinable()) impl_->acceptThread.join();
}

void Server::stop() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.stopping) return;
    s.stopping = true;
    // Wakes every connection blocked on its socket; a running target finishes its run first.
    for (int fd : s.sockets) ::shutdown(fd, SHUT_RDWR);
    s.changed.notify_all();
  }
  wire::asio::post(s.io, [&s] {
    boost::system::error_code ignored;
    s.acceptor.close(ignored);
  });
}

}  // namespace tessera::runtime::remote
