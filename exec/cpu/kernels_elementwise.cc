// CPU kernels of the element-wise family (see kernels.h for the conventions).
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {
namespace {

// Relu: Y = max(X, 0); dX = dY where Y > 0.
template <typename T>
absl::Status ReluForward(const ForwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  T* y = a.outputs[0].data;
  const int64_t n = x.size();
  for (int64_t i = 0; i < n; ++i) y[i] = x.data[i] > T(0) ? x.data[i] : T(0);
  return absl::OkStatus();
}

template <typename T>
absl::Status ReluBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const T* y = a.outputs[0].data;
  const T* dy = a.grad_outputs[0].data;
  const int64_t n = dx.size();
  for (int64_t i = 0; i < n; ++i) dx.data[i] = (dy != nullptr && y[i] > T(0)) ? dy[i] : T(0);
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterElementwiseKernels(KernelTable<T>& table) {
  Slot(table, graph::OpKind::kRelu) = {&ReluForward<T>, &ReluBackward<T>};
}

template void RegisterElementwiseKernels<float>(KernelTable<float>&);
template void RegisterElementwiseKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
