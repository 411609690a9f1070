// OCR on text-line images: PNG reading (jobs/ocr/png_reader.h), the TSV and character set
// (line_corpus.h), fitting and augmenting lines (line_image.h), the row-wise data source
// (ocr_corpus_data_source.h) and the job (ocr_corpus_job.h), on files written here and the
// committed sample of the rendered corpus (tests/data/corpora/ocr_sample, docs/corpora.md).
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/jobs/ocr/line_corpus.h"
#include "tessera/jobs/ocr/line_image.h"
#include "tessera/jobs/ocr/ocr_corpus_data_source.h"
#include "tessera/jobs/ocr/ocr_corpus_job.h"
#include "tessera/jobs/ocr/png_reader.h"
#include "tessera/jobs/ocr/png_writer.h"

namespace tessera::jobs::ocr {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kSample = std::string(TESSERA_SOURCE_DIR) + "/tests/data/corpora/ocr_sample";

class OcrCorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("tessera_ocr_corpus_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  fs::path dir_;
};

TEST_F(OcrCorpusTest, PngsReadAsGreyAndBadFilesAreNamed) {
  std::vector<uint8_t> px(6 * 4, 255);
  px[5] = 0;  // (x 5, y 0) black
  const std::string path = Write("a.png", EncodeGrayPng(px, 6, 4));
  auto im = ReadPng(path);
  ASSERT_TRUE(im.ok()) << im.status();
  EXPECT_EQ(im->width, 6);
  EXPECT_EQ(im->height, 4);
  EXPECT_EQ(im->pixels, px);
  auto sample = ReadPng(kSample + "/000000.png");
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_EQ(sample->height, 32);
  const std::string bytes = EncodeGrayPng(px, 6, 4);
  for (const auto& [name, content] :
       {std::pair{"cut.png", bytes.substr(0, bytes.size() - 20)},
        std::pair{"text.png", std::string("not an image at all")}}) {
    auto bad = ReadPng(Write(name, content));
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(bad.status().message(), HasSubstr((dir_ / name).string())) << name;
  }
  EXPECT_THAT(ReadPng((dir_ / "none.png").string()).status().message(), HasSubstr("none.png"));
}

TEST_F(OcrCorpusTest, TsvLinesAndCharactersAreCheckedNamingFileAndLine) {
  auto corpus = LineCorpus::Open(Write("t.tsv", "a.png\tAb c\n\nsub/b.png\tcab\n"));
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  ASSERT_EQ(corpus->size(), 2);
  EXPECT_EQ(corpus->at(1).name, "sub/b.png");
  EXPECT_EQ(corpus->at(1).image, (dir_ / "sub/b.png").string());
  EXPECT_EQ(corpus->at(1).line, 3);
  auto chars = Charset::FromTexts(*corpus);
  ASSERT_TRUE(chars.ok());
  EXPECT_EQ(chars->Describe(), " Aabc");
  auto labels = chars->Labels("cab", "x");
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ(*labels, (std::vector<int64_t>{5, 3, 4}));
  EXPECT_EQ(chars->Text(*labels), "cab");
  EXPECT_THAT(chars->Labels("cat", "test.tsv:12").status().message(),
              HasSubstr("test.tsv:12: the character 't' (U+0074) is not in the character set"));
  const auto error = [&](const std::string& name, const std::string& text) {
    return std::string(LineCorpus::Open(Write(name, text)).status().message());
  };
  EXPECT_THAT(error("n.tsv", "a.png\tx\nno tab\n"), HasSubstr("n.tsv:2: want one tab"));
  EXPECT_THAT(error("e.tsv", "a.png\t\n"), HasSubstr("e.tsv:1: empty text"));
  EXPECT_THAT(error("u.tsv", "a.png\tni\xf1o\n"), HasSubstr("u.tsv:1: the text is not UTF-8"));
  auto file = Charset::FromFile(Write("chars.txt", "ba\nc\n"));
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->Describe(), "abc");
}

TEST_F(OcrCorpusTest, LinesFitTheModelsHeightAndWidthAndAugmentByKey) {
  GreyImage im{.width = 8, .height = 16, .pixels = std::vector<uint8_t>(8 * 16, 0)};  // all ink
  const LineGeometry g{.height = 32, .width = 64};
  std::vector<float> x = FitLine(im, g);  // scaled x2: 16 columns of ink, the rest paper
  ASSERT_EQ(x.size(), 32u * 64);
  EXPECT_FLOAT_EQ(x[10 * 64 + 3], 1.f);
  EXPECT_FLOAT_EQ(x[10 * 64 + 40], 0.f);
  GreyImage wide{.width = 256, .height = 32, .pixels = std::vector<uint8_t>(256 * 32, 0)};
  std::vector<float> w = FitLine(wide, g);  // squeezed to 64 x 8, centred
  EXPECT_FLOAT_EQ(w[16 * 64 + 63], 1.f);
  EXPECT_FLOAT_EQ(w[2 * 64 + 30], 0.f);
  std::vector<float> a = x, b = x, c = x;
  AugmentLine(a, g, 7);
  AugmentLine(b, g, 7);
  AugmentLine(c, g, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, x);
  for (float p : a) ASSERT_TRUE(p >= 0.f && p <= 1.f);
}

TEST_F(OcrCorpusTest, RowsDecodeOnlyTheirImagesAndTheJobEvaluatesTheSample) {
  const std::string tsv = kSample + "/lines.tsv";
  auto job = MakeOcrCorpusJob({.train = tsv, .width = 512, .batch = 4});
  ASSERT_TRUE(job.ok()) << job.status();
  auto g = (*job)->Model(0);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->tensor(*g->FindTensor("images")).shape, (graph::Shape{4, 1, 32, 512}));
  auto corpus = std::make_shared<const LineCorpus>(*LineCorpus::Open(tsv));
  auto chars = std::make_shared<const Charset>(*Charset::FromTexts(*corpus));
  auto data = OcrCorpusDataSource::ForGraph(*g, corpus, chars, {.seed = 3, .augment = true});
  ASSERT_TRUE(data.ok()) << data.status();
  exec::Batch whole, part;
  ASSERT_TRUE((*data)->Next(2, whole).ok());
  ASSERT_TRUE((*data)->NextRows(2, 1, 2, part).ok());
  EXPECT_EQ((*data)->decoded(), 6);
  const auto& wi = std::get<std::vector<float>>(whole.values.at("images"));
  EXPECT_EQ(std::get<std::vector<float>>(part.values.at("images")),
            std::vector<float>(wi.begin() + 32 * 512, wi.begin() + 3 * 32 * 512));
  const std::vector<int64_t> rows = (*data)->Rows(2, 0, 4);
  const auto& lengths = std::get<std::vector<int64_t>>(whole.values.at("target_lengths"));
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(lengths[r], static_cast<int64_t>(corpus->at(rows[r]).text.size()));
  }
  std::map<std::string, std::vector<float>> params;  // untrained zeros: enough to run
  for (const graph::Tensor& t : g->tensors()) {
    if (t.role == graph::TensorRole::kParameter) params[t.name].assign(graph::NumElements(t.shape), 0.f);
  }
  const std::string predictions = (dir_ / "pred.tsv").string();
  auto e = (*job)->Evaluate({&*g, &params, nullptr},
                            {.batches = 100, .threads = 1, .predictions = predictions});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->metrics.back(), (std::pair<std::string, double>{"lines", corpus->size() / 20}));
  std::ifstream in(predictions);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first.substr(0, first.find('\t')), corpus->at(19).name);
  EXPECT_THAT(std::string(MakeOcrCorpusJob({.train = tsv, .width = 32}).status().message()),
              HasSubstr("pass --width"));
}

}  // namespace
}  // namespace tessera::jobs::ocr
