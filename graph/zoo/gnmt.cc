// GNMT v2 as in the MLPerf reference (mlcommons/training rnn_translator, PyTorch):
// hidden size 1024, dropout 0.2, seq-first LSTMs, one embedding shared by the
// encoder and the decoder, 160,671,297 parameters at a 32,320-token vocabulary.
//
// Encoder: embedding -> bi-LSTM -> LSTM(2048 in) -> 2 x LSTM with residuals,
// dropout on every LSTM input. Decoder: embedding -> LSTM (att_rnn.rnn) whose
// output queries normalized Bahdanau attention over the encoder output; the
// context is concatenated to the input of each of 3 further LSTMs (residuals
// from the 3rd), then the classifier. Every sentence is taken at full length
// (no padding mask, no packed sequences). Names follow the reference's modules.
#include "absl/strings/str_cat.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/zoo/zoo_impl.h"

namespace tessera::graph::zoo::internal {
namespace {

constexpr int64_t kVocab = 32'320;  // 32,317 BPE tokens + 4 specials, padded to a multiple of 8
constexpr int64_t kHidden = 1024;
constexpr int64_t kSeqLen = 50;     // the reference's max_length_train
constexpr double kDropout = 0.2;

// Normalized Bahdanau attention: query [Tq, B, H], keys [Tk, B, H] -> [Tq, B, H].
// score = (g * v / |v|) . tanh(Wq q + Wk k + b), softmax over the keys.
Value BahdanauAttention(GraphBuilder& b, Value query, Value keys) {
  auto scope = b.Scope("attn");
  Value q = query.Transpose({1, 0, 2});  // [B, Tq, H]
  Value k = keys.Transpose({1, 0, 2});   // [B, Tk, H]
  Value pq = b.Linear(q, kHidden, "linear_q", {.bias = false}).Unsqueeze({2});  // [B,Tq,1,U]
  Value pk = b.Linear(k, kHidden, "linear_k", {.bias = false}).Unsqueeze({1});  // [B,1,Tk,U]
  Value v = b.Parameter("linear_att", {kHidden});
  Value gain = b.Parameter("normalize_scalar", {1});
  Value bias = b.Parameter("normalize_bias", {kHidden});
  Value sum = b.Add(b.Add(pq, pk), bias);  // [B, Tq, Tk, U]
  Value norm = b.ReduceSum(b.Mul(v, v), {}, true).Sqrt();
  Value att = b.Mul(b.Div(v, norm), gain);
  Value scores = b.MatMul(sum.Tanh(), att).Softmax(-1);  // [B, Tq, Tk]
  return b.MatMul(scores, k).Transpose({1, 0, 2});      // [Tq, B, H]
}

Value Encoder(GraphBuilder& b, Value src, Value* table) {
  auto scope = b.Scope("encoder");
  Value x = b.Embedding(src, kVocab, kHidden, "embedder");  // [T, B, H]
  *table = b.Find("encoder.embedder.weight");
  x = b.Lstm(x.Dropout(kDropout), kHidden, "rnn_layers.0", {.bidirectional = true});
  x = b.Lstm(x.Dropout(kDropout), kHidden, "rnn_layers.1");  // 2H in
  for (int i = 2; i < 4; ++i) {
    Value residual = x;
    x = b.Lstm(x.Dropout(kDropout), kHidden, absl::StrCat("rnn_layers.", i));
    x = b.Add(x, residual);
  }
  return x;
}

Value Decoder(GraphBuilder& b, Value tgt, Value context, Value table) {
  auto scope = b.Scope("decoder");
  Value x = b.Embedding(tgt, kVocab, kHidden, "embedder", {.weight = table});
  Value attn;
  {
    auto att_scope = b.Scope("att_rnn");
    x = b.Lstm(x, kHidden, "rnn");
    attn = BahdanauAttention(b, x, context);
  }
  for (int i = 0; i < 3; ++i) {
    Value residual = x;
    Value in = b.Concat({x.Dropout(kDropout), attn}, 2);  // [T, B, 2H]
    x = b.Lstm(in, kHidden, absl::StrCat("rnn_layers.", i));
    if (i > 0) x = b.Add(x, residual);
  }
  // Classifier over every (time, sentence) pair: [T*B, H] -> [T*B, V].
  return b.Linear(x.Reshape({-1, kHidden}), kVocab, "classifier.classifier");
}

}  // namespace

absl::StatusOr<Graph> BuildGnmt(int64_t batch) {
  GraphBuilder b("gnmt");
  // Data inputs are batch-first (the batch is every input's leading dimension,
  // as graph/batch.h expects) and turned seq-first for the LSTMs.
  Value src = b.Input("src_tokens", {batch, kSeqLen}, DType::kI64);
  Value tgt = b.Input("tgt_tokens", {batch, kSeqLen}, DType::kI64);
  Value labels = b.Input("tgt_labels", {batch, kSeqLen}, DType::kI64);
  Value table;
  Value context = Encoder(b, src.Transpose({1, 0}, "src_seq_first"), &table);
  Value logits = Decoder(b, tgt.Transpose({1, 0}, "tgt_seq_first"), context, table);
  Value targets = labels.Transpose({1, 0}, "labels_seq_first").Reshape({-1});  // [T*B]
  b.Output(b.SoftmaxCrossEntropy(logits, targets, "loss"));
  return std::move(b).Build();
}

}  // namespace tessera::graph::zoo::internal
