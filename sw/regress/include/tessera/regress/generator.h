// Constrained-random program generator: a valid, deterministic VTA program from a config and a seed.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/hw/config.h"
#include "tessera/regress/program.h"

namespace tessera::regress {

// How big a program gets: a cycle budget (estimateCycles) and limits on blocks, buffer windows,
// kernels and loops. small: a few thousand cycles; medium: ~25k; large: ~100k.
enum class Size { kSmall, kMedium, kLarge };
const char* sizeName(Size size);
// "small", "medium" or "large"; throws tessera::Error otherwise.
Size parseSize(const std::string& text);

// Builds a lowered program that passes checkProgram(), reproducible from (cfg, seed, size) on any
// platform. It is a sequence of blocks, each a group of loads (INP/WGT into buffer windows, tiled
// with random shapes, strides and padding), compute (LOAD.UOP kernels, accumulator initialisation
// by LOAD.ACC/ACC_8BIT or reset GEMMs, GEMMs and ALU ops with random micro-op loops, some run
// again, immediate ALU ops often as a chain of other ops over the same loops) and stores
// to fresh DRAM; some loads read back bytes earlier stores wrote. Blocks pick among 1-3 windows
// per buffer, so consecutive blocks overlap (double or triple buffering) or serialize at random,
// and their load, compute and store parts are interleaved in the stream with a random lookahead.
// Random standalone NOPs and extra orderings add tokens the data does not need.
Program generate(const hw::Config& cfg, uint64_t seed, Size size);

}  // namespace tessera::regress
