// CRNN of Shi, Bai & Yao (2015), following the configuration table of the
// paper: seven 3x3/2x2 convolutions 64-128-256-256-512-512-512 with batch norm
// after the 5th and 6th, max-pools 2x2/2 twice then two "1x2" pools (kernel 2x2,
// stride 2 in height and 1 in width, width padding 1), map-to-sequence, and two
// bi-LSTM layers of 256. As in the authors' implementation, each bi-LSTM layer
// ends in a per-frame linear layer: 512 -> 256 after the first, 512 -> 37
// classes (blank, 10 digits, 26 letters) after the second, trained with CTC.
// Input 1x32x100 -> feature map 512x1x26 -> 26 frames. 8,330,789 parameters,
// the paper's "8.3M" (docs/zoo.md). Names follow the crnn.pytorch port.
#include "absl/strings/str_cat.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/zoo/zoo_impl.h"

namespace tessera::graph::zoo::internal {
namespace {

constexpr int64_t kClasses = 37;
constexpr int64_t kHidden = 256;
constexpr int64_t kMaxLabel = 25;  // longest transcription per image

Value ConvRelu(GraphBuilder& b, Value x, int i, int64_t channels, bool batch_norm,
               int64_t kernel = 3, int64_t padding = 1) {
  x = b.Conv2d(x, channels, kernel, absl::StrCat("conv", i), {.padding = padding});
  if (batch_norm) x = b.BatchNorm2d(x, absl::StrCat("batchnorm", i));
  return x.Relu(absl::StrCat("relu", i));
}

Value Cnn(GraphBuilder& b, Value x) {
  auto scope = b.Scope("cnn");
  const Pool2dOptions tall{.stride = {2, 1}, .padding = {0, 1}};  // the paper's "1x2" pooling
  x = b.MaxPool2d(ConvRelu(b, x, 0, 64, false), 2, "pooling0");   // 64 x 16 x 50
  x = b.MaxPool2d(ConvRelu(b, x, 1, 128, false), 2, "pooling1");  // 128 x 8 x 25
  x = ConvRelu(b, x, 2, 256, false);
  x = b.MaxPool2d(ConvRelu(b, x, 3, 256, false), 2, "pooling2", tall);  // 256 x 4 x 26
  x = ConvRelu(b, x, 4, 512, true);
  x = b.MaxPool2d(ConvRelu(b, x, 5, 512, true), 2, "pooling3", tall);   // 512 x 2 x 27
  return ConvRelu(b, x, 6, 512, false, 2, 0);                           // 512 x 1 x 26
}

// The authors' BidirectionalLSTM module: a bi-LSTM ("<name>.rnn") and a linear
// layer on every frame ("<name>.embedding"): [T, N, I] -> [T, N, out].
Value BiLstm(GraphBuilder& b, Value x, int64_t frames, int64_t out, absl::string_view name) {
  auto scope = b.Scope(name);
  Value h = b.Lstm(x, kHidden, "rnn", {.bidirectional = true});  // [T, N, 2H]
  Value y = b.Linear(h.Reshape({-1, 2 * kHidden}, "frames"), out, "embedding");
  return y.Reshape({frames, -1, out}, "per_frame");  // the batch stays free
}

}  // namespace

absl::StatusOr<Graph> BuildCrnn(int64_t batch) {
  GraphBuilder b("crnn");
  Value images = b.Input("images", {batch, 1, 32, 100});
  Value targets = b.Input("targets", {batch, kMaxLabel}, DType::kI64);
  Value input_lengths = b.Input("input_lengths", {batch}, DType::kI64);
  Value target_lengths = b.Input("target_lengths", {batch}, DType::kI64);
  Value features = Cnn(b, images);
  const int64_t frames = features.dim(3);
  // Map-to-sequence: [N, 512, 1, W] -> [W, N, 512], one frame per column.
  Value seq = features.Squeeze({2}, "squeeze").Transpose({2, 0, 1}, "to_sequence");
  {
    auto scope = b.Scope("rnn");
    seq = BiLstm(b, seq, frames, kHidden, "0");    // [T, N, 256]
    seq = BiLstm(b, seq, frames, kClasses, "1");   // [T, N, 37]
  }
  Value log_probs = seq.LogSoftmax(-1, "log_probs");
  b.Output(b.CtcLoss(log_probs, targets, input_lengths, target_lengths, "loss"));
  return std::move(b).Build();
}

}  // namespace tessera::graph::zoo::internal
