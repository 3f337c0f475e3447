// Parsing, validation and derivation of hardware configurations.
#include "tessera/hw/config.h"

#include <optional>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <sys/stat.h>

#include "tessera/hw/config_space.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "tessera/support/file_io.h"

namespace tessera::hw {

namespace {

struct KeySpec {
  const char* key;
  int Config::*field;
  bool required;
  int min;
  int max;
};

// Range limits are what the ISA and the simulators can represent; tighter rules follow in derive().
const KeySpec kIntKeys[] = {
    {"LOG_INP_WIDTH", &Config::logInpWidth, true, 0, 7},
    {"LOG_WGT_WIDTH", &Config::logWgtWidth, true, 0, 7},
    {"LOG_ACC_WIDTH", &Config::logAccWidth, true, 0, 7},
    {"LOG_BATCH", &Config::logBatch, true, 0, 5},
    {"LOG_BLOCK_IN", &Config::logBlockIn, false, 0, 6},
    {"LOG_BLOCK_OUT", &Config::logBlockOut, false, 0, 6},
    {"LOG_UOP_BUFF_SIZE", &Config::logUopBuffSize, true, 2, 24},
    {"LOG_INP_BUFF_SIZE", &Config::logInpBuffSize, true, 2, 26},
    {"LOG_WGT_BUFF_SIZE", &Config::logWgtBuffSize, true, 2, 26},
    {"LOG_ACC_BUFF_SIZE", &Config::logAccBuffSize, true, 2, 26},
    {"LOG_BUS_WIDTH", &Config::logBusWidth, false, 0, 12},
    {"INSN_QUEUE_DEPTH", &Config::insnQueueDepth, false, 1, 1 << 16},
    {"DEP_QUEUE_DEPTH", &Config::depQueueDepth, false, 1, 1 << 16},
};

const std::set<std::string> kInfoKeys = {"NAME", "DESCRIPTION", "TARGET", "HW_VER", "LOG_BLOCK"};

std::string stemOf(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  auto dot = base.rfind(".json");
  return dot == std::string::npos ? base : base.substr(0, dot);
}

}  // namespace

Config Config::fromJson(const std::string& text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports a byte offset; turn it into line:column for the user.
    size_t line = 1, col = 1;
    for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') { ++line; col = 1; } else { ++col; }
    }
    throw Error(origin + ":" + std::to_string(line) + ":" + std::to_string(col),
                std::string("invalid JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {
    // The parser's other errors, e.g. a number too large for a double (found by fuzzing).
    throw Error(origin, std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) throw Error(origin, "a configuration must be a JSON object");

  Config c;
  c.name = stemOf(origin);
  std::set<std::string> known = kInfoKeys;
  for (const auto& spec : kIntKeys) known.insert(spec.key);
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!known.count(it.key())) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw Error(origin + ": key " + it.key(), "unknown key (known keys: " + list + ")");
    }
  }
  auto getInt = [&](const char* key, int lo, int hi, int* out) {
    const auto& v = j.at(key);
    if (!v.is_number_integer())
      throw Error(origin + ": key " + key, "must be an integer, got " + v.dump());
    long long x = v.get<long long>();
    if (x < lo || x > hi)
      throw Error(origin + ": key " + key, "value " + std::to_string(x) + " is outside [" +
                                               std::to_string(lo) + ", " + std::to_string(hi) + "]");
    *out = static_cast<int>(x);
  };
  for (const auto& spec : kIntKeys) {
    if (j.contains(spec.key)) {
      getInt(spec.key, spec.min, spec.max, &(c.*spec.field));
    } else if (spec.required) {
      throw Error(origin + ": key " + spec.key, "missing required key");
    }
  }
  bool hasIn = j.contains("LOG_BLOCK_IN"), hasOut = j.contains("LOG_BLOCK_OUT");
  if (j.contains("LOG_BLOCK")) {
    if (hasIn || hasOut)
      throw Error(origin + ": key LOG_BLOCK",
                  "give either LOG_BLOCK or both LOG_BLOCK_IN and LOG_BLOCK_OUT, not both forms");
    int b = 0;
    getInt("LOG_BLOCK", 0, 6, &b);
    c.logBlockIn = c.logBlockOut = b;
  } else if (!(hasIn && hasOut)) {
    throw Error(origin + ": key " + std::string(hasIn ? "LOG_BLOCK_OUT" : hasOut ? "LOG_BLOCK_IN" : "LOG_BLOCK"),
                "missing required key (give LOG_BLOCK, or both LOG_BLOCK_IN and LOG_BLOCK_OUT)");
  }
  for (const char* key : {"NAME", "DESCRIPTION", "TARGET", "HW_VER"}) {
    if (j.contains(key) && !j.at(key).is_string())
      throw Error(origin + ": key " + key, "must be a string");
  }
  if (j.contains("NAME")) c.name = j.at("NAME").get<std::string>();
  if (j.contains("DESCRIPTION")) c.description = j.at("DESCRIPTION").get<std::string>();
  if (c.name.empty()) throw Error(origin + ": key NAME", "must not be empty");
  c.derive(origin);
  return c;
}

Config Config::load(const std::string& pathOrName) {
  std::string shipped = shippedConfigJson(pathOrName);
  if (!shipped.empty()) return fromJson(shipped, "hw/configs/" + pathOrName + ".json");
  const std::string board = boardConfigJson(pathOrName);
  if (!board.empty()) return fromJson(board, "hw/configs/boards/" + pathOrName + ".json");
  struct stat st;
  const bool exists = ::stat(pathOrName.c_str(), &st) == 0;
  // A point of the explored space by its name (tessera info --space), e.g. b1_i4_o4_w6, unless a
  // file has that name (a directory does not count: build trees have one per config).
  if (!exists || !S_ISREG(st.st_mode))
    if (std::optional<Config> point = ConfigSpace::shipped().pointNamed(pathOrName)) return *point;
  if (!exists) {
    std::string names;
    for (const auto& n : shippedConfigNames()) names += (names.empty() ? "" : ", ") + n;
    std::string boards;
    for (const auto& n : boardConfigNames()) boards += (boards.empty() ? "" : ", ") + n;
    throw Error(pathOrName, "no such config file, and no shipped config of that name (shipped: " +
                                names + "; board configs: " + boards +
                                "; or a point of the explored space, such as b1_i4_o4_w6: tessera info --space)");
  }
  return fromJson(readTextFile(pathOrName), pathOrName);
}

Config Config::named(const std::string& name) {
  const std::string shipped = shippedConfigJson(name);
  if (!shipped.empty()) return fromJson(shipped, "hw/configs/" + name + ".json");
  const std::string board = boardConfigJson(name);
  if (!board.empty()) return fromJson(board, "hw/configs/boards/" + name + ".json");
  if (std::optional<Config> point = ConfigSpace::shipped().pointNamed(name)) return *point;
  throw Error(name, "is neither a shipped or board config nor a point of the explored space");
}

void Config::derive(const std::string& origin) {
  auto fail = [&](const char* key, const std::string& why) {
    throw Error(origin + ": key " + key, why);
  };
  // Only the integer types the simulators, RTL and HLS implement.
  if (logInpWidth != 3) fail("LOG_INP_WIDTH", "unsupported width " + std::to_string(1 << logInpWidth) + " bits; only 8-bit inputs (3) are supported");
  if (logWgtWidth != 3) fail("LOG_WGT_WIDTH", "unsupported width " + std::to_string(1 << logWgtWidth) + " bits; only 8-bit weights (3) are supported");
  if (logAccWidth != 5) fail("LOG_ACC_WIDTH", "unsupported width " + std::to_string(1 << logAccWidth) + " bits; only 32-bit accumulators (5) are supported");
  logOutWidth = logInpWidth;
  inpWidth = 1 << logInpWidth;
  wgtWidth = 1 << logWgtWidth;
  accWidth = 1 << logAccWidth;
  outWidth = 1 << logOutWidth;
  batch = 1 << logBatch;
  blockIn = 1 << logBlockIn;
  blockOut = 1 << logBlockOut;
  busWidth = 1 << logBusWidth;
  busBytes = busWidth / 8;
  insnBytes = 16;
  uopBytes = 4;

  inpElemBytes = inpWidth * batch * blockIn / 8;
  wgtElemBytes = wgtWidth * blockOut * blockIn / 8;
  accElemBytes = accWidth * batch * blockOut / 8;
  outElemBytes = outWidth * batch * blockOut / 8;
  acc8ElemBytes = accElemBytes / 4;

  if (logBusWidth < 5)
    fail("LOG_BUS_WIDTH", "a " + std::to_string(busWidth) + "-bit bus is narrower than allowed (AXI data width of at least 32 bits, LOG_BUS_WIDTH >= 5)");
  int narrowest = std::min(std::min(inpElemBytes, wgtElemBytes), std::min(accElemBytes, outElemBytes));
  if (busBytes > narrowest)
    fail("LOG_BUS_WIDTH", "a " + std::to_string(busWidth) + "-bit bus is wider than the narrowest tensor element (" +
                              std::to_string(narrowest * 8) + " bits); every element must be a whole number of bus beats");
  if (busWidth > 1024) fail("LOG_BUS_WIDTH", "bus wider than 1024 bits is not supported");
  inpMatAxiRatio = inpElemBytes / busBytes;
  wgtMatAxiRatio = wgtElemBytes / busBytes;
  accMatAxiRatio = accElemBytes / busBytes;
  outMatAxiRatio = outElemBytes / busBytes;

  auto logDepth = [&](const char* key, int logSize, int elemBytes, int* logOut, uint32_t* out) {
    int logElem = 0;
    while ((1 << logElem) < elemBytes) ++logElem;
    if (logSize < logElem)
      fail(key, "buffer of " + std::to_string(1 << logSize) + " bytes cannot hold one element of " +
                    std::to_string(elemBytes) + " bytes");
    *logOut = logSize - logElem;
    *out = 1u << *logOut;
  };
  logDepth("LOG_UOP_BUFF_SIZE", logUopBuffSize, uopBytes, &logUopDepth, &uopDepth);
  logDepth("LOG_INP_BUFF_SIZE", logInpBuffSize, inpElemBytes, &logInpDepth, &inpDepth);
  logDepth("LOG_WGT_BUFF_SIZE", logWgtBuffSize, wgtElemBytes, &logWgtDepth, &wgtDepth);
  logDepth("LOG_ACC_BUFF_SIZE", logAccBuffSize, accElemBytes, &logAccDepth, &accDepth);

  // SRAM indices must fit the 16-bit sram_base field of LOAD/STORE.
  const struct { const char* key; int logDepth; } bufs[] = {
      {"LOG_UOP_BUFF_SIZE", logUopDepth}, {"LOG_INP_BUFF_SIZE", logInpDepth},
      {"LOG_WGT_BUFF_SIZE", logWgtDepth}, {"LOG_ACC_BUFF_SIZE", logAccDepth}};
  for (const auto& b : bufs) {
    if (b.logDepth > kMemSramBaseBits)
      fail(b.key, "buffer depth 2^" + std::to_string(b.logDepth) +
                      " no longer fits the 16-bit sram_base field of LOAD/STORE");
  }
  if (2 * logAccDepth + logWgtDepth > 32)
    fail(logWgtDepth > logAccDepth ? "LOG_WGT_BUFF_SIZE" : "LOG_ACC_BUFF_SIZE",
         "micro-op fields dst(" + std::to_string(logAccDepth) + ")+src(" + std::to_string(logAccDepth) +
             ")+wgt(" + std::to_string(logWgtDepth) + " bits) no longer fit the 32-bit micro-op");
  // The micro-op's src field indexes the input buffer (GEMM) and the accumulator (ALU). VTA's
  // sources disagree on its width (the accumulator's in hw_spec.h's VTAUop, the input buffer's in
  // the HLS design), so only configurations where both depths are equal encode identically for
  // every VTA toolchain; Tessera accepts only those.
  if (logInpDepth != logAccDepth)
    fail("LOG_INP_BUFF_SIZE", "input buffer depth 2^" + std::to_string(logInpDepth) +
                                  " differs from the accumulator depth 2^" + std::to_string(logAccDepth) +
                                  "; the micro-op src field indexes both, and VTA toolchains only agree on its "
                                  "layout when the depths are equal");
  // GEMM and ALU instructions must fit in 128 bits with VTA's field packing.
  std::string overflow = InsnLayout::overflowReason(*this);
  if (!overflow.empty()) {
    const char* key = logAccDepth >= std::max(logInpDepth, std::max(logWgtDepth, logUopDepth))
                          ? "LOG_ACC_BUFF_SIZE"
                      : logUopDepth >= std::max(logInpDepth, logWgtDepth) ? "LOG_UOP_BUFF_SIZE"
                      : logWgtDepth >= logInpDepth                        ? "LOG_WGT_BUFF_SIZE"
                                                                          : "LOG_INP_BUFF_SIZE";
    fail(key, overflow);
  }
}

int Config::dramElemBytes(MemId id) const {
  switch (id) {
    case MemId::kUop: return uopBytes;
    case MemId::kWgt: return wgtElemBytes;
    case MemId::kInp: return inpElemBytes;
    case MemId::kAcc: return accElemBytes;
    case MemId::kOut: return outElemBytes;
    case MemId::kAcc8: return acc8ElemBytes;
  }
  return 0;
}

uint32_t Config::sramDepth(MemId id) const {
  switch (id) {
    case MemId::kUop: return uopDepth;
    case MemId::kWgt: return wgtDepth;
    case MemId::kInp: return inpDepth;
    case MemId::kAcc:
    case MemId::kOut:
    case MemId::kAcc8: return accDepth;
  }
  return 0;
}

int* Config::intKey(const std::string& key) {
  for (const auto& spec : kIntKeys)
    if (key == spec.key) return &(this->*spec.field);
  return nullptr;
}

const int* Config::intKey(const std::string& key) const { return const_cast<Config*>(this)->intKey(key); }

std::string Config::toJson() const {
  nlohmann::ordered_json j;
  j["NAME"] = name;
  if (!description.empty()) j["DESCRIPTION"] = description;
  j["LOG_INP_WIDTH"] = logInpWidth;
  j["LOG_WGT_WIDTH"] = logWgtWidth;
  j["LOG_ACC_WIDTH"] = logAccWidth;
  j["LOG_BATCH"] = logBatch;
  j["LOG_BLOCK_IN"] = logBlockIn;
  j["LOG_BLOCK_OUT"] = logBlockOut;
  j["LOG_UOP_BUFF_SIZE"] = logUopBuffSize;
  j["LOG_INP_BUFF_SIZE"] = logInpBuffSize;
  j["LOG_WGT_BUFF_SIZE"] = logWgtBuffSize;
  j["LOG_ACC_BUFF_SIZE"] = logAccBuffSize;
  j["LOG_BUS_WIDTH"] = logBusWidth;
  j["INSN_QUEUE_DEPTH"] = insnQueueDepth;
  j["DEP_QUEUE_DEPTH"] = depQueueDepth;
  return j.dump(2);
}

}  // namespace tessera::hw
