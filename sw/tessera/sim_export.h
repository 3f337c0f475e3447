// tessera run --export-sim: what the accelerator runs for each segment, as files `tessera sim` replays.
#pragma once

#include <string>
#include <vector>

#include "tessera/compiler/model/run.h"
#include "tessera/hw/config.h"

namespace tessera::cli {

// Observes a ModelRunner's segment runs and writes, per segment, the DRAM images at their physical
// addresses, the instruction stream, the output bytes the run produced, and a manifest (manifest.txt)
// with the `tessera sim` command line that replays the segment. Layout and manifest: docs/graph.md.
class SimExport {
 public:
  // Refuses an existing directory that is not empty unless `force` (then files of the same name are
  // replaced; nothing else in it is touched). Creates the directory.
  SimExport(std::string dir, bool force, const hw::Config& cfg, std::string model, std::string target);

  void observe(const compiler::model::SegmentRunView& view, bool finished);
  // Writes the manifest once the run is over; returns its path.
  std::string writeManifest();

 private:
  std::string write(const std::string& relative, const uint8_t* bytes, uint64_t size);

  std::string dir_, model_, target_, configName_;
  bool force_;
  std::vector<uint8_t> constants_;  // as first written, to share one file between segments
  std::string constantsFile_;
  std::vector<std::string> segments_;  // each segment's manifest lines
  std::string current_;
};

}  // namespace tessera::cli
