// Remote execution's names: the protocol version, the default port and the `remote:HOST:PORT[/T]` target names (docs/remote.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::runtime::remote {

// The protocol version this build speaks; both ends must speak the same one (docs/remote.md).
constexpr uint16_t kProtocolVersion = 1;
// Where `tessera serve` listens unless told otherwise.
constexpr uint16_t kDefaultPort = 9095;
// Every remote target's name starts with it (the remote plugin's manifest declares remote:*).
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

}  // namespace tessera::runtime::remote
