// GraphBuilder layers: Linear, Embedding, LayerNorm.
#include <utility>

#include "absl/strings/str_cat.h"
#include "tessera/graph/builder.h"

namespace tessera::graph {

Value GraphBuilder::Linear(Value x, int64_t out_features, absl::string_view name,
                           LinearOptions options) {
  if (!CheckInputs(Describe("Linear", name), {x})) return Value();
  if (options.weight.valid() &&
      !CheckInputs(Describe("Linear", name) + " weight", {options.weight})) {
    return Value();
  }
  const std::string full = LayerName(name, "linear");
  if (full.empty()) return Value();
  return LinearFull(x, out_features, full, options);
}

Value GraphBuilder::LinearFull(Value x, int64_t out_features, const std::string& full,
                               const LinearOptions& options) {
  if (!status_.ok() || full.empty()) return Value();
  if (x.rank() < 1) {
    LayerError("Linear", full, {x}, "expects an input of rank >= 1 ([..., in_features])");
    return Value();
  }
  if (out_features < 1) {
    LayerError("Linear", full, {x}, absl::StrCat("out_features must be >= 1 (got ",
                                                 out_features, ")"));
    return Value();
  }
  const int64_t in_features = x.dim(-1);
  Value w = options.weight;
  if (w.valid()) {
    // Weight tying: the shared tensor must already be [out, in].
    if (w.shape() != Shape{out_features, in_features}) {
      LayerError("Linear", full, {x, w},
                 absl::StrCat("the shared weight must be [out_features, in_features] = [",
                              out_features, ",", in_features, "]"));
      return Value();
    }
  } else {
    w = NewTensor(SubName(full, "weight"), {out_features, in_features}, x.dtype(),
                  TensorRole::kParameter);
  }
  TensorId bias = kNoTensor;
  if (options.bias) {
    bias = NewTensor(SubName(full, "bias"), {out_features}, x.dtype(), TensorRole::kParameter).id();
  }
  if (!status_.ok()) return Value();
  const GemmAttrs gemm{.trans_b = true};
  if (x.rank() == 2) {
    std::vector<TensorId> in = {x.id(), w.id()};
    if (bias != kNoTensor) in.push_back(bias);
    return EmitOne(OpKind::kGemm, std::move(in), gemm, full);
  }
  // Higher rank: [..., in] -> [prod(...), in] -> Gemm -> [..., out]. The leading
  // dimension is -1 so the graph's batch can change later (graph/batch.h).
  Shape out_shape = x.shape();
  out_shape.back() = out_features;
  out_shape.front() = -1;
  Value flat = EmitOne(OpKind::kReshape, {x.id()}, ReshapeAttrs{.shape = {-1, in_features}},
                       SubName(full, "flatten"));
  if (!flat.valid()) return Value();
  std::vector<TensorId> in = {flat.id(), w.id()};
  if (bias != kNoTensor) in.push_back(bias);
  Value y = EmitOne(OpKind::kGemm, std::move(in), gemm, full);
  if (!y.valid()) return Value();
  return EmitOne(OpKind::kReshape, {y.id()}, ReshapeAttrs{.shape = std::move(out_shape)},
                 SubName(full, "unflatten"));
}

Value GraphBuilder::Embedding(Value ids, int64_t num_embeddings, int64_t dim,
                              absl::string_view name, EmbeddingOptions options) {
  if (!CheckInputs(Describe("Embedding", name), {ids})) return Value();
  if (options.weight.valid() &&
      !CheckInputs(Describe("Embedding", name) + " weight", {options.weight})) {
    return Value();
  }
  const std::string full = LayerName(name, "embedding");
  if (full.empty()) return Value();
  if (num_embeddings < 1 || dim < 1) {
    LayerError("Embedding", full, {ids},
               absl::StrCat("num_embeddings and dim must be >= 1 (got ", num_embeddings, ", ",
                            dim, ")"));
    return Value();
  }
  Value table = options.weight;
  if (table.valid()) {
    if (table.shape() != Shape{num_embeddings, dim}) {
      LayerError("Embedding", full, {ids, table},
                 absl::StrCat("the shared table must be [", num_embeddings, ",", dim, "]"));
      return Value();
    }
  } else {
    table = NewTensor(SubName(full, "weight"), {num_embeddings, dim}, DType::kF32,
                      TensorRole::kParameter);
  }
  if (!table.valid()) return Value();
  return EmitOne(OpKind::kEmbedding, {ids.id(), table.id()}, std::monostate{}, full);
}

Value GraphBuilder::LayerNorm(Value x, absl::string_view name, LayerNormOptions o) {
  if (!CheckInputs(Describe("LayerNorm", name), {x})) return Value();
  const std::string full = LayerName(name, "layer_norm");
  if (full.empty()) return Value();
  const Shape shape = x.shape();
  const auto axis = NormalizeAxis(o.axis, static_cast<int64_t>(shape.size()));
  if (!axis) {
    LayerError("LayerNorm", full, {x},
               absl::StrCat("axis ", o.axis, " is out of range for rank ", shape.size()));
    return Value();
  }
  const Shape normalized(shape.begin() + *axis, shape.end());
  Value scale = NewTensor(SubName(full, "weight"), normalized, x.dtype(), TensorRole::kParameter);
  std::vector<TensorId> in = {x.id(), scale.id()};
  if (o.bias) {
    in.push_back(
        NewTensor(SubName(full, "bias"), normalized, x.dtype(), TensorRole::kParameter).id());
  }
  return EmitOne(OpKind::kLayerNorm, std::move(in),
                 LayerNormAttrs{.axis = *axis, .epsilon = o.eps}, full);
}

}  // namespace tessera::graph
