// Verilator coverage files: parsing, exact merging, per-module summaries, lcov tracefiles.
#include "tessera/coverage/coverage.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tessera/support/error.h"
#include "tessera/support/file_io.h"

namespace tessera::coverage {

namespace {

constexpr char kFieldSep = '\001';  // between a key's fields
constexpr char kValueSep = '\002';  // between a field's name and its value
constexpr const char* kHeader = "# SystemC::Coverage-3";

// A point from Verilator's key: fields `name\002value` separated by \001.
Point parseKey(const std::string& key, const std::string& where) {
  Point p;
  std::string page;
  size_t at = 0;
  while (at < key.size()) {
    if (key[at] == kFieldSep) {
      ++at;
      continue;
    }
    size_t end = key.find(kFieldSep, at);
    if (end == std::string::npos) end = key.size();
    const std::string field = key.substr(at, end - at);
    at = end;
    const size_t sep = field.find(kValueSep);
    if (sep == std::string::npos) throw Error(where, "coverage key field '" + field + "' has no value");
    const std::string name = field.substr(0, sep), value = field.substr(sep + 1);
    if (name == "f") p.file = value;
    else if (name == "l") p.line = static_cast<uint32_t>(std::strtoul(value.c_str(), nullptr, 10));
    else if (name == "page") page = value;
    else if (name == "o") p.comment = value;
    else if (name == "S") p.lines = value;
    else if (name == "h") p.scope = value;
  }
  const size_t slash = page.find('/');
  const std::string type = page.substr(0, slash);
  if (type == "v_line") p.kind = Kind::kLine;
  else if (type == "v_branch") p.kind = Kind::kBranch;
  else if (type == "v_toggle") p.kind = Kind::kToggle;
  else if (type == "v_user") p.kind = Kind::kUser;
  else throw Error(where, "coverage point of unknown page '" + page + "' (expected v_line, v_branch, v_toggle or v_user)");
  if (slash == std::string::npos || slash + 1 == page.size()) throw Error(where, "coverage page '" + page + "' names no module");
  // Verilator names a parameterized module's variants MODULE__PARAMS (tessera_fifo__W2_D10): they
  // are one module of the source.
  p.module = page.substr(slash + 1);
  const size_t variant = p.module.find("__");
  if (variant != std::string::npos && variant > 0) p.module.resize(variant);
  return p;
}

// The line numbers of a line point's span, "33,37-40" -> 33 37 38 39 40 (its own line if empty).
std::vector<uint32_t> spanLines(const Point& p) {
  std::vector<uint32_t> out;
  std::stringstream ss(p.lines);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const size_t dash = part.find('-');
    const uint32_t lo = static_cast<uint32_t>(std::strtoul(part.c_str(), nullptr, 10));
    const uint32_t hi = dash == std::string::npos ? lo : static_cast<uint32_t>(std::strtoul(part.c_str() + dash + 1, nullptr, 10));
    for (uint32_t l = lo; l <= hi && l - lo < 100000; ++l) out.push_back(l);
  }
  if (out.empty()) out.push_back(p.line);
  return out;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

}  // namespace

const char* kindName(Kind kind) {
  switch (kind) {
    case Kind::kLine: return "line";
    case Kind::kBranch: return "branch";
    case Kind::kToggle: return "toggle";
    case Kind::kUser: return "cover";
  }
  return "?";
}

void Data::addFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("coverage file " + path, "cannot be read");
  std::string text;
  int lineNo = 0;
  bool header = false;
  while (std::getline(in, text)) {
    ++lineNo;
    const std::string where = path + ":" + std::to_string(lineNo);
    if (lineNo == 1) {
      if (text != kHeader) throw Error(where, "not a Verilator coverage file (expected '" + std::string(kHeader) + "')");
      header = true;
      continue;
    }
    if (text.empty() || text[0] == '#') continue;
    // C 'key' count
    const size_t open = text.find('\''), close = text.rfind('\'');
    if (text.compare(0, 2, "C ") != 0 || open != 2 || close == open)
      throw Error(where, "expected a point, C 'KEY' COUNT");
    const std::string key = text.substr(open + 1, close - open - 1);
    const std::string countText = trim(text.substr(close + 1));
    if (countText.empty() || countText.find_first_not_of("0123456789") != std::string::npos || countText.size() > 19)
      throw Error(where, "the point's count '" + countText + "' is not a decimal number");
    const uint64_t count = std::stoull(countText);
    auto it = points_.find(key);
    if (it == points_.end()) {
      Point p = parseKey(key, where);
      p.count = count;
      points_.emplace(key, std::move(p));
    } else {
      it->second.count += count;
    }
  }
  if (!header) throw Error("coverage file " + path, "is empty");
  ++files_;
}

void Data::addDirectory(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  if (ec) throw Error("coverage directory " + dir, ec.message());
  std::sort(names.begin(), names.end());
  size_t added = 0;
  for (const std::string& name : names)
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".dat") == 0) {
      addFile(dir + "/" + name);
      ++added;
    }
  if (added == 0) throw Error("coverage directory " + dir, "holds no coverage file (*.dat): run tessera regress --coverage " + dir + " first");
}

void Data::write(const std::string& path) const {
  std::string out = std::string(kHeader) + "\n";
  for (const auto& [key, p] : points_) out += "C '" + key + "' " + std::to_string(p.count) + "\n";
  writeTextFile(path, out, true);
}

void Data::writeLcov(const std::string& path) const {
  // file -> line -> count; file -> (line, scope) -> branch counts in key order
  std::map<std::string, std::map<uint32_t, uint64_t>> lines;
  std::map<std::string, std::map<std::pair<uint32_t, std::string>, std::vector<uint64_t>>> branches;
  for (const auto& [key, p] : points_) {
    if (p.kind == Kind::kLine) {
      for (uint32_t l : spanLines(p)) lines[p.file][l] += p.count;
    } else if (p.kind == Kind::kBranch) {
      branches[p.file][{p.line, p.scope}].push_back(p.count);
    }
  }
  std::set<std::string> files;
  for (const auto& f : lines) files.insert(f.first);
  for (const auto& f : branches) files.insert(f.first);
  std::string out = "TN:tessera\n";
  for (const std::string& file : files) {
    out += "SF:" + file + "\n";
    uint64_t found = 0, hit = 0;
    for (const auto& [line, count] : lines[file]) {
      out += "DA:" + std::to_string(line) + "," + std::to_string(count) + "\n";
      ++found;
      hit += count > 0;
    }
    uint64_t brFound = 0, brHit = 0;
    std::map<uint32_t, int> blockOfLine;
    for (const auto& [where, counts] : branches[file]) {
      const int block = blockOfLine[where.first]++;
      for (size_t b = 0; b < counts.size(); ++b) {
        out += "BRDA:" + std::to_string(where.first) + "," + std::to_string(block) + "," + std::to_string(b) + "," +
               std::to_string(counts[b]) + "\n";
        ++brFound;
        brHit += counts[b] > 0;
      }
    }
    out += "BRF:" + std::to_string(brFound) + "\nBRH:" + std::to_string(brHit) + "\n";
    out += "LF:" + std::to_string(found) + "\nLH:" + std::to_string(hit) + "\nend_of_record\n";
  }
  writeTextFile(path, out, true);
}

std::vector<Exclusion> readExclusions(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("coverage exclusions " + path, "cannot be read");
  std::vector<Exclusion> out;
  std::string text;
  int lineNo = 0;
  while (std::getline(in, text)) {
    ++lineNo;
    const std::string where = path + ":" + std::to_string(lineNo);
    const std::string t = trim(text);
    if (t.empty() || t[0] == '#') continue;
    const size_t dashes = t.find(" -- ");
    if (dashes == std::string::npos || trim(t.substr(dashes + 4)).empty())
      throw Error(where, "expected KIND MODULE PATTERN -- REASON (every exclusion says why)");
    std::stringstream ss(t.substr(0, dashes));
    std::string kind, extra;
    Exclusion e;
    ss >> kind >> e.module >> e.pattern;
    if (e.pattern.empty() || (ss >> extra)) throw Error(where, "expected KIND MODULE PATTERN before the ' -- '");
    if (kind == "line") e.kind = Kind::kLine;
    else if (kind == "branch") e.kind = Kind::kBranch;
    else if (kind == "toggle") e.kind = Kind::kToggle;
    else if (kind == "cover") e.kind = Kind::kUser;
    else throw Error(where, "unknown kind '" + kind + "' (line, branch, toggle or cover)");
    const size_t at = e.pattern.find('@');
    if (at != std::string::npos) {
      e.instance = e.pattern.substr(at + 1);
      e.pattern.resize(at);
      if (e.instance.empty() || e.pattern.empty()) throw Error(where, "expected PATTERN@INSTANCE, both non-empty");
    }
    if (e.kind == Kind::kToggle || e.kind == Kind::kUser) {
      const size_t open = e.pattern.rfind('['), colon = e.pattern.rfind(':');
      if (open != std::string::npos && colon != std::string::npos && colon > open) {
        unsigned hi = 0, lo = 0;
        char close = 0, tail = 0;
        if (std::sscanf(e.pattern.c_str() + open, "[%u:%u%c%c", &hi, &lo, &close, &tail) != 3 || close != ']' ||
            open == 0 || hi > 65535 || lo > 65535)
          throw Error(where, "expected SIGNAL[HI:LO] (a bit range), not '" + e.pattern + "'");
        e.signal = e.pattern.substr(0, open);
        e.bitLo = int(std::min(hi, lo));
        e.bitHi = int(std::max(hi, lo));
      }
    }
    e.reason = trim(t.substr(dashes + 4));
    e.sourceLine = lineNo;
    out.push_back(std::move(e));
  }
  return out;
}

bool excludes(const Exclusion& e, const Point& p) {
  if (e.kind != p.kind || e.module != p.module) return false;
  // INSTANCE names whole components of the hierarchy (u_load is not u_loader).
  if (!e.instance.empty() && ("." + p.scope + ".").find("." + e.instance + ".") == std::string::npos) return false;
  if (e.kind == Kind::kLine || e.kind == Kind::kBranch) {
    // LINE, or LINE:WHAT for one of the points on a line (a branch's if or else, a case arm).
    const size_t colon = e.pattern.find(':');
    if (colon == std::string::npos) return std::to_string(p.line) == e.pattern;
    return std::to_string(p.line) == e.pattern.substr(0, colon) && p.comment == e.pattern.substr(colon + 1);
  }
  if (e.bitLo >= 0) {
    // SIGNAL[k] with LO <= k <= HI.
    const std::string& c = p.comment;
    if (c.size() < e.signal.size() + 3 || c.compare(0, e.signal.size(), e.signal) != 0 || c[e.signal.size()] != '[' ||
        c.back() != ']')
      return false;
    const std::string digits = c.substr(e.signal.size() + 1, c.size() - e.signal.size() - 2);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 5) return false;
    const int bit = std::stoi(digits);
    return bit >= e.bitLo && bit <= e.bitHi;
  }
  if (!e.pattern.empty() && e.pattern.back() == '*')
    return p.comment.compare(0, e.pattern.size() - 1, e.pattern, 0, e.pattern.size() - 1) == 0;
  return p.comment == e.pattern;
}

std::vector<ModuleRow> summarize(const Data& data, const std::vector<Exclusion>& exclusions) {
  std::map<std::string, ModuleRow> rows;
  ModuleRow total;
  total.module = "total";
  for (const auto& [key, p] : data.points()) {
    if (std::any_of(exclusions.begin(), exclusions.end(), [&](const Exclusion& e) { return excludes(e, p); })) continue;
    ModuleRow& row = rows[p.module];
    row.module = p.module;
    Tally* t[2] = {nullptr, nullptr};
    switch (p.kind) {
      case Kind::kLine: t[0] = &row.line; t[1] = &total.line; break;
      case Kind::kBranch: t[0] = &row.branch; t[1] = &total.branch; break;
      case Kind::kToggle: t[0] = &row.toggle; t[1] = &total.toggle; break;
      case Kind::kUser: t[0] = &row.user; t[1] = &total.user; break;
    }
    for (Tally* x : t) {
      x->total += 1;
      x->hit += p.count > 0;
    }
  }
  std::vector<ModuleRow> out;
  for (auto& [name, row] : rows) out.push_back(std::move(row));
  out.push_back(std::move(total));
  return out;
}

}  // namespace tessera::coverage
