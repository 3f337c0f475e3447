// The explored configuration space: parsing hw/configs/space/explore.json, its points and limits.
#include "tessera/hw/config_space.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "tessera/support/error.h"

namespace tessera::hw {

namespace {

const char* const kTopKeys[] = {"DESCRIPTION", "BASE", "COARSE", "BUFFERS", "TARGET_LIMITS"};
const char* const kBufferKeys[] = {"LOG_UOP_BUFF_SIZE", "LOG_INP_BUFF_SIZE", "LOG_WGT_BUFF_SIZE", "LOG_ACC_BUFF_SIZE"};
// The coarse keys a point's name spells, in this order.
const char* const kCoarseKeys[] = {"LOG_BATCH", "LOG_BLOCK_IN", "LOG_BLOCK_OUT", "LOG_BUS_WIDTH"};
const char* const kCoarseTags[] = {"b", "i", "o", "w"};
// The buffer keys (kBufferKeys' order) a config's name spells after its point's.
const char* const kBufferTags[] = {"u", "i", "w", "a"};
// Bound of any value in a space file, and the open side of a one-sided limit; far beyond every
// config key's own range, so it never decides anything but keeps the arithmetic in int.
constexpr int kUnbounded = 1000000;

int asInt(const nlohmann::json& v, const std::string& where) {
  if (!v.is_number_integer()) throw Error(where, "must be an integer, got " + v.dump());
  const long long x = v.get<long long>();
  if (x < -kUnbounded || x > kUnbounded) throw Error(where, "value " + std::to_string(x) + " is out of range");
  return static_cast<int>(x);
}

// {"KEY": [MIN, MAX], ...} over exactly `keys`, each a key the base config knows.
std::vector<KeyRange> parseRanges(const nlohmann::json& j, const std::string& where, const char* const* keys,
                                  size_t keyCount, const Config& base) {
  if (!j.is_object()) throw Error(where, "must be an object of KEY: [MIN, MAX]");
  std::vector<KeyRange> ranges;
  for (size_t i = 0; i < keyCount; ++i) {
    const std::string key = keys[i];
    if (!j.contains(key)) throw Error(where + "." + key, "missing (this section ranges exactly its keys)");
    const auto& r = j.at(key);
    const std::string at = where + "." + key;
    if (!r.is_array() || r.size() != 2) throw Error(at, "must be [MIN, MAX], got " + r.dump());
    KeyRange range{key, asInt(r[0], at + "[0]"), asInt(r[1], at + "[1]")};
    if (range.min > range.max)
      throw Error(at, "MIN " + std::to_string(range.min) + " exceeds MAX " + std::to_string(range.max));
    if (!base.intKey(key)) throw Error(at, "not an integer config key");
    ranges.push_back(range);
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::none_of(keys, keys + keyCount, [&](const char* k) { return it.key() == k; }))
      throw Error(where + "." + it.key(), "not ranged here (this section ranges exactly its keys)");
  return ranges;
}

}  // namespace

ConfigSpace ConfigSpace::shipped() { return fromJson(shippedSpaceJson(), "hw/configs/space/explore.json"); }

ConfigSpace ConfigSpace::fromJson(const std::string& text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin, std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) throw Error(origin, "a configuration space must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::none_of(std::begin(kTopKeys), std::end(kTopKeys), [&](const char* k) { return it.key() == k; }))
      throw Error(origin + ": key " + it.key(), "unknown key (known: DESCRIPTION, BASE, COARSE, BUFFERS, TARGET_LIMITS)");
  for (const char* key : {"BASE", "COARSE", "BUFFERS"})
    if (!j.contains(key)) throw Error(origin + ": key " + key, "missing required key");

  ConfigSpace s;
  s.origin_ = origin;
  if (j.contains("DESCRIPTION")) {
    if (!j.at("DESCRIPTION").is_string()) throw Error(origin + ": key DESCRIPTION", "must be a string");
    s.description_ = j.at("DESCRIPTION").get<std::string>();
  }
  if (!j.at("BASE").is_string()) throw Error(origin + ": key BASE", "must be a shipped config's name");
  const std::string baseName = j.at("BASE").get<std::string>();
  if (shippedConfigJson(baseName).empty()) throw Error(origin + ": key BASE", "'" + baseName + "' is not a shipped config");
  s.base_ = Config::load(baseName);
  s.coarse_ = parseRanges(j.at("COARSE"), origin + ": COARSE", kCoarseKeys, std::size(kCoarseKeys), s.base_);
  s.buffers_ = parseRanges(j.at("BUFFERS"), origin + ": BUFFERS", kBufferKeys, std::size(kBufferKeys), s.base_);

  if (j.contains("TARGET_LIMITS")) {
    const auto& limits = j.at("TARGET_LIMITS");
    if (!limits.is_array()) throw Error(origin + ": key TARGET_LIMITS", "must be an array");
    for (size_t i = 0; i < limits.size(); ++i) {
      const std::string at = origin + ": TARGET_LIMITS[" + std::to_string(i) + "]";
      const auto& l = limits[i];
      if (!l.is_object()) throw Error(at, "must be an object");
      for (auto it = l.begin(); it != l.end(); ++it)
        if (it.key() != "TARGETS" && it.key() != "KEY" && it.key() != "MIN" && it.key() != "MAX" && it.key() != "REASON")
          throw Error(at + "." + it.key(), "unknown key (known: TARGETS, KEY, MIN, MAX, REASON)");
      TargetLimit limit;
      if (!l.contains("TARGETS") || !l.at("TARGETS").is_array() || l.at("TARGETS").empty())
        throw Error(at + ".TARGETS", "must be a non-empty array of target names");
      for (const auto& t : l.at("TARGETS")) {
        if (!t.is_string() || t.get<std::string>().empty()) throw Error(at + ".TARGETS", "must hold target names, got " + t.dump());
        limit.targets.push_back(t.get<std::string>());
      }
      if (!l.contains("KEY") || !l.at("KEY").is_string() || !s.base_.intKey(l.at("KEY").get<std::string>()))
        throw Error(at + ".KEY", "must name an integer config key");
      limit.key = l.at("KEY").get<std::string>();
      if (!l.contains("MIN") && !l.contains("MAX")) throw Error(at, "needs MIN, MAX or both");
      limit.min = l.contains("MIN") ? asInt(l.at("MIN"), at + ".MIN") : -kUnbounded;
      limit.max = l.contains("MAX") ? asInt(l.at("MAX"), at + ".MAX") : kUnbounded;
      if (limit.min > limit.max) throw Error(at, "MIN exceeds MAX");
      if (!l.contains("REASON") || !l.at("REASON").is_string() || l.at("REASON").get<std::string>().empty())
        throw Error(at + ".REASON", "must say why the targets cannot run such configs");
      limit.reason = l.at("REASON").get<std::string>();
      s.limits_.push_back(limit);
    }
  }
  return s;
}

SpacePoint ConfigSpace::point(const std::vector<int>& coarseValues) const {
  if (coarseValues.size() != coarse_.size())
    throw Error(origin_, "a point needs " + std::to_string(coarse_.size()) + " coarse values, got " +
                             std::to_string(coarseValues.size()));
  SpacePoint p;
  p.coarse = coarseValues;
  Config c = base_;
  for (size_t i = 0; i < coarse_.size(); ++i) {
    if (coarseValues[i] < coarse_[i].min || coarseValues[i] > coarse_[i].max)
      throw Error(origin_ + ": " + coarse_[i].key, std::to_string(coarseValues[i]) + " is outside [" +
                                                       std::to_string(coarse_[i].min) + ", " +
                                                       std::to_string(coarse_[i].max) + "]");
    *c.intKey(coarse_[i].key) = coarseValues[i];
    p.name += (i ? "_" : "") + std::string(kCoarseTags[i]) + std::to_string(coarseValues[i]);
  }
  c.name = p.name;
  c.description = "explored point " + p.name + " of " + origin_;
  const KeyRange& uop = buffers_[0];
  const KeyRange& inp = buffers_[1];
  const KeyRange& wgt = buffers_[2];
  const KeyRange& acc = buffers_[3];
  // The largest buffers the ISA admits, the accumulator first: its depth also sets the input
  // buffer's (the micro-op's src field indexes both, so their depths are equal).
  const int logInpElem = c.logBatch + c.logBlockIn + c.logInpWidth - 3;
  const int logAccElem = c.logBatch + c.logBlockOut + c.logAccWidth - 3;
  // A point with no config is refused with the first (largest buffers') validation error: later
  // ones only repeat it or blame the buffers' ranges.
  std::string firstError;
  for (int a = acc.max; a >= acc.min; --a) {
    const int i = a - logAccElem + logInpElem;
    if (i < inp.min || i > inp.max) {
      if (firstError.empty())
        p.refusal = "LOG_ACC_BUFF_SIZE " + std::to_string(a) + " needs LOG_INP_BUFF_SIZE " + std::to_string(i) +
                    " for equal depths, outside [" + std::to_string(inp.min) + ", " + std::to_string(inp.max) + "]";
      continue;
    }
    for (int w = wgt.max; w >= wgt.min; --w) {
      for (int u = uop.max; u >= uop.min; --u) {
        c.logAccBuffSize = a;
        c.logInpBuffSize = i;
        c.logWgtBuffSize = w;
        c.logUopBuffSize = u;
        try {
          c.derive(p.name);
          p.valid = true;
          p.config = c;
          p.refusal.clear();
          return p;
        } catch (const Error& e) {
          if (firstError.empty()) firstError = e.what();
        }
      }
    }
  }
  if (!firstError.empty()) p.refusal = firstError;
  return p;
}

std::vector<SpacePoint> ConfigSpace::points() const {
  std::vector<SpacePoint> all;
  std::vector<int> v;
  for (const auto& r : coarse_) v.push_back(r.min);
  while (true) {
    all.push_back(point(v));
    size_t k = v.size();
    while (k > 0 && v[k - 1] == coarse_[k - 1].max) {
      v[k - 1] = coarse_[k - 1].min;
      --k;
    }
    if (k == 0) return all;
    ++v[k - 1];
  }
}

std::optional<Config> ConfigSpace::pointNamed(const std::string& name) const {
  size_t pos = 0;
  // Reads TAG then a number of one or two digits at `pos`; nullopt when the name does not go on so.
  auto tagged = [&](const std::string& tag) -> std::optional<int> {
    if (name.compare(pos, tag.size(), tag) != 0) return std::nullopt;
    pos += tag.size();
    size_t end = pos;
    while (end < name.size() && end - pos < 2 && name[end] >= '0' && name[end] <= '9') ++end;
    if (end == pos) return std::nullopt;
    const int v = std::stoi(name.substr(pos, end - pos));
    pos = end;
    return v;
  };
  // b<LOG_BATCH>_i<LOG_BLOCK_IN>_o<LOG_BLOCK_OUT>_w<LOG_BUS_WIDTH>, each value in its range.
  std::vector<int> values;
  for (size_t k = 0; k < coarse_.size(); ++k) {
    const std::optional<int> v = tagged((k ? "_" : "") + std::string(kCoarseTags[k]));
    if (!v || *v < coarse_[k].min || *v > coarse_[k].max) return std::nullopt;
    values.push_back(*v);
  }
  // Optionally the buffers, as explore names a config whose buffers are not the point's largest:
  // _u<LOG_UOP_BUFF_SIZE>_i<LOG_INP_BUFF_SIZE>_w<LOG_WGT_BUFF_SIZE>_a<LOG_ACC_BUFF_SIZE>.
  std::vector<int> buffers;
  if (pos != name.size()) {
    for (size_t k = 0; k < buffers_.size(); ++k) {
      const std::optional<int> v = tagged("_" + std::string(kBufferTags[k]));
      if (!v) return std::nullopt;
      if (*v < buffers_[k].min || *v > buffers_[k].max)
        throw Error(name, buffers_[k].key + " " + std::to_string(*v) + " is outside the explored range [" +
                              std::to_string(buffers_[k].min) + ", " + std::to_string(buffers_[k].max) + "] of " + origin_);
      buffers.push_back(*v);
    }
    if (pos != name.size()) return std::nullopt;
  }
  SpacePoint p = point(values);
  if (!p.valid) throw Error(name, "this point of the explored space has no config: " + p.refusal);
  if (buffers.empty()) return p.config;
  Config c = p.config;
  for (size_t k = 0; k < buffers_.size(); ++k) *c.intKey(buffers_[k].key) = buffers[k];
  c.name = name;
  c.description = "explored point " + p.name + " of " + origin_ + " with buffers of 2^" + std::to_string(buffers[0]) + ", 2^" +
                  std::to_string(buffers[1]) + ", 2^" + std::to_string(buffers[2]) + ", 2^" + std::to_string(buffers[3]) +
                  " bytes (micro-op, input, weight, accumulator)";
  c.derive(name);
  return c;
}

std::vector<Config> ConfigSpace::draw(uint64_t seed, int count) const {
  if (count < 0) throw Error("draw", "a count of " + std::to_string(count) + " configs");
  std::vector<SpacePoint> valid;
  for (SpacePoint& p : points())
    if (p.valid) valid.push_back(std::move(p));
  if (valid.empty() && count > 0) throw Error(origin_, "no point of the space has a config to draw from");
  // mt19937_64's sequence is fixed by the standard; the reduction by modulo keeps the draw the same
  // on every library (the distributions of <random> are not).
  std::mt19937_64 engine(seed);
  auto uniform = [&](int lo, int hi) { return lo + static_cast<int>(engine() % static_cast<uint64_t>(hi - lo + 1)); };
  // Most buffer draws are valid (the acc/inp depth rule refuses some); the bound only stops a
  // space whose points admit almost nothing but their largest buffers from spinning.
  constexpr int kAttemptsPerConfig = 1000;
  std::vector<Config> drawn;
  std::set<std::string> names;
  // Distinct configs: a repeat is drawn again, up to a bound a space with fewer configs than
  // `count` reaches.
  for (long long draws = 0; static_cast<int>(drawn.size()) < count; ++draws) {
    if (draws == static_cast<long long>(count) * kAttemptsPerConfig)
      throw Error(origin_, "drew " + std::to_string(drawn.size()) + " distinct configs in " + std::to_string(draws) +
                               " draws, not the " + std::to_string(count) + " asked for");
    const SpacePoint& p = valid[static_cast<size_t>(uniform(0, static_cast<int>(valid.size()) - 1))];
    for (int attempt = 0;; ++attempt) {
      Config c = p.config;
      for (const KeyRange& r : buffers_) {
        int* v = c.intKey(r.key);
        *v = uniform(r.min, *v);
      }
      if (attempt == kAttemptsPerConfig) c = p.config;  // its largest buffers are valid by construction
      c.name = nameOf(c);
      try {
        if (std::optional<Config> named = pointNamed(c.name)) {
          if (names.insert(named->name).second) drawn.push_back(*named);
          break;
        }
      } catch (const Error&) {
        // The ISA refuses this combination: draw again.
      }
    }
  }
  return drawn;
}

std::string ConfigSpace::nameOf(const Config& c) const {
  std::vector<int> values;
  for (const KeyRange& r : coarse_) values.push_back(*c.intKey(r.key));
  const SpacePoint p = point(values);
  bool largest = p.valid;
  for (const KeyRange& r : buffers_) largest = largest && *c.intKey(r.key) == *p.config.intKey(r.key);
  if (largest) return p.name;
  std::string name = p.name;
  for (size_t k = 0; k < buffers_.size(); ++k) name += "_" + std::string(kBufferTags[k]) + std::to_string(*c.intKey(buffers_[k].key));
  return name;
}

std::vector<std::string> ConfigSpace::refusals(const Config& config, const std::string& target) const {
  std::vector<std::string> why;
  for (const auto& l : limits_) {
    if (std::find(l.targets.begin(), l.targets.end(), target) == l.targets.end()) continue;
    const int v = *config.intKey(l.key);
    if (v < l.min || v > l.max) why.push_back(l.key + " " + std::to_string(v) + ": " + l.reason);
  }
  return why;
}

std::vector<std::string> ConfigSpace::limitedTargets() const {
  std::vector<std::string> names;
  for (const auto& l : limits_)
    for (const auto& t : l.targets)
      if (std::find(names.begin(), names.end(), t) == names.end()) names.push_back(t);
  return names;
}

}  // namespace tessera::hw
