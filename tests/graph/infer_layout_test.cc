// Shape inference of the layout ops: Reshape, Transpose, Flatten, Concat,
// Split, Slice, Squeeze, Unsqueeze, Gather, Expand, Pad, Identity.
#include <gtest/gtest.h>

#include <limits>

#include "graph_test_util.h"

namespace tessera::graph::testing {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

absl::StatusOr<Shape> Reshape(Shape in, std::vector<int64_t> target) {
  return InferShape(OpKind::kReshape, {In{std::move(in)}}, ReshapeAttrs{.shape = std::move(target)},
                    "reshape");
}

TEST(InferReshapeTest, ZeroCopiesAndMinusOneInfers) {
  EXPECT_SHAPE(Reshape({2, 3, 4}, {0, -1}), {2, 12});
  EXPECT_SHAPE(Reshape({2, 3, 4}, {-1}), {24});
  EXPECT_SHAPE(Reshape({2, 3, 4}, {4, 0, 2}), {4, 3, 2});  // 0 copies input dim 1 (3)
  EXPECT_SHAPE(Reshape({2, 3, 4}, {2, 3, 2, 2}), {2, 3, 2, 2});
  EXPECT_SHAPE(Reshape({2, 3, 4}, {-1, 1, 1}), {24, 1, 1});
  EXPECT_SHAPE(Reshape({1}, {}), {});
}

TEST(InferReshapeTest, Errors) {
  EXPECT_TRUE(HasError(Reshape({2, 3, 4}, {5, -1}).status(),
                       {"node 'reshape' (Reshape)", "'in0' [2,3,4] f32",
                        "cannot infer the -1 in target [5,-1] from 24 elements"}));
  EXPECT_TRUE(HasError(Reshape({2, 3, 4}, {-1, -1}).status(), {"more than one -1"}));
  EXPECT_TRUE(
      HasError(Reshape({2, 3, 4}, {7}).status(), {"target [7] has 7 elements; the input has 24"}));
  EXPECT_TRUE(HasError(Reshape({2, 3}, {0, 0, 0}).status(), {"target dim 2 is 0 (copy)"}));
  EXPECT_TRUE(HasError(Reshape({2, 3}, {-2, 3}).status(), {"target dim 0 is -2"}));
}

TEST(InferTransposeTest, PermAndReverse) {
  EXPECT_SHAPE(InferShape(OpKind::kTranspose, {In{{2, 3, 4}}}, PermAttrs{.perm = {1, 2, 0}}),
               {3, 4, 2});
  EXPECT_SHAPE(InferShape(OpKind::kTranspose, {In{{2, 3, 4}}}, PermAttrs{}), {4, 3, 2});
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kTranspose, {In{{2, 3, 4}}}, PermAttrs{.perm = {0, 0, 1}}, "t").status(),
      {"node 't' (Transpose)", "[2,3,4]", "perm [0,0,1] is not a permutation of 0..2"}));
  EXPECT_TRUE(
      HasError(InferShape(OpKind::kTranspose, {In{{2, 3, 4}}}, PermAttrs{.perm = {1, 0}}).status(),
               {"must have 3 entries"}));
}

TEST(InferFlattenTest, Axes) {
  EXPECT_SHAPE(InferShape(OpKind::kFlatten, {In{{2, 3, 4, 5}}}, AxisAttrs{.axis = 1}), {2, 60});
  EXPECT_SHAPE(InferShape(OpKind::kFlatten, {In{{2, 3, 4, 5}}}, AxisAttrs{.axis = 0}), {1, 120});
  EXPECT_SHAPE(InferShape(OpKind::kFlatten, {In{{2, 3, 4, 5}}}, AxisAttrs{.axis = -1}), {24, 5});
  EXPECT_SHAPE(InferShape(OpKind::kFlatten, {In{{2, 3, 4, 5}}}, AxisAttrs{.axis = 4}), {120, 1});
  EXPECT_TRUE(HasError(InferShape(OpKind::kFlatten, {In{{2, 3}}}, AxisAttrs{.axis = 3}).status(),
                       {"axis 3"}));
}

TEST(InferConcatTest, AlongAnAxis) {
  EXPECT_SHAPE(InferShape(OpKind::kConcat, {In{{2, 3}}, In{{2, 5}}}, AxisAttrs{.axis = 1}), {2, 8});
  EXPECT_SHAPE(InferShape(OpKind::kConcat, {In{{2, 3}}, In{{2, 5}}}, AxisAttrs{.axis = -1}),
               {2, 8});
  EXPECT_SHAPE(
      InferShape(OpKind::kConcat, {In{{1, 4}}, In{{2, 4}}, In{{3, 4}}}, AxisAttrs{.axis = 0}),
      {6, 4});
  EXPECT_SHAPE(InferShape(OpKind::kConcat, {In{{2, 3}}}, AxisAttrs{.axis = 0}), {2, 3});
}

TEST(InferConcatTest, Errors) {
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kConcat, {In{{2, 3}}, In{{3, 5}}}, AxisAttrs{.axis = 1}, "cat").status(),
      {"node 'cat' (Concat)", "'in0' [2,3] f32", "'in1' [3,5] f32",
       "inputs differ in dimension 0 (2 vs 3); only axis 1 may differ"}));
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kConcat, {In{{2, 3}}, In{{2, 3, 1}}}, AxisAttrs{.axis = 1}).status(),
      {"one rank and dtype"}));
  // An absent input (null in a file) is an error, not a crash.
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kConcat, {In{{2, 3}}, std::nullopt}, AxisAttrs{.axis = 1}).status(),
      {"input 1 is absent"}));
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kConcat, {In{{kMax / 2, 1}}, In{{kMax / 2 + 2, 1}}}, AxisAttrs{.axis = 0})
          .status(),
      {"overflows"}));
}

TEST(InferSplitTest, SizesPerOutput) {
  auto types = InferNode(OpKind::kSplit, {In{{10, 6}}}, SplitAttrs{.axis = 0, .sizes = {3, 7}}, 2);
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->at(0).shape, (Shape{3, 6}));
  EXPECT_EQ(types->at(1).shape, (Shape{7, 6}));
  types = InferNode(OpKind::kSplit, {In{{10, 6}}}, SplitAttrs{.axis = -1, .sizes = {2, 0, 4}}, 3);
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->at(0).shape, (Shape{10, 2}));
  EXPECT_EQ(types->at(1).shape, (Shape{10, 0}));
  EXPECT_EQ(types->at(2).shape, (Shape{10, 4}));
}

TEST(InferSplitTest, Errors) {
  auto sum =
      InferNode(OpKind::kSplit, {In{{10, 6}}}, SplitAttrs{.axis = 0, .sizes = {3, 6}}, 2, "sp");
  EXPECT_TRUE(HasError(sum.status(), {"node 'sp' (Split)", "'in0' [10,6] f32",
                                      "split sizes add up to 9, not to dimension 0 (10)"}));
  auto count = InferNode(OpKind::kSplit, {In{{10, 6}}}, SplitAttrs{.axis = 0, .sizes = {10}}, 2);
  EXPECT_TRUE(HasError(count.status(), {"has 1 split sizes but 2 outputs"}));
  auto overflow =
      InferNode(OpKind::kSplit, {In{{10, 6}}}, SplitAttrs{.axis = 0, .sizes = {kMax, kMax}}, 2);
  EXPECT_TRUE(HasError(overflow.status(), {"overflow"}));
}

absl::StatusOr<Shape> Slice(Shape in, SliceAttrs attrs) {
  return InferShape(OpKind::kSlice, {In{std::move(in)}}, std::move(attrs), "slice");
}

TEST(InferSliceTest, PositiveSteps) {
  // [1, -1) on axis 0 of 10: 1..8 -> 8 values.
  EXPECT_SHAPE(Slice({10, 20, 30}, {.starts = {1}, .ends = {-1}, .axes = {0}}), {8, 20, 30});
  // Huge end clamps to 20; step 3 over 0..19 -> 0,3,...,18 = 7 values.
  EXPECT_SHAPE(Slice({10, 20, 30}, {.starts = {0}, .ends = {kMax}, .axes = {1}, .steps = {3}}),
               {10, 7, 30});
  // Start beyond -dim clamps to 0; end beyond dim clamps to dim.
  EXPECT_SHAPE(Slice({10, 20, 30}, {.starts = {-1000}, .ends = {1000}}), {10, 20, 30});
  // Empty when start >= end.
  EXPECT_SHAPE(Slice({10, 20, 30}, {.starts = {5}, .ends = {2}, .axes = {0}}), {0, 20, 30});
  // Axes default to 0..n-1.
  EXPECT_SHAPE(Slice({10, 20, 30}, {.starts = {2, 5}, .ends = {4, 6}}), {2, 1, 30});
}

TEST(InferSliceTest, NegativeSteps) {
  // Full reversal: start -1 (29), end INT64_MIN (before 0): 30 values.
  EXPECT_SHAPE(Slice({10, 20, 30}, {.starts = {-1}, .ends = {kMin}, .axes = {2}, .steps = {-1}}),
               {10, 20, 30});
  // 29, 27, ..., 1: 15 values.
  EXPECT_SHAPE(Slice({10, 20, 30}, {.starts = {-1}, .ends = {-1000}, .axes = {2}, .steps = {-2}}),
               {10, 20, 15});
  // Axis 0: 8, 5 (end 2 excluded) = 2 values; axis -1: [25, 30) = 5 values.
  EXPECT_SHAPE(
      Slice({10, 20, 30}, {.starts = {8, -5}, .ends = {2, 100}, .axes = {0, -1}, .steps = {-3, 1}}),
      {2, 20, 5});
  // The most negative step takes one value.
  EXPECT_SHAPE(Slice({10}, {.starts = {9}, .ends = {kMin}, .steps = {kMin}}), {1});
  // A zero-size axis stays empty with a negative step.
  EXPECT_SHAPE(Slice({0, 4}, {.starts = {-1}, .ends = {kMin}, .axes = {0}, .steps = {-1}}), {0, 4});
}

TEST(InferSliceTest, Errors) {
  EXPECT_TRUE(HasError(Slice({10, 20}, {.starts = {0}, .ends = {5}, .steps = {0}}).status(),
                       {"node 'slice' (Slice)", "'in0' [10,20] f32", "step must not be 0"}));
  EXPECT_TRUE(
      HasError(Slice({10, 20}, {.starts = {0, 0}, .ends = {5, 5}, .axes = {1, -1}}).status(),
               {"out of range or repeated"}));
  EXPECT_TRUE(HasError(Slice({10, 20}, {.starts = {0}, .ends = {5}, .axes = {2}}).status(),
                       {"out of range or repeated"}));
  EXPECT_TRUE(HasError(Slice({10, 20}, {.starts = {0, 1}, .ends = {5}}).status(),
                       {"must have one length"}));
}

TEST(InferSqueezeTest, ExplicitAndImplicitAxes) {
  EXPECT_SHAPE(InferShape(OpKind::kSqueeze, {In{{1, 3, 1, 5}}}, AxesAttrs{}), {3, 5});
  EXPECT_SHAPE(InferShape(OpKind::kSqueeze, {In{{1, 3, 1, 5}}}, AxesAttrs{.axes = {0}}), {3, 1, 5});
  EXPECT_SHAPE(InferShape(OpKind::kSqueeze, {In{{1, 3, 1, 5}}}, AxesAttrs{.axes = {-2}}),
               {1, 3, 5});
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kSqueeze, {In{{1, 3, 1, 5}}}, AxesAttrs{.axes = {1}}, "sq").status(),
      {"node 'sq' (Squeeze)", "[1,3,1,5]", "cannot squeeze axis 1 of size 3"}));
  EXPECT_TRUE(HasError(InferShape(OpKind::kSqueeze, {In{{1, 3}}}, AxesAttrs{.axes = {2}}).status(),
                       {"axis 2"}));
}

TEST(InferUnsqueezeTest, AxesCountInTheOutputRank) {
  EXPECT_SHAPE(InferShape(OpKind::kUnsqueeze, {In{{3, 5}}}, AxesAttrs{.axes = {0}}), {1, 3, 5});
  EXPECT_SHAPE(InferShape(OpKind::kUnsqueeze, {In{{3, 5}}}, AxesAttrs{.axes = {0, 3}}),
               {1, 3, 5, 1});
  EXPECT_SHAPE(InferShape(OpKind::kUnsqueeze, {In{{3, 5}}}, AxesAttrs{.axes = {-1}}), {3, 5, 1});
  // Output rank 4: axes 1 and -1 (3).
  EXPECT_SHAPE(InferShape(OpKind::kUnsqueeze, {In{{3, 5}}}, AxesAttrs{.axes = {1, -1}}),
               {3, 1, 5, 1});
  EXPECT_SHAPE(InferShape(OpKind::kUnsqueeze, {In{{}}}, AxesAttrs{.axes = {0}}), {1});
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kUnsqueeze, {In{{3, 5}}}, AxesAttrs{.axes = {1, 1}}, "u").status(),
      {"node 'u' (Unsqueeze)", "[3,5]", "axis 1 is out of range or repeated"}));
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kUnsqueeze, {In{{3, 5}}}, AxesAttrs{.axes = {3}}).status(), {"axis 3"}));
}

TEST(InferGatherTest, IndicesReplaceTheAxis) {
  EXPECT_SHAPE(InferShape(OpKind::kGather, {In{{100, 64}}, In{{8, 20}, DType::kI64}}), {8, 20, 64});
  EXPECT_SHAPE(
      InferShape(OpKind::kGather, {In{{5, 6, 7}}, In{{3}, DType::kI32}}, AxisAttrs{.axis = 1}),
      {5, 3, 7});
  EXPECT_SHAPE(
      InferShape(OpKind::kGather, {In{{5, 6, 7}}, In{{2, 2}, DType::kI32}}, AxisAttrs{.axis = -1}),
      {5, 6, 2, 2});
  EXPECT_SHAPE(InferShape(OpKind::kGather, {In{{5, 6}}, In{{}, DType::kI64}}),
               {6});  // scalar index
  EXPECT_TRUE(HasError(InferShape(OpKind::kGather, {In{{5, 6}}, In{{3}}}, {}, "g").status(),
                       {"node 'g' (Gather)", "'in1' [3] f32", "indices must be i32 or i64"}));
  EXPECT_TRUE(
      HasError(InferShape(OpKind::kGather, {In{{5, 6}}, In{{3}, DType::kI64}}, AxisAttrs{.axis = 2})
                   .status(),
               {"axis is out of range"}));
}

TEST(InferExpandTest, BidirectionalBroadcast) {
  EXPECT_SHAPE(InferShape(OpKind::kExpand, {In{{3, 1}}}, ExpandAttrs{.shape = {2, 3, 4}}),
               {2, 3, 4});
  EXPECT_SHAPE(InferShape(OpKind::kExpand, {In{{1}}}, ExpandAttrs{.shape = {5}}), {5});
  EXPECT_SHAPE(InferShape(OpKind::kExpand, {In{{3, 4}}}, ExpandAttrs{.shape = {1, 1}}), {3, 4});
  EXPECT_TRUE(
      HasError(InferShape(OpKind::kExpand, {In{{3}}}, ExpandAttrs{.shape = {4}}, "ex").status(),
               {"node 'ex' (Expand)", "'in0' [3] f32", "cannot expand to [4]"}));
}

TEST(InferPadTest, BeginsThenEnds) {
  // pads {1, 2, 3, 4}: axis 0 gets 1 + 3, axis 1 gets 2 + 4.
  EXPECT_SHAPE(InferShape(OpKind::kPad, {In{{2, 3}}}, PadAttrs{.pads = {1, 2, 3, 4}}), {6, 9});
  EXPECT_SHAPE(InferShape(OpKind::kPad, {In{{2, 3}}}, PadAttrs{.pads = {0, -1, 0, -1}}), {2, 1});
  EXPECT_TRUE(
      HasError(InferShape(OpKind::kPad, {In{{2, 3}}}, PadAttrs{.pads = {1, 1}}, "p").status(),
               {"node 'p' (Pad)", "[2,3]", "pads must have 4 values"}));
  EXPECT_TRUE(
      HasError(InferShape(OpKind::kPad, {In{{2, 3}}}, PadAttrs{.pads = {0, -2, 0, -2}}).status(),
               {"padding makes axis 1 negative"}));
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kPad, {In{{2, 3}}}, PadAttrs{.pads = {kMax, 0, kMax, 0}}).status(),
      {"overflows"}));
}

TEST(InferIdentityTest, SameShapeAndDtype) {
  auto types = InferNode(OpKind::kIdentity, {In{{4, 0, 2}, DType::kBool}});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->at(0), (TensorType{{4, 0, 2}, DType::kBool}));
}

}  // namespace
}  // namespace tessera::graph::testing
