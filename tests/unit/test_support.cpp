// Unit tests of the support library: number formatting and whole-file reads and atomic writes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "tessera/support/error.h"
#include "tessera/support/file_io.h"
#include "tessera/support/format.h"

#include "error_of.h"

namespace {

namespace fs = std::filesystem;
using tessera::Error;

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tessera_support_test_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }
  size_t entries() const {
    size_t n = 0;
    for (auto it = fs::directory_iterator(path_); it != fs::directory_iterator(); ++it) ++n;
    return n;
  }

 private:
  std::string path_;
};

using tessera::testutil::errorOf;

TEST(Format, Hex) {
  EXPECT_EQ(tessera::hex(0), "0x0");
  EXPECT_EQ(tessera::hex(0x1f), "0x1f");
  EXPECT_EQ(tessera::hex(0xdeadbeefcafef00dull), "0xdeadbeefcafef00d");
  EXPECT_EQ(tessera::hex(~0ull), "0xffffffffffffffff");
}

TEST(Format, Thousands) {
  EXPECT_EQ(tessera::thousands(0), "0");
  EXPECT_EQ(tessera::thousands(999), "999");
  EXPECT_EQ(tessera::thousands(1000), "1,000");
  EXPECT_EQ(tessera::thousands(39688), "39,688");
  EXPECT_EQ(tessera::thousands(8277641), "8,277,641");
  EXPECT_EQ(tessera::thousands(18446744073709551615ull), "18,446,744,073,709,551,615");
}

TEST(FileIo, WritesAndReadsBack) {
  TempDir dir;
  const std::vector<uint8_t> bytes = {0, 1, 2, 0xff, 0x80};
  tessera::writeBinaryFile(dir.file("b.bin"), bytes, false);
  EXPECT_EQ(tessera::readBinaryFile(dir.file("b.bin")), bytes);
  tessera::writeTextFile(dir.file("t.txt"), "line one\nline two\n", false);
  EXPECT_EQ(tessera::readTextFile(dir.file("t.txt")), "line one\nline two\n");
  tessera::writeBinaryFile(dir.file("empty.bin"), std::vector<uint8_t>{}, false);
  EXPECT_TRUE(tessera::readBinaryFile(dir.file("empty.bin")).empty());
  EXPECT_EQ(dir.entries(), 3u);  // no temporary files left behind
}

TEST(FileIo, RefusesToOverwriteUnlessAsked) {
  TempDir dir;
  const std::string path = dir.file("out.bin");
  tessera::writeBinaryFile(path, {1, 2, 3}, false);
  try {
    tessera::writeBinaryFile(path, {9, 9}, false);
    ADD_FAILURE() << "no FileExistsError";
  } catch (const tessera::FileExistsError& e) {
    EXPECT_EQ(e.where(), path);
    EXPECT_NE(std::string(e.what()).find("refusing to overwrite"), std::string::npos);
    // A library names no command-line flag; the CLI adds its own.
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  }
  EXPECT_EQ(tessera::readBinaryFile(path), (std::vector<uint8_t>{1, 2, 3}));
  tessera::writeBinaryFile(path, {9, 9}, true);
  EXPECT_EQ(tessera::readBinaryFile(path), (std::vector<uint8_t>{9, 9}));
  EXPECT_EQ(dir.entries(), 1u);
}

TEST(FileIo, ErrorsNameTheFile) {
  TempDir dir;
  const std::string missing = dir.file("missing.bin");
  const std::string m1 = errorOf([&] { tessera::readBinaryFile(missing); });
  EXPECT_NE(m1.find(missing), std::string::npos) << m1;
  EXPECT_NE(m1.find("cannot open"), std::string::npos) << m1;
  const std::string m2 = errorOf([&] { tessera::readTextFile(dir.file("")); });
  EXPECT_NE(m2.find("directory"), std::string::npos) << m2;
  const std::string m3 = errorOf([&] { tessera::writeBinaryFile(dir.file("no/such/dir/x.bin"), {1}, false); });
  EXPECT_NE(m3.find("x.bin"), std::string::npos) << m3;
  EXPECT_NE(m3.find("cannot create"), std::string::npos) << m3;
}

TEST(FileIo, ReadsNonRegularFilesToTheirEnd) {
  // /proc files report size 0 but have content: the reader must not trust st_size for them.
  const std::string text = tessera::readTextFile("/proc/self/cmdline");
  EXPECT_FALSE(text.empty());
}

}  // namespace
