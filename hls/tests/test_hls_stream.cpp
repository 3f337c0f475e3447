// Unit tests of the C-simulation hls::stream: FIFO order, bounded depth, non-blocking calls, misuse.
#include <gtest/gtest.h>
#include <hls_stream.h>

#include <stdexcept>

TEST(HlsStream, FifoOrderAndEmpty) {
  hls::stream<int> s("s");
  EXPECT_TRUE(s.empty());
  EXPECT_FALSE(s.full());  // unbounded, as Xilinx's C simulation
  for (int i = 0; i < 100; ++i) s.write(i);
  EXPECT_EQ(s.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(s.read(), i);
  EXPECT_TRUE(s.empty());
  s << 7;
  int v = 0;
  s >> v;
  EXPECT_EQ(v, 7);
}

TEST(HlsStream, BoundedDepthAndNonBlocking) {
  hls::stream<int, 2> s;
  EXPECT_EQ(s.depth(), 2);
  EXPECT_TRUE(s.write_nb(1));
  EXPECT_TRUE(s.write_nb(2));
  EXPECT_TRUE(s.full());
  EXPECT_FALSE(s.write_nb(3));
  int v = 0;
  EXPECT_TRUE(s.read_nb(v));
  EXPECT_EQ(v, 1);
  EXPECT_FALSE(s.full());
  EXPECT_TRUE(s.read_nb(v));
  EXPECT_EQ(v, 2);
  EXPECT_FALSE(s.read_nb(v));
  EXPECT_EQ(v, 2);  // untouched when nothing was read
}

TEST(HlsStream, BlockingMisuseThrowsInsteadOfHanging) {
  hls::stream<int, 1> s("q");
  EXPECT_THROW(s.read(), std::logic_error);
  s.write(1);
  try {
    s.write(2);
    FAIL() << "write to a full stream must throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("'q'"), std::string::npos) << e.what();
  }
}
