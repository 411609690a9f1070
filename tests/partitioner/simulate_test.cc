// The step simulator and the memory model on hand-built problems.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tessera/costmodel/measured_cost_model.h"
#include "tessera/partitioner/simulate.h"
#include "fake_cost_model.h"

namespace tessera::partitioner {
namespace {

Layer OneOptionLayer(const std::string& name, double sync_bytes) {
  Layer l{.name = name, .op = "Gemm", .kind = LayerKind::kDense};
  l.options.push_back({.forward_compute_s = 1, .backward_compute_s = 2, .sync_bytes = sync_bytes,
                       .bucketed = true});
  return l;
}

// Three layers (forward 1 s, backward 2 s each); gradients 500, 500, 100 bytes;
// first bucket 100 bytes, then 1000; all-reduce 2 ms per byte.
TEST(SimulateTest, BucketsOverlapBackwardAndExposeTheRest) {
  testing::FakeCostModel fake;
  fake.seconds_per_byte[0] = 2e-3;
  Problem p;
  p.options = {.devices = 2, .buckets = {.first_bytes = 100, .bytes = 1000}};
  p.comm = MakeCommContext(&fake, 2);
  p.layers = {OneOptionLayer("a", 500), OneOptionLayer("b", 500), OneOptionLayer("c", 100)};
  const Simulation s = Simulate(p, {0, 0, 0}, 1 << 30, true);
  // Forward ends at 3. Backward: c ends at 5 -> bucket 0 (100 B, 0.2 s) on [5, 5.2];
  // b ends at 7 (500 B open); a ends at 9 -> bucket 1 (1000 B, 2 s) on [9, 11].
  EXPECT_DOUBLE_EQ(s.step.step_time_s, 11);
  EXPECT_DOUBLE_EQ(s.step.comm_s, 2.2);
  EXPECT_DOUBLE_EQ(s.step.exposed_comm_s, 2);
  EXPECT_DOUBLE_EQ(s.step.compute_s, 9);
  int comm_events = 0;
  for (const TimelineEvent& e : s.timeline) {
    if (e.lane == "comm") {
      ++comm_events;
      EXPECT_TRUE(e.start_s == 5 || e.start_s == 9) << e.name << " at " << e.start_s;
    }
  }
  EXPECT_EQ(comm_events, 2);
}

// The same step on devices whose collectives take their compute: bucket 0 on [5, 5.2] overlaps
// b's backward, which loses slowdown x 0.2 s; everything after it moves by as much.
TEST(SimulateTest, OverlappedCollectivesSlowComputeByTheOverlapSlowdown) {
  for (double slowdown : {1.0, 2.0}) {
    testing::FakeCostModel fake;
    fake.seconds_per_byte[0] = 2e-3;
    fake.overlap_slowdown = slowdown;
    Problem p;
    p.options = {.devices = 2, .buckets = {.first_bytes = 100, .bytes = 1000}};
    p.comm = MakeCommContext(&fake, 2);
    p.layers = {OneOptionLayer("a", 500), OneOptionLayer("b", 500), OneOptionLayer("c", 100)};
    const Simulation s = Simulate(p, {0, 0, 0}, 1 << 30, true);
    const double lost = 0.2 * slowdown;
    EXPECT_DOUBLE_EQ(s.step.step_time_s, 11 + lost) << slowdown;
    EXPECT_DOUBLE_EQ(s.step.compute_s, 9 + lost) << slowdown;
    EXPECT_DOUBLE_EQ(s.step.comm_s, 2.2) << slowdown;
    EXPECT_DOUBLE_EQ(s.step.exposed_comm_s, 2) << slowdown;  // bucket 1 starts after backward
  }
}

// The same three layers, a and b with two gradients each (weight and bias), c with `c_params`:
// a bucket of two or more gradients is copied into a fused buffer before its all-reduce and
// back after backward (comm/gradient_buckets.h), here at the measured 1 ms per byte.
Problem CopiedBuckets(testing::FakeCostModel& fake, const costmodel::CostModel& cost,
                      size_t c_params) {
  fake.seconds_per_byte[0] = 2e-3;
  Problem p;
  p.options = {.devices = 2, .buckets = {.first_bytes = 100, .bytes = 1000}};
  p.comm = MakeCommContext(&cost, 2);
  p.layers = {OneOptionLayer("a", 500), OneOptionLayer("b", 500), OneOptionLayer("c", 100)};
  p.layers[0].param_names = {"a.w", "a.b"};
  p.layers[1].param_names = {"b.w", "b.b"};
  for (size_t k = 0; k < c_params; ++k) p.layers[2].param_names.push_back("c." + std::to_string(k));
  return p;
}

// Bucket copies measured at 1 ms per byte, the rest as the fake prices it.
costmodel::MeasuredCostModel CopyRate(const testing::FakeCostModel& fake) {
  return costmodel::MeasuredCostModel(fake, {.bucket_copy_s_per_byte = 1e-3});
}

TEST(SimulateTest, FusedBucketsAreCopiedInBeforeTheAllReduceAndBackAfterBackward) {
  testing::FakeCostModel fake;
  const costmodel::MeasuredCostModel cost = CopyRate(fake);
  const Simulation s = Simulate(CopiedBuckets(fake, cost, 2), {0, 0, 0}, 1 << 30, true);
  // Bucket 0 (c, 100 B): copy 0.1 + all-reduce 0.2 on [5, 5.3]. Bucket 1 (a and b, 1000 B):
  // copy 1 + all-reduce 2 on [9, 12]. Backward ends at 9: bucket 0 copied back on [9, 9.1],
  // bucket 1 once its all-reduce ends, on [12, 13].
  EXPECT_DOUBLE_EQ(s.step.step_time_s, 13);
  EXPECT_DOUBLE_EQ(s.step.compute_s, 9);
  EXPECT_DOUBLE_EQ(s.step.comm_s, 0.3 + 3 + 1.1);
  EXPECT_DOUBLE_EQ(s.step.exposed_comm_s, 4);
  std::vector<std::pair<double, double>> copy_back;
  for (const TimelineEvent& e : s.timeline) {
    if (e.name.find("copy-back") != std::string::npos) copy_back.push_back({e.start_s, e.duration_s});
  }
  ASSERT_EQ(copy_back.size(), 2u);
  EXPECT_DOUBLE_EQ(copy_back[0].first, 9);
  EXPECT_DOUBLE_EQ(copy_back[0].second, 0.1);
  EXPECT_DOUBLE_EQ(copy_back[1].first, 12);
  EXPECT_DOUBLE_EQ(copy_back[1].second, 1);
}

TEST(SimulateTest, ABucketOfOneGradientIsReducedInPlace) {
  testing::FakeCostModel fake;
  const costmodel::MeasuredCostModel cost = CopyRate(fake);
  const Simulation s = Simulate(CopiedBuckets(fake, cost, 1), {0, 0, 0}, 1 << 30, false);
  // Bucket 0 holds c's one gradient: no copies, [5, 5.2]; bucket 1 as before, [9, 12] + [12, 13].
  EXPECT_DOUBLE_EQ(s.step.step_time_s, 13);
  EXPECT_DOUBLE_EQ(s.step.comm_s, 0.2 + 3 + 1);
  // Without a measured copy rate the fake's copies (no FLOPs) take no time: the old step.
  Problem p = CopiedBuckets(fake, fake, 2);
  EXPECT_DOUBLE_EQ(Simulate(p, {0, 0, 0}, 1 << 30, false).step.step_time_s, 11);
}

TEST(SimulateTest, AMeasuredUpdatePricesTheStepsUpdateForItsOptimizerOnly) {
  testing::FakeCostModel fake;
  Problem p = CopiedBuckets(fake, fake, 1);  // no measured copies: they take no time
  for (Layer& l : p.layers) l.options[0].param_bytes = 1000;
  p.options.optimizer = costmodel::OptimizerKind::kAdam;
  const double modelled = Simulate(p, {0, 0, 0}, 1 << 30, false).step.step_time_s;
  EXPECT_GT(modelled, 11);  // the fake prices Adam's FLOPs

  costmodel::MeasuredOpTimes times;
  times.update = costmodel::MeasuredUpdate{.optimizer = costmodel::OptimizerKind::kAdam,
                                           .seconds_per_param_byte = 1e-3};
  const costmodel::MeasuredCostModel adam(fake, times);
  p.comm = MakeCommContext(&adam, 2);
  const Simulation measured = Simulate(p, {0, 0, 0}, 1 << 30, false);
  EXPECT_DOUBLE_EQ(measured.step.step_time_s, 11 + 3);  // 3000 bytes of parameters
  EXPECT_DOUBLE_EQ(measured.step.compute_s, 9 + 3);

  // Timed for another optimizer: not used.
  times.update->optimizer = costmodel::OptimizerKind::kSgd;
  const costmodel::MeasuredCostModel sgd(fake, times);
  p.comm = MakeCommContext(&sgd, 2);
  EXPECT_DOUBLE_EQ(Simulate(p, {0, 0, 0}, 1 << 30, false).step.step_time_s, modelled);
}

TEST(SimulateTest, MemoryPerDeviceWithEachOptimizer) {
  Problem p;
  Layer l{.node = 0, .name = "fc", .kind = LayerKind::kDense};
  l.options.push_back({.sync_bytes = 1000, .bucketed = true, .param_bytes = 1000,
                       .activation_bytes = 300, .workspace_bytes = 50});
  p.layers = {l};
  p.num_nodes = 1;
  p.forward_step = {0};
  p.backward_step = {1};
  // Lifetimes of the whole batch: the data input (200 B, step 0), fc's output (600 B, steps
  // 0-1) and its gradient (600 B, step 1). Split over 2 devices: 100 + 300 live at step 0,
  // 300 + 300 at step 1: the activation peak is 600.
  p.lifetimes.alignment = 1;
  p.lifetimes.values = {
      {.name = "x", .kind = memory::ValueKind::kDataInput, .node = 0, .bytes = 200,
       .first_step = 0, .last_step = 0},
      {.name = "fc", .kind = memory::ValueKind::kActivation, .node = 0, .bytes = 600,
       .first_step = 0, .last_step = 1},
      {.name = "grad(fc)", .kind = memory::ValueKind::kActivationGradient, .node = 0,
       .bytes = 600, .first_step = 1, .last_step = 1}};
  using costmodel::OptimizerKind;
  const std::pair<OptimizerKind, int64_t> cases[] = {
      {OptimizerKind::kSgd, 0}, {OptimizerKind::kMomentum, 1000}, {OptimizerKind::kAdam, 2000}};
  for (const auto& [optimizer, state] : cases) {
    p.options = {.devices = 2, .optimizer = optimizer,
                 .buckets = {.first_bytes = 100, .bytes = 400}};
    const MemoryPrediction m = PredictMemory(p, {0}, 4000);
    // params + grads + state + activation peak + 2 buckets of 400
    const int64_t expected = 1000 + 1000 + state + 600 + 800;
    EXPECT_EQ(m.peak_bytes.size(), 2u);
    EXPECT_EQ(m.peak_bytes[0], expected) << costmodel::OptimizerName(optimizer);
    EXPECT_EQ(m.activation_bytes, 600);
    EXPECT_EQ(m.optimizer_bytes, state);
    EXPECT_EQ(m.comm_buffer_bytes, 800);
    EXPECT_EQ(m.fits, expected <= 4000);
  }
}

}  // namespace
}  // namespace tessera::partitioner
