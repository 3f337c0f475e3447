// The entry points of a target plugin: a shared object the runtime loads when one of its targets is named.
#pragma once

#include "tessera/runtime/target.h"

// Raised whenever Target, TargetInfo or TargetRegistrar change in a way a plugin built against the
// old headers would misread; the runtime refuses a plugin reporting another value. 3:
// TargetRegistrar::addNamePrefix (manifests gained the device attribute and PREFIX* entries).
#define TESSERA_TARGET_PLUGIN_ABI 3

// Defines a plugin's entry points; the block that follows registers its targets, e.g.
//   TESSERA_TARGET_PLUGIN(registrar) { registrar.add({"mysim", ...}); }
// The build writes a manifest next to the plugin naming the targets and name prefixes it registers,
// so listing the targets never loads a plugin (see cmake/TesseraTargetPlugins.cmake).
#define TESSERA_TARGET_PLUGIN(registrar)                                                             \
  extern "C" __attribute__((visibility("default"))) int tessera_target_plugin_abi() {              \
    return TESSERA_TARGET_PLUGIN_ABI;                                                              \
  }                                                                                                \
  extern "C" __attribute__((visibility("default"))) void tessera_register_targets(                 \
      ::tessera::runtime::TargetRegistrar& registrar)
