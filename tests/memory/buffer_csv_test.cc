// MiniMalloc CSV: round trip and errors naming the file, line and field.
#include "tessera/memory/buffer_csv.h"

#include <cstdio>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::memory {
namespace {

using ::testing::HasSubstr;

TEST(BufferCsvTest, ParsesRowsAndIgnoresOffsetColumn) {
  absl::StatusOr<std::vector<Buffer>> buffers =
      ParseBufferCsv("id,lower,upper,size,offset\n0,1,5,64,999\r\n\n3, 2, 9, 128 ,0\n", "in.csv");
  ASSERT_TRUE(buffers.ok()) << buffers.status();
  ASSERT_EQ(buffers->size(), 2u);
  EXPECT_EQ((*buffers)[0].id, 0);
  EXPECT_EQ((*buffers)[0].start, 1);
  EXPECT_EQ((*buffers)[0].end, 5);
  EXPECT_EQ((*buffers)[0].size, 64);
  EXPECT_EQ((*buffers)[1].id, 3);
  EXPECT_EQ((*buffers)[1].size, 128);
}

TEST(BufferCsvTest, AcceptsColumnsInAnyOrder) {
  absl::StatusOr<std::vector<Buffer>> buffers =
      ParseBufferCsv("size,upper,id,lower\n8,4,2,1\n", "x");
  ASSERT_TRUE(buffers.ok()) << buffers.status();
  EXPECT_EQ((*buffers)[0].id, 2);
  EXPECT_EQ((*buffers)[0].start, 1);
  EXPECT_EQ((*buffers)[0].end, 4);
  EXPECT_EQ((*buffers)[0].size, 8);
}

TEST(BufferCsvTest, RoundTripsThroughAFile) {
  const std::vector<Buffer> buffers = {{.id = 4, .start = 0, .end = 3, .size = 16},
                                       {.id = 9, .start = 1, .end = 2, .size = 32}};
  const std::string path = std::string(TESSERA_BINARY_DIR) + "/buffer_csv_roundtrip.csv";
  ASSERT_TRUE(WriteBufferCsv(path, buffers, {16, 0}).ok());
  EXPECT_EQ(FormatBufferCsv(buffers, {16, 0}),
            "id,lower,upper,size,offset\n4,0,3,16,16\n9,1,2,32,0\n");
  absl::StatusOr<std::vector<Buffer>> read = ReadBufferCsv(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[1].id, 9);
  EXPECT_EQ((*read)[1].start, 1);
  EXPECT_EQ((*read)[1].end, 2);
  EXPECT_EQ((*read)[1].size, 32);
  std::remove(path.c_str());
}

TEST(BufferCsvTest, ErrorsNameFileLineAndField) {
  EXPECT_THAT(
      ParseBufferCsv("id,lower,upper,size\n0,1,2,8\n1,1,x2,8\n", "p.csv").status().message(),
      HasSubstr("p.csv:3: field 'upper' is 'x2'"));
  EXPECT_THAT(ParseBufferCsv("id,lower,upper,size\n0,1,2\n", "p.csv").status().message(),
              HasSubstr("p.csv:2: 3 fields where the header has 4"));
  EXPECT_THAT(ParseBufferCsv("0,1,2,8\n", "p.csv").status().message(),
              HasSubstr("p.csv:1: unknown column '0'"));
  EXPECT_THAT(ParseBufferCsv("id,lower,size\n", "p.csv").status().message(),
              HasSubstr("lacks the column 'upper'"));
  EXPECT_THAT(ParseBufferCsv("", "p.csv").status().message(), HasSubstr("no header line"));
  absl::StatusOr<std::vector<Buffer>> missing = ReadBufferCsv("/nonexistent/b.csv");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/b.csv"));
}

}  // namespace
}  // namespace tessera::memory
