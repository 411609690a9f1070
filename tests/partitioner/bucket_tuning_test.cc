// Gradient-bucket tuning: on hand-built steps whose fastest buckets are known, against every
// candidate simulated one by one, within memory, deterministic; and PlanModel's override.
#include "tessera/partitioner/bucket_tuning.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tessera/partitioner/planner.h"
#include "tessera/partitioner/simulate.h"
#include "fake_cost_model.h"
#include "test_mlp.h"

namespace tessera::partitioner {
namespace {

constexpr int64_t kMiB = 1 << 20;

// Three layers of one gradient of 1 MiB each (forward 1 s, backward 2 s); all-reduce 1 s per
// MiB plus `latency` per collective; the update and the bucket copies take no time.
Problem ThreeLayers(testing::FakeCostModel& fake, double latency) {
  fake.seconds_per_flop = 0;
  fake.seconds_per_byte[0] = 1.0 / kMiB;
  fake.collective_latency_s = latency;
  Problem p;
  p.options = {.devices = 2};
  p.comm = MakeCommContext(&fake, 2);
  for (const char* name : {"a", "b", "c"}) {
    Layer l{.name = name, .op = "Gemm", .kind = LayerKind::kDense, .owned_param_sizes = {kMiB}};
    l.options.push_back({.forward_compute_s = 1, .backward_compute_s = 2,
                         .sync_bytes = static_cast<double>(kMiB), .bucketed = true,
                         .param_bytes = kMiB});
    p.layers.push_back(l);
  }
  return p;
}

double StepWith(Problem p, const BucketSizes& sizes) {
  p.options.buckets = sizes;
  return SimulateStep(p, {0, 0, 0}, false).step.step_time_s;
}

// Without latency a's gradient is best sent alone as soon as a is done, at 9: its all-reduce
// ends at 10. Three buckets (c's on [5, 6], b's on [7, 8], a's on [9, 10]) and two (c and b
// together on [7, 9], then a's) both end there; fewer collectives win the tie, and the smallest
// sizes that form those two buckets are 2 MiB + 2 MiB. One bucket of all three ends at 12; the
// old fixed 1 MiB + 25 MiB sends c, then b and a together (11).
TEST(BucketTuningTest, BandwidthBoundStepsSendTheLastGradientAlone) {
  testing::FakeCostModel fake;
  const Problem p = ThreeLayers(fake, 0);
  const BucketSizes best = TuneBuckets(p, {0, 0, 0}, 1LL << 40, DefaultBucketCandidates());
  EXPECT_TRUE(best.tuned);
  EXPECT_EQ(best.count, 2);
  EXPECT_EQ(best.first_bytes, 2 * kMiB);
  EXPECT_EQ(best.bytes, 2 * kMiB);
  EXPECT_DOUBLE_EQ(StepWith(p, best), 10);
  EXPECT_DOUBLE_EQ(StepWith(p, {.first_bytes = kMiB, .bytes = kMiB}), 10);
  EXPECT_DOUBLE_EQ(StepWith(p, {.first_bytes = kMiB, .bytes = 25 * kMiB}), 11);
  EXPECT_DOUBLE_EQ(StepWith(p, {.first_bytes = 4 * kMiB, .bytes = 4 * kMiB}), 12);
}

// With 5 s per collective one bucket of all three, launched when a is done at 9, ends at
// 9 + 5 + 3 = 17; three buckets queue on the channel: c's on [5, 11], b's on [11, 17], a's on
// [17, 23]. One bucket needs a first bucket of at least 3 MiB: 4 MiB + 4 MiB, the smallest.
TEST(BucketTuningTest, LatencyBoundStepsSendOneBucket) {
  testing::FakeCostModel fake;
  const Problem p = ThreeLayers(fake, 5);
  const BucketSizes best = TuneBuckets(p, {0, 0, 0}, 1LL << 40, DefaultBucketCandidates());
  EXPECT_EQ(best.count, 1);
  EXPECT_EQ(best.first_bytes, 4 * kMiB);
  EXPECT_EQ(best.bytes, 4 * kMiB);
  EXPECT_DOUBLE_EQ(StepWith(p, best), 17);
  EXPECT_DOUBLE_EQ(StepWith(p, {.first_bytes = 256 << 10, .bytes = 256 << 10}), 23);
}

// No candidate simulates faster than the one chosen, and the choice is the same every time.
TEST(BucketTuningTest, NoCandidateIsFasterAndTheChoiceIsDeterministic) {
  for (double latency : {0.0, 0.3, 1.0, 5.0}) {
    testing::FakeCostModel fake;
    const Problem p = ThreeLayers(fake, latency);
    const BucketCandidates grid = DefaultBucketCandidates();
    const BucketSizes best = TuneBuckets(p, {0, 0, 0}, 1LL << 40, grid);
    const double best_s = StepWith(p, best);
    for (int64_t bytes : grid.bytes) {
      for (int64_t first : grid.first_bytes) {
        if (first > bytes) continue;
        EXPECT_GE(StepWith(p, {.first_bytes = first, .bytes = bytes}), best_s * (1 - 1e-12))
            << "latency " << latency << ": " << first << " + " << bytes;
      }
    }
    const BucketSizes again = TuneBuckets(p, {0, 0, 0}, 1LL << 40, grid);
    EXPECT_EQ(again.first_bytes, best.first_bytes);
    EXPECT_EQ(again.bytes, best.bytes);
    EXPECT_EQ(again.count, best.count);
  }
}

// Memory: the two bucket buffers are 2 x the largest size (at most the 3 MiB of gradients).
// When only 2 x 1 MiB of buffers fit, the latency-bound step cannot have its one big bucket.
TEST(BucketTuningTest, SizesWhoseBuffersDoNotFitAreLeftOut) {
  testing::FakeCostModel fake;
  Problem p = ThreeLayers(fake, 5);
  p.options.buckets = {.first_bytes = 4 * kMiB, .bytes = 4 * kMiB};
  EXPECT_EQ(PredictMemory(p, {0, 0, 0}, 0).comm_buffer_bytes, 2 * 3 * kMiB);
  p.options.buckets = {.first_bytes = 256 << 10, .bytes = kMiB};
  const MemoryPrediction small = PredictMemory(p, {0, 0, 0}, 0);
  EXPECT_EQ(small.comm_buffer_bytes, 2 * kMiB);
  const int64_t capacity = small.peak_bytes[0];  // fits buffers of 1 MiB, no larger
  const BucketSizes best = TuneBuckets(p, {0, 0, 0}, capacity, DefaultBucketCandidates());
  EXPECT_LE(std::max(best.first_bytes, best.bytes), kMiB);
  EXPECT_EQ(best.count, 3);
  // Nothing fits at all: the fastest anyway.
  EXPECT_EQ(TuneBuckets(p, {0, 0, 0}, 1, DefaultBucketCandidates()).count, 1);
}

// PlanModel: explicit sizes are kept (not tuned); one explicit size fixes that one only; the
// plan's memory holds the chosen sizes' buffers; planning twice gives the same buckets.
TEST(BucketTuningTest, PlanModelTunesUnlessGivenAndAccountsForTheBuffers) {
  testing::FakeCostModel fake;
  fake.collective_latency_s = 1e-3;
  const graph::Graph g = testing::Mlp(16);
  const costmodel::ClusterSpec cluster = testing::MlpCluster(int64_t{16} << 30);
  const PlanOptions data{.devices = 4, .planner = PlannerKind::kData};
  absl::StatusOr<Plan> tuned = PlanModel(g, cluster, fake, data);
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_TRUE(tuned->buckets.tuned);
  EXPECT_GT(tuned->buckets.count, 0);
  const int64_t gradients = tuned->memory.params_bytes;  // all data-parallel, all bucketed
  EXPECT_EQ(tuned->memory.comm_buffer_bytes,
            2 * std::min(gradients, std::max(tuned->buckets.first_bytes, tuned->buckets.bytes)));
  absl::StatusOr<Plan> again = PlanModel(g, cluster, fake, data);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->buckets.first_bytes, tuned->buckets.first_bytes);
  EXPECT_EQ(again->buckets.bytes, tuned->buckets.bytes);

  PlanOptions given = data;
  given.bucket_bytes = 300 << 10;
  given.first_bucket_bytes = 100 << 10;
  absl::StatusOr<Plan> fixed = PlanModel(g, cluster, fake, given);
  ASSERT_TRUE(fixed.ok());
  EXPECT_FALSE(fixed->buckets.tuned);
  EXPECT_EQ(fixed->buckets.first_bytes, 100 << 10);
  EXPECT_EQ(fixed->buckets.bytes, 300 << 10);
  EXPECT_EQ(fixed->memory.comm_buffer_bytes, 2 * (300 << 10));
  // fc2's weight (2 MB) is alone; fc1's (512 KiB) too; the biases with their weights or alone.
  EXPECT_GE(fixed->buckets.count, 2);

  given.first_bucket_bytes = 0;  // only the later buckets are fixed
  absl::StatusOr<Plan> half = PlanModel(g, cluster, fake, given);
  ASSERT_TRUE(half.ok());
  EXPECT_TRUE(half->buckets.tuned);
  EXPECT_EQ(half->buckets.bytes, 300 << 10);

  given.bucket_bytes = -1;
  EXPECT_FALSE(PlanModel(g, cluster, fake, given).ok());
}

// One device: nothing is bucketed; the plan keeps the default sizes and counts no bucket.
TEST(BucketTuningTest, OneDeviceHasNoBuckets) {
  testing::FakeCostModel fake;
  absl::StatusOr<Plan> plan =
      PlanModel(testing::Mlp(16), testing::MlpCluster(int64_t{16} << 30), fake, {.devices = 1});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->buckets.count, 0);
  EXPECT_EQ(plan->buckets.bytes, BucketSizes{}.bytes);
  EXPECT_EQ(plan->memory.comm_buffer_bytes, 0);
}

}  // namespace
}  // namespace tessera::partitioner
