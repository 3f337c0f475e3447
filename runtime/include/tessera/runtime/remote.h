// Remote execution: the `remote:HOST:PORT[/T]` target's name and the server behind `tessera serve` (docs/remote.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tessera/runtime/target.h"

namespace tessera::runtime::remote {

// The protocol version this build speaks; both ends must speak the same one (docs/remote.md).
constexpr uint16_t kProtocolVersion = 1;
// Where `tessera serve` listens unless told otherwise.
constexpr uint16_t kDefaultPort = 9095;
constexpr const char* kNamePrefix = "remote:";

// The parts of "remote:HOST:PORT[/T]" (HOST may be an IPv6 address in brackets).
struct Endpoint {
  std::string host;
  uint16_t port = 0;
  std::string target;  // empty: whatever the server serves
  // "HOST:PORT", as errors name the server.
  std::string address() const;
};

// True if `name` starts with "remote:". Such a name must parse as an Endpoint.
bool isRemoteName(const std::string& name);
// Parses "remote:HOST:PORT[/T]"; throws tessera::Error naming `name` and what is wrong.
Endpoint parseRemoteName(const std::string& name);
// Length of the remote target name at the start of `spec` (which may continue with ":key=value"
// options, as `tessera regress --targets` writes them), or 0 if `spec` is not a remote name.
size_t remoteNameLength(const std::string& spec);

// The `remote:` targets' registry entry: options remote.secret-file, remote.timeout and
// remote.queue-wait, every other key forwarded to the server's target.
TargetInfo remoteTargetInfo(const std::string& name);

struct ServeOptions {
  std::string bind = "127.0.0.1";
  uint16_t port = kDefaultPort;  // 0: let the system pick one (reported through onListening)
  std::string target = "fsim";
  std::string config;             // empty: run whatever config a client sends
  TargetOptions targetOptions;    // set on every device the server creates
  std::vector<std::string> clientOptionKeys;  // target option keys clients may set
  std::string secretFile;         // empty: no authentication
  uint32_t maxMessageBytes = 16u << 20;
  double idleTimeoutSeconds = 60;  // a silent client is dropped after this long
  unsigned queueLimit = 4;         // clients waiting for the device beyond the one holding it
  unsigned maxDevicesPerClient = 64;
  // Called once the socket listens, with the address and port bound.
  std::function<void(const std::string& address, uint16_t port)> onListening;
  std::ostream* log = nullptr;  // one line per connection event; null: silent
  bool logRuns = false;         // and one per run (its instructions, pages moved, time)
};

// A running server: listens and serves clients on threads of its own until stop() or destruction.
class Server {
 public:
  // Throws tessera::Error if the target is unknown, the config or secret file is bad, or the
  // address cannot be bound.
  explicit Server(const ServeOptions& options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  uint16_t port() const;
  // Blocks until stop() is called from another thread or a signal handler's thread.
  void wait();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::runtime::remote
