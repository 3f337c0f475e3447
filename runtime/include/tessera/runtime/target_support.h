// What implementations of Target share (tessera_target_api, which every plugin links): option parsing, the config check of a target built for one config, relocating instructions.
#pragma once

#include <chrono>
#include <string>

#include "tessera/hw/config.h"
#include "tessera/hw/isa.h"
#include "tessera/runtime/target.h"

namespace tessera::runtime {

// The option `key` as a duration, given in seconds in (0, 1e6]; `fallback` when absent. Throws
// tessera::Error naming "target option KEY=VALUE" otherwise. Never below 1 ms.
std::chrono::milliseconds secondsOption(const TargetOptions& options, const std::string& key,
                                        std::chrono::milliseconds fallback);

// True if `a` and `b` describe the same hardware: every parameter equal, whatever their names and
// descriptions (a session's config against the one a bitstream or model was built for).
bool sameHardware(const hw::Config& a, const hw::Config& b);

// `insn`, the program's instruction `index`, with its dram_base moved by `deltaBytes`, which must be
// a whole number of its memory type's elements (else tessera::Error naming the instruction): what a
// driver that stages a run's pages elsewhere (a DMA buffer, a board's memory) sends instead. The
// caller keeps the result inside the accelerator's address space.
hw::Insn movedDramBase(const hw::Insn& insn, size_t index, int64_t deltaBytes, const hw::Config& cfg);

}  // namespace tessera::runtime
