// Data sources: RandomDataSource is a pure function of (seed, step), draws integers in the range
// each reader accepts, Batch::MaxInt reads a batch's longest length, and SetInputs feeds a batch
// to a program.
#include "tessera/exec/data_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tessera/exec/prefetch_data_source.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/zoo/zoo.h"

namespace tessera::exec {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::Value;

graph::Graph Classifier(int64_t batch, int64_t classes) {
  GraphBuilder b("classifier");
  Value x = b.Input("x", {batch, 6});
  Value labels = b.Input("labels", {batch}, DType::kI64);
  b.Output(b.SoftmaxCrossEntropy(b.Linear(x, classes, "fc"), labels, "loss"));
  return *std::move(b).Build();
}

const std::vector<float>& F(const Batch& b, const std::string& name) {
  return std::get<std::vector<float>>(b.values.at(name));
}
const std::vector<int64_t>& I(const Batch& b, const std::string& name) {
  return std::get<std::vector<int64_t>>(b.values.at(name));
}

TEST(RandomDataSourceTest, ABatchDependsOnlyOnSeedAndStep) {
  const graph::Graph g = Classifier(16, 5);
  RandomDataSource a(g, {.seed = 3}), b(g, {.seed = 3}), other(g, {.seed = 4});
  Batch a5, b5, b6, other5, again;
  ASSERT_TRUE(a.Next(5, a5).ok());
  ASSERT_TRUE(b.Next(2, b6).ok());  // asking another step first changes nothing
  ASSERT_TRUE(b.Next(5, b5).ok());
  ASSERT_TRUE(b.Next(6, b6).ok());
  ASSERT_TRUE(other.Next(5, other5).ok());
  EXPECT_EQ(F(a5, "x"), F(b5, "x"));
  EXPECT_EQ(I(a5, "labels"), I(b5, "labels"));
  EXPECT_NE(F(a5, "x"), F(b6, "x"));
  EXPECT_NE(F(a5, "x"), F(other5, "x"));
  // Re-using a batch that holds other values gives the same numbers.
  again = b6;
  ASSERT_TRUE(a.Next(5, again).ok());
  EXPECT_EQ(F(again, "x"), F(a5, "x"));
}

TEST(RandomDataSourceTest, ValuesHaveTheInputsShapesAndRanges) {
  const graph::Graph g = Classifier(500, 5);
  RandomDataSource data(g, {.seed = 1});
  Batch batch;
  ASSERT_TRUE(data.Next(0, batch).ok());
  const std::vector<float>& x = F(batch, "x");
  ASSERT_EQ(x.size(), 3000u);
  double sum = 0;
  for (float v : x) {
    ASSERT_GE(v, -1.f);
    ASSERT_LT(v, 1.f);
    sum += v;
  }
  EXPECT_NEAR(sum / 3000, 0.0, 0.05);  // uniform on [-1, 1): mean 0, sd of the mean 0.011
  EXPECT_GT(*std::max_element(x.begin(), x.end()), 0.99f);
  // Labels: the logits have 5 classes; every class appears in 500 draws.
  const std::vector<int64_t>& labels = I(batch, "labels");
  ASSERT_EQ(labels.size(), 500u);
  EXPECT_EQ(std::set<int64_t>(labels.begin(), labels.end()), (std::set<int64_t>{0, 1, 2, 3, 4}));
}

TEST(RandomDataSourceTest, IntegerRangesFollowTheirReaders) {
  GraphBuilder b("readers");
  Value ids = b.Input("ids", {4, 50}, DType::kI64);
  Value log_probs = b.Input("log_probs", {30, 4, 7});   // [T, N, C]
  Value targets = b.Input("targets", {4, 12}, DType::kI64);
  Value in_len = b.Input("input_lengths", {4}, DType::kI64);
  Value tgt_len = b.Input("target_lengths", {4}, DType::kI64);
  Value free = b.Input("free", {200}, DType::kI64);
  Value e = b.Embedding(ids, 9, 3, "emb");
  Value ctc = b.CtcLoss(log_probs, targets, in_len, tgt_len, "ctc", {.blank = 2});
  b.Output(b.Add(b.Add(ctc, b.ReduceMean(e, {}, false, "m")), b.ReduceMean(b.Cast(free, DType::kF32, "c"), {}, false, "fm"), "total"));
  auto g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  RandomDataSource data(*g, {.seed = 2, .classes = 3});
  Batch batch;
  ASSERT_TRUE(data.Next(0, batch).ok());
  const auto values = [&](const std::string& n) {
    const std::vector<int64_t>& v = I(batch, n);
    return std::set<int64_t>(v.begin(), v.end());
  };
  EXPECT_EQ(values("ids"), (std::set<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));  // 9 rows
  EXPECT_EQ(values("targets"), (std::set<int64_t>{0, 1, 3, 4, 5, 6}));      // C = 7 but the blank
  EXPECT_EQ(values("input_lengths"), (std::set<int64_t>{30}));
  EXPECT_EQ(values("target_lengths"), (std::set<int64_t>{12}));
  EXPECT_EQ(values("free"), (std::set<int64_t>{0, 1, 2}));                  // `classes`
  RandomDataSource overridden(*g, {.seed = 2, .classes_per_input = {{"ids", 2}}});
  ASSERT_TRUE(overridden.Next(0, batch).ok());
  EXPECT_EQ(values("ids"), (std::set<int64_t>{0, 1}));
}

// An LSTM's sequence_lens: every sequence whole (T), whatever `classes` says.
TEST(RandomDataSourceTest, LstmSequenceLengthsAreTheWholeSequence) {
  auto g = graph::zoo::BuildZooModel("nmt", 4);
  ASSERT_TRUE(g.ok()) << g.status();
  RandomDataSource data(*g, {.seed = 2, .classes = 3});
  Batch batch;
  ASSERT_TRUE(data.Next(0, batch).ok());
  const std::vector<int64_t>& lengths = I(batch, "tgt_lengths");
  EXPECT_EQ(std::set<int64_t>(lengths.begin(), lengths.end()), (std::set<int64_t>{20}));
}

TEST(RandomDataSourceTest, AnEmptyRangeIsAnErrorNamingTheInput) {
  const graph::Graph g = Classifier(4, 5);
  RandomDataSource data(g, {.classes_per_input = {{"labels", 0}}});
  Batch batch;
  absl::Status s = data.Next(0, batch);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "'labels'")) << s;
}

TEST(BatchTest, MaxIntIsTheLargestIntegerOfAnInputOrZero) {
  Batch batch;
  batch.Ints("src_lengths") = {7, 19, 3};
  batch.Ints("empty");
  batch.Floats("images") = {5.f, 9.f};
  EXPECT_EQ(batch.MaxInt("src_lengths"), 19);
  EXPECT_EQ(batch.MaxInt("empty"), 0);
  EXPECT_EQ(batch.MaxInt("images"), 0);   // floats are not lengths
  EXPECT_EQ(batch.MaxInt("missing"), 0);
  EXPECT_FALSE(batch.values.contains("missing"));  // asking adds nothing
}

TEST(SetInputsTest, FeedsAProgramAndNamesAnUnknownInput) {
  auto p = TrainingProgram::Create(Classifier(4, 5), {.seed = 1});
  ASSERT_TRUE(p.ok()) << p.status();
  RandomDataSource data((*p)->graph(), {.seed = 1});
  Batch batch;
  ASSERT_TRUE(data.Next(0, batch).ok());
  ASSERT_TRUE(SetInputs(**p, batch).ok());
  ASSERT_TRUE((*p)->RunStep().ok());
  EXPECT_GT((*p)->Loss(), 0.f);
  batch.Floats("images").assign(3, 0.f);
  absl::Status s = SetInputs(**p, batch);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "'images'")) << s;
}

// A source whose steps fail from `bad` on; NextRows says what it was asked.
class Failing : public DataSource {
 public:
  Failing(const graph::Graph& g, int64_t bad) : random_(g, {.seed = 4}), bad_(bad) {}
  absl::Status Next(int64_t step, Batch& batch) override {
    if (step >= bad_) return absl::DataLossError(absl::StrCat("corpus.tsv: step ", step));
    return random_.Next(step, batch);
  }
  bool HasRows() const override { return true; }
  absl::Status NextRows(int64_t step, int64_t first, int64_t count, Batch& batch) override {
    batch.Ints("rows") = {step, first, count};
    return absl::OkStatus();
  }

 private:
  RandomDataSource random_;
  int64_t bad_;
};

// The prefetcher answers exactly as its source would: in order, after a jump back (a resumed
// run), for rows, and with the source's errors; and it prepares `depth` steps ahead.
TEST(PrefetchingDataSourceTest, AnswersAsItsSourceAndWorksAhead) {
  const graph::Graph g = Classifier(4, 5);
  RandomDataSource plain(g, {.seed = 4});
  PrefetchingDataSource data(std::make_unique<Failing>(g, /*bad=*/9), {.depth = 3});
  EXPECT_TRUE(data.HasRows());
  Batch got, want;
  for (int64_t step : {0, 1, 2, 3, 7, 8, 2}) {
    ASSERT_TRUE(data.Next(step, got).ok()) << step;
    ASSERT_TRUE(plain.Next(step, want).ok());
    EXPECT_EQ(F(got, "x"), F(want, "x")) << step;
    EXPECT_EQ(I(got, "labels"), I(want, "labels")) << step;
    if (step == 3) {  // steps 0..3 asked: 4, 5 and 6 come without being asked
      for (int i = 0; i < 1000 && data.produced() < 7; ++i) absl::SleepFor(absl::Milliseconds(10));
      EXPECT_GE(data.produced(), 7);
    }
  }
  absl::Status bad = data.Next(9, got);
  EXPECT_EQ(bad.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(bad.message(), "corpus.tsv: step 9")) << bad;
  for (int64_t step : {5, 6}) {
    ASSERT_TRUE(data.NextRows(step, 2, 2, got).ok());
    EXPECT_EQ(I(got, "rows"), (std::vector<int64_t>{step, 2, 2}));
  }
}

}  // namespace
}  // namespace tessera::exec
