// Per-op estimates: reductions and softmax.
#include "tessera/costmodel/op_estimate_impl.h"

namespace tessera::costmodel::estimate {

// ReduceMean/Sum/Max: 1 per input element. Backward broadcasts dY back over the input:
// 1 per input element (Mean/Sum, nothing kept); ReduceMax compares each input with the
// maximum and selects, 2 per input element, keeping its input and output.
NodeCost CostReduce(const NodeView& v) {
  NodeCost cost;
  const double in = v.in_elements(0);
  cost.flops_forward = in;
  if (!v.needs_grad(0)) return cost;
  if (v.kind() == graph::OpKind::kReduceMax) {
    cost.flops_backward = 2 * in;
    cost.keeps = {v.input_id(0), v.output_id(0)};
  } else {
    cost.flops_backward = in;
  }
  return cost;
}

// Softmax / LogSoftmax: 5 per element (max, subtract, exp, sum, divide or log).
// Backward dX = Y * (dY - sum(dY * Y)) (or its log form): 4 per element; keeps Y.
NodeCost CostSoftmax(const NodeView& v) {
  NodeCost cost;
  const double out = v.out_elements();
  cost.flops_forward = 5 * out;
  if (!v.needs_grad(0)) return cost;
  cost.flops_backward = 4 * out;
  cost.keeps.push_back(v.output_id(0));
  return cost;
}

}  // namespace tessera::costmodel::estimate
