// Per-op estimates of convolutions, matrix products and embeddings, hand-computed.
#include <gtest/gtest.h>

#include "tessera/costmodel/op_estimate.h"
#include "test_graph.h"

namespace tessera::costmodel {
namespace {

using graph::ConvAttrs;
using graph::DType;
using graph::GemmAttrs;
using graph::OpKind;
using graph::TensorId;
using tessera::testing::TestGraph;

TEST(DenseEstimateTest, GroupedConvWithBiasOnDataInput) {
  TestGraph t;
  TensorId x = t.Input("x", {2, 8, 16, 16});
  TensorId w = t.Param("w", {16, 2, 3, 3});
  TensorId b = t.Param("b", {16});
  t.Op("conv", OpKind::kConv, {x, w, b},
       ConvAttrs{.kernel_shape = {3, 3}, .pads = {1, 1, 1, 1}, .groups = 4});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  const OpEstimate& e = g.ops[t.Node("conv")];
  // Y [2,16,16,16] = 8192 outputs, each (Cin/groups=2) * 3*3 = 18 multiply-adds.
  EXPECT_EQ(e.flops_forward, 2.0 * 8192 * 18 + 8192);  // 303104
  // X is a data input: no dX; dW = 294912, dB = 8192.
  EXPECT_EQ(e.flops_backward, 294912.0 + 8192);
  EXPECT_EQ(e.params, 16 * 2 * 9 + 16);
  EXPECT_EQ(e.bytes_read, (2 * 8 * 16 * 16 + 288 + 16) * 4);
  EXPECT_EQ(e.bytes_written, 8192 * 4);
  EXPECT_EQ(e.activation_bytes, 0);                  // nobody keeps Y
  EXPECT_EQ(g.activation_bytes, 2 * 8 * 16 * 16 * 4);  // X, kept for dW, in the data share
  EXPECT_EQ(g.params, 304);
}

TEST(DenseEstimateTest, DepthwiseConvOnActivationNeedsDxAndDw) {
  TestGraph t;
  TensorId x0 = t.Input("x0", {1, 4, 8, 8});
  TensorId wa = t.Param("wa", {16, 4, 1, 1});
  TensorId y = t.Op("pointwise", OpKind::kConv, {x0, wa});
  TensorId wd = t.Param("wd", {16, 1, 3, 3});
  t.Op("depthwise", OpKind::kConv, {y, wd},
       ConvAttrs{.kernel_shape = {3, 3}, .pads = {1, 1, 1, 1}, .groups = 16});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  const OpEstimate& pw = g.ops[t.Node("pointwise")];
  const OpEstimate& dw = g.ops[t.Node("depthwise")];
  EXPECT_EQ(pw.flops_forward, 2.0 * 1024 * 4);  // 1024 outputs, Cin=4, 1x1
  EXPECT_EQ(pw.flops_backward, 8192.0);         // dW only: x0 is data
  EXPECT_EQ(dw.flops_forward, 2.0 * 1024 * 9);  // Cin/groups = 1
  EXPECT_EQ(dw.flops_backward, 2 * 18432.0);    // dX (y depends on wa) + dW
  EXPECT_EQ(dw.params, 144);
  EXPECT_EQ(pw.activation_bytes, 1024 * 4);  // y kept by the depthwise conv for dW
  EXPECT_EQ(dw.activation_bytes, 0);
  EXPECT_EQ(g.activation_bytes, 4096 + 4 * 64 * 4);  // + x0 kept by the pointwise conv
  EXPECT_EQ(g.flops_backward, 8192.0 + 36864.0);
}

TEST(DenseEstimateTest, ConvOnTensorComputedOnlyFromDataHasNoDx) {
  TestGraph t;
  TensorId x0 = t.Input("x0", {1, 16, 8, 8});
  TensorId x = t.Op("relu", OpKind::kRelu, {x0});  // data-derived: needs no gradient
  TensorId wd = t.Param("wd", {16, 1, 3, 3});
  t.Op("conv", OpKind::kConv, {x, wd},
       ConvAttrs{.kernel_shape = {3, 3}, .pads = {1, 1, 1, 1}, .groups = 16});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  EXPECT_EQ(g.ops[t.Node("conv")].flops_backward, 18432.0);  // dW only
  EXPECT_EQ(g.ops[t.Node("relu")].flops_backward, 0.0);
  EXPECT_EQ(g.ops[t.Node("relu")].activation_bytes, 4096);  // kept by the conv for dW
  EXPECT_EQ(g.activation_bytes, 4096);                       // x0 is kept by nobody
}

TEST(DenseEstimateTest, GemmWithAndWithoutC) {
  TestGraph t;
  TensorId a = t.Input("a", {4, 6});
  TensorId w = t.Param("w", {5, 6});
  TensorId c = t.Param("c", {5});
  t.Op("no_c", OpKind::kGemm, {a, w}, GemmAttrs{.trans_b = true});
  t.Op("with_c", OpKind::kGemm, {a, w, c}, GemmAttrs{.trans_b = true});
  TensorId at = t.Input("at", {7, 3});
  TensorId w2 = t.Param("w2", {7, 2});
  t.Op("trans_a", OpKind::kGemm, {at, w2}, GemmAttrs{.trans_a = true});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  const OpEstimate& no_c = g.ops[t.Node("no_c")];
  const OpEstimate& with_c = g.ops[t.Node("with_c")];
  EXPECT_EQ(no_c.flops_forward, 2.0 * 4 * 5 * 6);        // 240
  EXPECT_EQ(no_c.flops_backward, 240.0);                 // dW only
  EXPECT_EQ(no_c.params, 30);
  EXPECT_EQ(with_c.flops_forward, 240.0 + 4 * 5);        // + M*N for C
  EXPECT_EQ(with_c.flops_backward, 240.0 + 20);          // dW + dC
  EXPECT_EQ(with_c.params, 35);
  EXPECT_EQ(with_c.bytes_read, (24 + 30 + 5) * 4);
  EXPECT_EQ(g.ops[t.Node("trans_a")].flops_forward, 2.0 * 3 * 2 * 7);  // M=3, N=2, K=7
  EXPECT_EQ(g.params, 30 + 5 + 14);  // w is read twice, counted once
  EXPECT_EQ(g.activation_bytes, (24 + 21) * 4);  // a and at, kept for dW
}

TEST(DenseEstimateTest, GemmBackwardOnActivationAddsDa) {
  TestGraph t;
  TensorId x = t.Input("x", {4, 6});
  TensorId w1 = t.Param("w1", {6, 8});
  TensorId w2 = t.Param("w2", {8, 3});
  TensorId h = t.Op("fc1", OpKind::kGemm, {x, w1});
  t.Op("fc2", OpKind::kGemm, {h, w2});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  EXPECT_EQ(g.ops[t.Node("fc1")].flops_backward, 2.0 * 4 * 8 * 6);      // dW only
  EXPECT_EQ(g.ops[t.Node("fc2")].flops_backward, 2 * (2.0 * 4 * 3 * 8));  // dA + dB
  EXPECT_EQ(g.ops[t.Node("fc1")].activation_bytes, 4 * 8 * 4);
}

TEST(DenseEstimateTest, BroadcastBatchedMatMul) {
  TestGraph t;
  TensorId a0 = t.Input("a0", {2, 4, 6, 8});
  TensorId shift = t.Param("shift", {8});
  TensorId a = t.Op("shift_add", OpKind::kAdd, {a0, shift});
  TensorId b = t.Param("b", {1, 4, 8, 5});
  t.Op("bmm", OpKind::kMatMul, {a, b});
  TensorId v = t.Input("v", {8});
  TensorId m = t.Param("m", {8, 5});
  t.Op("vec", OpKind::kMatMul, {v, m});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  const OpEstimate& bmm = g.ops[t.Node("bmm")];
  // Batch broadcast to [2,4]: 2 * 8 * M(6) * K(8) * N(5).
  EXPECT_EQ(bmm.flops_forward, 2.0 * 8 * 6 * 8 * 5);  // 3840
  EXPECT_EQ(bmm.flops_backward, 2 * 3840.0);          // dA (a depends on shift) and dB
  EXPECT_EQ(bmm.params, 160);
  EXPECT_EQ(g.ops[t.Node("shift_add")].activation_bytes, 384 * 4);  // a, kept for dB
  EXPECT_EQ(g.ops[t.Node("shift_add")].flops_backward, 384.0);      // d(shift) only
  EXPECT_EQ(g.ops[t.Node("vec")].flops_forward, 2.0 * 8 * 5);      // [8] x [8,5]
}

TEST(DenseEstimateTest, MatMulOfTwoActivationsKeepsBoth) {
  TestGraph t;
  TensorId x1 = t.Input("x1", {3, 4});
  TensorId x2 = t.Input("x2", {5, 4});
  TensorId wa = t.Param("wa", {4, 5});
  TensorId wb = t.Param("wb", {4, 2});
  TensorId a = t.Op("mm_a", OpKind::kMatMul, {x1, wa});  // [3,5]
  TensorId b = t.Op("mm_b", OpKind::kMatMul, {x2, wb});  // [5,2]
  t.Op("scores", OpKind::kMatMul, {a, b});               // [3,2], K = 5
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  EXPECT_EQ(g.ops[t.Node("scores")].flops_forward, 2.0 * 3 * 2 * 5);
  EXPECT_EQ(g.ops[t.Node("scores")].flops_backward, 2 * 60.0);
  EXPECT_EQ(g.ops[t.Node("scores")].params, 0);
  EXPECT_EQ(g.ops[t.Node("mm_a")].activation_bytes, 15 * 4);
  EXPECT_EQ(g.ops[t.Node("mm_b")].activation_bytes, 10 * 4);
}

// A tied embedding: the table is read by the look-up and, transposed, by the output
// product. The Transpose is a parameter derivation: 0 FLOPs, its parameter charged to
// the MatMul; the graph counts the table once.
TEST(DenseEstimateTest, TiedParameterCountedOnceInGraph) {
  TestGraph t;
  TensorId ids = t.Input("ids", {2, 3}, DType::kI64);
  TensorId emb = t.Param("emb", {10, 4});
  TensorId looked = t.Op("lookup", OpKind::kEmbedding, {ids, emb});  // [2,3,4]
  TensorId wt = t.Op("transpose", OpKind::kTranspose, {emb});        // [4,10]
  t.Op("logits", OpKind::kMatMul, {looked, wt});                     // [2,3,10]
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  const OpEstimate& lookup = g.ops[t.Node("lookup")];
  const OpEstimate& transpose = g.ops[t.Node("transpose")];
  const OpEstimate& logits = g.ops[t.Node("logits")];
  EXPECT_EQ(lookup.flops_forward, 0.0);
  EXPECT_EQ(lookup.flops_backward, 24.0);  // scatter-add of 24 values into d(emb)
  EXPECT_EQ(lookup.params, 40);
  EXPECT_EQ(transpose.flops_forward, 0.0);
  EXPECT_EQ(transpose.params, 0);
  EXPECT_EQ(transpose.bytes_read, 160);
  EXPECT_EQ(transpose.bytes_written, 160);
  EXPECT_EQ(logits.flops_forward, 2.0 * 6 * 4 * 10);
  EXPECT_EQ(logits.flops_backward, 2 * 480.0);
  EXPECT_EQ(logits.params, 40);
  EXPECT_EQ(g.params, 40);
  EXPECT_EQ(lookup.activation_bytes, 24 * 4);        // kept by logits for d(wt)
  EXPECT_EQ(transpose.activation_bytes, 0);          // weight-derived: not an activation
  EXPECT_EQ(g.activation_bytes, 24 * 4 + 6 * 8);     // + the ids, kept by the look-up
  EXPECT_EQ(g.flops_forward, 480.0);
}

}  // namespace
}  // namespace tessera::costmodel
