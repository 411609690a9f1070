// The roofline on the V100 presets against published V100 convolution times (float32,
// cuDNN 7.1.1, batch 32, forward; PaddlePaddle's float16 benchmark, docs/estimates.md
// "Convolutions on GPUs"): VGG-16's convolutions (all 3x3, stride 1) took 60.7 ms,
// ResNet-50's (37% of their FLOPs 3x3 stride 1) 24.5 ms. Without the Winograd speedup the
// roofline overestimated VGG-16's by 48%, which kept its 102M-parameter classifier.0
// data-parallel at 64 devices because the convolutions' backward seemed long enough to hide
// its all-reduce.
#include <gtest/gtest.h>

#include <string>

#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/op_estimate.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/costmodel/winograd.h"
#include "tessera/graph/zoo/zoo.h"

namespace tessera::costmodel {
namespace {

// Seconds the roofline gives the forward passes of the model's convolutions at batch 32.
double ConvForwardSeconds(const std::string& model, const Efficiency& efficiency) {
  absl::StatusOr<graph::Graph> g = graph::zoo::BuildZooModel(model, 32);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return 0;
  const RooflineCostModel cost(*ClusterPreset("v100-vpc32"), efficiency);
  const GraphEstimate estimate = EstimateGraph(*g);
  double seconds = 0;
  for (graph::NodeId id = 0; id < g->num_nodes(); ++id) {
    const graph::Node& node = g->node(id);
    if (node.kind != graph::OpKind::kConv) continue;
    const OpEstimate& e = estimate.ops[id];
    seconds += cost.OpTime({.flops = e.flops_forward,
                            .bytes = static_cast<double>(e.bytes_read + e.bytes_written),
                            .op_class = graph::OpClass::kDense,
                            .winograd = RunsAsWinograd(*g, node)});
  }
  return seconds;
}

TEST(RooflinePublishedConvsTest, V100WithinFifteenPercentOfMeasured) {
  const Efficiency defaults;
  const double vgg = ConvForwardSeconds("vgg16", defaults);
  const double resnet = ConvForwardSeconds("resnet50", defaults);
  EXPECT_NEAR(vgg / 60.7e-3, 1, 0.15) << vgg;       // 59.9 ms
  EXPECT_NEAR(resnet / 24.5e-3, 1, 0.15) << resnet;  // 21.1 ms

  Efficiency direct;  // every convolution at the dense fraction alone
  direct.winograd_speedup = 1;
  EXPECT_GT(ConvForwardSeconds("vgg16", direct) / 60.7e-3, 1.4);  // 89.6 ms
}

}  // namespace
}  // namespace tessera::costmodel
