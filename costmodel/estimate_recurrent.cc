// Per-op estimates: LSTM (ONNX layout and gate order).
#include "tessera/costmodel/op_estimate_impl.h"

namespace tessera::costmodel::estimate {

// LSTM(X, W, R, B?, seq_lens?, h0?, c0?), per direction, time step and batch row:
//   forward  2*4H*(I+H)  gate products X*W^T and h*R^T
//          + 8H          the two bias adds (only when B is present)
//          + 9H          cell: 3 sigmoid, 2 tanh, 3 for c = f*c + i*g, 1 for h = o*tanh(c)
//   backward (when any input needs a gradient)
//            2*4H*H      dh_{t-1} = R^T dgates (back-propagation through time)
//          + 18H         cell element-wise backward, twice the forward
//          + 2*4H*I      dX, if X needs a gradient
//          + 2*4H*I      dW, if W needs a gradient
//          + 2*4H*H      dR, if R needs a gradient
//          + 8H          dB, if B is present and needs a gradient
// Kept for backward: X (for dW), Y (every h_t, for dR), h0 and c0 when present, and
// privately the 4 gates and the cell state of every step (5H per step, X's dtype).
NodeCost CostLstm(const NodeView& v) {
  const auto a = v.attrs<graph::LstmAttrs>();
  const double h = static_cast<double>(a.hidden_size);
  const double dirs = a.direction == graph::LstmDirection::kBidirectional ? 2 : 1;
  const graph::Shape& x = v.in_shape(0);
  const double t = static_cast<double>(a.layout == 0 ? Dim(x, 0) : Dim(x, 1));
  const double b = static_cast<double>(a.layout == 0 ? Dim(x, 1) : Dim(x, 0));
  const double in = static_cast<double>(Dim(x, 2));
  const double steps = Elements(x) > 0 ? t * b * dirs : 0;
  const bool has_bias = v.has_input(3);

  NodeCost cost;
  cost.flops_forward = steps * (2 * 4 * h * (in + h) + (has_bias ? 8 * h : 0) + 9 * h);
  if (!v.any_input_needs_grad()) return cost;
  double per_step = 2 * 4 * h * h + 18 * h;
  if (v.needs_grad(0)) per_step += 2 * 4 * h * in;
  if (v.needs_grad(1)) per_step += 2 * 4 * h * in;
  if (v.needs_grad(2)) per_step += 2 * 4 * h * h;
  if (has_bias && v.needs_grad(3)) per_step += 8 * h;
  cost.flops_backward = steps * per_step;

  if (v.needs_grad(1)) cost.keeps.push_back(v.input_id(0));
  cost.keeps.push_back(v.output_id(0));
  for (int i : {1, 2, 4, 5, 6}) {  // W, R, sequence_lens, initial_h, initial_c
    if (v.has_input(i)) cost.keeps.push_back(v.input_id(i));
  }
  cost.private_keep_bytes = BytesOf(steps * 5 * h, v.in_dtype_size(0));
  return cost;
}

}  // namespace tessera::costmodel::estimate
