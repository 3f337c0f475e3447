// Verilator coverage files (tsim-cov's): read and merge them, summarize per module, write lcov.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera::coverage {

// What a coverage point counts (Verilator's page prefixes v_line, v_branch, v_toggle, v_user).
enum class Kind { kLine, kBranch, kToggle, kUser };
const char* kindName(Kind kind);  // "line", "branch", "toggle", "cover"

// One point: where it is, what it counts and how often it was hit.
struct Point {
  Kind kind = Kind::kLine;
  std::string file;     // the RTL source
  uint32_t line = 0;
  std::string module;   // the source module it belongs to (every parameterization together)
  std::string comment;  // the signal bit (toggle), "block"/"if"/"else"/... (line, branch), the cover point's name
  std::string lines;    // the source lines a line point's block spans ("33,37-40"), else empty
  std::string scope;    // the instance hierarchy (TOP.tessera_top.u_compute...)
  uint64_t count = 0;
};

// Points from any number of files, counts added point by point (so shards merge exactly).
class Data {
 public:
  // Adds a Verilator coverage file ("# SystemC::Coverage-3", then `C 'key' count` lines); throws
  // tessera::Error naming the file and line of anything else.
  void addFile(const std::string& path);
  // Every file of `dir` whose name ends in .dat, in name order; throws if there is none.
  void addDirectory(const std::string& dir);
  // The merged points in Verilator's format (verilator_coverage reads it).
  void write(const std::string& path) const;
  // An lcov tracefile: line points as DA lines (each line a block spans gets the block's count,
  // added over the blocks and instances that share it), branch points as BRDA lines; toggles and
  // cover points have no place in lcov's model and stay in the table.
  void writeLcov(const std::string& path) const;
  const std::map<std::string, Point>& points() const { return points_; }
  size_t files() const { return files_; }

 private:
  std::map<std::string, Point> points_;  // by Verilator's key, which names the point uniquely
  size_t files_ = 0;
};

// A point the closure figures leave out, with the reason (tests/coverage/exclusions.txt).
struct Exclusion {
  Kind kind = Kind::kLine;
  std::string module;
  std::string pattern;  // line, branch: LINE or LINE:WHAT (if, else, case, ...); toggle, cover: the signal bit or
                        // point name, `*` at the end matching a prefix, or SIGNAL[HI:LO] for a range of bits;
                        // any may end in @INSTANCE, matching only points whose hierarchy has INSTANCE as
                        // whole components (g_pipe[0], u_load.u_loader)
  std::string instance;  // the part after '@', if any
  std::string signal;    // SIGNAL of a SIGNAL[HI:LO] pattern, with the range's bits below
  int bitLo = -1, bitHi = -1;
  std::string reason;
  int sourceLine = 0;   // where in the exclusions file
};
// Reads an exclusions file: one `KIND MODULE PATTERN -- REASON` a line, # comments; throws naming
// the file and line of a malformed one.
std::vector<Exclusion> readExclusions(const std::string& path);
bool excludes(const Exclusion& e, const Point& p);

// Hit and total points of one kind.
struct Tally {
  uint64_t hit = 0, total = 0;
  double percent() const { return total ? 100.0 * double(hit) / double(total) : 100.0; }
};
struct ModuleRow {
  std::string module;
  Tally line, branch, toggle, user;
};
// One row per module (every instance's points together), sorted by name, and the total last
// (module "total"). Excluded points count in neither hit nor total.
std::vector<ModuleRow> summarize(const Data& data, const std::vector<Exclusion>& exclusions = {});

}  // namespace tessera::coverage
