// Per-op estimates: batch and layer normalization, pooling.
#include "tessera/costmodel/op_estimate_impl.h"

namespace tessera::costmodel::estimate {

using graph::OpKind;

// BatchNormalization: 2 per element (x*a + b); LayerNormalization: 5 per element.
// Backward (both): dX 4 per element, dscale 2 per element, dbias 1 per element, each when
// that input needs a gradient. Running statistics are constants: never parameters, no
// gradient. Kept when X or scale needs a gradient: X, and privately mean and inverse
// standard deviation (per channel for batch norm, per normalized row for layer norm); scale
// too when X needs a gradient (dX is scaled by it; a parameter is not charged).
NodeCost CostNormalization(const NodeView& v) {
  NodeCost cost;
  const double n = v.in_elements(0);
  const bool batch_norm = v.kind() == OpKind::kBatchNorm;
  cost.flops_forward = (batch_norm ? 2 : 5) * n;
  if (v.needs_grad(0)) cost.flops_backward += 4 * n;
  if (v.needs_grad(1)) cost.flops_backward += 2 * n;
  if (v.needs_grad(2)) cost.flops_backward += n;
  if (!v.needs_grad(0) && !v.needs_grad(1)) return cost;
  cost.keeps.push_back(v.input_id(0));
  if (v.needs_grad(0)) cost.keeps.push_back(v.input_id(1));
  double groups;
  if (batch_norm) {
    groups = static_cast<double>(Dim(v.in_shape(0), 1));
  } else {
    const graph::Shape& x = v.in_shape(0);
    const auto axis = graph::NormalizeAxis(v.attrs<graph::LayerNormAttrs>().axis,
                                           static_cast<int64_t>(x.size()));
    groups = Elements(graph::Shape(x.begin(), x.begin() + axis.value_or(0)));
  }
  cost.private_keep_bytes = BytesOf(2 * groups, v.in_dtype_size(0));
  return cost;
}

// MaxPool / AveragePool: prod(kernel) per output element. Backward: MaxPool routes each dY
// to its arg-max (1 per output element, keeps one i32 index per output element privately);
// AveragePool spreads each dY over its window (prod(kernel) per output element, keeps
// nothing). GlobalAveragePool: 1 per input element, backward 1 per input element.
NodeCost CostPool(const NodeView& v) {
  NodeCost cost;
  const double out = v.out_elements();
  if (v.kind() == OpKind::kGlobalAveragePool) {
    cost.flops_forward = v.in_elements(0);
    if (v.needs_grad(0)) cost.flops_backward = v.in_elements(0);
    return cost;
  }
  const auto kernel = v.attrs<graph::PoolAttrs>().kernel_shape;
  const double window = Elements(graph::Shape(kernel.begin(), kernel.end()));
  cost.flops_forward = window * out;
  if (!v.needs_grad(0)) return cost;
  if (v.kind() == OpKind::kMaxPool) {
    cost.flops_backward = out;
    cost.private_keep_bytes = BytesOf(out, 4);
  } else {
    cost.flops_backward = window * out;
  }
  return cost;
}

}  // namespace tessera::costmodel::estimate
