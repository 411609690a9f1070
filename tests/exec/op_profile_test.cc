// The on_node_timed hook reports every node's forward and backward once per step, and
// ProfileOps turns them into the planner's measured op times on one device's batch shard.
#include "tessera/exec/op_profile.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/builder.h"

namespace tessera::exec {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::Value;

graph::Graph Mlp(int64_t batch) {
  GraphBuilder b("mlp");
  Value x = b.Input("x", {batch, 64});
  Value labels = b.Input("labels", {batch}, DType::kI64);
  Value h = b.Linear(x, 128, "fc1").Relu("relu");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 10, "fc2"), labels, "loss"));
  return *std::move(b).Build();
}

TEST(NodeTimedHookTest, ReportsEveryNodeForwardAndBackwardOncePerStep) {
  const graph::Graph g = Mlp(8);
  std::map<std::pair<graph::NodeId, bool>, int> calls;
  double total = 0;
  ProgramOptions o{.seed = 1, .threads = 1};
  o.on_node_timed = [&](graph::NodeId n, bool backward, double s) {
    ++calls[{n, backward}];
    EXPECT_GE(s, 0);
    total += s;
  };
  auto program = TrainingProgram::Create(g, o);
  ASSERT_TRUE(program.ok()) << program.status();
  RandomDataSource data(g, {.seed = 3});
  Batch batch;
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE(data.Next(step, batch).ok());
    ASSERT_TRUE(SetInputs(**program, batch).ok());
    ASSERT_TRUE((*program)->RunStep().ok());
  }
  for (graph::NodeId n = 0; n < g.num_nodes(); ++n) {
    EXPECT_EQ((calls[{n, false}]), 3) << g.node(n).name;
    EXPECT_EQ((calls[{n, true}]), 3) << g.node(n).name;  // every node here has a backward
  }
  EXPECT_GT(total, 0);
  // Forward only: forward calls, no backward ones.
  ASSERT_TRUE(SetInputs(**program, batch).ok());
  ASSERT_TRUE((*program)->RunForward().ok());
  for (graph::NodeId n = 0; n < g.num_nodes(); ++n) {
    EXPECT_EQ((calls[{n, false}]), 4) << g.node(n).name;
    EXPECT_EQ((calls[{n, true}]), 3) << g.node(n).name;
  }
}

TEST(ProfileOpsTest, TimesEveryNodeOnOneDevicesShard) {
  const graph::Graph g = Mlp(32);
  for (bool concurrent : {true, false}) {
    SCOPED_TRACE(concurrent ? "every device at once" : "one device alone");
    auto m = ProfileOps(g, {.devices = 4, .threads = 1, .warmup_steps = 1, .steps = 3,
                            .concurrent = concurrent});
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_DOUBLE_EQ(m->share, 0.25);
    ASSERT_EQ(m->ops.size(), static_cast<size_t>(g.num_nodes()));
    for (graph::NodeId n = 0; n < g.num_nodes(); ++n) {
      const auto it = m->ops.find(g.node(n).name);
      ASSERT_NE(it, m->ops.end()) << g.node(n).name;
      EXPECT_GT(it->second.forward_s, 0) << g.node(n).name;
      EXPECT_GT(it->second.backward_s, 0) << g.node(n).name;
    }
  }
}

TEST(ProfileOpsTest, TimesTheOptimizersUpdateAndTheBucketCopyPerParameterByte) {
  const graph::Graph g = Mlp(8);
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdam}) {
    OpProfileOptions o{.devices = 2, .warmup_steps = 1, .steps = 3};
    o.optimizer.kind = kind;
    auto m = ProfileOps(g, o);
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_TRUE(m->update.has_value());
    EXPECT_EQ(m->update->optimizer, kind);
    EXPECT_GT(m->update->seconds_per_param_byte, 0);
    EXPECT_GT(m->bucket_copy_s_per_byte, 0);
  }
}

TEST(ProfileOpsTest, RefusesABatchThatDoesNotSplitAndBadCounts) {
  auto odd = ProfileOps(Mlp(6), {.devices = 4});
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(odd.status().message(), "batch 6 does not divide over 4"))
      << odd.status();
  EXPECT_TRUE(absl::StrContains(odd.status().message(), "'mlp'")) << odd.status();
  auto none = ProfileOps(Mlp(8), {.devices = 2, .steps = 0});
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::StrContains(none.status().message(), "steps >= 1")) << none.status();
}

}  // namespace
}  // namespace tessera::exec
