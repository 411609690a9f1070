// The NMT and OCR training jobs (jobs/nmt/nmt_job.h, jobs/ocr/ocr_job.h): their data
// fits their models, evaluation reads the trained parameters (and BatchNorm's running
// statistics), training on the task improves the held-out metrics, and errors name what is
// wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "absl/strings/match.h"
#include "tessera/jobs/nmt/nmt_data_source.h"
#include "tessera/jobs/nmt/nmt_job.h"
#include "tessera/jobs/ocr/ocr_data_source.h"
#include "tessera/jobs/ocr/ocr_job.h"
#include "tessera/exec/optimizer.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/zoo/zoo.h"

namespace tessera::jobs {
namespace {

using Params = std::map<std::string, std::vector<float>>;

double Metric(const jobs::Evaluation& e, const std::string& name) {
  for (const auto& [n, v] : e.metrics) {
    if (n == name) return v;
  }
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

Params ParametersOf(exec::TrainingProgram& program) {
  Params out;
  for (auto& p : program.parameters()) out[p.name].assign(p.value.begin(), p.value.end());
  return out;
}

// `steps` single-worker Adam steps on the job's training data; returns the parameters.
Params Train(const graph::Graph& g, const jobs::TrainingJob& job, int steps, double lr) {
  auto program = exec::TrainingProgram::Create(g, {.seed = 1, .threads = 2});
  EXPECT_TRUE(program.ok()) << program.status();
  auto data = job.TrainingData(g);
  EXPECT_TRUE(data.ok()) << data.status();
  exec::Optimizer adam({.kind = exec::OptimizerKind::kAdam}, (*program)->backend());
  exec::Batch batch;
  for (int s = 0; s < steps; ++s) {
    EXPECT_TRUE((*data)->Next(s, batch).ok());
    EXPECT_TRUE(exec::SetInputs(**program, batch).ok());
    EXPECT_TRUE((*program)->RunStep().ok());
    EXPECT_TRUE(adam.Apply((*program)->parameters(), lr).ok());
  }
  return ParametersOf(**program);
}

TEST(NmtJobTest, EvaluationLossIsTheModelsLossOnTheHeldOutBatch) {
  const graph::Graph g = *graph::zoo::BuildZooModel("nmt", 8);
  auto program = exec::TrainingProgram::Create(g, {.seed = 4, .threads = 2});
  ASSERT_TRUE(program.ok()) << program.status();
  const Params params = ParametersOf(**program);
  // The loss of held-out step 0 computed directly.
  auto held_out = nmt::NmtDataSource::ForGraph(g, {.seed = 1, .split = nmt::Split::kHeldOut});
  ASSERT_TRUE(held_out.ok());
  exec::Batch batch;
  ASSERT_TRUE((*held_out)->Next(0, batch).ok());
  ASSERT_TRUE(exec::SetInputs(**program, batch).ok());
  ASSERT_TRUE((*program)->RunForward().ok());
  const double direct = (*program)->Loss();

  auto job = nmt::MakeNmtJob({.seed = 1});
  auto e = job->Evaluate({&g, &params, nullptr}, {.batches = 1, .show = 3});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NEAR(Metric(*e, "loss"), direct, 1e-5 * direct);
  EXPECT_LT(Metric(*e, "token_accuracy"), 0.2);  // an untrained model
  EXPECT_EQ(e->samples.size(), 3u);
  EXPECT_TRUE(absl::StrContains(e->samples[0], " -> ")) << e->samples[0];
}

TEST(NmtJobTest, TrainingOnTheTaskRaisesHeldOutAccuracy) {
  const graph::Graph g = *graph::zoo::BuildZooModel("nmt", 16);
  auto job = nmt::MakeNmtJob({.seed = 1});
  const Params fresh = Train(g, *job, 0, 0);
  const Params trained = Train(g, *job, 40, 3e-3);
  auto before = job->Evaluate({&g, &fresh, nullptr}, {.batches = 2});
  auto after = job->Evaluate({&g, &trained, nullptr}, {.batches = 2});
  ASSERT_TRUE(before.ok() && after.ok()) << after.status();
  RecordProperty("accuracy_before", std::to_string(Metric(*before, "token_accuracy")));
  RecordProperty("accuracy_after", std::to_string(Metric(*after, "token_accuracy")));
  RecordProperty("loss_after", std::to_string(Metric(*after, "loss")));
  EXPECT_LT(Metric(*after, "loss"), Metric(*before, "loss") - 1.0);
  EXPECT_GT(Metric(*after, "token_accuracy"), Metric(*before, "token_accuracy") + 0.2);
  EXPECT_GE(Metric(*after, "bleu"), 0.0);
  EXPECT_LE(Metric(*after, "bleu"), 1.0);
}

TEST(NmtJobTest, ErrorsNameTheMissingPieces) {
  auto job = nmt::MakeNmtJob({});
  const graph::Graph ocr = *graph::zoo::BuildZooModel("ocr", 2);
  auto data = job->TrainingData(ocr);
  ASSERT_FALSE(data.ok());
  EXPECT_TRUE(absl::StrContains(data.status().message(), "src_tokens")) << data.status();
  const graph::Graph g = *graph::zoo::BuildZooModel("nmt", 2);
  const Params empty;
  auto e = job->Evaluate({&g, &empty, nullptr}, {.batches = 1});
  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(absl::StrContains(e.status().message(), "encoder.embedding.weight")) << e.status();
}

TEST(OcrJobTest, EvaluationUsesTheRunningStatisticsAndWritesSamples) {
  const graph::Graph g = *graph::zoo::BuildZooModel("ocr", 4);
  auto program = exec::TrainingProgram::Create(g, {.seed = 2, .threads = 2});
  ASSERT_TRUE(program.ok()) << program.status();
  const Params params = ParametersOf(**program);
  auto job = ocr::MakeOcrJob({.seed = 1});
  const std::string dir = testing::TempDir() + "/ocr_job_samples";
  std::filesystem::remove_all(dir);
  auto plain = job->Evaluate({&g, &params, nullptr},
                             {.batches = 1, .show = 2, .samples_dir = dir});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->samples.size(), 2u);
  EXPECT_FALSE(plain->files.empty());
  for (const std::string& f : plain->files) EXPECT_TRUE(std::filesystem::exists(f)) << f;
  const double accuracy = Metric(*plain, "char_accuracy");
  EXPECT_GE(accuracy, 0.0);
  EXPECT_LE(accuracy, 1.0);
  // Running variances 100x larger change what evaluation computes: they are used.
  Params buffers;
  for (const graph::Tensor& t : g.tensors()) {
    if (t.role == graph::TensorRole::kConstant && absl::StrContains(t.name, "running_var")) {
      buffers[t.name].assign(graph::NumElements(t.shape), 100.f);
    }
  }
  ASSERT_FALSE(buffers.empty());
  auto scaled = job->Evaluate({&g, &params, &buffers}, {.batches = 1});
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  EXPECT_NE(Metric(*scaled, "loss"), Metric(*plain, "loss"));
}

}  // namespace
}  // namespace tessera::jobs
