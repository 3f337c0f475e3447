// Remote target names: remote:HOST:PORT[/T] parsed into an endpoint, and found at the start of a target spec.
#include <cstring>

#include "tessera/runtime/remote.h"
#include "tessera/support/error.h"

namespace tessera::runtime::remote {

std::string Endpoint::address() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool isRemoteName(const std::string& name) { return name.rfind(kNamePrefix, 0) == 0; }

Endpoint parseRemoteName(const std::string& name) {
  const std::string where = "target '" + name + "'";
  if (!isRemoteName(name)) throw Error(where, "not a remote target (expected remote:HOST:PORT[/TARGET])");
  std::string rest = name.substr(std::strlen(kNamePrefix));
  Endpoint ep;
  size_t portStart;
  if (!rest.empty() && rest[0] == '[') {
    const size_t close = rest.find(']');
    if (close == std::string::npos || close + 1 >= rest.size() || rest[close + 1] != ':')
      throw Error(where, "an IPv6 host is written [ADDRESS]:PORT");
    ep.host = rest.substr(1, close - 1);
    portStart = close + 2;
  } else {
    const size_t colon = rest.find(':');
    if (colon == std::string::npos || colon == 0)
      throw Error(where, "expected remote:HOST:PORT[/TARGET], e.g. remote:127.0.0.1:" + std::to_string(kDefaultPort) + "/fsim");
    ep.host = rest.substr(0, colon);
    portStart = colon + 1;
  }
  const size_t slash = rest.find('/', portStart);
  const std::string port = rest.substr(portStart, slash == std::string::npos ? std::string::npos : slash - portStart);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) == 0 || std::stoul(port) > 65535)
    throw Error(where, "port '" + port + "' is not a number in [1, 65535]");
  ep.port = static_cast<uint16_t>(std::stoul(port));
  if (slash != std::string::npos) {
    ep.target = rest.substr(slash + 1);
    if (ep.target.empty()) throw Error(where, "empty target after '/' (leave out the '/' to take the server's)");
    if (ep.target.find_first_of(":/,") != std::string::npos)
      throw Error(where, "target name '" + ep.target + "' holds ':', '/' or ','");
  }
  return ep;
}

size_t remoteNameLength(const std::string& spec) {
  if (!isRemoteName(spec)) return 0;
  size_t pos = std::strlen(kNamePrefix);
  if (pos < spec.size() && spec[pos] == '[') {
    const size_t close = spec.find(']', pos);
    pos = close == std::string::npos ? spec.size() : close + 1;
  } else {
    pos = spec.find(':', pos);
    if (pos == std::string::npos) return spec.size();
  }
  // Past HOST: ':' PORT, then an optional '/' TARGET, then options begin at the next ':'.
  const size_t next = spec.find(':', pos + 1);
  return next == std::string::npos ? spec.size() : next;
}

}  // namespace tessera::runtime::remote
