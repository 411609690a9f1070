// "nmt": the CPU-sized version of the zoo's GNMT (graph/zoo/gnmt.cc), small enough to train on
// this machine: the same shape of network (embeddings, a bi-directional first encoder layer, an
// LSTM decoder with attention over the encoder, a large-vocabulary softmax) at 1/4 the width.
//
//   src_tokens, tgt_tokens, tgt_labels [B, 20] (i64, vocabulary 2,000), tgt_lengths [B] (all 20)
//   encoder: embedding 128 -> bi-LSTM 256 (both directions concatenated, 512) -> LSTM 256
//   decoder: embedding 128 of the target (teacher forcing) -> LSTM 256 started from the
//            encoder's last layer's final (h, c)
//   attention (Luong et al. 2015, scaled dot product, over all 20 encoder positions): per target
//            position t, a = softmax_s(dec_t . enc_s / 16), context_t = sum_s a_s enc_s,
//            combined_t = tanh(W [dec_t; context_t] + b) (512 -> 256)
//   classifier Linear 256 -> 2000 -> softmax cross-entropy ignoring label 0 (<pad>), the mean
//            over the labels that are not padding.
//
// With NmtSize::mask_padding (the corpus job's model) two more inputs, src_lengths [B] and
// src_mask [B, 20] (0 at words, -1e9 at padding, padding on the right), make padding inert: both
// encoder LSTMs stop at each source's length (so the decoder starts from its last word's state)
// and the scores of padded positions get -1e9, so their attention weight is exactly 0.
//
// With NmtSize::dropout p > 0 (the corpus job's --dropout), Dropout(p) follows both embeddings,
// the bi-LSTM (between the encoder's layers) and the attention's tanh output (before the
// classifier), the places Luong et al. and OpenNMT regularise; the zoo's "nmt" has none
// (GraphBuilder::Dropout(0) adds no node; outside [0, 1) it fails the build, naming the node).
//
// 3,131,600 parameters. bench/torch_step_time.py builds the identical PyTorch model
// ("seq2seq_small"), so shapes and layers must change together (docs/zoo.md,
// docs/benchmarks.md). The decoder is causal: its output at position t reads tgt_tokens[0..t]
// only, which decoding relies on (jobs/nmt/beam_decoder.h). The decoder is an LSTM
// node built by hand (GraphBuilder::Lstm takes no initial state); its sequence_lens input is the
// data input "tgt_lengths", since the builder has no absent optional inputs. Nothing bakes the
// batch in (the Reshapes leave it as -1).
#include <cmath>
#include <vector>

#include "tessera/graph/builder.h"
#include "absl/strings/str_cat.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/graph/zoo/zoo_impl.h"

namespace tessera::graph::zoo::internal {
namespace {

constexpr int64_t kEmbed = 128;
constexpr int64_t kHidden = 256;
constexpr int64_t kPad = 0;

// The decoder LSTM from the initial state (h0, c0): [T, B, kEmbed] -> [T, B, kHidden].
absl::StatusOr<Value> Decoder(GraphBuilder& b, Value tgt, Value tgt_lengths, Value h0, Value c0,
                              int64_t vocab, double dropout) {
  auto scope = b.Scope("decoder");
  Value x = b.Embedding(tgt.Transpose({1, 0}, "seq_first"), vocab, kEmbed, "embedding")
                .Dropout(dropout, "embedding.dropout");  // p 0: no node
  Value w = b.Parameter("rnn.weight_ih", {1, 4 * kHidden, kEmbed});
  Value r = b.Parameter("rnn.weight_hh", {1, 4 * kHidden, kHidden});
  Value bias = b.Parameter("rnn.bias", {1, 8 * kHidden});
  std::vector<Value> outs = b.AddOp(OpKind::kLstm, {x, w, r, bias, tgt_lengths, h0, c0},
                                    LstmAttrs{.hidden_size = kHidden}, "rnn", 3);
  if (outs.empty()) return b.status();
  return outs[0].Squeeze({1}, "rnn.squeeze");  // [T, B, H]
}

// Scaled dot-product attention of the decoder's outputs dec [T, B, H] over the encoder's
// enc [S, B, H]; returns tanh(W [dec; context] + b) as [T*B, H] (rows time-major). A valid
// `mask` [B, S] is added to every target position's scores.
Value Attention(GraphBuilder& b, Value dec, Value enc, Value mask) {
  auto scope = b.Scope("attention");
  Value scale = b.Scalar(1.0 / std::sqrt(static_cast<double>(kHidden)));
  Value query = b.Mul(dec.Transpose({1, 0, 2}, "query"), scale, "query_scaled");  // [B, T, H]
  Value keys = enc.Transpose({1, 2, 0}, "keys");                                  // [B, H, S]
  Value scores = b.MatMul(query, keys, "scores");                                 // [B, T, S]
  if (mask.valid()) {
    scores = b.Add(scores, mask.Reshape({-1, 1, enc.dim(0)}, "mask_rows"), "masked_scores");
  }
  Value weights = scores.Softmax(-1, "weights");
  Value context = b.MatMul(weights, enc.Transpose({1, 0, 2}, "values"), "context");  // [B, T, H]
  Value both = b.Concat({dec, context.Transpose({1, 0, 2}, "context_seq_first")}, 2, "concat");
  return b.Linear(both.Reshape({-1, 2 * kHidden}, "frames"), kHidden, "combine").Tanh("tanh");
}

}  // namespace

absl::StatusOr<Graph> BuildNmtSmall(int64_t batch) {
  return BuildNmt({.batch = batch});
}

}  // namespace tessera::graph::zoo::internal

namespace tessera::graph::zoo {

absl::StatusOr<Graph> BuildNmt(const NmtSize& size) {
  using internal::Attention;
  using internal::Decoder;
  using internal::kEmbed;
  using internal::kHidden;
  using internal::kPad;
  const int64_t batch = size.batch, vocab = size.vocab;
  const int64_t target_vocab = size.target_vocab > 0 ? size.target_vocab : vocab;
  if (batch < 1 || vocab < 5 || size.target_vocab < 0 || target_vocab < 5 || size.length < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nmt model: batch ", batch, ", vocabularies ", vocab, " (source) and ", target_vocab,
        " (target) and length ", size.length, " must be at least 1, 5 and 2"));
  }
  const double p = size.dropout;
  GraphBuilder b("nmt");
  Value src = b.Input("src_tokens", {batch, size.length}, DType::kI64);
  Value tgt = b.Input("tgt_tokens", {batch, size.length}, DType::kI64);
  Value labels = b.Input("tgt_labels", {batch, size.length}, DType::kI64);
  Value tgt_lengths = b.Input("tgt_lengths", {batch}, DType::kI64);
  Value src_lengths, src_mask;  // mask_padding only
  if (size.mask_padding) {
    src_lengths = b.Input("src_lengths", {batch}, DType::kI64);
    src_mask = b.Input("src_mask", {batch, size.length});
  }
  Value enc;
  {
    auto scope = b.Scope("encoder");
    Value x = b.Embedding(src.Transpose({1, 0}, "seq_first"), vocab, kEmbed, "embedding")
                  .Dropout(p, "embedding.dropout");
    Value both = b.Lstm(x, kHidden, "rnn.0",
                        {.bidirectional = true, .sequence_lens = src_lengths});  // [S, B, 2H]
    enc = b.Lstm(both.Dropout(p, "rnn.0.dropout"), kHidden, "rnn.1",
                 {.sequence_lens = src_lengths});  // [S, B, H]
  }
  Value h0 = b.Find(kNmtEncoderH);  // [1, B, H]
  Value c0 = b.Find(kNmtEncoderC);
  absl::StatusOr<Value> dec = Decoder(b, tgt, tgt_lengths, h0, c0, target_vocab, p);
  if (!dec.ok()) return dec.status();
  Value combined = Attention(b, *dec, enc, src_mask).Dropout(p, "attention.dropout");
  Value logits = b.Linear(combined, target_vocab, "classifier");
  Value targets = labels.Transpose({1, 0}, "labels_seq_first").Reshape({-1}, "labels_flat");
  b.Output(b.SoftmaxCrossEntropy(logits, targets, "loss", Reduction::kMean, kPad));
  return std::move(b).Build();
}

absl::StatusOr<Graph> BuildNmtDecoderStep(const NmtSize& size) {
  using internal::Attention;
  using internal::Decoder;
  using internal::kHidden;
  using internal::kPad;
  const int64_t batch = size.batch, sources = size.length;
  const int64_t target_vocab = size.target_vocab > 0 ? size.target_vocab : size.vocab;
  if (batch < 1 || target_vocab < 5 || sources < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("nmt decoder step: batch ", batch, ", target vocabulary ", target_vocab,
                     " and source length ", sources, " must be at least 1, 5 and 1"));
  }
  GraphBuilder b("nmt_step");
  Value tgt = b.Input("tgt_tokens", {batch, 1}, DType::kI64);
  Value labels = b.Input("tgt_labels", {batch, 1}, DType::kI64);
  Value tgt_lengths = b.Input("tgt_lengths", {batch}, DType::kI64);
  Value h0 = b.Input(kNmtStepH0, {1, batch, kHidden});
  Value c0 = b.Input(kNmtStepC0, {1, batch, kHidden});
  Value enc = b.Input(kNmtStepEncoder, {sources, batch, kHidden});
  Value src_mask = size.mask_padding ? b.Input("src_mask", {batch, sources}) : Value();
  absl::StatusOr<Value> dec = Decoder(b, tgt, tgt_lengths, h0, c0, target_vocab, 0);
  if (!dec.ok()) return dec.status();
  Value logits = b.Linear(Attention(b, *dec, enc, src_mask), target_vocab, "classifier");
  b.Output(b.SoftmaxCrossEntropy(logits, labels.Reshape({-1}, "labels_flat"), "loss",
                                 Reduction::kMean, kPad));
  b.Output(logits);
  b.Output(b.Find(kNmtStepHn));
  b.Output(b.Find(kNmtStepCn));
  return std::move(b).Build();
}

}  // namespace tessera::graph::zoo
