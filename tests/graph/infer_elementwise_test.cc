// Shape inference of element-wise ops, reductions and softmax.
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace tessera::graph::testing {
namespace {

TEST(InferUnaryTest, EveryUnaryOpKeepsShapeAndDtype) {
  for (OpKind kind :
       {OpKind::kRelu, OpKind::kLeakyRelu, OpKind::kSigmoid, OpKind::kTanh, OpKind::kGelu,
        OpKind::kErf, OpKind::kSqrt, OpKind::kExp, OpKind::kLog, OpKind::kNeg, OpKind::kReciprocal,
        OpKind::kAbs, OpKind::kClip, OpKind::kDropout, OpKind::kIdentity}) {
    SCOPED_TRACE(OpName(kind));
    auto types = InferNode(kind, {In{{3, 5, 7}, DType::kF16}});
    ASSERT_TRUE(types.ok()) << types.status();
    ASSERT_EQ(types->size(), 1u);
    EXPECT_EQ(types->at(0), (TensorType{{3, 5, 7}, DType::kF16}));
  }
}

TEST(InferUnaryTest, WrongInputCountNamesNode) {
  auto r = InferShape(OpKind::kRelu, {In{{2}}, In{{2}}}, {}, "act");
  EXPECT_TRUE(HasError(r.status(), {"node 'act' (Relu)", "has 2 inputs; expected 1 to 1"}));
}

TEST(InferCastTest, ChangesOnlyTheDtype) {
  auto types = InferNode(OpKind::kCast, {In{{3, 5}}}, CastAttrs{.to = DType::kI64});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->at(0), (TensorType{{3, 5}, DType::kI64}));
}

TEST(InferBinaryTest, NumpyBroadcasting) {
  EXPECT_SHAPE(InferShape(OpKind::kAdd, {In{{4, 1, 5}}, In{{3, 1}}}), {4, 3, 5});
  EXPECT_SHAPE(InferShape(OpKind::kSub, {In{{}}, In{{2, 3}}}), {2, 3});
  EXPECT_SHAPE(InferShape(OpKind::kMul, {In{{2, 3}}, In{{2, 3}}}), {2, 3});
  EXPECT_SHAPE(InferShape(OpKind::kDiv, {In{{8, 1, 6, 1}}, In{{7, 1, 5}}}), {8, 7, 6, 5});
  EXPECT_SHAPE(InferShape(OpKind::kPow, {In{{2, 3}}, In{{1}}}), {2, 3});
  EXPECT_SHAPE(InferShape(OpKind::kAdd, {In{{0, 3}}, In{{1, 3}}}), {0, 3});
}

TEST(InferBinaryTest, Errors) {
  EXPECT_TRUE(HasError(InferShape(OpKind::kAdd, {In{{3, 4}}, In{{5}}}, {}, "add1").status(),
                       {"node 'add1' (Add)", "'in0' [3,4] f32", "'in1' [5] f32",
                        "the two shapes do not broadcast"}));
  EXPECT_TRUE(HasError(InferShape(OpKind::kMul, {In{{3}}, In{{3}, DType::kF16}}).status(),
                       {"both inputs must have one dtype (got f32 and f16)"}));
}

TEST(InferWhereTest, ThreeWayBroadcast) {
  auto types = InferNode(OpKind::kWhere,
                         {In{{4, 1}, DType::kBool}, In{{1, 5}, DType::kI32}, In{{}, DType::kI32}});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->at(0), (TensorType{{4, 5}, DType::kI32}));
}

TEST(InferWhereTest, Errors) {
  EXPECT_TRUE(HasError(InferShape(OpKind::kWhere, {In{{4}}, In{{4}}, In{{4}}}, {}, "w").status(),
                       {"node 'w' (Where)", "'in0' [4] f32", "cond (input 0) must be bool"}));
  EXPECT_TRUE(
      HasError(InferShape(OpKind::kWhere, {In{{4}, DType::kBool}, In{{3}}, In{{4}}}).status(),
               {"do not broadcast"}));
}

TEST(InferReduceTest, KeepdimsAndAxes) {
  for (OpKind kind : {OpKind::kReduceMean, OpKind::kReduceSum, OpKind::kReduceMax}) {
    SCOPED_TRACE(OpName(kind));
    EXPECT_SHAPE(InferShape(kind, {In{{2, 3, 4}}}, AxesAttrs{.axes = {1}}), {2, 1, 4});
    EXPECT_SHAPE(InferShape(kind, {In{{2, 3, 4}}}, AxesAttrs{.axes = {1}, .keepdims = false}),
                 {2, 4});
    EXPECT_SHAPE(InferShape(kind, {In{{2, 3, 4}}}, AxesAttrs{.keepdims = false}), {});
    EXPECT_SHAPE(InferShape(kind, {In{{2, 3, 4}}}, AxesAttrs{}), {1, 1, 1});
    EXPECT_SHAPE(InferShape(kind, {In{{2, 3, 4}}}, AxesAttrs{.axes = {-1, 0}}), {1, 3, 1});
  }
}

TEST(InferReduceTest, AxisOutOfRange) {
  auto r = InferShape(OpKind::kReduceSum, {In{{2, 3}}}, AxesAttrs{.axes = {2}}, "sum");
  EXPECT_TRUE(HasError(r.status(), {"node 'sum' (ReduceSum)", "'in0' [2,3] f32",
                                    "axis 2 is out of range for rank 2"}));
}

TEST(InferSoftmaxTest, KeepsShape) {
  for (OpKind kind : {OpKind::kSoftmax, OpKind::kLogSoftmax}) {
    EXPECT_SHAPE(InferShape(kind, {In{{2, 10}}}, AxisAttrs{.axis = -1}), {2, 10});
    EXPECT_SHAPE(InferShape(kind, {In{{2, 3, 4}}}, AxisAttrs{.axis = 1}), {2, 3, 4});
  }
}

TEST(InferSoftmaxTest, Errors) {
  EXPECT_TRUE(
      HasError(InferShape(OpKind::kSoftmax, {In{{2, 10}}}, AxisAttrs{.axis = 2}, "sm").status(),
               {"node 'sm' (Softmax)", "'in0' [2,10] f32", "axis 2 is out of range for rank 2"}));
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kLogSoftmax, {In{{2, 10}, DType::kI32}}, AxisAttrs{.axis = 1}).status(),
      {"[2,10] i32", "input must be floating point"}));
}

}  // namespace
}  // namespace tessera::graph::testing
