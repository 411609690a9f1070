// Per-op estimates of LSTM, hand-computed, including ONNX-style derived weights.
#include <gtest/gtest.h>

#include "tessera/costmodel/op_estimate.h"
#include "tessera/graph/parameters.h"
#include "test_graph.h"

namespace tessera::costmodel {
namespace {

using graph::AxesAttrs;
using graph::AxisAttrs;
using graph::LstmAttrs;
using graph::LstmDirection;
using graph::OpKind;
using graph::TensorId;
using tessera::testing::TestGraph;

// T=5, B=3, I=4, H=6, bidirectional: 5*3*2 = 30 cell steps.
//   forward per step  2*4H*(I+H) = 480, + 8H = 48 with bias, + 9H = 54
//   backward per step 2*4H*H = 288 (dh) + 18H = 108 (cell) + dW 192 + dR 288 (+ dB 48)
struct LstmCase {
  bool bias;
  bool x_is_activation;
  int64_t layout;
};

GraphEstimate EstimateLstm(const LstmCase& c, TestGraph& t) {
  const graph::Shape x_shape = c.layout == 0 ? graph::Shape{5, 3, 4} : graph::Shape{3, 5, 4};
  TensorId x = t.Input("x", x_shape);
  if (c.x_is_activation) x = t.Op("shift", OpKind::kAdd, {x, t.Param("shift", {4})});
  TensorId w = t.Param("W", {2, 24, 4});
  TensorId r = t.Param("R", {2, 24, 6});
  std::vector<TensorId> inputs = {x, w, r};
  if (c.bias) inputs.push_back(t.Param("B", {2, 48}));
  t.Ops("lstm", OpKind::kLstm, inputs, 3,
        LstmAttrs{.hidden_size = 6, .direction = LstmDirection::kBidirectional,
                  .layout = c.layout});
  t.Infer();
  return EstimateGraph(t.g);
}

TEST(LstmEstimateTest, BidirectionalWithBias) {
  TestGraph t;
  const GraphEstimate g = EstimateLstm({.bias = true, .x_is_activation = false, .layout = 0}, t);
  const OpEstimate& e = g.ops[t.Node("lstm")];
  EXPECT_EQ(e.flops_forward, 30.0 * (480 + 48 + 54));          // 17460
  EXPECT_EQ(e.flops_backward, 30.0 * (288 + 108 + 192 + 288 + 48));  // 27720
  EXPECT_EQ(e.params, 2 * 24 * 4 + 2 * 24 * 6 + 2 * 48);       // 576
  EXPECT_EQ(e.bytes_read, (60 + 192 + 288 + 96) * 4);
  EXPECT_EQ(e.bytes_written, (180 + 36 + 36) * 4);              // Y, Y_h, Y_c
  // Keeps Y (180 values) and privately 4 gates + cell state per step (30 * 5H = 900).
  EXPECT_EQ(e.activation_bytes, (180 + 900) * 4);
  EXPECT_EQ(g.activation_bytes, (180 + 900 + 60) * 4);          // + X, kept for dW
  EXPECT_EQ(g.params, 576);
}

TEST(LstmEstimateTest, BidirectionalWithoutBias) {
  TestGraph t;
  const GraphEstimate g = EstimateLstm({.bias = false, .x_is_activation = false, .layout = 0}, t);
  const OpEstimate& e = g.ops[t.Node("lstm")];
  EXPECT_EQ(e.flops_forward, 30.0 * (480 + 54));                // 16020
  EXPECT_EQ(e.flops_backward, 30.0 * (288 + 108 + 192 + 288));  // 26280
  EXPECT_EQ(e.params, 480);
}

TEST(LstmEstimateTest, InputThatNeedsGradientAddsDx) {
  TestGraph t;
  const GraphEstimate g = EstimateLstm({.bias = true, .x_is_activation = true, .layout = 0}, t);
  EXPECT_EQ(g.ops[t.Node("lstm")].flops_backward, 27720.0 + 30 * 192);
  EXPECT_EQ(g.ops[t.Node("shift")].activation_bytes, 60 * 4);  // X kept by the LSTM
}

TEST(LstmEstimateTest, BatchFirstLayoutCountsTheSame) {
  TestGraph t;
  const GraphEstimate g = EstimateLstm({.bias = true, .x_is_activation = false, .layout = 1}, t);
  EXPECT_EQ(g.ops[t.Node("lstm")].flops_forward, 17460.0);
}

TEST(LstmEstimateTest, ForwardOnlyDirection) {
  TestGraph t;
  TensorId x = t.Input("x", {7, 2, 3});
  TensorId w = t.Param("W", {1, 16, 3});
  TensorId r = t.Param("R", {1, 16, 4});
  TensorId b = t.Param("B", {1, 32});
  t.Ops("lstm", OpKind::kLstm, {x, w, r, b}, 3, LstmAttrs{.hidden_size = 4});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  // 7*2 steps of 2*16*(3+4) + 32 + 36 = 292.
  EXPECT_EQ(EstimateOp(t.g, t.Node("lstm")).flops_forward, 14.0 * 292);
}

// The ONNX export of a bidirectional nn.LSTM(I=3, H=2) without constant folding: the
// PyTorch tensors are graph inputs, re-laid out into W, R and B in front of the LSTM.
TEST(LstmEstimateTest, DerivedOnnxWeightsAreChargedToTheLstm) {
  TestGraph t;
  TensorId x = t.Input("x", {2, 1, 3});
  auto stack = [&](const std::string& name, TensorId fwd, TensorId rev) {
    TensorId uf = t.Op(name + "_unsq_f", OpKind::kUnsqueeze, {fwd}, AxesAttrs{.axes = {0}});
    TensorId ur = t.Op(name + "_unsq_r", OpKind::kUnsqueeze, {rev}, AxesAttrs{.axes = {0}});
    return t.Op(name, OpKind::kConcat, {uf, ur}, AxisAttrs{.axis = 0});
  };
  TensorId w = stack("W", t.Param("w_ih", {8, 3}), t.Param("w_ih_r", {8, 3}));
  TensorId r = stack("R", t.Param("w_hh", {8, 2}), t.Param("w_hh_r", {8, 2}));
  TensorId bf = t.Op("b_f", OpKind::kConcat, {t.Param("b_ih", {8}), t.Param("b_hh", {8})},
                     AxisAttrs{.axis = 0});
  TensorId br = t.Op("b_r", OpKind::kConcat, {t.Param("b_ih_r", {8}), t.Param("b_hh_r", {8})},
                     AxisAttrs{.axis = 0});
  TensorId b = stack("B", bf, br);
  t.Ops("lstm", OpKind::kLstm, {x, w, r, b}, 3,
        LstmAttrs{.hidden_size = 2, .direction = LstmDirection::kBidirectional});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  ASSERT_EQ(t.g.tensor(b).shape, (graph::Shape{2, 16}));
  const GraphEstimate g = EstimateGraph(t.g);
  const OpEstimate& e = g.ops[t.Node("lstm")];
  // 2*1*2 = 4 steps; forward 2*8*(3+2) + 16 + 18 = 114; backward 32 + 36 + 48 + 32 + 16.
  EXPECT_EQ(e.flops_forward, 4.0 * 114);
  EXPECT_EQ(e.flops_backward, 4.0 * 164);
  EXPECT_EQ(e.params, 24 + 24 + 16 + 16 + 4 * 8);  // the 8 PyTorch tensors
  EXPECT_EQ(g.params, 112);
  EXPECT_EQ(g.flops_forward, 456.0);  // the re-layout nodes cost nothing
  for (const char* n : {"W", "W_unsq_f", "R", "b_f", "B"}) {
    EXPECT_EQ(g.ops[t.Node(n)].flops_forward, 0.0) << n;
    EXPECT_EQ(g.ops[t.Node(n)].params, 0) << n;
    EXPECT_EQ(g.ops[t.Node(n)].activation_bytes, 0) << n;
  }
  EXPECT_GT(g.ops[t.Node("W")].bytes_written, 0);
  // X kept for dW (data share); Y [2,2,1,2] and the 4*5H private values on the LSTM.
  EXPECT_EQ(g.activation_bytes, (6 + 8 + 4 * 10) * 4);
}

}  // namespace
}  // namespace tessera::costmodel
