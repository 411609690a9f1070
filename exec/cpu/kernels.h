// CPU kernels: the forward and backward of every op of the catalogue on host memory, with Eigen
// and OpenBLAS, in float32 (training) and float64 (gradient checks).
//
//   // Tensors are dense, row-major, with the node's inferred shapes; the caller owns the memory.
//   std::vector<float> x(2 * 3), y(2 * 3);
//   cpu::Tensor<float> in{.shape = {2, 3}, .data = x.data()};
//   cpu::Tensor<float> out{.shape = {2, 3}, .data = y.data()};
//   cpu::KernelContext ctx;                       // threads, training flag, dropout seed
//   cpu::OpState state;                           // what the backward of this node will need
//   TS_RETURN_IF_ERROR(cpu::Forward<float>(relu_node, {in}, {out}, ctx, state));
//   // dX from dY: grads of inputs that need none are left as data == nullptr.
//   TS_RETURN_IF_ERROR(cpu::Backward<float>(relu_node, {in}, {out}, {dy}, {dx}, ctx, state));
//
// Conventions for every kernel:
// - `inputs`/`outputs` follow node.inputs/node.outputs; an absent optional input has data nullptr.
// - Floating tensors are of the compute type T; integer tensors (token ids, labels, indices,
//   lengths) are read through Tensor::index() in the dtype they carry (kI32 or kI64).
// - Backward overwrites each requested grad_inputs[i] (data != nullptr) with dL/d input i; a
//   grad_outputs[j] with data nullptr is a zero gradient. Parameters are inputs like any other.
// - OpState is written by Forward and read by Backward of the same node in the same step: masks,
//   arg-max indices, normalisation statistics, LSTM gates. Nothing else is kept between calls.
// - Errors (an op without a kernel, an unsupported attribute, an index out of range in user data)
//   are absl::Status naming the node.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "tessera/graph/graph.h"

namespace tessera::exec::cpu {

// A dense row-major tensor view. For T-typed (floating) tensors `data` points at T values; for
// integer tensors `dtype` says kI32 or kI64 and `data` points at those.
template <typename T>
struct Tensor {
  graph::Shape shape;
  T* data = nullptr;
  graph::DType dtype = graph::DType::kF32;  // the graph dtype (floating: computed as T)

  int64_t size() const;  // product of the dimensions (1 for a scalar)
  bool present() const { return data != nullptr; }
  // Element i of an integer tensor, whatever its integer dtype.
  int64_t index(int64_t i) const;
};

struct KernelContext {
  int threads = 2;           // intra-op threads (Eigen/OpenBLAS)
  bool training = true;      // Dropout and BatchNorm behave as in training
  uint64_t seed = 0;         // dropout masks: derived from (seed, node id, step)
  int64_t step = 0;
};

// Scratch one node's forward leaves for its backward, as float64 or int64 arrays.
struct OpState {
  std::vector<std::vector<double>> reals;
  std::vector<std::vector<int64_t>> ints;
  void Clear() { reals.clear(); ints.clear(); }
  int64_t bytes() const;
};

// True when `kind` has a CPU kernel.
bool HasCpuKernel(graph::OpKind kind);

template <typename T>
absl::Status Forward(const graph::Node& node, absl::Span<const Tensor<T>> inputs,
                     absl::Span<const Tensor<T>> outputs, const KernelContext& ctx,
                     OpState& state);

template <typename T>
absl::Status Backward(const graph::Node& node, absl::Span<const Tensor<T>> inputs,
                      absl::Span<const Tensor<T>> outputs,
                      absl::Span<const Tensor<T>> grad_outputs,
                      absl::Span<const Tensor<T>> grad_inputs, const KernelContext& ctx,
                      const OpState& state);

}  // namespace tessera::exec::cpu
