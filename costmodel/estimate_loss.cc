// Per-op estimates: losses.
#include "tessera/costmodel/op_estimate_impl.h"

namespace tessera::costmodel::estimate {

// SoftmaxCrossEntropy(logits[N,C,...], labels[N,...]): 5 per logit element (softmax) plus
// 1 per label (pick and accumulate -log p). Backward dlogits = (P - onehot) * scale:
// 2 per logit element when the logits need a gradient; keeps the labels and, privately,
// the probabilities P (one value per logit, logits' dtype).
NodeCost CostSoftmaxCrossEntropy(const NodeView& v) {
  NodeCost cost;
  const double logits = v.in_elements(0);
  cost.flops_forward = 5 * logits + v.in_elements(1);
  if (!v.needs_grad(0)) return cost;
  cost.flops_backward = 2 * logits;
  cost.keeps.push_back(v.input_id(1));
  cost.private_keep_bytes = BytesOf(logits, v.in_dtype_size(0));
  return cost;
}

// CtcLoss(log_probs[T,N,C], targets[N,S], input_lengths[N], target_lengths[N]).
// The extended label sequence has L = 2S+1 states; the alpha recursion visits T*N*L lattice
// cells at 4 FLOPs each (log-sum-exp of up to 3 predecessors plus the emission):
//   forward  = 4 * T*N*(2S+1)
//   backward = 6 * T*N*(2S+1)   beta recursion (4) and alpha+beta combination (2) per cell
//            + 2 * T*N*C        gradient w.r.t. every log-probability (softmax-form)
// when log_probs needs a gradient. Keeps all four inputs and, privately, alpha
// (T*N*(2S+1) values of log_probs' dtype).
NodeCost CostCtcLoss(const NodeView& v) {
  NodeCost cost;
  const graph::Shape& lp = v.in_shape(0);
  const double t = static_cast<double>(Dim(lp, 0));
  const double n = static_cast<double>(Dim(lp, 1));
  const double s = static_cast<double>(Dim(v.in_shape(1), 1));
  const double cells = v.in_elements(0) > 0 ? t * n * (2 * s + 1) : 0;
  cost.flops_forward = 4 * cells;
  if (!v.needs_grad(0)) return cost;
  cost.flops_backward = 6 * cells + 2 * v.in_elements(0);
  for (int i = 0; i < 4; ++i) cost.keeps.push_back(v.input_id(i));
  cost.private_keep_bytes = BytesOf(cells, v.in_dtype_size(0));
  return cost;
}

}  // namespace tessera::costmodel::estimate
