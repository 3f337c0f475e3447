// JUnit XML for regression runs: escaping that keeps any message well-formed, and whole-file writes.
#include "tessera/regress/junit.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include <sys/stat.h>
#include <unistd.h>

#include "tessera/support/error.h"

namespace tessera::regress {

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 if there is none.
size_t utf8Length(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (c >= 0xf5) n = 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  if (n == 3 && c == 0xe0 && b(i + 1) < 0xa0) return 0;   // overlong
  if (n == 3 && c == 0xed && b(i + 1) >= 0xa0) return 0;  // surrogate
  if (n == 4 && c == 0xf0 && b(i + 1) < 0x90) return 0;   // overlong
  if (n == 4 && c == 0xf4 && b(i + 1) >= 0x90) return 0;  // past U+10FFFF
  return n;
}

// Text for an attribute or element: markup escaped, characters XML 1.0 forbids (controls other
// than tab and newline, broken UTF-8) as '?'. In attributes newlines become spaces, since parsers
// would normalise them anyway.
std::string escape(const std::string& s, bool attribute) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = utf8Length(s, i);
      if (n) out.append(s, i, n);
      else out += '?';
      i += n ? n : 1;
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += attribute ? "&quot;" : "\""; break;
      case '\n': out += attribute ? " " : "\n"; break;
      case '\t': out += c; break;
      default: out += c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", s);
  return buf;
}

}  // namespace

std::string formatJunit(const RegressOptions& o, const RegressSummary& sum) {
  std::string labels;
  for (const auto& t : o.targets) labels += (labels.empty() ? "" : ",") + t.label;
  uint64_t failures = 0, errors = 0, skipped = 0;
  for (const auto& r : sum.results) {
    failures += r.status == ProgramResult::Status::kMismatch;
    errors += r.status == ProgramResult::Status::kGeneratorError;
    skipped += r.status == ProgramResult::Status::kNotRun;
  }
  const std::string classname = "regress." + o.cfg.name + "." + sizeName(o.size);
  std::string suite = "tessera regress " + o.cfg.name + " " + sizeName(o.size) + " " + labels;
  if (o.shardCount > 1) suite += " shard " + std::to_string(o.shardIndex) + "/" + std::to_string(o.shardCount);
  char stamp[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  if (gmtime_r(&now, &utc)) std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  char host[256] = "";
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = 0;

  const std::string counts = " tests=\"" + std::to_string(sum.results.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\"";
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites name=\"tessera regress\"" + counts + " time=\"" + seconds(sum.seconds) + "\">\n";
  x += "  <testsuite name=\"" + escape(suite, true) + "\"" + counts + " skipped=\"" + std::to_string(skipped) +
       "\" time=\"" + seconds(sum.seconds) + "\" timestamp=\"" + stamp + "\" hostname=\"" + escape(host, true) + "\">\n";
  x += "    <properties>\n";
  auto property = [&](const std::string& name, const std::string& value) {
    x += "      <property name=\"" + name + "\" value=\"" + escape(value, true) + "\"/>\n";
  };
  property("config", o.cfg.name);
  property("size", sizeName(o.size));
  property("targets", labels);
  property("first-seed", std::to_string(o.seed));
  property("programs", std::to_string(o.programs));
  property("shard", std::to_string(o.shardIndex) + "/" + std::to_string(o.shardCount));
  x += "    </properties>\n";
  for (const auto& r : sum.results) {
    x += "    <testcase classname=\"" + escape(classname, true) + "\" name=\"seed " + std::to_string(r.seed) + " on " +
         escape(labels, true) + "\" time=\"" + seconds(r.seconds) + "\"";
    switch (r.status) {
      case ProgramResult::Status::kOk: x += "/>\n"; continue;
      case ProgramResult::Status::kMismatch:
        x += ">\n      <failure type=\"mismatch\" message=\"" + escape(r.message, true) + "\">" +
             escape(r.detail, false) + "</failure>\n";
        break;
      case ProgramResult::Status::kGeneratorError:
        x += ">\n      <error type=\"generator\" message=\"" + escape(r.message, true) + "\">" +
             escape(r.detail, false) + "</error>\n";
        break;
      case ProgramResult::Status::kNotRun:
        x += sum.stopped ? ">\n      <skipped message=\"not run: the run was interrupted (a signal)\"/>\n"
                         : ">\n      <skipped message=\"not run: the run stopped at an earlier failure (--keep-going "
                           "runs every program)\"/>\n";
        break;
    }
    x += "    </testcase>\n";
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

void checkJunitPath(const std::string& path) {
  if (path.empty()) throw Error("--junit", "empty file name");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(path, "is a directory; --junit wants a file name (e.g. " + path + "/regress.xml)");
    if (!S_ISREG(st.st_mode)) throw Error(path, "exists and is not a regular file; not replacing it");
    // An earlier report is replaced as CI reruns expect; anything else is someone's file.
    std::ifstream f(path, std::ios::binary);
    std::string head(4096, '\0');
    f.read(&head[0], static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(f.gcount()));
    if (st.st_size > 0 && head.find("<testsuite") == std::string::npos)
      throw Error(path, "exists and is not a JUnit report; not replacing it (remove it or choose another name)");
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(path, "directory " + dir + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0) throw Error(path, "directory " + dir + " is not writable");
}

void writeJunitFile(const std::string& path, const std::string& xml) {
  checkJunitPath(path);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(path, std::string("cannot write the JUnit report: ") + std::strerror(errno));
  const bool written = std::fwrite(xml.data(), 1, xml.size(), f) == xml.size();
  const int writeErrno = errno;
  if (std::fclose(f) != 0 || !written) {
    const int e = written ? errno : writeErrno;
    std::remove(tmp.c_str());
    throw Error(path, std::string("cannot write the JUnit report: ") + std::strerror(e));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw Error(path, std::string("cannot write the JUnit report: ") + std::strerror(e));
  }
}


namespace {

// The value of attribute `name` in the tag starting at `at`, or empty.
std::string attribute(const std::string& text, size_t at, const std::string& name) {
  const size_t end = text.find('>', at);
  const std::string key = " " + name + "=\"";
  const size_t k = text.find(key, at);
  if (k == std::string::npos || k > end) return "";
  const size_t v = k + key.size();
  return text.substr(v, text.find('"', v) - v);
}

uint64_t number(const std::string& value, const std::string& path, const char* what) {
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos || value.size() > 18)
    throw Error(path, std::string("the testsuite's ") + what + " '" + value + "' is not a count");
  return std::stoull(value);
}

// A <property name="NAME" value="..."/> of the suite.
std::string property(const std::string& text, const std::string& name) {
  const size_t at = text.find("<property name=\"" + name + "\"");
  return at == std::string::npos ? "" : attribute(text, at, "value");
}

}  // namespace

MergedJunit mergeJunit(const std::vector<std::string>& paths) {
  if (paths.empty()) throw Error("--merge-junit", "give the shard reports to merge");
  MergedJunit m;
  std::string run;  // config, size, targets, first seed, programs: the same for every shard
  uint64_t shardCount = 0;
  std::vector<std::string> shardFile;
  double time = 0;
  std::string suites;
  for (const std::string& path : paths) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error(path, "cannot read the JUnit report");
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const size_t top = text.find("<testsuites name=\"tessera regress\"");
    const size_t open = text.find("<testsuite ");
    const size_t close = text.find("</testsuite>");
    if (top == std::string::npos || open == std::string::npos || close == std::string::npos ||
        text.find("<testsuite ", open + 1) != std::string::npos)
      throw Error(path, "is not a report of one tessera regress run or shard (--junit)");
    const std::string shard = property(text, "shard");
    const size_t slash = shard.find('/');
    if (slash == std::string::npos) throw Error(path, "its testsuite has no shard property");
    const uint64_t index = number(shard.substr(0, slash), path, "shard index");
    const uint64_t count = number(shard.substr(slash + 1), path, "shard count");
    const std::string thisRun = "config " + property(text, "config") + ", size " + property(text, "size") +
                                ", targets " + property(text, "targets") + ", first seed " +
                                property(text, "first-seed") + ", " + property(text, "programs") + " programs";
    if (m.shards == 0) {
      run = thisRun;
      shardCount = count;
      shardFile.assign(count, "");
      m.programs = number(property(text, "programs"), path, "program count");
    } else if (thisRun != run || count != shardCount) {
      throw Error(path, "is a shard of another run (" + thisRun + ", " + std::to_string(count) + " shards) than " +
                            paths.front() + " (" + run + ", " + std::to_string(shardCount) + " shards)");
    }
    if (index >= count) throw Error(path, "shard " + shard + " is out of range");
    if (!shardFile[index].empty())
      throw Error(path, "shard " + shard + " again (" + shardFile[index] + " has it too)");
    shardFile[index] = path;
    m.tests += number(attribute(text, open, "tests"), path, "tests");
    m.failures += number(attribute(text, open, "failures"), path, "failures");
    m.errors += number(attribute(text, open, "errors"), path, "errors");
    m.skipped += number(attribute(text, open, "skipped"), path, "skipped");
    time += std::strtod(attribute(text, open, "time").c_str(), nullptr);
    suites += "  " + text.substr(open, close + std::string("</testsuite>").size() - open) + "\n";
    ++m.shards;
  }
  for (uint64_t i = 0; i < shardCount; ++i)
    if (shardFile[i].empty())
      throw Error("--merge-junit", "shard " + std::to_string(i) + "/" + std::to_string(shardCount) + " of " + run +
                                       " is missing");
  if (m.tests != m.programs)
    throw Error("--merge-junit", "the shards hold " + std::to_string(m.tests) + " test cases, but the run has " +
                                     std::to_string(m.programs) + " programs");
  m.xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"tessera regress\" tests=\"" +
          std::to_string(m.tests) + "\" failures=\"" + std::to_string(m.failures) + "\" errors=\"" +
          std::to_string(m.errors) + "\" time=\"" + seconds(time) + "\">\n" + suites + "</testsuites>\n";
  return m;
}

}  // namespace tessera::regress
