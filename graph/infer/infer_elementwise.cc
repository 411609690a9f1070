// Shape inference: element-wise ops, reductions, softmax.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/graph/infer/infer_impl.h"

namespace tessera::graph::infer {

Result InferUnary(const InferContext& c) { return One(c.shape(0), c.dtype(0)); }

Result InferCast(const InferContext& c) { return One(c.shape(0), c.attrs<CastAttrs>().to); }

Result InferBinary(const InferContext& c) {
  auto out = BroadcastShapes(c.shape(0), c.shape(1));
  if (!out) return c.Error("the two shapes do not broadcast");
  if (c.dtype(0) != c.dtype(1)) {
    return c.Error(absl::StrCat("both inputs must have one dtype (got ", DTypeName(c.dtype(0)),
                                " and ", DTypeName(c.dtype(1)), ")"));
  }
  return One(std::move(*out), c.dtype(0));
}

Result InferWhere(const InferContext& c) {
  if (c.dtype(0) != DType::kBool) return c.Error("cond (input 0) must be bool");
  if (c.dtype(1) != c.dtype(2)) return c.Error("X and Y must have one dtype");
  auto xy = BroadcastShapes(c.shape(1), c.shape(2));
  auto out = xy ? BroadcastShapes(c.shape(0), *xy) : std::nullopt;
  if (!out) return c.Error("cond, X and Y do not broadcast");
  return One(std::move(*out), c.dtype(1));
}

Result InferReduce(const InferContext& c) {
  const auto& a = c.attrs<AxesAttrs>();
  const int64_t rank = c.rank(0);
  std::vector<bool> reduced(rank, a.axes.empty());
  for (int64_t axis : a.axes) {
    const auto n = NormalizeAxis(axis, rank);
    if (!n) return c.Error(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
    reduced[*n] = true;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i]) {
      out.push_back(c.shape(0)[i]);
    } else if (a.keepdims) {
      out.push_back(1);
    }
  }
  return One(std::move(out), c.dtype(0));
}

Result InferSoftmax(const InferContext& c) {
  const int64_t axis = c.attrs<AxisAttrs>().axis;
  if (!NormalizeAxis(axis, c.rank(0))) {
    return c.Error(absl::StrCat("axis ", axis, " is out of range for rank ", c.rank(0)));
  }
  if (!IsFloating(c.dtype(0))) return c.Error("input must be floating point");
  return One(c.shape(0), c.dtype(0));
}

}  // namespace tessera::graph::infer
