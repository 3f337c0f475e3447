// FPGA parts and the area model: parts.json and area.json parsed, block RAM derived, resources predicted.
#include "tessera/hw/area.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "tessera/support/error.h"

namespace tessera::hw {

namespace {

nlohmann::json parseJson(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin, std::string("invalid JSON: ") + e.what());
  }
}

long nonNegative(const nlohmann::json& o, const std::string& key, const std::string& at, bool required = true) {
  if (!o.contains(key)) {
    if (required) throw Error(at + "." + key, "missing");
    return 0;
  }
  const auto& v = o.at(key);
  if (!v.is_number_integer() || v.get<long long>() < 0) throw Error(at + "." + key, "must be a non-negative integer, got " + v.dump());
  return static_cast<long>(v.get<long long>());
}

std::string stringKey(const nlohmann::json& o, const std::string& key, const std::string& at) {
  if (!o.contains(key) || !o.at(key).is_string() || o.at(key).get<std::string>().empty())
    throw Error(at + "." + key, "must be a non-empty string");
  return o.at(key).get<std::string>();
}

// A block RAM primitive's shape: `depth` words of `width` bits, `cost` in RAMB36 (a RAMB18 is half).
struct BramShape {
  int depth, width;
  double cost;
};
// The 7-series and UltraScale shapes (their widths include the parity bits Yosys uses as data): the
// RAMB18 and RAMB36 true dual-port shapes and the 72/36-bit simple dual-port ones.
constexpr BramShape kBramShapes[] = {
    {16384, 1, 0.5}, {8192, 2, 0.5}, {4096, 4, 0.5}, {2048, 9, 0.5}, {1024, 18, 0.5}, {512, 36, 0.5},
    {32768, 1, 1.0}, {16384, 2, 1.0}, {8192, 4, 1.0}, {4096, 9, 1.0}, {2048, 18, 1.0}, {1024, 36, 1.0}, {512, 72, 1.0},
};

// The cheapest tiling of a `width` x `depth` memory by one block RAM shape.
double memoryBram36(long width, long depth) {
  double best = 0;
  bool first = true;
  for (const BramShape& s : kBramShapes) {
    const double cost = static_cast<double>((width + s.width - 1) / s.width) *
                        static_cast<double>((depth + s.depth - 1) / s.depth) * s.cost;
    if (first || cost < best) best = cost;
    first = false;
  }
  return best;
}

// tessera_top's structure: the widths of its SRAMs' lanes and its instruction queue entries.
struct RtlShape {
  long bus, inpLanes, wgtLanes, accLanes, outLaneWidth;
  long uopWidth, queueEntryWidth, queues;
};
constexpr long kUopWidth = 32;       // tessera_config_pkg::UOP_WIDTH
constexpr long kQueueTagBits = 32;   // tessera_top's EntryWidth = 32 + INS_WIDTH
constexpr long kInsnQueues = 3;      // load, compute, store
constexpr long kQueueLutRamSramBits = 2L * 1024 * 1024;  // tessera_top's QueueLutRamSramBits

RtlShape rtlShape(const Config& c) {
  RtlShape s{};
  s.bus = c.busWidth;
  s.inpLanes = static_cast<long>(c.batch) * c.blockIn * c.inpWidth / c.busWidth;
  s.wgtLanes = static_cast<long>(c.blockOut) * c.blockIn * c.wgtWidth / c.busWidth;
  s.accLanes = static_cast<long>(c.batch) * c.blockOut * c.accWidth / c.busWidth;
  s.outLaneWidth = static_cast<long>(c.busWidth) * c.outWidth / c.accWidth;
  s.uopWidth = kUopWidth;
  s.queueEntryWidth = kQueueTagBits + 8L * c.insnBytes;
  s.queues = kInsnQueues;
  return s;
}

long sramBits(const Config& c) {
  const long inpBits = static_cast<long>(c.batch) * c.blockIn * c.inpWidth;
  const long wgtBits = static_cast<long>(c.blockOut) * c.blockIn * c.wgtWidth;
  const long accBits = static_cast<long>(c.batch) * c.blockOut * c.accWidth;
  const long outBits = static_cast<long>(c.batch) * c.blockOut * c.outWidth;
  return static_cast<long>(c.uopDepth) * kUopWidth + static_cast<long>(c.inpDepth) * inpBits +
         static_cast<long>(c.wgtDepth) * wgtBits + static_cast<long>(c.accDepth) * (accBits + outBits);
}

const char* const kFeatureNames[] = {"ONE", "MACS", "ALU_LANES", "QUEUES_IN_LUTRAM"};

std::vector<double> coefficients(const nlohmann::json& o, const std::string& at) {
  if (!o.is_object()) throw Error(at, "must be an object of FEATURE: coefficient");
  std::vector<double> v;
  for (const char* name : kFeatureNames) {
    if (!o.contains(name) || !o.at(name).is_number()) throw Error(at + "." + name, "must be a number");
    v.push_back(o.at(name).get<double>());
  }
  for (auto it = o.begin(); it != o.end(); ++it)
    if (std::none_of(std::begin(kFeatureNames), std::end(kFeatureNames), [&](const char* k) { return it.key() == k; }))
      throw Error(at + "." + it.key(), "not a feature of the area model");
  return v;
}

std::vector<std::string> names(const nlohmann::json& o, const std::string& key, const std::string& at) {
  std::vector<std::string> v;
  if (!o.contains(key)) return v;
  if (!o.at(key).is_array()) throw Error(at + "." + key, "must be an array of config names");
  for (const auto& n : o.at(key)) {
    if (!n.is_string()) throw Error(at + "." + key, "must hold config names, got " + n.dump());
    v.push_back(n.get<std::string>());
  }
  return v;
}

double apply(const std::vector<double>& coeff, const std::vector<AreaFeature>& f) {
  double sum = 0;
  for (size_t i = 0; i < f.size(); ++i) sum += coeff[i] * f[i].value;
  return std::max(0.0, sum);
}

}  // namespace

std::vector<Part> partsFromJson(const std::string& text, const std::string& origin) {
  const nlohmann::json j = parseJson(text, origin);
  if (!j.is_object() || !j.contains("PARTS") || !j.at("PARTS").is_array() || j.at("PARTS").empty())
    throw Error(origin, "a parts file is an object whose PARTS is a non-empty array");
  std::vector<Part> parts;
  for (size_t i = 0; i < j.at("PARTS").size(); ++i) {
    const auto& o = j.at("PARTS")[i];
    const std::string at = origin + ": PARTS[" + std::to_string(i) + "]";
    if (!o.is_object()) throw Error(at, "must be an object");
    Part p;
    p.name = stringKey(o, "NAME", at);
    p.boards = o.contains("BOARDS") && o.at("BOARDS").is_string() ? o.at("BOARDS").get<std::string>() : "";
    p.flowBoard = o.contains("FLOW_BOARD") ? stringKey(o, "FLOW_BOARD", at) : "";
    p.family = stringKey(o, "FAMILY", at);
    if (p.family != "xc7" && p.family != "xcup" && p.family != "ice40")
      throw Error(at + ".FAMILY", "'" + p.family + "' is not a family (xc7, xcup, ice40)");
    p.luts = nonNegative(o, "LUTS", at);
    p.ffs = nonNegative(o, "FFS", at);
    p.dsps = nonNegative(o, "DSPS", at);
    p.urams = nonNegative(o, "URAMS", at, false);
    p.bram36 = static_cast<double>(nonNegative(o, "BRAM36", at));
    p.ebr = nonNegative(o, "EBR", at, false);
    p.spram = nonNegative(o, "SPRAM", at, false);
    if (!o.contains("CLOCK_MHZ") || !o.at("CLOCK_MHZ").is_number() || o.at("CLOCK_MHZ").get<double>() <= 0)
      throw Error(at + ".CLOCK_MHZ", "must be a positive number");
    p.clockMhz = o.at("CLOCK_MHZ").get<double>();
    p.clockBasis = stringKey(o, "CLOCK_BASIS", at);
    for (const Part& q : parts)
      if (q.name == p.name) throw Error(at + ".NAME", "part '" + p.name + "' is listed twice");
    parts.push_back(p);
  }
  return parts;
}

std::vector<Part> shippedParts() { return partsFromJson(shippedPartsJson(), "hw/configs/space/parts.json"); }

Part partNamed(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  const std::vector<Part> parts = shippedParts();
  for (const Part& p : parts)
    if (lower == p.name || (lower.rfind(p.name, 0) == 0 && lower.size() > p.name.size())) return p;
  std::string known;
  for (const Part& p : parts) known += (known.empty() ? "" : ", ") + p.name + " (" + p.boards + ")";
  throw Error("--part " + name, "is not a known part (known: " + known + "; hw/configs/space/parts.json)");
}

Fit fitOf(const Resources& r, const Part& part) {
  Fit f;
  struct Use {
    const char* what;
    double used, capacity;
  };
  const Use uses[] = {{"LUT", r.lut, static_cast<double>(part.luts)},
                      {"FF", r.ff, static_cast<double>(part.ffs)},
                      {"DSP", r.dsp, static_cast<double>(part.dsps)},
                      {"BRAM36", r.bram36, part.bram36}};
  for (const Use& u : uses) {
    const double share = u.capacity > 0 ? u.used / u.capacity : (u.used > 0 ? INFINITY : 0);
    f.worstShare = std::max(f.worstShare, share);
    if (u.used > u.capacity && f.fits) {
      f.fits = false;
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s %.0f > %.0f", u.what, std::ceil(u.used), u.capacity);
      f.overflow = buf;
    }
  }
  return f;
}

bool queuesInLutRam(const Config& c) { return sramBits(c) >= kQueueLutRamSramBits; }

double blockRam36(const Config& c) {
  const RtlShape s = rtlShape(c);
  const long bankDepth = static_cast<long>(c.accDepth) / 2;
  double total = memoryBram36(s.uopWidth, c.uopDepth);
  total += static_cast<double>(s.inpLanes) * memoryBram36(s.bus, c.inpDepth);
  total += static_cast<double>(s.wgtLanes) * memoryBram36(s.bus, c.wgtDepth);
  total += 2.0 * static_cast<double>(s.accLanes) * memoryBram36(s.bus, bankDepth);
  total += 2.0 * static_cast<double>(s.accLanes) * memoryBram36(s.outLaneWidth, bankDepth);
  if (!queuesInLutRam(c)) total += static_cast<double>(s.queues) * memoryBram36(s.queueEntryWidth, c.insnQueueDepth);
  return total;
}

std::vector<std::string> areaFeatureNames() { return {std::begin(kFeatureNames), std::end(kFeatureNames)}; }

std::vector<AreaFeature> areaFeatures(const Config& c) {
  // Yosys' counts per module (scripts/fpga/yosys_report.py) show where the logic goes: the GEMM
  // core's multipliers and adder trees grow with its MACs; the ALU, the compute stage, the
  // micro-op pipes and the store's lanes with the accumulator row (batch x block out); the
  // instruction queues take about 6,000 LUTs as LUT RAM; everything else is constant. The SRAMs
  // themselves take no LUTs.
  return {
      {"ONE", 1.0},
      {"MACS", static_cast<double>(c.batch) * c.blockIn * c.blockOut},
      {"ALU_LANES", static_cast<double>(c.batch) * c.blockOut},
      {"QUEUES_IN_LUTRAM", queuesInLutRam(c) ? 1.0 : 0.0},
  };
}

AreaModel AreaModel::fromJson(const std::string& text, const std::string& origin) {
  const nlohmann::json j = parseJson(text, origin);
  if (!j.is_object() || !j.contains("FAMILIES") || !j.at("FAMILIES").is_object())
    throw Error(origin, "an area model is an object whose FAMILIES maps a family to its coefficients");
  AreaModel m;
  m.origin_ = origin;
  for (auto it = j.at("FAMILIES").begin(); it != j.at("FAMILIES").end(); ++it) {
    const std::string at = origin + ": FAMILIES." + it.key();
    const auto& o = it.value();
    if (!o.is_object()) throw Error(at, "must be an object");
    FamilyAreaModel f;
    f.family = it.key();
    f.lut = coefficients(o.value("LUT", nlohmann::json()), at + ".LUT");
    f.ff = coefficients(o.value("FF", nlohmann::json()), at + ".FF");
    f.dsp = coefficients(o.value("DSP", nlohmann::json()), at + ".DSP");
    f.fittedOn = names(o, "FITTED_ON", at);
    f.heldOut = names(o, "HELD_OUT", at);
    if (o.contains("HELD_OUT_MAX_ERROR") && o.at("HELD_OUT_MAX_ERROR").is_number())
      f.heldOutMaxError = o.at("HELD_OUT_MAX_ERROR").get<double>();
    if (o.contains("YOSYS") && o.at("YOSYS").is_string()) f.yosysVersion = o.at("YOSYS").get<std::string>();
    m.families_.push_back(f);
  }
  return m;
}

std::string AreaModel::toJson() const {
  nlohmann::ordered_json j;
  j["DESCRIPTION"] = "The area model's coefficients per Xilinx family, fitted to Yosys synth_xilinx counts "
                     "(scripts/fpga/yosys_report.py) by tessera-area-fit; block RAM is derived, not fitted (hw/src/area.cpp)";
  nlohmann::ordered_json fams = nlohmann::ordered_json::object();
  for (const FamilyAreaModel& f : families_) {
    nlohmann::ordered_json o;
    const std::pair<const char*, const std::vector<double>*> rs[] = {{"LUT", &f.lut}, {"FF", &f.ff}, {"DSP", &f.dsp}};
    for (const auto& [name, coeff] : rs) {
      nlohmann::ordered_json c;
      for (size_t i = 0; i < std::size(kFeatureNames); ++i) c[kFeatureNames[i]] = (*coeff)[i];
      o[name] = c;
    }
    o["FITTED_ON"] = f.fittedOn;
    o["HELD_OUT"] = f.heldOut;
    o["HELD_OUT_MAX_ERROR"] = f.heldOutMaxError;
    o["YOSYS"] = f.yosysVersion;
    fams[f.family] = o;
  }
  j["FAMILIES"] = fams;
  return j.dump(2) + "\n";
}

AreaModel AreaModel::shipped() { return fromJson(shippedAreaJson(), "hw/configs/space/area.json"); }

bool AreaModel::hasFamily(const std::string& family) const {
  return std::any_of(families_.begin(), families_.end(), [&](const FamilyAreaModel& f) { return f.family == family; });
}

const FamilyAreaModel& AreaModel::family(const std::string& family) const {
  for (const FamilyAreaModel& f : families_)
    if (f.family == family) return f;
  std::string known;
  for (const FamilyAreaModel& f : families_) known += (known.empty() ? "" : ", ") + f.family;
  throw Error(origin_.empty() ? std::string("area model") : origin_,
              "has no fitted model for family '" + family + "' (fitted: " + (known.empty() ? "none" : known) + ")");
}

void AreaModel::setFamily(const FamilyAreaModel& f) {
  for (FamilyAreaModel& g : families_)
    if (g.family == f.family) {
      g = f;
      return;
    }
  families_.push_back(f);
}

Resources AreaModel::predict(const Config& c, const std::string& familyName) const {
  const FamilyAreaModel& f = family(familyName);
  const std::vector<AreaFeature> x = areaFeatures(c);
  Resources r;
  r.lut = apply(f.lut, x);
  r.ff = apply(f.ff, x);
  r.dsp = apply(f.dsp, x);
  r.bram36 = blockRam36(c);
  return r;
}

}  // namespace tessera::hw
