// The coverage models' per-process totals and their files, written at exit.
#include "coverage_totals.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "tessera/support/error.h"

namespace tessera::tsim {

namespace {

// A verilated model's counters vanish with it, and a regression makes a model per program: each
// one that ran adds its counters here, so the process writes one file per design, and its counts
// do not depend on how the programs were split between processes (each model starts from reset
// with zeroed memories, as tsim's do). Never destroyed: the exit handler (which glibc also runs
// at dlclose, should the plugin go first) and late-destroyed models may still use it.
class Totals {
 public:
  static Totals& get() {
    static Totals* const totals = [] {
      auto* t = new Totals;
      std::atexit([] { get().writeAll(); });
      return t;
    }();
    return *totals;
  }

  void open(const std::string& design, const std::string& dir, CoverageWriter writer) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = designs_.find(design);
    if (it != designs_.end()) {
      if (it->second.dir != dir)
        throw Error("target option coverage=" + dir, "this process already writes the coverage of " + design + " to " +
                                                         it->second.dir + " (one directory a process)");
      return;
    }
    makeDirectory(dir);
    designs_[design] = Design{dir, writer, {}};
  }

  void add(const std::string& design, const std::vector<uint64_t>& counts) {
    const std::lock_guard<std::mutex> lock(mutex_);
    Design& c = designs_.at(design);
    if (c.sums.size() < counts.size()) c.sums.resize(counts.size());
    for (size_t i = 0; i < counts.size(); ++i) c.sums[i] += counts[i];
  }

 private:
  struct Design {
    std::string dir;
    CoverageWriter writer = nullptr;
    std::vector<uint64_t> sums;
  };

  void writeAll() {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [design, c] : designs_) {
      const std::string path = c.dir + "/" + design + "_" + host() + "_" + std::to_string(::getpid()) + ".dat";
      try {
        c.writer(c.sums, path);
      } catch (const std::exception& e) {
        // Nobody can catch it at exit: say so rather than lose the counts silently.
        std::fprintf(stderr, "%s: could not write %s: %s\n", design.c_str(), path.c_str(), e.what());
      }
    }
  }

  static void makeDirectory(const std::string& dir) {
    for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
      const std::string prefix = dir.substr(0, slash);
      if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
        throw Error("coverage directory " + dir, "cannot create " + prefix + ": " + std::strerror(errno));
      if (slash == std::string::npos) break;
    }
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || ::access(dir.c_str(), W_OK) != 0)
      throw Error("coverage directory " + dir, "is not a writable directory");
  }

  static std::string host() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0 || !name[0]) return "host";
    return name;
  }

  std::mutex mutex_;
  std::map<std::string, Design> designs_;
};

}  // namespace

void openCoverage(const std::string& design, const std::string& dir, CoverageWriter writer) {
  Totals::get().open(design, dir, writer);
}

void addCoverage(const std::string& design, const std::vector<uint64_t>& counts) { Totals::get().add(design, counts); }

}  // namespace tessera::tsim
