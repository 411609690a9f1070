// Per-op estimates: convolutions, matrix products, embedding look-ups.
//
// Each operand's gradient costs one product as large as the forward one
// (dX = dY * W^T, dW = X^T * dY), computed only when that operand needs a
// gradient; the backward of each product keeps the other operand.
#include "tessera/costmodel/op_estimate_impl.h"

namespace tessera::costmodel::estimate {
namespace {

// Backward of Y = A (x) B [+ C]: dA and dB cost `product` each, dC one per output.
NodeCost ProductCost(const NodeView& v, double product, int a, int b, int c) {
  NodeCost cost;
  const double out = v.out_elements();
  const bool has_c = v.has_input(c);
  cost.flops_forward = product + (has_c ? out : 0);
  if (v.needs_grad(a)) {
    cost.flops_backward += product;
    cost.keeps.push_back(v.input_id(b));
  }
  if (v.needs_grad(b)) {
    cost.flops_backward += product;
    cost.keeps.push_back(v.input_id(a));
  }
  if (has_c && v.needs_grad(c)) cost.flops_backward += out;
  return cost;
}

}  // namespace

// Conv(X, W[Cout, Cin/groups, k...], B?): 2 * N*Cout*prod(out_spatial) * (Cin/groups)*prod(k),
// i.e. 2 * numel(Y) * numel(W)/Cout, plus numel(Y) for the bias.
NodeCost CostConv(const NodeView& v) {
  const graph::Shape& w = v.in_shape(1);
  const int64_t cout = Dim(w, 0);
  const double per_output = cout > 0 ? Elements(w) / static_cast<double>(cout) : 0;
  return ProductCost(v, 2 * v.out_elements() * per_output, 0, 1, 2);
}

// Gemm(A, B, C?): 2*M*N*K, plus M*N when C is present.
NodeCost CostGemm(const NodeView& v) {
  const bool trans_a = v.attrs<graph::GemmAttrs>().trans_a;
  const int64_t k = trans_a ? Dim(v.in_shape(0), 0) : Dim(v.in_shape(0), 1);
  return ProductCost(v, 2 * v.out_elements() * static_cast<double>(k), 0, 1, 2);
}

// MatMul(A, B): 2 * prod(broadcast batch) * M*K*N = 2 * numel(Y) * K, K = last dim of A.
NodeCost CostMatMul(const NodeView& v) {
  const int64_t k = Dim(v.in_shape(0), -1);
  return ProductCost(v, 2 * v.out_elements() * static_cast<double>(k), 0, 1, /*c=*/-1);
}

// Embedding(ids, W): a look-up, 0 FLOPs; backward scatter-adds numel(Y) values into dW
// and keeps the ids.
NodeCost CostEmbedding(const NodeView& v) {
  NodeCost cost;
  if (v.needs_grad(1)) {
    cost.flops_backward = v.out_elements();
    cost.keeps.push_back(v.input_id(0));
  }
  return cost;
}

}  // namespace tessera::costmodel::estimate
