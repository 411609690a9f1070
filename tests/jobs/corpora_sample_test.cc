// The committed sample of the real-text corpora (tests/data/corpora, written by
// `scripts/make_corpora.sh --sample tests/data/corpora`; docs/corpora.md): its format, and
// sacreBLEU-style BLEU on its detokenised lines.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/base/file_io.h"
#include "tessera/jobs/nmt/metrics.h"

namespace tessera::jobs::nmt {
namespace {

const std::string kSampleDir = std::string(TESSERA_SOURCE_DIR) + "/tests/data/corpora";

// The lines of a TSV as pairs of fields; fails the test on a line without exactly one tab.
std::vector<std::pair<std::string, std::string>> ReadPairs(const std::string& path) {
  absl::StatusOr<std::string> text = base::ReadFileText(path, "corpus sample", 1 << 22);
  EXPECT_TRUE(text.ok()) << text.status();
  std::vector<std::pair<std::string, std::string>> pairs;
  if (!text.ok()) return pairs;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    ++line_number;
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    EXPECT_EQ(fields.size(), 2u) << path << ":" << line_number;
    if (fields.size() != 2) continue;
    EXPECT_FALSE(fields[0].empty() || fields[1].empty()) << path << ":" << line_number;
    pairs.emplace_back(fields[0], fields[1]);
  }
  return pairs;
}

uint32_t BigEndian32(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

// 200 English<TAB>Spanish pairs of the test split: a reference scores 100 against itself,
// and the untranslated English scores 3.135 against the Spanish (what sacreBLEU 2.x prints
// for these lines with -tok 13a -s none: shared names, numbers and punctuation).
TEST(CorporaSampleTest, NmtPairsAreDistinctAndScoreLikeSacreBleu) {
  const auto pairs = ReadPairs(kSampleDir + "/nmt_sample.tsv");
  ASSERT_EQ(pairs.size(), 200u);
  std::vector<std::string> sources, targets;
  absl::flat_hash_set<std::string> distinct;
  for (const auto& [source, target] : pairs) {
    sources.push_back(source);
    targets.push_back(target);
    distinct.insert(source);
    EXPECT_THAT(target, ::testing::Not(::testing::ContainsRegex("[*@#][A-Za-z]")))
        << "an Apertium mark left in: " << target;
  }
  EXPECT_EQ(distinct.size(), pairs.size());
  EXPECT_DOUBLE_EQ(SacreBleu(targets, targets)->Points(), 100.0);
  absl::StatusOr<BleuScore> copy = SacreBleu(sources, targets);
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_NEAR(copy->Points(), 3.1354065767705217, 1e-9);
  EXPECT_EQ(copy->reference_length, 2902);  // 13a tokens of the Spanish side
}

// 50 OCR lines of the test split: each an 8-bit grey PNG 32 pixels high (read from its IHDR).
TEST(CorporaSampleTest, OcrLinesAreGreyPngs32PixelsHigh) {
  const auto lines = ReadPairs(kSampleDir + "/ocr_sample/lines.tsv");
  ASSERT_EQ(lines.size(), 50u);
  for (const auto& [image, text] : lines) {
    const std::string path = kSampleDir + "/ocr_sample/" + image;
    absl::StatusOr<std::string> png = base::ReadFileText(path, "PNG", 1 << 20);
    ASSERT_TRUE(png.ok()) << png.status();
    ASSERT_GE(png->size(), 33u) << path;
    EXPECT_EQ(png->substr(0, 8), "\x89PNG\r\n\x1a\n") << path;
    EXPECT_EQ(png->substr(12, 4), "IHDR") << path;
    const uint32_t width = BigEndian32(*png, 16), height = BigEndian32(*png, 20);
    EXPECT_EQ(height, 32u) << path;
    // The whole test split has 6.2 to 25 pixels a character, 12 on average.
    EXPECT_GT(width, 6 * text.size()) << path << ": " << text;
    EXPECT_EQ((*png)[24], 8) << path << ": bit depth";
    EXPECT_EQ((*png)[25], 0) << path << ": colour type grey";
    EXPECT_GE(text.size(), 20u);
    EXPECT_LE(text.size(), 45u);
  }
}

}  // namespace
}  // namespace tessera::jobs::nmt
