// The hybrid runtime fuses the data-parallel gradients into the plan's buckets
// (partitioner::Plan::buckets): as many as the plan's simulation counts, for several sizes.
#include <gtest/gtest.h>

#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/launch.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/hybrid_worker.h"
#include "tessera/graph/builder.h"
#include "tessera/partitioner/planner.h"

namespace tessera::exec {
namespace {

// Gradients in the order backward finishes them: fc3 (8 KiB weight, 32 B bias), fc2 (256 KiB,
// 1 KiB), fc1 (64 KiB, 1 KiB).
graph::Graph Mlp() {
  graph::GraphBuilder b("buckets_mlp");
  graph::Value x = b.Input("x", {4, 64});
  graph::Value labels = b.Input("labels", {4}, graph::DType::kI64);
  graph::Value h = b.Linear(x, 256, "fc1").Relu("relu1");
  h = b.Linear(h, 256, "fc2").Relu("relu2");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 8, "fc3"), labels, "loss"));
  return *std::move(b).Build();
}

// Rank 0's result of 2 steps of the all-data-parallel plan with the given bucket sizes.
absl::StatusOr<WorkerResult> RunTwoSteps(const graph::Graph& g, const partitioner::Plan& plan) {
  WorkerResult rank0;
  std::mutex mu;
  TS_RETURN_IF_ERROR(comm::RunRanksWithChannels(
      {.backend = comm::Backend::kThread}, plan.devices, 2,
      [&](absl::Span<comm::Communicator* const> ch) -> absl::Status {
        RandomDataSource data(g, {.seed = 1, .classes = 8});
        TS_ASSIGN_OR_RETURN(WorkerResult r, RunHybridWorker(g, plan, ch, data, {.steps = 2}));
        std::lock_guard<std::mutex> lock(mu);
        if (ch[0]->rank() == 0) rank0 = std::move(r);
        return absl::OkStatus();
      }));
  return rank0;
}

TEST(HybridBucketsTest, TheRuntimeFormsThePlansBuckets) {
  const graph::Graph g = Mlp();
  const costmodel::ClusterSpec cluster = costmodel::ClusterPreset("v100-vpc32")->WithDevices(2);
  const costmodel::RooflineCostModel cost(cluster);
  // first + others -> buckets, formed as comm::GradientBuckets does (a gradient that does not
  // fit closes the open bucket):
  //   4 KiB + 4 KiB:     every gradient alone: 6
  //   16 KiB + 300 KiB:  {fc3.w, fc3.b}, {fc2.w, fc2.b}, {fc1.w, fc1.b}: 3
  //   16 KiB + 1 MiB:    {fc3.w, fc3.b}, {fc2.w ... fc1.b}: 2
  const struct {
    int64_t first, bytes;
    int buckets;
  } cases[] = {{4 << 10, 4 << 10, 6}, {16 << 10, 300 << 10, 3}, {16 << 10, 1 << 20, 2}};
  for (const auto& c : cases) {
    const std::string what = absl::StrCat(c.first, " + ", c.bytes);
    absl::StatusOr<partitioner::Plan> plan = partitioner::PlanModel(
        g, cluster, cost,
        {.devices = 2, .planner = partitioner::PlannerKind::kData, .bucket_bytes = c.bytes,
         .first_bucket_bytes = c.first, .executable = true});
    ASSERT_TRUE(plan.ok()) << what << ": " << plan.status();
    EXPECT_EQ(plan->buckets.count, c.buckets) << what;
    absl::StatusOr<WorkerResult> r = RunTwoSteps(g, *plan);
    ASSERT_TRUE(r.ok()) << what << ": " << r.status();
    EXPECT_EQ(r->gradient_buckets, c.buckets) << what;
  }
}

TEST(HybridBucketsTest, APlanWithoutPositiveSizesIsRefused) {
  const graph::Graph g = Mlp();
  const costmodel::ClusterSpec cluster = costmodel::ClusterPreset("v100-vpc32")->WithDevices(2);
  const costmodel::RooflineCostModel cost(cluster);
  absl::StatusOr<partitioner::Plan> plan = partitioner::PlanModel(
      g, cluster, cost,
      {.devices = 2, .planner = partitioner::PlannerKind::kData, .executable = true});
  ASSERT_TRUE(plan.ok()) << plan.status();
  plan->buckets.bytes = 0;
  absl::StatusOr<WorkerResult> r = RunTwoSteps(g, *plan);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("gradient bucket sizes must be positive"),
            std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace tessera::exec
