#include "tessera/graph/onnx/op_params.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/shape_inference.h"

namespace tessera::graph::onnx_import {

absl::StatusOr<std::vector<int64_t>> ReadAxes(const NodeCtx& c, int input) {
  const std::string& op = c.op_type();
  const bool input_form =
      ((op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum") && c.opset() >= 13) ||
      c.opset() >= 18;
  if (input_form && !c.attrs().Has("axes")) {
    if (!c.has_input(input)) return std::vector<int64_t>{};
    return c.ConstInts(input, "axes");
  }
  return c.attrs().Ints("axes", {});
}

absl::StatusOr<ReshapeAttrs> ReadReshape(const NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> target, c.ConstInts(1, "shape"));
  TS_ASSIGN_OR_RETURN(int64_t allowzero, c.attrs().Int("allowzero", 0));
  if (allowzero != 0 && std::find(target.begin(), target.end(), 0) != target.end()) {
    return c.Error("allowzero=1 with a 0 in the target shape (an empty tensor) is not supported");
  }
  if (static_cast<int64_t>(target.size()) > kMaxRank) {
    return c.Error(absl::StrCat("target shape has rank ", target.size(), ", above ", kMaxRank));
  }
  return ReshapeAttrs{.shape = std::move(target)};
}

absl::StatusOr<SliceAttrs> ReadSlice(const NodeCtx& c) {
  SliceAttrs a;
  TS_ASSIGN_OR_RETURN(a.starts, c.ConstInts(1, "starts"));
  TS_ASSIGN_OR_RETURN(a.ends, c.ConstInts(2, "ends"));
  if (c.has_input(3)) {
    TS_ASSIGN_OR_RETURN(a.axes, c.ConstInts(3, "axes"));
  }
  if (c.has_input(4)) {
    TS_ASSIGN_OR_RETURN(a.steps, c.ConstInts(4, "steps"));
  }
  return a;
}

absl::StatusOr<SplitAttrs> ReadSplit(const NodeCtx& c, const Shape& dims) {
  SplitAttrs a;
  TS_ASSIGN_OR_RETURN(a.axis, c.attrs().Int("axis", 0));
  if (c.opset() >= 13 && c.has_input(1)) {
    TS_ASSIGN_OR_RETURN(a.sizes, c.ConstInts(1, "split"));
  } else {
    TS_ASSIGN_OR_RETURN(a.sizes, c.attrs().Ints("split", {}));
  }
  if (!a.sizes.empty()) return a;
  const auto axis = NormalizeAxis(a.axis, static_cast<int64_t>(dims.size()));
  if (!axis) return c.Error(absl::StrCat("axis ", a.axis, " is out of range"));
  const int64_t parts = c.num_outputs();
  if (parts < 1) return c.Error("has no outputs");
  const int64_t dim = dims[*axis];
  const int64_t chunk = (dim + parts - 1) / parts;  // ONNX: the last chunk may be smaller
  for (int64_t i = 0; i < parts; ++i) {
    a.sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  return a;
}

absl::StatusOr<AxesAttrs> ReadReduce(const NodeCtx& c, bool* noop) {
  AxesAttrs a;
  TS_ASSIGN_OR_RETURN(a.axes, ReadAxes(c, 1));
  TS_ASSIGN_OR_RETURN(int64_t keepdims, c.attrs().Int("keepdims", 1));
  TS_ASSIGN_OR_RETURN(int64_t noop_empty, c.attrs().Int("noop_with_empty_axes", 0));
  a.keepdims = keepdims != 0;
  *noop = noop_empty != 0 && a.axes.empty();
  return a;
}

absl::StatusOr<Shape> InferOne(const NodeCtx& c, OpKind kind, const Shape& in, DType dtype,
                               OpAttrs attrs) {
  Graph scratch;
  TS_ASSIGN_OR_RETURN(TensorId x, scratch.AddTensor({.name = c.has_input(0) ? c.proto().input(0)
                                                                             : "input",
                                                     .shape = in,
                                                     .dtype = dtype,
                                                     .role = TensorRole::kInput}));
  TS_ASSIGN_OR_RETURN(TensorId y, scratch.AddTensor({.name = "\x01out"}));
  Node node{.name = c.name(), .kind = kind, .inputs = {x}, .outputs = {y},
            .attrs = std::move(attrs)};
  TS_ASSIGN_OR_RETURN(std::vector<TensorType> types, InferOutputTypes(scratch, node));
  return std::move(types[0].shape);
}

void SliceStartsSteps(const Shape& in, const SliceAttrs& a, std::vector<int64_t>* starts,
                      std::vector<int64_t>* steps) {
  const int64_t rank = static_cast<int64_t>(in.size());
  starts->assign(rank, 0);
  steps->assign(rank, 1);
  for (size_t i = 0; i < a.starts.size(); ++i) {
    const auto axis = NormalizeAxis(a.axes.empty() ? static_cast<int64_t>(i) : a.axes[i], rank);
    if (!axis) continue;  // InferOne has rejected it already
    const int64_t dim = in[*axis];
    const int64_t step = a.steps.empty() ? 1 : a.steps[i];
    int64_t start = a.starts[i];
    if (start < 0) start = start < -dim ? -1 : start + dim;
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
    (*starts)[*axis] = start;
    (*steps)[*axis] = step;
  }
}

}  // namespace tessera::graph::onnx_import
