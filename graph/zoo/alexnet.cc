// AlexNet as torchvision builds it: one tower, 64-192-384-256-256 channels,
// 61,100,840 parameters. (The 2012 paper split the network over two GPUs with
// grouped convolutions, 48-128-192-192-128 per tower, about 60M parameters.)
// Names follow torchvision's module indices ("features.0", "classifier.1").
#include "tessera/graph/builder.h"
#include "tessera/graph/zoo/zoo_impl.h"

namespace tessera::graph::zoo::internal {

absl::StatusOr<Graph> BuildAlexNet(int64_t batch) {
  GraphBuilder b("alexnet");
  Value x = b.Input("images", {batch, 3, 224, 224});
  Value labels = b.Input("labels", {batch}, DType::kI64);
  {
    auto scope = b.Scope("features");
    x = b.Conv2d(x, 64, 11, "0", {.stride = 4, .padding = 2}).Relu("1");  // 55x55
    x = b.MaxPool2d(x, 3, "2", {.stride = 2});                            // 27x27
    x = b.Conv2d(x, 192, 5, "3", {.padding = 2}).Relu("4");
    x = b.MaxPool2d(x, 3, "5", {.stride = 2});                            // 13x13
    x = b.Conv2d(x, 384, 3, "6", {.padding = 1}).Relu("7");
    x = b.Conv2d(x, 256, 3, "8", {.padding = 1}).Relu("9");
    x = b.Conv2d(x, 256, 3, "10", {.padding = 1}).Relu("11");
    x = b.MaxPool2d(x, 3, "12", {.stride = 2});                           // 6x6
  }
  // torchvision's AdaptiveAvgPool2d((6, 6)) is the identity at 224x224: omitted.
  x = x.Flatten(1, "flatten");  // [N, 9216]
  {
    auto scope = b.Scope("classifier");
    x = b.Dropout(x, 0.5, "0");
    x = b.Linear(x, 4096, "1").Relu("2");
    x = b.Dropout(x, 0.5, "3");
    x = b.Linear(x, 4096, "4").Relu("5");
    x = b.Linear(x, 1000, "6");
  }
  b.Output(b.SoftmaxCrossEntropy(x, labels, "loss"));
  return std::move(b).Build();
}

}  // namespace tessera::graph::zoo::internal
