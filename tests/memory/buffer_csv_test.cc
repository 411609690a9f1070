// MiniMalloc CSV: text ids, quoting, round trip and errors naming the file, line and field.
#include "tessera/memory/buffer_csv.h"

#include <cstdio>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::memory {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(BufferCsvTest, ParsesRowsAndIgnoresOffsetColumn) {
  absl::StatusOr<BufferTable> table =
      ParseBufferCsv("id,lower,upper,size,offset\n0,1,5,64,999\r\n\n3, 2, 9, 128 ,0\n", "in.csv");
  ASSERT_TRUE(table.ok()) << table.status();
  const std::vector<Buffer>& buffers = table->buffers;
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].id, 0);
  EXPECT_EQ(buffers[0].start, 1);
  EXPECT_EQ(buffers[0].end, 5);
  EXPECT_EQ(buffers[0].size, 64);
  EXPECT_EQ(buffers[1].id, 1);  // the row's index; the file's id is text
  EXPECT_EQ(buffers[1].size, 128);
  EXPECT_THAT(table->ids, ElementsAre("0", "3"));
}

TEST(BufferCsvTest, AcceptsColumnsInAnyOrder) {
  absl::StatusOr<BufferTable> table = ParseBufferCsv("size,upper,id,lower\n8,4,2,1\n", "x");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_THAT(table->ids, ElementsAre("2"));
  EXPECT_EQ(table->buffers[0].start, 1);
  EXPECT_EQ(table->buffers[0].end, 4);
  EXPECT_EQ(table->buffers[0].size, 8);
}

// MiniMalloc reads ids as text ("b1" in its examples); the planner sees rows 0..n-1.
TEST(BufferCsvTest, IdsAreTextAndBuffersAreNumberedByRow) {
  absl::StatusOr<BufferTable> table =
      ParseBufferCsv("id,lower,upper,size\nb12,0,3,4\nx,3,9,4\n-7,0,9,4\n", "m.csv");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_THAT(table->ids, ElementsAre("b12", "x", "-7"));
  ASSERT_EQ(table->buffers.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(table->buffers[i].id, static_cast<int64_t>(i));
  EXPECT_TRUE(ValidateBuffers(table->buffers).ok());
}

TEST(BufferCsvTest, QuotedIdsKeepCommasQuotesAndSpaces) {
  absl::StatusOr<BufferTable> table = ParseBufferCsv(
      "id,lower,upper,size\n\"conv1, out\",0,3,4\n\"say \"\"hi\"\"\",1,2,4\n\" pad \" ,1,2,4\n",
      "q.csv");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_THAT(table->ids, ElementsAre("conv1, out", "say \"hi\"", " pad "));
  // Written back quoted exactly where needed, and read back the same.
  const std::string csv = FormatBufferCsv(table->buffers, {0, 4, 8}, table->ids);
  EXPECT_EQ(csv,
            "id,lower,upper,size,offset\n\"conv1, out\",0,3,4,0\n\"say \"\"hi\"\"\",1,2,4,4\n"
            "\" pad \",1,2,4,8\n");
  absl::StatusOr<BufferTable> again = ParseBufferCsv(csv, "again.csv");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->ids, table->ids);
}

TEST(BufferCsvTest, RoundTripsThroughAFile) {
  const std::vector<Buffer> buffers = {{.id = 0, .start = 0, .end = 3, .size = 16},
                                       {.id = 1, .start = 1, .end = 2, .size = 32}};
  const std::vector<std::string> ids = {"b4", "b9"};
  const std::string path = std::string(TESSERA_BINARY_DIR) + "/buffer_csv_roundtrip.csv";
  ASSERT_TRUE(WriteBufferCsv(path, buffers, {16, 0}, ids).ok());
  EXPECT_EQ(FormatBufferCsv(buffers, {16, 0}, ids),
            "id,lower,upper,size,offset\nb4,0,3,16,16\nb9,1,2,32,0\n");
  // Without ids, the buffers' numeric ids name the rows.
  EXPECT_EQ(FormatBufferCsv(buffers, {16, 0}),
            "id,lower,upper,size,offset\n0,0,3,16,16\n1,1,2,32,0\n");
  absl::StatusOr<BufferTable> read = ReadBufferCsv(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->ids, ids);
  ASSERT_EQ(read->buffers.size(), 2u);
  EXPECT_EQ(read->buffers[1].start, 1);
  EXPECT_EQ(read->buffers[1].end, 2);
  EXPECT_EQ(read->buffers[1].size, 32);
  std::remove(path.c_str());
}

TEST(BufferCsvTest, ErrorsNameFileLineAndField) {
  const auto error = [](const char* text) {
    return std::string(ParseBufferCsv(text, "p.csv").status().message());
  };
  EXPECT_THAT(error("id,lower,upper,size\n0,1,2,8\n1,1,x2,8\n"),
              HasSubstr("p.csv:3: field 'upper' is 'x2'"));
  EXPECT_THAT(error("id,lower,upper,size\n0,1,2\n"),
              HasSubstr("p.csv:2: 3 fields where the header has 4"));
  EXPECT_THAT(error("id,lower,upper,size\na,b,1,2,8\n"),
              HasSubstr("p.csv:2: 5 fields where the header has 4; quote an id that has a comma"));
  EXPECT_THAT(error("0,1,2,8\n"), HasSubstr("p.csv:1: unknown column '0'"));
  EXPECT_THAT(error("id,lower,size\n"), HasSubstr("lacks the column 'upper'"));
  EXPECT_THAT(error(""), HasSubstr("no header line"));
  absl::StatusOr<BufferTable> missing = ReadBufferCsv("/nonexistent/b.csv");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/b.csv"));
}

TEST(BufferCsvTest, RefusesBadIdsAndQuotesNamingTheLine) {
  const auto error = [](const char* text) {
    return std::string(ParseBufferCsv(text, "p.csv").status().message());
  };
  EXPECT_THAT(error("id,lower,upper,size\nb1,0,2,8\nb2,0,2,8\nb1,1,3,8\n"),
              HasSubstr("p.csv:4: id 'b1' repeats line 2"));
  EXPECT_THAT(error("id,lower,upper,size\n,0,2,8\n"), HasSubstr("p.csv:2: empty id"));
  EXPECT_THAT(error("id,lower,upper,size\n\"open,0,2,8\n"),
              HasSubstr("p.csv:2: a quoted field has no closing quote"));
  EXPECT_THAT(error("id,lower,upper,size\na\"b,0,2,8\n"),
              HasSubstr("p.csv:2: field 1 'a\"b' has a quote; enclose the field in quotes"));
  EXPECT_THAT(error("id,lower,upper,size\n\"a\"b,0,2,8\n"),
              HasSubstr("p.csv:2: text after the closing quote of field 1"));
}

TEST(BufferCsvTest, RefusesInvalidValuesNamingTheId) {
  EXPECT_THAT(ParseBufferCsv("id,lower,upper,size\nok,0,2,8\nb7,5,5,4\n", "p.csv")
                  .status()
                  .message(),
              HasSubstr("p.csv:3: buffer 'b7': end 5 must be greater than start 5"));
  EXPECT_THAT(
      ParseBufferCsv("id,lower,upper,size\nz,0,2,0\n", "p.csv").status().message(),
      HasSubstr("p.csv:2: buffer 'z': size 0 must be positive"));
}

}  // namespace
}  // namespace tessera::memory
