// The rules that re-derive a static export's baked batch (graph/onnx/batch_rewrite.h), on
// small hand-built models; and ONNX Tile.
#include <string>

#include "gtest/gtest.h"
#include "onnx_test_util.h"

namespace tessera::graph {
namespace {

using testing::Named;
using testing::OnnxModel;

std::string Message(const absl::StatusOr<Graph>& g) {
  return g.ok() ? "ok" : std::string(g.status().message());
}

// x [in] -> Reshape(target) -> y
OnnxModel ReshapeModel(const std::vector<testing::Dim>& in, const std::vector<int64_t>& target) {
  OnnxModel m(13);
  m.Input("x", in);
  m.ConstI64("target", {static_cast<int64_t>(target.size())}, target);
  m.Node("Reshape", {"x", "target"}, {"y"}, "/reshape");
  m.Output("y");
  return m;
}

TEST(OnnxStaticBatchRulesTest, BakedBatchOfAViewIsRewritten) {
  // x.view(4, -1) traced at 4: the -1 would silently absorb a new batch as [4, 48].
  auto g = ReshapeModel({4, 3, 8}, {4, -1}).Import({.batch = 8});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Named(*g, "y").shape, (Shape{8, 24}));
}

TEST(OnnxStaticBatchRulesTest, ReshapeSplittingTheBatchIsAnError) {
  // [4, 6] -> [2, 12]: the batch of 4 is spread over both output axes.
  auto g = ReshapeModel({4, 6}, {2, 12}).Import({.batch = 8});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(Message(g).find("node '/reshape' (Reshape)"), std::string::npos) << Message(g);
  EXPECT_NE(Message(g).find("splits it over several dimensions"), std::string::npos)
      << Message(g);
  EXPECT_NE(Message(g).find("dynamic batch axis"), std::string::npos) << Message(g);
}

TEST(OnnxStaticBatchRulesTest, TracingBatchOfOneAttributesOnlyUnambiguousReshapes) {
  // [1, 10, 32] -> [10, 32]: only the 10 can hold the batch ([10*B, 32]).
  auto merged = ReshapeModel({1, 10, 32}, {10, 32}).Import({.batch = 8});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(Named(*merged, "y").shape, (Shape{80, 32}));
  // [1, 10, 32] -> [1, 10, 4, 8]: [B, 10, 4, 8] or [1, 10*B, 4, 8]? A batch of 1 has no place.
  auto heads = ReshapeModel({1, 10, 32}, {1, 10, 4, 8}).Import({.batch = 8});
  ASSERT_FALSE(heads.ok());
  EXPECT_NE(Message(heads).find("a tracing batch of 1 leaves its position open"),
            std::string::npos) << Message(heads);
}

TEST(OnnxStaticBatchRulesTest, TargetsComputedFromShapesAreLeftAlone) {
  OnnxModel m(13);
  m.Input("x", {4, 3, 8});
  m.Node("Shape", {"x"}, {"s"});
  m.ConstI64("i0", {1}, {0});
  m.Node("Gather", {"s", "i0"}, {"b"});
  m.ConstI64("rest", {1}, {-1});
  m.OnnxModel::AttrInt(m.Node("Concat", {"b", "rest"}, {"target"}), "axis", 0);
  m.Node("Reshape", {"x", "target"}, {"y"});
  m.Output("y");
  auto g = m.Import({.batch = 8});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Named(*g, "y").shape, (Shape{8, 24}));
}

OnnxModel SliceModel(int64_t end) {
  OnnxModel m(13);
  m.Input("x", {4, 6});
  m.ConstI64("starts", {1}, {0});
  m.ConstI64("ends", {1}, {end});
  m.ConstI64("axes", {1}, {0});
  m.Node("Slice", {"x", "starts", "ends", "axes"}, {"y"}, "/slice");
  m.Output("y");
  return m;
}

TEST(OnnxStaticBatchRulesTest, SliceOfTheWholeBatchFollowsAndAPartOfItIsAnError) {
  auto whole = SliceModel(4).Import({.batch = 8});
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(Named(*whole, "y").shape, (Shape{8, 6}));
  auto part = SliceModel(2).Import({.batch = 8});
  ASSERT_FALSE(part.ok());
  EXPECT_NE(Message(part).find("node '/slice' (Slice): takes elements [0:2:1] of axis 0"),
            std::string::npos) << Message(part);
  // At the file's batch the same slice is fine.
  EXPECT_TRUE(SliceModel(2).Import({.batch = 4}).ok());
}

TEST(OnnxStaticBatchRulesTest, ExpandOfTheBatchAxisFollows) {
  OnnxModel m(13);
  m.Input("x", {4, 1});
  m.ConstI64("shape", {2}, {4, 3});
  m.Node("Expand", {"x", "shape"}, {"y"});
  m.Output("y");
  auto g = m.Import({.batch = 8});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Named(*g, "y").shape, (Shape{8, 3}));
}

// LSTM (layout 1, batch first) whose initial_h is ConstantOfShape([4, 1, 5]): the exporter's
// form of torch.zeros(B, 1, 5) when the shape was folded and the fill was not.
OnnxModel LstmZeroStateModel(float fill_varies) {
  OnnxModel m(14);
  m.Input("x", {4, 6, 3});
  m.Input("w", {1, 20, 3});
  m.Input("r", {1, 20, 5});
  m.ConstI64("h_shape", {3}, {4, 1, 5});
  m.Node("ConstantOfShape", {"h_shape"}, {"h_zero"});
  if (fill_varies != 0) {
    m.ConstF32("ramp", {4, 1, 1}, {0, fill_varies, 2 * fill_varies, 3 * fill_varies});
    m.Node("Add", {"h_zero", "ramp"}, {"h0"});
  } else {
    m.Node("Identity", {"h_zero"}, {"h0"});
  }
  auto& lstm = m.Node("LSTM", {"x", "w", "r", "", "", "h0"}, {"y", "y_h"}, "/lstm");
  OnnxModel::AttrInt(lstm, "hidden_size", 5);
  OnnxModel::AttrInt(lstm, "layout", 1);
  m.Output("y");
  return m;
}

TEST(OnnxStaticBatchRulesTest, ZeroInitialStatesOfAnLstmFollowTheBatch) {
  auto g = LstmZeroStateModel(0).Import({.batch = 8});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Named(*g, "y").shape, (Shape{8, 6, 1, 5}));
  EXPECT_EQ(Named(*g, "y_h").shape, (Shape{8, 1, 5}));
  // A state whose values differ per batch row is not the same state at another batch.
  auto varies = LstmZeroStateModel(1).Import({.batch = 8});
  ASSERT_FALSE(varies.ok());
  EXPECT_NE(Message(varies).find("values that differ along it"), std::string::npos)
      << Message(varies);
}

TEST(OnnxStaticBatchRulesTest, TileOfDataIsExpandOnAnInterleavedView) {
  OnnxModel m(13);
  m.Input("x", {4, 3});
  m.ConstI64("repeats", {2}, {1, 2});
  m.Node("Tile", {"x", "repeats"}, {"y"}, "/tile");
  m.Output("y");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Named(*g, "y").shape, (Shape{4, 6}));
  EXPECT_NE(testing::OnlyNode(*g, OpKind::kExpand), nullptr);
  auto rebatched = m.Import({.batch = 8});
  ASSERT_TRUE(rebatched.ok()) << rebatched.status();
  EXPECT_EQ(Named(*rebatched, "y").shape, (Shape{8, 6}));
}

TEST(OnnxStaticBatchRulesTest, TileOfAConstantFolds) {
  OnnxModel m(13);
  m.Input("x", {2, 4});
  m.ConstF32("c", {1, 2}, {1, 2});
  m.ConstI64("repeats", {2}, {2, 2});
  m.Node("Tile", {"c", "repeats"}, {"tiled"});
  m.Node("Add", {"x", "tiled"}, {"y"});
  m.Output("y");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  const Tensor& tiled = Named(*g, "tiled");
  EXPECT_EQ(tiled.shape, (Shape{2, 4}));
  EXPECT_EQ(tiled.data, (std::vector<double>{1, 2, 1, 2, 1, 2, 1, 2}));
  // Wrong repeats name the node.
  OnnxModel bad(13);
  bad.Input("x", {2, 4});
  bad.ConstI64("repeats", {1}, {2});
  bad.Node("Tile", {"x", "repeats"}, {"y"}, "/tile");
  bad.Output("y");
  auto e = bad.Import();
  ASSERT_FALSE(e.ok());
  EXPECT_NE(Message(e).find("node '/tile' (Tile): repeats has 1 entries for an input of rank 2"),
            std::string::npos) << Message(e);
}

}  // namespace
}  // namespace tessera::graph
