#include "tessera/base/text_format.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>

namespace tessera::base {
namespace {

TEST(TextFormatTest, HumanUnits) {
  EXPECT_EQ(HumanCount(999), "999");
  EXPECT_EQ(HumanCount(61100840), "61.1M");
  EXPECT_EQ(HumanCount(138357544), "138M");
  EXPECT_EQ(HumanFlops(1.42e9), "1.42G");
  EXPECT_EQ(HumanBytes(3 << 20), "3.00 MiB");
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanSeconds(0.0123), "12.3 ms");
  EXPECT_EQ(HumanSeconds(8.5e-7), "850 ns");
  EXPECT_EQ(HumanSeconds(9000), "2.50 h");
  EXPECT_EQ(HumanSeconds(2.5e-5), "25.0 us");
  EXPECT_EQ(HumanSeconds(2966), "49.4 min");
}

TEST(TextFormatTest, WithThousandsGroupsDigitsInThrees) {
  EXPECT_EQ(WithThousands(0), "0");
  EXPECT_EQ(WithThousands(999), "999");
  EXPECT_EQ(WithThousands(1000), "1,000");
  EXPECT_EQ(WithThousands(61100840), "61,100,840");
  EXPECT_EQ(WithThousands(int64_t{16} << 30), "17,179,869,184");
  EXPECT_EQ(WithThousands(-4096), "-4,096");
  EXPECT_EQ(WithThousands(-999), "-999");
  EXPECT_EQ(WithThousands(INT64_MAX), "9,223,372,036,854,775,807");
  EXPECT_EQ(WithThousands(INT64_MIN), "-9,223,372,036,854,775,808");
}

TEST(TextFormatTest, HumanBytesExactIsExactAndReadable) {
  EXPECT_EQ(HumanBytesExact(0), "0 bytes");
  EXPECT_EQ(HumanBytesExact(1), "1 byte");
  EXPECT_EQ(HumanBytesExact(1023), "1023 bytes");
  EXPECT_EQ(HumanBytesExact(-8), "-8 bytes");
  EXPECT_EQ(HumanBytesExact(1024), "1 KiB");
  EXPECT_EQ(HumanBytesExact(int64_t{3} << 20), "3 MiB");
  EXPECT_EQ(HumanBytesExact(int64_t{16} << 30), "16 GiB");
  EXPECT_EQ(HumanBytesExact(int64_t{2048} << 20), "2 GiB");  // the largest unit that divides
  EXPECT_EQ(HumanBytesExact(int64_t{1536} << 20), "1.50 GiB (1610612736 bytes)");
  EXPECT_EQ(HumanBytesExact(1610612737), "1.50 GiB (1610612737 bytes)");
  EXPECT_EQ(HumanBytesExact(1500), "1.46 KiB (1500 bytes)");
  EXPECT_EQ(HumanBytesExact(-(int64_t{5} << 20)), "-5 MiB");
  EXPECT_EQ(HumanBytesExact(INT64_MAX), "8192 PiB (9223372036854775807 bytes)");
}

TEST(TextFormatTest, TableAlignsColumnsAndDrawsRules) {
  EXPECT_EQ(RenderTable({"name", "params"}, {false, true},
                        {{"fc1", "4.10M"}, {"a_longer_name", "7"}, {}, {"total", "4.10M"}}),
            "name           params\n"
            "---------------------\n"
            "fc1             4.10M\n"
            "a_longer_name       7\n"
            "---------------------\n"
            "total           4.10M\n");
}

TEST(TextFormatTest, WrapTextBreaksAtSpacesWithinTheWidth) {
  // The block starts at column 4: lines hold at most 20 - 4 = 16 columns of text.
  EXPECT_EQ(WrapText("one two three four five six", 20, 4), "one two three\n    four five six");
  EXPECT_EQ(WrapText("short", 20, 4), "short");
  EXPECT_EQ(WrapText("", 20, 4), "");
  // A word longer than a line stands alone; runs of spaces collapse.
  EXPECT_EQ(WrapText("a  averyveryverylongword b", 12, 2), "a\n  averyveryverylongword\n  b");
  const std::string wrapped = WrapText(std::string(30, 'x') + " " + std::string(30, 'y'), 40, 6);
  EXPECT_EQ(wrapped, std::string(30, 'x') + "\n      " + std::string(30, 'y'));
}

TEST(TextFormatTest, ParseByteSizeReadsBinaryAndDecimalUnits) {
  const std::pair<const char*, int64_t> good[] = {
      {"512", 512},          {"512B", 512},          {"4MiB", 4 << 20},
      {"4 MiB", 4 << 20},    {"4mib", 4 << 20},      {" 256 KiB ", 256 << 10},
      {"1.5KiB", 1536},      {"0.5MiB", 512 << 10},  {"2GiB", int64_t{2} << 30},
      {"1TiB", int64_t{1} << 40}, {"4MB", 4000000},  {"25kB", 25000},
      {"1GB", 1000000000},   {"0", 0},               {"0.3", 0}};
  for (const auto& [text, bytes] : good) {
    absl::StatusOr<int64_t> got = ParseByteSize(text);
    ASSERT_TRUE(got.ok()) << text << ": " << got.status();
    EXPECT_EQ(*got, bytes) << text;
  }
  for (const char* bad : {"", "MiB", "-1MiB", "4 XB", "4MiBs", "1e6", "1..5KiB", "nan",
                          "4 M iB", "8192PiB", "4294967296TiB"}) {
    absl::StatusOr<int64_t> got = ParseByteSize(bad);
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_NE(got.status().message().find(std::string("'") + bad + "' is not a size in bytes"),
              std::string::npos)
        << got.status().message();
  }
}

TEST(TextFormatTest, ElideKeepsBothEnds) {
  EXPECT_EQ(Elide("short", 10), "short");
  EXPECT_EQ(Elide("/encoder/layers.0/self_attn/MatMul", 16), "/encod.../MatMul");
  EXPECT_EQ(Elide("/encoder/layers.0/self_attn/MatMul", 16).size(), 16u);
}

}  // namespace
}  // namespace tessera::base
