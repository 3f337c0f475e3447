// Pieces of the tessera CLI every verb shares (the executable and the model-command module alike):
// option parsing, the config and target options, numbers, and how a verb's failure is reported.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>

#include "cli.h"
#include "tessera/support/error.h"
#include "tessera/support/file_io.h"

namespace tessera::cli {

bool parse(const char* verb, const char* usage, const std::vector<std::string>& args, po::options_description& opts,
           const po::positional_options_description* pos, po::variables_map* vm) {
  opts.add_options()("help,h", "show this help");
  auto parser = po::command_line_parser(args).options(opts);
  if (pos) parser.positional(*pos);
  po::store(parser.run(), *vm);
  if (vm->count("help")) {
    std::printf("usage: tessera %s %s\n\n", verb, usage);
    std::ostringstream os;
    os << opts;
    std::printf("%s", os.str().c_str());
    return false;
  }
  po::notify(*vm);
  return true;
}

namespace {
std::string envOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}
}  // namespace

void addConfigOption(po::options_description& opts, std::string* config) {
  opts.add_options()("config,c", po::value<std::string>(config)->default_value(envOr("TESSERA_CONFIG", "default")),
                     "config JSON file or shipped config name ($TESSERA_CONFIG)");
}

void addTargetOption(po::options_description& opts, std::string* target, const char* fallback) {
  opts.add_options()("target,t", po::value<std::string>(target)->default_value(envOr("TESSERA_TARGET", fallback)),
                     "target to run on ($TESSERA_TARGET)");
}

std::map<std::string, std::string> parseTargetOptionSpecs(const std::vector<std::string>& specs) {
  std::map<std::string, std::string> options;
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) throw Error("--target-option " + spec, "expected KEY=VALUE");
    options[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  return options;
}

int runCommand(const char* verb, int (*run)(const std::vector<std::string>&), const std::vector<std::string>& args) {
  try {
    return run(args);
  } catch (const boost::program_options::error& e) {
    std::fprintf(stderr, "tessera %s: error: %s (see 'tessera %s --help')\n", verb, e.what(), verb);
    return 2;
  } catch (const tessera::FileExistsError& e) {
    // Every verb that writes a file the user names takes --force (tessera stream replaces its own files).
    std::fprintf(stderr, "tessera %s: error: %s (pass --force to replace it)\n", verb, e.what());
    return 1;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera %s: error: %s\n", verb, e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera %s: internal error: %s\n", verb, e.what());
    return 1;
  }
}

}  // namespace tessera::cli
