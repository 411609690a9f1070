// The NMT example's data source against the zoo's "nmt" model: jobs/nmt/nmt_data_source.h.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/jobs/nmt/beam_decoder.h"
#include "tessera/jobs/nmt/metrics.h"
#include "tessera/jobs/nmt/nmt_data_source.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/zoo/zoo.h"

namespace tessera::jobs::nmt {
namespace {

using ::testing::Each;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using Ints = std::vector<int64_t>;

const Ints& Get(const exec::Batch& b, const std::string& name) {
  return std::get<Ints>(b.values.at(name));
}

Ints Row(const Ints& v, int64_t row, int64_t length) {
  return Ints(v.begin() + row * length, v.begin() + (row + 1) * length);
}

TEST(NmtDataSourceTest, FillsTheFourInputsFromTheExamples) {
  auto data = NmtDataSource::Create({.seed = 3, .batch = 16});
  ASSERT_TRUE(data.ok()) << data.status();
  exec::Batch batch;
  ASSERT_TRUE((*data)->Next(2, batch).ok());
  ASSERT_EQ(batch.values.size(), 4u);
  const Ints &src = Get(batch, "src_tokens"), &tgt = Get(batch, "tgt_tokens"),
             &labels = Get(batch, "tgt_labels");
  ASSERT_EQ(src.size(), 16u * 20);
  ASSERT_EQ(tgt.size(), 16u * 20);
  ASSERT_EQ(labels.size(), 16u * 20);
  EXPECT_THAT(Get(batch, "tgt_lengths"), ElementsAreArray(Ints(16, 20)));
  const std::vector<Example> examples = (*data)->Examples(2);
  const Vocabulary &en = (*data)->source_vocabulary(), &de = (*data)->target_vocabulary();
  for (int64_t b = 0; b < 16; ++b) {
    const Example& e = examples[b];
    EXPECT_EQ(e.number, MakeExample(3, Split::kTrain, 2 * 16 + b).number);
    const Ints s = Row(src, b, 20), t = Row(tgt, b, 20), l = Row(labels, b, 20);
    const int64_t n = static_cast<int64_t>(e.target.size());
    // Source: left-padded English ids, the last word at position 19.
    EXPECT_EQ(en.Decode(s), e.source);
    EXPECT_EQ(s[19], en.Id(e.source.back()));
    EXPECT_EQ(s[19 - e.source.size()], Vocabulary::kPad);
    // Target: <bos> + German; labels: German + <eos>, then <pad>; labels[t] = tgt[t + 1].
    EXPECT_EQ(t[0], Vocabulary::kBos);
    EXPECT_EQ(de.Decode(t), e.target);
    EXPECT_EQ(de.Decode(l), e.target);
    EXPECT_EQ(l[n], Vocabulary::kEos);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(l[i], t[i + 1]) << "row " << b << " pos " << i;
    for (int64_t i = n + 1; i < 20; ++i) EXPECT_EQ(l[i], Vocabulary::kPad);
    for (int64_t id : s) EXPECT_TRUE(id >= 0 && id < en.size() && id != Vocabulary::kUnk);
    for (int64_t id : l) EXPECT_TRUE(id >= 0 && id < de.size() && id != Vocabulary::kUnk);
  }
}

TEST(NmtDataSourceTest, StepsAreDeterministicInAnyOrder) {
  auto a = *NmtDataSource::Create({.seed = 1, .batch = 4});
  auto b = *NmtDataSource::Create({.seed = 1, .batch = 4});
  exec::Batch a5, b0, b5, b6;
  ASSERT_TRUE(a->Next(5, a5).ok());
  ASSERT_TRUE(b->Next(0, b0).ok());
  ASSERT_TRUE(b->Next(6, b6).ok());
  ASSERT_TRUE(b->Next(5, b5).ok());
  EXPECT_EQ(a5.values, b5.values);
  EXPECT_NE(Get(a5, "src_tokens"), Get(b6, "src_tokens"));
  exec::Batch reused = b6;  // a batch holding other values is overwritten
  ASSERT_TRUE(b->Next(5, reused).ok());
  EXPECT_EQ(reused.values, a5.values);
}

TEST(NmtDataSourceTest, HeldOutStepsUseHeldOutNumbersAndSourceOptionsApply) {
  auto held = *NmtDataSource::Create({.seed = 1, .split = Split::kHeldOut, .batch = 8});
  for (const Example& e : held->Examples(3)) EXPECT_EQ(SplitOf(e.number), Split::kHeldOut);
  auto reversed = *NmtDataSource::Create(
      {.seed = 1, .batch = 2, .source_pad_left = false, .source_reversed = true});
  exec::Batch batch;
  ASSERT_TRUE(reversed->Next(0, batch).ok());
  const Example e = reversed->Examples(0)[0];
  const Ints row = Row(Get(batch, "src_tokens"), 0, 20);
  EXPECT_EQ(row[0], reversed->source_vocabulary().Id(e.source.back()));
  EXPECT_EQ(row[19], Vocabulary::kPad);
}

TEST(NmtDataSourceTest, RejectsBadOptionsAndGraphs) {
  EXPECT_THAT(NmtDataSource::Create({.batch = 0}).status().message(), HasSubstr("batch is 0"));
  EXPECT_THAT(NmtDataSource::Create({.length = 11}).status().message(), HasSubstr("12 tokens"));
  absl::StatusOr<graph::Graph> ocr = graph::zoo::BuildZooModel("ocr", 2);
  ASSERT_TRUE(ocr.ok()) << ocr.status();
  EXPECT_THAT(NmtDataSource::ForGraph(*ocr, {}).status().message(), HasSubstr("\"src_tokens\""));
  auto data = *NmtDataSource::Create({.batch = 2});
  exec::Batch batch;
  EXPECT_THAT(data->Fill(data->Examples(0), batch).ok(), true);
  EXPECT_THAT(data->Fill({}, batch).message(), HasSubstr("needs 2 examples, got 0"));
  EXPECT_THAT(data->Next(-1, batch).message(), HasSubstr("-1"));
}

// The zoo model accepts the batch: one training step runs, and the untrained loss is near
// ln(2000) (uniform predictions over the 2,000 classes).
TEST(NmtDataSourceTest, TheZooModelTrainsOnABatch) {
  absl::StatusOr<graph::Graph> g = graph::zoo::BuildZooModel("nmt", 8);
  ASSERT_TRUE(g.ok()) << g.status();
  auto data = NmtDataSource::ForGraph(*g, {.seed = 2});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ((*data)->options().batch, 8);
  auto program = exec::TrainingProgram::Create(*g, {.seed = 1, .threads = 1});
  ASSERT_TRUE(program.ok()) << program.status();
  exec::Batch batch;
  ASSERT_TRUE((*data)->Next(0, batch).ok());
  ASSERT_TRUE(exec::SetInputs(**program, batch).ok());
  absl::Status step = (*program)->RunStep();
  ASSERT_TRUE(step.ok()) << step;
  EXPECT_NEAR((*program)->Loss(), std::log(2000.0), 0.5);
}

// Greedy decoding with the training graph is exact because the decoder is causal: with the
// classifier's logits made a graph output, the argmax at positions 0..t is the same whether
// tgt_tokens holds the whole target or only its first t+1 tokens.
TEST(NmtDataSourceTest, TheZooDecoderIsCausalSoGreedyDecodingWorks) {
  const int64_t batch = 2, length = 20, classes = 2000;
  graph::Graph g = *graph::zoo::BuildZooModel("nmt", batch);
  const graph::Tensor* logits = nullptr;
  for (const graph::Node& n : g.nodes()) {
    if (n.name.rfind("classifier", 0) == 0) {
      const graph::Tensor& t = g.tensor(n.outputs[0]);
      if (t.shape == graph::Shape{length * batch, classes}) logits = &t;
    }
  }
  ASSERT_NE(logits, nullptr);
  const std::string logits_name = logits->name;
  g.AddOutput(*g.FindTensor(logits_name));
  auto program = *exec::TrainingProgram::Create(g, {.seed = 4, .threads = 1});
  auto data = *NmtDataSource::ForGraph(g, {.seed = 2});
  exec::Batch full;
  ASSERT_TRUE(data->Next(0, full).ok());
  auto predict = [&](const exec::Batch& b) -> absl::StatusOr<Ints> {
    if (absl::Status s = exec::SetInputs(*program, b); !s.ok()) return s;
    if (absl::Status s = program->RunForward(); !s.ok()) return s;
    return PredictedIds(program->Output(logits_name), batch, length, classes);
  };
  const Ints all = *predict(full);
  const int64_t t = 3;
  exec::Batch prefix = full;
  Ints& tokens = prefix.Ints("tgt_tokens");
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = t + 1; i < length; ++i) tokens[b * length + i] = Vocabulary::kPad;
  }
  const Ints part = *predict(prefix);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i <= t; ++i) EXPECT_EQ(part[b * length + i], all[b * length + i]);
  }
  const StepLogitsFn step_logits = [&](const exec::Batch& b, int64_t t,
                                       absl::Span<const int64_t>)
      -> absl::StatusOr<std::vector<float>> {
    if (absl::Status s = exec::SetInputs(*program, b); !s.ok()) return s;
    if (absl::Status s = program->RunForward(); !s.ok()) return s;
    const absl::Span<const float> all = program->Output(logits_name);
    return std::vector<float>(all.begin() + t * batch * classes,
                              all.begin() + (t + 1) * batch * classes);
  };
  absl::StatusOr<std::vector<Ints>> rows = Decode(full, batch, length, {}, step_logits);
  ASSERT_TRUE(rows.ok()) << rows.status();
  // Greedy: fed its own decodes teacher-forced, the model's argmax at each position is the id
  // the decoder chose there.
  exec::Batch fed = full;
  Ints& fed_tokens = fed.Ints("tgt_tokens");
  std::fill(fed_tokens.begin(), fed_tokens.end(), Vocabulary::kPad);
  for (int64_t b = 0; b < batch; ++b) {
    const Ints& row = (*rows)[b];
    ASSERT_GE(row.size(), 1u);
    ASSERT_LE(row.size(), 20u);
    EXPECT_THAT(row, Each(::testing::Lt(classes)));
    fed_tokens[b * length] = Vocabulary::kBos;
    for (size_t i = 0; i + 1 < row.size(); ++i) fed_tokens[b * length + i + 1] = row[i];
  }
  const Ints argmax = *predict(fed);
  for (int64_t b = 0; b < batch; ++b) {
    for (size_t i = 0; i < (*rows)[b].size(); ++i) {
      EXPECT_EQ(argmax[b * length + i], (*rows)[b][i]) << "row " << b << " position " << i;
    }
  }
  absl::StatusOr<std::vector<Ints>> beam = Decode(full, batch, length, {.beam = 2}, step_logits);
  ASSERT_TRUE(beam.ok()) << beam.status();
  ASSERT_EQ(beam->size(), static_cast<size_t>(batch));
  for (const Ints& row : *beam) {
    EXPECT_GE(row.size(), 1u);
    EXPECT_LE(row.size(), 20u);
    EXPECT_THAT(row, Each(::testing::Lt(classes)));
  }
}

}  // namespace
}  // namespace tessera::jobs::nmt
