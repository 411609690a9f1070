// OCR on text-line images: PNG reading (jobs/ocr/png_reader.h), the TSV and character set
// (line_corpus.h), fitting and augmenting lines (line_image.h), the row-wise data source
// (ocr_corpus_data_source.h) and the job (ocr_corpus_job.h), on files written here and the
// committed sample of the rendered corpus (tests/data/corpora/ocr_sample, docs/corpora.md).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
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
  AugmentLine(a, g, 16, 7);
  AugmentLine(b, g, 16, 7);
  AugmentLine(c, g, 16, 8);
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

// Each line gets the CTC frames of its own width (input_lengths), training batches hold lines of
// similar width, and a batch runs at the narrowest bucket whose frames hold its lines with the
// margin the convolutions need (FitVariant keeps each image row's first pixels).
TEST_F(OcrCorpusTest, LinesHaveTheirOwnFramesAndBatchesRunAtTheNarrowestWidthThatHoldsThem) {
  const std::string tsv = kSample + "/lines.tsv";
  auto job = MakeOcrCorpusJob({.train = tsv, .width = 512, .batch = 4, .buckets = 8});
  ASSERT_TRUE(job.ok()) << job.status();
  auto g = (*job)->Model(0);
  ASSERT_TRUE(g.ok()) << g.status();
  auto variants = (*job)->ModelVariants(*g);
  ASSERT_TRUE(variants.ok()) << variants.status();
  // 8 buckets of the 128 frames: 16, 32, ..., 112; those below the longest label (44) left out.
  std::vector<int64_t> frames;
  for (const graph::Graph& v : *variants) {
    frames.push_back(v.tensor(*v.FindTensor("images")).shape[3] / 4);
  }
  ASSERT_EQ(frames, (std::vector<int64_t>{48, 64, 80, 96, 112}));

  auto corpus = std::make_shared<const LineCorpus>(*LineCorpus::Open(tsv));
  auto chars = std::make_shared<const Charset>(*Charset::FromTexts(*corpus));
  auto data = OcrCorpusDataSource::ForGraph(*g, corpus, chars, {.seed = 3, .variant_frames = frames});
  ASSERT_TRUE(data.ok()) << data.status();
  const LineGeometry geometry{.height = 32, .width = 512};
  std::vector<std::pair<int64_t, int64_t>> spans;  // each batch's narrowest and widest line
  int narrower = 0;
  for (int64_t step = 0; step < 12; ++step) {  // epoch 0: 12 batches of 4 of the 50 lines
    exec::Batch b;
    ASSERT_TRUE((*data)->Next(step, b).ok());
    const std::vector<int64_t> lengths = b.Ints("input_lengths");
    const std::vector<int64_t> rows = (*data)->Rows(step, 0, 4);
    for (int r = 0; r < 4; ++r) {  // the sample's lines need no more frames than they are wide
      auto size = ReadPngSize(corpus->at(rows[r]).image);
      ASSERT_TRUE(size.ok()) << size.status();
      EXPECT_EQ(lengths[r], LineFrames(DrawnWidth(*size, geometry), geometry));
    }
    const auto [lo, hi] = std::minmax_element(lengths.begin(), lengths.end());
    spans.emplace_back(*lo, *hi);
    const int v = (*data)->Variant(b);
    const auto fits = std::find_if(frames.begin(), frames.end(), [&](int64_t f) {
      return f >= *hi + graph::zoo::kOcrFrameMargin;
    });
    EXPECT_EQ(v, fits == frames.end() ? exec::DataSource::kWhole : fits - frames.begin());
    if (v == exec::DataSource::kWhole) continue;
    ++narrower;
    exec::Batch cut = b;
    ASSERT_TRUE((*data)->FitVariant(v, cut).ok());
    const int64_t keep = 4 * frames[v];
    const std::vector<float>& whole = b.Floats("images");
    const std::vector<float>& images = cut.Floats("images");
    ASSERT_EQ(images.size(), static_cast<size_t>(4 * 32 * keep));
    for (int64_t y = 0; y < 4 * 32; ++y) {
      ASSERT_TRUE(std::equal(images.begin() + y * keep, images.begin() + (y + 1) * keep,
                             whole.begin() + y * 512));
    }
    EXPECT_EQ(cut.Ints("input_lengths"), lengths);
    if (v > 0) {  // a narrower variant than the rows need is refused
      EXPECT_THAT(std::string((*data)->FitVariant(v - 1, b).message()),
                  HasSubstr("does not fit shape variant"));
    }
  }
  EXPECT_GT(narrower, 3);
  // Grouped by width: sorted by their narrowest line, no batch's lines overlap the next's.
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) EXPECT_LE(spans[i - 1].second, spans[i].first);

  // Variants need the model whose LSTMs stop at input_lengths.
  auto plain = graph::zoo::BuildOcr({.batch = 4, .width = 512, .classes = chars->size() + 1,
                                     .max_label = 44});
  ASSERT_TRUE(plain.ok()) << plain.status();
  auto refused = OcrCorpusDataSource::ForGraph(*plain, corpus, chars, {.variant_frames = frames});
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("OcrSize::mask_padding"));
  auto unmasked = OcrCorpusDataSource::ForGraph(*plain, corpus, chars, {});
  ASSERT_TRUE(unmasked.ok()) << unmasked.status();
  exec::Batch b;
  ASSERT_TRUE((*unmasked)->Next(0, b).ok());
  EXPECT_EQ((*unmasked)->Variant(b), exec::DataSource::kWhole);
}

// The job's model stops its LSTMs at each line's frames and evaluation reads the running
// statistics, so evaluating each batch at the narrowest width that holds it gives the whole
// width's loss and readings (random parameters, so that every frame's values matter).
TEST_F(OcrCorpusTest, EvaluatingOnWidthBucketsGivesTheWholeWidthsResults) {
  const std::string tsv = kSample + "/lines.tsv";
  auto whole = MakeOcrCorpusJob({.train = tsv, .test = tsv, .width = 512, .batch = 4,
                                 .buckets = 1});
  auto buckets = MakeOcrCorpusJob({.train = tsv, .test = tsv, .width = 512, .batch = 4,
                                   .buckets = 8});
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE(buckets.ok()) << buckets.status();
  auto g = (*whole)->Model(0);
  ASSERT_TRUE(g.ok()) << g.status();
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  std::map<std::string, std::vector<float>> params;
  for (const graph::Tensor& t : g->tensors()) {
    if (t.role != graph::TensorRole::kParameter) continue;
    std::vector<float>& p = params[t.name];
    for (int64_t i = 0; i < graph::NumElements(t.shape); ++i) p.push_back(u(rng));
  }
  const std::string at_whole = (dir_ / "whole.tsv").string(), at_buckets = (dir_ / "b.tsv").string();
  auto a = (*whole)->Evaluate({&*g, &params, nullptr},
                              {.batches = 100, .threads = 1, .predictions = at_whole});
  auto b = (*buckets)->Evaluate({&*g, &params, nullptr},
                                {.batches = 100, .threads = 1, .predictions = at_buckets});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->metrics.size(), b->metrics.size());
  for (size_t i = 0; i < a->metrics.size(); ++i) {
    EXPECT_EQ(a->metrics[i].first, b->metrics[i].first);
    // Tight: a margin of 2 frames instead of kOcrFrameMargin's 4 moves the loss by 1.4e-6.
    EXPECT_NEAR(a->metrics[i].second, b->metrics[i].second,
                2e-7 * std::max(1.0, std::abs(a->metrics[i].second)))
        << a->metrics[i].first;
  }
  auto read_whole = base::ReadFileText(at_whole, "predictions", 1 << 20);
  auto read_buckets = base::ReadFileText(at_buckets, "predictions", 1 << 20);
  ASSERT_TRUE(read_whole.ok() && read_buckets.ok());
  EXPECT_EQ(*read_whole, *read_buckets);
  EXPECT_EQ(std::count(read_whole->begin(), read_whole->end(), '\n'), 50);
}

}  // namespace
}  // namespace tessera::jobs::ocr
