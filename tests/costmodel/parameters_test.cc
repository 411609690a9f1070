// graph/parameters.h: parameter sources through weight re-layouts, derivation nodes,
// and the distinct-parameter count.
#include "tessera/graph/parameters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "test_graph.h"

namespace tessera::graph {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using tessera::testing::TestGraph;

TEST(ParameterSourcesTest, ParameterIsItsOwnSourceAndDataHasNone) {
  TestGraph t;
  TensorId x = t.Input("x", {4, 8});
  TensorId w = t.Param("w", {8, 3});
  TensorId c = t.Const("c", {4, 3});
  TensorId y = t.Op("mm", OpKind::kMatMul, {x, w});
  TensorId z = t.Op("add", OpKind::kAdd, {y, c});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const auto s = ParameterSources(t.g);
  ASSERT_EQ(static_cast<int>(s.size()), t.g.num_tensors());
  EXPECT_THAT(s[w], ElementsAre(w));
  EXPECT_THAT(s[x], IsEmpty());
  EXPECT_THAT(s[c], IsEmpty());
  EXPECT_THAT(s[y], IsEmpty());  // computed from data
  EXPECT_THAT(s[z], IsEmpty());
  EXPECT_FALSE(IsParameterDerivation(t.g, t.Node("mm"), s));
  EXPECT_FALSE(IsParameterDerivation(t.g, t.Node("add"), s));
}

TEST(ParameterSourcesTest, IdentityAliasOfTiedWeight) {
  TestGraph t;
  TensorId ids = t.Input("ids", {2, 3}, DType::kI64);
  TensorId emb = t.Param("emb", {10, 4});
  TensorId alias = t.Op("alias", OpKind::kIdentity, {emb});
  TensorId alias2 = t.Op("alias2", OpKind::kIdentity, {alias});
  TensorId looked = t.Op("lookup", OpKind::kEmbedding, {ids, emb});
  t.Op("head", OpKind::kGemm, {t.Op("flat", OpKind::kFlatten, {looked}, AxisAttrs{.axis = 2}),
                               alias2}, GemmAttrs{.trans_b = true});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const auto s = ParameterSources(t.g);
  EXPECT_THAT(s[alias], ElementsAre(emb));
  EXPECT_THAT(s[alias2], ElementsAre(emb));
  EXPECT_THAT(s[looked], IsEmpty());
  EXPECT_TRUE(IsParameterDerivation(t.g, t.Node("alias"), s));
  EXPECT_TRUE(IsParameterDerivation(t.g, t.Node("alias2"), s));
  EXPECT_FALSE(IsParameterDerivation(t.g, t.Node("lookup"), s));
  EXPECT_FALSE(IsParameterDerivation(t.g, t.Node("head"), s));
  // The tied table is one parameter, counted once.
  EXPECT_EQ(CountParameters(t.g), 40);
}

// The ONNX export of a bidirectional nn.LSTM without constant folding: the gate rows of
// each PyTorch weight are sliced and re-concatenated (ifgo -> iofc), unsqueezed to
// [1, 4H, .] and the two directions concatenated; the bias is Concat(b_ih, b_hh).
TEST(ParameterSourcesTest, OnnxLstmWeightRelayoutThroughSliceUnsqueezeConcat) {
  TestGraph t;
  const int64_t h = 2;
  TensorId w_f = t.Param("w_ih", {4 * h, 3});
  TensorId w_r = t.Param("w_ih_reverse", {4 * h, 3});
  TensorId b_ih = t.Param("b_ih", {4 * h});
  TensorId b_hh = t.Param("b_hh", {4 * h});
  TensorId gates_if = t.Op("slice_if", OpKind::kSlice, {w_f},
                           SliceAttrs{.starts = {0}, .ends = {2 * h}, .axes = {0}});
  TensorId gates_go = t.Op("slice_go", OpKind::kSlice, {w_f},
                           SliceAttrs{.starts = {2 * h}, .ends = {4 * h}, .axes = {0}});
  TensorId reordered = t.Op("reorder", OpKind::kConcat, {gates_go, gates_if}, AxisAttrs{.axis = 0});
  TensorId uf = t.Op("unsq_f", OpKind::kUnsqueeze, {reordered}, AxesAttrs{.axes = {0}});
  TensorId ur = t.Op("unsq_r", OpKind::kUnsqueeze, {w_r}, AxesAttrs{.axes = {0}});
  TensorId w = t.Op("concat_w", OpKind::kConcat, {uf, ur}, AxisAttrs{.axis = 0});
  TensorId b = t.Op("concat_b", OpKind::kConcat, {b_ih, b_hh}, AxisAttrs{.axis = 0});
  TensorId bias_sum = t.Op("bias_sum", OpKind::kAdd, {b_ih, b_hh});
  TensorId c = t.Const("c", {4 * h});
  TensorId const_only = t.Op("const_only", OpKind::kNeg, {c});
  TensorId mixed = t.Op("mixed", OpKind::kMul, {bias_sum, c});  // parameter-derived x constant
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  EXPECT_EQ(t.g.tensor(w).shape, (Shape{2, 4 * h, 3}));
  const auto s = ParameterSources(t.g);
  EXPECT_THAT(s[gates_if], ElementsAre(w_f));
  EXPECT_THAT(s[reordered], ElementsAre(w_f));
  EXPECT_THAT(s[w], ElementsAre(w_f, w_r));
  EXPECT_THAT(s[b], ElementsAre(b_ih, b_hh));
  EXPECT_THAT(s[bias_sum], ElementsAre(b_ih, b_hh));
  EXPECT_THAT(s[mixed], ElementsAre(b_ih, b_hh));
  EXPECT_THAT(s[const_only], IsEmpty());
  for (const char* n : {"slice_if", "slice_go", "reorder", "unsq_f", "unsq_r", "concat_w",
                        "concat_b", "bias_sum", "mixed"}) {
    EXPECT_TRUE(IsParameterDerivation(t.g, t.Node(n), s)) << n;
  }
  // Reads only a constant: not a re-layout of weights.
  EXPECT_FALSE(IsParameterDerivation(t.g, t.Node("const_only"), s));
  EXPECT_EQ(CountParameters(t.g), 24 + 24 + 8 + 8);
}

TEST(ParameterSourcesTest, DataInputBreaksTheChain) {
  TestGraph t;
  TensorId w = t.Param("w", {3, 3});
  TensorId x = t.Input("x", {3, 3});
  TensorId y = t.Op("add", OpKind::kAdd, {w, x});
  TensorId z = t.Op("neg", OpKind::kNeg, {y});
  const auto s = ParameterSources(t.g);
  EXPECT_THAT(s[y], IsEmpty());
  EXPECT_THAT(s[z], IsEmpty());
  EXPECT_FALSE(IsParameterDerivation(t.g, t.Node("add"), s));
  EXPECT_FALSE(IsParameterDerivation(t.g, t.Node("neg"), s));
  // A stale or foreign sources vector and an out-of-range node are rejected, not read.
  EXPECT_FALSE(IsParameterDerivation(t.g, 99, s));
  EXPECT_FALSE(IsParameterDerivation(t.g, t.Node("add"), {}));
}

TEST(CountParametersTest, ConstantsAndInputsAreNotParameters) {
  TestGraph t;
  t.Input("x", {2, 3, 8, 8});
  t.Param("scale", {3});
  t.Param("bias", {3});
  t.Const("running_mean", {3});
  t.Const("running_var", {3});
  t.Param("unused", {5, 7});  // still a parameter of the model
  EXPECT_EQ(CountParameters(t.g), 3 + 3 + 35);
  EXPECT_EQ(CountParameterElements(t.g, {1, 1, 2, 3}), 6);  // duplicates and non-parameters
}

TEST(CountParametersTest, SaturatesInsteadOfOverflowing) {
  TestGraph t;
  t.Param("huge_a", {int64_t{1} << 40, int64_t{1} << 22});
  t.Param("huge_b", {int64_t{1} << 40, int64_t{1} << 22});
  EXPECT_EQ(CountParameters(t.g), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace tessera::graph
