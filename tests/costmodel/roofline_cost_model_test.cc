// The roofline: compute-bound and memory-bound ops hand-computed, dtype peaks,
// efficiency defaults and their validation.
#include "tessera/costmodel/roofline_cost_model.h"

#include <gtest/gtest.h>

namespace tessera::costmodel {
namespace {

using graph::DType;
using graph::OpClass;

// 10 TFLOP/s f32, 100 TFLOP/s f16, no bf16, 1 TB/s.
ClusterSpec TestCluster() {
  ClusterSpec c;
  c.name = "test";
  c.device = {.name = "d",
              .peak_flops_f32 = 10e12,
              .peak_flops_f16 = 100e12,
              .memory_bytes = 1 << 30,
              .memory_bandwidth = 1e12};
  c.intra_node = {.bandwidth = 1e9, .latency = 0};
  c.inter_node = c.intra_node;
  return c;
}

TEST(RooflineTest, DefaultsAreTheDocumentedOnes) {
  const Efficiency e;
  EXPECT_EQ(e.flops[Efficiency::Index(OpClass::kDense)], 0.7);
  EXPECT_EQ(e.flops[Efficiency::Index(OpClass::kRecurrent)], 0.5);
  EXPECT_EQ(e.bandwidth[Efficiency::Index(OpClass::kElementwise)], 0.8);
  EXPECT_EQ(e.bandwidth[Efficiency::Index(OpClass::kNormalization)], 0.8);
  EXPECT_EQ(e.bandwidth[Efficiency::Index(OpClass::kLayout)], 0.8);
  EXPECT_EQ(e.bandwidth[Efficiency::Index(OpClass::kEmbedding)], 0.6);
  EXPECT_EQ(e.op_overhead_s, 5e-6);
  EXPECT_EQ(e.overlap_slowdown, 0);
  EXPECT_EQ(e.winograd_speedup, 1.5);
  EXPECT_TRUE(e.Validate().ok());
  EXPECT_EQ(RooflineCostModel(TestCluster()).OverlapSlowdown(), 0);
  Efficiency shared;
  shared.overlap_slowdown = 1.5;
  EXPECT_EQ(RooflineCostModel(TestCluster(), shared).OverlapSlowdown(), 1.5);
}

TEST(RooflineTest, ComputeBoundDensePerDtype) {
  const RooflineCostModel model(TestCluster());
  const CostModel& m = model;
  // f32: 7e12 / (10e12 * 0.7) = 1 s; memory 1e9 / (1e12 * 0.8) = 1.25 ms.
  EXPECT_DOUBLE_EQ(m.OpTime({.flops = 7e12, .bytes = 1e9, .op_class = OpClass::kDense,
                             .dtype = DType::kF32}),
                   1.0 + 5e-6);
  // f16 on tensor cores: 7e12 / (100e12 * 0.7) = 0.1 s.
  EXPECT_DOUBLE_EQ(m.OpTime({.flops = 7e12, .bytes = 1e9, .op_class = OpClass::kDense,
                             .dtype = DType::kF16}),
                   0.1 + 5e-6);
  // bf16 unsupported: the f32 peak.
  EXPECT_DOUBLE_EQ(m.OpTime({.flops = 7e12, .bytes = 1e9, .op_class = OpClass::kDense,
                             .dtype = DType::kBF16}),
                   1.0 + 5e-6);
  // Recurrent at 0.5: 5e12 / 5e12 = 1 s.
  EXPECT_DOUBLE_EQ(m.OpTime({.flops = 5e12, .bytes = 1e6, .op_class = OpClass::kRecurrent}),
                   1.0 + 5e-6);
}

TEST(RooflineTest, MemoryBoundElementwise) {
  const RooflineCostModel m(TestCluster());
  // compute 1e9 / (10e12 * 0.5) = 0.2 ms; memory 8e11 / (1e12 * 0.8) = 1 s.
  EXPECT_DOUBLE_EQ(m.OpTime({.flops = 1e9, .bytes = 8e11, .op_class = OpClass::kElementwise}),
                   1.0 + 5e-6);
  // A dense op with little arithmetic per byte is memory-bound too: 2e9/(7e12) vs 4e11/8e11.
  EXPECT_DOUBLE_EQ(m.OpTime({.flops = 2e9, .bytes = 4e11, .op_class = OpClass::kDense}),
                   0.5 + 5e-6);
  // Embedding look-ups at 0.6 of bandwidth: 6e11 / 6e11.
  EXPECT_DOUBLE_EQ(m.OpTime({.flops = 0, .bytes = 6e11, .op_class = OpClass::kEmbedding}),
                   1.0 + 5e-6);
  EXPECT_EQ(m.OpTime({.flops = 0, .bytes = 0, .op_class = OpClass::kLayout}), 0);
}

TEST(RooflineTest, CustomEfficiency) {
  Efficiency e;
  e.flops[Efficiency::Index(OpClass::kDense)] = 0.5;
  e.op_overhead_s = 0;
  const RooflineCostModel m(TestCluster(), e);
  EXPECT_DOUBLE_EQ(m.OpTime({.flops = 7e12, .bytes = 0, .op_class = OpClass::kDense}), 1.4);
  EXPECT_EQ(m.efficiency().flops[0], 0.5);
  EXPECT_EQ(m.cluster().name, "test");
}

TEST(RooflineTest, V100Preset) {
  const RooflineCostModel m(ClusterPreset("v100-vpc32")->WithDevices(64));
  // 2e12 / (0.7 * 125e12) vs 1e9 / (0.8 * 900e9).
  EXPECT_DOUBLE_EQ(m.OpTime({.flops = 2e12, .bytes = 1e9, .op_class = OpClass::kDense,
                             .dtype = DType::kF16}),
                   2e12 / (0.7 * 125e12) + 5e-6);
}

TEST(RooflineTest, ValidateNamesTheEntry) {
  Efficiency e;
  e.flops[Efficiency::Index(OpClass::kDense)] = 0;
  EXPECT_NE(e.Validate().message().find("flops[dense]"), std::string::npos) << e.Validate();
  e = Efficiency{};
  e.bandwidth[Efficiency::Index(OpClass::kSoftmax)] = 1.5;
  EXPECT_NE(e.Validate().message().find("bandwidth[softmax] is 1.5"), std::string::npos)
      << e.Validate();
  e = Efficiency{};
  e.op_overhead_s = -1;
  EXPECT_NE(e.Validate().message().find("op_overhead_s"), std::string::npos);
  e = Efficiency{};
  e.overlap_slowdown = -0.1;
  EXPECT_NE(e.Validate().message().find("overlap_slowdown is -0.1"), std::string::npos)
      << e.Validate();
  e.overlap_slowdown = 0.5;
  EXPECT_TRUE(e.Validate().ok());
  e.winograd_speedup = 0.9;
  EXPECT_NE(e.Validate().message().find("winograd_speedup is 0.9"), std::string::npos)
      << e.Validate();
  e.winograd_speedup = 4.5;
  EXPECT_FALSE(e.Validate().ok());
  e.winograd_speedup = 4;
  EXPECT_TRUE(e.Validate().ok());
}

// A Winograd convolution's compute time is divided by the speedup; its memory time and
// other ops are not.
TEST(RooflineTest, WinogradConvolutionsRunFaster) {
  const RooflineCostModel model(TestCluster());  // speedup 1.5
  // 7e12 / (10e12 * 0.7 * 1.5) s.
  EXPECT_DOUBLE_EQ(model.OpTime({.flops = 7e12, .bytes = 1e9, .op_class = OpClass::kDense,
                                 .winograd = true}),
                   1.0 / 1.5 + 5e-6);
  // Memory-bound: 8e11 bytes / (1e12 * 0.8) = 1 s either way.
  EXPECT_DOUBLE_EQ(model.OpTime({.flops = 1e9, .bytes = 8e11, .op_class = OpClass::kDense,
                                 .winograd = true}),
                   1.0 + 5e-6);
  Efficiency none;
  none.winograd_speedup = 1;
  EXPECT_DOUBLE_EQ(RooflineCostModel(TestCluster(), none)
                       .OpTime({.flops = 7e12, .op_class = OpClass::kDense, .winograd = true}),
                   1.0 + 5e-6);
}

}  // namespace
}  // namespace tessera::costmodel
