// Shape inference: the reshape family (no arithmetic, only layout).
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/graph/infer/infer_impl.h"

namespace tessera::graph::infer {

Result InferReshape(const InferContext& c) {
  const auto& target = c.attrs<ReshapeAttrs>().shape;
  const Shape& in = c.shape(0);
  Shape out;
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0) {
      if (i >= in.size()) return c.Error(absl::StrCat("target dim ", i, " is 0 (copy) but the input has rank ", in.size()));
      d = in[i];
    }
    if (d == -1) {
      if (infer_at >= 0) return c.Error("the target shape has more than one -1");
      infer_at = static_cast<int>(i);
      out.push_back(1);
      continue;
    }
    if (d < 0) return c.Error(absl::StrCat("target dim ", i, " is ", d));
    out.push_back(d);
    known = NumElements({known, d});
  }
  const int64_t total = NumElements(in);
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) {
      return c.Error(absl::StrCat("cannot infer the -1 in target ", ShapeString(target), " from ",
                                  total, " elements"));
    }
    out[infer_at] = total / known;
  }
  if (NumElements(out) != total) {
    return c.Error(absl::StrCat("target ", ShapeString(target), " has ", NumElements(out),
                                " elements; the input has ", total));
  }
  return One(std::move(out), c.dtype(0));
}

Result InferTranspose(const InferContext& c) {
  const int64_t rank = c.rank(0);
  std::vector<int64_t> perm = c.attrs<PermAttrs>().perm;
  if (perm.empty()) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank) {
    return c.Error(absl::StrCat("perm [", absl::StrJoin(perm, ","), "] must have ", rank, " entries"));
  }
  std::vector<bool> seen(rank, false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) {
      return c.Error(absl::StrCat("perm [", absl::StrJoin(perm, ","), "] is not a permutation of 0..", rank - 1));
    }
    seen[p] = true;
    out.push_back(c.shape(0)[p]);
  }
  return One(std::move(out), c.dtype(0));
}

Result InferFlatten(const InferContext& c) {
  const int64_t rank = c.rank(0);
  int64_t axis = c.attrs<AxisAttrs>().axis;
  if (axis < -rank || axis > rank) return c.Error(absl::StrCat("axis ", axis, " is out of range"));
  if (axis < 0) axis += rank;
  const Shape& in = c.shape(0);
  const Shape outer(in.begin(), in.begin() + axis);
  const Shape inner(in.begin() + axis, in.end());
  return One({NumElements(outer), NumElements(inner)}, c.dtype(0));
}

Result InferConcat(const InferContext& c) {
  const auto axis = NormalizeAxis(c.attrs<AxisAttrs>().axis, c.rank(0));
  if (!axis) return c.Error("axis is out of range");
  Shape out = c.shape(0);
  for (int i = 1; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) return c.Error(absl::StrCat("input ", i, " is absent; Concat needs all"));
    const Shape& s = c.shape(i);
    if (s.size() != out.size() || c.dtype(i) != c.dtype(0)) {
      return c.Error("all inputs must have one rank and dtype");
    }
    for (size_t d = 0; d < s.size(); ++d) {
      if (static_cast<int64_t>(d) == *axis) continue;
      if (s[d] != out[d]) {
        return c.Error(absl::StrCat("inputs differ in dimension ", d, " (", out[d], " vs ", s[d],
                                    "); only axis ", *axis, " may differ"));
      }
    }
    if (__builtin_add_overflow(out[*axis], s[*axis], &out[*axis])) {
      return c.Error(absl::StrCat("the concatenated axis ", *axis, " overflows 64 bits"));
    }
  }
  return One(std::move(out), c.dtype(0));
}

Result InferSplit(const InferContext& c) {
  const auto& a = c.attrs<SplitAttrs>();
  const auto axis = NormalizeAxis(a.axis, c.rank(0));
  if (!axis) return c.Error("axis is out of range");
  if (a.sizes.size() != c.node().outputs.size()) {
    return c.Error(absl::StrCat("has ", a.sizes.size(), " split sizes but ",
                                c.node().outputs.size(), " outputs"));
  }
  int64_t sum = 0;
  std::vector<TensorType> outs;
  for (int64_t s : a.sizes) {
    if (s < 0) return c.Error("split sizes must be >= 0");
    if (__builtin_add_overflow(sum, s, &sum)) return c.Error("split sizes overflow 64 bits");
    Shape shape = c.shape(0);
    shape[*axis] = s;
    outs.push_back({std::move(shape), c.dtype(0)});
  }
  if (sum != c.shape(0)[*axis]) {
    return c.Error(absl::StrCat("split sizes add up to ", sum, ", not to dimension ", *axis,
                                " (", c.shape(0)[*axis], ")"));
  }
  return outs;
}

Result InferSlice(const InferContext& c) {
  const auto& a = c.attrs<SliceAttrs>();
  const int64_t rank = c.rank(0);
  const size_t n = a.starts.size();
  if (a.ends.size() != n || (!a.axes.empty() && a.axes.size() != n) ||
      (!a.steps.empty() && a.steps.size() != n)) {
    return c.Error("starts, ends, axes and steps must have one length");
  }
  Shape out = c.shape(0);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    const auto axis = NormalizeAxis(a.axes.empty() ? static_cast<int64_t>(i) : a.axes[i], rank);
    if (!axis || seen[*axis]) return c.Error("slice axes are out of range or repeated");
    seen[*axis] = true;
    const int64_t dim = c.shape(0)[*axis];
    const int64_t step = a.steps.empty() ? 1 : a.steps[i];
    if (step == 0) return c.Error("slice step must not be 0");
    // ONNX: negative starts/ends count from the end; then clamp.
    auto adjust = [dim](int64_t v) { return v < 0 ? (v < -dim ? -1 : v + dim) : v; };
    int64_t start = adjust(a.starts[i]);
    int64_t end = adjust(a.ends[i]);
    if (dim == 0) {
      out[*axis] = 0;  // (and std::clamp below needs dim - 1 >= 0)
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      out[*axis] = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      const int64_t stride =
          step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step;
      out[*axis] = start > end ? (start - end - 1) / stride + 1 : 0;
    }
  }
  return One(std::move(out), c.dtype(0));
}

Result InferSqueeze(const InferContext& c) {
  const auto& axes = c.attrs<AxesAttrs>().axes;
  const int64_t rank = c.rank(0);
  std::vector<bool> drop(rank, false);
  for (int64_t i = 0; i < rank && axes.empty(); ++i) drop[i] = c.shape(0)[i] == 1;
  for (int64_t axis : axes) {
    const auto n = NormalizeAxis(axis, rank);
    if (!n) return c.Error(absl::StrCat("axis ", axis, " is out of range"));
    if (c.shape(0)[*n] != 1) {
      return c.Error(absl::StrCat("cannot squeeze axis ", *n, " of size ", c.shape(0)[*n]));
    }
    drop[*n] = true;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!drop[i]) out.push_back(c.shape(0)[i]);
  }
  return One(std::move(out), c.dtype(0));
}

Result InferUnsqueeze(const InferContext& c) {
  const auto& axes = c.attrs<AxesAttrs>().axes;
  const int64_t rank = c.rank(0) + static_cast<int64_t>(axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : axes) {
    const auto n = NormalizeAxis(axis, rank);
    if (!n || inserted[*n]) return c.Error(absl::StrCat("axis ", axis, " is out of range or repeated"));
    inserted[*n] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? 1 : c.shape(0)[next++]);
  return One(std::move(out), c.dtype(0));
}

Result InferGather(const InferContext& c) {
  const auto axis = NormalizeAxis(c.attrs<AxisAttrs>().axis, c.rank(0));
  if (!axis) return c.Error("axis is out of range");
  if (c.dtype(1) != DType::kI32 && c.dtype(1) != DType::kI64) {
    return c.Error("indices must be i32 or i64");
  }
  const Shape& data = c.shape(0);
  Shape out(data.begin(), data.begin() + *axis);
  out.insert(out.end(), c.shape(1).begin(), c.shape(1).end());
  out.insert(out.end(), data.begin() + *axis + 1, data.end());
  return One(std::move(out), c.dtype(0));
}

Result InferExpand(const InferContext& c) {
  auto out = BroadcastShapes(c.shape(0), c.attrs<ExpandAttrs>().shape);
  if (!out) {
    return c.Error(absl::StrCat("cannot expand to ", ShapeString(c.attrs<ExpandAttrs>().shape)));
  }
  return One(std::move(*out), c.dtype(0));
}

Result InferPad(const InferContext& c) {
  const auto& pads = c.attrs<PadAttrs>().pads;
  const int64_t rank = c.rank(0);
  if (static_cast<int64_t>(pads.size()) != 2 * rank) {
    return c.Error(absl::StrCat("pads must have ", 2 * rank, " values"));
  }
  Shape out = c.shape(0);
  for (int64_t i = 0; i < rank; ++i) {
    if (__builtin_add_overflow(out[i], pads[i], &out[i]) ||
        __builtin_add_overflow(out[i], pads[rank + i], &out[i])) {
      return c.Error(absl::StrCat("padding axis ", i, " overflows 64 bits"));
    }
    if (out[i] < 0) return c.Error(absl::StrCat("padding makes axis ", i, " negative"));
  }
  return One(std::move(out), c.dtype(0));
}

}  // namespace tessera::graph::infer
