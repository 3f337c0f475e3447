// Reproducer files: a failing regression program with its config, DRAM image and targets, written and replayed.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "tessera/regress/program.h"
#include "tessera/regress/runner.h"

namespace tessera::regress {

// What a reproducer file holds: the lowered program (regions with their initial bytes, the
// instruction region among them, and the stream decoded from it), the targets it was run on and
// how they disagreed when it was written. Self-contained: no generator, seed or config file is
// needed to run it again.
struct Reproducer {
  Program program;           // cfg, seed, size, regions and insns; no ops (it was already lowered)
  std::string targets;       // comma-separated target specs, the reference first
  std::string summary;       // the mismatch when the file was written
  uint64_t originalInstructions = 0;  // of the program before shrinking
};

// The file's text. Line oriented: '#' comment lines (the mismatch and the listing, for people),
// then "tessera-reproducer 1", "config NAME" for a shipped config (or "config-json" followed by
// the JSON and a line "end-config"), "targets", "seed", "size", "original-instructions",
// "summary", one "region NAME KIND BASE SIZE" per region followed by its bytes in hex, 64 per
// line, and "end".
std::string formatReproducer(const Program& p, const std::string& targets, const Mismatch& m,
                             uint64_t originalInstructions);

// Parses a reproducer; throws tessera::Error naming `origin` and the line on anything malformed,
// and if the program is not valid (checkProgram), so a replay never runs a racy program.
Reproducer parseReproducer(const std::string& text, const std::string& origin);
Reproducer readReproducer(const std::string& path);

// Writes `text` as DIR/STEM.repro, creating DIR (and its parents) if needed; never replaces a
// file: if the name is taken, STEM-2.repro, STEM-3.repro, ... Returns the path written; throws
// tessera::Error naming the path if it cannot.
std::string writeReproducerFile(const std::string& dir, const std::string& stem, const std::string& text);

// The program with each region cut to the pages its instructions read or write, and the regions
// they do not touch dropped (the instruction region stays whole). The bytes left out are never
// touched, so on correct targets they cannot change the outcome; the caller checks that the
// mismatch survives, since a faulty target might write outside what the program asks. Throws
// like analyze() on an invalid program.
Program withTouchedPagesOnly(const Program& p);

// Runs the reproducer on its targets (or on `targets` if not empty), prints each target's outcome
// and the first difference, or that they agree. Returns true if they disagree (or all fail).
bool replayReproducer(const Reproducer& r, const std::string& targets, std::ostream& out);

}  // namespace tessera::regress
