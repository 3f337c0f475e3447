// The configuration space co-design explores (hw/configs/space/explore.json): its ranges, its
// points as configs, and which targets cannot run a point yet and why.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/hw/config.h"

namespace tessera::hw {

// An inclusive range of one config key.
struct KeyRange {
  std::string key;  // a JSON key of hw/configs/*.json, e.g. LOG_BATCH
  int min = 0, max = 0;
};

// Targets that cannot run configs whose `key` lies outside [min, max], and why.
struct TargetLimit {
  std::vector<std::string> targets;
  std::string key;
  int min = 0, max = 0;
  std::string reason;
};

// One coarse point: its config (the largest buffers the ISA admits), or why it has none.
struct SpacePoint {
  std::string name;           // e.g. b0_i4_o4_w6: LOG_BATCH, LOG_BLOCK_IN, LOG_BLOCK_OUT, LOG_BUS_WIDTH
  std::vector<int> coarse;    // the coarse keys' values, in the order of ConfigSpace::coarse
  bool valid = false;
  Config config;              // when valid
  std::string refusal;        // when not: the last buffer choice's error
};

class ConfigSpace {
 public:
  // The space shipped in hw/configs/space/explore.json, embedded at build time.
  static ConfigSpace shipped();
  // Parses a space; `origin` names the source in error messages.
  static ConfigSpace fromJson(const std::string& text, const std::string& origin);

  const std::string& origin() const { return origin_; }
  const std::string& description() const { return description_; }
  const Config& base() const { return base_; }
  const std::vector<KeyRange>& coarse() const { return coarse_; }
  const std::vector<KeyRange>& buffers() const { return buffers_; }
  const std::vector<TargetLimit>& limits() const { return limits_; }

  // Every coarse point, in lexicographic order of the coarse keys.
  std::vector<SpacePoint> points() const;
  // The point of these coarse values (one per coarse key), with its buffers chosen.
  SpacePoint point(const std::vector<int>& coarseValues) const;
  // The config of the point named `name` (e.g. b1_i4_o4_w6, its largest buffers), or of the point
  // with the buffers a suffix names (b1_i4_o4_w6_u15_i15_w17_a17: log2 bytes of the micro-op, input,
  // weight and accumulator buffers); nullopt when no point has that name. Throws for a point of
  // the space that has no config, or buffers out of range or invalid, with why.
  std::optional<Config> pointNamed(const std::string& name) const;
  // `count` distinct configs drawn at random from the space, the same for the same `seed`: a coarse point
  // uniformly among those with a config, then each buffer uniformly from its range up to that
  // point's largest (combinations the ISA refuses are drawn again). Each is named as nameOf() names it.
  std::vector<Config> draw(uint64_t seed, int count) const;
  // The name pointNamed() takes for `c` (its coarse keys in the space's ranges).
  std::string nameOf(const Config& c) const;
  // Why `target` cannot run `config` (one line a limit it breaks); empty when it can.
  std::vector<std::string> refusals(const Config& config, const std::string& target) const;
  // Every target any limit names, in first-mentioned order.
  std::vector<std::string> limitedTargets() const;

 private:
  std::string origin_, description_;
  Config base_;
  std::vector<KeyRange> coarse_, buffers_;
  std::vector<TargetLimit> limits_;
};

// JSON text of hw/configs/space/explore.json (embedded with the shipped configs).
std::string shippedSpaceJson();

}  // namespace tessera::hw
