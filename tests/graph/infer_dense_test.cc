// Shape inference of the dense ops: Conv, Gemm, MatMul, Embedding, LSTM.
// Expected shapes are computed by hand in the comments.
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace tessera::graph::testing {
namespace {

using F = DType;

TEST(InferConvTest, StridedPaddedResNetStem) {
  // (224 + 3 + 3 - 7) / 2 + 1 = 112
  EXPECT_SHAPE(
      InferShape(OpKind::kConv, {In{{1, 3, 224, 224}}, In{{64, 3, 7, 7}}, In{{64}}},
                 ConvAttrs{.kernel_shape = {7, 7}, .strides = {2, 2}, .pads = {3, 3, 3, 3}}),
      {1, 64, 112, 112});
}

TEST(InferConvTest, KernelShapeDefaultsToW) {
  // No attributes: stride 1, no padding: 32 - 3 + 1 = 30.
  EXPECT_SHAPE(InferShape(OpKind::kConv, {In{{2, 8, 32, 32}}, In{{16, 8, 3, 3}}}), {2, 16, 30, 30});
}

TEST(InferConvTest, Dilation) {
  // dilation 2 spans 2*(3-1)+1 = 5: 32 - 5 + 1 = 28.
  EXPECT_SHAPE(InferShape(OpKind::kConv, {In{{2, 8, 32, 32}}, In{{16, 8, 3, 3}}},
                          ConvAttrs{.dilations = {2, 2}}),
               {2, 16, 28, 28});
}

TEST(InferConvTest, AsymmetricPadsAndStrides) {
  // pads = {h_begin 1, w_begin 0, h_end 0, w_end 2}, strides {2, 3}:
  // H: (5 + 1 + 0 - 3) / 2 + 1 = 2; W: (7 + 0 + 2 - 3) / 3 + 1 = 3.
  EXPECT_SHAPE(InferShape(OpKind::kConv, {In{{1, 1, 5, 7}}, In{{2, 1, 3, 3}}},
                          ConvAttrs{.strides = {2, 3}, .pads = {1, 0, 0, 2}}),
               {1, 2, 2, 3});
}

TEST(InferConvTest, Groups) {
  // 32 channels in 4 groups: W has 8 input channels per group.
  EXPECT_SHAPE(InferShape(OpKind::kConv, {In{{4, 32, 10, 10}}, In{{64, 8, 3, 3}}},
                          ConvAttrs{.pads = {1, 1, 1, 1}, .groups = 4}),
               {4, 64, 10, 10});
}

TEST(InferConvTest, Depthwise) {
  // groups = channels, W [C, 1, k, k]; (15 - 3) / 2 + 1 = 7.
  EXPECT_SHAPE(InferShape(OpKind::kConv, {In{{1, 32, 15, 15}}, In{{32, 1, 3, 3}}},
                          ConvAttrs{.strides = {2, 2}, .groups = 32}),
               {1, 32, 7, 7});
}

TEST(InferConvTest, OneDimensional) {
  // (100 - 5) / 2 + 1 = 48.
  EXPECT_SHAPE(
      InferShape(OpKind::kConv, {In{{8, 16, 100}}, In{{32, 16, 5}}}, ConvAttrs{.strides = {2}}),
      {8, 32, 48});
}

TEST(InferConvTest, ThreeDimensional) {
  EXPECT_SHAPE(InferShape(OpKind::kConv, {In{{1, 2, 8, 8, 8}}, In{{4, 2, 3, 3, 3}}}),
               {1, 4, 6, 6, 6});
}

TEST(InferConvTest, KeepsInputDtype) {
  auto types = InferNode(OpKind::kConv, {In{{1, 3, 8, 8}, F::kF16}, In{{4, 3, 1, 1}, F::kF16}});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->at(0).dtype, F::kF16);
}

TEST(InferConvTest, ChannelMismatchNamesNodeShapesAndExpectation) {
  auto r = InferShape(OpKind::kConv, {In{{1, 3, 8, 8}}, In{{4, 2, 3, 3}}}, ConvAttrs{}, "conv1");
  EXPECT_TRUE(HasError(r.status(), {"node 'conv1' (Conv)", "'in0' [1,3,8,8] f32",
                                    "'in1' [4,2,3,3] f32", "expected 3"}));
}

TEST(InferConvTest, KernelLargerThanInput) {
  auto r = InferShape(OpKind::kConv, {In{{1, 1, 2, 2}}, In{{1, 1, 3, 3}}}, ConvAttrs{}, "c");
  EXPECT_TRUE(HasError(r.status(), {"node 'c'", "[1,1,2,2]", "larger than spatial axis 0"}));
}

TEST(InferConvTest, GroupsMustDivideChannels) {
  auto r = InferShape(OpKind::kConv, {In{{1, 6, 8, 8}}, In{{4, 2, 3, 3}}}, ConvAttrs{.groups = 4});
  EXPECT_TRUE(HasError(r.status(), {"node 'node'", "[1,6,8,8]", "groups=4 must divide"}));
}

TEST(InferConvTest, WrongBiasShape) {
  auto r = InferShape(OpKind::kConv, {In{{1, 3, 8, 8}}, In{{4, 3, 3, 3}}, In{{3}}});
  EXPECT_TRUE(HasError(r.status(), {"'in2' [3] f32", "bias B must be [4]"}));
}

TEST(InferConvTest, AttributeLengthsMustMatchSpatialRank) {
  auto r =
      InferShape(OpKind::kConv, {In{{1, 3, 8, 8}}, In{{4, 3, 3, 3}}}, ConvAttrs{.strides = {2}});
  EXPECT_TRUE(HasError(r.status(), {"need 2 values and pads 4"}));
}

TEST(InferConvTest, HugePadsFailInsteadOfOverflowing) {
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  auto r = InferShape(OpKind::kConv, {In{{1, 1, 8, 8}}, In{{1, 1, 3, 3}}},
                      ConvAttrs{.pads = {big, big, big, big}});
  EXPECT_TRUE(HasError(r.status(), {"too large"}));
}

TEST(InferGemmTest, TransposeFlags) {
  // Y = op(A) op(B): always [M=32, N=10] with K=784.
  EXPECT_SHAPE(InferShape(OpKind::kGemm, {In{{32, 784}}, In{{784, 10}}}), {32, 10});
  EXPECT_SHAPE(
      InferShape(OpKind::kGemm, {In{{32, 784}}, In{{10, 784}}}, GemmAttrs{.trans_b = true}),
      {32, 10});
  EXPECT_SHAPE(
      InferShape(OpKind::kGemm, {In{{784, 32}}, In{{784, 10}}}, GemmAttrs{.trans_a = true}),
      {32, 10});
  EXPECT_SHAPE(InferShape(OpKind::kGemm, {In{{784, 32}}, In{{10, 784}}},
                          GemmAttrs{.trans_a = true, .trans_b = true}),
               {32, 10});
}

TEST(InferGemmTest, BiasBroadcasts) {
  EXPECT_SHAPE(InferShape(OpKind::kGemm, {In{{32, 64}}, In{{64, 10}}, In{{10}}}), {32, 10});
  EXPECT_SHAPE(InferShape(OpKind::kGemm, {In{{32, 64}}, In{{64, 10}}, In{{1, 10}}}), {32, 10});
  EXPECT_SHAPE(InferShape(OpKind::kGemm, {In{{32, 64}}, In{{64, 10}}, In{{32, 10}}}), {32, 10});
  EXPECT_SHAPE(InferShape(OpKind::kGemm, {In{{32, 64}}, In{{64, 10}}, In{{}}}), {32, 10});
}

TEST(InferGemmTest, InnerMismatchShowsTransposedOperands) {
  auto r = InferShape(OpKind::kGemm, {In{{32, 4096}}, In{{1000, 4000}}}, GemmAttrs{.trans_b = true},
                      "fc1");
  EXPECT_TRUE(
      HasError(r.status(), {"node 'fc1' (Gemm)", "'in0' [32,4096] f32", "'in1' [1000,4000] f32",
                            "op(A) is [32,4096], op(B) is [4000,1000]"}));
}

TEST(InferGemmTest, BadBiasAndRank) {
  EXPECT_TRUE(HasError(InferShape(OpKind::kGemm, {In{{32, 64}}, In{{64, 10}}, In{{32}}}).status(),
                       {"'in2' [32]", "C must broadcast to [32,10]"}));
  EXPECT_TRUE(HasError(InferShape(OpKind::kGemm, {In{{2, 32, 64}}, In{{64, 10}}}).status(),
                       {"[2,32,64]", "A and B must be 2-D"}));
}

TEST(InferMatMulTest, Plain) {
  EXPECT_SHAPE(InferShape(OpKind::kMatMul, {In{{2, 3}}, In{{3, 4}}}), {2, 4});
}

TEST(InferMatMulTest, OneDimensionalOperands) {
  EXPECT_SHAPE(InferShape(OpKind::kMatMul, {In{{3}}, In{{3}}}), {});      // dot product
  EXPECT_SHAPE(InferShape(OpKind::kMatMul, {In{{3}}, In{{3, 4}}}), {4});  // row vector
  EXPECT_SHAPE(InferShape(OpKind::kMatMul, {In{{2, 3}}, In{{3}}}), {2});  // column vector
  EXPECT_SHAPE(InferShape(OpKind::kMatMul, {In{{3}}, In{{7, 3, 4}}}), {7, 4});
  EXPECT_SHAPE(InferShape(OpKind::kMatMul, {In{{7, 2, 3}}, In{{3}}}), {7, 2});
}

TEST(InferMatMulTest, BatchBroadcasting) {
  EXPECT_SHAPE(InferShape(OpKind::kMatMul, {In{{5, 2, 3}}, In{{3, 4}}}), {5, 2, 4});
  // batch [2,1] with [5] broadcasts to [2,5].
  EXPECT_SHAPE(InferShape(OpKind::kMatMul, {In{{2, 1, 3, 4}}, In{{5, 4, 6}}}), {2, 5, 3, 6});
}

TEST(InferMatMulTest, Errors) {
  EXPECT_TRUE(HasError(InferShape(OpKind::kMatMul, {In{{2, 3}}, In{{4, 5}}}, {}, "mm").status(),
                       {"node 'mm' (MatMul)", "'in0' [2,3] f32", "'in1' [4,5] f32",
                        "inner dimensions differ: 3 (last of A) vs 4"}));
  EXPECT_TRUE(HasError(InferShape(OpKind::kMatMul, {In{{2, 3, 4}}, In{{5, 4, 6}}}).status(),
                       {"batch dimensions [2] and [5] do not broadcast"}));
  EXPECT_TRUE(HasError(InferShape(OpKind::kMatMul, {In{{}}, In{{3}}}).status(), {"rank >= 1"}));
}

TEST(InferEmbeddingTest, AppendsTheEmbeddingDimension) {
  auto types = InferNode(OpKind::kEmbedding, {In{{8, 20}, F::kI64}, In{{1000, 64}, F::kF16}});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->at(0), (TensorType{{8, 20, 64}, F::kF16}));
}

TEST(InferEmbeddingTest, Errors) {
  EXPECT_TRUE(
      HasError(InferShape(OpKind::kEmbedding, {In{{8, 20}}, In{{1000, 64}}}, {}, "emb").status(),
               {"node 'emb' (Embedding)", "'in0' [8,20] f32", "must be i32 or i64"}));
  EXPECT_TRUE(
      HasError(InferShape(OpKind::kEmbedding, {In{{8}, F::kI32}, In{{1000, 64, 2}}}).status(),
               {"[vocab, dim]"}));
}

// LSTM with T=10, B=4, I=8, H=16: W [dirs,64,8], R [dirs,64,16], B [dirs,128].
std::vector<std::optional<In>> LstmInputs(int64_t dirs, Shape x) {
  return {In{std::move(x)}, In{{dirs, 64, 8}}, In{{dirs, 64, 16}}, In{{dirs, 128}}};
}

TEST(InferLstmTest, ForwardSequenceFirst) {
  auto types = InferNode(OpKind::kLstm, LstmInputs(1, {10, 4, 8}), LstmAttrs{.hidden_size = 16}, 3);
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->at(0).shape, (Shape{10, 1, 4, 16}));  // Y [T, dirs, B, H]
  EXPECT_EQ(types->at(1).shape, (Shape{1, 4, 16}));      // Y_h [dirs, B, H]
  EXPECT_EQ(types->at(2).shape, (Shape{1, 4, 16}));      // Y_c
}

TEST(InferLstmTest, BidirectionalSequenceFirst) {
  auto types =
      InferNode(OpKind::kLstm, LstmInputs(2, {10, 4, 8}),
                LstmAttrs{.hidden_size = 16, .direction = LstmDirection::kBidirectional}, 3);
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->at(0).shape, (Shape{10, 2, 4, 16}));
  EXPECT_EQ(types->at(1).shape, (Shape{2, 4, 16}));
}

TEST(InferLstmTest, BidirectionalBatchFirst) {
  auto types = InferNode(
      OpKind::kLstm, LstmInputs(2, {4, 10, 8}),
      LstmAttrs{.hidden_size = 16, .direction = LstmDirection::kBidirectional, .layout = 1}, 3);
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->at(0).shape, (Shape{4, 10, 2, 16}));  // Y [B, T, dirs, H]
  EXPECT_EQ(types->at(1).shape, (Shape{4, 2, 16}));      // Y_h [B, dirs, H]
  EXPECT_EQ(types->at(2).shape, (Shape{4, 2, 16}));
}

TEST(InferLstmTest, ReverseWithOptionalInputs) {
  // No bias; sequence_lens [B]; initial_h and initial_c [dirs, B, H].
  auto types = InferNode(OpKind::kLstm,
                         {In{{10, 4, 8}}, In{{1, 64, 8}}, In{{1, 64, 16}}, std::nullopt,
                          In{{4}, F::kI32}, In{{1, 4, 16}}, In{{1, 4, 16}}},
                         LstmAttrs{.hidden_size = 16, .direction = LstmDirection::kReverse}, 3);
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->at(0).shape, (Shape{10, 1, 4, 16}));
}

TEST(InferLstmTest, Errors) {
  auto w =
      InferNode(OpKind::kLstm, LstmInputs(1, {10, 4, 9}), LstmAttrs{.hidden_size = 16}, 3, "rnn");
  EXPECT_TRUE(HasError(w.status(), {"node 'rnn' (LSTM)", "'in0' [10,4,9] f32", "'in1' [1,64,8] f32",
                                    "W must be [1,64,9]"}));
  auto dirs =
      InferNode(OpKind::kLstm, LstmInputs(1, {10, 4, 8}),
                LstmAttrs{.hidden_size = 16, .direction = LstmDirection::kBidirectional}, 3);
  EXPECT_TRUE(HasError(dirs.status(), {"W must be [2,64,8]"}));
  auto h0 = InferNode(
      OpKind::kLstm,
      {In{{10, 4, 8}}, In{{1, 64, 8}}, In{{1, 64, 16}}, std::nullopt, std::nullopt, In{{4, 1, 16}}},
      LstmAttrs{.hidden_size = 16}, 3);
  EXPECT_TRUE(HasError(h0.status(), {"(absent)", "initial_h must be [1,4,16]"}));
  auto hidden = InferNode(OpKind::kLstm, LstmInputs(1, {10, 4, 8}), LstmAttrs{}, 3);
  EXPECT_TRUE(HasError(hidden.status(), {"hidden_size must be >= 1"}));
  auto huge = InferNode(OpKind::kLstm, LstmInputs(1, {10, 4, 8}),
                        LstmAttrs{.hidden_size = std::numeric_limits<int64_t>::max() / 4}, 3);
  EXPECT_TRUE(HasError(huge.status(), {"hidden_size is too large"}));
}

}  // namespace
}  // namespace tessera::graph::testing
