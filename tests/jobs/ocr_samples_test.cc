// Decoded samples written beside their text: PNG files and the index.
#include "tessera/jobs/ocr/ocr_samples.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"

namespace tessera::jobs::ocr {
namespace {

TEST(OcrSamplesTest, WritesOnePngPerLineAndAnIndex) {
  const std::string dir = std::string(TESSERA_BINARY_DIR) + "/ocr_samples_test";
  std::filesystem::remove_all(dir);
  TextLineGenerator gen(TextLineOptions{.seed = 1});
  const std::vector<TextLine> lines = {gen.Line(Split::kHeldOut, 0), gen.Line(Split::kHeldOut, 1),
                                       gen.Line(Split::kTrain, 2)};
  const std::vector<std::string> decoded = {lines[0].text, "WRONG", lines[2].text};
  ASSERT_TRUE(WriteDecodedSamples(dir, lines, decoded).ok());
  for (const char* f : {"sample_00.png", "sample_01.png", "sample_02.png"}) {
    std::ifstream in(dir + "/" + f, std::ios::binary);
    std::string head(8, '\0');
    in.read(head.data(), 8);
    EXPECT_EQ(head, std::string("\x89PNG\r\n\x1a\n")) << f;
  }
  std::ifstream in(dir + "/samples.tsv");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "file\treference\tdecoded\tresult\n"
                        "sample_00.png\t" + lines[0].text + "\t" + lines[0].text + "\tok\n"
                        "sample_01.png\t" + lines[1].text + "\tWRONG\twrong\n"
                        "sample_02.png\t" + lines[2].text + "\t" + lines[2].text + "\tok\n");
  absl::Status s = WriteDecodedSamples(dir, lines, {"A"});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "3 lines but 1")) << s;
}

}  // namespace
}  // namespace tessera::jobs::ocr
