// Optimizers against torch.optim (values computed with Debian's python3-torch in float64:
// w = [0.5, -1, 2], gradients below, lr 0.1, weight decay 0.01), schedules, clipping.
#include "tessera/exec/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tessera/exec/backend/cpu_backend.h"

namespace tessera::exec {
namespace {

struct Fixture {
  std::unique_ptr<Backend> cpu = MakeCpuBackend(1);
  std::vector<float> w{0.5f, -1.f, 2.f}, g{0, 0, 0};
  std::vector<TrainingProgram::Parameter> params{{.name = "w", .value = {}, .grad = {}}};
  Fixture() {
    params[0].value = absl::MakeSpan(w);
    params[0].grad = absl::MakeSpan(g);
  }
};

std::vector<float> ThreeSteps(OptimizerOptions o) {
  const float grads[3][3] = {{0.1f, -0.2f, 0.3f}, {0.05f, 0.4f, -0.1f}, {-0.3f, 0.2f, 0.f}};
  Fixture f;
  Optimizer opt(o, *f.cpu);
  for (const auto& step : grads) {
    std::copy(step, step + 3, f.g.begin());
    EXPECT_TRUE(opt.Apply(f.params, 0.1).ok());
  }
  return f.w;
}

void ExpectNear(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-6) << i;
}

TEST(OptimizerTest, SgdMatchesTorch) {
  ExpectNear(ThreeSteps({.kind = OptimizerKind::kSgd, .weight_decay = 0.01}),
             {0.5135264895, -1.0370029790000002, 1.974055968});
}

TEST(OptimizerTest, MomentumMatchesTorch) {
  ExpectNear(ThreeSteps({.kind = OptimizerKind::kMomentum, .weight_decay = 0.01}),
             {0.4906403895, -1.0362307789999998, 1.9265935680000001});
}

TEST(OptimizerTest, AdamMatchesTorchAdamW) {
  ExpectNear(ThreeSteps({.kind = OptimizerKind::kAdam, .weight_decay = 0.01}),
             {0.3402990241624869, -0.9857007249701213, 1.8232870578641782});
}

TEST(OptimizerTest, StateRoundTripsAndIsChecked) {
  Fixture f;
  std::fill(f.g.begin(), f.g.end(), 0.5f);
  Optimizer a({.kind = OptimizerKind::kAdam}, *f.cpu);
  ASSERT_TRUE(a.Apply(f.params, 0.1).ok());
  Optimizer b({.kind = OptimizerKind::kAdam}, *f.cpu);
  ASSERT_TRUE(b.SetState(*a.ReadState(), a.updates(), f.params).ok());
  std::vector<float> wa = f.w;
  ASSERT_TRUE(a.Apply(f.params, 0.1).ok());
  const std::vector<float> after_a = f.w;
  std::copy(wa.begin(), wa.end(), f.w.begin());  // the spans point into f.w
  ASSERT_TRUE(b.Apply(f.params, 0.1).ok());
  EXPECT_EQ(f.w, after_a);
  std::map<std::string, Optimizer::State> bad = {{"w", {.slots = {{1.f, 2.f}}}}};
  absl::Status s = b.SetState(bad, 1, f.params);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'w'"), std::string::npos);
}

TEST(ScheduleTest, WarmupThenLinearAndCosineDecay) {
  LearningRateSchedule linear({.base = 1.0, .warmup_steps = 4, .total_steps = 14,
                               .decay = Decay::kLinear});
  EXPECT_DOUBLE_EQ(linear.At(0), 0.25);
  EXPECT_DOUBLE_EQ(linear.At(3), 1.0);
  EXPECT_DOUBLE_EQ(linear.At(4), 1.0);
  EXPECT_DOUBLE_EQ(linear.At(9), 0.5);
  EXPECT_DOUBLE_EQ(linear.At(14), 0.0);
  EXPECT_DOUBLE_EQ(linear.At(100), 0.0);
  LearningRateSchedule cosine({.base = 2.0, .total_steps = 10, .decay = Decay::kCosine,
                               .final_fraction = 0.1});
  EXPECT_DOUBLE_EQ(cosine.At(0), 2.0);
  EXPECT_NEAR(cosine.At(5), 0.2 + 1.8 * 0.5, 1e-12);
  EXPECT_NEAR(cosine.At(10), 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(LearningRateSchedule({.base = 0.3}).At(1000), 0.3);
}

}  // namespace
}  // namespace tessera::exec
