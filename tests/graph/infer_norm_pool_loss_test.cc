// Shape inference of normalization, pooling and loss ops.
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace tessera::graph::testing {
namespace {

TEST(InferBatchNormTest, KeepsShape) {
  EXPECT_SHAPE(
      InferShape(OpKind::kBatchNorm, {In{{8, 16, 5, 5}}, In{{16}}, In{{16}}, In{{16}}, In{{16}}}),
      {8, 16, 5, 5});
  EXPECT_SHAPE(
      InferShape(OpKind::kBatchNorm, {In{{8, 16}}, In{{16}}, In{{16}}, In{{16}}, In{{16}}}),
      {8, 16});
}

TEST(InferBatchNormTest, ChannelMismatch) {
  auto r = InferShape(OpKind::kBatchNorm,
                      {In{{8, 16, 5, 5}}, In{{16}}, In{{16}}, In{{15}}, In{{16}}}, {}, "bn1");
  EXPECT_TRUE(HasError(r.status(), {"node 'bn1' (BatchNormalization)", "'in0' [8,16,5,5] f32",
                                    "'in3' [15] f32", "must all be [16]"}));
}

TEST(InferLayerNormTest, ScaleCoversTrailingDimensions) {
  EXPECT_SHAPE(InferShape(OpKind::kLayerNorm, {In{{4, 10, 512}}, In{{512}}, In{{512}}}),
               {4, 10, 512});
  EXPECT_SHAPE(
      InferShape(OpKind::kLayerNorm, {In{{4, 10, 512}}, In{{10, 512}}}, LayerNormAttrs{.axis = 1}),
      {4, 10, 512});
  EXPECT_SHAPE(InferShape(OpKind::kLayerNorm, {In{{4, 10, 512}}, In{{512}}, std::nullopt}),
               {4, 10, 512});
}

TEST(InferLayerNormTest, Errors) {
  EXPECT_TRUE(
      HasError(InferShape(OpKind::kLayerNorm, {In{{4, 10, 512}}, In{{256}}}, {}, "ln").status(),
               {"node 'ln' (LayerNormalization)", "'in1' [256] f32",
                "scale and bias must be [512] (the dimensions from axis 2 on)"}));
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kLayerNorm, {In{{4, 10}}, In{{10}}}, LayerNormAttrs{.axis = 2}).status(),
      {"axis 2 is out of range"}));
}

absl::StatusOr<Shape> Pool(OpKind kind, Shape x, PoolAttrs attrs) {
  return InferShape(kind, {In{std::move(x)}}, std::move(attrs), "pool");
}

TEST(InferPoolTest, MaxPoolStem) {
  // (112 + 1 + 1 - 3) / 2 + 1 = 56.
  EXPECT_SHAPE(Pool(OpKind::kMaxPool, {1, 64, 112, 112},
                    {.kernel_shape = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}),
               {1, 64, 56, 56});
}

TEST(InferPoolTest, CeilMode) {
  // 6 with k3 s2: floor (3/2)+1 = 2, ceil ceil(3/2)+1 = 3 (last window starts at 4 < 6).
  EXPECT_SHAPE(Pool(OpKind::kMaxPool, {1, 1, 6, 6}, {.kernel_shape = {3, 3}, .strides = {2, 2}}),
               {1, 1, 2, 2});
  EXPECT_SHAPE(Pool(OpKind::kMaxPool, {1, 1, 6, 6},
                    {.kernel_shape = {3, 3}, .strides = {2, 2}, .ceil_mode = true}),
               {1, 1, 3, 3});
  // 5 with k2 s2 p1: ceil gives 4 windows, but the 4th would start at 6 >= 5 + 1
  // (entirely in the right padding), so it is dropped: 3.
  EXPECT_SHAPE(
      Pool(OpKind::kMaxPool, {1, 1, 5, 5},
           {.kernel_shape = {2, 2}, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .ceil_mode = true}),
      {1, 1, 3, 3});
}

TEST(InferPoolTest, NonSquareAndOneDimensional) {
  // H: (10 + 2 - 3) / 1 + 1 = 10; W: (20 + 2 - 4) / 4 + 1 = 5.
  EXPECT_SHAPE(Pool(OpKind::kAveragePool, {2, 3, 10, 20},
                    {.kernel_shape = {3, 4}, .strides = {1, 4}, .pads = {1, 1, 1, 1}}),
               {2, 3, 10, 5});
  EXPECT_SHAPE(Pool(OpKind::kAveragePool, {4, 8, 50}, {.kernel_shape = {5}, .strides = {5}}),
               {4, 8, 10});
  // Strides default to 1.
  EXPECT_SHAPE(Pool(OpKind::kMaxPool, {1, 1, 4, 6}, {.kernel_shape = {2, 3}}), {1, 1, 3, 4});
}

TEST(InferPoolTest, Errors) {
  EXPECT_TRUE(HasError(Pool(OpKind::kMaxPool, {1, 1, 6, 6}, {}).status(),
                       {"node 'pool' (MaxPool)", "'in0' [1,1,6,6] f32",
                        "kernel_shape and strides need 2 values and pads 4"}));
  EXPECT_TRUE(HasError(Pool(OpKind::kMaxPool, {1, 1, 2, 2}, {.kernel_shape = {3, 3}}).status(),
                       {"kernel 3 is larger than spatial axis 0 (2 plus padding)"}));
  EXPECT_TRUE(
      HasError(Pool(OpKind::kAveragePool, {1, 1, 6, 6}, {.kernel_shape = {2, 2}, .strides = {0, 1}})
                   .status(),
               {"strides must be >= 1"}));
  EXPECT_TRUE(HasError(Pool(OpKind::kMaxPool, {1, 6}, {.kernel_shape = {2}}).status(),
                       {"X must be [N, C, spatial...]"}));
}

TEST(InferGlobalPoolTest, SpatialAxesBecomeOne) {
  EXPECT_SHAPE(InferShape(OpKind::kGlobalAveragePool, {In{{2, 512, 7, 7}}}), {2, 512, 1, 1});
  EXPECT_SHAPE(InferShape(OpKind::kGlobalAveragePool, {In{{2, 8, 30}}}), {2, 8, 1});
  EXPECT_TRUE(
      HasError(InferShape(OpKind::kGlobalAveragePool, {In{{2, 8}}}, {}, "gap").status(),
               {"node 'gap' (GlobalAveragePool)", "[2,8]", "X must be [N, C, spatial...]"}));
}

TEST(InferSoftmaxCrossEntropyTest, Reductions) {
  const In labels{{32}, DType::kI64};
  EXPECT_SHAPE(InferShape(OpKind::kSoftmaxCrossEntropy, {In{{32, 10}}, labels}), {});
  EXPECT_SHAPE(InferShape(OpKind::kSoftmaxCrossEntropy, {In{{32, 10}}, labels},
                          LossAttrs{.reduction = Reduction::kSum}),
               {});
  EXPECT_SHAPE(InferShape(OpKind::kSoftmaxCrossEntropy, {In{{32, 10}}, labels},
                          LossAttrs{.reduction = Reduction::kNone}),
               {32});
  // Per-position loss of a sequence model: logits [N, C, T], labels [N, T].
  EXPECT_SHAPE(InferShape(OpKind::kSoftmaxCrossEntropy, {In{{4, 10, 7}}, In{{4, 7}, DType::kI32}},
                          LossAttrs{.reduction = Reduction::kNone}),
               {4, 7});
}

TEST(InferSoftmaxCrossEntropyTest, Errors) {
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kSoftmaxCrossEntropy, {In{{32, 10}}, In{{31}, DType::kI64}}, {}, "loss")
          .status(),
      {"node 'loss' (SoftmaxCrossEntropy)", "'in0' [32,10] f32", "'in1' [31] i64",
       "labels must be [32]"}));
  EXPECT_TRUE(HasError(InferShape(OpKind::kSoftmaxCrossEntropy, {In{{32, 10}}, In{{32}}}).status(),
                       {"labels must be i32 or i64"}));
}

std::vector<std::optional<In>> CtcInputs(Shape log_probs) {
  return {In{std::move(log_probs)}, In{{8, 20}, DType::kI32}, In{{8}, DType::kI32},
          In{{8}, DType::kI32}};
}

TEST(InferCtcLossTest, Reductions) {
  EXPECT_SHAPE(InferShape(OpKind::kCtcLoss, CtcInputs({50, 8, 30})), {});
  EXPECT_SHAPE(InferShape(OpKind::kCtcLoss, CtcInputs({50, 8, 30}),
                          LossAttrs{.reduction = Reduction::kNone, .blank = 29}),
               {8});
}

TEST(InferCtcLossTest, Errors) {
  EXPECT_TRUE(HasError(
      InferShape(OpKind::kCtcLoss, CtcInputs({50, 8, 30}), LossAttrs{.blank = 30}, "ctc").status(),
      {"node 'ctc' (CtcLoss)", "'in0' [50,8,30] f32", "'in1' [8,20] i32",
       "blank 30 is not a class in [0, 30)"}));
  EXPECT_TRUE(HasError(InferShape(OpKind::kCtcLoss, CtcInputs({50, 7, 30})).status(),
                       {"targets must be [7, S]"}));
  EXPECT_TRUE(HasError(InferShape(OpKind::kCtcLoss, CtcInputs({50, 8})).status(),
                       {"log_probs must be [T, N, C]"}));
}

}  // namespace
}  // namespace tessera::graph::testing
