// tsim options from key=value strings: waveform tracing, DRAM timing, watchdog.
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "tessera/support/error.h"
#include "tessera/tsim/simulator.h"

namespace tessera::tsim {

namespace {

std::string where(const std::string& key, const std::string& value) { return "target option " + key + "=" + value; }

uint64_t parseInteger(const std::string& key, const std::string& value, uint64_t lo, uint64_t hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos)
    throw Error(where(key, value), "expected a decimal integer in " + range);
  errno = 0;
  const unsigned long long v = std::strtoull(value.c_str(), nullptr, 10);
  if (errno == ERANGE || v < lo || v > hi) throw Error(where(key, value), "out of range " + range);
  return v;
}

double parseReal(const std::string& key, const std::string& value, double lo, double hi) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    throw Error(where(key, value), "expected a number");
  if (v < lo || v > hi)
    throw Error(where(key, value), "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

bool parseBool(const std::string& key, const std::string& value) {
  if (value.empty() || value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (value == "0" || value == "false" || value == "no" || value == "off") return false;
  throw Error(where(key, value), "expected 1/true/yes/on or 0/false/no/off");
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& Options::keys() {
  const hw::DramTiming kDefaults;
  static const std::vector<std::pair<std::string, std::string>> kKeys = {
      {"trace", "FILE: write an FST waveform of every RTL signal over the whole simulation (GTKWave)"},
      {"trace-force", "1: replace an existing trace file (default: refuse)"},
      {"mem-latency", "N: DRAM read latency, cycles from an AR handshake to the first R beat (default " +
                          std::to_string(kDefaults.readLatency) + ")"},
      {"mem-write-latency", "N: cycles from a burst's last W beat to its B response (default " +
                                std::to_string(kDefaults.writeLatency) + ")"},
      {"mem-bytes-per-cycle", "B: peak DRAM bandwidth of each direction, bytes per cycle (default " +
                                  std::to_string(static_cast<int>(kDefaults.bytesPerCycle)) + ", a Zynq HP port)"},
      {"mem-outstanding", "N: read bursts, and write bursts, the DRAM accepts at once (default " +
                              std::to_string(kDefaults.maxBursts) + ")"},
      {"mem-fault-page", "ADDR: answer SLVERR to every burst touching this 4 KiB page (tests the fault path)"},
      {"coverage", "DIR (tsim-cov only, required): the directory the process's coverage file goes to when it exits "
                   "(tsim-cov_CONFIG_HOST_PID.dat; tessera coverage report DIR reads them)"},
      {"mutant", "N (tsim-mut only, required): the planted mutation to activate, 1 to the build's count, 0 for the "
                 "unmutated netlist (tsim/mutation, docs/verification.md)"},
      {"watchdog-cycles", "N: cycles without progress before a run is reported as a deadlock (default 1000000, at "
                          "least 4 DRAM latencies; 0: never)"},
  };
  return kKeys;
}

Options Options::parse(const std::map<std::string, std::string>& keyValues) {
  Options o;
  for (const auto& [key, value] : keyValues) {
    if (key == "trace") {
      if (value.empty()) throw Error(where(key, value), "expected a file name");
      o.trace = value;
    } else if (key == "trace-force") {
      o.traceForce = parseBool(key, value);
    } else if (key == "mem-latency") {
      o.memory.readLatency = static_cast<uint32_t>(parseInteger(key, value, 1, 1000000));
    } else if (key == "mem-write-latency") {
      o.memory.writeLatency = static_cast<uint32_t>(parseInteger(key, value, 1, 1000000));
    } else if (key == "mem-bytes-per-cycle") {
      o.memory.bytesPerCycle = parseReal(key, value, 1.0 / 256, 4096);
    } else if (key == "mem-outstanding") {
      o.memory.maxBursts = static_cast<uint32_t>(parseInteger(key, value, 1, 1024));
    } else if (key == "mem-fault-page") {
      char* end = nullptr;
      errno = 0;
      const unsigned long long v = std::strtoull(value.c_str(), &end, 0);
      if (value.empty() || *end != '\0' || errno == ERANGE || v == 0 || v >= (1ull << 32))
        throw Error(where(key, value), "expected a byte address in [1, 2^32), decimal or 0x hex");
      o.memory.faultPage = v;
    } else if (key == "coverage") {
      if (value.empty()) throw Error(where(key, value), "expected a directory");
      o.coverage = value;
    } else if (key == "mutant") {
      o.mutant = static_cast<int64_t>(parseInteger(key, value, 0, 65535));
    } else if (key == "watchdog-cycles") {
      o.watchdogCycles = parseInteger(key, value, 0, uint64_t(1) << 40);
    } else {
      std::string known;
      for (const auto& k : keys()) known += (known.empty() ? "" : ", ") + k.first;
      throw Error("target option '" + key + "'", "unknown for tsim (known: " + known + ")");
    }
  }
  return o;
}

}  // namespace tessera::tsim
