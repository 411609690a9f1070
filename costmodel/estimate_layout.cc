// Per-op estimates: the layout family (Identity, Reshape, Transpose, Flatten, Concat,
// Split, Slice, Squeeze, Unsqueeze, Gather, Expand, Pad). They move data and do no
// arithmetic: 0 forward FLOPs.
#include "tessera/costmodel/op_estimate_impl.h"

namespace tessera::costmodel::estimate {

// Backward is the inverse re-layout (0 FLOPs), except where gradients are summed:
// Expand reduces dY over the broadcast axes (1 per output element) and Gather
// scatter-adds dY into d(data) (1 per output element, keeps the indices).
NodeCost CostLayout(const NodeView& v) {
  NodeCost cost;
  if (!v.needs_grad(0)) return cost;
  if (v.kind() == graph::OpKind::kExpand) {
    cost.flops_backward = v.out_elements();
  } else if (v.kind() == graph::OpKind::kGather) {
    cost.flops_backward = v.out_elements();
    cost.keeps.push_back(v.input_id(1));
  }
  return cost;
}

}  // namespace tessera::costmodel::estimate
