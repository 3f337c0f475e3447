// Remote execution on the loopback address: bit-exact runs, the protocol's refusals, timeouts, queueing and authentication.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "tessera/support/error.h"
#include "tessera/regress/check.h"
#include "tessera/regress/generator.h"
#include "tessera/regress/runner.h"
#include "tessera/runtime/remote.h"
#include "tessera/runtime/remote_server.h"
#include "tessera/runtime/remote_wire.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/tessera.h"
#include "tessera/sw/workloads.h"

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
namespace rt = tessera::runtime;
namespace remote = tessera::runtime::remote;
using tessera::Error;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string tempPath(const std::string& stem) {
  static int counter = 0;
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/tessera-remote-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter++) + "-" + stem;
}

std::string writeSecret(const std::string& text, mode_t mode = 0600) {
  const std::string path = tempPath("secret");
  std::ofstream(path) << text << "\n";
  ::chmod(path.c_str(), mode);
  return path;
}

// A server on 127.0.0.1, on a port the system picks.
struct LocalServer {
  explicit LocalServer(remote::ServeOptions o = {}) {
    o.bind = "127.0.0.1";
    o.port = 0;
    o.log = &log;
    server = std::make_unique<remote::Server>(o);
  }
  std::string name(const std::string& target = "fsim") const {
    return "remote:127.0.0.1:" + std::to_string(server->port()) + (target.empty() ? "" : "/" + target);
  }
  std::ostringstream log;
  std::unique_ptr<remote::Server> server;
};

// --- Raw protocol access, to send what no well-behaved client sends. ---

struct RawFrame {
  uint8_t type = 0;
  std::vector<uint8_t> payload;
};

void putU32(std::vector<uint8_t>& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

std::vector<uint8_t> frame(uint8_t type, const std::vector<uint8_t>& payload, uint32_t announced) {
  std::vector<uint8_t> b;
  putU32(b, announced);
  b.push_back(type);
  b.insert(b.end(), 3, 0);
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

struct RawClient {
  explicit RawClient(uint16_t port) : socket(io) { socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port)); }
  // Reads one frame, or fails the test if none comes within 20 s (a hung server). QUEUED frames
  // are skipped: the server thread of the previous connection may not have released the device
  // yet when this client says hello, and then WELCOME follows a QUEUED or two.
  RawFrame read() {
    for (;;) {
      RawFrame f;
      uint8_t header[8];
      readWithin(header, 8);
      const uint32_t n = header[0] | header[1] << 8 | header[2] << 16 | uint32_t(header[3]) << 24;
      f.type = header[4];
      EXPECT_LT(n, 1u << 20);
      f.payload.resize(n);
      readWithin(f.payload.data(), n);
      if (f.type != static_cast<uint8_t>(remote::wire::Msg::kQueued)) return f;
    }
  }
  void readWithin(uint8_t* dst, size_t n) {
    bool done = false;
    boost::system::error_code ec;
    asio::async_read(socket, asio::buffer(dst, n), [&](const boost::system::error_code& e, size_t) {
      ec = e;
      done = true;
    });
    io.restart();
    io.run_for(std::chrono::seconds(20));
    if (!done) {
      socket.close();
      io.restart();
      io.run();
      throw std::runtime_error("no reply from the server within 20 s");
    }
    if (ec) throw std::runtime_error("connection closed: " + ec.message());
  }
  void write(const std::vector<uint8_t>& bytes) { asio::write(socket, asio::buffer(bytes)); }
  // True once the server closed the connection (reads EOF) within `seconds`.
  bool closedWithin(double seconds) {
    uint8_t byte;
    bool done = false;
    boost::system::error_code ec;
    socket.async_read_some(asio::buffer(&byte, 1), [&](const boost::system::error_code& e, size_t) {
      ec = e;
      done = true;
    });
    io.restart();
    io.run_for(std::chrono::milliseconds(static_cast<int>(seconds * 1000)));
    if (!done) {
      socket.close();
      io.restart();
      io.run();
      return false;
    }
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }
  asio::io_context io;
  tcp::socket socket;
};

// The reason text of an ERROR frame.
std::string errorText(const RawFrame& f) {
  if (f.type != 5 || f.payload.size() < 9) return "(not an ERROR frame: type " + std::to_string(f.type) + ")";
  size_t pos = 1;
  auto str = [&] {
    const uint32_t n = f.payload[pos] | f.payload[pos + 1] << 8 | f.payload[pos + 2] << 16 | uint32_t(f.payload[pos + 3]) << 24;
    pos += 4;
    std::string s(f.payload.begin() + pos, f.payload.begin() + pos + n);
    pos += n;
    return s;
  };
  const std::string where = str();
  const std::string reason = str();
  return where.empty() ? reason : where + ": " + reason;
}

// A CLIENT_HELLO speaking `version`, without a MAC.
std::vector<uint8_t> clientHello(uint16_t version) {
  std::vector<uint8_t> p = {'T', 'S', 'R', 'P', static_cast<uint8_t>(version), static_cast<uint8_t>(version >> 8)};
  p.insert(p.end(), 32, 7);  // nonce
  putU32(p, 4);
  p.insert(p.end(), {'t', 'e', 's', 't'});
  p.push_back(0);
  return frame(2, p, static_cast<uint32_t>(p.size()));
}

// A well-behaved client still gets served: the server survived whatever came before.
void useTarget(const std::string& target) {
  ASSERT_EQ(TesseraInit(target.c_str(), "default"), 0) << (TesseraLastError() ? TesseraLastError() : "");
}

void expectServes(const LocalServer& s) {
  useTarget(s.name());
  tessera::sw::GemmProblem p;
  p.m = 16;
  p.n = 64;
  p.k = 64;
  const auto r = tessera::sw::runBlockedGemm(p);
  EXPECT_TRUE(r.correct) << r.mismatches << " mismatches";
  useTarget("fsim");  // drops the remote device
}

// --- Hashes: published test vectors (FIPS 180-4 examples, RFC 4231 case 2) ---

std::string hex(const std::array<uint8_t, 32>& d) {
  std::string s;
  char buf[3];
  for (uint8_t b : d) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    s += buf;
  }
  return s;
}

// RFC 4231's test cases 1-4, 6 and 7 (5 truncates the MAC): short keys, data of repeated bytes,
// and keys longer than SHA-256's block, which HMAC hashes first.
TEST(RemoteAuth, HmacSha256MatchesRfc4231) {
  namespace wire = tessera::runtime::remote::wire;
  auto mac = [](const std::string& key, const std::string& data) {
    return hex(wire::hmacSha256(key, std::vector<uint8_t>(data.begin(), data.end())));
  };
  EXPECT_EQ(mac(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(mac("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(mac(std::string(20, '\xaa'), std::string(50, '\xdd')),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::string key4;
  for (char c = 1; c <= 25; ++c) key4 += c;
  EXPECT_EQ(mac(key4, std::string(50, '\xcd')), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  EXPECT_EQ(mac(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(mac(std::string(131, '\xaa'),
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs "
                "to be hashed before being used by the HMAC algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
  const auto a = wire::hmacSha256("k", {1, 2, 3});
  auto b = a;
  EXPECT_TRUE(wire::equalConstantTime(a.data(), b.data(), b.size()));
  b.back() ^= 1;
  EXPECT_FALSE(wire::equalConstantTime(a.data(), b.data(), b.size()));
  EXPECT_NE(wire::randomNonce(), wire::randomNonce());
}

// --- Names ---

TEST(RemoteName, Parses) {
  auto ep = remote::parseRemoteName("remote:127.0.0.1:9095/fsim");
  EXPECT_EQ(ep.host, "127.0.0.1");
  EXPECT_EQ(ep.port, 9095);
  EXPECT_EQ(ep.target, "fsim");
  ep = remote::parseRemoteName("remote:[::1]:80");
  EXPECT_EQ(ep.host, "::1");
  EXPECT_EQ(ep.target, "");
  EXPECT_EQ(ep.address(), "[::1]:80");
  EXPECT_NE(errorOf([] { remote::parseRemoteName("remote:host"); }).find("expected remote:HOST:PORT"), std::string::npos);
  EXPECT_NE(errorOf([] { remote::parseRemoteName("remote:host:99999"); }).find("port '99999'"), std::string::npos);
  EXPECT_NE(errorOf([] { remote::parseRemoteName("remote:host:1/"); }).find("empty target"), std::string::npos);
  EXPECT_EQ(remote::remoteNameLength("remote:h:1/fsim:kernels=generic"), std::string("remote:h:1/fsim").size());
  EXPECT_EQ(remote::remoteNameLength("remote:[::1]:1:a=b"), std::string("remote:[::1]:1").size());
  EXPECT_EQ(remote::remoteNameLength("fsim:a=b"), 0u);
}

TEST(RemoteName, ConnectionRefusedNamesTheServer) {
  // A port nothing listens on: bind one, note it, close it.
  uint16_t port;
  {
    asio::io_context io;
    tcp::acceptor a(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = a.local_endpoint().port();
  }
  const std::string e = errorOf([&] { rt::Session s("remote:127.0.0.1:" + std::to_string(port), tessera::hw::Config::load("default")); s.createDevice(); });
  EXPECT_NE(e.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << e;
  EXPECT_NE(e.find("cannot connect"), std::string::npos) << e;
}

// --- Bit-exact runs ---

TEST(RemoteRun, RandomProgramsMatchLocalRunsBitForBit) {
  LocalServer s;
  const auto local = tessera::regress::parseTargetSpec("fsim");
  const auto far = tessera::regress::parseTargetSpec(s.name());
  int failing = 0;
  for (const std::string config : {"default", "batch2"}) {
    const auto cfg = tessera::hw::Config::load(config);
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      const auto p = tessera::regress::generate(cfg, seed, seed % 4 == 0 ? tessera::regress::Size::kMedium : tessera::regress::Size::kSmall);
      const auto a = tessera::regress::execute(p, local);
      const auto b = tessera::regress::execute(p, far);
      const std::string at = config + " seed " + std::to_string(seed);
      EXPECT_EQ(a.failed, b.failed) << at;
      EXPECT_EQ(a.error, b.error) << at;
      EXPECT_EQ(a.regions, b.regions) << at;
      EXPECT_EQ(a.counters.toJson(), b.counters.toJson()) << at;
      failing += a.failed;
    }
  }
  // The generator makes some programs fail on purpose; their errors must match too.
  RecordProperty("failing_programs", failing);
}

// Runs cut short by a small wait-cycles budget (after some STOREs), and programs that fail
// validation (no FINISH): the same error text and the same bytes left in DRAM as locally.
TEST(RemoteRun, FailingRunsLeaveTheSameErrorsAndBytes) {
  LocalServer s;
  const auto cfg = tessera::hw::Config::load("default");
  int partial = 0, failed = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const auto p = tessera::regress::generate(cfg, seed, tessera::regress::Size::kMedium);
    const uint32_t budget = static_cast<uint32_t>(std::max<uint64_t>(1, tessera::regress::estimateCycles(cfg, p.insns) / 8));
    for (const bool dropFinish : {false, true}) {
      std::string errors[2];
      std::vector<std::vector<uint8_t>> regions[2];
      const std::string targets[2] = {"fsim", s.name()};
      for (int t = 0; t < 2; ++t) {
        tessera::hw::Dram dram(cfg);
        for (const auto& r : p.regions) dram.write(r.base, r.init.data(), r.init.size(), r.name);
        auto device = rt::createTarget(targets[t], cfg, dram);
        errors[t] = errorOf([&] { device->run(p.insnBase(), p.insnCount() - (dropFinish ? 1 : 0), dropFinish ? 0 : budget); });
        for (const auto& r : p.regions) {
          regions[t].emplace_back(r.init.size());
          dram.read(r.base, regions[t].back().data(), r.init.size(), r.name);
        }
      }
      const std::string at = "seed " + std::to_string(seed) + (dropFinish ? " without FINISH" : " with a small budget");
      if (dropFinish) {
        EXPECT_FALSE(errors[0].empty()) << at;
      }
      failed += !errors[0].empty();
      EXPECT_EQ(errors[0], errors[1]) << at;
      EXPECT_EQ(regions[0], regions[1]) << at;
      bool changed = false;
      for (size_t r = 0; r < p.regions.size(); ++r) changed |= regions[0][r] != p.regions[r].init;
      partial += changed && !errors[0].empty();
    }
  }
  EXPECT_GT(failed, 12) << "the budget stopped no run";
  EXPECT_GT(partial, 0) << "no run stored anything before failing: the write-back of failed runs went untested";
}

TEST(RemoteRun, RuntimeWorkloadsAndCountersMatch) {
  LocalServer s;
  tessera::sw::ConvProblem c;
  useTarget("fsim");
  const auto a = tessera::sw::runConv3x3(c);
  useTarget(s.name());
  const auto b = tessera::sw::runConv3x3(c);
  EXPECT_TRUE(b.correct) << b.mismatches << " mismatches";
  EXPECT_EQ(a.counters.toJson(), b.counters.toJson());
  auto& device = rt::Session::global().threadQueue().device();
  EXPECT_EQ(device.name(), s.name());
  EXPECT_FALSE(device.variant().empty()) << "fsim's kernel set, from the server";
  device.resetCounters();
  EXPECT_EQ(device.counters().runs, 0u);
  EXPECT_FALSE(device.traceInstructions(true)) << "fsim is untimed";
  EXPECT_TRUE(device.takeInstructionSpans().empty());
  useTarget("fsim");
}

TEST(RemoteRun, TwoThreadsShareOneConnection) {
  // Each thread has its own device; on one connection they cannot queue behind each other.
  LocalServer s;
  useTarget(s.name());
  bool ok[2] = {false, false};
  std::thread threads[2];
  for (int t = 0; t < 2; ++t)
    threads[t] = std::thread([&, t] {
      tessera::sw::AluProblem p;
      p.seed = 3 + t;
      ok[t] = tessera::sw::runAluTest(p).correct;
    });
  for (auto& t : threads) t.join();
  EXPECT_TRUE(ok[0] && ok[1]);
  useTarget("fsim");
}

TEST(RemoteRun, ServerErrorsComeBackInTheTargetsWords) {
  LocalServer s;
  const auto cfg = tessera::hw::Config::load("default");
  tessera::hw::Dram dram(cfg);
  std::vector<uint8_t> junk(64, 0xff);
  dram.write(0x10000, junk.data(), junk.size(), "test");
  auto localDevice = rt::createTarget("fsim", cfg, dram);
  auto remoteDevice = rt::createTarget(s.name(), cfg, dram);
  const std::string a = errorOf([&] { localDevice->run(0x10000, 4, 0); });
  const std::string b = errorOf([&] { remoteDevice->run(0x10000, 4, 0); });
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  // Options the server does not allow, and unknown targets, are refused with their names.
  EXPECT_NE(errorOf([&] { rt::createTarget(s.name(), cfg, dram, {{"kernels", "generic"}}); }).find("does not let clients set it"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { rt::createTarget(s.name("tsim"), cfg, dram); }).find("serves target fsim, not tsim"), std::string::npos);
}

// --- Refusals ---

TEST(RemoteProtocol, MalformedOversizedAndWrongVersionAreRefusedAndServingGoesOn) {
  remote::ServeOptions o;
  LocalServer s(o);
  const uint16_t port = s.server->port();
  {
    RawClient c(port);
    EXPECT_EQ(c.read().type, 1) << "HELLO first";
    c.write(std::vector<uint8_t>{0x10, 0, 0, 0, 2, 0xde, 0xad, 0xbe});  // reserved header bytes not zero
    const std::string e = errorText(c.read());
    EXPECT_NE(e.find("malformed message header"), std::string::npos) << e;
    EXPECT_TRUE(c.closedWithin(10));
  }
  {
    RawClient c(port);
    c.read();
    c.write(frame(2, {}, 0xfffffff0u));  // claims 4 GiB; nothing that large may be allocated
    const std::string e = errorText(c.read());
    EXPECT_NE(e.find("refused: larger than the limit of 65536 bytes"), std::string::npos) << e;
  }
  {
    RawClient c(port);
    c.read();
    c.write(clientHello(remote::kProtocolVersion + 41));
    const std::string e = errorText(c.read());
    EXPECT_NE(e.find("the client speaks version " + std::to_string(remote::kProtocolVersion + 41) +
                     ", this server speaks version " + std::to_string(remote::kProtocolVersion)),
              std::string::npos)
        << e;
  }
  {
    // Past the handshake: a message larger than --max-bytes, then an unknown message type.
    RawClient c(port);
    c.read();
    c.write(clientHello(remote::kProtocolVersion));
    EXPECT_EQ(c.read().type, 3) << "WELCOME";
    c.write(frame(9, {}, 100u << 20));
    const std::string e = errorText(c.read());
    EXPECT_NE(e.find("message WRITE of 104857600 bytes refused: larger than the limit of 16777216"), std::string::npos) << e;
  }
  {
    RawClient c(port);
    c.read();
    c.write(clientHello(remote::kProtocolVersion));
    c.read();
    c.write(frame(10, {1, 2, 3}, 3));  // RUN with a truncated payload
    const std::string e = errorText(c.read());
    EXPECT_NE(e.find("field 'device' needs 4 bytes"), std::string::npos) << e;
  }
  {
    // A write-back of pages the client never sent: the server would snapshot memory for nothing.
    RawClient c(port);
    c.read();
    c.write(clientHello(remote::kProtocolVersion));
    c.read();
    const std::string json = tessera::hw::Config::load("default").toJson();
    std::vector<uint8_t> open;
    putU32(open, static_cast<uint32_t>(json.size()));
    open.insert(open.end(), json.begin(), json.end());
    putU32(open, 0);
    c.write(frame(6, open, static_cast<uint32_t>(open.size())));
    ASSERT_EQ(c.read().type, 7) << "OPENED";
    std::vector<uint8_t> run;
    putU32(run, 1);                                    // device
    for (uint32_t v : {0x10000u, 0u, 1u, 0u, 1u}) putU32(run, v);  // insn address (u64), count, wait cycles, ranges
    for (uint32_t v : {0x20000u, 0u, 1000u, 0u}) putU32(run, v);  // 1000 pages at 0x20000
    c.write(frame(10, run, static_cast<uint32_t>(run.size())));
    const std::string e = errorText(c.read());
    EXPECT_NE(e.find("write-back ranges cover more pages than the client sent"), std::string::npos) << e;
  }
  {
    RawClient c(port);
    c.read();
    c.write(clientHello(remote::kProtocolVersion));
    c.read();
    c.write(frame(200, {}, 0));
    const std::string e = errorText(c.read());
    EXPECT_NE(e.find("unexpected message unknown (type 200)"), std::string::npos) << e;
  }
  expectServes(s);
}

TEST(RemoteProtocol, ClientStalledMidMessageIsDropped) {
  remote::ServeOptions o;
  o.idleTimeoutSeconds = 1.5;
  LocalServer s(o);
  RawClient c(s.server->port());
  c.read();
  c.write(clientHello(remote::kProtocolVersion));
  c.read();
  const auto t0 = std::chrono::steady_clock::now();
  c.write(frame(9, {1, 0}, 100));  // promises 100 bytes, sends 2, then nothing
  EXPECT_TRUE(c.closedWithin(15)) << "the server must drop a client that stops mid-message";
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 1.0);
  expectServes(s);  // and the device is free again
}

TEST(RemoteProtocol, IdleClientIsDroppedAndItsNextDeviceReconnects) {
  remote::ServeOptions o;
  o.idleTimeoutSeconds = 1.5;
  LocalServer s(o);
  const auto cfg = tessera::hw::Config::load("default");
  const auto p = tessera::regress::generate(cfg, 5, tessera::regress::Size::kSmall);
  tessera::hw::Dram dram(cfg);
  for (const auto& r : p.regions) dram.write(r.base, r.init.data(), r.init.size(), r.name);
  auto first = rt::createTarget(s.name(), cfg, dram);
  first->run(p.insnBase(), p.insnCount(), 0);
  for (int i = 0; i < 300 && s.log.str().find("timed out") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_NE(s.log.str().find("timed out after 1.5"), std::string::npos) << s.log.str();
  const std::string e = errorOf([&] { first->run(p.insnBase(), p.insnCount(), 0); });
  EXPECT_NE(e.find("remote server 127.0.0.1:" + std::to_string(s.server->port())), std::string::npos) << e;
  EXPECT_NE(e.find("connection dropped"), std::string::npos) << e;
  EXPECT_NE(errorOf([&] { first->run(p.insnBase(), p.insnCount(), 0); }).find("was lost earlier"), std::string::npos);
  auto second = rt::createTarget(s.name(), cfg, dram);  // same settings: a fresh connection
  EXPECT_EQ(errorOf([&] { second->run(p.insnBase(), p.insnCount(), 0); }), "");
}

TEST(RemoteProtocol, WrongSecretIsRefusedRightOneServes) {
  remote::ServeOptions o;
  o.secretFile = writeSecret("correct horse");
  LocalServer s(o);
  const auto cfg = tessera::hw::Config::load("default");
  tessera::hw::Dram dram(cfg);
  const std::string wrong = writeSecret("battery staple");
  std::string e = errorOf([&] { rt::createTarget(s.name(), cfg, dram, {{"remote.secret-file", wrong}}); });
  EXPECT_NE(e.find("authentication failed: wrong shared secret"), std::string::npos) << e;
  e = errorOf([&] { rt::createTarget(s.name(), cfg, dram); });
  EXPECT_NE(e.find("requires authentication"), std::string::npos) << e;
  const std::string open = writeSecret("correct horse", 0644);
  e = errorOf([&] { rt::createTarget(s.name(), cfg, dram, {{"remote.secret-file", open}}); });
  EXPECT_NE(e.find("readable by group or others"), std::string::npos) << e;
  ::setenv("TESSERA_REMOTE_SECRET_FILE", o.secretFile.c_str(), 1);
  expectServes(s);
  ::unsetenv("TESSERA_REMOTE_SECRET_FILE");
  // A client with a secret refuses a server that does not check it (it could be anyone).
  LocalServer open2;
  e = errorOf([&] { rt::createTarget(open2.name(), cfg, dram, {{"remote.secret-file", o.secretFile}}); });
  EXPECT_NE(e.find("does not authenticate"), std::string::npos) << e;
  for (const auto& f : {o.secretFile, wrong, open}) std::remove(f.c_str());
}

TEST(RemoteProtocol, BusyServerQueuesThenRefuses) {
  remote::ServeOptions o;
  o.queueLimit = 1;
  LocalServer s(o);
  const auto cfg = tessera::hw::Config::load("default");
  tessera::hw::Dram dram(cfg);
  // Differing client settings make separate connections, as separate processes would.
  auto holder = rt::createTarget(s.name(), cfg, dram, {{"remote.timeout", "20"}});
  std::unique_ptr<rt::Target> queued;
  std::thread waiter([&] { queued = rt::createTarget(s.name(), cfg, dram, {{"remote.timeout", "21"}}); });
  // The waiter is queued once the server logs it; poll rather than sleep a fixed time.
  for (int i = 0; i < 200 && s.log.str().find(": queued behind") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_NE(s.log.str().find(": queued behind"), std::string::npos) << s.log.str();
  const std::string e = errorOf([&] { rt::createTarget(s.name(), cfg, dram, {{"remote.timeout", "22"}}); });
  EXPECT_NE(e.find("device busy: held by client 127.0.0.1:"), std::string::npos) << e;
  EXPECT_NE(e.find("1 client(s) already queued"), std::string::npos) << e << "\nserver log:\n" << s.log.str();
  holder.reset();  // frees the device: the queued client gets it
  waiter.join();
  ASSERT_NE(queued, nullptr);
  std::vector<uint8_t> prog(16, 0);
  EXPECT_NE(errorOf([&] { queued->run(0x10000, 1, 0); }), "");  // an empty program fails, on the server
}

TEST(RemoteProtocol, QueueWaitLimitGivesUpWithTheHolder) {
  LocalServer s;
  const auto cfg = tessera::hw::Config::load("default");
  tessera::hw::Dram dram(cfg);
  auto holder = rt::createTarget(s.name(), cfg, dram, {{"remote.timeout", "20"}});
  const std::string e = errorOf([&] { rt::createTarget(s.name(), cfg, dram, {{"remote.queue-wait", "1.5"}}); });
  EXPECT_NE(e.find("device busy: held by client 127.0.0.1:"), std::string::npos) << e;
  EXPECT_NE(e.find("gave up after waiting"), std::string::npos) << e;
}

// A fake server, to see the client face what a real one never does.
struct FakeServer {
  explicit FakeServer(std::function<void(tcp::socket&)> behave) : acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    port = acceptor.local_endpoint().port();
    thread = std::thread([this, behave] {
      tcp::socket s(io);
      acceptor.accept(s);
      behave(s);
    });
  }
  ~FakeServer() { thread.join(); }
  std::string name() const { return "remote:127.0.0.1:" + std::to_string(port); }
  asio::io_context io;
  tcp::acceptor acceptor;
  uint16_t port;
  std::thread thread;
};

std::vector<uint8_t> serverHello(uint16_t version) {
  std::vector<uint8_t> p = {'T', 'S', 'R', 'P', static_cast<uint8_t>(version), static_cast<uint8_t>(version >> 8)};
  p.insert(p.end(), 32, 1);
  p.push_back(0);
  putU32(p, 16u << 20);
  putU32(p, 4);
  p.insert(p.end(), {'f', 's', 'i', 'm'});
  putU32(p, 0);
  return frame(1, p, static_cast<uint32_t>(p.size()));
}

TEST(RemoteClient, VersionMismatchNamesBothVersions) {
  FakeServer f([](tcp::socket& s) { asio::write(s, asio::buffer(serverHello(remote::kProtocolVersion + 1))); });
  tessera::hw::Dram dram(tessera::hw::Config::load("default"));
  const std::string e = errorOf([&] { rt::createTarget(f.name(), tessera::hw::Config::load("default"), dram); });
  EXPECT_NE(e.find("the server speaks version " + std::to_string(remote::kProtocolVersion + 1) +
                   ", this client speaks version " + std::to_string(remote::kProtocolVersion)),
            std::string::npos)
      << e;
}

TEST(RemoteClient, SilentServerTimesOutInsteadOfHanging) {
  std::atomic<bool> release{false};
  FakeServer f([&](tcp::socket&) {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  });
  tessera::hw::Dram dram(tessera::hw::Config::load("default"));
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = errorOf([&] { rt::createTarget(f.name(), tessera::hw::Config::load("default"), dram, {{"remote.timeout", "1"}}); });
  release = true;
  EXPECT_NE(e.find("remote server 127.0.0.1:" + std::to_string(f.port) + ": timed out"), std::string::npos) << e;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
}

TEST(RemoteClient, DroppedConnectionNamesTheServer) {
  FakeServer f([](tcp::socket& s) {
    asio::write(s, asio::buffer(serverHello(remote::kProtocolVersion)));
    s.close();  // gone before WELCOME
  });
  tessera::hw::Dram dram(tessera::hw::Config::load("default"));
  const std::string e = errorOf([&] { rt::createTarget(f.name(), tessera::hw::Config::load("default"), dram); });
  EXPECT_NE(e.find("remote server 127.0.0.1:" + std::to_string(f.port) + ": connection dropped"), std::string::npos) << e;
}

}  // namespace
