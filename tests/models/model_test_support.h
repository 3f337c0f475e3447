// What the model tests share: their environment settings, whether a target is built, a directory's .npy files, and fsim's run to hold another target against.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tessera/compiler/model/compiled_model.h"
#include "tessera/compiler/model/run.h"
#include "tessera/hw/config.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/target.h"

namespace tessera::model_test {

// An environment variable, or `fallback` when it is unset or empty.
inline std::string env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// Whether `target` is built into this tree and supports `cfg`.
inline bool targetBuilt(const std::string& target, const hw::Config& cfg) {
  for (const auto* t : runtime::availableTargets())
    if (t->name == target) return t->supports(cfg);
  return false;
}

// The .npy files of a directory, sorted by name.
inline std::vector<std::filesystem::path> npyFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".npy") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The model on fsim, when the target under test is another one: its outputs must equal fsim's bit
// for bit. `runner` is null when the target is fsim itself.
struct FsimTwin {
  std::unique_ptr<runtime::Session> session;
  std::unique_ptr<compiler::model::ModelRunner> runner;
  FsimTwin(const std::string& target, const compiler::model::CompiledModel& m, const hw::Config& cfg) {
    if (target == "fsim") return;
    session = std::make_unique<runtime::Session>("fsim", cfg);
    runner = std::make_unique<compiler::model::ModelRunner>(m, *session);
  }
};

}  // namespace tessera::model_test
