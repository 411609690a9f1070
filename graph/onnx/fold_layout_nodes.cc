// Constant folding of layout nodes: reads the node's parameters (op_params.h)
// and applies the folding kernels (fold_layout.cc) to its constant inputs.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/onnx/fold.h"
#include "tessera/graph/onnx/op_params.h"

namespace tessera::graph::onnx_import {
namespace {

absl::StatusOr<bool> Reshaped(NodeCtx& c, OpKind kind, OpAttrs attrs) {
  const ConstTensor& in = *c.Const(0);
  TS_ASSIGN_OR_RETURN(Shape shape, InferOne(c, kind, in.shape, in.dtype, std::move(attrs)));
  TS_RETURN_IF_ERROR(c.SetConst(0, WithShape(in, std::move(shape))));
  return true;
}

absl::StatusOr<bool> FoldSliceNode(NodeCtx& c) {
  const ConstTensor& in = *c.Const(0);
  TS_ASSIGN_OR_RETURN(SliceAttrs a, ReadSlice(c));
  TS_ASSIGN_OR_RETURN(Shape shape, InferOne(c, OpKind::kSlice, in.shape, in.dtype, a));
  std::vector<int64_t> starts, steps;
  SliceStartsSteps(in.shape, a, &starts, &steps);
  TS_RETURN_IF_ERROR(c.SetConst(0, FoldSlice(in, shape, starts, steps)));
  return true;
}

absl::StatusOr<bool> FoldSplitNode(NodeCtx& c) {
  const ConstTensor& in = *c.Const(0);
  TS_ASSIGN_OR_RETURN(SplitAttrs a, ReadSplit(c, in.shape));
  const auto axis = NormalizeAxis(a.axis, static_cast<int64_t>(in.shape.size()));
  if (!axis) return c.Error(absl::StrCat("axis ", a.axis, " is out of range"));
  if (static_cast<int>(a.sizes.size()) != c.num_outputs()) {
    return c.Error(absl::StrCat(a.sizes.size(), " split sizes for ", c.num_outputs(), " outputs"));
  }
  int64_t offset = 0;
  for (size_t i = 0; i < a.sizes.size(); ++i) {
    SliceAttrs s{.starts = {offset}, .ends = {offset + a.sizes[i]}, .axes = {*axis}};
    offset += a.sizes[i];
    if (a.sizes[i] < 0 || offset > in.shape[*axis]) {
      return c.Error(absl::StrCat("split sizes exceed dimension ", *axis, " (",
                                  in.shape[*axis], ")"));
    }
    TS_ASSIGN_OR_RETURN(Shape shape, InferOne(c, OpKind::kSlice, in.shape, in.dtype, s));
    std::vector<int64_t> starts, steps;
    SliceStartsSteps(in.shape, s, &starts, &steps);
    if (c.has_output(static_cast<int>(i))) {
      TS_RETURN_IF_ERROR(c.SetConst(static_cast<int>(i), FoldSlice(in, shape, starts, steps)));
    }
  }
  return true;
}

absl::StatusOr<bool> FoldReduceNode(NodeCtx& c) {
  const ConstTensor& in = *c.Const(0);
  bool noop = false;
  TS_ASSIGN_OR_RETURN(AxesAttrs a, ReadReduce(c, &noop));
  if (noop) {
    TS_RETURN_IF_ERROR(c.SetConst(0, in));
    return true;
  }
  const int64_t rank = static_cast<int64_t>(in.shape.size());
  std::vector<bool> reduced(rank, a.axes.empty());
  for (int64_t axis : a.axes) {
    const auto n = NormalizeAxis(axis, rank);
    if (!n) return c.Error(absl::StrCat("axis ", axis, " is out of range"));
    reduced[*n] = true;
  }
  TS_RETURN_IF_ERROR(c.SetConst(0, FoldReduce(in, reduced, a.keepdims, c.op_type())));
  return true;
}

absl::StatusOr<bool> FoldTransposeNode(NodeCtx& c) {
  const ConstTensor& in = *c.Const(0);
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> perm, c.attrs().Ints("perm", {}));
  const int64_t rank = static_cast<int64_t>(in.shape.size());
  if (perm.empty()) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  // Validates perm with the graph's shape inference.
  TS_RETURN_IF_ERROR(InferOne(c, OpKind::kTranspose, in.shape, in.dtype, PermAttrs{perm}).status());
  TS_RETURN_IF_ERROR(c.SetConst(0, FoldTranspose(in, perm)));
  return true;
}

}  // namespace

absl::StatusOr<bool> FoldLayoutNode(NodeCtx& c) {
  const std::string& op = c.op_type();
  if (c.num_inputs() < 1 || !c.has_input(0)) return c.Error("needs an input");
  const ConstTensor& in = *c.Const(0);
  if (op == "Identity") {
    TS_RETURN_IF_ERROR(c.SetConst(0, in));
    return true;
  }
  if (op == "Gather") {
    if (c.num_inputs() != 2) return c.Error("needs 2 inputs");
    TS_ASSIGN_OR_RETURN(int64_t axis, c.attrs().Int("axis", 0));
    auto r = FoldGather(in, *c.Const(1), axis);
    if (absl::IsResourceExhausted(r.status())) return false;
    if (!r.ok()) return c.Error(r.status().message());
    TS_RETURN_IF_ERROR(c.SetConst(0, std::move(*r)));
    return true;
  }
  if (op == "Concat") {
    TS_ASSIGN_OR_RETURN(int64_t axis, c.attrs().Int("axis", 0));
    std::vector<const ConstTensor*> parts;
    for (int i = 0; i < c.num_inputs(); ++i) {
      if (c.has_input(i)) parts.push_back(c.Const(i));
    }
    auto r = FoldConcat(parts, axis);
    if (absl::IsResourceExhausted(r.status())) return false;
    if (!r.ok()) return c.Error(r.status().message());
    TS_RETURN_IF_ERROR(c.SetConst(0, std::move(*r)));
    return true;
  }
  if (op == "Expand") {
    TS_ASSIGN_OR_RETURN(std::vector<int64_t> shape, c.ConstInts(1, "shape"));
    if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; }) ||
        !BroadcastShapes(in.shape, shape)) {
      return c.Error(absl::StrCat("cannot expand ", ShapeString(in.shape), " to ",
                                  ShapeString(shape)));
    }
    auto r = FoldExpand(in, shape);
    if (!r) return false;
    TS_RETURN_IF_ERROR(c.SetConst(0, std::move(*r)));
    return true;
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    TS_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReadAxes(c, 1));
    return Reshaped(c, op == "Squeeze" ? OpKind::kSqueeze : OpKind::kUnsqueeze,
                    AxesAttrs{.axes = std::move(axes)});
  }
  if (op == "Reshape") {
    TS_ASSIGN_OR_RETURN(ReshapeAttrs a, ReadReshape(c));
    return Reshaped(c, OpKind::kReshape, std::move(a));
  }
  if (op == "Flatten") {
    TS_ASSIGN_OR_RETURN(int64_t axis, c.attrs().Int("axis", 1));
    return Reshaped(c, OpKind::kFlatten, AxisAttrs{axis});
  }
  if (op == "Slice") return FoldSliceNode(c);
  if (op == "Split") return FoldSplitNode(c);
  if (op == "Transpose") return FoldTransposeNode(c);
  return FoldReduceNode(c);
}

}  // namespace tessera::graph::onnx_import
