// The OCR data source against the ocr zoo model: shapes, ranges, determinism, a training step
// on its batch, and the log_probs output read back and checked against the loss.
#include "tessera/jobs/ocr/ocr_data_source.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "tessera/jobs/ocr/ctc_decode.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/zoo/zoo.h"

namespace tessera::jobs::ocr {
namespace {

const std::vector<float>& F(const exec::Batch& b, const std::string& name) {
  return std::get<std::vector<float>>(b.values.at(name));
}
const std::vector<int64_t>& I(const exec::Batch& b, const std::string& name) {
  return std::get<std::vector<int64_t>>(b.values.at(name));
}

graph::Graph Ocr(int64_t batch) { return *graph::zoo::BuildZooModel("ocr", batch); }

TEST(OcrDataSourceTest, FillsTheModelsFourInputs) {
  absl::StatusOr<std::unique_ptr<OcrDataSource>> data = OcrDataSource::Create(Ocr(8), {});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ((*data)->batch(), 8);
  EXPECT_EQ((*data)->frames(), 32);
  exec::Batch batch;
  ASSERT_TRUE((*data)->Next(3, batch).ok());
  ASSERT_EQ(batch.values.size(), 4u);
  const std::vector<float>& images = F(batch, "images");
  ASSERT_EQ(images.size(), 8u * 32 * 128);
  for (float v : images) ASSERT_TRUE(v >= 0.f && v <= 1.f);
  const std::vector<int64_t>& targets = I(batch, "targets");
  const std::vector<int64_t>& lengths = I(batch, "target_lengths");
  ASSERT_EQ(targets.size(), 80u);
  EXPECT_EQ(I(batch, "input_lengths"), std::vector<int64_t>(8, 32));
  const std::vector<std::string> texts = (*data)->Texts(3);
  ASSERT_EQ(texts.size(), 8u);
  for (int b = 0; b < 8; ++b) {
    ASSERT_EQ(lengths[b], static_cast<int64_t>(texts[b].size()));
    for (int i = 0; i < 10; ++i) {
      const int64_t expected = i < lengths[b] ? LabelOf(texts[b][i]) : 0;
      EXPECT_EQ(targets[b * 10 + i], expected);
      if (i < lengths[b]) EXPECT_TRUE(expected >= 1 && expected <= 36);
    }
    // Row b of step 3 is line 3 * 8 + b of the train split.
    const TextLine line = TextLineGenerator(TextLineOptions{}).Line(Split::kTrain, 24 + b);
    EXPECT_EQ(line.text, texts[b]);
    EXPECT_TRUE(std::equal(line.pixels.begin(), line.pixels.end(),
                           images.begin() + b * 32 * 128));
  }
}

TEST(OcrDataSourceTest, ABatchDependsOnlyOnTheStep) {
  auto a = *OcrDataSource::Create(Ocr(4), {.lines = {.seed = 9}});
  auto b = *OcrDataSource::Create(Ocr(4), {.lines = {.seed = 9}});
  auto held = *OcrDataSource::Create(Ocr(4), {.lines = {.seed = 9}, .split = Split::kHeldOut});
  exec::Batch a5, b5, other, h5;
  ASSERT_TRUE(b.get()->Next(1, other).ok());
  ASSERT_TRUE(a->Next(5, a5).ok());
  ASSERT_TRUE(b->Next(5, other).ok());  // reusing a batch holding other values
  ASSERT_TRUE(held->Next(5, h5).ok());
  EXPECT_EQ(F(a5, "images"), F(other, "images"));
  EXPECT_EQ(I(a5, "targets"), I(other, "targets"));
  EXPECT_NE(F(a5, "images"), F(h5, "images"));
  for (const std::string& t : held->Texts(5)) EXPECT_TRUE(IsHeldOutText(t)) << t;
  EXPECT_FALSE(a->Next(-1, a5).ok());
}

TEST(OcrDataSourceTest, OtherGraphsAreRejectedNamingTheInput) {
  absl::Status nmt = OcrDataSource::Create(*graph::zoo::BuildZooModel("nmt", 2), {}).status();
  EXPECT_EQ(nmt.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(nmt.message(), "'images'")) << nmt;

  graph::GraphBuilder b("small_images");
  graph::Value images = b.Input("images", {2, 1, 16, 64});
  b.Input("targets", {2, 10}, graph::DType::kI64);
  b.Input("input_lengths", {2}, graph::DType::kI64);
  b.Input("target_lengths", {2}, graph::DType::kI64);
  b.Output(b.ReduceMean(images, {0, 1, 2, 3}, false, "loss"));
  absl::Status shape = OcrDataSource::Create(*std::move(b).Build(), {}).status();
  EXPECT_EQ(shape.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(shape.message(), "[2,1,16,64]")) << shape;
}

// -log P(target | log_probs[:, b, :]) by the CTC alpha recursion, in double.
double CtcNll(const std::vector<float>& lp, int64_t frames, int64_t batch, int64_t classes,
              int64_t b, const std::vector<int64_t>& target) {
  const double kNeg = -std::numeric_limits<double>::infinity();
  auto add = [&](double x, double y) {
    if (x == kNeg) return y;
    if (y == kNeg) return x;
    return std::max(x, y) + std::log1p(std::exp(-std::abs(x - y)));
  };
  std::vector<int64_t> ext(2 * target.size() + 1, 0);
  for (size_t i = 0; i < target.size(); ++i) ext[2 * i + 1] = target[i];
  const size_t u_n = ext.size();
  std::vector<double> alpha(u_n, kNeg), next(u_n);
  auto at = [&](int64_t t, int64_t c) { return static_cast<double>(lp[(t * batch + b) * classes + c]); };
  alpha[0] = at(0, ext[0]);
  alpha[1] = at(0, ext[1]);
  for (int64_t t = 1; t < frames; ++t) {
    for (size_t u = 0; u < u_n; ++u) {
      double s = alpha[u];
      if (u >= 1) s = add(s, alpha[u - 1]);
      if (u >= 2 && ext[u] != 0 && ext[u] != ext[u - 2]) s = add(s, alpha[u - 2]);
      next[u] = s + at(t, ext[u]);
    }
    alpha.swap(next);
  }
  return -add(alpha[u_n - 1], alpha[u_n - 2]);
}

TEST(OcrDataSourceTest, TheModelTrainsOnABatchAndItsLogProbsDecode) {
  graph::Graph g = Ocr(8);
  absl::StatusOr<std::string> lp_name = AddLogProbsOutput(g);
  ASSERT_TRUE(lp_name.ok()) << lp_name.status();
  EXPECT_EQ(*AddLogProbsOutput(g), *lp_name);  // idempotent
  EXPECT_EQ(g.outputs().size(), 2u);
  auto data = *OcrDataSource::Create(g, {});
  auto program = exec::TrainingProgram::Create(g, {.seed = 1});
  ASSERT_TRUE(program.ok()) << program.status();
  exec::Batch batch;
  ASSERT_TRUE(data->Next(0, batch).ok());
  ASSERT_TRUE(exec::SetInputs(**program, batch).ok());
  ASSERT_TRUE((*program)->RunStep().ok());
  const float loss = (*program)->Loss();
  EXPECT_TRUE(std::isfinite(loss) && loss > 0) << loss;

  ASSERT_TRUE(exec::SetInputs(**program, batch).ok());
  ASSERT_TRUE((*program)->RunForward(true).ok());
  const std::vector<float> lp((*program)->Output(*lp_name).begin(),
                              (*program)->Output(*lp_name).end());
  ASSERT_EQ(lp.size(), 32u * 8 * 37);
  for (int64_t r = 0; r < 32 * 8; ++r) {  // each frame a distribution
    double total = 0;
    for (int64_t c = 0; c < 37; ++c) total += std::exp(lp[r * 37 + c]);
    ASSERT_NEAR(total, 1.0, 1e-4) << r;
  }
  // The loss the program reports is the mean of -log P / target length over the batch,
  // computed here from the copied log_probs: they are the values the loss read.
  const std::vector<int64_t>& targets = I(batch, "targets");
  const std::vector<int64_t>& lengths = I(batch, "target_lengths");
  double expected = 0;
  for (int64_t b = 0; b < 8; ++b) {
    const std::vector<int64_t> t(targets.begin() + b * 10, targets.begin() + b * 10 + lengths[b]);
    expected += CtcNll(lp, 32, 8, 37, b, t) / lengths[b] / 8;
  }
  EXPECT_NEAR((*program)->Loss(), expected, 1e-3 * expected);
  absl::StatusOr<std::vector<std::string>> texts = GreedyCtcDecode(lp, 32, 8, kClasses);
  ASSERT_TRUE(texts.ok());
  EXPECT_EQ(texts->size(), 8u);
}

}  // namespace
}  // namespace tessera::jobs::ocr
