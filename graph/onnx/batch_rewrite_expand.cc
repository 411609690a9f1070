// Re-deriving a static export for another batch: Expand, and constants with the tracing
// batch in their shape (torch.zeros(layers, b0, hidden) folded by the exporter) that meet
// the batch in an Expand or as LSTM initial states (batch_rewrite.h).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/onnx/batch_rewrite.h"
#include "tessera/graph/onnx/fold.h"
#include "tessera/graph/onnx/fold_index.h"
#include "tessera/graph/onnx/importer.h"

namespace tessera::graph::onnx_import {
namespace {

// Every slice of `t` along `axis` holds the same values (a zero state, a fill).
bool UniformAlong(const ConstTensor& t, int axis) {
  const std::vector<int64_t> strides = Strides(t.shape);
  const int64_t dim = t.shape[axis], stride = strides[axis];
  for (int64_t i = 0; i < t.size(); ++i) {
    const int64_t base = i - ((i / stride) % dim) * stride;
    if (t.is_float() ? t.floats[i] != t.floats[base] : t.ints[i] != t.ints[base]) return false;
  }
  return true;
}

// `t` with axis `axis` cut to its first element, then broadcast to `size` along it.
std::optional<ConstTensor> Resized(const ConstTensor& t, int axis, int64_t size) {
  Shape first = t.shape;
  first[axis] = 1;
  std::vector<int64_t> starts(t.shape.size(), 0), steps(t.shape.size(), 1);
  ConstTensor cut = FoldSlice(t, first, starts, steps);
  if (size == 1) return cut;
  Shape shape = t.shape;
  shape[axis] = size;
  return FoldExpand(cut, shape);
}

absl::Status NotUniform(const BatchRewriter& r, const NodeCtx& c, int input, int axis) {
  return c.Error(absl::StrCat(
      "input '", c.proto().input(input), "' is a constant ", ShapeString(c.Const(input)->shape),
      " whose axis ", axis, " has the export's batch ", r.old_batch(),
      " and values that differ along it, so it cannot be re-derived for batch ", r.new_batch(),
      "; ", BakedBatchAdvice(r.old_batch())));
}

// Expand of a tensor with a batch axis by a baked shape: the entry facing the batch axis is
// the new batch size. Another baked entry equal to b0 that expands a size-1 axis might be the
// batch too (x.expand(B, B, 8) traced at 4 is [4, 4, 8]): that is ambiguous, an error.
RuleResult ExpandBatched(BatchRewriter& r, NodeCtx& c, BatchAxis b, const IntsBoth& t) {
  const Shape& now = c.shape(0);
  const Shape& ref = r.Reference(c.proto().input(0))->shape;
  const int offset = static_cast<int>(t.now.size()) - static_cast<int>(now.size());
  const int p = b.axis + offset;
  const int64_t b0 = r.old_batch();
  std::vector<int64_t> shape = t.now;
  const bool baked = p >= 0 && t.now[p] == t.reference[p] && t.now[p] == ref[b.axis] &&
                     t.now[p] != 1 && now[b.axis] != ref[b.axis];
  if (baked) shape[p] = now[b.axis];
  for (int q = 0; q < static_cast<int>(t.now.size()); ++q) {
    const int64_t x_dim = q - offset >= 0 ? now[q - offset] : 1;
    if (q != p && b0 > 1 && t.now[q] == t.reference[q] && t.now[q] == b0 && x_dim == 1) {
      return c.Error(absl::StrCat(
          "the shape ", IntsString(t.now), " is a constant from the export at batch ", b0,
          ", and its entry ", q, " (", b0, ") expands a size-1 axis of '", c.proto().input(0),
          "' ", ShapeString(ref), ": it may be the batch or a dimension that equals it, so "
          "Tessera cannot re-derive the shape for batch ", r.new_batch(), "; ",
          BakedBatchAdvice(b0)));
    }
  }
  if (!baked) return std::nullopt;
  ConstTensor value = CastConst(ConstTensor::Vector(std::move(shape)), c.Const(1)->dtype);
  TS_ASSIGN_OR_RETURN(std::string name, DefineRewritten(r, c, 1, std::move(value)));
  return WithInput(c.proto(), 1, name);
}

// Expand of a constant by a shape that follows the batch: a constant axis of the old extent
// that is uniform along it is cut to size 1, which expands to the same values at any size.
RuleResult ExpandConstant(BatchRewriter& r, NodeCtx& c, const IntsBoth& t) {
  ConstTensor x = *c.Const(0);
  const int offset = static_cast<int>(t.now.size()) - static_cast<int>(x.shape.size());
  bool cut = false;
  for (int q = std::max(offset, 0); q < static_cast<int>(t.now.size()); ++q) {
    const int axis = q - offset;
    const int64_t dim = x.shape[axis];
    if (t.now[q] == t.reference[q] || dim != t.reference[q] || dim == 1 || dim == t.now[q]) {
      continue;
    }
    if (!UniformAlong(x, axis)) return NotUniform(r, c, 0, axis);
    x = *Resized(x, axis, 1);
    cut = true;
  }
  if (!cut) return std::nullopt;
  TS_ASSIGN_OR_RETURN(std::string name, DefineRewritten(r, c, 0, std::move(x)));
  return WithInput(c.proto(), 0, name);
}

}  // namespace

RuleResult RewriteExpand(BatchRewriter& r, NodeCtx& c) {
  if (c.num_inputs() != 2 || !c.has_input(0)) return std::nullopt;
  const std::optional<IntsBoth> t = ConstIntsBoth(r, c, 1);
  if (!t || t->now.size() != t->reference.size() || t->now.size() > kMaxRank) return std::nullopt;
  const BatchAxis b = r.Find(c.proto().input(0));
  if (b.axis >= 0 && r.Reference(c.proto().input(0)) != nullptr) return ExpandBatched(r, c, b, *t);
  if (b.axis < 0 && c.Const(0) != nullptr) return ExpandConstant(r, c, *t);
  return std::nullopt;
}

// LSTM initial_h / initial_c that are constants with the export's batch where X has the
// batch (axis 1 of [dirs, batch, hidden], or axis 0 with layout 1): a uniform one (zeros)
// is the same state at any batch, so it is resized to B.
RuleResult RewriteLstmStates(BatchRewriter& r, NodeCtx& c) {
  if (!c.has_input(0)) return std::nullopt;
  TS_ASSIGN_OR_RETURN(int64_t layout, c.attrs().Int("layout", 0));
  const int x_axis = layout == 1 ? 0 : 1, state_axis = layout == 1 ? 0 : 1;
  const BatchAxis b = r.Find(c.proto().input(0));
  const ValueRecord* x_ref = r.Reference(c.proto().input(0));
  if (b.axis != x_axis || x_ref == nullptr) return std::nullopt;
  const int64_t old_dim = x_ref->shape[x_axis], new_dim = c.shape(0)[x_axis];
  std::optional<onnx::NodeProto> node;
  for (int i : {5, 6}) {
    const ConstTensor* state = c.Const(i);
    if (state == nullptr || state->shape.size() != 3 || state->shape[state_axis] != old_dim) {
      continue;
    }
    if (!UniformAlong(*state, state_axis)) return NotUniform(r, c, i, state_axis);
    std::optional<ConstTensor> resized = Resized(*state, state_axis, new_dim);
    if (!resized) {
      return c.Error(absl::StrCat("the initial state '", c.proto().input(i), "' at batch ",
                                  new_dim, " is above the folding limit of ", kMaxFoldElements,
                                  " elements; ", BakedBatchAdvice(r.old_batch())));
    }
    TS_ASSIGN_OR_RETURN(std::string name, DefineRewritten(r, c, i, std::move(*resized)));
    node = WithInput(node ? *node : c.proto(), i, name);
  }
  return node;
}

}  // namespace tessera::graph::onnx_import
