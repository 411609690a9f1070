// "ocr": the CPU-sized version of the zoo's CRNN (graph/zoo/crnn.cc), small enough to train on
// this machine. The same shape of network: a conv/pool stack that leaves one row of frames,
// map-to-sequence, two bi-LSTMs each with a per-frame Linear, log-softmax and CTC, but 1x32x128
// images, 32-128 channels, bi-LSTMs of 128 and labels of at most 10 symbols.
//
//   images [B,1,32,128] -> conv3x3 32, ReLU, max-pool 2 -> conv 64, ReLU, pool 2
//   -> conv 128, BN, ReLU, pool (2,1) -> conv 128, BN, ReLU, pool (2,1) -> conv (2,1) 128, ReLU
//   -> [B,128,1,32] -> [T=32, B, 128] -> 2 x (bi-LSTM 128 + per-frame Linear) -> CTC.
//
// 844,453 parameters. bench/torch_step_time.py builds the identical PyTorch model ("crnn_small"),
// so names, shapes and layers must not change (docs/zoo.md, docs/benchmarks.md). Nothing bakes
// the batch in (the Reshapes leave it as -1), so graph::SetBatch re-batches the graph.
#include "absl/strings/str_cat.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/graph/zoo/zoo_impl.h"

namespace tessera::graph::zoo::internal {
namespace {

constexpr int64_t kHidden = 128;

Value ConvRelu(GraphBuilder& b, Value x, int i, int64_t channels, Size2 kernel, Size2 padding,
               bool batch_norm) {
  x = b.Conv2d(x, channels, kernel, absl::StrCat("conv", i), {.padding = padding});
  if (batch_norm) x = b.BatchNorm2d(x, absl::StrCat("bn", i));
  return x.Relu(absl::StrCat("relu", i));
}

// A bi-LSTM and a Linear on every frame: [T, B, I] -> [T, B, out]. `lengths` (valid or not):
// the LSTM's sequence_lens.
Value BiLstm(GraphBuilder& b, Value x, int64_t out, absl::string_view name, Value lengths) {
  auto scope = b.Scope(name);
  const int64_t frames = x.dim(0);
  Value h = b.Lstm(x, kHidden, "lstm", {.bidirectional = true, .sequence_lens = lengths});
  Value y = b.Linear(h.Reshape({-1, 2 * kHidden}, "frames"), out, "linear");
  return y.Reshape({frames, -1, out}, "per_frame");  // the batch stays free
}

}  // namespace

absl::StatusOr<Graph> BuildOcrSmall(int64_t batch) { return BuildOcr({.batch = batch}); }

}  // namespace tessera::graph::zoo::internal

namespace tessera::graph::zoo {

absl::StatusOr<Graph> BuildOcr(const OcrSize& size) {
  using internal::BiLstm;
  using internal::ConvRelu;
  using internal::kHidden;
  const int64_t batch = size.batch;
  if (batch < 1 || size.width < 8 || size.width % 4 != 0 || size.classes < 2 ||
      size.max_label < 1 || size.max_label > size.width / 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ocr model: batch ", batch, ", width ", size.width, ", classes ", size.classes,
        " and max_label ", size.max_label, " must be at least 1, a multiple of 4 from 8, at least "
        "2 and within [1, width / 4] (the frames)"));
  }
  GraphBuilder b("ocr");
  Value images = b.Input("images", {batch, 1, 32, size.width});
  Value targets = b.Input("targets", {batch, size.max_label}, DType::kI64);
  Value input_lengths = b.Input("input_lengths", {batch}, DType::kI64);
  Value target_lengths = b.Input("target_lengths", {batch}, DType::kI64);
  const Pool2dOptions tall{.stride = {2, 1}};
  Value x = b.MaxPool2d(ConvRelu(b, images, 0, 32, 3, 1, false), 2, "pool0");  // 32 x 16 x W/2
  x = b.MaxPool2d(ConvRelu(b, x, 1, 64, 3, 1, false), 2, "pool1");             // 64 x 8 x W/4
  x = b.MaxPool2d(ConvRelu(b, x, 2, 128, 3, 1, true), {2, 1}, "pool2", tall);  // 128 x 4 x W/4
  x = b.MaxPool2d(ConvRelu(b, x, 3, 128, 3, 1, true), {2, 1}, "pool3", tall);  // 128 x 2 x W/4
  x = ConvRelu(b, x, 4, 128, {2, 1}, 0, false);                                // 128 x 1 x W/4
  Value seq = x.Squeeze({2}, "squeeze").Transpose({2, 0, 1}, "to_sequence");  // [T, B, 128]
  const Value lengths = size.mask_padding ? input_lengths : Value();
  seq = BiLstm(b, seq, kHidden, "rnn0", lengths);
  seq = BiLstm(b, seq, size.classes, "rnn1", lengths);
  b.Output(b.CtcLoss(seq.LogSoftmax(-1, "log_probs"), targets, input_lengths, target_lengths,
                     "loss"));
  return std::move(b).Build();
}

}  // namespace tessera::graph::zoo
