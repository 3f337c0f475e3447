// Reproducer files: formatting, parsing with line-exact errors, writing without replacing, trimming and replay.
#include "tessera/regress/reproducer.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <sys/types.h>
#include <fcntl.h>
#include <unistd.h>

#include "tessera/support/error.h"
#include "tessera/regress/check.h"
#include "tessera/support/file_io.h"

namespace tessera::regress {

namespace {

constexpr const char* kMagic = "tessera-reproducer 1";
constexpr size_t kBytesPerLine = 64;

// Comment lines for arbitrary text: each line prefixed, so no text can end the comment early.
std::string commented(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += "# " + line + "\n";
  return out;
}

bool sameAsShipped(const hw::Config& cfg) {
  const std::string shipped = hw::shippedConfigJson(cfg.name);
  if (shipped.empty()) return false;
  try {
    return hw::Config::fromJson(shipped, cfg.name).toJson() == cfg.toJson();
  } catch (const Error&) {
    return false;
  }
}

RegionKind parseKind(const std::string& text, const std::string& where) {
  for (RegionKind k : {RegionKind::kInsn, RegionKind::kUop, RegionKind::kInp, RegionKind::kWgt, RegionKind::kAcc,
                       RegionKind::kAcc8, RegionKind::kOut})
    if (text == regionKindName(k)) return k;
  throw Error(where, "unknown region kind '" + text + "' (expected INSN, UOP, INP, WGT, ACC, ACC_8BIT or OUT)");
}

uint64_t parseUnsigned(const std::string& text, const std::string& where, const char* what) {
  if (text.empty()) throw Error(where, std::string("missing ") + what);
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (errno || *end || text[0] == '-' || text[0] == '+')
    throw Error(where, std::string(what) + " '" + text + "' is not an unsigned number");
  return v;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string formatReproducer(const Program& p, const std::string& targets, const Mismatch& m,
                             uint64_t originalInstructions) {
  std::string s = "# tessera regress reproducer: replay with `tessera sim --repro THIS_FILE`\n";
  s += commented(m.summary + "\n" + m.detail);
  s += commented(listing(p));
  s += std::string(kMagic) + "\n";
  if (sameAsShipped(p.cfg)) {
    s += "config " + p.cfg.name + "\n";
  } else {
    s += "config-json\n" + p.cfg.toJson() + "\nend-config\n";
  }
  s += "targets " + targets + "\n";
  s += "seed " + std::to_string(p.seed) + "\n";
  s += "size " + (p.size.empty() ? std::string("unknown") : p.size) + "\n";
  s += "original-instructions " + std::to_string(originalInstructions) + "\n";
  std::string oneLine = m.summary;
  for (char& c : oneLine)
    if (c == '\n' || c == '\r') c = ' ';
  s += "summary " + oneLine + "\n";
  static const char digits[] = "0123456789abcdef";
  for (const Region& r : p.regions) {
    char head[160];
    std::snprintf(head, sizeof head, " %s 0x%llx %zu\n", regionKindName(r.kind), static_cast<unsigned long long>(r.base),
                  r.init.size());
    s += "region " + r.name + head;
    for (size_t i = 0; i < r.init.size(); i += kBytesPerLine) {
      const size_t n = std::min(kBytesPerLine, r.init.size() - i);
      for (size_t k = 0; k < n; ++k) {
        s += digits[r.init[i + k] >> 4];
        s += digits[r.init[i + k] & 15];
      }
      s += '\n';
    }
  }
  s += "end\n";
  return s;
}

Reproducer parseReproducer(const std::string& text, const std::string& origin) {
  Reproducer rep;
  std::istringstream in(text);
  std::string line;
  size_t lineNo = 0;
  auto where = [&] { return origin + ":" + std::to_string(lineNo); };
  auto next = [&](bool skipComments) {
    while (std::getline(in, line)) {
      ++lineNo;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (skipComments && (line.empty() || line[0] == '#')) continue;
      return true;
    }
    return false;
  };
  auto keyValue = [&](const char* key) {
    const std::string k = std::string(key) + " ";
    if (line.compare(0, k.size(), k) != 0) throw Error(where(), std::string("expected '") + key + " ...'");
    return line.substr(k.size());
  };

  if (!next(true) || line != kMagic)
    throw Error(where(), std::string("not a tessera reproducer (expected a line '") + kMagic + "')");
  if (!next(true)) throw Error(where(), "ends before the config");
  if (line == "config-json") {
    std::string json;
    const size_t first = lineNo + 1;
    for (;;) {
      if (!next(false)) throw Error(origin + ":" + std::to_string(first), "config-json without a line 'end-config'");
      if (line == "end-config") break;
      json += line + "\n";
    }
    rep.program.cfg = hw::Config::fromJson(json, origin + ":" + std::to_string(first));
  } else {
    const std::string name = keyValue("config");
    if (hw::shippedConfigJson(name).empty())
      throw Error(where(), "config '" + name + "' is not a shipped config (a reproducer of another config holds its JSON)");
    rep.program.cfg = hw::Config::load(name);
  }
  if (!next(true)) throw Error(where(), "ends before the targets");
  rep.targets = keyValue("targets");
  if (!next(true)) throw Error(where(), "ends before the seed");
  rep.program.seed = parseUnsigned(keyValue("seed"), where(), "seed");
  if (!next(true)) throw Error(where(), "ends before the size");
  rep.program.size = keyValue("size");
  if (!next(true)) throw Error(where(), "ends before original-instructions");
  rep.originalInstructions = parseUnsigned(keyValue("original-instructions"), where(), "original-instructions");
  if (!next(true)) throw Error(where(), "ends before the summary");
  rep.summary = keyValue("summary");

  for (;;) {
    if (!next(true)) throw Error(where(), "ends without a line 'end' (truncated file?)");
    if (line == "end") break;
    std::istringstream fields(keyValue("region"));
    std::string name, kind, base, size, extra;
    fields >> name >> kind >> base >> size;
    if (size.empty() || (fields >> extra)) throw Error(where(), "expected 'region NAME KIND BASE SIZE'");
    Region r;
    r.name = name;
    r.kind = parseKind(kind, where());
    r.base = parseUnsigned(base, where(), "region base");
    const uint64_t bytes = parseUnsigned(size, where(), "region size");
    if (bytes == 0 || bytes > (uint64_t(1) << 32)) throw Error(where(), "region size " + size + " is not in [1, 4 GiB]");
    // The size is only a claim until the bytes are there: reserve no more than the text can hold.
    r.init.reserve(std::min<uint64_t>(bytes, text.size() / 2));
    while (r.init.size() < bytes) {
      if (!next(false)) throw Error(where(), "region " + name + " ends after " + std::to_string(r.init.size()) +
                                                 " of its " + size + " bytes");
      const size_t want = std::min<uint64_t>(kBytesPerLine, bytes - r.init.size());
      if (line.size() != 2 * want)
        throw Error(where(), "expected " + std::to_string(want) + " bytes of region " + name + " in hex (" +
                                 std::to_string(2 * want) + " digits), got " + std::to_string(line.size()) + " characters");
      for (size_t k = 0; k < want; ++k) {
        const int hi = hexDigit(line[2 * k]), lo = hexDigit(line[2 * k + 1]);
        if (hi < 0 || lo < 0) throw Error(where(), "'" + line.substr(2 * k, 2) + "' is not a hex byte");
        r.init.push_back(static_cast<uint8_t>(hi << 4 | lo));
      }
    }
    for (const Region& q : rep.program.regions)
      if (q.name == r.name) throw Error(where(), "region " + r.name + " appears twice");
    rep.program.regions.push_back(std::move(r));
  }
  if (next(true)) throw Error(where(), "text after 'end'");

  Program& p = rep.program;
  if (p.regions.empty() || p.insnRegion().kind != RegionKind::kInsn)
    throw Error(origin, "the last region must be the instruction region (kind INSN)");
  const Region& ir = p.insnRegion();
  if (ir.init.size() % 16) throw Error(origin, "instruction region " + ir.name + " is not a whole number of 16-byte instructions");
  hw::Isa isa(p.cfg);
  for (size_t i = 0; i < ir.init.size(); i += 16) p.insns.push_back(isa.decode(hw::Isa::rawFromBytes(&ir.init[i])));
  p.insnOp.assign(p.insns.size(), -1);
  try {
    checkProgram(p);
  } catch (const Error& e) {
    throw Error(origin, std::string("the program is not valid, so a replay would prove nothing: ") + e.what());
  }
  return rep;
}

Reproducer readReproducer(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw Error(path, std::string("cannot open reproducer: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw Error(path, "is a directory, not a reproducer file");
  return parseReproducer(readTextFile(path), path);
}

std::string writeReproducerFile(const std::string& dir, const std::string& stem, const std::string& text) {
  // mkdir -p: each prefix in turn, an existing directory being fine.
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string prefix = dir.substr(0, slash);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      throw Error(prefix, std::string("cannot create the reproducer directory: ") + std::strerror(errno));
    if (slash == std::string::npos) break;
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(dir, "the reproducer directory is not a directory");
  for (int n = 1; n < 10000; ++n) {
    const std::string path = dir + "/" + stem + (n == 1 ? "" : "-" + std::to_string(n)) + ".repro";
    // O_EXCL: a file already there, a user's or an earlier run's, is never replaced.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      throw Error(path, std::string("cannot create reproducer: ") + std::strerror(errno));
    }
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        const std::string why = std::strerror(errno);
        ::close(fd);
        ::unlink(path.c_str());
        throw Error(path, "cannot write reproducer: " + why);
      }
      done += static_cast<size_t>(w);
    }
    if (::close(fd) != 0) throw Error(path, std::string("cannot write reproducer: ") + std::strerror(errno));
    return path;
  }
  throw Error(dir + "/" + stem + ".repro", "9999 reproducers of that name already exist");
}

Program withTouchedPagesOnly(const Program& p) {
  const std::vector<Accesses> acc = analyze(p, p.insns);
  const uint64_t page = hw::Dram::kPageBytes;
  Program out = p;
  out.regions.clear();
  for (size_t r = 0; r + 1 < p.regions.size(); ++r) {
    const Region& reg = p.regions[r];
    uint64_t lo = UINT64_MAX, hi = 0;
    auto cover = [&](const ByteRange& b) {
      if (b.lo >= reg.end() || b.hi <= reg.base) return;
      lo = std::min(lo, std::max(b.lo, reg.base));
      hi = std::max(hi, std::min(b.hi, reg.end()));
    };
    for (const Accesses& a : acc) {
      for (const ByteRange& b : a.dramRead) cover(b);
      for (const ByteRange& b : a.dramWrite) cover(b);
    }
    if (lo >= hi) continue;
    // Whole pages, so the region stays page aligned as checkProgram wants.
    const uint64_t base = lo / page * page, end = std::min(reg.end(), (hi + page - 1) / page * page);
    Region kept = reg;
    kept.base = base;
    kept.init.assign(reg.init.begin() + static_cast<long>(base - reg.base), reg.init.begin() + static_cast<long>(end - reg.base));
    out.regions.push_back(std::move(kept));
  }
  out.regions.push_back(p.insnRegion());
  return out;
}

bool replayReproducer(const Reproducer& r, const std::string& targets, std::ostream& out) {
  const std::string list = targets.empty() ? r.targets : targets;
  const std::vector<TargetSpec> specs = parseTargetList(list);
  const Program& p = r.program;
  out << "reproducer of seed " << p.seed << ", config " << p.cfg.name << ", size " << p.size << ": "
      << p.insns.size() << " instructions (" << workInstructions(p) << " doing work; " << r.originalInstructions
      << " before shrinking), " << p.regions.size() << " regions\n"
      << "recorded: " << r.summary << "\n";
  const Trial t = runTrial(p, specs);
  for (size_t i = 0; i < specs.size(); ++i) {
    const Outcome& o = t.outcomes[i];
    char line[256];
    std::snprintf(line, sizeof line, "  %s: %s in %.2f ms", specs[i].label.c_str(), o.failed ? "FAILED" : "completed",
                  o.seconds * 1e3);
    out << line;
    if (o.counters.cycles) out << ", " << o.counters.cycles << " cycles";
    if (o.failed) out << ": " << o.error;
    out << "\n";
  }
  if (!t.mismatch) {
    out << "replay: the targets agree (" << list << "): the recorded mismatch does not reproduce\n";
    return false;
  }
  out << "replay: MISMATCH: " << t.mismatch->summary << "\n" << t.mismatch->detail;
  return true;
}

}  // namespace tessera::regress
