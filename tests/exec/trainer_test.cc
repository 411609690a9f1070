// The trainer: learns a toy task to a stated accuracy; a run stopped (flag, error, SIGKILL) and
// resumed ends with the parameters of an uninterrupted run, bit for bit; a corrupt latest
// checkpoint falls back to the previous one; wrong checkpoints and options are refused by name.
#include "tessera/exec/trainer.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "tessera/base/check.h"
#include "tessera/exec/checkpoint.h"
#include "tessera/graph/builder.h"

namespace tessera::exec {
namespace {

namespace fs = std::filesystem;
using graph::DType;
using graph::GraphBuilder;
using graph::Value;

constexpr int64_t kBatch = 32;

// x[B, 6] -> fc1 (16) -> relu [-> dropout] -> fc2 (5) -> loss; logits are a second output.
graph::Graph Mlp(int64_t hidden = 16, bool dropout = false) {
  GraphBuilder b("toy");
  Value x = b.Input("x", {kBatch, 6});
  Value labels = b.Input("labels", {kBatch}, DType::kI64);
  Value h = b.Linear(x, hidden, "fc1").Relu("relu");
  if (dropout) h = b.Dropout(h, 0.2, "drop");
  Value logits = b.Linear(h, 5, "fc2");
  b.Output(b.SoftmaxCrossEntropy(logits, labels, "loss"));
  b.Output(logits);
  return *std::move(b).Build();
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
  const fs::path dir = fs::path(TESSERA_BINARY_DIR) / "test_tmp" / ("trainer_" + name);
  fs::remove_all(dir);
  return dir.string();
}

std::unique_ptr<TrainingProgram> NewProgram(uint64_t seed, int64_t hidden = 16,
                                            bool dropout = false) {
  auto p = TrainingProgram::Create(Mlp(hidden, dropout), {.seed = seed});
  EXPECT_TRUE(p.ok()) << p.status();
  return *std::move(p);
}

// Options shared by the resume tests: Adam, clipping, warm-up then linear decay.
TrainerOptions ResumeOptions(const std::string& dir) {
  return {.steps = 20, .lr = 0.02, .decay = Decay::kLinear, .warmup_steps = 3,
          .optimizer = {.kind = OptimizerKind::kAdam, .weight_decay = 0.01}, .clip_norm = 0.5,
          .checkpoint_dir = dir, .checkpoint_every = 4, .seed = 11};
}

// Bit-for-bit equality of every parameter.
void ExpectSameBits(TrainingProgram& a, TrainingProgram& b) {
  ASSERT_EQ(a.parameters().size(), b.parameters().size());
  for (size_t i = 0; i < a.parameters().size(); ++i) {
    const auto& pa = a.parameters()[i];
    const auto& pb = b.parameters()[i];
    ASSERT_EQ(pa.value.size(), pb.value.size());
    EXPECT_EQ(std::memcmp(pa.value.data(), pb.value.data(), pa.value.size() * sizeof(float)), 0)
        << pa.name << " differs";
  }
}

// The final checkpoints of two runs hold the same optimizer state.
void ExpectSameOptimizerState(const std::string& dir_a, const std::string& dir_b) {
  auto a = LoadLatestValid(dir_a);
  auto b = LoadLatestValid(dir_b);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->checkpoint.step, b->checkpoint.step);
  EXPECT_EQ(a->checkpoint.optimizer_updates, b->checkpoint.optimizer_updates);
  ASSERT_EQ(a->checkpoint.parameters.size(), b->checkpoint.parameters.size());
  for (size_t i = 0; i < a->checkpoint.parameters.size(); ++i) {
    EXPECT_EQ(a->checkpoint.parameters[i].slots, b->checkpoint.parameters[i].slots);
  }
}

double Accuracy(TrainingProgram& p, DataSource& data, int64_t first_step, int batches) {
  int64_t right = 0, total = 0;
  Batch batch;
  for (int k = 0; k < batches; ++k) {
    EXPECT_TRUE(data.Next(first_step + k, batch).ok());
    EXPECT_TRUE(SetInputs(p, batch).ok());
    EXPECT_TRUE(p.RunForward(false).ok());
    absl::Span<const float> logits = p.Output("fc2");
    const std::vector<int64_t>& labels = std::get<std::vector<int64_t>>(batch.values.at("labels"));
    EXPECT_EQ(logits.size(), static_cast<size_t>(kBatch * 5));
    for (int64_t i = 0; i < kBatch; ++i) {
      const float* row = logits.data() + i * 5;
      right += (std::max_element(row, row + 5) - row) == labels[i];
      ++total;
    }
  }
  return static_cast<double>(right) / static_cast<double>(total);
}

TEST(TrainerTest, LearnsTheToyTaskToNinetyPercent) {
  auto program = NewProgram(1);
  ToyData data(5);
  auto r = Train(*program, data, {.steps = 600, .lr = 0.01, .decay = Decay::kCosine,
                                  .warmup_steps = 20, .optimizer = {.kind = OptimizerKind::kAdam},
                                  .seed = 5});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->steps_run, 600);
  EXPECT_EQ(r->final_step, 600);
  EXPECT_EQ(r->resumed_from_step, 0);
  EXPECT_EQ(r->mean_loss_steps, 20);
  EXPECT_GT(r->first_loss, 1.3);  // about log(5) = 1.61 at the start
  EXPECT_LT(r->mean_loss, 0.3 * r->first_loss) << r->first_loss << " -> " << r->mean_loss;
  EXPECT_GT(r->samples_per_s, 0);
  EXPECT_TRUE(r->last_checkpoint.empty());
  // Held-out batches (steps never trained on): a random guess scores 20%.
  const double accuracy = Accuracy(*program, data, 1000000, 16);
  EXPECT_GE(accuracy, 0.9) << "accuracy " << accuracy;
}

TEST(TrainerTest, TwentyStepsEqualTenStepsResumeAndTenMore) {
  const std::string dir_a = TempDir("twenty_a"), dir_b = TempDir("twenty_b");
  auto a = NewProgram(1);
  ToyData data(3);
  auto ra = Train(*a, data, ResumeOptions(dir_a));
  ASSERT_TRUE(ra.ok()) << ra.status();
  EXPECT_EQ(ra->last_checkpoint, CheckpointPath(dir_a, 20));

  // Stopped by the flag after 10 steps (the learning-rate schedule still spans 20).
  std::atomic<bool> stop{false};
  ToyData stopping(3, [&stop](int64_t step) {
    if (step == 9) stop = true;  // step 9 still runs; the loop stops before step 10
    return absl::OkStatus();
  });
  TrainerOptions first = ResumeOptions(dir_b);
  first.stop = &stop;
  auto b1 = NewProgram(1);
  auto r1 = Train(*b1, stopping, first);
  ASSERT_TRUE(r1.ok()) << r1.status();
  EXPECT_TRUE(r1->stopped);
  EXPECT_EQ(r1->final_step, 10);
  EXPECT_EQ(r1->last_checkpoint, CheckpointPath(dir_b, 10));

  // A new program with other initial weights resumes and runs the other ten.
  auto b2 = NewProgram(99);
  auto r2 = Train(*b2, data, ResumeOptions(dir_b));
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(r2->resumed_from_step, 10);
  EXPECT_EQ(r2->resumed_from, CheckpointPath(dir_b, 10));
  EXPECT_EQ(r2->steps_run, 10);
  EXPECT_EQ(r2->last_loss, ra->last_loss);
  ExpectSameBits(*a, *b2);
  ExpectSameOptimizerState(dir_a, dir_b);
}

TEST(TrainerTest, WithAConstantRateTenStepsThenTwentyEqualTwenty) {
  const std::string dir_a = TempDir("constant_a"), dir_b = TempDir("constant_b");
  TrainerOptions o = {.steps = 20, .lr = 0.05, .optimizer = {.kind = OptimizerKind::kMomentum},
                      .checkpoint_dir = dir_a, .seed = 2};
  ToyData data(4);
  auto a = NewProgram(1);
  ASSERT_TRUE(Train(*a, data, o).ok());
  o.checkpoint_dir = dir_b;
  o.steps = 10;
  auto b1 = NewProgram(1);
  ASSERT_TRUE(Train(*b1, data, o).ok());
  o.steps = 20;
  auto b2 = NewProgram(7);
  auto r = Train(*b2, data, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->resumed_from_step, 10);
  ExpectSameBits(*a, *b2);
  ExpectSameOptimizerState(dir_a, dir_b);
}

TEST(TrainerDeathTest, KilledWithSigkillAndResumedEqualsAnUninterruptedRun) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: no forked thread pools
  const std::string dir_a = TempDir("kill_a"), dir_b = TempDir("kill_b");
  // The child process trains into dir_b and is killed in the middle of step 13 (ckpt-12 saved).
  EXPECT_EXIT(
      {
        auto p = NewProgram(1);
        ToyData dying(3, [](int64_t step) {
          if (step == 13) std::raise(SIGKILL);
          return absl::OkStatus();
        });
        (void)Train(*p, dying, ResumeOptions(dir_b));
        std::exit(0);
      },
      testing::KilledBySignal(SIGKILL), "");
  ASSERT_TRUE(fs::exists(CheckpointPath(dir_b, 12)));
  ASSERT_FALSE(fs::exists(CheckpointPath(dir_b, 16)));
  ToyData data(3);
  auto a = NewProgram(1);
  ASSERT_TRUE(Train(*a, data, ResumeOptions(dir_a)).ok());
  auto b = NewProgram(1);
  auto r = Train(*b, data, ResumeOptions(dir_b));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->resumed_from_step, 12);
  EXPECT_TRUE(r->warnings.empty());
  ExpectSameBits(*a, *b);
  ExpectSameOptimizerState(dir_a, dir_b);
}

TEST(TrainerTest, ACrashedRunResumesFromItsLastCheckpoint) {
  const std::string dir_a = TempDir("crash_a"), dir_b = TempDir("crash_b");
  ToyData failing(3, [](int64_t step) {
    return step == 6 ? absl::UnavailableError("the disk went away") : absl::OkStatus();
  });
  auto b1 = NewProgram(1);
  auto r1 = Train(*b1, failing, ResumeOptions(dir_b));
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(r1.status().message(), "step 6")) << r1.status();
  ToyData data(3);
  auto a = NewProgram(1);
  ASSERT_TRUE(Train(*a, data, ResumeOptions(dir_a)).ok());
  auto b2 = NewProgram(1);
  auto r2 = Train(*b2, data, ResumeOptions(dir_b));
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(r2->resumed_from_step, 4);
  ExpectSameBits(*a, *b2);
}

void FlipByte(const std::string& path, std::streamoff offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x01);
  f.seekp(offset);
  f.write(&c, 1);
}

TEST(TrainerTest, CorruptLatestCheckpointsAreSkippedWithAWarning) {
  const std::string dir_a = TempDir("corrupt_a"), dir_b = TempDir("corrupt_b");
  ToyData data(3);
  TrainerOptions o = ResumeOptions(dir_a);
  o.checkpoint_every = 5;  // keeps ckpt-10, 15 and 20
  auto a = NewProgram(1);
  ASSERT_TRUE(Train(*a, data, o).ok());
  fs::copy(dir_a, dir_b);
  FlipByte(CheckpointPath(dir_b, 20), 300);
  fs::resize_file(CheckpointPath(dir_b, 15), fs::file_size(CheckpointPath(dir_b, 15)) / 2);
  o.checkpoint_dir = dir_b;
  std::ostringstream progress;
  o.progress = &progress;
  auto b = NewProgram(1);
  auto r = Train(*b, data, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->resumed_from_step, 10);
  EXPECT_EQ(r->steps_run, 10);
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_TRUE(absl::StrContains(r->warnings[0], "ckpt-20.tsr")) << r->warnings[0];
  EXPECT_TRUE(absl::StrContains(r->warnings[0], "checksum")) << r->warnings[0];
  EXPECT_TRUE(absl::StrContains(r->warnings[1], "ckpt-15.tsr")) << r->warnings[1];
  EXPECT_TRUE(absl::StrContains(r->warnings[1], "truncated")) << r->warnings[1];
  EXPECT_TRUE(absl::StrContains(progress.str(), "warning: skipped")) << progress.str();
  EXPECT_TRUE(absl::StrContains(progress.str(), "resumed from")) << progress.str();
  ExpectSameBits(*a, *b);
  // The resumed run rewrote the corrupt files.
  auto latest = LoadLatestValid(dir_b);
  ASSERT_TRUE(latest.ok());
  EXPECT_TRUE(latest->warnings.empty());
  EXPECT_EQ(latest->checkpoint.step, 20);
}

TEST(TrainerTest, AnotherModelsCheckpointIsRefusedNamingTheParameter) {
  const std::string dir = TempDir("other_model");
  ToyData data(3);
  TrainerOptions o = ResumeOptions(dir);
  o.steps = 2;
  auto small = NewProgram(1, 16);
  ASSERT_TRUE(Train(*small, data, o).ok());
  auto wide = NewProgram(1, 32);
  auto r = Train(*wide, data, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "'fc1.weight'")) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "ckpt-2.tsr")) << r.status();
}

TEST(TrainerTest, ResumeRefusesAnotherSeedAndAFreshRunRefusesAUsedDirectory) {
  const std::string dir = TempDir("seed");
  ToyData data(3);
  TrainerOptions o = ResumeOptions(dir);
  o.steps = 2;
  auto p = NewProgram(1);
  ASSERT_TRUE(Train(*p, data, o).ok());
  o.steps = 4;
  o.seed = 12;
  auto r = Train(*p, data, o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "seed 11")) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "seed 12")) << r.status();
  o.seed = 11;
  o.resume = false;
  r = Train(*p, data, o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.status().message(), dir)) << r.status();
}

TEST(TrainerTest, AResumedDropoutModelRepeatsItsMasksBitForBit) {
  const std::string dir_a = TempDir("dropout_a"), dir_b = TempDir("dropout_b");
  ToyData data(3);
  TrainerOptions whole = ResumeOptions(dir_a);
  whole.steps = 6;
  auto a = NewProgram(1, 16, /*dropout=*/true);
  ASSERT_TRUE(Train(*a, data, whole).ok());
  TrainerOptions part = ResumeOptions(dir_b);
  part.steps = 4;
  auto b = NewProgram(1, 16, /*dropout=*/true);
  ASSERT_TRUE(Train(*b, data, part).ok());
  part.steps = 6;
  auto c = NewProgram(1, 16, /*dropout=*/true);  // a fresh process: its step counter starts at 0
  auto r = Train(*c, data, part);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->resumed_from_step, 4);
  EXPECT_TRUE(r->warnings.empty());
  ExpectSameBits(*a, *c);
}

TEST(TrainerTest, ANonFiniteLossNamesTheStep) {
  class NanData : public DataSource {
   public:
    absl::Status Next(int64_t step, Batch& batch) override {
      TS_CHECK(inner_.Next(step, batch).ok());
      if (step == 3) batch.Floats("x")[0] = std::numeric_limits<float>::quiet_NaN();
      return absl::OkStatus();
    }
    ToyData inner_{3};
  } nan_data;
  auto p = NewProgram(1);
  auto r = Train(*p, nan_data, {.steps = 10, .lr = 0.01});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "step 3")) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "nan")) << r.status();
}

TEST(TrainerTest, PlainProgressLinesAndBadOptions) {
  ToyData data(3);
  std::ostringstream out;
  auto p = NewProgram(1);
  auto r = Train(*p, data, {.steps = 10, .lr = 0.01, .progress = &out, .log_every = 4});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<std::string> lines = absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << out.str();
  EXPECT_TRUE(absl::StartsWith(lines[0], "step  4/10  loss ")) << lines[0];
  EXPECT_TRUE(absl::StartsWith(lines[1], "step  8/10  loss ")) << lines[1];
  EXPECT_TRUE(absl::StartsWith(lines[2], "step 10/10  loss ")) << lines[2];
  auto bad = Train(*p, data, {.steps = -1});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "steps")) << bad.status();
}

}  // namespace
}  // namespace tessera::exec
