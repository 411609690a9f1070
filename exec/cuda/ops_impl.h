// Internal to the CUDA op kernels: the dispatcher's table, the family registration functions,
// and the host helpers every family file uses (shapes as launch Dims, integer tensors, errors).
#pragma once

#include <algorithm>
#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "tessera/base/cuda/cuda_status.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/cuda/launch.h"
#include "tessera/exec/cuda/op_kernels.h"

namespace tessera::exec::cuda {

struct FwdArgs {
  const graph::Node& node;
  absl::Span<const Tensor> inputs;
  absl::Span<const Tensor> outputs;
  const KernelContext& ctx;
  OpState& state;
};

struct BwdArgs {
  const graph::Node& node;
  absl::Span<const Tensor> inputs;
  absl::Span<const Tensor> outputs;
  absl::Span<const Tensor> grad_outputs;
  absl::Span<const Tensor> grad_inputs;
  const KernelContext& ctx;
  const OpState& state;
};

struct OpFns {
  absl::Status (*forward)(const FwdArgs&) = nullptr;
  absl::Status (*backward)(const BwdArgs&) = nullptr;
};

#define TESSERA_CUDA_COUNT_OP(e, n, lo, hi, out, cls) +1
inline constexpr size_t kNumCudaOpKinds = 0 TESSERA_OP_LIST(TESSERA_CUDA_COUNT_OP);
#undef TESSERA_CUDA_COUNT_OP
using OpTable = std::array<OpFns, kNumCudaOpKinds>;

inline OpFns& Slot(OpTable& t, graph::OpKind k) { return t[static_cast<size_t>(k)]; }

void RegisterCudaElementwise(OpTable& table);
void RegisterCudaLayout(OpTable& table);
void RegisterCudaReduceSoftmax(OpTable& table);
void RegisterCudaDense(OpTable& table);
void RegisterCudaNorm(OpTable& table);
void RegisterCudaConvPool(OpTable& table);   // conv_pool_ops.cc: Conv, pooling, BatchNormalization
void RegisterCudaRecurrent(OpTable& table);  // recurrent_ops.cc: LSTM, CtcLoss

// An InvalidArgument naming the node.
absl::Status NodeError(const graph::Node& node, absl::string_view what);
// `shape` as launch Dims (rank <= kMaxRank, else InvalidArgument naming the node).
absl::StatusOr<Dims> ToDims(const graph::Node& node, const graph::Shape& shape);
// Contiguous row-major strides of `dims` aligned right into a space of rank `rank`: the axes
// where the tensor has size 1 (or is missing) and the space does not get stride 0.
View BroadcastView(const graph::Shape& shape, const Dims& space);
// Copies an integer tensor (kI32, kI64, kBool) to the host as int64.
absl::StatusOr<std::vector<int64_t>> IntsToHost(const Tensor& t, cudaStream_t stream);
// `bytes` of device scratch from ctx.memory (256-byte aligned), freed when the allocation dies;
// InvalidArgument naming the node when the context has no KernelContext::memory.
absl::StatusOr<memory::DeviceAllocation> ScratchBytes(const graph::Node& node,
                                                      const KernelContext& ctx, int64_t bytes);
// Scratch for `count` values of T (at least one).
template <typename T>
absl::StatusOr<memory::DeviceAllocation> Scratch(const graph::Node& node, const KernelContext& ctx,
                                                 int64_t count) {
  return ScratchBytes(node, ctx, static_cast<int64_t>(sizeof(T)) * std::max<int64_t>(1, count));
}
// A device allocation's memory as T*.
template <typename T>
T* As(const memory::DeviceAllocation& a) {
  return static_cast<T*>(a.data());
}
// Uploads int64 values into new scratch (waits for the copy: `v` may die on return).
absl::StatusOr<memory::DeviceAllocation> UploadInts(const graph::Node& node,
                                                    const KernelContext& ctx,
                                                    const std::vector<int64_t>& v);
// The grad output j, or null when it is zero.
inline const float* GradOut(const BwdArgs& a, size_t j) {
  return j < a.grad_outputs.size() ? a.grad_outputs[j].data : nullptr;
}
// Copies Gather/Embedding indices to the host, checks them against data.shape[axis] (negative
// ones count from the end when allow_negative) and uploads them as int64.
absl::Status GatherIndices(const graph::Node& node, const Tensor& data, const Tensor& indices,
                           int64_t axis, bool allow_negative, const KernelContext& ctx,
                           memory::DeviceAllocation* out, int64_t* outer, int64_t* inner);
absl::Status ZeroFill(const Tensor& t, cudaStream_t stream);
absl::Status CopyDevice(float* dst, const float* src, int64_t n, cudaStream_t stream);

}  // namespace tessera::exec::cuda
