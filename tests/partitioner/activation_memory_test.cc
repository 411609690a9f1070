// Activation memory from the training step's lifetimes: scaling per strategy, the strategies'
// extra buffers, and the arena PlanModel reports.
#include "tessera/partitioner/activation_memory.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tessera/graph/builder.h"
#include "tessera/memory/offset_checker.h"
#include "tessera/partitioner/planner.h"
#include "tessera/partitioner/simulate.h"
#include "fake_cost_model.h"
#include "test_mlp.h"

namespace tessera::partitioner {
namespace {

using testing::Mlp;

costmodel::ClusterSpec Cluster() { return testing::MlpCluster(int64_t{1} << 40); }

int64_t Sum(const std::vector<memory::Buffer>& buffers) {
  int64_t s = 0;
  for (const memory::Buffer& b : buffers) s += b.size;
  return s;
}

TEST(ActivationMemoryTest, OneDeviceHoldsTheWholeLifetimes) {
  const graph::Graph g = Mlp(64);
  absl::StatusOr<Problem> p = BuildProblem(g, nullptr, {.devices = 1});
  ASSERT_TRUE(p.ok()) << p.status();
  const std::vector<memory::Buffer> device = DeviceTransientBuffers(*p, AllDataParallel(*p));
  const std::vector<memory::Buffer> whole = memory::TransientBuffers(p->lifetimes);
  ASSERT_EQ(device.size(), whole.size());
  for (size_t i = 0; i < device.size(); ++i) {
    EXPECT_EQ(device[i].id, whole[i].id);
    EXPECT_EQ(device[i].size, whole[i].size);
    EXPECT_EQ(device[i].start, whole[i].start);
    EXPECT_EQ(device[i].end, whole[i].end);
  }
  EXPECT_EQ(ActivationPeak(*p, AllDataParallel(*p)), memory::LiveBytesLowerBound(device));
}

TEST(ActivationMemoryTest, DataParallelSplitsEveryValueOverTheDevices) {
  const graph::Graph g = Mlp(64);
  absl::StatusOr<Problem> one = BuildProblem(g, nullptr, {.devices = 1});
  absl::StatusOr<Problem> four = BuildProblem(g, nullptr, {.devices = 4});
  ASSERT_TRUE(one.ok() && four.ok());
  const auto whole = DeviceTransientBuffers(*one, AllDataParallel(*one));
  const auto quarter = DeviceTransientBuffers(*four, AllDataParallel(*four));
  ASSERT_EQ(whole.size(), quarter.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    // A quarter of the bytes, rounded up to the 256-byte alignment.
    EXPECT_GE(quarter[i].size * 4, whole[i].size) << i;
    EXPECT_LE(quarter[i].size, whole[i].size / 4 + 256) << i;
    EXPECT_EQ(quarter[i].start, whole[i].start);
    EXPECT_EQ(quarter[i].end, whole[i].end);
  }
}

TEST(ActivationMemoryTest, ModelParallelAddsTheGatheredInputAndItsPartialGradient) {
  const graph::Graph g = Mlp(64);
  absl::StatusOr<Problem> p = BuildProblem(g, nullptr, {.devices = 4});
  ASSERT_TRUE(p.ok()) << p.status();
  Choice choice = AllDataParallel(*p);
  int fc2 = -1;
  for (size_t i = 0; i < p->layers.size(); ++i) {
    if (p->layers[i].name == "fc2") fc2 = static_cast<int>(i);
  }
  ASSERT_GE(fc2, 0);
  const int mp = FindOption(p->layers[fc2], Strategy::kModelParallel);
  ASSERT_GE(mp, 0);
  const auto data = DeviceTransientBuffers(*p, choice);
  choice[fc2] = mp;
  const auto model = DeviceTransientBuffers(*p, choice);
  // fc2 reads relu's output [64, 512] f32 = 131072 bytes: gathered whole, and its partial
  // gradient at fc2's backward step.
  ASSERT_EQ(model.size(), data.size() + 2);
  const memory::Buffer& gathered = model[model.size() - 2];
  const memory::Buffer& partial = model.back();
  EXPECT_EQ(gathered.size, 64 * 512 * 4);
  EXPECT_EQ(gathered.start, p->forward_step[fc2]);
  EXPECT_EQ(gathered.end, p->backward_step[fc2] + 1);
  EXPECT_EQ(partial.size, 64 * 512 * 4);
  EXPECT_EQ(partial.start, p->backward_step[fc2]);
  EXPECT_EQ(partial.end, p->backward_step[fc2] + 1);
}

TEST(ActivationMemoryTest, PlanReportsACheckedArenaBetweenTheBounds) {
  const graph::Graph g = Mlp(64);
  testing::FakeCostModel fake;
  absl::StatusOr<Plan> plan = PlanModel(g, Cluster(), fake, {.devices = 4});
  ASSERT_TRUE(plan.ok()) << plan.status();
  const MemoryPrediction& m = plan->memory;
  EXPECT_GT(m.activation_lower_bound_bytes, 0);
  EXPECT_GE(m.activation_bytes, m.activation_lower_bound_bytes);
  EXPECT_LE(m.activation_bytes, m.activation_no_reuse_bytes);
  EXPECT_EQ(m.peak_bytes[0], m.params_bytes + m.grads_bytes + m.optimizer_bytes +
                                 m.activation_bytes + m.workspace_bytes + m.comm_buffer_bytes);
  absl::StatusOr<DeviceActivations> device = PlanDeviceActivations(g, *plan,
                                                                   costmodel::OptimizerKind::kSgd);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ(Sum(device->buffers), m.activation_no_reuse_bytes);
  EXPECT_EQ(memory::LiveBytesLowerBound(device->buffers), m.activation_lower_bound_bytes);
  ASSERT_EQ(device->names.size(), device->buffers.size());
  ASSERT_EQ(device->kinds.size(), device->buffers.size());
}

TEST(ActivationMemoryTest, APlanOfAnotherModelIsRefused) {
  testing::FakeCostModel fake;
  absl::StatusOr<Plan> plan = PlanModel(Mlp(64), Cluster(), fake, {.devices = 2});
  ASSERT_TRUE(plan.ok()) << plan.status();
  graph::GraphBuilder b("other");
  graph::Value x = b.Input("x", {64, 256});
  b.Output(b.Linear(x, 10, "only"));
  const graph::Graph other = *std::move(b).Build();
  absl::StatusOr<DeviceActivations> device = PlanDeviceActivations(
      other, *plan, costmodel::OptimizerKind::kSgd);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(device.status().message(), "plan")) << device.status();
}

}  // namespace
}  // namespace tessera::partitioner
