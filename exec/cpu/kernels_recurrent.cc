// CPU kernels of the Recurrent family (see kernels.h for the conventions): ONNX LSTM, in
// lstm_forward.cc and lstm_backward.cc (shared plan and helpers: lstm_impl.h).
//
// LSTM(X, W[dirs,4H,I], R[dirs,4H,H], B?[dirs,8H], seq_lens?[B], h0?, c0?) -> (Y, Y_h, Y_c),
// gate order i, o, f, c; activations sigmoid, tanh, tanh; no peepholes, no clipping.
// Per direction and step, for the rows of the batch still inside their sequence:
//   G = X_t W^T + h R^T + Wb + Rb;  i, o, f = sigmoid(G_i, G_o, G_f);  g = tanh(G_c)
//   c = f * c + i * g;  h = o * tanh(c);  Y[t] = h
// The forward direction visits t = 0 .. len-1, the reverse one t = len-1 .. 0, with len the
// row's seq_lens entry (T when absent). Y is 0 at t >= len; Y_h, Y_c are the state after the
// row's last step (h0, c0 for len = 0).
//
// Backward through time, per direction, visits the steps in reverse order:
//   dh += dY[t];  dct = dc + dh * o * (1 - tanh(c)^2)
//   dG = [dct*g * i(1-i), dh*tanh(c) * o(1-o), dct*c_prev * f(1-f), dct*i * (1-g^2)]
//   dh = dG R;  dc = dct * f
// and after the loop, with dG and h_prev of every (time, row) gathered in X's row order:
//   dR = dG_all^T H_prev_all, dX += dG_all W, dW = dG_all^T X, dWb = dRb = column sums of dG_all
// (one product each instead of one per step).
//
// How it is made fast (everything in T: float when training):
// - state.reals[2d] and [2d + 1] keep, as T (kept_array_impl.h), the gates [T*B, 4H] and the
//   cell states [T*B, H] of direction d in X's row order: the input projection X W^T is written
//   straight into the gate array, and each visited position is activated in place.
// - The rows of a batch never interact, so the recurrence is split into parts (a direction and
//   a block of rows) that run all their steps on their own thread: no hand-over inside a step.
//   The thin per-step products go through Eigen, the big ones (input projection, weight
//   gradients) through OpenBLAS with its own threads.
// - The cell math of a row runs over whole gate blocks with Eigen's vectorised logistic/tanh,
//   the biases and the step's recurrent product added in the same pass.
// - Scratch (h, the recurrent product, dG of all steps, ...) is thread_local and grow-only.
#include "tessera/exec/cpu/kernel_registry_impl.h"
#include "tessera/exec/cpu/lstm_impl.h"

namespace tessera::exec::cpu {

template <typename T>
void RegisterRecurrentKernels(KernelTable<T>& table) {
  Slot(table, graph::OpKind::kLstm) = {&lstm::LstmForward<T>, &lstm::LstmBackward<T>};
}

template void RegisterRecurrentKernels<float>(KernelTable<float>&);
template void RegisterRecurrentKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
