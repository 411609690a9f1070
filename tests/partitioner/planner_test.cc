// The exact planner against brute force, memory-aware sharding, and PlanModel errors.
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tessera/base/setting_error.h"
#include "tessera/graph/builder.h"
#include "tessera/partitioner/exact_planner.h"
#include "tessera/partitioner/memory_sharding.h"
#include "tessera/partitioner/objective.h"
#include "tessera/partitioner/planner.h"
#include "tessera/partitioner/simulate.h"
#include "fake_cost_model.h"
#include "test_mlp.h"

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
  absl::StatusOr<Problem> p = BuildProblem(
      g, &fake, {.devices = 4, .optimizer = costmodel::OptimizerKind::kAdam});
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
  EXPECT_TRUE(absl::StrContains(zero.message(), "device count must be at least 1")) << zero;
  EXPECT_EQ(base::SettingOf(zero), "devices");  // the command names its flag, not the planner
  absl::Status odd = PlanModel(g, Cluster(1 << 30), fake, {.devices = 3}).status();
  EXPECT_EQ(odd.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(odd.message(), "16") && absl::StrContains(odd.message(), "3"))
      << odd;
  EXPECT_EQ(base::SettingOf(odd), "batch");
  graph::GraphBuilder b("no_data");
  graph::Value w = b.Parameter("w", {4, 4});
  b.Output(w.Relu("r"));
  const graph::Graph no_data = *std::move(b).Build();
  absl::Status none = PlanModel(no_data, Cluster(1 << 30), fake, {.devices = 1}).status();
  EXPECT_EQ(none.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(none.message(), "no data input")) << none;
}

// kGiven with output layouts: of the options that share a strategy, the one leaving its output
// in the given layout; without one, the first (what plan files without layouts mean).
TEST(PlanModelTest, GivenOutputLayoutPicksAmongOptionsOfOneStrategy) {
  testing::FakeCostModel fake;
  const graph::Graph g = testing::Mlp(16);
  const costmodel::ClusterSpec cluster = testing::MlpCluster(int64_t{1} << 34);
  PlanOptions options{.devices = 4, .planner = PlannerKind::kGiven, .executable = true,
                      .strategies = {{"fc2", Strategy::kModelParallel}}};
  const auto fc2 = [](const Plan& plan) {
    for (const LayerPlan& l : plan.layers) {
      if (l.name == "fc2") return l;
    }
    return LayerPlan{};
  };
  auto folded = PlanModel(g, cluster, fake, options);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(fc2(*folded).strategy, Strategy::kModelParallel);
  EXPECT_EQ(fc2(*folded).output_layout, Layout::kBatch);
  options.output_layouts = {{"fc2", Layout::kFeature}};
  auto feature = PlanModel(g, cluster, fake, options);
  ASSERT_TRUE(feature.ok()) << feature.status();
  EXPECT_EQ(fc2(*feature).strategy, Strategy::kModelParallel);
  EXPECT_EQ(fc2(*feature).output_layout, Layout::kFeature);
  EXPECT_EQ(fc2(*feature).input_layouts, std::vector<Layout>{Layout::kReplicated});
  EXPECT_TRUE(fc2(*feature).partial_dx);
}

TEST(PlanModelTest, GivenOutputLayoutNoOptionHasIsRefused) {
  testing::FakeCostModel fake;
  const graph::Graph g = testing::Mlp(16);
  const costmodel::ClusterSpec cluster = testing::MlpCluster(int64_t{1} << 34);
  for (bool executable : {false, true}) {
    SCOPED_TRACE(executable ? "executable" : "any plan");
    PlanOptions options{.devices = 4, .planner = PlannerKind::kGiven, .executable = executable,
                        .strategies = {{"fc1", Strategy::kModelParallel}},
                        .output_layouts = {{"fc1", Layout::kReplicated}}};
    absl::Status s = PlanModel(g, cluster, fake, options).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(
        s.message(), absl::StrCat("layer 'fc1' (Gemm) cannot be model_parallel with its output "
                                  "in the replicated layout here",
                                  executable ? " in a plan the runtime executes" : "")))
        << s;
  }
  // A strategy the layer has no option of is what the message names, whatever the layout.
  PlanOptions no_strategy{.devices = 4, .planner = PlannerKind::kGiven, .executable = true,
                          .strategies = {{"relu", Strategy::kReplicated}},
                          .output_layouts = {{"relu", Layout::kReplicated}}};
  absl::Status r = PlanModel(g, cluster, fake, no_strategy).status();
  EXPECT_EQ(r.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(
      r.message(), "layer 'relu' (Relu) cannot be replicated here in a plan the runtime executes"))
      << r;
  // A layout for a layer the plan gives no strategy is a malformed request, not ignored.
  PlanOptions orphan{.devices = 4, .planner = PlannerKind::kGiven,
                     .output_layouts = {{"fc1", Layout::kFeature}}};
  absl::Status s = PlanModel(g, cluster, fake, orphan).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "layer 'fc1' an output layout but no strategy")) << s;
}

}  // namespace
}  // namespace tessera::partitioner
