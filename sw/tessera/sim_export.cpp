// tessera run --export-sim: writes each segment's DRAM images, instruction stream and a replay manifest.
#include "sim_export.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tessera/hw/asm.h"
#include "tessera/support/error.h"
#include "tessera/support/file_io.h"
#include "tessera/support/format.h"

namespace tessera::cli {

namespace fs = std::filesystem;

namespace {

}  // namespace

SimExport::SimExport(std::string dir, bool force, const hw::Config& cfg, std::string model, std::string target)
    : dir_(std::move(dir)), model_(std::move(model)), target_(std::move(target)), configName_(cfg.name), force_(force) {
  std::error_code ec;
  if (fs::exists(dir_, ec)) {
    if (!fs::is_directory(dir_, ec)) throw Error("--export-sim " + dir_, "exists and is not a directory");
    // A stale export mixed with a new one would replay the wrong bytes: ask before writing into one.
    if (!fs::is_empty(dir_, ec) && !force_)
      throw Error("--export-sim " + dir_, "is not empty (use --force to replace the files of an export there)");
  }
  fs::create_directories(dir_, ec);
  if (ec) throw Error("--export-sim " + dir_, "cannot create the directory: " + ec.message());
  // The config travels with the export, so a replay needs neither the model nor a shipped config name.
  const std::string json = cfg.toJson();
  write("config.json", reinterpret_cast<const uint8_t*>(json.data()), json.size());
}

std::string SimExport::write(const std::string& relative, const uint8_t* bytes, uint64_t size) {
  const fs::path path = fs::path(dir_) / relative;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) throw Error(path.parent_path().string(), "cannot create the directory: " + ec.message());
  writeBinaryFile(path.string(), bytes, size, force_);
  return relative;
}

void SimExport::observe(const compiler::model::SegmentRunView& v, bool finished) {
  const std::string seg = "segment" + std::to_string(v.segment) + "/";
  if (!finished) {
    current_ = "segment " + std::to_string(v.segment) + "\n";
    std::string loads;
    for (const auto& r : v.regions) {
      std::string file;
      if (r.name == "constants") {
        // Constants are written once per session and never stored to: later segments share the
        // first segment's file unless their bytes differ.
        if (constantsFile_.empty() || constants_.size() != r.bytes || std::memcmp(constants_.data(), r.host, r.bytes) != 0) {
          file = write(constantsFile_.empty() ? "constants.bin" : seg + "constants.bin", r.host, r.bytes);
          if (constantsFile_.empty()) {
            constants_.assign(r.host, r.host + r.bytes);
            constantsFile_ = file;
          }
        } else {
          file = constantsFile_;
        }
      } else {
        // The arena as the stream finds it: inputs packed in, and whatever earlier segments left.
        file = write(seg + (r.name == "instructions" ? "insns.bin" : r.name + ".bin"), r.host, r.bytes);
      }
      current_ += "load " + file + " " + hex(r.phys) + " " + std::to_string(r.bytes) + " " + r.name + "\n";
      loads += " --load " + file + "@" + hex(r.phys);
    }
    current_ += "insn " + hex(v.insnPhys) + " " + std::to_string(v.insnCount) + "\n";
    std::string dumps;
    for (size_t k = 0; k < v.outputs.size(); ++k) {
      const auto& o = v.outputs[k];
      const std::string dump = seg + "out-" + std::to_string(k) + ".bin";
      current_ += "output " + hex(o.phys) + " " + std::to_string(o.bytes) + " " + seg + "expected-" + std::to_string(k) +
                  ".bin " + dump + " " + o.name + "\n";
      dumps += " --dump " + hex(o.phys) + ":" + std::to_string(o.bytes) + ":" + dump;
    }
    // --force: replaying twice replaces the previous replay's dumps.
    current_ += "command tessera sim --config config.json --target " + target_ + loads + " --insn " + hex(v.insnPhys) + ":" +
                std::to_string(v.insnCount) + dumps + " --force\n";
    return;
  }
  for (size_t k = 0; k < v.outputs.size(); ++k)
    write(seg + "expected-" + std::to_string(k) + ".bin", v.outputs[k].host, v.outputs[k].bytes);
  segments_.push_back(current_);
}

std::string SimExport::writeManifest() {
  std::string m =
      "# tessera sim export (tessera run --export-sim): what the accelerator ran for each segment.\n"
      "# load FILE ADDR BYTES REGION: a DRAM image at its physical address, as the segment's stream found it.\n"
      "# insn ADDR COUNT: the stream (loaded by one of the loads). output ADDR BYTES EXPECTED DUMP TENSOR:\n"
      "# an output range, the bytes the run left there, and the file the replay dumps it to.\n"
      "# Replay a segment from this directory with its command line; each dump must equal its expected file.\n"
      "version 1\n"
      "model " + model_ + "\n" + "target " + target_ + "\n" + "config " + configName_ + " config.json\n" +
      "segments " + std::to_string(segments_.size()) + "\n";
  for (const auto& s : segments_) m += s;
  write("manifest.txt", reinterpret_cast<const uint8_t*>(m.data()), m.size());
  return (fs::path(dir_) / "manifest.txt").string();
}

}  // namespace tessera::cli
