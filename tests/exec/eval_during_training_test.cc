// Evaluation during hybrid training (HybridOptions::eval_every, on_eval) and the step records
// (on_step): called at the right steps with the whole model, training bit-for-bit unchanged,
// an evaluation longer than the communicators' timeout survived, a failed one ending every rank.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/exec/hybrid_training.h"
#include "tessera/graph/builder.h"
#include "tessera/partitioner/planner.h"

namespace tessera::exec {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::Value;

constexpr int64_t kBatch = 8;

// A small classifier; fc1 and fc3 planned model-parallel split their weights over the ranks,
// so the evaluated model needs the shards gathered.
graph::Graph Mlp() {
  GraphBuilder b("mlp");
  Value x = b.Input("x", {kBatch, 6});
  Value labels = b.Input("labels", {kBatch}, DType::kI64);
  Value h = b.Linear(x, 16, "fc1").Relu("relu1");
  h = b.Linear(h, 12, "fc2").Tanh("tanh2");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 8, "fc3"), labels, "loss"));
  return *std::move(b).Build();
}

partitioner::Plan ModelParallelPlan(const graph::Graph& g) {
  auto cluster = costmodel::LoadCluster("v100-vpc32");
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  const costmodel::ClusterSpec sized = cluster->WithDevices(2);
  const costmodel::RooflineCostModel cost(sized);
  auto plan = partitioner::PlanModel(
      g, sized, cost,
      {.devices = 2, .planner = partitioner::PlannerKind::kModel, .executable = true});
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *plan;
}

HybridRunOptions Options(int64_t steps) {
  HybridRunOptions o{.workers = 2};
  o.worker = {.steps = steps, .seed = 3, .lr = 0.05};
  o.worker.optimizer.kind = costmodel::OptimizerKind::kAdam;
  o.data = {.seed = 5, .classes = 8};
  return o;
}

TEST(EvalDuringTrainingTest, CalledEveryNStepsWithTheWholeModelAndTrainingUnchanged) {
  const graph::Graph g = Mlp();
  const partitioner::Plan plan = ModelParallelPlan(g);
  auto plain = TrainHybrid(g, plan, Options(6));
  ASSERT_TRUE(plain.ok()) << plain.status();

  HybridRunOptions o = Options(6);
  std::mutex mu;
  std::vector<WholeModel> evaluated;
  std::vector<StepRecord> steps;
  o.worker.eval_every = 2;
  o.worker.on_eval = [&](const WholeModel& m) -> absl::StatusOr<std::string> {
    std::lock_guard<std::mutex> lock(mu);
    evaluated.push_back(m);
    return std::string();
  };
  o.worker.on_step = [&](const StepRecord& s) { steps.push_back(s); };
  auto hooked = TrainHybrid(g, plan, o);
  ASSERT_TRUE(hooked.ok()) << hooked.status();

  // Bit for bit: the same losses and final parameters.
  EXPECT_EQ(hooked->report.losses, plain->report.losses);
  EXPECT_EQ(hooked->parameters, plain->parameters);
  // After steps 2 and 4, not after the last: the caller evaluates the final model.
  ASSERT_EQ(evaluated.size(), 2u);
  EXPECT_EQ(evaluated[0].step, 2);
  EXPECT_EQ(evaluated[1].step, 4);
  // The model after 2 steps is every parameter whole, exactly a 2-step run's.
  auto two = TrainHybrid(g, plan, Options(2));
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(evaluated[0].parameters, two->parameters);
  EXPECT_EQ(evaluated[0].parameters.size(), plain->parameters.size());
  // A record per step, on rank 0 only.
  ASSERT_EQ(steps.size(), 6u);
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].step, static_cast<int64_t>(i) + 1);
    EXPECT_EQ(steps[i].loss, plain->report.losses[i]);
    EXPECT_DOUBLE_EQ(steps[i].lr, 0.05);
    EXPECT_GT(steps[i].samples_per_s, 0);
    if (i > 0) EXPECT_GE(steps[i].time_s, steps[i - 1].time_s);
  }
}

// The other ranks wait in rank 0's heartbeat: an evaluation longer than the timeout is fine.
TEST(EvalDuringTrainingTest, AnEvaluationMayOutlastTheTimeout) {
  const graph::Graph g = Mlp();
  const partitioner::Plan plan = ModelParallelPlan(g);
  HybridRunOptions o = Options(2);
  o.timeout = absl::Milliseconds(400);
  o.worker.eval_every = 1;
  int calls = 0;
  o.worker.on_eval = [&](const WholeModel&) -> absl::StatusOr<std::string> {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    return std::string("evaluated");
  };
  auto run = TrainHybrid(g, plan, o);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(run->report.losses.size(), 2u);
}

// A failed evaluation ends the run on every rank with rank 0's error; none waits forever.
TEST(EvalDuringTrainingTest, AFailedEvaluationEndsEveryRank) {
  const graph::Graph g = Mlp();
  const partitioner::Plan plan = ModelParallelPlan(g);
  HybridRunOptions o = Options(4);
  o.worker.eval_every = 2;
  o.worker.on_eval = [](const WholeModel&) -> absl::StatusOr<std::string> {
    return absl::NotFoundError("no held-out data here");
  };
  auto run = TrainHybrid(g, plan, o);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().ToString().find("no held-out data here"), std::string::npos)
      << run.status();
}

}  // namespace
}  // namespace tessera::exec
