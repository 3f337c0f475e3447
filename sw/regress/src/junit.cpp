// JUnit XML for regression runs: escaping that keeps any message well-formed, and whole-file writes.
#include "tessera/regress/junit.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>

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

}  // namespace tessera::regress
