// The exact planner against brute force, memory-aware sharding, and PlanModel errors.
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tessera/graph/builder.h"
#include "tessera/partitioner/exact_planner.h"
#include "tessera/partitioner/memory_sharding.h"
#include "tessera/partitioner/objective.h"
#include "tessera/partitioner/planner.h"
#include "tessera/partitioner/simulate.h"
#include "fake_cost_model.h"

namespace tessera::partitioner {
namespace {

// x -> fc1 -> relu -> {fc2a, fc2b} -> add -> fc3 -> loss: a branching graph.
graph::Graph Branching(int64_t batch) {
  graph::GraphBuilder b("branching");
  graph::Value x = b.Input("x", {batch, 256});
  graph::Value labels = b.Input("labels", {batch}, graph::DType::kI64);
  graph::Value h = b.Linear(x, 512, "fc1").Relu("relu");
  graph::Value y = b.Add(b.Linear(h, 512, "fc2a"), b.Linear(h, 512, "fc2b"), "add");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(y, 1000, "fc3"), labels, "loss"));
  return *std::move(b).Build();
}

costmodel::ClusterSpec Cluster(int64_t memory) {
  costmodel::ClusterSpec c;
  c.name = "fake";
  c.devices_per_node = 8;
  c.device.memory_bytes = memory;
  return c;
}

TEST(ExactPlannerTest, MatchesBruteForceOnABranchingGraph) {
  testing::FakeCostModel fake;
  const graph::Graph g = Branching(16);
  absl::StatusOr<Problem> p = BuildProblem(g, &fake, {.devices = 4});
  ASSERT_TRUE(p.ok()) << p.status();
  // Brute force over every assignment.
  Choice choice(p->layers.size(), 0), best_choice;
  double best = -1;
  int64_t count = 0;
  std::function<void(size_t)> visit = [&](size_t i) {
    if (i == choice.size()) {
      ++count;
      const double c = TotalCost(*p, choice);
      if (best < 0 || c < best) best = c, best_choice = choice;
      return;
    }
    for (size_t k = 0; k < p->layers[i].options.size(); ++k) choice[i] = k, visit(i + 1);
  };
  visit(0);
  ASSERT_GT(count, 1000);  // a real search space
  const ExactResult r = PlanExact(*p);
  EXPECT_TRUE(r.exact);
  EXPECT_NEAR(r.cost, best, 1e-12 + 1e-9 * best);
  EXPECT_NEAR(TotalCost(*p, r.choice), best, 1e-12 + 1e-9 * best);
}

TEST(MemoryShardingTest, ShardsATooBigPlanUntilItFits) {
  testing::FakeCostModel fake;
  const graph::Graph g = Branching(16);
  absl::StatusOr<Problem> p = BuildProblem(g, &fake, {.devices = 4, .optimizer = Optimizer::kAdam});
  ASSERT_TRUE(p.ok());
  const Choice dp = AllDataParallel(*p);
  const int64_t dp_peak = PredictMemory(*p, dp, 0).peak_bytes[0];
  const int64_t min_peak = PredictMemory(*p, MinimumMemoryChoice(*p), 0).peak_bytes[0];
  ASSERT_LT(min_peak, dp_peak);
  const int64_t capacity = (dp_peak + min_peak) / 2;
  const ShardResult r = ShardToFit(*p, dp, capacity);
  EXPECT_TRUE(r.fits);
  EXPECT_FALSE(r.switched.empty());
  EXPECT_LE(PredictMemory(*p, r.choice, capacity).peak_bytes[0], capacity);
  EXPECT_FALSE(ShardToFit(*p, dp, min_peak - 1).fits);
}

TEST(PlanModelTest, NamesTheSmallestDeviceCountThatFits) {
  testing::FakeCostModel fake;
  const graph::Graph g = Branching(16);
  auto min_peak = [&](int devices) {
    Problem p = *BuildProblem(g, nullptr, {.devices = devices});
    return PredictMemory(p, MinimumMemoryChoice(p), 0).peak_bytes[0];
  };
  ASSERT_LT(min_peak(8), min_peak(4));
  const int64_t capacity = min_peak(8);  // fits at 8, not at 2 or 4
  absl::StatusOr<Plan> plan = PlanModel(g, Cluster(capacity), fake, {.devices = 2});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "smallest device count that fits this batch is 8"))
      << plan.status();
  absl::StatusOr<Plan> none = PlanModel(g, Cluster(1000), fake, {.devices = 2});
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::StrContains(none.status().message(), "no device count")) << none.status();
}

TEST(PlanModelTest, FillsThePlan) {
  testing::FakeCostModel fake;
  const graph::Graph g = Branching(16);
  absl::StatusOr<Plan> plan =
      PlanModel(g, Cluster(int64_t{1} << 34), fake, {.devices = 4, .planner = PlannerKind::kOptimal});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->planner, "optimal");
  EXPECT_EQ(plan->batch, 16);
  EXPECT_EQ(plan->devices, 4);
  EXPECT_EQ(plan->nodes, 1);
  EXPECT_EQ(plan->memory.peak_bytes.size(), 4u);
  EXPECT_GT(plan->predicted.step_time_s, 0);
  EXPECT_DOUBLE_EQ(plan->predicted.samples_per_s, 16 / plan->predicted.step_time_s);
  EXPECT_LE(plan->predicted.step_time_s, plan->data_parallel.step_time_s);
  for (const LayerPlan& l : plan->layers) EXPECT_FALSE(l.reason.empty()) << l.name;
  EXPECT_FALSE(plan->timeline.empty());
}

TEST(PlanModelTest, ValidationErrors) {
  testing::FakeCostModel fake;
  const graph::Graph g = Branching(16);
  absl::Status zero = PlanModel(g, Cluster(1 << 30), fake, {.devices = 0}).status();
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(zero.message(), "--devices must be at least 1")) << zero;
  absl::Status odd = PlanModel(g, Cluster(1 << 30), fake, {.devices = 3}).status();
  EXPECT_EQ(odd.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(odd.message(), "16") && absl::StrContains(odd.message(), "3"))
      << odd;
  graph::GraphBuilder b("no_data");
  graph::Value w = b.Parameter("w", {4, 4});
  b.Output(w.Relu("r"));
  const graph::Graph no_data = *std::move(b).Build();
  absl::Status none = PlanModel(no_data, Cluster(1 << 30), fake, {.devices = 1}).status();
  EXPECT_EQ(none.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(none.message(), "no data input")) << none;
}

}  // namespace
}  // namespace tessera::partitioner
