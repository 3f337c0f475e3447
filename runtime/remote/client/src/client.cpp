// The remote:HOST:PORT[/T] target: a Target whose runs execute on a `tessera serve` device, DRAM pages synced both ways.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "tessera/hw/program.h"
#include "tessera/runtime/remote.h"
#include "tessera/runtime/remote_wire.h"
#include "tessera/runtime/target_plugin.h"
#include "tessera/runtime/target_support.h"

namespace tessera::runtime::remote {

using std::chrono::milliseconds;

namespace {

constexpr const char* kSecretKey = "remote.secret-file";
constexpr const char* kTimeoutKey = "remote.timeout";
constexpr const char* kQueueWaitKey = "remote.queue-wait";
// Replies of any size the server may send: DATA chunks, instruction spans of long traced runs.
constexpr uint32_t kClientMaxMessage = 256u << 20;

struct ClientSettings {
  std::string secretFile;
  milliseconds timeout{30000};
  milliseconds queueWait{600000};
  TargetOptions forwarded;  // every other key, for the server's target
};

ClientSettings settingsOf(const TargetOptions& options) {
  ClientSettings s;
  const auto secret = options.find(kSecretKey);
  if (secret != options.end()) {
    s.secretFile = secret->second;
  } else if (const char* env = std::getenv("TESSERA_REMOTE_SECRET_FILE")) {
    s.secretFile = env;
  }
  s.timeout = secondsOption(options, kTimeoutKey, s.timeout);
  s.queueWait = secondsOption(options, kQueueWaitKey, s.queueWait);
  for (const auto& [k, v] : options)
    if (k.rfind("remote.", 0) != 0) s.forwarded[k] = v;
  return s;
}

std::string clientName() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const passwd* pw = ::getpwuid(::geteuid());
  return std::string(pw ? pw->pw_name : "uid " + std::to_string(::geteuid())) + "@" + host + " pid " +
         std::to_string(::getpid());
}

// One connection to a server, shared by every remote Target of this process naming the same
// server, target and secret: the server serves one connection at a time, so two devices of one
// process (two threads' queues) must not wait on each other. Requests are serialized.
class Connection {
 public:
  Connection(const Endpoint& ep, const ClientSettings& settings)
      : ep_(ep), settings_(settings), channel_("remote server " + ep.address()) {
    std::string secret;
    if (!settings.secretFile.empty()) secret = wire::readSecretFile(settings.secretFile, "remote secret file");
    try {
      handshake(secret);
    } catch (const wire::WireError& e) {
      throw Error("", e.what());
    }
  }
  ~Connection() { channel_.close(); }

  std::mutex& mutex() { return mutex_; }
  // Without the request lock: a run in progress must not hold up another thread's new device.
  bool usable() const { return !lost_; }
  const std::string& servedTarget() const { return servedTarget_; }
  uint32_t serverMaxMessage() const { return serverMax_; }
  const ClientSettings& settings() const { return settings_; }

  void send(wire::Msg type, const std::vector<uint8_t>& payload) {
    checkUsable();
    try {
      channel_.send(type, payload, settings_.timeout);
    } catch (const wire::WireError& e) {
      lost(e.what());
    }
  }

  // The next frame other than a heartbeat; an ERROR frame is thrown as the server worded it.
  wire::Frame receive(const char* waitingFor) {
    checkUsable();
    for (;;) {
      wire::Frame f;
      try {
        f = channel_.receive(kClientMaxMessage, settings_.timeout, settings_.timeout);
      } catch (const wire::WireError& e) {
        lost(std::string(e.what()) + " (waiting for " + waitingFor + ")");
      }
      if (f.type == static_cast<uint8_t>(wire::Msg::kHeartbeat)) continue;
      if (f.type == static_cast<uint8_t>(wire::Msg::kError)) throwServerError(f);
      return f;
    }
  }

  // A frame of type `want`, or a protocol error that closes the connection.
  wire::Frame expect(wire::Msg want) {
    wire::Frame f = receive(wire::msgName(static_cast<uint8_t>(want)));
    if (f.type != static_cast<uint8_t>(want))
      lost(channel_.peer() + ": protocol error: expected " + wire::msgName(static_cast<uint8_t>(want)) + ", got " +
           wire::msgName(f.type) + " (type " + std::to_string(f.type) + ")");
    return f;
  }

  [[noreturn]] void lost(const std::string& why) {
    broken_ = why;
    lost_ = true;
    channel_.close();
    throw Error("", why);
  }

  template <class F>
  auto parse(const wire::Frame& f, F body) {
    try {
      wire::Reader r(f.payload, wire::msgName(f.type));
      return body(r);
    } catch (const wire::WireError& e) {
      lost(channel_.peer() + ": " + e.what());
    }
  }

 private:
  void checkUsable() {
    if (!broken_.empty()) throw Error("", "the connection was lost earlier: " + broken_);
  }

  [[noreturn]] void throwServerError(const wire::Frame& f) {
    std::string where, reason;
    bool fatal = true;
    parse(f, [&](wire::Reader& r) {
      fatal = r.u8("fatal") != 0;
      where = r.str("where");
      reason = r.str("reason");
      r.end();
      return 0;
    });
    if (fatal) {
      broken_ = channel_.peer() + ": " + (where.empty() ? reason : where + ": " + reason);
      lost_ = true;
      channel_.close();
    }
    throw Error(where, reason);
  }

  void handshake(const std::string& secret) {
    channel_.connect(ep_.host, ep_.port, settings_.timeout);
    wire::Frame hello = channel_.receive(64 * 1024, settings_.timeout, settings_.timeout);
    if (hello.type == static_cast<uint8_t>(wire::Msg::kError)) throwServerError(hello);
    std::array<uint8_t, wire::kNonceBytes> serverNonce{};
    bool authRequired = false;
    parse(hello, [&](wire::Reader& r) {
      if (hello.type != static_cast<uint8_t>(wire::Msg::kHello) || std::memcmp(r.bytes(4, "magic"), wire::kMagic, 4) != 0)
        throw wire::WireError("the peer is not a Tessera remote server (its first message is no HELLO)");
      const uint16_t version = r.u16("version");
      if (version != kProtocolVersion)
        throw wire::WireError("protocol version mismatch: the server speaks version " + std::to_string(version) +
                              ", this client speaks version " + std::to_string(kProtocolVersion) +
                              " (run the same Tessera release on both ends)");
      std::memcpy(serverNonce.data(), r.bytes(wire::kNonceBytes, "nonce"), wire::kNonceBytes);
      authRequired = r.u8("auth required") != 0;
      serverMax_ = r.u32("max message");
      servedTarget_ = r.str("target", 256);
      holderHint_ = r.str("server name", 1024);
      r.end();
      return 0;
    });
    if (serverMax_ < wire::kMinMessageBytes)
      lost(channel_.peer() + ": protocol error: the server's message limit " + std::to_string(serverMax_) +
           " is below the protocol's minimum " + std::to_string(wire::kMinMessageBytes));
    if (!ep_.target.empty() && ep_.target != servedTarget_)
      lost(channel_.peer() + " serves target " + servedTarget_ + ", not " + ep_.target + " (name remote:" +
           ep_.address() + "/" + servedTarget_ + ", or start a server with --target " + ep_.target + ")");
    if (authRequired && secret.empty())
      lost(channel_.peer() + " requires authentication: give its shared secret with the target option " + kSecretKey +
           "=FILE or TESSERA_REMOTE_SECRET_FILE");
    if (!authRequired && !secret.empty())
      lost(channel_.peer() + " does not authenticate, though a secret was given; refusing to trust it (start it "
                             "with --secret-file, or give no secret)");
    const auto clientNonce = wire::randomNonce();
    wire::Writer w;
    w.bytes(wire::kMagic, 4);
    w.u16(kProtocolVersion);
    w.bytes(clientNonce.data(), clientNonce.size());
    w.str(clientName());
    if (authRequired) {
      const auto mac = wire::hmacSha256(secret, wire::authMessage("tessera-remote client", serverNonce.data(), clientNonce.data()));
      w.u8(1);
      w.bytes(mac.data(), mac.size());
    } else {
      w.u8(0);
    }
    channel_.send(wire::Msg::kClientHello, w.buffer(), settings_.timeout);
    const auto queueDeadline = std::chrono::steady_clock::now() + settings_.queueWait;
    bool told = false;
    for (;;) {
      wire::Frame f = channel_.receive(64 * 1024, settings_.timeout, settings_.timeout);
      if (f.type == static_cast<uint8_t>(wire::Msg::kError)) throwServerError(f);
      if (f.type == static_cast<uint8_t>(wire::Msg::kQueued)) {
        uint32_t position = 0;
        std::string holder;
        parse(f, [&](wire::Reader& r) {
          position = r.u32("position");
          holder = r.str("holder", 1024);
          r.end();
          return 0;
        });
        if (!told) {
          std::fprintf(stderr, "tessera: %s: device busy (held by %s); waiting at position %u of its queue\n",
                       channel_.peer().c_str(), holder.c_str(), position);
          told = true;
        }
        if (std::chrono::steady_clock::now() > queueDeadline)
          lost(channel_.peer() + ": device busy: held by " + holder + "; gave up after waiting " +
               std::to_string(settings_.queueWait.count() / 1000) + " s in its queue (target option " + kQueueWaitKey + ")");
        continue;
      }
      if (f.type != static_cast<uint8_t>(wire::Msg::kWelcome))
        lost(channel_.peer() + ": protocol error: expected WELCOME, got " + wire::msgName(f.type));
      parse(f, [&](wire::Reader& r) {
        const uint8_t hasMac = r.u8("has mac");
        if (authRequired) {
          const auto expected =
              wire::hmacSha256(secret, wire::authMessage("tessera-remote server", serverNonce.data(), clientNonce.data()));
          if (!hasMac || !wire::equalConstantTime(r.bytes(wire::kMacBytes, "mac"), expected.data(), wire::kMacBytes))
            throw wire::WireError("the server failed to prove it knows the shared secret");
        }
        r.end();
        return 0;
      });
      return;
    }
  }

  Endpoint ep_;
  ClientSettings settings_;
  wire::Channel channel_;
  std::mutex mutex_;
  std::string broken_;
  std::atomic<bool> lost_{false};
  std::string servedTarget_, holderHint_;
  uint32_t serverMax_ = 0;
};

std::shared_ptr<Connection> sharedConnection(const Endpoint& ep, const ClientSettings& settings) {
  // One slot per key, locked while its connection is made: a second thread of this process waits
  // for the first's handshake (which may wait in a busy server's queue) instead of queueing behind
  // it, and connections under other keys are not held up.
  struct Slot {
    std::mutex mutex;
    std::weak_ptr<Connection> connection;
  };
  static std::mutex poolMutex;
  static std::map<std::string, std::shared_ptr<Slot>> pool;
  const std::string key = ep.address() + "/" + ep.target + "|" + settings.secretFile + "|" +
                          std::to_string(settings.timeout.count()) + "|" + std::to_string(settings.queueWait.count());
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(poolMutex);
    auto& entry = pool[key];
    if (!entry) entry = std::make_shared<Slot>();
    slot = entry;
  }
  std::lock_guard<std::mutex> lock(slot->mutex);
  // A connection lost earlier stays with the devices that used it; new devices get a fresh one.
  if (auto existing = slot->connection.lock(); existing && existing->usable()) return existing;
  auto fresh = std::make_shared<Connection>(ep, settings);
  slot->connection = fresh;
  return fresh;
}

// One device of the server, mirroring this process's DRAM in the pages its runs touch. The
// shadow holds, per page, the bytes the server's copy is known to have, so a page goes over the
// wire only when the host changed it since.
class RemoteTarget : public Target {
 public:
  RemoteTarget(std::string name, const Endpoint& ep, const hw::Config& cfg, hw::Dram& dram, const TargetOptions& options)
      : name_(std::move(name)), cfg_(cfg), isa_(cfg), dram_(dram) {
    const ClientSettings settings = settingsOf(options);
    conn_ = sharedConnection(ep, settings);
    std::lock_guard<std::mutex> lock(conn_->mutex());
    wire::Writer w;
    w.str(cfg.toJson());
    w.u32(static_cast<uint32_t>(settings.forwarded.size()));
    for (const auto& [k, v] : settings.forwarded) {
      w.str(k);
      w.str(v);
    }
    conn_->send(wire::Msg::kOpen, w.buffer());
    const wire::Frame f = conn_->expect(wire::Msg::kOpened);
    conn_->parse(f, [&](wire::Reader& r) {
      id_ = r.u32("device");
      variant_ = r.str("variant", 256);
      r.end();
      return 0;
    });
  }

  ~RemoteTarget() override {
    try {
      std::lock_guard<std::mutex> lock(conn_->mutex());
      wire::Writer w;
      w.u32(id_);
      conn_->send(wire::Msg::kClose, w.buffer());
    } catch (const std::exception&) {
      // The server forgets the device with the connection anyway.
    }
  }

  std::string name() const override { return name_; }
  std::string variant() const override { return variant_; }
  hw::Counters counters() const override { return counters_; }

  void resetCounters() override {
    std::lock_guard<std::mutex> lock(conn_->mutex());
    conn_->send(wire::Msg::kResetCounters, idPayload());
    counters_ = conn_->parse(conn_->expect(wire::Msg::kCounters), [](wire::Reader& r) {
      hw::Counters c = wire::getCounters(r);
      r.end();
      return c;
    });
  }

  bool traceInstructions(bool on) override {
    std::lock_guard<std::mutex> lock(conn_->mutex());
    wire::Writer w;
    w.u32(id_);
    w.u8(on ? 1 : 0);
    conn_->send(wire::Msg::kTrace, w.buffer());
    return conn_->parse(conn_->expect(wire::Msg::kTraceResult), [](wire::Reader& r) {
      const bool traced = r.u8("traced") != 0;
      r.end();
      return traced;
    });
  }

  std::vector<hw::RunSpans> takeInstructionSpans() override {
    std::lock_guard<std::mutex> lock(conn_->mutex());
    conn_->send(wire::Msg::kTakeSpans, idPayload());
    return conn_->parse(conn_->expect(wire::Msg::kSpans), [](wire::Reader& r) {
      auto spans = wire::getSpans(r);
      r.end();
      return spans;
    });
  }

  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override {
    std::vector<uint64_t> touched, written;  // page numbers
    pagesOfRun(insnPhys, count, &touched, &written);
    std::lock_guard<std::mutex> lock(conn_->mutex());
    upload(touched);
    wire::Writer w;
    w.u32(id_);
    w.u64(insnPhys);
    w.u32(count);
    w.u32(waitCycles);
    // Written pages as runs of consecutive page numbers.
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    for (uint64_t p : written) {
      if (!spans.empty() && spans.back().first + spans.back().second == p)
        ++spans.back().second;
      else
        spans.push_back({p, 1});
    }
    w.u32(static_cast<uint32_t>(spans.size()));
    for (const auto& [first, n] : spans) {
      w.u64(first * hw::Dram::kPageBytes);
      w.u64(n);
    }
    conn_->send(wire::Msg::kRun, w.buffer());
    for (;;) {
      const wire::Frame f = conn_->receive("the result of a run");
      if (f.type == static_cast<uint8_t>(wire::Msg::kData)) {
        conn_->parse(f, [&](wire::Reader& r) {
          applyData(r, written);
          return 0;
        });
        continue;
      }
      if (f.type != static_cast<uint8_t>(wire::Msg::kRunDone))
        conn_->lost("remote server: protocol error: expected DATA or RUN_DONE, got " + std::string(wire::msgName(f.type)));
      bool ok = false;
      std::string where, reason;
      conn_->parse(f, [&](wire::Reader& r) {
        if (r.u32("device") != id_) throw wire::WireError("RUN_DONE for another device");
        ok = r.u8("ok") != 0;
        where = r.str("where");
        reason = r.str("reason");
        counters_ = wire::getCounters(r);
        r.end();
        return 0;
      });
      if (!ok) throw Error(where, reason);
      return;
    }
  }

 private:
  std::vector<uint8_t> idPayload() const {
    wire::Writer w;
    w.u32(id_);
    return w.buffer();
  }

  uint64_t pageLength(uint64_t page) const {
    return std::min<uint64_t>(hw::Dram::kPageBytes, dram_.span() - page * hw::Dram::kPageBytes);
  }

  // The pages a run reads (instructions, LOAD sources) or writes (STORE targets); the server must
  // hold the client's bytes of both before the run, so a STORE that writes part of a page leaves
  // the rest as the client has it.
  void pagesOfRun(uint64_t insnPhys, uint32_t count, std::vector<uint64_t>* touched, std::vector<uint64_t>* written) {
    std::vector<hw::DramRange> reads, writes;
    const uint64_t insnEnd = insnPhys + uint64_t(count) * uint64_t(cfg_.insnBytes);
    try {
      const std::vector<hw::Insn> prog = hw::decodeProgram(isa_, dram_, insnPhys, count);
      reads.push_back({insnPhys, insnEnd});
      for (const hw::Insn& in : prog) {
        const hw::DramRange r = hw::dramRange(in, cfg_);
        if (r.end <= r.first) continue;
        (in.opcode == hw::Opcode::kStore ? writes : reads).push_back(r);
      }
    } catch (const Error&) {
      // A program that fails validation fails on the server in its target's own words, before it
      // touches DRAM; it needs only its instructions there, if they are readable at all.
      try {
        dram_.at(insnPhys, insnEnd - insnPhys, "instructions");
        reads.push_back({insnPhys, insnEnd});
      } catch (const Error&) {
      }
    }
    // Ranges merged first: a program's LOADs overlap heavily (the same weights, rows read again).
    auto pagesOf = [](std::vector<hw::DramRange> ranges, std::vector<uint64_t>* pages) {
      std::sort(ranges.begin(), ranges.end(), [](const hw::DramRange& a, const hw::DramRange& b) { return a.first < b.first; });
      uint64_t next = 0;  // first page not yet listed
      for (const auto& r : ranges)
        for (uint64_t p = std::max(r.first / hw::Dram::kPageBytes, next); p * hw::Dram::kPageBytes < r.end; ++p) {
          pages->push_back(p);
          next = p + 1;
        }
    };
    pagesOf(writes, written);
    reads.insert(reads.end(), writes.begin(), writes.end());
    pagesOf(reads, touched);
  }

  // Sends the pages the server's copy lacks or has stale, in chunks.
  void upload(const std::vector<uint64_t>& pages) {
    const size_t limit = std::min<size_t>(wire::kChunkBytes, conn_->serverMaxMessage() - 4096);
    // Built in place: device id, a page count patched in at the end, then the pages.
    wire::Writer msg;
    uint32_t inChunk = 0;
    auto start = [&] {
      msg.buffer().clear();
      msg.u32(id_);
      msg.u32(0);
      inChunk = 0;
    };
    auto flush = [&] {
      if (!inChunk) return;
      for (int i = 0; i < 4; ++i) msg.buffer()[4 + i] = static_cast<uint8_t>(inChunk >> (8 * i));
      conn_->send(wire::Msg::kWrite, msg.buffer());
      start();
    };
    msg.buffer().reserve(limit);
    start();
    for (uint64_t page : pages) {
      const uint64_t len = pageLength(page);
      const uint8_t* now = dram_.raw(page * hw::Dram::kPageBytes);
      auto& known = shadow_[page];
      if (!known.empty() && std::memcmp(known.data(), now, len) == 0) continue;
      known.assign(now, now + len);
      if (msg.size() + 12 + len > limit) flush();
      msg.u64(page * hw::Dram::kPageBytes);
      msg.u32(static_cast<uint32_t>(len));
      msg.bytes(now, len);
      ++inChunk;
    }
    flush();
  }

  void applyData(wire::Reader& r, const std::vector<uint64_t>& written) {
    if (r.u32("device") != id_) throw wire::WireError("DATA for another device");
    const uint32_t n = r.u32("page count");
    for (uint32_t i = 0; i < n; ++i) {
      const uint64_t phys = r.u64("phys");
      const uint32_t len = r.u32("length");
      const uint64_t page = phys / hw::Dram::kPageBytes;
      // Only pages this run may write: a server cannot scribble over the rest of the client.
      if (phys % hw::Dram::kPageBytes || !std::binary_search(written.begin(), written.end(), page) ||
          len != pageLength(page))
        throw wire::WireError("DATA page at " + std::to_string(phys) + " (" + std::to_string(len) +
                              " bytes) is not one the run writes");
      const uint8_t* bytes = r.bytes(len, "page bytes");
      std::memcpy(dram_.raw(phys), bytes, len);
      shadow_[page].assign(bytes, bytes + len);
    }
    r.end();
  }

  std::string name_;
  hw::Config cfg_;
  hw::Isa isa_;
  hw::Dram& dram_;
  std::shared_ptr<Connection> conn_;
  uint32_t id_ = 0;
  std::string variant_;
  hw::Counters counters_;
  std::unordered_map<uint64_t, std::vector<uint8_t>> shadow_;
};

// The target of one remote:HOST:PORT[/T] name.
TargetInfo remoteTargetInfo(const std::string& name) {
  const Endpoint ep = parseRemoteName(name);
  TargetInfo info;
  info.name = name;
  info.description = "the device of `tessera serve` at " + ep.address() +
                     (ep.target.empty() ? std::string() : " (target " + ep.target + ")") + ", over the network";
  info.create = [name, ep](const hw::Config& cfg, hw::Dram& dram, const TargetOptions& options) {
    return std::unique_ptr<Target>(new RemoteTarget(name, ep, cfg, dram, options));
  };
  info.options = {{kSecretKey, "FILE holding the server's shared secret (default $TESSERA_REMOTE_SECRET_FILE)"},
                  {kTimeoutKey, "seconds without a byte from the server before giving up (default 30)"},
                  {kQueueWaitKey, "seconds to wait in the queue of a busy server (default 600)"},
                  {"*", "any other key: an option of the server's target, which checks it"}};
  return info;
}

}  // namespace

}  // namespace tessera::runtime::remote

// Every remote:... name is a target of this plugin, made when it is first looked up.
TESSERA_TARGET_PLUGIN(registrar) {
  namespace remote = tessera::runtime::remote;
  registrar.addNamePrefix(remote::kNamePrefix, remote::remoteTargetInfo);
}
