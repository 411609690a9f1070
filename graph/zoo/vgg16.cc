// VGG-16, configuration D of Simonyan & Zisserman (2015): thirteen 3x3
// convolutions in five blocks, three fully-connected layers; 138,357,544
// parameters. Names follow torchvision's module indices.
#include "absl/strings/str_cat.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/zoo/zoo_impl.h"

namespace tessera::graph::zoo::internal {

absl::StatusOr<Graph> BuildVgg16(int64_t batch) {
  // Channels per conv; 0 marks a 2x2 max-pool.
  constexpr int64_t kConfigD[] = {64,  64,  0,   128, 128, 0,   256, 256, 256,
                                  0,   512, 512, 512, 0,   512, 512, 512, 0};
  GraphBuilder b("vgg16");
  Value x = b.Input("images", {batch, 3, 224, 224});
  Value labels = b.Input("labels", {batch}, DType::kI64);
  {
    auto scope = b.Scope("features");
    int index = 0;  // torchvision's Sequential index
    for (int64_t channels : kConfigD) {
      if (channels == 0) {
        x = b.MaxPool2d(x, 2, absl::StrCat(index++));
        continue;
      }
      x = b.Conv2d(x, channels, 3, absl::StrCat(index), {.padding = 1});
      x = x.Relu(absl::StrCat(index + 1));
      index += 2;
    }
  }
  // torchvision's AdaptiveAvgPool2d((7, 7)) is the identity at 224x224: omitted.
  x = x.Flatten(1, "flatten");  // [N, 25088]
  {
    auto scope = b.Scope("classifier");
    x = b.Linear(x, 4096, "0").Relu("1");
    x = b.Dropout(x, 0.5, "2");
    x = b.Linear(x, 4096, "3").Relu("4");
    x = b.Dropout(x, 0.5, "5");
    x = b.Linear(x, 1000, "6");
  }
  b.Output(b.SoftmaxCrossEntropy(x, labels, "loss"));
  return std::move(b).Build();
}

}  // namespace tessera::graph::zoo::internal
