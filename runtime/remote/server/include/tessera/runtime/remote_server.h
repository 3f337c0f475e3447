// The server behind `tessera serve`: one target's device offered to remote:HOST:PORT clients over TCP (docs/remote.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tessera/runtime/remote.h"
#include "tessera/runtime/target.h"

namespace tessera::runtime::remote {

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
