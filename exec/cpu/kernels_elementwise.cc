// CPU kernels of the element-wise family (see kernels.h for the conventions). ReLU is here;
// the other unary ops are in elementwise_unary.cc, Add/Sub/Mul/Div/Pow in elementwise_binary.cc,
// Dropout/Cast/Where in elementwise_special.cc.
#include "tessera/exec/cpu/elementwise_impl.h"

namespace tessera::exec::cpu {
namespace {

// Relu: Y = max(X, 0); dX = dY where Y > 0.
template <typename T>
absl::Status ReluForward(const ForwardArgs<T>& a) {
  if (absl::Status s = RequireFloating(a.node, a.inputs[0], "input X"); !s.ok()) return s;
  const T* x = a.inputs[0].data;
  T* y = a.outputs[0].data;
  ParallelFor(a.ctx.threads, a.inputs[0].size(), kMinParallelElements, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = x[i] > T(0) ? x[i] : T(0);
  });
  return absl::OkStatus();
}

template <typename T>
absl::Status ReluBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const T* y = a.outputs[0].data;
  const T* dy = GradOutput(a, 0);
  if (dy == nullptr) {
    std::fill(dx.data, dx.data + dx.size(), T(0));
    return absl::OkStatus();
  }
  T* out = dx.data;
  ParallelFor(a.ctx.threads, dx.size(), kMinParallelElements, [=](int64_t b, int64_t e) {
    // dy is loaded unconditionally so the loop compiles to vector selects (with the load
    // under the branch it stayed a scalar loop, 15x slower than the forward).
    for (int64_t i = b; i < e; ++i) {
      const T g = dy[i];
      out[i] = y[i] > T(0) ? g : T(0);
    }
  });
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterElementwiseKernels(KernelTable<T>& table) {
  Slot(table, graph::OpKind::kRelu) = Checked<T, &ReluForward<T>, &ReluBackward<T>>();
  RegisterUnaryMathKernels<T>(table);
  RegisterBinaryKernels<T>(table);
  RegisterSpecialKernels<T>(table);
}

template void RegisterElementwiseKernels<float>(KernelTable<float>&);
template void RegisterElementwiseKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
