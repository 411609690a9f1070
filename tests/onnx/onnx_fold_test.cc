// Folding of shape-computing subgraphs at import time, on hand-built ONNX models.
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "tessera/graph/onnx/onnx_import.h"
#include "tessera/graph/parameters.h"
#include "onnx_test_util.h"

namespace tessera::graph {
namespace {

using testing::Named;
using testing::OnlyNode;
using testing::OnnxModel;

// x[batch, 3, 4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [12])): the
// target shape is built from x's own shape, as torch's x.view(x.size(0), -1) is.
OnnxModel ViewFlatten(int64_t opset) {
  OnnxModel m(opset);
  m.Input("x", {"batch", 3, 4});
  m.Node("Shape", {"x"}, {"shape"});
  m.ConstI64("zero", {}, {0});
  m.Node("Gather", {"shape", "zero"}, {"b"});
  if (opset >= 13) {
    m.ConstI64("axes", {1}, {0});
    m.Node("Unsqueeze", {"b", "axes"}, {"b1"});
  } else {
    OnnxModel::AttrInts(m.Node("Unsqueeze", {"b"}, {"b1"}), "axes", {0});
  }
  m.ConstI64("rest", {1}, {12});
  OnnxModel::AttrInt(m.Node("Concat", {"b1", "rest"}, {"target"}), "axis", 0);
  m.Node("Reshape", {"x", "target"}, {"y"}, "/view");
  m.Output("y");
  return m;
}

TEST(OnnxFold, ShapeGatherUnsqueezeConcatReshapeFoldsAtEveryOpset) {
  for (int64_t opset : {11, 13, 17}) {
    SCOPED_TRACE(opset);
    auto g = ViewFlatten(opset).Import({.batch = 5});
    ASSERT_TRUE(g.ok()) << g.status();
    ASSERT_EQ(g->num_nodes(), 1);  // Shape, Gather, Unsqueeze, Concat emit nothing
    const Node& reshape = g->node(0);
    EXPECT_EQ(reshape.kind, OpKind::kReshape);
    EXPECT_EQ(reshape.name, "/view");
    EXPECT_EQ(std::get<ReshapeAttrs>(reshape.attrs).shape, (std::vector<int64_t>{5, 12}));
    EXPECT_EQ(Named(*g, "y").shape, (Shape{5, 12}));
    EXPECT_EQ(Named(*g, "x").role, TensorRole::kInput);
    EXPECT_FALSE(g->FindTensor("shape").has_value());  // folded values get no tensor
  }
}

TEST(OnnxFold, SymbolicBatchWithoutABatchOptionIsOne) {
  auto g = ViewFlatten(13).Import();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Named(*g, "y").shape, (Shape{1, 12}));
}

TEST(OnnxFold, ConstantOfShapeKeepsItsValues) {
  OnnxModel m(13);
  m.Input("x", {"batch", 4});
  m.Node("Shape", {"x"}, {"s"});
  auto& cos = m.Node("ConstantOfShape", {"s"}, {"half"});
  OnnxModel::AttrTensor(cos, "value", OnnxModel::F32Tensor({1}, {0.5f}));
  m.Node("Add", {"x", "half"}, {"y"});
  m.Output("y");
  auto g = m.Import({.batch = 3});
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->num_nodes(), 1);
  const Tensor& half = Named(*g, "half");
  EXPECT_EQ(half.role, TensorRole::kConstant);
  EXPECT_EQ(half.shape, (Shape{3, 4}));
  EXPECT_EQ(half.data, std::vector<double>(12, 0.5));
}

TEST(OnnxFold, ConstantOfShapeAboveTheFoldLimitIsAConstantWithoutValues) {
  OnnxModel m(13);
  m.Input("x", {2048, 2048});
  m.Node("Shape", {"x"}, {"s"});
  m.Node("ConstantOfShape", {"s"}, {"zeros"});
  m.Node("Add", {"x", "zeros"}, {"y"});
  m.Output("y");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  const Tensor& zeros = Named(*g, "zeros");
  EXPECT_EQ(zeros.role, TensorRole::kConstant);
  EXPECT_EQ(zeros.shape, (Shape{2048, 2048}));
  EXPECT_TRUE(zeros.data.empty());
}

TEST(OnnxFold, ExpandTargetFromAShapeSubgraph) {
  OnnxModel m(13);
  m.Input("x", {"batch", 6});
  m.Input("row", {1, 6});
  m.Node("Shape", {"x"}, {"s"});
  m.ConstI64("zero", {1}, {0});
  m.ConstI64("one", {1}, {1});
  m.Node("Slice", {"s", "zero", "one"}, {"b"});  // [batch]
  m.ConstI64("six", {1}, {6});
  OnnxModel::AttrInt(m.Node("Concat", {"b", "six"}, {"target"}), "axis", 0);
  m.Node("Expand", {"row", "target"}, {"rows"});
  m.Node("Mul", {"x", "rows"}, {"y"});
  m.Output("y");
  auto g = m.Import({.batch = 7});
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* expand = OnlyNode(*g, OpKind::kExpand);
  ASSERT_NE(expand, nullptr);
  EXPECT_EQ(std::get<ExpandAttrs>(expand->attrs).shape, (std::vector<int64_t>{7, 6}));
  EXPECT_EQ(Named(*g, "rows").shape, (Shape{7, 6}));
}

TEST(OnnxFold, SliceWithInt64MaxEndsOnShapesAndOnData) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  OnnxModel m(13);
  m.Input("x", {"batch", 10, 6});
  m.Node("Shape", {"x"}, {"s"});
  m.ConstI64("minus1", {1}, {-1});
  m.ConstI64("max", {1}, {kMax});
  m.ConstI64("axis0", {1}, {0});
  m.Node("Slice", {"s", "minus1", "max", "axis0"}, {"last"});  // [6], folded
  m.ConstI64("lead", {1}, {-1});
  OnnxModel::AttrInt(m.Node("Concat", {"lead", "last"}, {"target"}), "axis", 0);
  m.Node("Reshape", {"x", "target"}, {"flat"});
  m.ConstI64("two", {1}, {2});
  m.Node("Slice", {"flat", "two", "max", "axis0"}, {"tail"}, "/tail");  // rows 2.. of data
  m.Output("tail");
  auto g = m.Import({.batch = 3});
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* reshape = OnlyNode(*g, OpKind::kReshape);
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(std::get<ReshapeAttrs>(reshape->attrs).shape, (std::vector<int64_t>{-1, 6}));
  const Node* slice = OnlyNode(*g, OpKind::kSlice);
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(std::get<SliceAttrs>(slice->attrs).ends, (std::vector<int64_t>{kMax}));
  EXPECT_EQ(Named(*g, "flat").shape, (Shape{30, 6}));
  EXPECT_EQ(Named(*g, "tail").shape, (Shape{28, 6}));
}

TEST(OnnxFold, CastAndArithmeticOnAShapeGiveAConstantScale) {
  // y = x * (1 / sqrt(float(d))) with d the last dim of x, as attention scaling exports.
  OnnxModel m(13);
  m.Input("x", {2, 16});
  m.Node("Shape", {"x"}, {"s"});
  m.ConstI64("last", {}, {-1});
  m.Node("Gather", {"s", "last"}, {"d"});
  OnnxModel::AttrInt(m.Node("Cast", {"d"}, {"df"}), "to", onnx::TensorProto::FLOAT);
  m.Node("Sqrt", {"df"}, {"root"});
  m.ConstF32("one", {}, {1.0f});
  m.Node("Div", {"one", "root"}, {"scale"});
  m.Node("Mul", {"x", "scale"}, {"y"});
  m.Output("y");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->num_nodes(), 1);
  const Tensor& scale = Named(*g, "scale");
  EXPECT_EQ(scale.role, TensorRole::kConstant);
  EXPECT_EQ(scale.shape, Shape{});
  ASSERT_EQ(scale.data.size(), 1u);
  EXPECT_DOUBLE_EQ(scale.data[0], 0.25);
}

TEST(OnnxFold, RangeOverTheSequenceLengthFeedsAnEmbedding) {
  OnnxModel m(13);
  m.Input("tokens", {"batch", "seq"}, onnx::TensorProto::INT64);
  m.Input("pos.weight", {64, 8});
  m.Node("Shape", {"tokens"}, {"s"});
  m.ConstI64("one", {}, {1});
  m.Node("Gather", {"s", "one"}, {"t"});
  m.ConstI64("zero", {}, {0});
  m.ConstI64("step", {}, {1});
  m.Node("Range", {"zero", "t", "step"}, {"positions"});
  m.Node("Gather", {"pos.weight", "positions"}, {"y"}, "/pos");
  m.Output("y");
  auto g = m.Import({.batch = 2, .symbolic_dims = {{"seq", 5}}});
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* emb = OnlyNode(*g, OpKind::kEmbedding);
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(g->tensor(emb->inputs[0]).data, (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(g->tensor(emb->inputs[1]).role, TensorRole::kParameter);
  EXPECT_EQ(Named(*g, "y").shape, (Shape{5, 8}));
  EXPECT_EQ(CountParameters(*g), 64 * 8);
}

TEST(OnnxFold, EqualWhereLessNotOnShapes) {
  // Where(Equal(target, 0), Shape(x), target) is torch's "0 copies the dim" pattern.
  OnnxModel m(13);
  m.Input("x", {4, 8});
  m.Node("Shape", {"x"}, {"s"});
  m.ConstI64("target", {2}, {0, 3});
  m.ConstI64("zeros", {2}, {0, 0});
  m.Node("Equal", {"target", "zeros"}, {"is_zero"});
  m.Node("Where", {"is_zero", "s", "target"}, {"resolved"});  // [4, 3]
  m.ConstI64("ones", {2}, {1, 1});
  m.Node("Less", {"target", "ones"}, {"lt"});                  // [true, false]
  m.Node("Not", {"lt"}, {"ge"});                               // [false, true]
  OnnxModel::AttrInt(m.Node("Cast", {"ge"}, {"inc"}), "to", onnx::TensorProto::INT64);
  m.Node("Add", {"resolved", "inc"}, {"sum"});                 // [4, 4]
  m.ConstI64("two", {1}, {2});
  OnnxModel::AttrInt(m.Node("Concat", {"sum", "two"}, {"final"}), "axis", 0);
  m.Node("Reshape", {"x", "final"}, {"y"});
  m.Output("y");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->num_nodes(), 1);
  EXPECT_EQ(std::get<ReshapeAttrs>(g->node(0).attrs).shape, (std::vector<int64_t>{4, 4, 2}));
  EXPECT_EQ(Named(*g, "y").shape, (Shape{4, 4, 2}));
}

TEST(OnnxFold, CausalMaskFromRangeAndGreaterIsAConstantCondition) {
  OnnxModel m(13);
  m.Input("scores", {2, 3, 3});
  m.Node("Shape", {"scores"}, {"s"});
  m.ConstI64("last", {}, {-1});
  m.Node("Gather", {"s", "last"}, {"t"});
  m.ConstI64("zero", {}, {0});
  m.ConstI64("one", {}, {1});
  m.Node("Range", {"zero", "t", "one"}, {"idx"});
  m.ConstI64("ax0", {1}, {0});
  m.ConstI64("ax1", {1}, {1});
  m.Node("Unsqueeze", {"idx", "ax0"}, {"row"});
  m.Node("Unsqueeze", {"idx", "ax1"}, {"col"});
  m.Node("Greater", {"row", "col"}, {"mask"});
  m.ConstF32("ninf", {}, {-std::numeric_limits<float>::infinity()});
  m.Node("Where", {"mask", "ninf", "scores"}, {"y"});
  m.Output("y");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* where = OnlyNode(*g, OpKind::kWhere);
  ASSERT_NE(where, nullptr);
  const Tensor& mask = g->tensor(where->inputs[0]);
  EXPECT_EQ(mask.dtype, DType::kBool);
  EXPECT_EQ(mask.data, (std::vector<double>{0, 1, 1, 0, 0, 1, 0, 0, 0}));
  EXPECT_TRUE(std::isinf(g->tensor(where->inputs[1]).data.at(0)));
}

}  // namespace
}  // namespace tessera::graph
