// Where Tessera's loadable modules (the target plugins and the CLI's model commands) are looked for: one search path for every loader.
#pragma once

#include <string>
#include <vector>

namespace tessera::runtime {

// The directories searched, in order and each once: those of $TESSERA_PLUGIN_PATH
// (colon-separated), the running executable's directory, ../lib/tessera relative to it (the
// install layout), this build's plugin directory, and the plugin directory of the prefix this
// runtime was configured to install into (programs linking an installed runtime from anywhere).
// Read anew on each call.
std::vector<std::string> pluginSearchPath();

}  // namespace tessera::runtime
