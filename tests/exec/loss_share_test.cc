// Each rank's share of a mean loss over labels that are not ignored: exec/loss_share.h.
#include "tessera/exec/loss_share.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "tessera/graph/builder.h"

namespace tessera::exec {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::Value;

graph::Graph Model(int64_t ignore_index, bool computed_labels) {
  GraphBuilder b("m");
  Value x = b.Input("x", {4, 3});
  Value labels = b.Input("labels", {2, 2}, DType::kI64).Reshape({-1}, "flat");
  if (computed_labels) labels = labels.Cast(DType::kI64, "computed");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(x, 5, "fc"), labels, "loss", graph::Reduction::kMean,
                                 ignore_index));
  return *std::move(b).Build();
}

Batch Labels(std::vector<int64_t> v) {
  Batch b;
  b.Ints("labels") = std::move(v);
  return b;
}

TEST(LossShareTest, WithoutIgnoredLabelsEveryRankHasOneOverP) {
  auto share = FindLossShare(Model(-1, false));
  ASSERT_TRUE(share.ok()) << share.status();
  EXPECT_TRUE(share->label_input.empty());
  EXPECT_FLOAT_EQ(share->Scale(Labels({1, 2, 3, 4}), Labels({1, 2}), 4), 0.25f);
}

TEST(LossShareTest, IgnoredLabelsGiveEachRankItsCountOverTheTotal) {
  auto share = FindLossShare(Model(0, false));
  ASSERT_TRUE(share.ok()) << share.status();
  EXPECT_EQ(share->label_input, "labels");  // found through the Reshape
  EXPECT_EQ(share->ignore_index, 0);
  const Batch whole = Labels({0, 3, 0, 0, 2, 4});  // 3 counted
  EXPECT_FLOAT_EQ(share->Scale(whole, Labels({0, 3, 0}), 2), 1.f / 3.f);
  EXPECT_FLOAT_EQ(share->Scale(whole, Labels({0, 2, 4}), 2), 2.f / 3.f);
  EXPECT_FLOAT_EQ(share->Scale(Labels({0, 0}), Labels({0}), 2), 0.f);  // nothing counted
}

TEST(LossShareTest, ComputedLabelsAreRefusedNamingTheLossAndTheNode) {
  auto share = FindLossShare(Model(0, true));
  ASSERT_FALSE(share.ok());
  EXPECT_TRUE(absl::StrContains(share.status().message(), "'loss'")) << share.status();
  EXPECT_TRUE(absl::StrContains(share.status().message(), "'computed'")) << share.status();
}

}  // namespace
}  // namespace tessera::exec
