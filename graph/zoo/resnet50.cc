// ResNet-50 v1.5 as torchvision builds it: bottleneck blocks [3, 4, 6, 3] with
// the stride on the 3x3 convolution (v1 strides the first 1x1), 25,557,032
// parameters. Batch-norm running statistics are constants, not parameters.
// Names follow torchvision ("layer2.0.conv2", "layer2.0.downsample.0").
#include "absl/strings/str_cat.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/zoo/zoo_impl.h"

namespace tessera::graph::zoo::internal {
namespace {

constexpr int64_t kExpansion = 4;

// conv -> batch norm, no conv bias (as every convolution in ResNet).
Value ConvBn(GraphBuilder& b, Value x, int64_t channels, int64_t kernel, int64_t stride,
             absl::string_view conv, absl::string_view bn) {
  x = b.Conv2d(x, channels, kernel, conv,
               {.stride = stride, .padding = kernel / 2, .bias = false});
  return b.BatchNorm2d(x, bn);
}

Value Bottleneck(GraphBuilder& b, Value x, int64_t width, int64_t stride) {
  Value out = ConvBn(b, x, width, 1, 1, "conv1", "bn1").Relu();
  out = ConvBn(b, out, width, 3, stride, "conv2", "bn2").Relu();
  out = ConvBn(b, out, width * kExpansion, 1, 1, "conv3", "bn3");
  Value identity = x;
  if (stride != 1 || x.dim(1) != width * kExpansion) {
    identity = ConvBn(b, x, width * kExpansion, 1, stride, "downsample.0", "downsample.1");
  }
  return b.Add(out, identity).Relu();
}

}  // namespace

absl::StatusOr<Graph> BuildResNet50(int64_t batch) {
  constexpr int64_t kBlocks[] = {3, 4, 6, 3};
  GraphBuilder b("resnet50");
  Value x = b.Input("images", {batch, 3, 224, 224});
  Value labels = b.Input("labels", {batch}, DType::kI64);
  x = b.Conv2d(x, 64, 7, "conv1", {.stride = 2, .padding = 3, .bias = false});  // 112x112
  x = b.BatchNorm2d(x, "bn1").Relu("relu");
  x = b.MaxPool2d(x, 3, "maxpool", {.stride = 2, .padding = 1});  // 56x56
  int64_t width = 64;
  for (int layer = 0; layer < 4; ++layer, width *= 2) {
    auto layer_scope = b.Scope(absl::StrCat("layer", layer + 1));
    for (int64_t block = 0; block < kBlocks[layer]; ++block) {
      auto block_scope = b.Scope(absl::StrCat(block));
      const int64_t stride = (layer > 0 && block == 0) ? 2 : 1;
      x = Bottleneck(b, x, width, stride);
    }
  }
  x = b.GlobalAvgPool(x, "avgpool").Flatten(1, "flatten");  // [N, 2048]
  x = b.Linear(x, 1000, "fc");
  b.Output(b.SoftmaxCrossEntropy(x, labels, "loss"));
  return std::move(b).Build();
}

}  // namespace tessera::graph::zoo::internal
