// Coverage files: parsing, exact merging, per-module summaries, exclusions, lcov output and the errors of each.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tessera/coverage/coverage.h"
#include "tessera/support/error.h"

namespace fs = std::filesystem;
namespace cov = tessera::coverage;

namespace {

// A Verilator key: \001NAME\002VALUE fields.
std::string key(const std::string& file, int line, const std::string& page, const std::string& comment,
                const std::string& scope, const std::string& span = "") {
  std::string k = "\001f\002" + file + "\001l\002" + std::to_string(line) + "\001n\0025\001page\002" + page +
                  "\001o\002" + comment;
  if (!span.empty()) k += "\001S\002" + span;
  return k + "\001h\002" + scope;
}

class CoverageFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_cov_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  // Two shards' files of the same design: a FIFO's line and toggle points in two variants, and a
  // cover point.
  void writeShards() {
    const std::string head = "# SystemC::Coverage-3\n";
    write("a.dat", head + "C '" + key("/rtl/fifo.sv", 10, "v_line/tessera_fifo__W2_D10", "block", "TOP.q0", "10,12-13") + "' 3\n" +
                       "C '" + key("/rtl/fifo.sv", 20, "v_toggle/tessera_fifo__W2_D10", "count_q[0]", "TOP.q0") + "' 0\n" +
                       "C '" + key("/rtl/fifo.sv", 20, "v_toggle/tessera_fifo__W8", "count_q[0]", "TOP.q1") + "' 0\n" +
                       "C '" + key("/rtl/top.sv", 5, "v_user/tessera_top", "FullBackPressure", "TOP.top") + "' 0\n");
    write("b.dat", head + "C '" + key("/rtl/fifo.sv", 10, "v_line/tessera_fifo__W2_D10", "block", "TOP.q0", "10,12-13") + "' 4\n" +
                       "C '" + key("/rtl/fifo.sv", 20, "v_toggle/tessera_fifo__W2_D10", "count_q[0]", "TOP.q0") + "' 2\n" +
                       "C '" + key("/rtl/fifo.sv", 20, "v_toggle/tessera_fifo__W8", "count_q[0]", "TOP.q1") + "' 0\n" +
                       "C '" + key("/rtl/top.sv", 5, "v_user/tessera_top", "FullBackPressure", "TOP.top") + "' 0\n");
    write("notes.txt", "not a coverage file, and not read: only *.dat is");
  }
  fs::path dir_;
};

TEST_F(CoverageFiles, MergesShardsPointByPoint) {
  writeShards();
  cov::Data d;
  d.addDirectory(dir_.string());
  EXPECT_EQ(d.files(), 2u);
  ASSERT_EQ(d.points().size(), 4u);
  uint64_t total = 0;
  for (const auto& [k, p] : d.points()) total += p.count;
  EXPECT_EQ(total, 3u + 4u + 2u);
  // Written and read back: the same points and counts.
  const std::string merged = (dir_ / "merged.out").string();
  d.write(merged);
  cov::Data again;
  again.addFile(merged);
  ASSERT_EQ(again.points().size(), d.points().size());
  for (const auto& [k, p] : d.points()) EXPECT_EQ(again.points().at(k).count, p.count) << p.comment;
}

TEST_F(CoverageFiles, SummarizesPerSourceModuleWithTotals) {
  writeShards();
  cov::Data d;
  d.addDirectory(dir_.string());
  const auto rows = cov::summarize(d);
  ASSERT_EQ(rows.size(), 3u);  // tessera_fifo (both variants), tessera_top, total
  EXPECT_EQ(rows[0].module, "tessera_fifo");
  EXPECT_EQ(rows[0].line.hit, 1u);
  EXPECT_EQ(rows[0].line.total, 1u);
  EXPECT_EQ(rows[0].toggle.hit, 1u);
  EXPECT_EQ(rows[0].toggle.total, 2u);
  EXPECT_EQ(rows[1].module, "tessera_top");
  EXPECT_EQ(rows[1].user.hit, 0u);
  EXPECT_EQ(rows[1].user.total, 1u);
  EXPECT_EQ(rows[2].module, "total");
  EXPECT_EQ(rows[2].toggle.total, 2u);
  EXPECT_DOUBLE_EQ(rows[2].toggle.percent(), 50.0);
}

TEST_F(CoverageFiles, ExclusionsLeaveOutTheirPointsAndNeedAReason) {
  writeShards();
  cov::Data d;
  d.addDirectory(dir_.string());
  const std::string good = write("excl.txt",
                                 "# comment\n"
                                 "toggle tessera_fifo count_q* -- the count's low bit of the W8 variant never moves here\n"
                                 "cover tessera_top FullBackPressure -- not reachable in this test\n");
  const auto ex = cov::readExclusions(good);
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0].sourceLine, 2);
  const auto rows = cov::summarize(d, ex);
  EXPECT_EQ(rows.back().toggle.total, 0u);
  EXPECT_EQ(rows.back().user.total, 0u);
  EXPECT_EQ(rows.back().line.total, 1u);

  // A line in one instance only.
  EXPECT_EQ(cov::summarize(d, cov::readExclusions(write("l0.txt", "line tessera_fifo 10@q0 -- why\n"))).back().line.total, 0u);
  EXPECT_EQ(cov::summarize(d, cov::readExclusions(write("l1.txt", "line tessera_fifo 10@q1 -- why\n"))).back().line.total, 1u);

  const std::string noReason = write("bad1.txt", "toggle tessera_fifo count_q[0]\n");
  try {
    cov::readExclusions(noReason);
    FAIL() << "an exclusion without a reason was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad1.txt:1"), std::string::npos) << e.what();
  }
  const std::string badKind = write("bad2.txt", "\n\nstatement tessera_fifo 3 -- why\n");
  try {
    cov::readExclusions(badKind);
    FAIL() << "an unknown kind was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad2.txt:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("statement"), std::string::npos) << e.what();
  }
}

TEST_F(CoverageFiles, ExclusionsNameBitRangesAndInstances) {
  const std::string head = "# SystemC::Coverage-3\n";
  std::string text = head;
  for (int bit = 0; bit < 4; ++bit)
    for (const char* scope : {"TOP.top.g_pipe[0].u_pipe", "TOP.top.g_pipe[1].u_pipe"})
      text += "C '" + key("/rtl/pipe.sv", 7, "v_toggle/tessera_pipe", "offset_q[" + std::to_string(bit) + "]", scope) +
              "' 0\n";
  text += "C '" + key("/rtl/pipe.sv", 8, "v_toggle/tessera_pipe", "offset_qq[2]", "TOP.top.g_pipe[0].u_pipe") + "' 0\n";
  write("p.dat", text);
  cov::Data d;
  d.addDirectory(dir_.string());
  const auto ex = cov::readExclusions(write("excl.txt", "toggle tessera_pipe offset_q[3:2]@g_pipe[0] -- bounded\n"));
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_EQ(ex[0].signal, "offset_q");
  EXPECT_EQ(ex[0].bitLo, 2);
  EXPECT_EQ(ex[0].bitHi, 3);
  EXPECT_EQ(ex[0].instance, "g_pipe[0]");
  size_t excluded = 0;
  for (const auto& [k, p] : d.points()) excluded += cov::excludes(ex[0], p);
  EXPECT_EQ(excluded, 2u);  // bits 2 and 3 of g_pipe[0]'s offset_q, not g_pipe[1]'s nor offset_qq
  EXPECT_EQ(cov::summarize(d, ex).back().toggle.total, 7u);
  // An instance names whole components: g_pipe is not g_pipe[0], nor a prefix of it.
  for (const char* partial : {"g_pipe", "pipe[0]"}) {
    const auto none = cov::readExclusions(write("excl3.txt", std::string("toggle tessera_pipe offset_q[3:2]@") + partial +
                                                                 " -- bounded\n"));
    EXPECT_EQ(cov::summarize(d, none).back().toggle.total, 9u) << partial;
  }
  // Without the instance, both pipes' bits; low bit first is the same range.
  const auto both = cov::readExclusions(write("excl2.txt", "toggle tessera_pipe offset_q[2:3] -- bounded\n"));
  EXPECT_EQ(cov::summarize(d, both).back().toggle.total, 5u);
  for (const char* bad : {"toggle tessera_pipe offset_q[3:x] -- why\n", "toggle tessera_pipe offset_q[3:2]@ -- why\n",
                          "toggle tessera_pipe [3:2] -- why\n"}) {
    try {
      cov::readExclusions(write("bad.txt", bad));
      FAIL() << "accepted: " << bad;
    } catch (const tessera::Error& e) {
      EXPECT_NE(std::string(e.what()).find("bad.txt:1"), std::string::npos) << e.what();
    }
  }
}

TEST_F(CoverageFiles, WritesLcovLinesAndBranches) {
  writeShards();
  cov::Data d;
  d.addDirectory(dir_.string());
  const std::string info = (dir_ / "out.info").string();
  d.writeLcov(info);
  std::ifstream in(info);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The block at line 10 spans 10, 12 and 13: each line gets its count, 3 + 4.
  EXPECT_NE(text.find("SF:/rtl/fifo.sv\nDA:10,7\nDA:12,7\nDA:13,7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("LF:3\nLH:3\nend_of_record"), std::string::npos) << text;
}

TEST_F(CoverageFiles, RefusesWhatIsNotACoverageFileNamingWhere) {
  const std::string head = "# SystemC::Coverage-3\n";
  const struct {
    const char* name;
    std::string text;
    const char* expect;
  } cases[] = {
      {"empty.dat", "", "is empty"},
      {"header.dat", "# SystemC::Coverage-2\n", "header.dat:1"},
      {"count.dat", head + "C '" + key("/f.sv", 1, "v_line/m", "block", "TOP") + "' many\n", "count.dat:2"},
      {"shape.dat", head + "X 1\n", "shape.dat:2"},
      {"page.dat", head + "C '" + key("/f.sv", 1, "v_odd/m", "block", "TOP") + "' 1\n", "page.dat:2"},
      {"module.dat", head + "C '" + key("/f.sv", 1, "v_line", "block", "TOP") + "' 1\n", "module.dat:2"},
  };
  for (const auto& c : cases) {
    const std::string path = write(c.name, c.text);
    cov::Data d;
    try {
      d.addFile(path);
      FAIL() << c.name << " was accepted";
    } catch (const tessera::Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(c.expect), std::string::npos)
          << c.name << ": " << what;
    }
  }
  cov::Data d;
  const std::string emptyDir = (dir_ / "none").string();
  fs::create_directories(emptyDir);
  EXPECT_THROW(d.addDirectory(emptyDir), tessera::Error);
  EXPECT_THROW(d.addDirectory((dir_ / "missing").string()), tessera::Error);
}

}  // namespace
