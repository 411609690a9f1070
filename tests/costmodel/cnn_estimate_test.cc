// A whole small CNN (conv - batch norm - relu - max pool - flatten - fc), every total
// hand-computed in the comments.
#include <gtest/gtest.h>

#include "tessera/costmodel/op_estimate.h"
#include "test_graph.h"

namespace tessera::costmodel {
namespace {

using graph::OpKind;
using graph::TensorId;
using tessera::testing::TestGraph;

// image [2,3,8,8] f32 (384 values, 1536 bytes)
// conv  W [4,3,3,3], B [4], pad 1 -> Y1 [2,4,8,8] (512 values, 2048 bytes)
//       fwd 2*512*27 + 512 = 28160; bwd dW 27648 + dB 512 = 28160 (image is data);
//       params 108 + 4 = 112; keeps image (data share)
// bn    scale, bias [4] params, mean, var [4] constants -> Y2 [2,4,8,8]
//       fwd 2*512 = 1024; bwd dX 4*512 + dscale 2*512 + dbias 512 = 3584; params 8;
//       keeps Y1 (charged to conv) and 2*4 statistics (32 bytes, its own)
// relu  -> Y3: fwd 512, bwd 512, keeps Y3 (2048 bytes)
// pool  MaxPool 2x2/2 -> Y4 [2,4,4,4] (128 values): fwd 4*128 = 512, bwd 128,
//       keeps 128 i32 arg-max indices (512 bytes)
// flat  Flatten -> Y5 [2,64]: 0 FLOPs
// fc    Gemm(Y5, W [10,64] transB, C [10]) -> Y6 [2,10]: fwd 2*2*10*64 + 20 = 2580,
//       bwd dA 2560 + dW 2560 + dC 20 = 5140; params 650; keeps Y5 (charged to flat)
// totals
//   forward   28160 + 1024 + 512 + 512 + 0 + 2580 = 32788
//   backward  28160 + 3584 + 512 + 128 + 0 + 5140 = 37524
//   params    112 + 8 + 650 = 770
//   kept      conv 2048 + bn 32 + relu 2048 + pool 512 + flat 512 = 5152, + image 1536 = 6688
//   read      conv 1536+432+16 = 1984, bn 2048+64 = 2112, relu 2048, pool 2048, flat 512,
//             fc 512+2560+40 = 3112: 11816
//   written   2048 + 2048 + 2048 + 512 + 512 + 80 = 7248
class CnnEstimateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TensorId image = t_.Input("image", {2, 3, 8, 8});
    TensorId y1 = t_.Op("conv", OpKind::kConv,
                        {image, t_.Param("conv.w", {4, 3, 3, 3}), t_.Param("conv.b", {4})},
                        graph::ConvAttrs{.kernel_shape = {3, 3}, .pads = {1, 1, 1, 1}});
    TensorId y2 = t_.Op("bn", OpKind::kBatchNorm,
                        {y1, t_.Param("bn.scale", {4}), t_.Param("bn.bias", {4}),
                         t_.Const("bn.mean", {4}), t_.Const("bn.var", {4})});
    TensorId y3 = t_.Op("relu", OpKind::kRelu, {y2});
    TensorId y4 = t_.Op("pool", OpKind::kMaxPool, {y3},
                        graph::PoolAttrs{.kernel_shape = {2, 2}, .strides = {2, 2}});
    TensorId y5 = t_.Op("flat", OpKind::kFlatten, {y4}, graph::AxisAttrs{.axis = 1});
    TensorId y6 = t_.Op("fc", OpKind::kGemm,
                        {y5, t_.Param("fc.w", {10, 64}), t_.Param("fc.b", {10})},
                        graph::GemmAttrs{.trans_b = true});
    t_.g.AddOutput(y6);
    ASSERT_NO_FATAL_FAILURE(t_.Infer());
  }
  TestGraph t_;
};

TEST_F(CnnEstimateTest, PerOpNumbers) {
  const GraphEstimate g = EstimateGraph(t_.g);
  struct Row {
    const char* name;
    double fwd, bwd;
    int64_t params, read, written, kept;
  };
  const Row rows[] = {
      {"conv", 28160, 28160, 112, 1984, 2048, 2048},
      {"bn", 1024, 3584, 8, 2112, 2048, 32},
      {"relu", 512, 512, 0, 2048, 2048, 2048},
      {"pool", 512, 128, 0, 2048, 512, 512},
      {"flat", 0, 0, 0, 512, 512, 512},
      {"fc", 2580, 5140, 650, 3112, 80, 0},
  };
  for (const Row& r : rows) {
    const OpEstimate& e = g.ops[t_.Node(r.name)];
    EXPECT_EQ(e.flops_forward, r.fwd) << r.name;
    EXPECT_EQ(e.flops_backward, r.bwd) << r.name;
    EXPECT_EQ(e.params, r.params) << r.name;
    EXPECT_EQ(e.bytes_read, r.read) << r.name;
    EXPECT_EQ(e.bytes_written, r.written) << r.name;
    EXPECT_EQ(e.activation_bytes, r.kept) << r.name;
  }
}

TEST_F(CnnEstimateTest, GraphTotals) {
  const GraphEstimate g = EstimateGraph(t_.g);
  ASSERT_EQ(g.ops.size(), 6u);
  EXPECT_EQ(g.flops_forward, 32788.0);
  EXPECT_EQ(g.flops_backward, 37524.0);
  EXPECT_EQ(g.params, 770);
  EXPECT_EQ(g.activation_bytes, 6688);
  EXPECT_EQ(g.bytes_read, 11816);
  EXPECT_EQ(g.bytes_written, 7248);
}

TEST_F(CnnEstimateTest, EstimateOpMatchesEstimateGraph) {
  const GraphEstimate g = EstimateGraph(t_.g);
  for (graph::NodeId n = 0; n < t_.g.num_nodes(); ++n) {
    const OpEstimate e = EstimateOp(t_.g, n);
    EXPECT_EQ(e.flops_forward, g.ops[n].flops_forward) << n;
    EXPECT_EQ(e.flops_backward, g.ops[n].flops_backward) << n;
    EXPECT_EQ(e.params, g.ops[n].params) << n;
    EXPECT_EQ(e.bytes_read, g.ops[n].bytes_read) << n;
    EXPECT_EQ(e.bytes_written, g.ops[n].bytes_written) << n;
    EXPECT_EQ(e.activation_bytes, g.ops[n].activation_bytes) << n;
  }
}

}  // namespace
}  // namespace tessera::costmodel
