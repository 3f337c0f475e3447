// Regressions spread over machines: shards partition the programs, reproducers round-trip, JUnit stays well-formed.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/regress/check.h"
#include "tessera/regress/generator.h"
#include "tessera/regress/junit.h"
#include "tessera/regress/reproducer.h"
#include "tessera/regress/runner.h"

namespace {

using namespace tessera::regress;
using tessera::hw::Config;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A scratch directory removed with its files at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/tessera-reporting-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

TEST(Shards, CountsAddUpForEveryShape) {
  for (uint64_t programs = 0; programs <= 40; ++programs)
    for (uint64_t count = 1; count <= 9; ++count) {
      uint64_t total = 0;
      for (uint64_t i = 0; i < count; ++i) total += shardPrograms(programs, i, count);
      EXPECT_EQ(total, programs) << programs << " programs in " << count << " shards";
    }
}

TEST(Shards, UnionIsTheSingleRunEachProgramOnce) {
  RegressOptions o;
  o.cfg = Config::load("small");
  o.seed = 500;
  o.programs = 17;
  o.targets = parseTargetList("fsim,fsim:kernels=generic");
  o.quiet = true;
  std::ostringstream sink;
  const RegressSummary single = runRegression(o, sink);
  std::vector<uint64_t> expected;
  for (const auto& r : single.results) {
    EXPECT_EQ(r.status, ProgramResult::Status::kOk);
    expected.push_back(r.seed);
  }
  ASSERT_EQ(expected.size(), 17u);
  std::vector<uint64_t> seen;
  o.shardCount = 5;
  for (o.shardIndex = 0; o.shardIndex < 5; ++o.shardIndex) {
    const RegressSummary s = runRegression(o, sink);
    EXPECT_EQ(s.planned, shardPrograms(17, o.shardIndex, 5));
    for (const auto& r : s.results) {
      EXPECT_EQ(r.status, ProgramResult::Status::kOk);
      EXPECT_EQ((r.seed - o.seed) % 5, o.shardIndex) << "seed " << r.seed << " in shard " << o.shardIndex;
      seen.push_back(r.seed);
    }
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, expected);
  o.shardIndex = 5;
  EXPECT_NE(errorOf([&] { runRegression(o, sink); }).find("the index must be below the count"), std::string::npos);
  o.shardIndex = 0;
  o.shardCount = 0;
  EXPECT_NE(errorOf([&] { runRegression(o, sink); }).find("the index must be below the count"), std::string::npos);
}

Mismatch someMismatch() {
  Mismatch m;
  m.summary = "fsim and other leave different DRAM: 1 byte(s) differ";
  m.detail = "  first difference at 0x1000\n";
  return m;
}

void expectSameProgram(const Program& a, const Program& b) {
  EXPECT_EQ(a.cfg.toJson(), b.cfg.toJson());
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.size, b.size);
  ASSERT_EQ(a.regions.size(), b.regions.size());
  for (size_t r = 0; r < a.regions.size(); ++r) {
    EXPECT_EQ(a.regions[r].name, b.regions[r].name);
    EXPECT_EQ(a.regions[r].kind, b.regions[r].kind);
    EXPECT_EQ(a.regions[r].base, b.regions[r].base);
    EXPECT_TRUE(a.regions[r].init == b.regions[r].init) << "region " << a.regions[r].name;
  }
  ASSERT_EQ(a.insns.size(), b.insns.size());
  for (size_t i = 0; i < a.insns.size(); ++i) EXPECT_TRUE(a.insns[i] == b.insns[i]) << "instruction " << i;
}

TEST(Reproducer, RoundTripsShippedAndUnshippedConfigs) {
  for (const char* name : {"default", "batch2"}) {
    const Program p = generate(Config::load(name), 11, Size::kSmall);
    const std::string text = formatReproducer(p, "fsim,fsim:kernels=generic", someMismatch(), 99);
    EXPECT_NE(text.find("\nconfig " + std::string(name) + "\n"), std::string::npos);
    const Reproducer r = parseReproducer(text, "mem.repro");
    expectSameProgram(p, r.program);
    EXPECT_EQ(r.targets, "fsim,fsim:kernels=generic");
    EXPECT_EQ(r.originalInstructions, 99u);
    EXPECT_EQ(r.summary, someMismatch().summary);
  }
  // A config that is no shipped one travels as JSON.
  Config own = Config::load("small");
  own.name = "own";
  own.depQueueDepth = 3;
  const Program p = generate(own, 4, Size::kSmall);
  const std::string text = formatReproducer(p, "fsim,fsim", someMismatch(), 1);
  EXPECT_NE(text.find("\nconfig-json\n"), std::string::npos);
  expectSameProgram(p, parseReproducer(text, "own.repro").program);
}

TEST(Reproducer, MalformedTextNamesTheLine) {
  const Program p = generate(Config::load("small"), 3, Size::kSmall);
  const std::string text = formatReproducer(p, "fsim,fsim", someMismatch(), 1);
  const size_t magic = text.find("tessera-reproducer 1");
  const size_t magicLine = static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(magic), '\n')) + 1;
  auto lineOf = [&](const std::string& needle) {
    const size_t at = text.find(needle);
    return static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1;
  };
  EXPECT_NE(errorOf([&] { parseReproducer("hello\n", "x.repro"); }).find("x.repro:1: not a tessera reproducer"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { parseReproducer(text.substr(0, text.size() - 4), "x.repro"); }).find("without a line 'end'"),
            std::string::npos);
  std::string seedless = text;
  seedless.replace(seedless.find("\nseed "), 6, "\nsead ");
  EXPECT_NE(errorOf([&] { parseReproducer(seedless, "x.repro"); })
                .find("x.repro:" + std::to_string(lineOf("\nseed ") + 1) + ": expected 'seed ...'"),
            std::string::npos);
  // A size the text cannot back is an error naming the line where the bytes run out.
  std::string huge = text;
  const size_t sizeField = huge.rfind(' ', huge.find('\n', huge.find("\nregion ") + 1)) + 1;
  huge.replace(sizeField, huge.find('\n', sizeField) - sizeField, "4294967296");
  EXPECT_NE(errorOf([&] { parseReproducer(huge, "x.repro"); }).find("bytes of region"), std::string::npos)
      << errorOf([&] { parseReproducer(huge, "x.repro"); });
  // One byte of the first region spoiled: the line of that byte.
  std::string badHex = text;
  const size_t firstData = badHex.find('\n', badHex.find("\nregion ") + 1) + 1;
  badHex[firstData] = 'g';
  EXPECT_NE(errorOf([&] { parseReproducer(badHex, "x.repro"); })
                .find("x.repro:" + std::to_string(lineOf("\nregion ") + 2) + ": 'g"),
            std::string::npos);
  // A program that no longer passes the checker (two regions moved onto each other) is refused, not run.
  std::string overlapping = text;
  const size_t r0 = overlapping.find("\nregion "), r1 = overlapping.find("\nregion ", r0 + 1);
  auto baseAt = [&](size_t line) {
    size_t at = line + 1;
    for (int field = 0; field < 3; ++field) at = overlapping.find(' ', at) + 1;
    return at;
  };
  const size_t b0 = baseAt(r0), b1 = baseAt(r1);
  const std::string base1 = overlapping.substr(b1, overlapping.find(' ', b1) - b1);
  overlapping.replace(b0, overlapping.find(' ', b0) - b0, base1);
  EXPECT_NE(errorOf([&] { parseReproducer(overlapping, "x.repro"); }).find("x.repro: the program is not valid"),
            std::string::npos);
  EXPECT_GT(magicLine, 1u);  // the comments come first
}

TEST(Reproducer, FilesAreNeverReplaced) {
  TempDir dir;
  const std::string sub = dir.path + "/a/b";
  EXPECT_EQ(writeReproducerFile(sub, "s", "one"), sub + "/s.repro");
  EXPECT_EQ(writeReproducerFile(sub, "s", "two"), sub + "/s-2.repro");
  std::ifstream first(sub + "/s.repro");
  std::string text;
  std::getline(first, text);
  EXPECT_EQ(text, "one");
  std::ofstream(dir.path + "/file") << "x";
  EXPECT_NE(errorOf([&] { writeReproducerFile(dir.path + "/file", "s", "x"); }).find(dir.path + "/file"),
            std::string::npos);
}

TEST(Reproducer, CutToTouchedPagesStaysValidAndAgrees) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Program p = generate(Config::load("default"), seed, Size::kSmall);
    const Program cut = withTouchedPagesOnly(p);
    EXPECT_NO_THROW(checkProgram(cut)) << "seed " << seed;
    uint64_t before = 0, after = 0;
    for (const auto& r : p.regions) before += r.init.size();
    for (const auto& r : cut.regions) after += r.init.size();
    EXPECT_LT(after, before) << "seed " << seed;
    // Every byte kept ends the same as in the whole program's run.
    const TargetSpec fsim = parseTargetSpec("fsim");
    const Outcome whole = execute(p, fsim), part = execute(cut, fsim);
    ASSERT_FALSE(whole.failed || part.failed);
    for (size_t k = 0; k < cut.regions.size(); ++k) {
      const Region& c = cut.regions[k];
      const auto it = std::find_if(p.regions.begin(), p.regions.end(), [&](const Region& r) { return r.name == c.name; });
      ASSERT_NE(it, p.regions.end());
      const auto& full = whole.regions[static_cast<size_t>(it - p.regions.begin())];
      EXPECT_TRUE(std::equal(part.regions[k].begin(), part.regions[k].end(), full.begin() + static_cast<long>(c.base - it->base)))
          << "seed " << seed << ", region " << c.name;
    }
  }
}

TEST(Junit, AnyMessageGivesWellFormedText) {
  RegressOptions o;
  o.cfg = Config::load("small");
  o.targets = parseTargetList("fsim,fsim");
  RegressSummary s;
  ProgramResult r;
  r.seed = 42;
  r.status = ProgramResult::Status::kMismatch;
  r.message = "a<b & \"c\" \x01\x1f caf\xc3\xa9 \xff\xfe \xed\xa0\x80 ]]>";
  r.detail = "line 1\nline <2>\x07";
  s.results.push_back(r);
  const std::string x = formatJunit(o, s);
  EXPECT_NE(x.find("message=\"a&lt;b &amp; &quot;c&quot; ?? caf\xc3\xa9 ?? ??? ]]&gt;\""), std::string::npos) << x;
  EXPECT_NE(x.find(">line 1\nline &lt;2&gt;?</failure>"), std::string::npos) << x;
  for (unsigned char c : x) EXPECT_TRUE(c >= 0x20 || c == '\n' || c == '\t') << int(c);
  EXPECT_NE(x.find("tests=\"1\" failures=\"1\" errors=\"0\""), std::string::npos);
}

TEST(Junit, PathChecks) {
  TempDir dir;
  EXPECT_NE(errorOf([&] { checkJunitPath(dir.path); }).find("is a directory"), std::string::npos);
  EXPECT_NE(errorOf([&] { checkJunitPath(dir.path + "/no/r.xml"); }).find("does not exist"), std::string::npos);
  std::ofstream(dir.path + "/notes.txt") << "mine";
  EXPECT_NE(errorOf([&] { checkJunitPath(dir.path + "/notes.txt"); }).find("not a JUnit report"), std::string::npos);
  writeJunitFile(dir.path + "/r.xml", "<testsuites><testsuite/></testsuites>\n");
  EXPECT_NO_THROW(writeJunitFile(dir.path + "/r.xml", "<testsuites><testsuite name=\"2\"/></testsuites>\n"));
  std::ifstream in(dir.path + "/r.xml");
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "<testsuites><testsuite name=\"2\"/></testsuites>");
}

}  // namespace
