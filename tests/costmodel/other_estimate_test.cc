// Per-op estimates of element-wise, normalization, pooling, softmax, reduction, layout
// and loss ops, and the attribution of kept tensors, hand-computed.
#include <gtest/gtest.h>

#include <limits>

#include "tessera/costmodel/op_estimate.h"
#include "test_graph.h"

namespace tessera::costmodel {
namespace {

using graph::AxesAttrs;
using graph::AxisAttrs;
using graph::DType;
using graph::OpKind;
using graph::TensorId;
using tessera::testing::TestGraph;

TEST(ElementwiseEstimateTest, ForwardBackwardAndKeptTensors) {
  TestGraph t;
  TensorId x0 = t.Input("x0", {4, 5});
  TensorId p = t.Param("p", {5});
  TensorId a = t.Op("add", OpKind::kAdd, {x0, p});   // 20 elements, needs a gradient
  TensorId r = t.Op("relu", OpKind::kRelu, {a});
  TensorId s = t.Op("sigmoid", OpKind::kSigmoid, {a});
  TensorId m = t.Op("mul", OpKind::kMul, {r, s});
  TensorId d = t.Op("dropout", OpKind::kDropout, {m}, graph::ScalarAttrs{.alpha = 0.1});
  TensorId c = t.Op("cast", OpKind::kCast, {d}, graph::CastAttrs{.to = DType::kF16});
  t.Op("identity", OpKind::kIdentity, {c});
  TensorId cond = t.Input("cond", {4, 5}, DType::kBool);
  t.Op("where", OpKind::kWhere, {cond, a, x0});
  TensorId p2 = t.Param("p2", {5});
  t.Op("div", OpKind::kDiv, {a, p2});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  auto op = [&](const char* n) { return g.ops[t.Node(n)]; };
  for (const char* n : {"add", "relu", "sigmoid", "mul", "dropout", "where", "div"}) {
    EXPECT_EQ(op(n).flops_forward, 20.0) << n;  // 1 per output element
  }
  EXPECT_EQ(op("cast").flops_forward, 0.0);
  EXPECT_EQ(op("identity").flops_forward, 0.0);
  EXPECT_EQ(op("add").flops_backward, 20.0);      // d(p) only: x0 is data
  EXPECT_EQ(op("relu").flops_backward, 20.0);     // mask
  EXPECT_EQ(op("sigmoid").flops_backward, 40.0);  // smooth: 2 per element
  EXPECT_EQ(op("mul").flops_backward, 40.0);      // both operands
  EXPECT_EQ(op("dropout").flops_backward, 20.0);
  EXPECT_EQ(op("cast").flops_backward, 0.0);
  EXPECT_EQ(op("where").flops_backward, 20.0);    // only the branch that needs one
  EXPECT_EQ(op("div").flops_backward, 20.0 + 40);  // dA 1, dB 2 per element
  EXPECT_EQ(op("cast").bytes_read, 80);
  EXPECT_EQ(op("cast").bytes_written, 40);  // f16
  // Relu and Sigmoid keep their outputs (Mul keeps them too: counted once each);
  // Dropout keeps a 1-byte mask; Div keeps its output (for dB) and p2 (a parameter);
  // Where keeps cond (a data input); nobody keeps the Add's output or the Mul's.
  EXPECT_EQ(op("relu").activation_bytes, 80);
  EXPECT_EQ(op("sigmoid").activation_bytes, 80);
  EXPECT_EQ(op("dropout").activation_bytes, 20);
  EXPECT_EQ(op("div").activation_bytes, 80);
  EXPECT_EQ(op("add").activation_bytes, 0);
  EXPECT_EQ(op("mul").activation_bytes, 0);
  EXPECT_EQ(g.activation_bytes, 80 + 80 + 20 + 80 + 20);
}

TEST(NormalizationEstimateTest, BatchNormStatsAreNotParameters) {
  TestGraph t;
  TensorId x0 = t.Input("x0", {2, 3, 4, 4});
  TensorId x = t.Op("shift", OpKind::kAdd, {x0, t.Param("shift", {3, 1, 1})});
  TensorId scale = t.Param("scale", {3});
  TensorId bias = t.Param("bias", {3});
  TensorId mean = t.Const("mean", {3});
  TensorId var = t.Const("var", {3});
  t.Op("bn", OpKind::kBatchNorm, {x, scale, bias, mean, var});
  t.Op("bn_data", OpKind::kBatchNorm, {x0, scale, bias, mean, var});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  const OpEstimate& bn = g.ops[t.Node("bn")];
  EXPECT_EQ(bn.flops_forward, 2.0 * 96);
  EXPECT_EQ(bn.flops_backward, 4.0 * 96 + 2 * 96 + 96);  // dX, dscale, dbias
  EXPECT_EQ(bn.params, 6);                              // running stats are constants
  EXPECT_EQ(bn.activation_bytes, 2 * 3 * 4);            // mean and inverse std per channel
  EXPECT_EQ(g.ops[t.Node("shift")].activation_bytes, 96 * 4);  // X, kept by bn
  const OpEstimate& bn_data = g.ops[t.Node("bn_data")];
  EXPECT_EQ(bn_data.flops_backward, 2.0 * 96 + 96);     // no dX for a data input
  EXPECT_EQ(g.params, 3 + 3 + 3);
  // shift's output, both stats, and x0 (kept by bn_data) in the data share.
  EXPECT_EQ(g.activation_bytes, 384 + 24 + 24 + 384);
}

TEST(NormalizationEstimateTest, LayerNorm) {
  TestGraph t;
  TensorId x0 = t.Input("x0", {2, 3, 4});
  TensorId x = t.Op("shift", OpKind::kAdd, {x0, t.Param("shift", {4})});
  t.Op("ln", OpKind::kLayerNorm, {x, t.Param("scale", {4}), t.Param("bias", {4})});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const OpEstimate e = EstimateOp(t.g, t.Node("ln"));
  EXPECT_EQ(e.flops_forward, 5.0 * 24);
  EXPECT_EQ(e.flops_backward, 4.0 * 24 + 2 * 24 + 24);
  EXPECT_EQ(e.params, 8);
  EXPECT_EQ(e.activation_bytes, 2 * 6 * 4);  // stats of the 6 normalized rows
}

TEST(PoolEstimateTest, MaxAverageAndGlobal) {
  TestGraph t;
  TensorId x0 = t.Input("x0", {1, 2, 8, 8});
  TensorId x = t.Op("shift", OpKind::kAdd, {x0, t.Param("shift", {2, 1, 1})});
  const graph::PoolAttrs pool{.kernel_shape = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}};
  t.Op("max", OpKind::kMaxPool, {x}, pool);
  t.Op("avg", OpKind::kAveragePool, {x}, pool);
  t.Op("global", OpKind::kGlobalAveragePool, {x});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  // Each 3x3/2 pool gives [1,2,4,4] = 32 outputs.
  EXPECT_EQ(g.ops[t.Node("max")].flops_forward, 9.0 * 32);
  EXPECT_EQ(g.ops[t.Node("max")].flops_backward, 32.0);
  EXPECT_EQ(g.ops[t.Node("max")].activation_bytes, 32 * 4);  // an i32 arg-max each
  EXPECT_EQ(g.ops[t.Node("avg")].flops_forward, 9.0 * 32);
  EXPECT_EQ(g.ops[t.Node("avg")].flops_backward, 9.0 * 32);
  EXPECT_EQ(g.ops[t.Node("avg")].activation_bytes, 0);
  EXPECT_EQ(g.ops[t.Node("global")].flops_forward, 128.0);  // 1 per input element
  EXPECT_EQ(g.ops[t.Node("global")].flops_backward, 128.0);
  EXPECT_EQ(g.ops[t.Node("shift")].activation_bytes, 0);    // pools keep no input
}

TEST(SoftmaxReduceEstimateTest, SoftmaxKeepsOutputReductionsCountInputs) {
  TestGraph t;
  TensorId x0 = t.Input("x0", {3, 7});
  TensorId x = t.Op("shift", OpKind::kAdd, {x0, t.Param("shift", {7})});
  t.Op("softmax", OpKind::kSoftmax, {x}, AxisAttrs{.axis = -1});
  t.Op("log_softmax", OpKind::kLogSoftmax, {x}, AxisAttrs{.axis = -1});
  t.Op("mean", OpKind::kReduceMean, {x}, AxesAttrs{.axes = {1}, .keepdims = false});
  t.Op("max", OpKind::kReduceMax, {x}, AxesAttrs{.axes = {1}, .keepdims = false});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  for (const char* n : {"softmax", "log_softmax"}) {
    EXPECT_EQ(g.ops[t.Node(n)].flops_forward, 5.0 * 21) << n;
    EXPECT_EQ(g.ops[t.Node(n)].flops_backward, 4.0 * 21) << n;
    EXPECT_EQ(g.ops[t.Node(n)].activation_bytes, 21 * 4) << n;
  }
  EXPECT_EQ(g.ops[t.Node("mean")].flops_forward, 21.0);
  EXPECT_EQ(g.ops[t.Node("mean")].flops_backward, 21.0);
  EXPECT_EQ(g.ops[t.Node("max")].flops_forward, 21.0);
  EXPECT_EQ(g.ops[t.Node("max")].flops_backward, 42.0);
  EXPECT_EQ(g.ops[t.Node("max")].activation_bytes, 3 * 4);      // its output
  EXPECT_EQ(g.ops[t.Node("shift")].activation_bytes, 21 * 4);   // its input, kept by max
}

TEST(LayoutEstimateTest, NoFlopsButBytesAndScatterBackward) {
  TestGraph t;
  TensorId x0 = t.Input("x0", {6, 5});
  TensorId x = t.Op("shift", OpKind::kAdd, {x0, t.Param("shift", {5})});
  TensorId reshaped = t.Op("reshape", OpKind::kReshape, {x}, graph::ReshapeAttrs{.shape = {5, 6}});
  t.Op("transpose", OpKind::kTranspose, {reshaped});
  t.Op("concat", OpKind::kConcat, {x, x0}, AxisAttrs{.axis = 0});
  TensorId row = t.Op("slice", OpKind::kSlice, {x},
                      graph::SliceAttrs{.starts = {0}, .ends = {1}, .axes = {0}});
  t.Op("expand", OpKind::kExpand, {row}, graph::ExpandAttrs{.shape = {4, 5}});
  TensorId idx = t.Input("idx", {3}, DType::kI64);
  t.Op("gather", OpKind::kGather, {x, idx}, AxisAttrs{.axis = 0});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  for (const char* n : {"reshape", "transpose", "concat", "slice", "expand", "gather"}) {
    EXPECT_EQ(g.ops[t.Node(n)].flops_forward, 0.0) << n;
    EXPECT_EQ(g.ops[t.Node(n)].params, 0) << n;
  }
  EXPECT_EQ(g.ops[t.Node("concat")].bytes_read, 2 * 30 * 4);
  EXPECT_EQ(g.ops[t.Node("concat")].bytes_written, 60 * 4);
  EXPECT_EQ(g.ops[t.Node("transpose")].flops_backward, 0.0);
  EXPECT_EQ(g.ops[t.Node("expand")].flops_backward, 20.0);  // sum over the broadcast
  EXPECT_EQ(g.ops[t.Node("gather")].flops_backward, 15.0);  // scatter-add [3,5]
  EXPECT_EQ(g.activation_bytes, 3 * 8);                      // only idx, kept by gather
}

TEST(LossEstimateTest, SoftmaxCrossEntropy) {
  TestGraph t;
  TensorId x = t.Input("x", {4, 3});
  TensorId logits = t.Op("fc", OpKind::kGemm, {x, t.Param("w", {3, 10})});
  TensorId labels = t.Input("labels", {4}, DType::kI64);
  t.Op("loss", OpKind::kSoftmaxCrossEntropy, {logits, labels});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  const OpEstimate& loss = g.ops[t.Node("loss")];
  EXPECT_EQ(loss.flops_forward, 5.0 * 40 + 4);
  EXPECT_EQ(loss.flops_backward, 2.0 * 40);
  EXPECT_EQ(loss.activation_bytes, 40 * 4);  // the probabilities, kept privately
  EXPECT_EQ(g.ops[t.Node("fc")].activation_bytes, 0);  // logits are not kept
  EXPECT_EQ(g.activation_bytes, 160 + 4 * 8 + 12 * 4);  // + labels and x (data share)
}

TEST(LossEstimateTest, CtcLoss) {
  TestGraph t;
  TensorId x0 = t.Input("x0", {6, 2, 5});
  TensorId x = t.Op("shift", OpKind::kAdd, {x0, t.Param("shift", {5})});
  TensorId lp = t.Op("log_softmax", OpKind::kLogSoftmax, {x}, AxisAttrs{.axis = 2});
  TensorId targets = t.Input("targets", {2, 3}, DType::kI64);
  TensorId in_len = t.Input("in_len", {2}, DType::kI64);
  TensorId tg_len = t.Input("tg_len", {2}, DType::kI64);
  t.Op("ctc", OpKind::kCtcLoss, {lp, targets, in_len, tg_len});
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  const OpEstimate& ctc = g.ops[t.Node("ctc")];
  // Lattice T*N*(2S+1) = 6*2*7 = 84 cells.
  EXPECT_EQ(ctc.flops_forward, 4.0 * 84);
  EXPECT_EQ(ctc.flops_backward, 6.0 * 84 + 2 * 60);
  EXPECT_EQ(ctc.activation_bytes, 84 * 4);  // alpha
  // log_probs kept by both LogSoftmax and CtcLoss: counted once, on LogSoftmax.
  EXPECT_EQ(g.ops[t.Node("log_softmax")].activation_bytes, 60 * 4);
  EXPECT_EQ(g.activation_bytes, 336 + 240 + (6 + 2 + 2) * 8);
}

TEST(AttributionTest, TensorKeptByThreeNodesIsCountedOnce) {
  TestGraph t;
  TensorId x = t.Input("x", {4, 6});
  TensorId h = t.Op("mm0", OpKind::kMatMul, {x, t.Param("w0", {6, 8})});
  TensorId r = t.Op("relu", OpKind::kRelu, {h});  // keeps r itself
  t.Op("mm1", OpKind::kMatMul, {r, t.Param("w1", {8, 3})});  // keeps r for dW
  t.Op("mm2", OpKind::kMatMul, {r, t.Param("w2", {8, 5})});  // keeps r for dW
  ASSERT_NO_FATAL_FAILURE(t.Infer());
  const GraphEstimate g = EstimateGraph(t.g);
  EXPECT_EQ(g.ops[t.Node("relu")].activation_bytes, 32 * 4);
  EXPECT_EQ(g.ops[t.Node("mm0")].activation_bytes, 0);  // h is kept by nobody
  EXPECT_EQ(g.ops[t.Node("mm1")].activation_bytes, 0);
  EXPECT_EQ(g.activation_bytes, 128 + 24 * 4);  // r once, plus x (data share)
  int64_t sum = 0;
  for (const OpEstimate& e : g.ops) sum += e.activation_bytes;
  EXPECT_EQ(g.activation_bytes - sum, 96);
  // EstimateOp agrees with the graph-wide attribution node by node.
  for (graph::NodeId n = 0; n < t.g.num_nodes(); ++n) {
    EXPECT_EQ(EstimateOp(t.g, n).activation_bytes, g.ops[n].activation_bytes) << n;
  }
}

TEST(RobustnessTest, HostileShapesSaturateInsteadOfOverflowing) {
  TestGraph t;
  const graph::Shape huge = {int64_t{1} << 40, int64_t{1} << 40};
  TensorId x = t.Input("x", huge);
  TensorId y = t.Op("relu", OpKind::kRelu, {x});
  t.g.mutable_tensor(y).shape = huge;  // shape inference rejects it; set it by hand
  const GraphEstimate g = EstimateGraph(t.g);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(g.ops[0].bytes_read, kMax);
  EXPECT_EQ(g.bytes_read, kMax);
  EXPECT_EQ(g.bytes_written, kMax);
  EXPECT_EQ(g.ops[0].flops_forward, 1208925819614629174706176.0);  // 2^80
}

TEST(RobustnessTest, UninferredShapesAndForeignAttributesDoNotCrash) {
  TestGraph t;
  TensorId x = t.Input("x", {2, 3, 8, 8});
  TensorId w = t.Param("w", {4, 3, 3, 3});
  t.Op("conv", OpKind::kConv, {x, w});  // shapes deliberately not inferred: Y is []
  t.g.mutable_node(0).attrs = graph::GemmAttrs{};  // wrong alternative
  const GraphEstimate g = EstimateGraph(t.g);
  EXPECT_EQ(g.ops[0].flops_forward, 2.0 * 1 * 27);  // one (scalar) output of 27 MACs
  EXPECT_EQ(g.params, 108);
}

}  // namespace
}  // namespace tessera::costmodel
