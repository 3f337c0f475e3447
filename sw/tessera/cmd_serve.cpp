// tessera serve: offers one device (target) to remote:HOST:PORT clients over TCP (docs/remote.md); tessera-cli-serve.so, loaded by the executable for this verb only (module_loader.cpp).
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli.h"
#include "tessera/runtime/remote_server.h"
#include "tessera/support/error.h"
#include "tessera/support/file_io.h"

namespace tessera::cli {

namespace {

// Written whole under a temporary name first, so a test polling for the file never reads half a number.
void writePortFile(const std::string& path, uint16_t port) {
  try {
    writeTextFile(path, std::to_string(port) + "\n", true);
  } catch (const Error& e) {
    throw Error("--port-file " + path, e.reason());
  }
}

}  // namespace

int cmdServe(const std::vector<std::string>& args) {
  po::options_description opts("options");
  runtime::remote::ServeOptions so;
  std::string portFile;
  std::vector<std::string> targetOptions, clientOptions;
  unsigned port = so.port;
  uint64_t maxBytes = so.maxMessageBytes;
  opts.add_options()
      ("port,p", po::value<unsigned>(&port)->default_value(so.port), "TCP port to listen on; 0: any free one (printed)")
      ("bind,b", po::value<std::string>(&so.bind)->default_value(so.bind),
       "address to listen on (0.0.0.0 or :: for every interface)")
      ("target,t", po::value<std::string>(&so.target)->default_value(so.target), "the target whose device is served")
      ("config,c", po::value<std::string>(&so.config),
       "serve this config only (a board's bitstream); default: each client's own config")
      ("target-option,o", po::value<std::vector<std::string>>(&targetOptions),
       "KEY=VALUE: an option of the served target (repeatable)")
      ("client-option", po::value<std::vector<std::string>>(&clientOptions),
       "KEY: a target option clients may set (repeatable); by default they may set none")
      ("secret-file", po::value<std::string>(&so.secretFile),
       "FILE (mode 600) holding a shared secret clients must prove they know (HMAC-SHA-256 challenge-response)")
      ("max-bytes", po::value<uint64_t>(&maxBytes)->default_value(maxBytes),
       "largest message accepted, in bytes (at least 4198400); larger ones are refused before being read")
      ("idle-timeout", po::value<double>(&so.idleTimeoutSeconds)->default_value(so.idleTimeoutSeconds),
       "seconds a client may stay silent, between requests or inside one, before it is dropped")
      ("queue", po::value<unsigned>(&so.queueLimit)->default_value(so.queueLimit),
       "clients that may wait for a busy device; more are refused with who holds it")
      ("port-file", po::value<std::string>(&portFile), "FILE: write the port listened on once listening")
      ("quiet,q", "no log of connections on stderr")
      ("verbose,v", "log every run too (instructions, pages moved, time)");
  po::variables_map vm;
  if (!parse("serve",
             "[--port P] [--bind ADDR] [--target T] [--config C] [--target-option KEY=VALUE]... [--client-option KEY]... "
             "[--secret-file F] [--max-bytes N] [--idle-timeout S] [--queue N] [--port-file FILE] [--quiet|--verbose]",
             args, opts, nullptr, &vm))
    return 0;
  if (port > 65535) throw Error("--port " + std::to_string(port), "not a TCP port (0 to 65535)");
  so.port = static_cast<uint16_t>(port);
  if (maxBytes > 0xffffffffull) throw Error("--max-bytes " + std::to_string(maxBytes), "at most 4294967295");
  so.maxMessageBytes = static_cast<uint32_t>(maxBytes);
  so.targetOptions = parseTargetOptionSpecs(targetOptions);
  so.clientOptionKeys = clientOptions;
  if (!vm.count("quiet")) so.log = &std::cerr;
  so.logRuns = vm.count("verbose") != 0;
  so.onListening = [&](const std::string& address, uint16_t bound) {
    std::printf("tessera serve: listening on %s:%u (target %s, config %s%s)\n", address.c_str(), bound, so.target.c_str(),
                so.config.empty() ? "any" : so.config.c_str(), so.secretFile.empty() ? "" : ", shared secret required");
    std::fflush(stdout);
    if (!portFile.empty()) writePortFile(portFile, bound);
  };
  runtime::remote::Server server(so);
  server.wait();  // until the process is stopped (SIGINT, SIGTERM)
  return 0;
}

}  // namespace tessera::cli

extern "C" __attribute__((visibility("default"))) int tessera_cli_serve_main(const char* verb, int argc,
                                                                              const char* const* argv) {
  using namespace tessera::cli;
  if (std::strcmp(verb, "serve") != 0) {
    std::fprintf(stderr, "tessera %s: internal error: the serve module has no such command\n", verb);
    return 1;
  }
  return runCommand(verb, cmdServe, std::vector<std::string>(argv, argv + argc));
}
