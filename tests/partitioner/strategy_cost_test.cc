// Strategy costs on a single Gemm and transition costs, against hand computation.
#include "gtest/gtest.h"
#include "tessera/graph/builder.h"
#include "tessera/partitioner/layout.h"
#include "tessera/partitioner/problem.h"
#include "fake_cost_model.h"

namespace tessera::partitioner {
namespace {

using costmodel::Collective;

// x [batch, 64] -> Gemm (no bias) -> [batch, 32] -> Relu (graph output).
graph::Graph OneGemm(int64_t batch) {
  graph::GraphBuilder b("one_gemm");
  graph::Value x = b.Input("x", {batch, 64});
  b.Output(b.Linear(x, 32, "fc", {.bias = false}).Relu("relu"));
  return *std::move(b).Build();
}

const LayerOption& Option(const Problem& p, Strategy s) {
  const int k = FindOption(p.layers[0], s);
  EXPECT_GE(k, 0) << StrategyName(s);
  return p.layers[0].options[k];
}

TEST(StrategyCostTest, GemmDataModelAndLateMultiply) {
  testing::FakeCostModel fake;
  const graph::Graph g = OneGemm(8);
  absl::StatusOr<Problem> p = BuildProblem(g, &fake, {.devices = 4});
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->layers[0].name, "fc");
  const double flops = 2.0 * 8 * 64 * 32;  // forward, whole batch
  const LayerOption& dp = Option(*p, Strategy::kDataParallel);
  EXPECT_DOUBLE_EQ(dp.forward_compute_s, flops / 4 * 1e-12);
  EXPECT_TRUE(dp.bucketed);
  EXPECT_DOUBLE_EQ(dp.sync_bytes, 64 * 32 * 4);
  EXPECT_DOUBLE_EQ(dp.sync_sent_bytes, 2.0 * 3 / 4 * 64 * 32 * 4);
  EXPECT_DOUBLE_EQ(dp.sync_s, 64 * 32 * 4 * 2e-9);  // the bucketed all-reduce rate
  EXPECT_EQ(dp.param_bytes, 64 * 32 * 4);

  const LayerOption& mp = Option(*p, Strategy::kModelParallel);
  EXPECT_EQ(mp.inputs[0], Layout::kReplicated);
  EXPECT_EQ(mp.output, Layout::kFeature);
  EXPECT_TRUE(mp.partial_dx);
  EXPECT_EQ(mp.param_bytes, 64 * 32 * 4 / 4);
  EXPECT_DOUBLE_EQ(mp.sync_bytes, 0);

  const LayerOption& lm = Option(*p, Strategy::kLateMultiply);
  EXPECT_DOUBLE_EQ(lm.sync_bytes, 8 * 64 * 4 + 8 * 32 * 4);  // X and dY, whole batch
  EXPECT_DOUBLE_EQ(lm.sync_s, (8 * 64 * 4 + 8 * 32 * 4) * 1e-9);
  // dW is formed for the whole batch: backward FLOPs grow by 2*B*m*n*(1 - 1/P).
  EXPECT_DOUBLE_EQ(lm.backward_compute_s - dp.backward_compute_s, flops * 0.75 * 1e-12);
}

// Late multiply moves P*b*(m+n) values against 2*m*n (times (P-1)/P): it wins for
// small local batches and loses past the crossover b = 2mn / (P(m+n)) = 10.7.
TEST(StrategyCostTest, LateMultiplyCrossover) {
  testing::FakeCostModel fake;
  for (int64_t local : {2, 16}) {
    const graph::Graph g = OneGemm(4 * local);
    absl::StatusOr<Problem> p = BuildProblem(g, &fake, {.devices = 4});
    ASSERT_TRUE(p.ok());
    const double lm = Option(*p, Strategy::kLateMultiply).sync_sent_bytes;
    const double dp = Option(*p, Strategy::kDataParallel).sync_sent_bytes;
    EXPECT_DOUBLE_EQ(lm, 0.75 * 4 * local * (64 + 32) * 4);
    EXPECT_DOUBLE_EQ(dp, 0.75 * 2 * 64 * 32 * 4);
    if (local == 2) EXPECT_LT(lm, dp);
    if (local == 16) EXPECT_GT(lm, dp);
  }
}

TEST(StrategyCostTest, Transitions) {
  testing::FakeCostModel fake;
  fake.seconds_per_byte = {5e-9, 1e-9, 2e-9, 0, 3e-9};  // AR, AG, RS, -, A2A
  const CommContext ctx = MakeCommContext(&fake, 4);
  const double s = 4000;
  const EdgeCosts e = ComputeEdgeCosts(s, /*needs_grad=*/true, ctx);
  // batch -> replicated for a model-parallel consumer: all-gather, reduce-scatter back.
  EXPECT_DOUBLE_EQ(e.at(Layout::kBatch, Layout::kReplicated, true).forward_s, s * 1e-9);
  EXPECT_DOUBLE_EQ(e.at(Layout::kBatch, Layout::kReplicated, true).backward_s, s * 2e-9);
  // replicated -> replicated with partial dX: all-reduce in backward only.
  EXPECT_DOUBLE_EQ(e.at(Layout::kReplicated, Layout::kReplicated, true).forward_s, 0);
  EXPECT_DOUBLE_EQ(e.at(Layout::kReplicated, Layout::kReplicated, true).backward_s, s * 5e-9);
  // batch <-> feature: all-to-all of each device's share, both ways.
  EXPECT_DOUBLE_EQ(e.at(Layout::kBatch, Layout::kFeature, false).forward_s, s / 4 * 3e-9);
  EXPECT_DOUBLE_EQ(e.at(Layout::kFeature, Layout::kBatch, false).backward_s, s / 4 * 3e-9);
  // replicated -> batch: a free slice forward, an all-gather of dY backward.
  EXPECT_DOUBLE_EQ(e.at(Layout::kReplicated, Layout::kBatch, false).forward_s, 0);
  EXPECT_DOUBLE_EQ(e.at(Layout::kReplicated, Layout::kBatch, false).backward_s, s * 1e-9);
  // feature -> replicated (full gradient consumer): all-gather forward, slice back.
  EXPECT_DOUBLE_EQ(e.at(Layout::kFeature, Layout::kReplicated, false).forward_s, s * 1e-9);
  EXPECT_DOUBLE_EQ(e.at(Layout::kFeature, Layout::kReplicated, false).backward_s, 0);
  EXPECT_DOUBLE_EQ(e.at(Layout::kBatch, Layout::kBatch, false).forward_s, 0);
  // Tensors computed from data only have no backward.
  const EdgeCosts d = ComputeEdgeCosts(s, /*needs_grad=*/false, ctx);
  EXPECT_DOUBLE_EQ(d.at(Layout::kBatch, Layout::kReplicated, true).backward_s, 0);
  EXPECT_DOUBLE_EQ(d.at(Layout::kBatch, Layout::kReplicated, true).forward_s, s * 1e-9);
}

}  // namespace
}  // namespace tessera::partitioner
