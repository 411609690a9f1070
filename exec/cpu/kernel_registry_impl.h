// Internal to the CPU kernels: the table the dispatcher (kernels.cc) reads, and the functions
// each kernel family file uses to fill it. One family file per op family, e.g.
// kernels_elementwise.cc defines RegisterElementwiseKernels<float/double>.
#pragma once

#include <array>

#include "tessera/exec/cpu/kernels.h"

namespace tessera::exec::cpu {

template <typename T>
struct ForwardArgs {
  const graph::Node& node;
  absl::Span<const Tensor<T>> inputs;
  absl::Span<const Tensor<T>> outputs;
  const KernelContext& ctx;
  OpState& state;
};

template <typename T>
struct BackwardArgs {
  const graph::Node& node;
  absl::Span<const Tensor<T>> inputs;
  absl::Span<const Tensor<T>> outputs;
  absl::Span<const Tensor<T>> grad_outputs;
  absl::Span<const Tensor<T>> grad_inputs;  // data nullptr: not wanted
  const KernelContext& ctx;
  const OpState& state;
};

template <typename T>
struct KernelFns {
  absl::Status (*forward)(const ForwardArgs<T>&) = nullptr;
  absl::Status (*backward)(const BackwardArgs<T>&) = nullptr;
};

#define TESSERA_COUNT_OP(e, n, lo, hi, out, cls) +1
inline constexpr size_t kNumOpKinds = 0 TESSERA_OP_LIST(TESSERA_COUNT_OP);
#undef TESSERA_COUNT_OP

template <typename T>
using KernelTable = std::array<KernelFns<T>, kNumOpKinds>;

template <typename T>
KernelFns<T>& Slot(KernelTable<T>& table, graph::OpKind kind) {
  return table[static_cast<size_t>(kind)];
}

// Each family registers its ops (defined in its own file, instantiated for float and double).
template <typename T> void RegisterElementwiseKernels(KernelTable<T>& table);
template <typename T> void RegisterLayoutKernels(KernelTable<T>& table);
template <typename T> void RegisterReduceSoftmaxKernels(KernelTable<T>& table);
template <typename T> void RegisterDenseKernels(KernelTable<T>& table);
template <typename T> void RegisterConvPoolKernels(KernelTable<T>& table);
template <typename T> void RegisterNormKernels(KernelTable<T>& table);
template <typename T> void RegisterRecurrentKernels(KernelTable<T>& table);
template <typename T> void RegisterLossKernels(KernelTable<T>& table);

// The filled table (built once, thread-safe).
template <typename T>
const KernelTable<T>& Kernels();

}  // namespace tessera::exec::cpu
