#include "tessera/tools/format.h"

#include <gtest/gtest.h>

namespace tessera::tools {
namespace {

TEST(FormatTest, HumanUnits) {
  EXPECT_EQ(HumanCount(999), "999");
  EXPECT_EQ(HumanCount(61100840), "61.1M");
  EXPECT_EQ(HumanCount(138357544), "138M");
  EXPECT_EQ(HumanFlops(1.42e9), "1.42G");
  EXPECT_EQ(HumanBytes(3 << 20), "3.00 MiB");
  EXPECT_EQ(HumanBytes(512), "512 B");
}

TEST(FormatTest, TableAlignsColumnsAndDrawsSeparators) {
  TextTable t({"name", "params"}, {Align::kLeft, Align::kRight});
  t.AddRow({"fc1", "4.10M"});
  t.AddRow({"a_longer_name", "7"});
  t.AddSeparator();
  t.AddRow({"total", "4.10M"});
  EXPECT_EQ(t.Render(),
            "name           params\n"
            "---------------------\n"
            "fc1             4.10M\n"
            "a_longer_name       7\n"
            "---------------------\n"
            "total           4.10M\n");
}

TEST(FormatTest, ElideKeepsBothEnds) {
  EXPECT_EQ(Elide("short", 10), "short");
  EXPECT_EQ(Elide("/encoder/layers.0/self_attn/MatMul", 16), "/encod.../MatMul");
  EXPECT_EQ(Elide("/encoder/layers.0/self_attn/MatMul", 16).size(), 16u);
}

}  // namespace
}  // namespace tessera::tools
