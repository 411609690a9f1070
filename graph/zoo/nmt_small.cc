// "nmt": the CPU-sized version of the zoo's GNMT (graph/zoo/gnmt.cc), small enough to train on
// this machine: an LSTM encoder-decoder without attention.
//
//   src_tokens, tgt_tokens, tgt_labels [B, 20] (i64, vocabulary 2,000), tgt_lengths [B] (all 20)
//   encoder: embedding 128 -> 2-layer LSTM 256
//   decoder: embedding 128 of the target (teacher forcing) -> LSTM 256 started from the
//            encoder's last layer's final (h, c) -> Linear 256 -> 2000 -> softmax cross-entropy
//
// 2,342,864 parameters. bench/torch_step_time.py builds the identical PyTorch model
// ("seq2seq_small"), so names, shapes and layers must not change (docs/zoo.md,
// docs/benchmarks.md). The decoder is an LSTM node built by hand (GraphBuilder::Lstm takes no
// initial state); its sequence_lens input is the data input "tgt_lengths", since the builder has
// no absent optional inputs. Nothing bakes the batch in (the Reshapes leave it as -1).
#include <vector>

#include "tessera/graph/builder.h"
#include "tessera/graph/zoo/zoo_impl.h"

namespace tessera::graph::zoo::internal {
namespace {

constexpr int64_t kVocab = 2000;
constexpr int64_t kEmbed = 128;
constexpr int64_t kHidden = 256;
constexpr int64_t kSrcLen = 20;
constexpr int64_t kTgtLen = 20;

// The decoder LSTM from the initial state (h0, c0): [T, B, kEmbed] -> [T, B, kHidden].
absl::StatusOr<Value> Decoder(GraphBuilder& b, Value tgt, Value tgt_lengths, Value h0, Value c0) {
  auto scope = b.Scope("decoder");
  Value x = b.Embedding(tgt.Transpose({1, 0}, "seq_first"), kVocab, kEmbed, "embedding");
  Value w = b.Parameter("rnn.weight_ih", {1, 4 * kHidden, kEmbed});
  Value r = b.Parameter("rnn.weight_hh", {1, 4 * kHidden, kHidden});
  Value bias = b.Parameter("rnn.bias", {1, 8 * kHidden});
  std::vector<Value> outs = b.AddOp(OpKind::kLstm, {x, w, r, bias, tgt_lengths, h0, c0},
                                    LstmAttrs{.hidden_size = kHidden}, "rnn", 3);
  if (outs.empty()) return b.status();
  return outs[0].Squeeze({1}, "rnn.squeeze");  // [T, B, H]
}

}  // namespace

absl::StatusOr<Graph> BuildNmtSmall(int64_t batch) {
  GraphBuilder b("nmt");
  Value src = b.Input("src_tokens", {batch, kSrcLen}, DType::kI64);
  Value tgt = b.Input("tgt_tokens", {batch, kTgtLen}, DType::kI64);
  Value labels = b.Input("tgt_labels", {batch, kTgtLen}, DType::kI64);
  Value tgt_lengths = b.Input("tgt_lengths", {batch}, DType::kI64);
  {
    auto scope = b.Scope("encoder");
    Value x = b.Embedding(src.Transpose({1, 0}, "seq_first"), kVocab, kEmbed, "embedding");
    b.Lstm(x, kHidden, "rnn", {.num_layers = 2});
  }
  Value h0 = b.Find("encoder.rnn.1.h_n");  // [1, B, H]
  Value c0 = b.Find("encoder.rnn.1.c_n");
  absl::StatusOr<Value> y = Decoder(b, tgt, tgt_lengths, h0, c0);
  if (!y.ok()) return y.status();
  Value logits = b.Linear(y->Reshape({-1, kHidden}, "frames"), kVocab, "classifier");
  Value targets = labels.Transpose({1, 0}, "labels_seq_first").Reshape({-1}, "labels_flat");
  b.Output(b.SoftmaxCrossEntropy(logits, targets, "loss"));
  return std::move(b).Build();
}

}  // namespace tessera::graph::zoo::internal
