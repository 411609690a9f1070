// CUDA kernels of the op catalogue: the forward and backward of one graph node on device memory,
// float32 only, with the same shape as the CPU interface (exec/cpu/kernels.h).
//
//   auto blas = CublasHandle::Create();  auto dnn = CudnnHandle::Create();
//   auto gpu = memory::CudaMemory::Create(/*device=*/0);   // memory/cuda/cuda_memory.h
//   cuda::KernelContext ctx{.stream = stream, .blas = blas->get(), .dnn = dnn->get(),
//                           .memory = gpu->get()};
//   cuda::Tensor x{.shape = {2, 3}, .data = x_dev}, y{.shape = {2, 3}, .data = y_dev};
//   cuda::OpState state;
//   TS_RETURN_IF_ERROR(cuda::Forward(relu_node, {x}, {y}, ctx, state));
//   TS_RETURN_IF_ERROR(cuda::Backward(relu_node, {x}, {y}, {dy}, {dx}, ctx, state));
//
// Conventions (those of the CPU kernels): inputs/outputs follow node.inputs/node.outputs; an
// absent optional input, an unwanted grad input, and a zero grad output have data nullptr.
// Integer tensors (ids, labels, indices, Where's condition) carry their dtype (kI32, kI64 or
// kBool) and `data` points at those values on the device; they are copied to the host and
// range-checked before use, so bad user data is an InvalidArgument naming the node, never a
// device fault. Calls are enqueued on ctx.stream; host-visible results need a synchronise.
// Scratch (cuDNN workspaces, padded copies, uploaded indices, CTC tables) and what OpState keeps
// are memory::DeviceAllocations from ctx.memory; a kernel that needs some without it is an
// InvalidArgument naming the node. Memory back-ends are not thread-safe: one per thread.
#pragma once

#include <cstdint>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tessera/exec/cuda/kernels.h"
#include "tessera/graph/graph.h"
#include "tessera/memory/device_memory.h"

namespace tessera::exec::cuda {

struct Tensor {
  graph::Shape shape;
  float* data = nullptr;  // device memory; integer tensors: their own element type
  graph::DType dtype = graph::DType::kF32;

  int64_t size() const;
  bool present() const { return data != nullptr; }
};

struct KernelContext {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;  // needed by Gemm and MatMul
  cudnnHandle_t dnn = nullptr;    // needed by Conv, pooling and BatchNormalization
  memory::DeviceMemory* memory = nullptr;  // scratch and OpState buffers (a CudaMemory)
  bool training = true;
  uint64_t seed = 0;  // dropout masks: the CPU kernel's (seed, node name, step) hash
  int64_t step = 0;
  // Convolutions may use TF32 tensor cores (cuDNN). cuBLAS follows its handle's math mode, which
  // the handle's owner sets (exec/cuda/backend.h: CUBLAS_TF32_TENSOR_OP_MATH when tf32).
  bool tf32 = false;
};

// What one node's forward leaves for its backward: device allocations (from
// KernelContext::memory, which must outlive the state) and host values.
struct OpState {
  std::vector<memory::DeviceAllocation> buffers;
  std::vector<std::vector<int64_t>> ints;
  std::vector<double> reals;
  void Clear();
};

class CudnnHandle {
 public:
  static absl::StatusOr<CudnnHandle> Create();
  ~CudnnHandle();
  CudnnHandle(CudnnHandle&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  CudnnHandle(const CudnnHandle&) = delete;
  CudnnHandle& operator=(const CudnnHandle&) = delete;
  cudnnHandle_t get() const { return handle_; }

 private:
  explicit CudnnHandle(cudnnHandle_t h) : handle_(h) {}
  cudnnHandle_t handle_ = nullptr;
};

// True when `kind` has a CUDA kernel (the others return UnimplementedError naming the node).
bool HasCudaKernel(graph::OpKind kind);

absl::Status Forward(const graph::Node& node, absl::Span<const Tensor> inputs,
                     absl::Span<const Tensor> outputs, const KernelContext& ctx, OpState& state);

absl::Status Backward(const graph::Node& node, absl::Span<const Tensor> inputs,
                      absl::Span<const Tensor> outputs, absl::Span<const Tensor> grad_outputs,
                      absl::Span<const Tensor> grad_inputs, const KernelContext& ctx,
                      const OpState& state);

}  // namespace tessera::exec::cuda
