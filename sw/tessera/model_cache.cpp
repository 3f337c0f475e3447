// Simulator models built on request in a cached plugin-only build of the source tree (tessera build-models, tessera explore).
#include "model_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "subprocess.h"
#include "tessera/hw/config_space.h"
#include "tessera/support/error.h"

#ifndef TESSERA_SOURCE_DIR
#define TESSERA_SOURCE_DIR ""
#endif

namespace tessera::cli {

namespace fs = std::filesystem;

namespace {

// The HLS design is always built for default too: the cache's tsim/ layer, like every build, makes
// the fake Zynq board's HLS bitstream from it.
const char* const kAlwaysHls = "default";

bool sameParameters(hw::Config a, hw::Config b) {
  a.name = b.name = "";
  a.description = b.description = "";
  return a.toJson() == b.toJson();
}

std::string lastLines(const fs::path& file, int n) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string tail;
  for (size_t i = lines.size() > size_t(n) ? lines.size() - n : 0; i < lines.size(); ++i) tail += "\n  " + lines[i];
  return tail;
}

// The cache's record of what its build was configured for: "rtl NAME" and "hls NAME" lines.
struct Record {
  std::set<std::string> rtl, hls;
};

Record readRecord(const fs::path& file) {
  Record r;
  std::ifstream in(file);
  std::string kind, name;
  while (in >> kind >> name) (kind == "rtl" ? r.rtl : r.hls).insert(name);
  return r;
}

void writeRecord(const fs::path& file, const Record& r) {
  std::ofstream out(file);
  for (const auto& n : r.rtl) out << "rtl " << n << "\n";
  for (const auto& n : r.hls) out << "hls " << n << "\n";
  if (!out) throw Error(file.string(), "cannot be written");
}

std::string joined(const std::set<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ";") + n;
  return s;
}

// An exclusive lock on `path` for the lifetime of this object.
class FileLock {
 public:
  explicit FileLock(const fs::path& path) : fd_(::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) throw Error(path.string(), "cannot lock the model cache");
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

ModelCache modelCache(const std::string& dirFlag, const std::string& sourceFlag) {
  ModelCache c;
  if (!dirFlag.empty()) c.dir = dirFlag;
  else if (const char* d = std::getenv("TESSERA_MODEL_CACHE"); d && *d) c.dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) c.dir = std::string(x) + "/tessera/models";
  else if (const char* h = std::getenv("HOME"); h && *h) c.dir = std::string(h) + "/.cache/tessera/models";
  else throw Error("model cache", "no directory: pass --model-cache DIR (or set TESSERA_MODEL_CACHE)");
  c.source = sourceFlag.empty() ? std::string(TESSERA_SOURCE_DIR) : sourceFlag;
  const std::string flag = sourceFlag.empty() ? "Tessera's source tree" : "--source " + sourceFlag;
  if (c.source.empty() || !fs::exists(fs::path(c.source) / "CMakeLists.txt") || !fs::is_directory(fs::path(c.source) / "rtl"))
    throw Error(flag, "building models needs Tessera's source tree" +
                          (c.source.empty() ? std::string() : " (" + c.source + " is not one)") + ": pass --source DIR");
  c.source = fs::canonical(c.source).string();
  return c;
}

std::string modelName(const hw::Config& c) {
  const std::vector<std::string> shipped = hw::shippedConfigNames();
  if (std::find(shipped.begin(), shipped.end(), c.name) != shipped.end() && sameParameters(c, hw::Config::load(c.name)))
    return c.name;
  const hw::ConfigSpace space = hw::ConfigSpace::shipped();
  std::string name;
  std::optional<hw::Config> point;
  try {
    name = space.nameOf(c);
    point = space.pointNamed(name);
  } catch (const Error& e) {
    throw Error("config '" + c.name + "'", std::string("is neither a shipped config nor a point of the explored space: ") + e.what());
  }
  if (!point || !sameParameters(c, *point))
    throw Error("config '" + c.name + "'", "is neither a shipped config nor a point of the explored space (" + space.origin() +
                                               "; its keys outside the point's, e.g. data widths, differ): models are built "
                                               "for shipped configs and points only");
  return name;
}

BuiltModels buildModels(const ModelCache& cache, const std::vector<hw::Config>& configs,
                        const std::function<void(const std::string&)>& progress) {
  const hw::ConfigSpace space = hw::ConfigSpace::shipped();
  BuiltModels result;
  Record want;
  for (const hw::Config& c : configs) {
    const std::string name = modelName(c);
    want.hls.insert(name);
    result.hls.push_back(name);
    std::string why;
    for (const std::string& r : space.refusals(c, "tsim")) why += (why.empty() ? "" : "; ") + r;
    if (why.empty()) {
      want.rtl.insert(name);
      result.rtl.push_back(name);
    } else {
      result.rtlRefused.push_back(name + ": " + why);
    }
  }
  want.hls.insert(kAlwaysHls);

  // One build per source tree: two checkouts never share (or fight over) a build directory.
  std::ostringstream tag;
  tag << "src-" << std::hex << std::hash<std::string>{}(cache.source);
  const fs::path root = fs::path(cache.dir) / tag.str();
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw Error(root.string(), "cannot create the model cache: " + ec.message());
  FileLock lock(root / "lock");
  const fs::path build = root / "build", recordFile = root / "configs.txt", log = root / "build.log";
  Record have = readRecord(recordFile);
  const size_t before = have.rtl.size() + have.hls.size();
  have.rtl.insert(want.rtl.begin(), want.rtl.end());
  have.hls.insert(want.hls.begin(), want.hls.end());
  const bool configure = have.rtl.size() + have.hls.size() != before || !fs::exists(build / "CMakeCache.txt");
  if (configure) {
    progress("configuring the model cache " + build.string());
    const int rc = runTool({"cmake", "-S", cache.source, "-B", build.string(), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                            "-DTESSERA_TSIM_CONFIGS=" + joined(have.rtl), "-DTESSERA_HLS_CONFIGS=" + joined(have.hls),
                            "-DTESSERA_TSIM_COV_CONFIGS=", "-DTESSERA_TSIM_MUT_CONFIGS="},
                           log.string());
    if (rc != 0)
      throw Error(build.string(), "configuring the model cache failed (exit " + std::to_string(rc) + "; " + log.string() +
                                      "):" + lastLines(log, 8));
    // Recorded once configured: a failed build is retried with the same list next time.
    writeRecord(recordFile, have);
  }
  progress("building models in " + build.string() + " (minutes for each new config)");
  std::vector<std::string> targets = {"tessera_plugin_hls"};
  if (!have.rtl.empty()) targets.push_back("tessera_plugin_tsim");
  std::vector<std::string> argv = {"cmake", "--build", build.string(), "--target"};
  argv.insert(argv.end(), targets.begin(), targets.end());
  const fs::path buildLog = root / "build-step.log";
  const int rc = runTool(argv, buildLog.string());
  if (rc != 0)
    throw Error(build.string(), "building the models failed (exit " + std::to_string(rc) + "; " + buildLog.string() +
                                    "):" + lastLines(buildLog, 12));
  // Ninja says so when everything was current.
  result.built = lastLines(buildLog, 3).find("ninja: no work to do.") == std::string::npos;
  result.pluginDir = (build / "lib" / "tessera").string();
  return result;
}

}  // namespace tessera::cli
