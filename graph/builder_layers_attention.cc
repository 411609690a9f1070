// GraphBuilder layers: multi-head attention decomposed into primitive ops.
#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tessera/graph/builder.h"

namespace tessera::graph {
namespace {

// Large negative, finite (so graph files can store it) additive mask value.
constexpr double kMaskedScore = -1e9;

}  // namespace

Value GraphBuilder::MultiHeadAttention(Value x, int64_t num_heads, absl::string_view name,
                                       AttentionOptions o) {
  const std::string what = Describe("MultiHeadAttention", name);
  if (!CheckInputs(what, {x})) return Value();
  if (o.memory.valid() && !CheckInputs(what + " memory", {o.memory})) return Value();
  if (o.mask.valid() && !CheckInputs(what + " mask", {o.mask})) return Value();
  const std::string full = LayerName(name, "attention");
  if (full.empty()) return Value();
  const Value kv = o.memory.valid() ? o.memory : x;
  const int64_t d = x.dim(-1);
  if (x.rank() != 3 || kv.rank() != 3 || kv.dim(0) != x.dim(0) || kv.dim(2) != d) {
    LayerError("MultiHeadAttention", full, {x, kv},
               "expects batch-first [B, T, D] inputs with one B and D");
    return Value();
  }
  if (num_heads < 1 || d % num_heads != 0) {
    LayerError("MultiHeadAttention", full, {x},
               absl::StrCat("num_heads=", num_heads, " must be >= 1 and divide D=", d));
    return Value();
  }
  const LinearOptions proj{.bias = o.bias};
  // Step 1: project, then split D into heads: [B, T, D] -> [B, H, T, D/H]
  // (keys as [B, H, D/H, T] so the score product needs no further transpose).
  Value q = AttentionHeads(LinearFull(x, d, SubName(full, "q_proj"), proj), num_heads, false,
                           full, "q_heads");
  Value k = AttentionHeads(LinearFull(kv, d, SubName(full, "k_proj"), proj), num_heads, true,
                           full, "k_heads");
  Value v = AttentionHeads(LinearFull(kv, d, SubName(full, "v_proj"), proj), num_heads, false,
                           full, "v_heads");
  if (!status_.ok()) return Value();
  // Step 2: scaled scores [B, H, Tq, Tk], optional causal mask, softmax over keys.
  Value scores = EmitOne(OpKind::kMatMul, {q.id(), k.id()}, std::monostate{},
                         SubName(full, "scores"));
  const double scale = 1.0 / std::sqrt(static_cast<double>(d / num_heads));
  Value scale_c = NewTensor(SubName(full, "scale"), {}, x.dtype(), TensorRole::kConstant, {scale});
  Value s = EmitOne(OpKind::kMul, {scores.id(), scale_c.id()}, std::monostate{},
                    SubName(full, "scaled"));
  if (o.mask.valid() || o.causal) {
    Value mask = o.mask.valid() ? o.mask : CausalMaskNamed(x.dim(1), kv.dim(1), x.dtype(), SubName(full, "causal_mask"));
    s = EmitOne(OpKind::kAdd, {s.id(), mask.id()}, std::monostate{}, SubName(full, "masked"));
  }
  Value p = EmitOne(OpKind::kSoftmax, {s.id()}, AxisAttrs{.axis = -1}, SubName(full, "softmax"));
  if (o.dropout > 0.0) {
    p = EmitOne(OpKind::kDropout, {p.id()}, ScalarAttrs{.alpha = o.dropout},
                SubName(full, "dropout"));
  }
  // Step 3: weighted values [B, H, Tq, D/H] -> merge heads [B, Tq, D] -> out_proj.
  Value ctx = EmitOne(OpKind::kMatMul, {p.id(), v.id()}, std::monostate{},
                      SubName(full, "context"));
  Value merged = EmitOne(OpKind::kTranspose, {ctx.id()}, PermAttrs{.perm = {0, 2, 1, 3}},
                         SubName(full, "merge_transpose"));
  merged = EmitOne(OpKind::kReshape, {merged.id()}, ReshapeAttrs{.shape = {0, 0, d}},
                   SubName(full, "merge_heads"));
  return LinearFull(merged, d, SubName(full, "out_proj"), proj);
}

Value GraphBuilder::AttentionHeads(Value t, int64_t heads, bool keys_transposed,
                                   const std::string& full, absl::string_view suffix) {
  if (!status_.ok()) return Value();
  const int64_t d = t.dim(-1);
  Value split = EmitOne(OpKind::kReshape, {t.id()},
                        ReshapeAttrs{.shape = {0, 0, heads, d / heads}},
                        SubName(full, absl::StrCat(suffix, "_split")));
  if (!split.valid()) return Value();
  std::vector<int64_t> perm = keys_transposed ? std::vector<int64_t>{0, 2, 3, 1}
                                              : std::vector<int64_t>{0, 2, 1, 3};
  return EmitOne(OpKind::kTranspose, {split.id()}, PermAttrs{.perm = std::move(perm)},
                 SubName(full, suffix));
}

Value GraphBuilder::CausalMask(int64_t tq, int64_t tk, absl::string_view name, DType dtype) {
  if (!status_.ok()) return Value();
  const std::string full = LayerName(name, "causal_mask");
  if (tq < 1 || tk < 1) {
    Fail(absl::InvalidArgumentError(absl::StrCat("causal mask '", full, "' needs tq, tk >= 1 (got ",
                                                 tq, ", ", tk, ")")));
    return Value();
  }
  return CausalMaskNamed(tq, tk, dtype, full);
}

Value GraphBuilder::CausalMaskNamed(int64_t tq, int64_t tk, DType dtype, const std::string& full) {
  if (!status_.ok() || full.empty()) return Value();
  // Query i (the last tq of tk positions) may see keys j <= i + (tk - tq).
  std::vector<double> data(static_cast<size_t>(tq * tk), 0.0);
  for (int64_t i = 0; i < tq; ++i) {
    for (int64_t j = std::max<int64_t>(0, i + (tk - tq) + 1); j < tk; ++j) {
      data[i * tk + j] = kMaskedScore;
    }
  }
  return NewTensor(full, {tq, tk}, dtype, TensorRole::kConstant,
                   std::move(data));
}

}  // namespace tessera::graph
