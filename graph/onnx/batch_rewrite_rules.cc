// Re-deriving a static export for another batch: Reshape and Slice (batch_rewrite.h).
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/onnx/batch_rewrite.h"
#include "tessera/graph/onnx/importer.h"

namespace tessera::graph::onnx_import {

// The batch occupies, in the row-major order of `in`, the index range with stride
// I = inner * prod(in[axis+1:]) and extent b0 (span I * b0). A reshape keeps that order, so
// in `out` the batch is inside the one axis j whose stride S_j divides I and whose extent
// S_j * out[j] is a multiple of the span: out[j] = outer * b0 * (I / S_j). For b0 > 1 at most
// one axis qualifies; for b0 = 1 several may (a size-1 batch has no position), and then the
// batch cannot be attributed.
std::optional<BatchAxis> ReshapedBatch(const Shape& in, BatchAxis batch, const Shape& out,
                                       int64_t old_batch) {
  if (batch.axis < 0 || batch.inner <= 0 || batch.axis >= static_cast<int>(in.size()) ||
      NumElements(in) != NumElements(out) || NumElements(in) <= 0 ||
      in[batch.axis] % (old_batch * batch.inner) != 0) {
    return std::nullopt;
  }
  int64_t stride = batch.inner;
  for (size_t d = batch.axis + 1; d < in.size(); ++d) stride *= in[d];
  const int64_t span = stride * old_batch;
  std::optional<BatchAxis> found;
  int64_t out_stride = 1;
  for (int j = static_cast<int>(out.size()) - 1; j >= 0; --j) {
    if (stride % out_stride == 0 && (out_stride * out[j]) % span == 0) {
      if (found) return std::nullopt;  // two candidates: ambiguous
      found = BatchAxis{.axis = j, .inner = stride / out_stride};
    }
    out_stride *= out[j];
  }
  return found;
}

// A target baked at b0 (every entry the same in both runs) on an input with a batch axis:
// the entry of the axis that holds the batch is scaled by B / b0.
RuleResult RewriteReshape(BatchRewriter& r, NodeCtx& c) {
  if (c.num_inputs() < 2 || !c.has_input(0) || c.num_outputs() < 1) return std::nullopt;
  const std::string& x = c.proto().input(0);
  const BatchAxis b = r.Find(x);
  const std::optional<IntsBoth> target = ConstIntsBoth(r, c, 1);
  const ValueRecord* x_ref = r.Reference(x);
  const ValueRecord* out_ref = r.Reference(c.proto().output(0));
  if (b.axis < 0 || !target || x_ref == nullptr || out_ref == nullptr ||
      target->reference != target->now || target->now.size() != out_ref->shape.size()) {
    return std::nullopt;  // no batch, or a target the model computes from shapes: it follows
  }
  const int64_t b0 = r.old_batch();
  const std::optional<BatchAxis> moved = ReshapedBatch(x_ref->shape, b, out_ref->shape, b0);
  if (!moved) {
    return c.Error(absl::StrCat(
        "the target shape ", IntsString(target->now), " is a constant from the export at batch ", b0,
        ", and Tessera cannot tell which of its entries holds the batch of input '", x, "' ",
        ShapeString(x_ref->shape), " (batch on axis ", b.axis,
        b.inner == 0 ? ", merged with other dimensions in a way Tessera did not follow"
        : b0 == 1 ? "; a tracing batch of 1 leaves its position open"
                  : "; the target splits it over several dimensions",
        "), so it cannot be re-derived for batch ", r.new_batch(), "; ", BakedBatchAdvice(b0)));
  }
  std::vector<int64_t> shape = target->now;
  const int64_t entry = shape[moved->axis];
  if (entry <= 0) return std::nullopt;  // 0 copies the input's axis, -1 is inferred
  int64_t scaled = 0;
  if (__builtin_mul_overflow(entry / b0, r.new_batch(), &scaled)) {
    return c.Error(absl::StrCat("batch ", r.new_batch(), " makes the target overflow"));
  }
  shape[moved->axis] = scaled;
  ConstTensor value = CastConst(ConstTensor::Vector(std::move(shape)), c.Const(1)->dtype);
  TS_ASSIGN_OR_RETURN(std::string name, DefineRewritten(r, c, 1, std::move(value)));
  return WithInput(c.proto(), 1, name);
}

// A Slice with constant bounds along the batch axis: a slice that took the whole axis at b0
// takes the whole axis at B; any other slice of the batch axis cannot be attributed.
RuleResult RewriteSlice(BatchRewriter& r, NodeCtx& c) {
  if (!c.has_input(0)) return std::nullopt;
  const std::string& x = c.proto().input(0);
  const BatchAxis b = r.Find(x);
  const ValueRecord* x_ref = r.Reference(x);
  const auto starts = ConstIntsBoth(r, c, 1), ends = ConstIntsBoth(r, c, 2);
  const auto axes = c.has_input(3) ? ConstIntsBoth(r, c, 3) : std::nullopt;
  const auto steps = c.has_input(4) ? ConstIntsBoth(r, c, 4) : std::nullopt;
  if (b.axis < 0 || x_ref == nullptr || !starts || !ends || (c.has_input(3) && !axes) ||
      (c.has_input(4) && !steps) || starts->reference != starts->now ||
      ends->reference != ends->now || starts->now.size() != ends->now.size()) {
    return std::nullopt;
  }
  const int64_t rank = static_cast<int64_t>(x_ref->shape.size());
  int k = -1;
  for (size_t i = 0; i < starts->now.size(); ++i) {
    const int64_t axis = axes ? (i < axes->now.size() ? axes->now[i] : -rank - 1)
                              : static_cast<int64_t>(i);
    if (NormalizeAxis(axis, rank) == b.axis) k = static_cast<int>(i);
  }
  if (k < 0) return std::nullopt;  // the batch axis is not sliced
  const int64_t dim1 = x_ref->shape[b.axis], dim2 = c.shape(0)[b.axis];
  const int64_t step = steps && k < static_cast<int>(steps->now.size()) ? steps->now[k] : 1;
  auto clamp = [](int64_t v, int64_t dim) { return std::clamp<int64_t>(v < 0 ? v + dim : v, 0, dim); };
  const bool whole = step == 1 && clamp(starts->now[k], dim1) == 0 && clamp(ends->now[k], dim1) == dim1;
  if (!whole) {
    return c.Error(absl::StrCat(
        "takes elements [", starts->now[k], ":", ends->now[k], ":", step, "] of axis ", b.axis,
        " of '", x, "' ", ShapeString(x_ref->shape), ", its batch axis at the export's batch ",
        r.old_batch(), "; Tessera cannot tell whether these constant bounds scale with the batch "
        "for batch ", r.new_batch(), "; ", BakedBatchAdvice(r.old_batch())));
  }
  if (clamp(starts->now[k], dim2) == 0 && clamp(ends->now[k], dim2) == dim2) return std::nullopt;
  std::vector<int64_t> new_starts = starts->now, new_ends = ends->now;
  new_starts[k] = 0;
  new_ends[k] = std::numeric_limits<int64_t>::max();
  TS_ASSIGN_OR_RETURN(std::string s, DefineRewritten(r, c, 1, CastConst(ConstTensor::Vector(new_starts), c.Const(1)->dtype)));
  TS_ASSIGN_OR_RETURN(std::string e, DefineRewritten(r, c, 2, CastConst(ConstTensor::Vector(new_ends), c.Const(2)->dtype)));
  return WithInput(WithInput(c.proto(), 1, s), 2, e);
}

}  // namespace tessera::graph::onnx_import
