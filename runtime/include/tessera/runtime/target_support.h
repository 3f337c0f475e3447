// What implementations of Target share (tessera_target_api, which every plugin links): option parsing and the config check of a target built for one config.
#pragma once

#include <chrono>
#include <string>

#include "tessera/hw/config.h"
#include "tessera/runtime/target.h"

namespace tessera::runtime {

// The option `key` as a duration, given in seconds in (0, 1e6]; `fallback` when absent. Throws
// tessera::Error naming "target option KEY=VALUE" otherwise. Never below 1 ms.
std::chrono::milliseconds secondsOption(const TargetOptions& options, const std::string& key,
                                        std::chrono::milliseconds fallback);

// True if `a` and `b` describe the same hardware: every parameter equal, whatever their names and
// descriptions (a session's config against the one a bitstream or model was built for).
bool sameHardware(const hw::Config& a, const hw::Config& b);

}  // namespace tessera::runtime
