// Constant folding: layout ops (Gather, Slice, Concat, Expand, Transpose, reductions).
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "tessera/graph/onnx/fold.h"
#include "tessera/graph/onnx/fold_index.h"

namespace tessera::graph::onnx_import {
namespace {

// Appends element `i` of `src` to `dst` (same dtype family).
void Append(ConstTensor& dst, const ConstTensor& src, int64_t i) {
  if (dst.is_float()) {
    dst.floats.push_back(src.Get(i));
  } else {
    dst.ints.push_back(src.GetInt(i));
  }
}

ConstTensor EmptyLike(const ConstTensor& t, Shape shape) {
  ConstTensor out;
  out.dtype = t.dtype;
  out.shape = std::move(shape);
  const int64_t n = NumElements(out.shape);
  if (out.is_float()) {
    out.floats.reserve(n);
  } else {
    out.ints.reserve(n);
  }
  return out;
}

}  // namespace

ConstTensor WithShape(ConstTensor t, Shape shape) {
  t.shape = std::move(shape);
  return t;
}

absl::StatusOr<ConstTensor> FoldGather(const ConstTensor& data, const ConstTensor& indices,
                                       int64_t axis) {
  const auto a = NormalizeAxis(axis, static_cast<int64_t>(data.shape.size()));
  if (!a) return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is out of range"));
  const int64_t dim = data.shape[*a];
  Shape out_shape(data.shape.begin(), data.shape.begin() + *a);
  out_shape.insert(out_shape.end(), indices.shape.begin(), indices.shape.end());
  out_shape.insert(out_shape.end(), data.shape.begin() + *a + 1, data.shape.end());
  if (NumElements(out_shape) > kMaxFoldElements) {
    return absl::ResourceExhaustedError("the result is above the folding limit");
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < *a; ++i) outer *= data.shape[i];
  for (size_t i = *a + 1; i < data.shape.size(); ++i) inner *= data.shape[i];
  ConstTensor out = EmptyLike(data, out_shape);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < indices.size(); ++k) {
      int64_t idx = indices.GetInt(k);
      if (idx < -dim || idx >= dim) {
        return absl::InvalidArgumentError(
            absl::StrCat("index ", idx, " is out of range for a dimension of size ", dim));
      }
      if (idx < 0) idx += dim;
      for (int64_t i = 0; i < inner; ++i) Append(out, data, (o * dim + idx) * inner + i);
    }
  }
  return out;
}

ConstTensor FoldSlice(const ConstTensor& data, const Shape& out_shape,
                      const std::vector<int64_t>& starts, const std::vector<int64_t>& steps) {
  // starts/steps per axis of data (already clamped); out_shape gives the counts.
  ConstTensor out = EmptyLike(data, out_shape);
  const int64_t n = NumElements(out_shape);
  const std::vector<int64_t> strides = Strides(data.shape);
  const size_t rank = out_shape.size();
  std::vector<int64_t> counter(rank, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += (starts[d] + counter[d] * steps[d]) * strides[d];
    Append(out, data, src);
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++counter[d] < out_shape[d]) break;
      counter[d] = 0;
    }
  }
  return out;
}

absl::StatusOr<ConstTensor> FoldConcat(const std::vector<const ConstTensor*>& parts,
                                       int64_t axis) {
  const ConstTensor& first = *parts[0];
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  const auto a = NormalizeAxis(axis, rank);
  if (!a) return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is out of range"));
  Shape out_shape = first.shape;
  out_shape[*a] = 0;
  for (const ConstTensor* p : parts) {
    if (static_cast<int64_t>(p->shape.size()) != rank) {
      return absl::InvalidArgumentError("inputs have different ranks");
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != *a && p->shape[d] != first.shape[d]) {
        return absl::InvalidArgumentError(absl::StrCat("inputs ", ShapeString(first.shape), " and ",
                                                       ShapeString(p->shape), " differ off axis ",
                                                       *a));
      }
    }
    out_shape[*a] += p->shape[*a];
  }
  if (NumElements(out_shape) > kMaxFoldElements) {
    return absl::ResourceExhaustedError("the result is above the folding limit");
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < *a; ++d) outer *= first.shape[d];
  ConstTensor out = EmptyLike(first, out_shape);
  for (int64_t o = 0; o < outer; ++o) {
    for (const ConstTensor* p : parts) {
      const int64_t chunk = outer == 0 ? 0 : p->size() / outer;
      for (int64_t i = 0; i < chunk; ++i) Append(out, *p, o * chunk + i);
    }
  }
  return out;
}

std::optional<ConstTensor> FoldExpand(const ConstTensor& data, const Shape& shape) {
  auto out_shape = BroadcastShapes(data.shape, shape);
  if (!out_shape || NumElements(*out_shape) > kMaxFoldElements) return std::nullopt;
  ConstTensor out = EmptyLike(data, *out_shape);
  for (int64_t i : BroadcastIndex(*out_shape, data.shape)) Append(out, data, i);
  return out;
}

ConstTensor FoldTranspose(const ConstTensor& data, const std::vector<int64_t>& perm) {
  Shape out_shape;
  for (int64_t p : perm) out_shape.push_back(data.shape[p]);
  const std::vector<int64_t> in_strides = Strides(data.shape);
  ConstTensor out = EmptyLike(data, out_shape);
  const int64_t n = NumElements(out_shape);
  const size_t rank = perm.size();
  std::vector<int64_t> counter(rank, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += counter[d] * in_strides[perm[d]];
    Append(out, data, src);
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++counter[d] < out_shape[d]) break;
      counter[d] = 0;
    }
  }
  return out;
}

ConstTensor FoldReduce(const ConstTensor& data, const std::vector<bool>& reduced, bool keepdims,
                       absl::string_view op_type) {
  Shape kept_shape;  // output shape with reduced axes as 1
  Shape out_shape;
  for (size_t d = 0; d < data.shape.size(); ++d) {
    kept_shape.push_back(reduced[d] ? 1 : data.shape[d]);
    if (!reduced[d]) {
      out_shape.push_back(data.shape[d]);
    } else if (keepdims) {
      out_shape.push_back(1);
    }
  }
  const int64_t n_out = NumElements(kept_shape);
  const bool is_max = op_type == "ReduceMax", is_min = op_type == "ReduceMin";
  const bool is_prod = op_type == "ReduceProd", is_mean = op_type == "ReduceMean";
  const double init = is_prod ? 1.0
                      : is_max ? -std::numeric_limits<double>::infinity()
                      : is_min ? std::numeric_limits<double>::infinity()
                               : 0.0;
  std::vector<double> acc(n_out, init);
  // Each input element maps to the output element with its reduced axes zeroed.
  const std::vector<int64_t> out_strides = Strides(kept_shape);
  const size_t rank = data.shape.size();
  std::vector<int64_t> counter(rank, 0);
  for (int64_t k = 0; k < data.size(); ++k) {
    int64_t dst = 0;
    for (size_t d = 0; d < rank; ++d) dst += reduced[d] ? 0 : counter[d] * out_strides[d];
    const double v = data.Get(k);
    double& a = acc[dst];
    a = is_prod ? a * v : is_max ? std::max(a, v) : is_min ? std::min(a, v) : a + v;
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++counter[d] < data.shape[d]) break;
      counter[d] = 0;
    }
  }
  const int64_t count = n_out == 0 ? 0 : data.size() / n_out;
  if (is_mean && count > 0) {
    for (double& a : acc) a /= static_cast<double>(count);
  }
  ConstTensor out = ConstTensor::Floats(DType::kF32, out_shape, std::move(acc));
  return CastConst(out, data.dtype);
}

}  // namespace tessera::graph::onnx_import
