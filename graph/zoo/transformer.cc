// GPT-2 small (Radford et al. 2019) as a causal language model: learned token
// and position embeddings, 12 pre-LayerNorm blocks of width 768 with 12 heads
// and a 4x GELU MLP, a final LayerNorm, and the output head tied to the token
// embedding: 124,439,808 parameters. Attention uses separate q/k/v projections
// (same count as GPT-2's fused c_attn). Labels are the next-token targets
// (already shifted). Names follow the HuggingFace checkpoint where they can.
#include <numeric>

#include "absl/strings/str_cat.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/zoo/zoo_impl.h"

namespace tessera::graph::zoo::internal {
namespace {

constexpr int64_t kVocab = 50'257;
constexpr int64_t kContext = 1024;  // position table size, and the default sequence
constexpr int64_t kWidth = 768;
constexpr int64_t kHeads = 12;
constexpr int64_t kLayers = 12;
constexpr double kDropout = 0.1;

Value Block(GraphBuilder& b, Value h, Value mask) {
  Value a = b.LayerNorm(h, "ln_1");
  a = b.MultiHeadAttention(a, kHeads, "attn", {.mask = mask, .dropout = kDropout});
  h = b.Add(h, a.Dropout(kDropout, "resid_dropout_1"));
  Value m = b.LayerNorm(h, "ln_2");
  m = b.Linear(m, 4 * kWidth, "mlp.c_fc").Gelu("mlp.gelu");
  m = b.Linear(m, kWidth, "mlp.c_proj");
  return b.Add(h, m.Dropout(kDropout, "resid_dropout_2"));
}

}  // namespace

absl::StatusOr<Graph> BuildTransformer(int64_t batch) {
  const int64_t seq = kContext;
  GraphBuilder b("transformer");
  Value ids = b.Input("input_ids", {batch, seq}, DType::kI64);
  Value labels = b.Input("labels", {batch, seq}, DType::kI64);
  std::vector<double> positions(seq);
  std::iota(positions.begin(), positions.end(), 0.0);
  Value position_ids = b.Constant("position_ids", {1, seq}, positions, DType::kI64);
  Value mask = b.CausalMask(seq, seq, "causal_mask");  // shared by every layer

  Value wte = b.Parameter("wte.weight", {kVocab, kWidth});
  Value tokens = b.Embedding(ids, kVocab, kWidth, "wte", {.weight = wte});  // [B, T, D]
  Value pos = b.Embedding(position_ids, kContext, kWidth, "wpe");           // [1, T, D]
  Value h = b.Add(tokens, pos, "embed").Dropout(kDropout, "drop");
  for (int64_t i = 0; i < kLayers; ++i) {
    auto scope = b.Scope(absl::StrCat("h.", i));
    h = Block(b, h, mask);
  }
  h = b.LayerNorm(h, "ln_f");
  Value logits = b.Linear(h.Reshape({-1, kWidth}, "tokens"), kVocab, "lm_head",
                          {.bias = false, .weight = wte});  // [B*T, V]
  b.Output(b.SoftmaxCrossEntropy(logits, labels.Reshape({-1}, "targets"), "loss"));
  return std::move(b).Build();
}

}  // namespace tessera::graph::zoo::internal
