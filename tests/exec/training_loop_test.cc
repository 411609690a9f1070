// The one training loop (TrainHybrid, exec/hybrid_worker.h) on 1 and 2 thread workers: it
// learns a toy task with a warm-up and a cosine schedule; a run stopped (flag, SIGKILL, an error)
// and resumed ends with the parameters of an uninterrupted run, bit for bit, under warm-up,
// linear decay and clipping; a non-finite loss names its step and leaves the parameters as
// they were; progress lines and bad options.
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "tessera/base/check.h"
#include "tessera/exec/hybrid_training.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/builder.h"
#include "two_layer_mlp.h"

namespace tessera::exec {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBatch = 32;

// x[B, 6] -> fc1 (16) -> relu -> fc2 (5) -> loss; logits are a second output.
graph::Graph Mlp() {
  return fixtures::TwoLayerMlp({.name = "toy", .batch = kBatch, .classes = 5, .relu = "relu",
                               .logits_output = true});
}

// The toy task: x uniform in [-1, 1]^6, the label is the index of the largest of x[0..4].
// Step s's batch depends only on (seed, s). `on_step` runs first (to stop, fail or die).
class ToyData : public DataSource {
 public:
  explicit ToyData(uint64_t seed, std::function<absl::Status(int64_t)> on_step = nullptr)
      : seed_(seed), on_step_(std::move(on_step)) {}
  absl::Status Next(int64_t step, Batch& batch) override {
    if (on_step_) {
      if (absl::Status s = on_step_(step); !s.ok()) return s;
    }
    std::mt19937_64 rng(seed_ * 1000003 + static_cast<uint64_t>(step));
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float>& x = batch.Floats("x");
    std::vector<int64_t>& labels = batch.Ints("labels");
    x.resize(kBatch * 6);
    labels.resize(kBatch);
    for (int64_t i = 0; i < kBatch; ++i) {
      for (int j = 0; j < 6; ++j) x[i * 6 + j] = u(rng);
      labels[i] = std::max_element(&x[i * 6], &x[i * 6 + 5]) - &x[i * 6];
    }
    return absl::OkStatus();
  }

 private:
  uint64_t seed_;
  std::function<absl::Status(int64_t)> on_step_;
};

std::string TempDir(const std::string& name) {
  const fs::path dir = fs::path(TESSERA_BINARY_DIR) / "test_tmp" / ("loop_" + name);
  fs::remove_all(dir);
  return dir.string();
}

// Trains Mlp() on `workers` threads (a model-parallel plan on 2, so that clipping and the
// checkpoints span shards) with the data `make_data` gives each rank.
absl::StatusOr<HybridRun> TrainToy(int workers, const HybridOptions& worker,
                              std::function<std::unique_ptr<DataSource>()> make_data) {
  const graph::Graph g = Mlp();
  partitioner::PlanOptions po{.planner = workers > 1 ? partitioner::PlannerKind::kModel
                                                     : partitioner::PlannerKind::kData};
  absl::StatusOr<partitioner::Plan> plan = PlanForWorkers(g, workers, "v100-vpc32", po);
  if (!plan.ok()) return plan.status();
  // No prefetching: the toy data's hooks act during their step (stop, fail, die), which a
  // source read ahead would move earlier.
  HybridRunOptions o{.workers = workers, .timeout = absl::Seconds(20), .worker = worker,
                     .prefetch = 0};
  o.data_source = [make_data](const graph::Graph&) -> absl::StatusOr<std::unique_ptr<DataSource>> {
    return make_data();
  };
  return TrainHybrid(g, *plan, o);
}

std::function<std::unique_ptr<DataSource>()> Toy(
    uint64_t seed, std::function<absl::Status(int64_t)> on_step = nullptr) {
  return [seed, on_step] { return std::make_unique<ToyData>(seed, on_step); };
}

// Adam with weight decay, clipping that acts, a warm-up then linear decay, checkpoints every 4.
HybridOptions ResumeOptions(const std::string& dir) {
  return {.steps = 20, .seed = 11, .lr = 0.02, .decay = Decay::kLinear, .warmup_steps = 3,
          .optimizer = {.kind = OptimizerKind::kAdam, .weight_decay = 0.01}, .clip_norm = 0.5,
          .checkpoint_dir = dir, .checkpoint_every = 4};
}

double Accuracy(const HybridRun& run, DataSource& data, int64_t first_step, int batches) {
  auto program = TrainingProgram::Create(Mlp(), {.threads = 1});
  TS_CHECK(program.ok()) << program.status();
  for (const auto& [name, values] : run.parameters) {
    TS_CHECK((*program)->SetPersistentValue(name, values).ok()) << name;
  }
  int64_t right = 0, total = 0;
  Batch batch;
  for (int k = 0; k < batches; ++k) {
    TS_CHECK(data.Next(first_step + k, batch).ok());
    TS_CHECK(SetInputs(**program, batch).ok());
    TS_CHECK((*program)->RunForward(false).ok());
    absl::Span<const float> logits = (*program)->Output("fc2");
    const std::vector<int64_t>& labels = batch.Ints("labels");
    for (int64_t i = 0; i < kBatch; ++i) {
      const float* row = logits.data() + i * 5;
      right += (std::max_element(row, row + 5) - row) == labels[i];
      ++total;
    }
  }
  return static_cast<double>(right) / static_cast<double>(total);
}

TEST(TrainingLoopTest, LearnsTheToyTaskWithWarmupAndCosineDecay) {
  for (int workers : {1, 2}) {
    auto r = TrainToy(workers,
                      {.steps = 600, .seed = 5, .lr = 0.01, .decay = Decay::kCosine,
                       .warmup_steps = 20, .optimizer = {.kind = OptimizerKind::kAdam}},
                      Toy(5));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->report.losses.size(), 600u);
    const double first = r->report.losses.front();
    double last = 0;
    for (size_t i = 580; i < 600; ++i) last += r->report.losses[i] / 20;
    EXPECT_GT(first, 1.3) << workers;  // about log(5) = 1.61 at the start
    EXPECT_LT(last, 0.3 * first) << workers << ": " << first << " -> " << last;
    ToyData held_out(5);  // steps never trained on: a random guess scores 20%
    EXPECT_GE(Accuracy(*r, held_out, 1000000, 16), 0.9) << workers;
  }
}

TEST(TrainingLoopTest, StoppedByTheFlagAndResumedEqualsAnUninterruptedRun) {
  for (int workers : {1, 2}) {
    const std::string dir_a = TempDir("stop_a"), dir_b = TempDir("stop_b");
    auto a = TrainToy(workers, ResumeOptions(dir_a), Toy(3));
    ASSERT_TRUE(a.ok()) << a.status();
    // The flag is raised during step 9: every rank ends after it (the schedule still spans 20).
    std::atomic<bool> stop{false};
    HybridOptions first = ResumeOptions(dir_b);
    first.stop = &stop;
    auto b1 = TrainToy(workers, first, Toy(3, [&stop](int64_t step) {
      if (step == 9) stop = true;
      return absl::OkStatus();
    }));
    ASSERT_TRUE(b1.ok()) << b1.status();
    EXPECT_TRUE(b1->stopped);
    EXPECT_EQ(b1->report.losses.size(), 10u);
    EXPECT_TRUE(fs::exists(dir_b + "/rank-0/ckpt-10.tsr"));
    auto b2 = TrainToy(workers, ResumeOptions(dir_b), Toy(3));
    ASSERT_TRUE(b2.ok()) << b2.status();
    EXPECT_EQ(b2->resumed_from_step, 10);
    EXPECT_FALSE(b2->stopped);
    EXPECT_EQ(b2->report.losses.back(), a->report.losses.back());
    EXPECT_EQ(b2->parameters, a->parameters) << workers;  // bit for bit
  }
}

TEST(TrainingLoopDeathTest, KilledWithSigkillAndResumedEqualsAnUninterruptedRun) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: no forked thread pools
  const std::string dir_a = TempDir("kill_a"), dir_b = TempDir("kill_b");
  // The child trains into dir_b and dies in the middle of step 13 (shards of step 12 saved).
  EXPECT_EXIT(
      {
        (void)TrainToy(2, ResumeOptions(dir_b), Toy(3, [](int64_t step) {
          if (step == 13) std::raise(SIGKILL);
          return absl::OkStatus();
        }));
        std::exit(0);
      },
      testing::KilledBySignal(SIGKILL), "");
  ASSERT_TRUE(fs::exists(dir_b + "/rank-1/ckpt-12.tsr"));
  ASSERT_FALSE(fs::exists(dir_b + "/rank-0/ckpt-16.tsr"));
  auto a = TrainToy(2, ResumeOptions(dir_a), Toy(3));
  auto b = TrainToy(2, ResumeOptions(dir_b), Toy(3));
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << " " << b.status();
  EXPECT_EQ(b->resumed_from_step, 12);
  EXPECT_TRUE(b->warnings.empty());
  EXPECT_EQ(b->parameters, a->parameters);
}

TEST(TrainingLoopTest, ARunThatFailedResumesFromItsLastCheckpoint) {
  const std::string dir_a = TempDir("fail_a"), dir_b = TempDir("fail_b");
  auto b1 = TrainToy(2, ResumeOptions(dir_b), Toy(3, [](int64_t step) {
    return step == 6 ? absl::UnavailableError("the disk went away") : absl::OkStatus();
  }));
  ASSERT_FALSE(b1.ok());
  EXPECT_EQ(b1.status().code(), absl::StatusCode::kUnavailable);
  auto a = TrainToy(2, ResumeOptions(dir_a), Toy(3));
  auto b2 = TrainToy(2, ResumeOptions(dir_b), Toy(3));
  ASSERT_TRUE(a.ok() && b2.ok()) << a.status() << " " << b2.status();
  EXPECT_EQ(b2->resumed_from_step, 4);
  EXPECT_EQ(b2->parameters, a->parameters);
}

// NaN in one input value at step 3, which the loss does not show: with or without clipping,
// every rank stops with the same error naming the step, and nothing of step 3 is applied.
TEST(TrainingLoopTest, NonFiniteGradientsNameTheStepAndAreNotApplied) {
  for (double clip : {0.0, 1.0}) {
    const auto nan_at = [](int64_t at) {
      return [at]() -> std::unique_ptr<DataSource> {
        class NanData : public ToyData {
         public:
          explicit NanData(int64_t at) : ToyData(3), at_(at) {}
          absl::Status Next(int64_t step, Batch& batch) override {
            TS_CHECK(ToyData::Next(step, batch).ok());
            if (step == at_) batch.Floats("x")[0] = std::numeric_limits<float>::quiet_NaN();
            return absl::OkStatus();
          }
          int64_t at_;
        };
        return std::make_unique<NanData>(at);
      };
    };
    const std::string dir = TempDir("nan");
    HybridOptions o{.steps = 10, .lr = 0.01, .clip_norm = clip, .checkpoint_dir = dir,
                    .checkpoint_every = 1};
    auto r = TrainToy(2, o, nan_at(3));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(r.status().message(), "step 3")) << r.status();
    // ReLU maps the NaN to 0 in the forward pass: the loss stays finite, the gradients do not.
    EXPECT_TRUE(absl::StrContains(r.status().message(), "NaN or infinite")) << r.status();
    // Steps 0-2 were saved; step 3 was not applied, so nothing of it was saved.
    EXPECT_TRUE(fs::exists(dir + "/rank-0/ckpt-3.tsr"));
    EXPECT_FALSE(fs::exists(dir + "/rank-0/ckpt-4.tsr"));
  }
}

TEST(TrainingLoopTest, PlainProgressLinesAndBadOptions) {
  std::ostringstream out;
  auto r = TrainToy(1, {.steps = 10, .lr = 0.01, .progress = &out, .log_every = 4}, Toy(3));
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<std::string> lines = absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << out.str();
  EXPECT_TRUE(absl::StartsWith(lines[0], "step  4/10  loss ")) << lines[0];
  EXPECT_TRUE(absl::StartsWith(lines[1], "step  8/10  loss ")) << lines[1];
  EXPECT_TRUE(absl::StartsWith(lines[2], "step 10/10  loss ")) << lines[2];
  auto bad = TrainToy(1, {.steps = 10, .clip_norm = -1}, Toy(3));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "clip_norm")) << bad.status();
}

}  // namespace
}  // namespace tessera::exec
